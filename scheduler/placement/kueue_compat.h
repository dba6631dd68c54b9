// scheduler/placement/kueue_compat.h: Kueue Topology-Aware Scheduling, assignment for assignment.
//
// The `kueue` compatibility mode answers exactly what Kueue's TAS snapshot answers for the same
// nodes, Topology levels and pod sets: the same domains and counts, the same failure strings
// (`topology "default" allows to fit only 3 out of 4 pod(s)`), the same tie-breaks (BestFit for
// required/preferred, LeastFreeCapacity for unconstrained and implied requests, preferred climbing
// one level at a time, slices, multi-layer slice constraints, leader+workers groups, and the
// balanced-placement variant behind its feature gate). The conformance suite
// (tests/scheduler/placement/kueue_conformance_test.cpp) runs every case of fixtures/kueue/tas-cases.json.
//
// This file reads a pod set's request, checks it as Kueue's validation would, and walks the chosen
// domains down to the lowest level. The pieces: kueue_snapshot.h (domains and capacity),
// kueue_fit.h (counts, slices, domain order), kueue_leader_workers.h, kueue_balanced_placement.h,
// kueue_failure_messages.h.
//
//   KueueTopologySnapshot snap(levels, nodes, non_tas_pods, /*flavor_labels=*/{}, "default");
//   KueuePodSet ps{.name = "main", .count = 4, .per_pod = {{"cpu", 1000}},
//                  .required = "cloud.com/topology-block"};
//   auto results = snap.find_assignments({ps}, KueueFeatureGates{});
//   // results[0].assignment->domains: [{values: ["x1"], count: 2}, ...] or results[0].failure
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scheduler/index/cluster_model.h"
#include "scheduler/placement/kueue_failure_messages.h"
#include "scheduler/placement/kueue_pod_set.h"
#include "scheduler/placement/kueue_snapshot.h"

namespace hypertopo::scheduler {

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
  KueueDomainTree tree_;
  std::string topology_name_;
};

}  // namespace hypertopo::scheduler
