// scheduler/placement/kueue_balanced_placement.h: Kueue's balanced placement (feature gate
// TASBalancedPlacement) for preferred requests.
//
// Instead of packing the fullest domains first, Kueue looks for the fewest domains that hold the
// request (a greedy count), then spreads the slices evenly over them: every chosen domain gets at
// least a threshold number of slices (the request over the greedy count, capped by the last
// domain the greedy pass needed), domains below the threshold are pruned, and a dynamic program
// picks the set with the least waste. When it cannot, the caller falls back to BestFit, as Kueue
// does. Runs on the counts of a KueueFitState after fill_in_counts; clones the domains it prunes.
//
//   if (auto balanced = kueue_place_balanced(fit)) {
//     domains = balanced->domains;  // counts already set to the slices each takes
//     level = balanced->level;
//   }
#pragma once

#include <optional>
#include <vector>

#include "scheduler/placement/kueue_fit.h"

namespace hypertopo::scheduler {

struct KueueBalancedPlacement {
  std::vector<int> domains;  // in fit.doms, clones of the tree's domains
  int level = 0;             // the level those domains are at
};

// nullopt when no threshold > 0 exists or the balanced pass fails (the caller uses BestFit).
std::optional<KueueBalancedPlacement> kueue_place_balanced(KueueFitState& fit);

}  // namespace hypertopo::scheduler
