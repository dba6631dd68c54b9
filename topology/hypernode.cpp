#include "topology/hypernode.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace hypertopo::topology {

using nlohmann::json;

json render_hypernode(const Tree& tree, DomainId id) {
  const Domain& d = tree.domain(id);
  json labels = json::object();
  for (const auto& [k, v] : d.labels) labels[k] = v;
  labels[kSourceLabel] = tree.source.empty() ? std::string(kManagedByValue) : tree.source;
  labels[kManagedByLabel] = kManagedByValue;

  json members = json::array();
  // Child domains first, by name, then nodes, by name: a stable order keeps diffs quiet.
  std::vector<std::string> children;
  children.reserve(d.children.size());
  for (DomainId c : d.children) children.push_back(tree.domain(c).name);
  std::sort(children.begin(), children.end());
  for (const auto& c : children) {
    members.push_back({{"type", "HyperNode"}, {"selector", {{"exactMatch", {{"name", c}}}}}});
  }
  std::vector<std::string> nodes = d.nodes;
  std::sort(nodes.begin(), nodes.end());
  for (const auto& n : nodes) {
    members.push_back({{"type", "Node"}, {"selector", {{"exactMatch", {{"name", n}}}}}});
  }

  json spec = {{"tier", d.tier}, {"members", std::move(members)}};
  if (!d.tier_name.empty()) spec["tierName"] = d.tier_name;
  json metadata = {{"name", d.name}, {"labels", std::move(labels)}};
  if (std::string degraded = degraded_members(d); !degraded.empty()) {
    metadata["annotations"] = {{kDegradedMembersAnnotation, std::move(degraded)}};
  }
  return json{{"apiVersion", kHyperNodeApiVersion},
              {"kind", "HyperNode"},
              {"metadata", std::move(metadata)},
              {"spec", std::move(spec)}};
}

std::string degraded_members(const Domain& domain) {
  if (!domain.health.assessed) return "";
  // A host link is an internal link of the domain of the host's leaf switch, so the host is in
  // this domain's subtree (a direct member, or inside an NVLink domain below it).
  std::set<std::string> hosts;
  for (const auto& link : domain.health.bad_links) {
    if (!link.host.empty() && !link.uplink) hosts.insert(link.host);
  }
  std::string out;
  for (const auto& h : hosts) out += (out.empty() ? "" : ",") + h;
  return out;
}

std::size_t volcano_exact_member_count(const json& spec) {
  std::set<std::string> names;
  if (!spec.is_object() || !spec.contains("members") || !spec["members"].is_array()) return 0;
  for (const auto& member : spec["members"]) {
    if (!member.is_object() || !member.contains("selector") || !member["selector"].is_object()) continue;
    const auto& selector = member["selector"];
    if (!selector.contains("exactMatch") || !selector["exactMatch"].is_object()) continue;
    const auto& exact = selector["exactMatch"];
    if (exact.contains("name") && exact["name"].is_string()) names.insert(exact["name"].get<std::string>());
  }
  return names.size();
}

json fabric_degraded_condition(const DomainHealth& health, std::string_view transition_time) {
  json c = {{"type", kFabricDegradedCondition}};
  if (health.degraded()) {
    c["status"] = "True";
    c["reason"] = std::string(reason_name(health.reason()));
    c["message"] = health.message();
  } else {
    c["status"] = "False";
    c["reason"] = "FabricHealthy";
    c["message"] = "every link of the domain trained at the width and speed of its siblings";
  }
  if (!transition_time.empty()) c["lastTransitionTime"] = std::string(transition_time);
  return c;
}

// The object as -o json / -o yaml print it: a degraded domain shows its condition, stamped with
// the time the fabric was observed (metav1.Condition requires lastTransitionTime; without a time
// there is no status).
static json render_with_health(const Tree& tree, DomainId id, std::string_view observed_at) {
  json object = render_hypernode(tree, id);
  const DomainHealth& health = tree.domain(id).health;
  if (health.assessed && health.degraded() && !observed_at.empty()) {
    object["status"] = {{"conditions", json::array({fabric_degraded_condition(health, observed_at)})}};
  }
  return object;
}

static std::vector<DomainId> render_order(const Tree& tree) {
  std::vector<DomainId> order(tree.size());
  std::iota(order.begin(), order.end(), DomainId{0});
  std::sort(order.begin(), order.end(), [&](DomainId a, DomainId b) {
    const Domain& x = tree.domain(a);
    const Domain& y = tree.domain(b);
    return x.tier != y.tier ? x.tier < y.tier : x.name < y.name;
  });
  return order;
}

json render_hypernode_list(const Tree& tree, std::string_view observed_at) {
  json items = json::array();
  for (DomainId id : render_order(tree)) items.push_back(render_with_health(tree, id, observed_at));
  return json{
      {"apiVersion", "v1"}, {"kind", "List"}, {"metadata", {{"resourceVersion", ""}}}, {"items", items}};
}

static void emit(YAML::Emitter& out, const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [k, item] : v.items()) {
        out << YAML::Key << k << YAML::Value;
        emit(out, item);
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& item : v) emit(out, item);
      out << YAML::EndSeq;
      break;
    case json::value_t::string:
      // Always quoted: names such as "0x2c5e..." or "true" must stay strings for YAML 1.1 readers.
      out << YAML::DoubleQuoted << v.get<std::string>();
      break;
    case json::value_t::boolean:
      out << v.get<bool>();
      break;
    case json::value_t::number_integer:
      out << v.get<std::int64_t>();
      break;
    case json::value_t::number_unsigned:
      out << v.get<std::uint64_t>();
      break;
    case json::value_t::number_float:
      out << v.get<double>();
      break;
    default:
      out << YAML::Null;
      break;
  }
}

std::string json_to_yaml(const json& value) {
  YAML::Emitter out;
  emit(out, value);
  return std::string(out.c_str()) + "\n";
}

std::string render_hypernodes_yaml(const Tree& tree, std::string_view observed_at) {
  std::string text;
  for (DomainId id : render_order(tree)) {
    text += "---\n";
    text += json_to_yaml(render_with_health(tree, id, observed_at));
  }
  return text;
}

}  // namespace hypertopo::topology
