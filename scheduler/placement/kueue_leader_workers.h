// scheduler/placement/kueue_leader_workers.h: leader + workers pod sets (LeaderWorkerSet, JobSet)
// placed together, as Kueue places them.
//
// Pod sets that share a group are one placement: the pod set with the larger count is the workers,
// the other the leader (one pod). A domain holds the leader when the leader's requests fit in one
// of its leaves; the leader goes to the domain where it costs the fewest workers (or slices), and
// the workers fill the rest. These are the leader steps of Kueue's TAS flavor snapshot
// (kubernetes-sigs/kueue, tas_flavor_snapshot.go); the counts themselves live in KueueFitState.
//
//   for (const auto& group : kueue_pod_set_groups(pod_sets)) {
//     place(*group.workers, group.leader);  // leader == nullptr: a pod set on its own
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "scheduler/placement/kueue_fit.h"
#include "scheduler/placement/kueue_pod_set.h"

namespace hypertopo::scheduler {

struct KueuePodSetGroup {
  std::vector<std::size_t> members;  // indices into the pod sets, in their order
  const KueuePodSet* workers = nullptr;
  const KueuePodSet* leader = nullptr;  // nullptr for a pod set on its own
};

// Pod sets in request order, those sharing a group together (first appearance decides the order).
std::vector<KueuePodSetGroup> kueue_pod_set_groups(const std::vector<KueuePodSet>& pod_sets);

// Moves the domain where the leader costs the fewest workers (or slices) to the front; the others
// keep their order.
void kueue_put_cheapest_leader_first(KueueFitState& fit, std::vector<int>& list, bool slices);

// Takes `d` (or, under BestFit, the tightest domain from `from` on that holds the rest) for the
// remaining workers and leaders, lowering both; returns the domain taken and whether the request
// is complete.
std::pair<int, bool> kueue_consume_with_leaders(KueueFitState& fit, int d, const std::vector<int>& list,
                                                std::size_t from, std::int32_t& remaining,
                                                std::int32_t& remaining_leaders, bool unconstrained,
                                                std::int32_t size, bool slices);

}  // namespace hypertopo::scheduler
