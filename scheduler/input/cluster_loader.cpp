#include "scheduler/input/cluster_loader.h"

#include <simdjson.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <limits>
#include <sstream>
#include <type_traits>

#include "io/bounded_file.h"
#include "io/json_reader.h"
#include "io/json_view.h"
#include "io/object_reader.h"
#include "io/yaml_json.h"
#include "io/yaml_reader.h"
#include "scheduler/index/quantity.h"
#include "scheduler/input/pod_request.h"
#include "topology/hypernode_tier.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

using io::looks_like_json;

std::expected<json, Error> document_of(const std::string& text, const std::string& where) {
  if (looks_like_json(text)) return io::parse_json(text, where);
  auto loaded = io::load_yaml(text, where);
  if (!loaded) return std::unexpected(loaded.error());
  try {
    return io::yaml_to_json(*loaded);
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse, where + ": not valid YAML: " + e.msg);
  }
}

// The readers below are written once over a JSON view (io/json_view.h): the same code reads what
// nlohmann parsed (YAML, objects from the API client) and what simdjson parsed (large JSON files),
// so both give the same model and the same errors.

template <class V>
std::string_view str_view(const V& obj, std::string_view key) {
  auto v = obj.find(key);
  return v && v->is_string() ? v->string() : std::string_view();
}

template <class V>
std::string str(const V& obj, std::string_view key) {
  return std::string(str_view(obj, key));
}

// fields() come sorted by key, each once: every one goes at the end.
template <class V>
std::map<std::string, std::string> string_map(const V& obj) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : obj.fields()) out.emplace_hint(out.end(), std::string(k), v.text());
  return out;
}

// A resource list (status.allocatable) read straight into amounts: parse_resource_list's answer and
// error for the same object, without a map of strings between.
template <class V>
std::expected<ResourceAmounts, Error> resource_amounts(const V& obj) {
  ResourceAmounts out;
  for (const auto& [k, v] : obj.fields()) {
    std::string other;  // a value that is not a string is read as its JSON text, as string_map does
    const std::string_view text = v.is_string() ? v.string() : std::string_view(other = v.text());
    auto amount = parse_quantity(k, text);
    if (!amount) return std::unexpected(amount.error());
    out.emplace_hint(out.end(), std::string(k), *amount);
  }
  return out;
}

// An extended resource (a GPU: nvidia.com/gpu) is counted in whole devices: the API server refuses
// a Pod that asks for a fraction of one (k8s.io/kubernetes pkg/apis/core/validation,
// ValidateResourceRequirements: "must be an integer"), so "500m" is an error, never rounded.
bool is_extended_resource(std::string_view name) {
  return name.find('/') != std::string_view::npos && !name.starts_with("kubernetes.io/");
}

template <class V>
std::expected<ResourceAmounts, Error> quantities(const std::optional<V>& obj, const std::string& where) {
  ResourceAmounts out;
  if (!obj) return out;
  for (const auto& [k, v] : obj->fields()) {
    const std::string text = v.text();
    auto q = parse_quantity(k, text);
    if (!q) return std::unexpected(q.error().context(where));
    if (is_extended_resource(k)) {
      auto thousandths = parse_quantity("cpu", text);  // the same text counted in thousandths
      if (thousandths && *thousandths % 1000 != 0) {
        return fail(ErrorCode::kParse,
                    where + ": " + std::string(k) + ": '" + text +
                        "' is a fraction of a device; extended resources are whole numbers");
      }
    }
    out.emplace(std::string(k), *q);
  }
  return out;
}

enum class Want { kInteger, kString, kBoolean, kList, kObject };

// How a list's readers name its i-th item in an error: "items[i]" for a List read whole; a file's
// objects gathered from several documents name each one's own place (ObjectFile::where).
struct ItemsAt {
  std::string operator()(std::size_t i) const { return "items[" + std::to_string(i) + "]"; }
};

// Where an error is: a string, or a function that makes one (the message is only built on failure:
// a 6,000-node list is checked key by key).
template <class Where>
std::string where_text(const Where& where) {
  if constexpr (std::is_invocable_v<const Where&>) {
    return where();
  } else {
    return std::string(where);
  }
}

// Type checks ahead of the object readers, so a wrong type ends in an error naming the object and
// the key rather than a surprise from deep inside a reader. Absent and null pass.
template <class V, class Where>
std::expected<void, Error> want(const V& obj, const char* key, Want type, const Where& where) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  if (!it || it->is_null()) return {};
  const bool ok = type == Want::kInteger   ? it->is_integer()
                  : type == Want::kString  ? it->is_string()
                  : type == Want::kBoolean ? it->is_boolean()
                  : type == Want::kList    ? it->is_array()
                                           : it->is_object();
  if (ok) return {};
  const char* name = type == Want::kInteger   ? "an integer"
                     : type == Want::kString  ? "a string"
                     : type == Want::kBoolean ? "true or false"
                     : type == Want::kList    ? "a list"
                                              : "an object";
  return fail(ErrorCode::kParse,
              where_text(where) + ": " + key + " must be " + name + ", got " + std::string(it->type_name()));
}

template <class V, class Where>
std::expected<void, Error> want_strings(const V& obj, const char* key, const Where& where) {
  if (auto ok = want(obj, key, Want::kObject, where); !ok) return ok;
  auto map = obj.find(key);
  if (!map || map->is_null()) return {};
  for (const auto& [k, v] : map->fields()) {
    if (!v.is_string())
      return fail(ErrorCode::kParse,
                  where_text(where) + ": " + key + "." + std::string(k) + " must be a string");
  }
  return {};
}

// `obj[key]` when it is an object (an absent, null or mistyped value reads as nothing).
template <class V>
std::optional<V> object_at(const V& obj, std::string_view key) {
  auto v = obj.find(key);
  if (v && v->is_object()) return v;
  return std::nullopt;
}

