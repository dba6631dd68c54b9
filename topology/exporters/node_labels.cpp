#include "topology/exporters/node_labels.h"

#include <yaml-cpp/yaml.h>

#include <set>

namespace hypertopo::topology::exporters {
namespace {

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

std::string tier_key(std::string_view prefix, int tier) { return std::string(prefix) + std::to_string(tier); }

}  // namespace

bool is_valid_label_value(std::string_view value) {
  if (value.empty()) return true;
  if (value.size() > kMaxLabelValueLength) return false;
  if (!is_alnum(value.front()) || !is_alnum(value.back())) return false;
  for (char c : value) {
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::string label_value_for(const std::string& domain_name) {
  // Domain names are DNS-1123 subdomains, so only their length can make them invalid values.
  std::string value = fit_member_name(domain_name);
  if (is_valid_label_value(value)) return value;
  value = fit_member_name(sanitize_name(domain_name));
  return is_valid_label_value(value) ? value : std::string();
}

std::map<std::string, LabelMap> node_labels(const Tree& tree, const NodeLabelOptions& options) {
  std::map<std::string, LabelMap> out;
  for (DomainId id = 0; id < tree.size(); ++id) {
    const Domain& lowest = tree.domain(id);
    if (lowest.nodes.empty()) continue;
    // Walk up from the domain that holds the node: each ancestor adds its tier's key.
    for (const auto& node : lowest.nodes) {
      LabelMap& labels = out[node];
      std::optional<DomainId> at = id;
      while (at) {
        const Domain& d = tree.domain(*at);
        const std::string value = label_value_for(d.name);
        labels[tier_key(options.key_prefix, d.tier)] = value;
        if (options.topograph_compatible) {
          if (d.tier_name == options.nvlink_tier_name) {
            labels[std::string(kTopographAcceleratorKey)] = value;
          } else {
            labels[tier_key(kTopographTierPrefix, d.tier)] = value;
          }
        }
        at = d.parent;
      }
    }
  }
  return out;
}

bool is_our_label_key(std::string_view key, const NodeLabelOptions& options) {
  if (!options.key_prefix.empty() && key.starts_with(options.key_prefix)) return true;
  if (options.topograph_compatible) {
    if (key.starts_with(kTopographTierPrefix) || key == kTopographAcceleratorKey) return true;
  }
  return false;
}

std::optional<nlohmann::json> node_label_patch(const LabelMap& current, const LabelMap& desired,
                                               const NodeLabelOptions& options) {
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [key, value] : desired) {
    auto it = current.find(key);
    if (it == current.end() || it->second != value) labels[key] = value;
  }
  for (const auto& [key, value] : current) {
    if (is_our_label_key(key, options) && !desired.contains(key)) labels[key] = nullptr;
  }
  if (labels.empty()) return std::nullopt;
  return nlohmann::json{{"metadata", {{"labels", labels}}}};
}

std::vector<std::string> topology_level_keys(const Tree& tree, const NodeLabelOptions& options) {
  std::set<int, std::greater<>> tiers;
  for (const auto& d : tree.domains()) tiers.insert(d.tier);
  std::vector<std::string> keys;
  for (int tier : tiers) keys.push_back(tier_key(options.key_prefix, tier));
  keys.emplace_back(kHostnameLabel);
  return keys;
}

namespace {
nlohmann::json topology_object(const std::string& api_version, const Tree& tree,
                               const NodeLabelOptions& options, const std::string& name) {
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& key : topology_level_keys(tree, options)) levels.push_back({{"nodeLabel", key}});
  return {{"apiVersion", api_version},
          {"kind", "Topology"},
          {"metadata", {{"name", name}, {"labels", {{"app.kubernetes.io/managed-by", "hypertopo"}}}}},
          {"spec", {{"levels", levels}}}};
}
}  // namespace

nlohmann::json render_kueue_topology(const Tree& tree, const NodeLabelOptions& options,
                                     const std::string& name) {
  return topology_object("kueue.x-k8s.io/v1beta1", tree, options, name);
}

nlohmann::json render_kai_topology(const Tree& tree, const NodeLabelOptions& options,
                                   const std::string& name) {
  return topology_object("kai.scheduler/v1alpha1", tree, options, name);
}

std::string render_node_labels_yaml(const Tree& tree, const NodeLabelOptions& options) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (const auto& [node, labels] : node_labels(tree, options)) {
    out << YAML::Key << node << YAML::Value << YAML::BeginMap;
    for (const auto& [key, value] : labels)
      out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace hypertopo::topology::exporters
