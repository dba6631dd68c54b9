#include "scheduler/input/cluster_loader.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "k8s/objects/node_list.h"
#include "scheduler/index/quantity.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

json yaml_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(yaml_to_json(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return s;  // quoted: always a string
      std::int64_t i = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
      if (ec == std::errc() && p == s.data() + s.size()) return i;
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
      if (s == "null" || s == "~") return nullptr;
      return s;
    }
    default:
      return nullptr;
  }
}

std::string str(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::map<std::string, std::string> string_map(const json& obj) {
  std::map<std::string, std::string> out;
  if (!obj.is_object()) return out;
  for (const auto& [k, v] : obj.items()) out[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return out;
}

std::expected<ResourceAmounts, Error> quantities(const json& obj, const std::string& where) {
  ResourceAmounts out;
  if (!obj.is_object()) return out;
  for (const auto& [k, v] : obj.items()) {
    std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    auto q = parse_quantity(k, text);
    if (!q) return std::unexpected(q.error().context(where));
    out[k] = *q;
  }
  return out;
}

const json& items_of(const json& doc) {
  static const json empty = json::array();
  auto it = doc.find("items");
  return it != doc.end() && it->is_array() ? *it : empty;
}

std::expected<HyperNodeSpec, Error> parse_hypernode(const json& item, const std::string& where) {
  HyperNodeSpec hn;
  hn.name = item.contains("metadata") ? str(item["metadata"], "name") : "";
  if (hn.name.empty()) return fail(ErrorCode::kParse, where + ": HyperNode without metadata.name");
  const std::string who = "HyperNode " + hn.name;
  if (!item.contains("spec") || !item["spec"].is_object()) return fail(ErrorCode::kParse, who + ": no spec");
  const json& spec = item["spec"];
  if (!spec.contains("tier")) return fail(ErrorCode::kParse, who + ": spec.tier is required");
  if (spec["tier"].is_number_integer()) {
    hn.tier = spec["tier"].get<int>();
  } else if (spec["tier"].is_string()) {
    const std::string t = spec["tier"].get<std::string>();
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), hn.tier);
    if (ec != std::errc() || p != t.data() + t.size()) {
      return fail(ErrorCode::kParse, who + ": spec.tier '" + t + "' is not an integer");
    }
  } else {
    return fail(ErrorCode::kParse, who + ": spec.tier must be an integer");
  }
  hn.tier_name = str(spec, "tierName");
  if (!spec.contains("members") || !spec["members"].is_array() || spec["members"].empty()) {
    return fail(ErrorCode::kParse, who + ": spec.members must list at least one member");
  }
  for (std::size_t m = 0; m < spec["members"].size(); ++m) {
    const json& member = spec["members"][m];
    const std::string mw = who + " spec.members[" + std::to_string(m) + "]";
    HyperNodeMember out;
    const std::string type = str(member, "type");
    if (type == "Node") {
      out.type = HyperNodeMember::Type::kNode;
    } else if (type == "HyperNode") {
      out.type = HyperNodeMember::Type::kHyperNode;
    } else {
      return fail(ErrorCode::kParse, mw + ": type must be Node or HyperNode, got '" + type + "'");
    }
    const json sel = member.value("selector", json::object());
    int kinds = 0;
    if (sel.contains("exactMatch")) {
      ++kinds;
      out.selector.kind = MemberSelector::Kind::kExact;
      out.selector.exact_name = str(sel["exactMatch"], "name");
    }
    if (sel.contains("regexMatch")) {
      ++kinds;
      out.selector.kind = MemberSelector::Kind::kRegex;
      out.selector.regex_pattern = str(sel["regexMatch"], "pattern");
    }
    if (sel.contains("labelMatch")) {
      ++kinds;
      out.selector.kind = MemberSelector::Kind::kLabel;
      const json& lm = sel["labelMatch"];
      out.selector.match_labels = string_map(lm.value("matchLabels", json::object()));
      for (const auto& e : lm.value("matchExpressions", json::array())) {
        LabelRequirement req{str(e, "key"), str(e, "operator"), {}};
        for (const auto& v : e.value("values", json::array()))
          req.values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
        if (req.op != "In" && req.op != "NotIn" && req.op != "Exists" && req.op != "DoesNotExist") {
          return fail(ErrorCode::kParse, mw + ": unknown matchExpressions operator '" + req.op + "'");
        }
        out.selector.match_expressions.push_back(std::move(req));
      }
    }
    if (kinds != 1) {
      return fail(ErrorCode::kParse,
                  mw + ": selector needs exactly one of exactMatch, regexMatch, labelMatch");
    }
    hn.members.push_back(std::move(out));
  }
  return hn;
}

}  // namespace

std::expected<json, Error> read_document(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(ErrorCode::kNotFound, path.string() + ": cannot open");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
    try {
      return json::parse(text);
    } catch (const json::parse_error& e) {
      return fail(ErrorCode::kParse,
                  path.string() + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
    } catch (const json::exception& e) {  // e.g. a number beyond double's range ("1e400")
      return fail(ErrorCode::kParse, path.string() + ": not valid JSON (" + e.what() + ")");
    }
  }
  try {
    return yaml_to_json(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, path.string() + ": not valid YAML: " + e.msg);
  }
}