template <class V>
std::vector<V> list_at(const std::optional<V>& obj, std::string_view key) {
  if (!obj) return {};
  auto v = obj->find(key);
  return v ? v->elements() : std::vector<V>();
}

// The FabricDegraded condition (metav1.Condition in status.conditions) and the degraded-members
// annotation, as hypertopo's reconciler and `discover -o json` write them. Other conditions and
// annotations are someone else's and are not read.
template <class V>
std::expected<DomainFabricHealth, Error> parse_fabric_health(const V& item, const std::string& who) {
  DomainFabricHealth health;
  if (auto status = object_at(item, "status")) {
    if (auto conditions = status->find("conditions"); conditions && !conditions->is_null()) {
      if (!conditions->is_array()) return fail(ErrorCode::kParse, who + ": status.conditions must be a list");
      const std::vector<V> list = conditions->elements();
      for (std::size_t i = 0; i < list.size(); ++i) {
        const V& c = list[i];
        const std::string cw = who + " status.conditions[" + std::to_string(i) + "]";
        if (!c.is_object()) return fail(ErrorCode::kParse, cw + " must be an object");
        for (const char* key : {"type", "status", "reason", "message"}) {
          auto v = c.find(key);
          if (v && !v->is_null() && !v->is_string())
            return fail(ErrorCode::kParse, cw + ": " + key + " must be a string");
        }
        if (str_view(c, "type") != kFabricDegradedConditionType) continue;
        health.degraded = str_view(c, "status") == "True";
        health.reason = str(c, "reason");
        health.message = str(c, "message");
      }
    }
  }
  if (auto meta = object_at(item, "metadata")) {
    if (auto annotations = object_at(*meta, "annotations")) {
      if (auto list = annotations->find(kDegradedMembersAnnotation)) {
        if (!list->is_string()) {
          return fail(ErrorCode::kParse, who + ": metadata.annotations." + kDegradedMembersAnnotation +
                                             " must be a string (comma-separated node names)");
        }
        std::stringstream names{std::string(list->string())};
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

template <class V>
std::expected<HyperNodeSpec, Error> parse_hypernode(const V& item, const std::string& where) {
  HyperNodeSpec hn;
  if (auto meta = item.find("metadata")) hn.name = str(*meta, "name");
  if (hn.name.empty()) return fail(ErrorCode::kParse, where + ": HyperNode without metadata.name");
  auto who = [&] { return "HyperNode " + hn.name; };
  auto spec = object_at(item, "spec");
  if (!spec) return fail(ErrorCode::kParse, who() + ": no spec");
  auto tier = topology::read_hypernode_tier(spec->find("tier"), who());
  if (!tier) return std::unexpected(tier.error());
  hn.tier = *tier;
  hn.tier_name = str(*spec, "tierName");
  auto members = spec->find("members");
  const std::vector<V> list = members ? members->elements() : std::vector<V>();
  if (!members || !members->is_array() || list.empty()) {
    return fail(ErrorCode::kParse, who() + ": spec.members must list at least one member");
  }
  hn.members.reserve(list.size());
  for (std::size_t m = 0; m < list.size(); ++m) {
    const V& member = list[m];
    auto mw = [&] { return who() + " spec.members[" + std::to_string(m) + "]"; };
    HyperNodeMember out;
    const std::string_view type = str_view(member, "type");
    if (type == "Node") {
      out.type = HyperNodeMember::Type::kNode;
    } else if (type == "HyperNode") {
      out.type = HyperNodeMember::Type::kHyperNode;
    } else {
      return fail(ErrorCode::kParse,
                  mw() + ": type must be Node or HyperNode, got '" + std::string(type) + "'");
    }
    const auto sel = member.find("selector");
    auto selector_kind = [&](std::string_view kind) { return sel ? sel->find(kind) : std::optional<V>(); };
    int kinds = 0;
    if (auto exact = selector_kind("exactMatch")) {
      ++kinds;
      out.selector.kind = MemberSelector::Kind::kExact;
      out.selector.exact_name = str(*exact, "name");
    }
    if (auto regex = selector_kind("regexMatch")) {
      ++kinds;
      out.selector.kind = MemberSelector::Kind::kRegex;
      out.selector.regex_pattern = str(*regex, "pattern");
    }
    if (auto lm = selector_kind("labelMatch")) {
      ++kinds;
      out.selector.kind = MemberSelector::Kind::kLabel;
      if (!lm->is_object()) return fail(ErrorCode::kParse, mw() + ": selector.labelMatch must be an object");
      if (auto labels = lm->find("matchLabels")) out.selector.match_labels = string_map(*labels);
      auto expressions = lm->find("matchExpressions");
      if (expressions && !expressions->is_null() && !expressions->is_array())
        return fail(ErrorCode::kParse, mw() + ": selector.labelMatch.matchExpressions must be a list");
      for (const V& e : expressions ? expressions->elements() : std::vector<V>()) {
        if (!e.is_object())
          return fail(ErrorCode::kParse,
                      mw() + ": selector.labelMatch.matchExpressions entries must be objects");
        LabelRequirement req{str(e, "key"), str(e, "operator"), {}};
        auto values = e.find("values");
        if (values && !values->is_null() && !values->is_array())
          return fail(ErrorCode::kParse, mw() + ": matchExpressions values must be a list");
        for (const V& v : values ? values->elements() : std::vector<V>()) req.values.push_back(v.text());
        if (req.op != "In" && req.op != "NotIn" && req.op != "Exists" && req.op != "DoesNotExist") {
          return fail(ErrorCode::kParse, mw() + ": unknown matchExpressions operator '" + req.op + "'");
        }
        out.selector.match_expressions.push_back(std::move(req));
      }
    }
    if (kinds != 1) {
      return fail(ErrorCode::kParse,
                  mw() + ": selector needs exactly one of exactMatch, regexMatch, labelMatch");
    }
    hn.members.push_back(std::move(out));
  }
  auto health = parse_fabric_health(item, who());
  if (!health) return std::unexpected(health.error());
  hn.health = std::move(*health);
  return hn;
}

template <class V>
std::expected<void, Error> check_node_shape(const V& node, const std::string& where) {
  if (!node.is_object()) return fail(ErrorCode::kParse, where + ": a Node must be an object");
  for (const auto& [key, type] : {std::pair{"kind", Want::kString},
                                  {"apiVersion", Want::kString},
                                  {"metadata", Want::kObject},
                                  {"spec", Want::kObject},
                                  {"status", Want::kObject}}) {
    if (auto ok = want(node, key, type, where); !ok) return ok;
  }
  const auto meta = object_at(node, "metadata");
  const auto spec = object_at(node, "spec");
  const auto status = object_at(node, "status");
  if (meta) {
    if (auto ok = want(*meta, "name", Want::kString, [&] { return where + " metadata"; }); !ok) return ok;
  }
  auto who = [&] { return "Node " + (meta ? str(*meta, "name") : std::string()); };
  if (meta) {
    if (auto ok = want_strings(*meta, "labels", [&] { return who() + " metadata"; }); !ok) return ok;
  }
  if (spec) {
    if (auto ok = want(*spec, "unschedulable", Want::kBoolean, [&] { return who() + " spec"; }); !ok)
      return ok;
    if (auto ok = want(*spec, "taints", Want::kList, [&] { return who() + " spec"; }); !ok) return ok;
    const auto taints = list_at(spec, "taints");
    for (std::size_t i = 0; i < taints.size(); ++i) {
      auto tw = [&] { return who() + " spec.taints[" + std::to_string(i) + "]"; };
      if (!taints[i].is_object()) return fail(ErrorCode::kParse, tw() + " must be an object");
      for (const char* k : {"key", "value", "effect"}) {
        if (auto ok = want(taints[i], k, Want::kString, tw); !ok) return ok;
      }
    }
  }
  if (status) {
    if (auto ok = want(*status, "allocatable", Want::kObject, [&] { return who() + " status"; }); !ok)
      return ok;
    if (auto ok = want(*status, "conditions", Want::kList, [&] { return who() + " status"; }); !ok) return ok;
    const auto conditions = list_at(status, "conditions");
    for (std::size_t i = 0; i < conditions.size(); ++i) {
      auto cw = [&] { return who() + " status.conditions[" + std::to_string(i) + "]"; };
      if (!conditions[i].is_object()) return fail(ErrorCode::kParse, cw() + " must be an object");
      for (const char* k : {"type", "status"}) {
        if (auto ok = want(conditions[i], k, Want::kString, cw); !ok) return ok;
      }
    }
  }
  return {};
}

// The same reading as k8s::parse_node_list (k8s/objects/node_list.cpp): kind defaults to Node,
// metadata.name is required, Ready is the last Ready condition (true without one).
template <class V>
std::expected<void, Error> check_node_identity(const V& item, const std::string& where) {
  if (!item.is_object()) return fail(ErrorCode::kParse, where + " is not an object");
  if (auto kind = item.find("kind"); kind && kind->is_string() && kind->string() != "Node")
    return fail(ErrorCode::kParse, where + " has kind '" + std::string(kind->string()) + "', expected Node");
  const auto meta = object_at(item, "metadata");
  auto name = meta ? meta->find("name") : std::nullopt;
  if (!name || !name->is_string()) return fail(ErrorCode::kParse, where + " has no metadata.name");
  return {};
}

// One Node once its shape and identity are checked.
template <class V>
std::expected<NodeSpec, Error> read_node(const V& item) {
  const auto meta = object_at(item, "metadata");
  NodeSpec node;
  node.name = str(*meta, "name");
  if (auto labels = object_at(*meta, "labels")) node.labels = string_map(*labels);
  if (const auto spec = object_at(item, "spec")) {
    if (auto u = spec->find("unschedulable"); u && u->is_boolean()) node.unschedulable = u->boolean();
    for (const V& t : list_at(spec, "taints")) {
      if (t.is_object()) node.taints.push_back({str(t, "key"), str(t, "value"), str(t, "effect")});
    }
  }
  if (const auto status = object_at(item, "status")) {
    if (auto a = object_at(*status, "allocatable")) {
      auto parsed = resource_amounts(*a);
      if (!parsed)
        return std::unexpected(parsed.error().context("node " + node.name + " status.allocatable"));
      node.allocatable = std::move(*parsed);
    }
    for (const V& c : list_at(status, "conditions")) {
      if (c.is_object() && str_view(c, "type") == "Ready") node.ready = str_view(c, "status") == "True";
    }
  }
  return node;
}

template <class V, class Where = ItemsAt>
std::expected<std::vector<NodeSpec>, Error> read_node_items(const std::vector<V>& list, const Where& at = {});

template <class V>
std::expected<std::vector<NodeSpec>, Error> read_nodes(const V& doc) {
  if (!doc.is_object())
    return fail(ErrorCode::kParse, "expected a NodeList (kubectl get nodes -o json) or a Node");
  if (auto ok = want(doc, "kind", Want::kString, "the document"); !ok) return std::unexpected(ok.error());
  std::vector<NodeSpec> out;
  if (str_view(doc, "kind") == "Node") {
    if (auto ok = check_node_shape(doc, "the Node"); !ok) return std::unexpected(ok.error());
    if (auto ok = check_node_identity(doc, ItemsAt()(0)); !ok) return std::unexpected(ok.error());
    auto node = read_node(doc);
    if (!node) return std::unexpected(node.error());
    out.push_back(std::move(*node));
    return out;
  }
  auto items = doc.find("items");
  if (!items || !items->is_array()) {
    return fail(ErrorCode::kParse, "expected a NodeList with items (kubectl get nodes -o json), got kind '" +
                                       str(doc, "kind") + "'");
  }
  return read_node_items(items->elements());
}

// A NodeList's items: every shape checked, then every identity, then each Node read.
template <class V, class Where>
std::expected<std::vector<NodeSpec>, Error> read_node_items(const std::vector<V>& list, const Where& at) {
  std::vector<NodeSpec> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (auto ok = check_node_shape(list[i], at(i)); !ok) return std::unexpected(ok.error());
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (auto ok = check_node_identity(list[i], at(i)); !ok) return std::unexpected(ok.error());
  }
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto node = read_node(list[i]);
    if (!node) return std::unexpected(node.error());
    out.push_back(std::move(*node));
  }
  return out;
}

template <class V, class Where>
std::expected<std::optional<BoundPod>, Error> read_pod(const V& pod, const Where& iw);

template <class V, class Where = ItemsAt>
std::expected<std::vector<BoundPod>, Error> read_pod_items(const std::vector<V>& items,
                                                           const Where& at = {}) {
  std::vector<BoundPod> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto pod = read_pod(items[i], [&] { return at(i); });
    if (!pod) return std::unexpected(pod.error());
    if (*pod) out.push_back(std::move(**pod));
  }
  return out;
}

template <class V>
std::expected<std::vector<BoundPod>, Error> read_pods(const V& doc) {
  std::vector<V> items;
  if (!doc.is_object())
    return fail(ErrorCode::kParse, "expected a PodList (kubectl get pods -o json) or a Pod");
  if (auto ok = want(doc, "kind", Want::kString, "the document"); !ok) return std::unexpected(ok.error());
  const std::string_view kind = str_view(doc, "kind");
  auto list = doc.find("items");
  if (kind == "Pod") {
    items.push_back(doc);
  } else if (list && list->is_array() && (kind.empty() || kind == "PodList" || kind == "List")) {
    items = list->elements();
  } else {
    return fail(ErrorCode::kParse,
                "expected a PodList with items (kubectl get pods -o json) or a Pod, got kind '" +
                    std::string(kind) + "'");
  }
  return read_pod_items(items);
}

// The pod `iw()` names: what it uses when it is bound to a node and not finished, else nothing.
template <class V, class Where>
std::expected<std::optional<BoundPod>, Error> read_pod(const V& pod, const Where& iw) {
  if (!pod.is_object()) return fail(ErrorCode::kParse, iw() + ": a Pod must be an object");
  if (const auto k = str_view(pod, "kind"); !k.empty() && k != "Pod")
    return fail(ErrorCode::kParse, iw() + ": expected kind Pod, got '" + std::string(k) + "'");
  for (const auto& [key, type] :
       {std::pair{"metadata", Want::kObject}, {"spec", Want::kObject}, {"status", Want::kObject}}) {
    if (auto ok = want(pod, key, type, iw); !ok) return std::unexpected(ok.error());
  }
  const auto meta = pod.find("metadata");
  const auto spec = pod.find("spec");
  const auto status = pod.find("status");
  std::string name = meta ? str(*meta, "namespace") : std::string();
  name += '/';
  if (meta) name += str_view(*meta, "name");
  const std::string pw = "pod " + name;
  if (spec) {
    for (const auto& [key, type] : {std::pair{"nodeName", Want::kString},
                                    {"containers", Want::kList},
                                    {"initContainers", Want::kList},
                                    {"overhead", Want::kObject}}) {
      if (auto ok = want(*spec, key, type, [&] { return pw + " spec"; }); !ok)
        return std::unexpected(ok.error());
    }
  }
  if (status) {
    if (auto ok = want(*status, "phase", Want::kString, [&] { return pw + " status"; }); !ok)
      return std::unexpected(ok.error());
  }
  const std::string_view phase = status ? str_view(*status, "phase") : std::string_view();
  const std::string_view node = spec ? str_view(*spec, "nodeName") : std::string_view();
  if (node.empty() || phase == "Succeeded" || phase == "Failed") return std::nullopt;
  auto requests_of = [&](const V& c, const std::string& cw) -> std::expected<ResourceAmounts, Error> {
    if (!c.is_object()) return fail(ErrorCode::kParse, cw + " must be an object");
    if (auto ok = want(c, "resources", Want::kObject, cw); !ok) return std::unexpected(ok.error());
    const auto resources = c.find("resources");
    if (resources) {
      if (auto ok = want(*resources, "requests", Want::kObject, [&] { return cw + " resources"; }); !ok)
        return std::unexpected(ok.error());
    }
    return quantities(resources ? resources->find("requests") : std::nullopt, cw + " resources.requests");
  };
  ResourceAmounts sum, init_max;
  for (const V& c : list_at(spec, "containers")) {
    auto r = requests_of(c, pw + " container " + str(c, "name"));
    if (!r) return std::unexpected(r.error());
    for (const auto& [k, v] : *r) sum[k] += v;
  }
  for (const V& c : list_at(spec, "initContainers")) {
    auto r = requests_of(c, pw + " init container " + str(c, "name"));
    if (!r) return std::unexpected(r.error());
    for (const auto& [k, v] : *r) init_max[k] = std::max(init_max[k], v);
  }
  for (const auto& [k, v] : init_max) sum[k] = std::max(sum[k], v);
  auto overhead = quantities(spec ? spec->find("overhead") : std::nullopt, pw + " overhead");
  if (!overhead) return std::unexpected(overhead.error());
  for (const auto& [k, v] : *overhead) sum[k] += v;
  return BoundPod{name, std::string(node), std::move(sum)};
}

template <class V, class Where = ItemsAt>
std::expected<std::vector<HyperNodeSpec>, Error> read_hypernode_items(const std::vector<V>& list,
                                                                      const Where& at = {}) {
  std::vector<HyperNodeSpec> out;
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    // Only a list of HyperNodes is read whole; a list of several kinds is read by kind (load_topology).
    if (const auto k = str_view(list[i], "kind"); !k.empty() && k != "HyperNode")
      return fail(ErrorCode::kParse, at(i) + " has kind '" + std::string(k) + "', expected HyperNode");
    auto hn = parse_hypernode(list[i], at(i));
    if (!hn) return std::unexpected(hn.error());
    out.push_back(std::move(*hn));
  }
  return out;
}

