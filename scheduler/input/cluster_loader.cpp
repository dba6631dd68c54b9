#include "scheduler/input/cluster_loader.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "io/bounded_file.h"
#include "io/json_reader.h"
#include "io/json_writer.h"
#include "io/yaml_json.h"
#include "io/yaml_reader.h"
#include "k8s/objects/node_list.h"
#include "scheduler/index/quantity.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

std::string str(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::map<std::string, std::string> string_map(const json& obj) {
  std::map<std::string, std::string> out;
  if (!obj.is_object()) return out;
  for (const auto& [k, v] : obj.items()) out[k] = v.is_string() ? v.get<std::string>() : io::json_text(v);
  return out;
}

// An extended resource (a GPU: nvidia.com/gpu) is counted in whole devices: the API server refuses
// a Pod that asks for a fraction of one (k8s.io/kubernetes pkg/apis/core/validation,
// ValidateResourceRequirements: "must be an integer"), so "500m" is an error, never rounded.
bool is_extended_resource(const std::string& name) {
  return name.find('/') != std::string::npos && !name.starts_with("kubernetes.io/");
}

std::expected<ResourceAmounts, Error> quantities(const json& obj, const std::string& where) {
  ResourceAmounts out;
  if (!obj.is_object()) return out;
  for (const auto& [k, v] : obj.items()) {
    std::string text = v.is_string() ? v.get<std::string>() : io::json_text(v);
    auto q = parse_quantity(k, text);
    if (!q) return std::unexpected(q.error().context(where));
    if (is_extended_resource(k)) {
      auto thousandths = parse_quantity("cpu", text);  // the same text counted in thousandths
      if (thousandths && *thousandths % 1000 != 0) {
        return fail(ErrorCode::kParse,
                    where + ": " + k + ": '" + text +
                        "' is a fraction of a device; extended resources are whole numbers");
      }
    }
    out[k] = *q;
  }
  return out;
}

const json& items_of(const json& doc) {
  static const json empty = json::array();
  auto it = doc.find("items");
  return it != doc.end() && it->is_array() ? *it : empty;
}

// The FabricDegraded condition (metav1.Condition in status.conditions) and the degraded-members
// annotation, as hypertopo's reconciler and `discover -o json` write them. Other conditions and
// annotations are someone else's and are not read.
std::expected<DomainFabricHealth, Error> parse_fabric_health(const json& item, const std::string& who) {
  DomainFabricHealth health;
  if (auto status = item.find("status"); status != item.end() && status->is_object()) {
    if (auto conditions = status->find("conditions"); conditions != status->end() && !conditions->is_null()) {
      if (!conditions->is_array()) return fail(ErrorCode::kParse, who + ": status.conditions must be a list");
      for (std::size_t i = 0; i < conditions->size(); ++i) {
        const json& c = (*conditions)[i];
        const std::string cw = who + " status.conditions[" + std::to_string(i) + "]";
        if (!c.is_object()) return fail(ErrorCode::kParse, cw + " must be an object");
        for (const char* key : {"type", "status", "reason", "message"}) {
          if (c.contains(key) && !c[key].is_null() && !c[key].is_string())
            return fail(ErrorCode::kParse, cw + ": " + key + " must be a string");
        }
        if (str(c, "type") != kFabricDegradedConditionType) continue;
        health.degraded = str(c, "status") == "True";
        health.reason = str(c, "reason");
        health.message = str(c, "message");
      }
    }
  }
  if (auto meta = item.find("metadata"); meta != item.end() && meta->is_object()) {
    if (auto annotations = meta->find("annotations");
        annotations != meta->end() && annotations->is_object()) {
      if (auto list = annotations->find(kDegradedMembersAnnotation); list != annotations->end()) {
        if (!list->is_string()) {
          return fail(ErrorCode::kParse, who + ": metadata.annotations." + kDegradedMembersAnnotation +
                                             " must be a string (comma-separated node names)");
        }
        std::stringstream names(list->get<std::string>());
        std::string name;
        while (std::getline(names, name, ',')) {
          const auto first = name.find_first_not_of(" \t");
          if (first == std::string::npos) continue;
          name = name.substr(first, name.find_last_not_of(" \t") - first + 1);
          health.degraded_members.push_back(name);
        }
      }
    }
  }
  return health;
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
          req.values.push_back(v.is_string() ? v.get<std::string>() : io::json_text(v));
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
  auto health = parse_fabric_health(item, who);
  if (!health) return std::unexpected(health.error());
  hn.health = std::move(*health);
  return hn;
}

}  // namespace

