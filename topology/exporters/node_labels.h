// topology/exporters/node_labels.h: the tree as node labels, and the Topology objects that read them.
//
// Schedulers that do not read HyperNodes (Kueue TAS, KAI-Scheduler, topograph users) learn the
// hierarchy from one label per tier on every node. This file turns a Tree into those labels, into
// the smallest merge patch that moves a node's current labels there, and into Kueue's and KAI's
// `Topology` objects that list the keys highest tier first.
//
//   NodeLabelOptions opts;                       // hypertopo.io/tier-N
//   opts.topograph_compatible = true;            // + fabric.topograph.run/tier-N, accelerator...
//   auto labels = node_labels(tree, opts);       // node -> {key: value}
//   auto patch = node_label_patch(current, labels["dgx-001"], opts);   // nullopt: nothing to do
//   std::cout << io::json_text(render_kueue_topology(tree, opts, "hypertopo"), 2);
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/tree.h"

namespace hypertopo::topology::exporters {

using LabelMap = std::map<std::string, std::string>;

struct NodeLabelOptions {
  std::string key_prefix = "hypertopo.io/tier-";  // key of tier N is key_prefix + N
  // Also write NVIDIA topograph v1.0's keys: fabric.topograph.run/tier-0 is the switch closest to
  // the node (the lowest fabric tier), tier-1 its parent, ...; an NVLink domain goes only to
  // accelerator.topograph.run/domain.
  bool topograph_compatible = false;
  std::string nvlink_tier_name = "nvlink";  // domains of this tierName are accelerator domains
};

inline constexpr std::string_view kTopographTierPrefix = "fabric.topograph.run/tier-";
inline constexpr std::string_view kTopographAcceleratorKey = "accelerator.topograph.run/domain";
inline constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";
inline constexpr std::size_t kMaxLabelValueLength = 63;

// A label value for a domain name: unchanged when it is a valid value of at most 63 characters,
// otherwise cut and given a short stable hash suffix (the same one HyperNode member names get).
std::string label_value_for(const std::string& domain_name);
// topograph's rule for its label values: kept when at most 63 characters, else "x" + the 16 hex
// digits of the value's FNV-64a hash.
std::string topograph_label_value(const std::string& value);
// Kubernetes' rule for label values: empty, or <= 63 of [A-Za-z0-9._-] starting/ending alphanumeric.
bool is_valid_label_value(std::string_view value);

// Every node of the tree -> the labels of its domains (one key per tier of its branch).
std::map<std::string, LabelMap> node_labels(const Tree& tree, const NodeLabelOptions& options = {});

// True for keys this exporter writes (so stale ones may be removed).
bool is_our_label_key(std::string_view key, const NodeLabelOptions& options);

// The JSON merge patch {"metadata":{"labels":{...}}} that takes `current` to carry `desired`:
// changed or new keys with their value, keys of ours no longer desired with null. Labels of others
// are never touched. nullopt when the node already carries exactly what is desired.
std::optional<nlohmann::json> node_label_patch(const LabelMap& current, const LabelMap& desired,
                                               const NodeLabelOptions& options = {});

// The label keys of the tree's tiers, highest tier first, then kubernetes.io/hostname.
std::vector<std::string> topology_level_keys(const Tree& tree, const NodeLabelOptions& options = {});

// Kueue Topology: spec.levels[].nodeLabel, highest first. Kueue serves kueue.x-k8s.io/v1beta2
// (v1beta1 is deprecated); `api_version` "kueue.x-k8s.io/v1beta1" writes the older one.
inline constexpr const char* kKueueTopologyApiVersion = "kueue.x-k8s.io/v1beta2";
nlohmann::json render_kueue_topology(const Tree& tree, const NodeLabelOptions& options,
                                     const std::string& name = "hypertopo",
                                     const std::string& api_version = kKueueTopologyApiVersion);
// kai.scheduler/v1alpha1 Topology: spec.levels[] {nodeLabel, alias}, highest first; the alias is
// the tier's name (leaf, spine, ...; "hostname" for the node level) so KAI's messages use it.
nlohmann::json render_kai_topology(const Tree& tree, const NodeLabelOptions& options,
                                   const std::string& name = "hypertopo");

// node_labels() as YAML a person can read (and `kubectl label` lines can be made from).
std::string render_node_labels_yaml(const Tree& tree, const NodeLabelOptions& options = {});

}  // namespace hypertopo::topology::exporters