template <class V>
std::expected<TopologySource, Error> read_topology(const V& doc) {
  TopologySource out;
  if (!doc.is_object())
    return fail(ErrorCode::kParse, "expected a HyperNode list or a Kueue Topology object");
  const std::string_view kind = str_view(doc, "kind");
  if (kind == "Topology") {
    out.kind = TopologySource::Kind::kLevels;
    if (auto ok = want(doc, "metadata", Want::kObject, "Topology"); !ok) return std::unexpected(ok.error());
    if (auto ok = want(doc, "spec", Want::kObject, "Topology"); !ok) return std::unexpected(ok.error());
    if (auto meta = object_at(doc, "metadata")) out.levels.name = str(*meta, "name");
    if (out.levels.name.empty()) out.levels.name = "default";
    const std::string who = "Topology " + out.levels.name;
    const auto spec = object_at(doc, "spec");
    if (spec) {
      if (auto ok = want(*spec, "levels", Want::kList, [&] { return who + " spec"; }); !ok)
        return std::unexpected(ok.error());
    }
    const auto levels = list_at(spec, "levels");
    for (std::size_t i = 0; i < levels.size(); ++i) {
      if (!levels[i].is_object()) {
        return fail(ErrorCode::kParse,
                    who + ": spec.levels[" + std::to_string(i) + "] must be an object {nodeLabel}");
      }
      std::string label = str(levels[i], "nodeLabel");
      if (label.empty())
        return fail(ErrorCode::kParse,
                    who + ": spec.levels[" + std::to_string(i) + "].nodeLabel is required");
      out.levels.levels.push_back(std::move(label));
    }
    if (out.levels.levels.empty()) return fail(ErrorCode::kParse, who + ": no spec.levels");
    return out;
  }
  out.kind = TopologySource::Kind::kHyperNodes;
  if (kind == "HyperNode") {
    auto hn = parse_hypernode(doc, "document");
    if (!hn) return std::unexpected(hn.error());
    out.hypernodes.push_back(std::move(*hn));
    return out;
  }
  auto items = doc.find("items");
  if (!items) {
    return fail(ErrorCode::kParse, "expected kind Topology, HyperNode or a list of HyperNodes, got kind '" +
                                       std::string(kind) + "'");
  }
  auto hypernodes = read_hypernode_items(items->elements());
  if (!hypernodes) return std::unexpected(hypernodes.error());
  out.hypernodes = std::move(*hypernodes);
  return out;
}