std::expected<json, Error> read_document(const std::filesystem::path& path) {
  auto read = io::read_bounded_file(path, io::kDataFileLimit);
  if (!read) return std::unexpected(read.error());
  const std::string& text = *read;
  auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
    return io::parse_json(text, path.string());
  }
  auto loaded = io::load_yaml(text, path.string());
  if (!loaded) return std::unexpected(loaded.error());
  try {
    return io::yaml_to_json(*loaded);
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, path.string() + ": not valid YAML: " + e.msg);
  }
}

namespace {

// Type checks ahead of the object readers, so a wrong type ends in an error naming the object and
// the key rather than a json type_error from deep inside a reader.
std::expected<void, Error> want(const json& obj, const char* key, json::value_t type,
                                const std::string& where) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  const bool ok = type == json::value_t::number_integer ? it->is_number_integer()
                  : type == json::value_t::string       ? it->is_string()
                  : type == json::value_t::boolean      ? it->is_boolean()
                  : type == json::value_t::array        ? it->is_array()
                                                        : it->is_object();
  if (ok) return {};
  const char* name = type == json::value_t::number_integer ? "an integer"
                     : type == json::value_t::string       ? "a string"
                     : type == json::value_t::boolean      ? "true or false"
                     : type == json::value_t::array        ? "a list"
                                                           : "an object";
  return fail(ErrorCode::kParse, where + ": " + key + " must be " + name + ", got " + it->type_name());
}

std::expected<void, Error> want_strings(const json& obj, const char* key, const std::string& where) {
  if (auto ok = want(obj, key, json::value_t::object, where); !ok) return ok;
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return {};
  for (const auto& [k, v] : obj[key].items()) {
    if (!v.is_string()) return fail(ErrorCode::kParse, where + ": " + key + "." + k + " must be a string");
  }
  return {};
}

std::expected<void, Error> check_node_shape(const json& node, const std::string& where) {
  if (!node.is_object()) return fail(ErrorCode::kParse, where + ": a Node must be an object");
  using T = json::value_t;
  for (const auto& [key, type] : {std::pair{"kind", T::string},
                                  {"apiVersion", T::string},
                                  {"metadata", T::object},
                                  {"spec", T::object},
                                  {"status", T::object}}) {
    if (auto ok = want(node, key, type, where); !ok) return ok;
  }
  const json empty = json::object();
  const json& meta = node.contains("metadata") && node["metadata"].is_object() ? node["metadata"] : empty;
  const json& spec = node.contains("spec") && node["spec"].is_object() ? node["spec"] : empty;
  const json& status = node.contains("status") && node["status"].is_object() ? node["status"] : empty;
  if (auto ok = want(meta, "name", T::string, where + " metadata"); !ok) return ok;
  const std::string who = "Node " + str(meta, "name");
  if (auto ok = want_strings(meta, "labels", who + " metadata"); !ok) return ok;
  if (auto ok = want(spec, "unschedulable", T::boolean, who + " spec"); !ok) return ok;
  if (auto ok = want(spec, "taints", T::array, who + " spec"); !ok) return ok;
  if (spec.contains("taints") && spec["taints"].is_array()) {
    for (std::size_t i = 0; i < spec["taints"].size(); ++i) {
      const json& t = spec["taints"][i];
      const std::string tw = who + " spec.taints[" + std::to_string(i) + "]";
      if (!t.is_object()) return fail(ErrorCode::kParse, tw + " must be an object");
      for (const char* k : {"key", "value", "effect"}) {
        if (auto ok = want(t, k, T::string, tw); !ok) return ok;
      }
    }
  }
  if (auto ok = want(status, "allocatable", T::object, who + " status"); !ok) return ok;
  if (auto ok = want(status, "conditions", T::array, who + " status"); !ok) return ok;
  if (status.contains("conditions") && status["conditions"].is_array()) {
    for (std::size_t i = 0; i < status["conditions"].size(); ++i) {
      const json& c = status["conditions"][i];
      const std::string cw = who + " status.conditions[" + std::to_string(i) + "]";
      if (!c.is_object()) return fail(ErrorCode::kParse, cw + " must be an object");
      for (const char* k : {"type", "status"}) {
        if (auto ok = want(c, k, T::string, cw); !ok) return ok;
      }
    }
  }
  return {};
}

}  // namespace

