// discoverers/labels/label_config.h: which node labels name the levels of a label-defined topology.
//
// A cluster that already labels its nodes by rack, block or ToR can be described without any fabric
// access. The config is read in every shape admins already have:
//   - Volcano's controller config:  networkTopologyDiscovery: [{source: label, config: {networkTopologyTypes:
//   ...}}]
//   - its `config:` section alone, or the bare `networkTopologyTypes:` map, where each type lists
//     label keys top to bottom and the last entry is the node-level label (hostname), which is dropped;
//     a type is that list, or (newer Volcano) `{nodeSelector: {matchLabels: {...}}, levels: [{nodeLabel,
//     tierName}, ...]}` so that node pools with different depths get their own trees and shared tier names;
//   - a Kueue `Topology` object (kueue.x-k8s.io, `spec.levels[].nodeLabel`, highest first), one type per
//     object; a last level of `kubernetes.io/hostname` is the node level and is dropped too.
//
//   auto config = load_label_config("labels.yaml");        // std::expected<LabelConfig, Error>
//   for (const auto& type : config->types) std::cout << type.name << ": " << type.levels.size() << "
//   tiers\n";
#pragma once

#include <expected>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "errors/error.h"

namespace YAML {
class Node;
}

namespace hypertopo::discoverers::labels {

inline constexpr const char* kHostnameLabel = "kubernetes.io/hostname";

struct LabelTopologyType {
  std::string name;                 // the key under networkTopologyTypes, or the Topology's name
  std::vector<std::string> levels;  // label keys, top level first; the node-level label is not here
  std::string node_label;           // the dropped node-level entry ("" when the list had none)
  // Parallel to `levels`: an explicit tierName, or "" for the label key (Volcano's default).
  std::vector<std::string> tier_names;
  // Newer Volcano form `{nodeSelector: {matchLabels}, levels: [...]}`: only nodes carrying every one
  // of these labels belong to the type, and its objects carry volcano.sh/network-topology-profile.
  std::map<std::string, std::string> node_selector;
  bool profile_label = false;
};

struct LabelConfig {
  std::vector<LabelTopologyType> types;  // sorted by name
  std::vector<std::string> notes;        // things worth telling the admin (a disabled entry used, ...)
};

// `file` names the source in error messages ("labels.yaml: networkTopologyTypes.a[1].nodeLabel: ...").
std::expected<LabelConfig, Error> parse_label_config(const std::string& yaml_text, const std::string& file);
std::expected<LabelConfig, Error> parse_label_config(const YAML::Node& document, const std::string& file);
std::expected<LabelConfig, Error> load_label_config(const std::filesystem::path& path);
// A networkTopologyTypes mapping found at `path` of `file` (a source's inline config in the agent's
// file): errors name that file and the whole key path.
std::expected<LabelConfig, Error> parse_label_types(const YAML::Node& types, const std::string& file,
                                                    const std::string& path);

}  // namespace hypertopo::discoverers::labels