// Kept between files: `place` reads three, and a fresh parser's buffers cost more to allocate and
// give back than the parse itself. Its depth limit is io::kMaxJsonDepth, as parse_json's.
simdjson::dom::parser& cluster_parser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

static_assert(io::kReadAheadRoom >= simdjson::SIMDJSON_PADDING);

// A cluster file read with simdjson where simdjson takes it, so a 5 MB list costs milliseconds,
// not the hundreds nlohmann spends building its tree. Whatever simdjson refuses (YAML, invalid
// UTF-8, nesting past io::kMaxJsonDepth, an integer beyond 64 bits, a syntax error) goes the
// nlohmann way, which accepts or rejects it exactly as before, with the same message.
//
// A file the document reader does not take whole (several YAML documents, a List of several kinds,
// a JSON array) is read by io::read_objects, and `gather` reads the objects of `kinds` ("" for
// objects without one, which each reader takes as its own, as a NodeList's items are Nodes) with
// each one's place for its errors; the others are left in `ledger` for another reader of the file
// or for its warning. A file of one document whose objects are all of `kinds`, or none of them, is
// read by `read` as before, with the same errors.
template <class Read, class Gather>
auto load_with(const std::filesystem::path& path, io::ObjectLedger* ledger,
               const std::vector<std::string>& kinds, std::string_view what, Read read, Gather gather)
    -> decltype(read(std::declval<const io::NlohmannView&>())) {
  const auto started = std::chrono::steady_clock::now();
  auto text = io::read_bounded_file(path, io::kDataFileLimit);
  if (ledger) {
    ledger->add_read_ms(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  }
  if (!text) return std::unexpected(text.error());
  const std::string name = path.string();
  if (looks_like_json(*text)) {
    simdjson::dom::parser& parser = cluster_parser();
    simdjson::dom::element root;
    // In place: read_bounded_file leaves simdjson's padding spare past the text.
    if (text->capacity() < text->size() + simdjson::SIMDJSON_PADDING)
      text->reserve(text->size() + simdjson::SIMDJSON_PADDING);
    const simdjson::padded_string_view padded(text->data(), text->size(), text->capacity());
    const bool ready =
        parser.max_depth() == io::kMaxJsonDepth || !parser.allocate(padded.size(), io::kMaxJsonDepth);
    if (ready && !parser.parse(padded).get(root)) {
      if (auto result = read(io::SimdjsonView(root))) {
        if (ledger)
          for (const auto& k : kinds) ledger->record_all(name, k);
        return result;
      }
    }
  }
  auto file = io::parse_objects(*text, name);
  if (!file) return std::unexpected(file.error());
  std::vector<const io::FileObject*> taken;
  for (const auto& o : file->objects) {
    if (std::ranges::find(kinds, o.kind) != kinds.end()) taken.push_back(&o);
  }
  if (file->documents.size() <= 1 && (taken.empty() || taken.size() == file->objects.size())) {
    const json none;
    auto result = read(io::NlohmannView(file->documents.empty() ? none : file->documents.front()));
    if (!result) return std::unexpected(result.error().context(name));
    if (ledger) ledger->record(*file, kinds);
    return result;
  }
  if (taken.empty()) {
    return fail(ErrorCode::kParse, name + ": no " + std::string(what) + " among its " +
                                       std::to_string(file->documents.size()) + " documents (it holds " +
                                       file->kinds_summary() + ")");
  }
  auto result = gather(*file, taken);
  if (!result) return std::unexpected(result.error().context(name));
  if (ledger) ledger->record(*file, kinds);
  return result;
}

std::vector<io::NlohmannView> views_of(const std::vector<const io::FileObject*>& objects) {
  std::vector<io::NlohmannView> out;
  out.reserve(objects.size());
  for (const auto* o : objects) out.emplace_back(*o->object);
  return out;
}

// Names the i-th gathered object by its place in its file.
struct PlaceIn {
  const io::ObjectFile& file;
  const std::vector<const io::FileObject*>& objects;
  std::string operator()(std::size_t i) const { return file.where(objects[i]->origin); }
};

const std::vector<std::string> kNodeKinds{"Node", ""};
const std::vector<std::string> kPodKinds{"Pod", ""};
const std::vector<std::string> kTopologyKinds{"HyperNode", "Topology", ""};

// HyperNodes from any number of documents, or one Kueue Topology; never both.
std::expected<TopologySource, Error> gather_topology(const io::ObjectFile& file,
                                                     const std::vector<const io::FileObject*>& objects) {
  std::vector<const io::FileObject*> levels, hypernodes;
  for (const auto* o : objects) (o->kind == "Topology" ? levels : hypernodes).push_back(o);
  auto places = [&](const std::vector<const io::FileObject*>& of) {
    std::string out;
    for (const auto* o : of) out += (out.empty() ? "" : ", ") + file.where(o->origin);
    return out;
  };
  if (levels.size() > 1)
    return fail(ErrorCode::kParse, "a Topology in each of " + places(levels) + "; --topology takes one");
  if (!levels.empty() && !hypernodes.empty()) {
    return fail(ErrorCode::kParse, "a Topology (" + places(levels) + ") and HyperNodes (" +
                                       places(hypernodes) + "); --topology takes one or the other");
  }
  if (!levels.empty()) {
    auto out = read_topology(io::NlohmannView(*levels.front()->object));
    if (!out) return std::unexpected(out.error().context(file.where(levels.front()->origin)));
    return out;
  }
  TopologySource out;
  auto read = read_hypernode_items(views_of(hypernodes), PlaceIn{file, hypernodes});
  if (!read) return std::unexpected(read.error());
  out.hypernodes = std::move(*read);
  return out;
}

// A pod not yet on a node, neither finished nor on its way out, that names a gang (a gang key of
// gang_identity_keys(), spec.schedulingGroup or spec.workloadRef): a member a gang waiting for its
// quorum counts, as the coscheduling plugin's PreFilter counts the group's pods from its lister.
template <class V>
bool is_waiting_gang_pod(const V& item) {
  const auto spec = object_at(item, "spec");
  if (spec && !str(*spec, "nodeName").empty()) return false;
  if (const auto status = object_at(item, "status")) {
    const std::string phase = str(*status, "phase");
    if (phase == "Succeeded" || phase == "Failed") return false;
  }
  const auto meta = object_at(item, "metadata");
  if (!meta) return false;
  if (const auto deleted = meta->find("deletionTimestamp"); deleted && !deleted->is_null()) return false;
  if (spec && (spec->find("schedulingGroup") || spec->find("workloadRef"))) return true;
  for (const char* kind : {"labels", "annotations"}) {
    const auto marks = meta->find(kind);
    if (!marks || !marks->is_object()) continue;
    for (const auto& key : gang_identity_keys()) {
      if (marks->find(key)) return true;
    }
  }
  return false;
}

// The pods of a list, each with its identity: what the extender keys its view by.
template <class V, class Where = ItemsAt>
std::expected<std::vector<ListedPod>, Error> read_listed_pods(const std::vector<V>& items,
                                                              const Where& at = {},
                                                              std::vector<std::string>* pending = nullptr) {
  std::vector<ListedPod> out;
  if (pending) pending->clear();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto meta = object_at(items[i], "metadata");
    ListedPod pod;
    if (meta) pod = {str(*meta, "uid"), str(*meta, "namespace"), str(*meta, "name"), {}};
    auto bound = read_pod(items[i], [&] { return at(i); });
    if (!bound) return std::unexpected(bound.error().context("Pod " + pod.ns + "/" + pod.name));
    if (!*bound) {  // pending or finished: uses nothing
      if (pending && is_waiting_gang_pod(items[i])) pending->push_back(items[i].text());
      continue;
    }
    pod.bound = std::move(**bound);
    if (const auto spec = object_at(items[i], "spec")) {
      for (const auto& [field, mark] : {std::pair{"schedulingGroup", "podGroupName"},
                                        {"workloadRef", "name"},
                                        {"workloadRef", "podGroup"},
                                        {"workloadRef", "podGroupReplicaKey"}}) {
        const auto ref = spec->find(field);
        const auto v = ref && ref->is_object() ? ref->find(mark) : std::nullopt;
        if (v && v->is_string())
          pod.gang_marks["spec." + std::string(field) + "." + mark] = std::string(v->string());
      }
    }
    if (const auto spec = object_at(items[i], "spec")) {
      if (const auto prio = spec->find("priority"); prio && prio->is_integer()) {
        const std::int64_t v = prio->integer();
        // PriorityClass values are int32 (scheduling.k8s.io/v1 PriorityClass.Value).
        pod.priority = static_cast<std::int32_t>(std::clamp<std::int64_t>(
            v, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
        pod.priority_set = true;
      }
      pod.priority_class = str(*spec, "priorityClassName");
    }
    if (const auto status = object_at(items[i], "status")) pod.start_time = str(*status, "startTime");
    if (meta) {
      if (const auto deleted = meta->find("deletionTimestamp"); deleted && !deleted->is_null())
        pod.terminating = true;
      if (const auto labels = meta->find("labels"); labels && labels->is_object()) {
        for (const auto& [k, v] : labels->fields()) {
          if (v.is_string()) pod.labels.emplace(std::string(k), std::string(v.string()));
        }
      }
      for (const char* kind : {"annotations", "labels"}) {  // labels last: they win
        const auto marks = meta->find(kind);
        if (!marks || !marks->is_object()) continue;
        for (const auto& key : gang_identity_keys()) {
          const auto v = marks->find(key);
          if (v && v->is_string()) pod.gang_marks[key] = std::string(v->string());
        }
      }
    }
    out.push_back(std::move(pod));
  }
  return out;
}

template <class V>
std::vector<V> views_of(std::span<const json> items) {
  std::vector<V> out;
  out.reserve(items.size());
  for (const auto& item : items) out.emplace_back(item);
  return out;
}

// A list's pages read by `read` as one list of items. Each page is parsed with simdjson into a
// document of its own (the parser's buffers are reused), so a 6,000-node list costs milliseconds.
// When simdjson refuses a page (invalid UTF-8, nesting past io::kMaxJsonDepth, an integer beyond 64
// bits), every page is read the nlohmann way, as the API client reads a list (k8s::KubeClient::list),
// accepted or refused as before.
template <class Read>
auto read_pages(std::span<const std::string> pages, Read read)
    -> decltype(read(std::declval<const std::vector<io::NlohmannView>&>())) {
  auto not_a_list = [](std::size_t page) {
    return fail(ErrorCode::kParse, "page " + std::to_string(page + 1) + " is not a list with an items array");
  };
  if (pages.empty()) return read(std::vector<io::SimdjsonView>());
  simdjson::dom::parser& parser = cluster_parser();
  const bool ready =
      parser.max_depth() == io::kMaxJsonDepth || !parser.allocate(pages.front().size(), io::kMaxJsonDepth);
  if (ready) {
    // Elements point into their document: the vector must not move them.
    std::vector<simdjson::dom::document> docs(pages.size());
    std::vector<io::SimdjsonView> items;
    bool parsed = true;
    for (std::size_t p = 0; p < pages.size() && parsed; ++p) {
      simdjson::dom::element root;
      if (parser.parse_into_document(docs[p], pages[p]).get(root)) {
        parsed = false;
      } else if (auto found = io::SimdjsonView(root).find("items"); !found || !found->is_array()) {
        return not_a_list(p);
      } else {
        for (const auto& item : found->elements()) items.push_back(item);
      }
    }
    if (parsed) return read(items);
  }
  std::vector<json> docs;
  docs.reserve(pages.size());
  std::vector<io::NlohmannView> items;
  for (std::size_t p = 0; p < pages.size(); ++p) {
    docs.push_back(json::parse(pages[p], nullptr, /*allow_exceptions=*/false));
    const json& doc = docs.back();
    if (doc.is_discarded())
      return fail(ErrorCode::kParse, "page " + std::to_string(p + 1) + " is not valid JSON");
    if (!doc.is_object() || !doc.contains("items") || !doc["items"].is_array()) return not_a_list(p);
    for (const auto& item : doc["items"]) items.emplace_back(item);
  }
  return read(items);
}

}  // namespace

std::expected<json, Error> read_document(const std::filesystem::path& path) {
  auto text = io::read_bounded_file(path, io::kDataFileLimit);
  if (!text) return std::unexpected(text.error());
  if (looks_like_json(*text)) return document_of(*text, path.string());
  // Never the first document alone: a file of several is for read_objects' readers.
  auto file = io::parse_objects(*text, path.string());
  if (!file) return std::unexpected(file.error());
  if (file->documents.size() > 1) {
    return fail(ErrorCode::kParse, path.string() + ": " + std::to_string(file->documents.size()) +
                                       " YAML documents where one object is expected");
  }
  return file->documents.empty() ? json() : std::move(file->documents.front());
}

std::expected<std::vector<NodeSpec>, Error> parse_nodes(const json& doc) {
  return read_nodes(io::NlohmannView(doc));
}

std::expected<std::vector<NodeSpec>, Error> parse_nodes_dom(const simdjson::dom::element& doc) {
  return read_nodes(io::SimdjsonView(doc));
}

std::expected<std::vector<NodeSpec>, Error> load_nodes(const std::filesystem::path& path,
                                                       io::ObjectLedger* ledger) {
  return load_with(
      path, ledger, kNodeKinds, "Node", [](const auto& doc) { return read_nodes(doc); },
      [](const io::ObjectFile& file, const std::vector<const io::FileObject*>& objects) {
        return read_node_items(views_of(objects), PlaceIn{file, objects});
      });
}

std::expected<std::vector<BoundPod>, Error> parse_pods(const json& doc) {
  return read_pods(io::NlohmannView(doc));
}

std::expected<std::vector<BoundPod>, Error> parse_pods_dom(const simdjson::dom::element& doc) {
  return read_pods(io::SimdjsonView(doc));
}

std::expected<std::map<std::string, std::int64_t>, Error> requested_per_node(const nlohmann::json& pods,
                                                                             std::string_view resource) {
  auto bound = parse_pods(pods);
  if (!bound) return std::unexpected(bound.error());
  return requested_per_node(std::span<const BoundPod>(*bound), resource);
}

namespace {
// Requests only, as kube-scheduler's NodeResourcesFit counts a node's pods (noderesources/fit.go).
template <class Pods, class Bound>
std::map<std::string, std::int64_t> sum_requests(const Pods& pods, std::string_view resource, Bound bound) {
  std::map<std::string, std::int64_t> out;
  const std::string key(resource);
  for (const auto& p : pods) {
    const BoundPod& pod = bound(p);
    if (auto it = pod.requests.find(key); it != pod.requests.end()) out[pod.node] += it->second;
  }
  return out;
}
}  // namespace

std::map<std::string, std::int64_t> requested_per_node(std::span<const BoundPod> pods,
                                                       std::string_view resource) {
  return sum_requests(pods, resource, [](const BoundPod& p) -> const BoundPod& { return p; });
}

std::map<std::string, std::int64_t> requested_per_node(std::span<const ListedPod> pods,
                                                       std::string_view resource) {
  return sum_requests(pods, resource, [](const ListedPod& p) -> const BoundPod& { return p.bound; });
}

topology::exporters::GpuUsage gpu_usage_per_node(std::span<const NodeSpec> nodes,
                                                 const std::map<std::string, std::int64_t>& used_per_node,
                                                 std::string_view resource) {
  topology::exporters::GpuUsage usage;
  const std::string key(resource);
  for (const auto& n : nodes) {
    topology::exporters::NodeGpuUsage u;
    if (auto it = n.allocatable.find(key); it != n.allocatable.end()) u.allocatable = it->second;
    if (auto it = used_per_node.find(n.name); it != used_per_node.end()) u.used = it->second;
    usage[n.name] = u;
  }
  return usage;
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

std::expected<std::vector<BoundPod>, Error> load_pods(const std::filesystem::path& path,
                                                      io::ObjectLedger* ledger) {
  return load_with(
      path, ledger, kPodKinds, "Pod", [](const auto& doc) { return read_pods(doc); },
      [](const io::ObjectFile& file, const std::vector<const io::FileObject*>& objects) {
        return read_pod_items(views_of(objects), PlaceIn{file, objects});
      });
}

std::expected<std::vector<ListedPod>, Error> load_listed_pods(const std::filesystem::path& path) {
  auto text = io::read_bounded_file(path, io::kDataFileLimit);
  if (!text) return std::unexpected(text.error());
  const std::string page = std::move(*text);
  if (looks_like_json(page)) {
    if (auto listed = parse_pod_pages(std::span<const std::string>(&page, 1))) return listed;
  }
  auto file = io::parse_objects(page, path.string());
  if (!file) return std::unexpected(file.error());
  std::vector<const io::FileObject*> pods;
  for (const auto& o : file->objects) {
    if (o.kind == "Pod" || o.kind.empty()) pods.push_back(&o);
  }
  return read_listed_pods(views_of(pods), PlaceIn{*file, pods});
}

std::expected<TopologySource, Error> parse_topology(const json& doc) {
  return read_topology(io::NlohmannView(doc));
}

std::expected<TopologySource, Error> parse_topology_dom(const simdjson::dom::element& doc) {
  return read_topology(io::SimdjsonView(doc));
}

std::expected<TopologySource, Error> load_topology(const std::filesystem::path& path,
                                                   io::ObjectLedger* ledger) {
  return load_with(
      path, ledger, kTopologyKinds, "HyperNode or Topology",
      [](const auto& doc) { return read_topology(doc); }, gather_topology);
}

std::expected<std::vector<NodeSpec>, Error> parse_node_pages(std::span<const std::string> pages) {
  return read_pages(pages, [](const auto& items) { return read_node_items(items); });
}

std::expected<std::vector<ListedPod>, Error> parse_pod_pages(std::span<const std::string> pages,
                                                             std::vector<std::string>* pending) {
  return read_pages(pages,
                    [pending](const auto& items) { return read_listed_pods(items, ItemsAt{}, pending); });
}

std::expected<std::vector<HyperNodeSpec>, Error> parse_hypernode_pages(std::span<const std::string> pages) {
  return read_pages(pages, [](const auto& items) { return read_hypernode_items(items); });
}

std::expected<std::vector<NodeSpec>, Error> parse_node_items(std::span<const json> items) {
  return read_node_items(views_of<io::NlohmannView>(items));
}

std::expected<std::vector<ListedPod>, Error> parse_pod_items(std::span<const json> items,
                                                             std::vector<std::string>* pending) {
  return read_listed_pods(views_of<io::NlohmannView>(items), ItemsAt{}, pending);
}

std::expected<std::vector<HyperNodeSpec>, Error> parse_hypernode_items(std::span<const json> items) {
  return read_hypernode_items(views_of<io::NlohmannView>(items));
}

std::expected<TopologyIndex, Error> build_index(const TopologySource& topology, std::vector<NodeSpec> nodes,
                                                const std::vector<BoundPod>& pods) {
  if (topology.kind == TopologySource::Kind::kLevels)
    return TopologyIndex::from_levels(topology.levels, std::move(nodes), pods);
  return TopologyIndex::from_hypernodes(topology.hypernodes, std::move(nodes), pods);
}

}  // namespace hypertopo::scheduler