std::expected<std::vector<NodeSpec>, Error> parse_nodes(const json& doc) {
  if (!doc.is_object())
    return fail(ErrorCode::kParse, "expected a NodeList (kubectl get nodes -o json) or a Node");
  if (auto ok = want(doc, "kind", json::value_t::string, "the document"); !ok)
    return std::unexpected(ok.error());
  if (str(doc, "kind") == "Node") {
    if (auto ok = check_node_shape(doc, "the Node"); !ok) return std::unexpected(ok.error());
  } else {
    if (!doc.contains("items") || !doc["items"].is_array()) {
      return fail(
          ErrorCode::kParse,
          "expected a NodeList with items (kubectl get nodes -o json), got kind '" + str(doc, "kind") + "'");
    }
    for (std::size_t i = 0; i < doc["items"].size(); ++i) {
      if (auto ok = check_node_shape(doc["items"][i], "items[" + std::to_string(i) + "]"); !ok)
        return std::unexpected(ok.error());
    }
  }
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
  using T = json::value_t;
  std::vector<BoundPod> out;
  std::vector<json> items;
  if (!doc.is_object())
    return fail(ErrorCode::kParse, "expected a PodList (kubectl get pods -o json) or a Pod");
  if (auto ok = want(doc, "kind", T::string, "the document"); !ok) return std::unexpected(ok.error());
  const std::string kind = str(doc, "kind");
  if (kind == "Pod") {
    items.push_back(doc);
  } else if (doc.contains("items") && doc["items"].is_array() &&
             (kind.empty() || kind == "PodList" || kind == "List")) {
    for (const auto& i : doc["items"]) items.push_back(i);
  } else {
    return fail(ErrorCode::kParse,
                "expected a PodList with items (kubectl get pods -o json) or a Pod, got kind '" + kind + "'");
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    const json& pod = items[i];
    const std::string iw = "items[" + std::to_string(i) + "]";
    if (!pod.is_object()) return fail(ErrorCode::kParse, iw + ": a Pod must be an object");
    if (!str(pod, "kind").empty() && str(pod, "kind") != "Pod")
      return fail(ErrorCode::kParse, iw + ": expected kind Pod, got '" + str(pod, "kind") + "'");
    for (const auto& [key, type] :
         {std::pair{"metadata", T::object}, {"spec", T::object}, {"status", T::object}}) {
      if (auto ok = want(pod, key, type, iw); !ok) return std::unexpected(ok.error());
    }
    const json meta = pod.value("metadata", json::object());
    const std::string name = str(meta, "namespace") + "/" + str(meta, "name");
    const json spec = pod.value("spec", json::object());
    const json status = pod.value("status", json::object());
    const std::string pw = "pod " + name;
    for (const auto& [key, type] : {std::pair{"nodeName", T::string},
                                    {"containers", T::array},
                                    {"initContainers", T::array},
                                    {"overhead", T::object}}) {
      if (auto ok = want(spec, key, type, pw + " spec"); !ok) return std::unexpected(ok.error());
    }
    if (auto ok = want(status, "phase", T::string, pw + " status"); !ok) return std::unexpected(ok.error());
    const std::string phase = str(status, "phase");
    const std::string node = str(spec, "nodeName");
    if (node.empty() || phase == "Succeeded" || phase == "Failed") continue;
    auto requests_of = [&](const json& c, const std::string& cw) -> std::expected<ResourceAmounts, Error> {
      if (!c.is_object()) return fail(ErrorCode::kParse, cw + " must be an object");
      if (auto ok = want(c, "resources", T::object, cw); !ok) return std::unexpected(ok.error());
      const json resources = c.value("resources", json::object());
      if (auto ok = want(resources, "requests", T::object, cw + " resources"); !ok)
        return std::unexpected(ok.error());
      return quantities(resources.value("requests", json::object()), cw + " resources.requests");
    };
    ResourceAmounts sum, init_max;
    for (const auto& c : spec.value("containers", json::array())) {
      auto r = requests_of(c, pw + " container " + str(c, "name"));
      if (!r) return std::unexpected(r.error());
      for (const auto& [k, v] : *r) sum[k] += v;
    }
    for (const auto& c : spec.value("initContainers", json::array())) {
      auto r = requests_of(c, pw + " init container " + str(c, "name"));
      if (!r) return std::unexpected(r.error());
      for (const auto& [k, v] : *r) init_max[k] = std::max(init_max[k], v);
    }
    for (const auto& [k, v] : init_max) sum[k] = std::max(sum[k], v);
    auto overhead = quantities(spec.value("overhead", json::object()), pw + " overhead");
    if (!overhead) return std::unexpected(overhead.error());
    for (const auto& [k, v] : *overhead) sum[k] += v;
    out.push_back(BoundPod{name, node, std::move(sum)});
  }
  return out;
}

