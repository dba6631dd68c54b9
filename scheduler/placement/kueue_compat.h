// scheduler/placement/kueue_compat.h: Kueue Topology-Aware Scheduling, assignment for assignment.
//
// The `kueue` compatibility mode answers exactly what Kueue's TAS snapshot answers for the same
// nodes, Topology levels and pod sets: the same domains and counts, the same failure strings
// (`topology "default" allows to fit only 3 out of 4 pod(s)`), the same tie-breaks (BestFit for
// required/preferred, LeastFreeCapacity for unconstrained and implied requests, preferred climbing
// one level at a time, slices, multi-layer slice constraints, leader+workers groups, and the
// balanced-placement variant behind its feature gate). The conformance suite
// (tests/scheduler/kueue_conformance_test.cpp) runs every case of fixtures/kueue/tas-cases.json.
//
//   KueueTopologySnapshot snap(levels, nodes, non_tas_pods, /*flavor_labels=*/{}, "default");
//   KueuePodSet ps{.name = "main", .count = 4, .per_pod = {{"cpu", 1000}},
//                  .required = "cloud.com/topology-block"};
//   auto results = snap.find_assignments({ps}, KueueFeatureGates{});
//   // results[0].assignment->domains: [{values: ["x1"], count: 2}, ...] or results[0].failure
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

// A failure of find_assignments that means the request itself is invalid (a level the Topology does
// not have, a slice layer above the pod set's level, a slice size missing): the annotation at
// fault. nullopt for failures that mean "does not fit now".
std::optional<std::string> kueue_request_fault(const std::string& failure);

class KueueTopologySnapshot {
 public:
  // Keeps nodes that are ready, schedulable, match `flavor_labels` and carry every level label;
  // `non_tas_pods` (already filtered to bound, not finished pods) take their requests plus pods: 1.
  KueueTopologySnapshot(std::vector<std::string> levels, const std::vector<NodeSpec>& nodes,
                        const std::vector<BoundPod>& non_tas_pods,
                        const std::map<std::string, std::string>& flavor_labels,
                        std::string topology_name = "default");

  // Places pod sets in order (groups together); earlier assignments count as used by later ones.
  // Stops at the first failure, as Kueue does: later pod sets get no result entry.
  std::vector<KueuePodSetResult> find_assignments(const std::vector<KueuePodSet>& pod_sets,
                                                  const KueueFeatureGates& gates);

 private:
  struct Run;  // one placement attempt's mutable state, defined in the .cpp

  std::vector<std::string> levels_;
  std::string topology_name_;
  bool lowest_is_node_ = false;
  // The static tree; algorithm state lives in Run.
  std::vector<std::vector<std::string>> values_;  // per domain: level values
  std::vector<std::string> ids_;
  std::vector<int> parents_;
  std::vector<std::vector<int>> children_;
  std::vector<std::vector<int>> per_level_;
  std::vector<int> roots_;
  struct LeafData {
    int domain = -1;
    std::map<std::string, std::int64_t> free;
    const NodeSpec* node = nullptr;
  };
  std::vector<LeafData> leaves_;
  std::vector<NodeSpec> node_copies_;
};

}  // namespace hypertopo::scheduler
