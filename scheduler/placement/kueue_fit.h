// scheduler/placement/kueue_fit.h: how many pods and slices of a request fit in every domain of a
// Kueue Topology, and the order in which Kueue picks domains.
//
// One placement attempt's state over a KueueDomainTree, as Kueue's TAS flavor snapshot keeps it
// (kubernetes-sigs/kueue, tas_flavor_snapshot.go: fillInCounts, findLevelWithFitDomains,
// updateCountsToMinimum). Per domain: pods that fit (`state`), whole slices (`slice_state`), both
// again with the group's leader placed there (`*_with_leader`), and whether the leader fits
// (`leader_state`). Leaves count pods from their free capacity; inner domains sum their children
// in units of the slice layer below them. BestFit (most slices first, then fewest pods, then the
// tightest domain that still holds the rest) serves required and preferred requests;
// LeastFreeCapacity (fewest slices first) serves unconstrained ones under TASProfileMixed. Ties go
// by the domain's values.
//
//   KueueFitState fit(tree, gates, "default");
//   fit.request = {.count = 4, .requested_level = 1, .slice_level = 2, .required = true};
//   fit.fill_in_counts(requests, /*leader_requests=*/nullptr, assumed, pod_set);
//   auto [level, domains, reason] = fit.find_level_with_fit_domains(fit.request.requested_level);
//   domains = fit.update_counts_to_minimum(domains, 4, 0, 1, false, true);
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "scheduler/placement/kueue_failure_messages.h"
#include "scheduler/placement/kueue_pod_set.h"
#include "scheduler/placement/kueue_snapshot.h"

namespace hypertopo::scheduler {

using KueueAmounts = std::map<std::string, std::int64_t>;

// The request as the counts see it, resolved against the Topology's levels.
struct KueueFitRequest {
  std::int32_t count = 0;
  std::int32_t leader_count = 0;  // 0 or 1: a leader pod set placed with the workers
  std::int32_t slice_size = 1;
  int requested_level = 0;
  int slice_level = 0;
  bool required = false;
  bool unconstrained = false;
  std::map<int, std::int32_t> slice_size_at_level;  // the inner slice layers' sizes, by level
  std::vector<KueueSliceLayer> multi_layer;         // set when there are inner slice layers
};

class KueueFitState {
 public:
  struct Domain {
    int origin = 0;  // the tree's domain this one counts for (a clone keeps its origin)
    int parent = -1;
    std::vector<int> children;
    std::int32_t state = 0, state_with_leader = 0, slice_state = 0, slice_state_with_leader = 0,
                 leader_state = 0;
  };

  KueueFitState(const KueueDomainTree& tree, const KueueFeatureGates& gates, std::string topology_name);

  const KueueDomainTree& tree;
  const KueueFeatureGates& gates;
  std::string topology_name;
  std::vector<Domain> doms;  // the tree's domains first, clones appended
  KueueFitRequest request;
  KueueExclusions excluded;

  Domain& at(int d) { return doms[static_cast<std::size_t>(d)]; }
  const Domain& at(int d) const { return doms[static_cast<std::size_t>(d)]; }
  const std::vector<std::string>& values(int d) const { return tree.values(at(d).origin); }
  bool values_less(int a, int b) const { return values(a) < values(b); }

  bool least_free_capacity(bool unconstrained) const { return unconstrained && gates.profile_mixed; }
  bool best_fit(bool unconstrained) const { return !least_free_capacity(unconstrained); }

  std::vector<int> sorted(std::vector<int> list, bool unconstrained);
  std::vector<int> sorted_with_leader(std::vector<int> list, bool unconstrained);
  // The first domain from `from` on with the lowest count >= needed; list[from] when none reaches it.
  int best_fit_pods(const std::vector<int>& list, std::size_t from, std::int32_t needed,
                    std::int32_t leaders);
  int best_fit_slices(const std::vector<int>& list, std::size_t from, std::int32_t needed,
                      std::int32_t leaders);

  // Counts pods per leaf (minus `assumed` usage of earlier pod sets, by domain id) and sums them up.
  void fill_in_counts(const KueueAmounts& requests, const KueueAmounts* leader_requests,
                      const std::map<std::string, KueueAmounts>& assumed, const KueuePodSet& pod_set);
  // Recomputes the counts of `d`'s subtree from its leaves; `inner` rounds children down to the
  // inner slice layer's size.
  void fill_helper(int d, std::int32_t size, int slice_level, int level,
                   const std::map<int, std::int32_t>* inner, bool leader_required);

  // The domains at `search_level` (or above, for a preferred request) that hold the request, or
  // Kueue's reason; the level actually used.
  std::tuple<int, std::vector<int>, std::string> find_level_with_fit_domains(int search_level);
  // Trims the chosen domains' counts to what `count` pods (`leaders` leaders) need, in order.
  std::vector<int> update_counts_to_minimum(const std::vector<int>& list, std::int32_t count,
                                            std::int32_t leaders, std::int32_t size, bool unconstrained,
                                            bool slices);
  std::vector<int> lower_level(const std::vector<int>& list) const;

 private:
  std::string not_fit(int search_level, std::int32_t fit, std::int32_t total);
  std::int32_t count_slices_in_subtree(int d, int current, int target, std::int32_t size);
};

}  // namespace hypertopo::scheduler