std::expected<std::map<std::string, std::int64_t>, Error> requested_per_node(const nlohmann::json& pods,
                                                                             std::string_view resource) {
  auto bound = parse_pods(pods);
  if (!bound) return std::unexpected(bound.error());
  std::map<std::string, std::int64_t> out;
  for (const auto& pod : *bound) {
    if (auto it = pod.requests.find(std::string(resource)); it != pod.requests.end())
      out[pod.node] += it->second;
  }
  return out;
}

std::expected<topology::exporters::GpuUsage, Error> gpu_usage_per_node(
    const k8s::NodeList& nodes, const std::map<std::string, std::int64_t>& used_per_node,
    std::string_view resource) {
  topology::exporters::GpuUsage usage;
  const std::string key(resource);
  for (const auto& n : nodes.items) {
    topology::exporters::NodeGpuUsage u;
    if (auto it = n.allocatable.find(key); it != n.allocatable.end()) {
      auto count = parse_quantity(key, it->second);
      if (!count) return std::unexpected(count.error().context("node " + n.name + " status.allocatable"));
      u.allocatable = *count;
    }
    if (auto it = used_per_node.find(n.name); it != used_per_node.end()) u.used = it->second;
    usage[n.name] = u;
  }
  return usage;
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
    if (auto ok = want(doc, "metadata", json::value_t::object, "Topology"); !ok)
      return std::unexpected(ok.error());
    if (auto ok = want(doc, "spec", json::value_t::object, "Topology"); !ok)
      return std::unexpected(ok.error());
    out.levels.name =
        doc.contains("metadata") && doc["metadata"].is_object() ? str(doc["metadata"], "name") : "";
    if (out.levels.name.empty()) out.levels.name = "default";
    const json spec = doc.value("spec", json::object());
    if (auto ok = want(spec, "levels", json::value_t::array, "Topology " + out.levels.name + " spec"); !ok)
      return std::unexpected(ok.error());
    const json levels = spec.is_object() ? spec.value("levels", json::array()) : json::array();
    for (std::size_t i = 0; i < levels.size(); ++i) {
      if (!levels[i].is_object()) {
        return fail(ErrorCode::kParse, "Topology " + out.levels.name + ": spec.levels[" + std::to_string(i) +
                                           "] must be an object {nodeLabel}");
      }
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
