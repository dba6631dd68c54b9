#include "topology/exporters/node_labels.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>

namespace hypertopo::topology::exporters {
namespace {

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

std::string tier_key(std::string_view prefix, int tier) { return std::string(prefix) + std::to_string(tier); }

}  // namespace

std::string topograph_label_value(const std::string& value) {
  if (value.size() <= kMaxLabelValueLength) return value;
  // FNV-1a, 64 bits: offset basis 14695981039346656037, prime 1099511628211.
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : value) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  static const char* const kHex = "0123456789abcdef";
  std::string out = "x";
  for (int shift = 60; shift >= 0; shift -= 4) out += kHex[(hash >> shift) & 0xF];
  return out;
}

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
  // topograph counts fabric tiers from 0 at the switch closest to the node.
  int lowest_fabric_tier = std::numeric_limits<int>::max();
  for (const auto& d : tree.domains()) {
    if (d.tier_name != options.nvlink_tier_name) lowest_fabric_tier = std::min(lowest_fabric_tier, d.tier);
  }
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
            labels[std::string(kTopographAcceleratorKey)] = topograph_label_value(d.name);
          } else {
            labels[tier_key(kTopographTierPrefix, d.tier - lowest_fabric_tier)] =
                topograph_label_value(d.name);
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
                               const NodeLabelOptions& options, const std::string& name, bool aliases) {
  std::map<std::string, std::string> alias;  // level key -> the tier's name
  for (const auto& d : tree.domains()) {
    if (!d.tier_name.empty()) alias.emplace(tier_key(options.key_prefix, d.tier), d.tier_name);
  }
  alias.emplace(std::string(kHostnameLabel), "hostname");
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& key : topology_level_keys(tree, options)) {
    nlohmann::json level{{"nodeLabel", key}};
    if (aliases && alias.contains(key)) level["alias"] = alias[key];
    levels.push_back(std::move(level));
  }
  return {{"apiVersion", api_version},
          {"kind", "Topology"},
          {"metadata", {{"name", name}, {"labels", {{"app.kubernetes.io/managed-by", "hypertopo"}}}}},
          {"spec", {{"levels", levels}}}};
}
}  // namespace

nlohmann::json render_kueue_topology(const Tree& tree, const NodeLabelOptions& options,
                                     const std::string& name, const std::string& api_version) {
  return topology_object(api_version, tree, options, name, false);
}

nlohmann::json render_kai_topology(const Tree& tree, const NodeLabelOptions& options,
                                   const std::string& name) {
  return topology_object("kai.scheduler/v1alpha1", tree, options, name, true);
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
