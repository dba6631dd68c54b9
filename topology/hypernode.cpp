#include "topology/hypernode.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
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
static bool carries_status(const DomainHealth& health, std::string_view observed_at) {
  return health.assessed && health.degraded() && !observed_at.empty();
}

static json render_with_health(const Tree& tree, DomainId id, std::string_view observed_at) {
  json object = render_hypernode(tree, id);
  const DomainHealth& health = tree.domain(id).health;
  if (carries_status(health, observed_at)) {
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

std::size_t hypernodes_with_status(const Tree& tree, std::string_view observed_at) {
  std::size_t count = 0;
  for (DomainId id = 0; id < tree.size(); ++id)
    count += carries_status(tree.domain(id).health, observed_at) ? 1 : 0;
  return count;
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

// Text yaml-cpp writes double-quoted as it is: printable ASCII without a quote or a backslash.
static bool quotes_as_is(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\'; });
}

// A label key yaml-cpp writes plain: a letter, then letters, digits and . _ / -, no YAML word.
static bool plain_key(std::string_view key) {
  static constexpr std::string_view kWords[] = {
      "y",     "Y",     "yes",   "Yes", "YES", "n",  "N",   "no",  "No",  "NO",   "true", "True", "TRUE",
      "false", "False", "FALSE", "on",  "On",  "ON", "off", "Off", "OFF", "null", "Null", "NULL"};
  if (key.empty() || !std::isalpha(static_cast<unsigned char>(key.front()))) return false;
  if (std::find(std::begin(kWords), std::end(kWords), key) != std::end(kWords)) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '/' || c == '-';
  });
}

// One HyperNode as json_to_yaml(render_with_health(...)) writes it, straight from the domain, for
// the common case: a healthy domain with members whose names and labels need no escaping. Returns
// false, `out` untouched, for any other; the caller then renders it through the emitter.
static bool write_plain_hypernode(std::string& out, const Tree& tree, DomainId id) {
  const Domain& d = tree.domain(id);
  if (d.health.assessed && d.health.degraded()) return false;
  if (d.children.empty() && d.nodes.empty()) return false;
  // The object's keys in the order of render_hypernode's JSON object (sorted), values replaced as
  // it replaces them.
  std::map<std::string_view, std::string_view> labels(d.labels.begin(), d.labels.end());
  labels[kSourceLabel] = tree.source.empty() ? std::string_view(kManagedByValue) : tree.source;
  labels[kManagedByLabel] = kManagedByValue;
  for (const auto& [k, v] : labels) {
    if (!plain_key(k) || !quotes_as_is(v)) return false;
  }
  std::vector<std::string_view> children;
  children.reserve(d.children.size());
  for (DomainId c : d.children) children.push_back(tree.domain(c).name);
  std::sort(children.begin(), children.end());
  std::vector<std::string_view> nodes(d.nodes.begin(), d.nodes.end());
  std::sort(nodes.begin(), nodes.end());
  if (!quotes_as_is(d.name) || !quotes_as_is(d.tier_name) ||
      !std::all_of(children.begin(), children.end(), quotes_as_is) ||
      !std::all_of(nodes.begin(), nodes.end(), quotes_as_is))
    return false;
  auto quoted = [&](std::string_view text) {
    out += '"';
    out += text;
    out += "\"\n";
  };
  out += "---\napiVersion: ";
  quoted(kHyperNodeApiVersion);
  out += "kind: ";
  quoted("HyperNode");
  out += "metadata:\n  labels:\n";
  for (const auto& [k, v] : labels) {
    out += "    ";
    out += k;
    out += ": ";
    quoted(v);
  }
  out += "  name: ";
  quoted(d.name);
  out += "spec:\n  members:\n";
  for (const auto& [names, type] : {std::pair{&children, "HyperNode"}, {&nodes, "Node"}}) {
    for (std::string_view name : *names) {
      out += "    - selector:\n        exactMatch:\n          name: ";
      quoted(name);
      out += "      type: ";
      quoted(type);
    }
  }
  out += "  tier: ";
  out += std::to_string(d.tier);
  if (!d.tier_name.empty()) {
    out += "\n  tierName: ";
    quoted(d.tier_name);
  } else {
    out += "\n";
  }
  return true;
}

std::string render_hypernodes_yaml(const Tree& tree, std::string_view observed_at) {
  std::string text;
  for (DomainId id : render_order(tree)) {
    if (write_plain_hypernode(text, tree, id)) continue;
    text += "---\n";
    text += json_to_yaml(render_with_health(tree, id, observed_at));
  }
  return text;
}

}  // namespace hypertopo::topology
