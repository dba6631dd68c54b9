// scheduler/placement/kueue_pod_set.h: what Kueue's Topology-Aware Scheduling is asked to place and
// what it answers, in Kueue's own terms.
//
// A KueuePodSet carries one pod set's TAS annotations as Kueue reads them (required / preferred /
// unconstrained level, slices and their layers, a leader+workers group); a KueuePodSetResult is
// either Kueue's TopologyAssignment (levels plus one count per domain) or Kueue's failure string.
// The placement itself is KueueTopologySnapshot (kueue_compat.h).
//
//   KueuePodSet workers{.name = "workers", .count = 8, .per_pod = {{"nvidia.com/gpu", 1}},
//                       .required = "cloud.com/topology-rack", .group = "lws"};
//   KueuePodSet leader{.name = "leader", .count = 1, .per_pod = {{"cpu", 1000}},
//                      .required = "cloud.com/topology-rack", .group = "lws"};
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/index/cluster_model.h"

namespace hypertopo::scheduler {

struct KueueSliceLayer {
  std::string topology;  // a level label key
  std::int32_t size = 1;
};

struct KueuePodSet {
  std::string name;
  std::int32_t count = 0;
  ResourceAmounts per_pod;
  std::optional<std::string> required;
  std::optional<std::string> preferred;
  bool unconstrained = false;
  // No topology request at all: Kueue treats it as unconstrained at the lowest level.
  bool implied = false;
  std::optional<std::string> slice_required_topology;
  std::optional<std::int32_t> slice_size;
  std::vector<KueueSliceLayer> slice_constraints;  // coarsest first
  std::map<std::string, std::string> node_selector;
  std::vector<Toleration> tolerations;
  std::optional<std::string> group;  // pod sets sharing a group are placed together (leader + workers)
};

struct KueueFeatureGates {
  bool profile_mixed = true;         // TASProfileMixed
  bool balanced_placement = false;   // TASBalancedPlacement
  bool multi_layer_topology = true;  // TASMultiLayerTopology
};

struct KueueDomainCount {
  std::vector<std::string> values;
  std::int32_t count = 0;
};

struct KueueAssignment {
  std::vector<std::string> levels;
  std::vector<KueueDomainCount> domains;
};

struct KueuePodSetResult {
  std::string name;
  std::optional<KueueAssignment> assignment;  // set when it fits
  std::string failure;                        // Kueue's exact reason when it does not
};

}  // namespace hypertopo::scheduler