std::expected<std::vector<NodeSpec>, Error> parse_nodes(const json& doc) {
  auto list = k8s::parse_node_list(doc);
  if (!list) return std::unexpected(list.error());
  std::vector<NodeSpec> out;
  out.reserve(list->items.size());
  for (const auto& n : list->items) {
    NodeSpec node;
    node.name = n.name;
    node.labels = n.labels;
    auto alloc = parse_resource_list(n.allocatable);
    if (!alloc) return std::unexpected(alloc.error().context("node " + n.name + " status.allocatable"));
    node.allocatable = std::move(*alloc);
    for (const auto& t : n.taints) node.taints.push_back({t.key, t.value, t.effect});
    node.ready = n.ready;
    node.unschedulable = n.unschedulable;
    out.push_back(std::move(node));
  }
  return out;
}

std::expected<std::vector<NodeSpec>, Error> load_nodes(const std::filesystem::path& path) {
  auto doc = read_document(path);
  if (!doc) return std::unexpected(doc.error());
  auto nodes = parse_nodes(*doc);
  if (!nodes) return std::unexpected(nodes.error().context(path.string()));
  return nodes;
}

std::expected<std::vector<BoundPod>, Error> parse_pods(const json& doc) {
  std::vector<BoundPod> out;
  std::vector<json> items;
  if (str(doc, "kind") == "Pod") {
    items.push_back(doc);
  } else {
    for (const auto& i : items_of(doc)) items.push_back(i);
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    const json& pod = items[i];
    const json meta = pod.value("metadata", json::object());
    const std::string name = str(meta, "namespace") + "/" + str(meta, "name");
    const json spec = pod.value("spec", json::object());
    const json status = pod.value("status", json::object());
    const std::string phase = str(status, "phase");
    const std::string node = str(spec, "nodeName");
    if (node.empty() || phase == "Succeeded" || phase == "Failed") continue;
    ResourceAmounts sum, init_max;
    for (const auto& c : spec.value("containers", json::array())) {
      auto r = quantities(c.value("resources", json::object()).value("requests", json::object()),
                          "pod " + name + " container " + str(c, "name"));
      if (!r) return std::unexpected(r.error());
      for (const auto& [k, v] : *r) sum[k] += v;
    }
    for (const auto& c : spec.value("initContainers", json::array())) {
      auto r = quantities(c.value("resources", json::object()).value("requests", json::object()),
                          "pod " + name + " init container " + str(c, "name"));
      if (!r) return std::unexpected(r.error());
      for (const auto& [k, v] : *r) init_max[k] = std::max(init_max[k], v);
    }
    for (const auto& [k, v] : init_max) sum[k] = std::max(sum[k], v);
    auto overhead = quantities(spec.value("overhead", json::object()), "pod " + name + " overhead");
    if (!overhead) return std::unexpected(overhead.error());
    for (const auto& [k, v] : *overhead) sum[k] += v;
    out.push_back(BoundPod{name, node, std::move(sum)});
  }
  return out;
}

std::expected<std::vector<BoundPod>, Error> load_pods(const std::filesystem::path& path) {
  auto doc = read_document(path);
  if (!doc) return std::unexpected(doc.error());
  auto pods = parse_pods(*doc);
  if (!pods) return std::unexpected(pods.error().context(path.string()));
  return pods;
}

std::expected<TopologySource, Error> parse_topology(const json& doc) {
  TopologySource out;
  if (!doc.is_object())
    return fail(ErrorCode::kParse, "expected a HyperNode list or a Kueue Topology object");
  const std::string kind = str(doc, "kind");
  if (kind == "Topology") {
    out.kind = TopologySource::Kind::kLevels;
    out.levels.name = doc.contains("metadata") ? str(doc["metadata"], "name") : "default";
    const json levels = doc.value("spec", json::object()).value("levels", json::array());
    for (std::size_t i = 0; i < levels.size(); ++i) {
      std::string label = str(levels[i], "nodeLabel");
      if (label.empty()) {
        return fail(ErrorCode::kParse, "Topology " + out.levels.name + ": spec.levels[" + std::to_string(i) +
                                           "].nodeLabel is required");
      }
      out.levels.levels.push_back(label);
    }
    if (out.levels.levels.empty())
      return fail(ErrorCode::kParse, "Topology " + out.levels.name + ": no spec.levels");
    return out;
  }
  out.kind = TopologySource::Kind::kHyperNodes;
  if (kind == "HyperNode") {
    auto hn = parse_hypernode(doc, "document");
    if (!hn) return std::unexpected(hn.error());
    out.hypernodes.push_back(std::move(*hn));
    return out;
  }
  if (!doc.contains("items")) {
    return fail(ErrorCode::kParse,
                "expected kind Topology, HyperNode or a list of HyperNodes, got kind '" + kind + "'");
  }
  const json& items = items_of(doc);
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto hn = parse_hypernode(items[i], "items[" + std::to_string(i) + "]");
    if (!hn) return std::unexpected(hn.error());
    out.hypernodes.push_back(std::move(*hn));
  }
  return out;
}

std::expected<TopologySource, Error> load_topology(const std::filesystem::path& path) {
  auto doc = read_document(path);
  if (!doc) return std::unexpected(doc.error());
  auto topology = parse_topology(*doc);
  if (!topology) return std::unexpected(topology.error().context(path.string()));
  return topology;
}

std::expected<TopologyIndex, Error> build_index(const TopologySource& topology, std::vector<NodeSpec> nodes,
                                                const std::vector<BoundPod>& pods) {
  if (topology.kind == TopologySource::Kind::kLevels)
    return TopologyIndex::from_levels(topology.levels, std::move(nodes), pods);
  return TopologyIndex::from_hypernodes(topology.hypernodes, std::move(nodes), pods);
}

}  // namespace hypertopo::scheduler
