#include "scheduler/placement/kueue_balanced_placement.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "scheduler/placement/kueue_failure_messages.h"

namespace hypertopo::scheduler {
namespace {

using Domain = KueueFitState::Domain;

// What the greedy pass (fullest domains first) needs to hold the request.
struct Greedy {
  bool fits = false;
  std::int32_t selected = 0;
  int last_with_leader = -1;
  int last = -1;
};

Greedy evaluate_greedy(KueueFitState& fit, const std::vector<int>& list, std::int32_t slice_count,
                       std::int32_t leaders) {
  Greedy g;
  std::int32_t remaining_slices = slice_count;
  std::int32_t remaining_leaders = leaders;
  std::vector<int> without_leader;
  if (leaders > 0) {
    std::vector<int> with_leader = fit.sorted_with_leader(list, false);
    std::size_t idx = 0;
    for (; remaining_leaders > 0 && idx < with_leader.size() && fit.at(with_leader[idx]).leader_state > 0;
         ++idx) {
      g.selected++;
      g.last_with_leader = with_leader[idx];
      remaining_leaders -= fit.at(with_leader[idx]).leader_state;
      remaining_slices -= fit.at(with_leader[idx]).slice_state_with_leader;
    }
    without_leader =
        fit.sorted(std::vector<int>(with_leader.begin() + static_cast<long>(idx), with_leader.end()), false);
  } else {
    without_leader = fit.sorted(list, false);
  }
  if (remaining_leaders > 0) return Greedy{};
  for (std::size_t idx = 0;
       remaining_slices > 0 && idx < without_leader.size() && fit.at(without_leader[idx]).slice_state > 0;
       ++idx) {
    g.selected++;
    g.last = without_leader[idx];
    remaining_slices -= fit.at(without_leader[idx]).slice_state;
  }
  if (remaining_slices > 0) return Greedy{};
  g.fits = true;
  return g;
}

std::int32_t threshold_value(KueueFitState& fit, std::int32_t slice_count, const Greedy& g) {
  std::int32_t threshold = slice_count / g.selected;
  if (g.last_with_leader >= 0)
    threshold = std::min(threshold, fit.at(g.last_with_leader).slice_state_with_leader);
  if (g.last >= 0) threshold = std::min(threshold, fit.at(g.last).slice_state);
  return threshold;
}

double entropy(KueueFitState& fit, const std::vector<int>& list) {
  if (list.empty()) return 0.0;
  std::int64_t total = 0;
  for (int d : list) total += fit.at(d).state;
  if (total == 0) return 0.0;
  double e = 0.0;
  for (int d : list) {
    if (fit.at(d).state > 0) {
      double p = static_cast<double>(fit.at(d).state) / static_cast<double>(total);
      e += -p * std::log2(p);
    }
  }
  return e;
}

std::vector<int> select_optimal_domain_set(KueueFitState& fit, const std::vector<int>& list,
                                           std::int32_t slice_count, std::int32_t leaders, std::int32_t size,
                                           bool by_entropy) {
  Greedy g = evaluate_greedy(fit, list, slice_count, leaders);
  if (!g.fits) return {};
  std::vector<int> ordered = list;
  if (by_entropy) {
    std::vector<double> ent(fit.doms.size(), 0.0);
    for (int d : ordered) ent[static_cast<std::size_t>(d)] = entropy(fit, fit.at(d).children);
    std::sort(ordered.begin(), ordered.end(), [&](int a, int b) {
      if (fit.at(a).leader_state != fit.at(b).leader_state)
        return fit.at(a).leader_state > fit.at(b).leader_state;
      if (fit.at(a).slice_state_with_leader != fit.at(b).slice_state_with_leader) {
        return fit.at(a).slice_state_with_leader > fit.at(b).slice_state_with_leader;
      }
      double ea = ent[static_cast<std::size_t>(a)], eb = ent[static_cast<std::size_t>(b)];
      if (ea != eb) return ea > eb;
      return fit.values_less(a, b);
    });
  } else {
    std::sort(ordered.begin(), ordered.end(), [&](int a, int b) { return fit.values_less(a, b); });
  }
  const auto optimal = static_cast<std::size_t>(g.selected);
  // placements[i][leaders_left][pods_left] = domains chosen, using i domains.
  std::vector<std::map<std::int32_t, std::map<std::int32_t, std::vector<int>>>> placements(optimal + 1);
  placements[0][leaders][slice_count * size] = {};
  for (int d : ordered) {
    const Domain& dom = fit.at(d);
    for (std::size_t i = optimal; i > 0; --i) {
      for (const auto& [before_leader, by_pods] : placements[i - 1]) {
        for (const auto& [before_pods, placement] : by_pods) {
          if (before_leader <= 0 && before_pods <= 0) continue;
          std::vector<int> next = placement;
          next.push_back(d);
          if (before_leader > 0 && dom.leader_state > 0) {
            placements[i][before_leader - dom.leader_state].try_emplace(before_pods - dom.state_with_leader,
                                                                        next);
          }
          if (dom.slice_state > 0) placements[i][before_leader].try_emplace(before_pods - dom.state, next);
        }
      }
    }
  }
  auto it = placements[optimal].find(0);
  if (it == placements[optimal].end()) return {};
  bool found = false;
  std::int32_t best = 0;
  std::vector<int> best_placement;
  for (const auto& [left, placement] : it->second) {
    if (left <= 0 && (!found || left > best)) {
      found = true;
      best = left;
      best_placement = placement;
    }
  }
  return best_placement;
}

std::pair<std::vector<int>, std::string> place_balanced(KueueFitState& fit, const std::vector<int>& list,
                                                        std::int32_t slice_count, std::int32_t leaders,
                                                        std::int32_t size, std::int32_t threshold) {
  std::vector<int> result = select_optimal_domain_set(fit, list, slice_count, leaders, size, false);
  if (result.empty()) return {{}, kKueueBalancedNoDomainSet};
  if (slice_count < static_cast<std::int32_t>(result.size()) * threshold)
    return {{}, kKueueBalancedBelowThreshold};
  result = fit.sorted_with_leader(result, false);
  std::int32_t extra_left = slice_count - static_cast<std::int32_t>(result.size()) * threshold;
  std::int32_t leaders_left = leaders;
  for (int d : result) {
    Domain& dom = fit.at(d);
    std::int32_t take = 0;
    if (leaders_left > 0) {
      take = std::min(dom.slice_state_with_leader - threshold, extra_left);
      dom.leader_state = 1;
      leaders_left--;
    } else if (extra_left > 0) {
      take = std::min(dom.slice_state - threshold, extra_left);
      dom.leader_state = 0;
    } else {
      dom.leader_state = 0;
    }
    dom.state = (threshold + take) * size;
    dom.slice_state = threshold + take;
    dom.slice_state_with_leader = dom.slice_state;
    dom.state_with_leader = dom.state - dom.leader_state;
    extra_left -= take;
  }
  if (extra_left > 0 || leaders_left > 0) return {{}, kKueueBalancedNotAllPlaced};
  return {result, ""};
}

int clone(KueueFitState& fit, int d, int parent) {
  Domain copy = fit.at(d);
  const int id = static_cast<int>(fit.doms.size());
  fit.doms.push_back(copy);
  std::vector<int> kids;
  for (int c : copy.children) kids.push_back(clone(fit, c, id));
  fit.at(id).children = std::move(kids);
  fit.at(id).parent = parent;
  return id;
}

std::vector<int> clone_all(KueueFitState& fit, const std::vector<int>& list) {
  std::vector<int> out;
  for (int d : list) out.push_back(clone(fit, d, -1));
  return out;
}

void clear_state(KueueFitState& fit, int d) {
  Domain& dom = fit.at(d);
  dom.state = dom.state_with_leader = dom.slice_state = dom.slice_state_with_leader = dom.leader_state = 0;
  for (int c : std::vector<int>(dom.children)) clear_state(fit, c);
}

void clear_leader_capacity(KueueFitState& fit, int d) {
  Domain& dom = fit.at(d);
  dom.state_with_leader = dom.slice_state_with_leader = dom.leader_state = 0;
  for (int c : std::vector<int>(dom.children)) clear_leader_capacity(fit, c);
}

void prune_node(KueueFitState& fit, int d, std::int32_t threshold, bool leader_required) {
  if (fit.at(d).slice_state < threshold) {
    clear_state(fit, d);
    return;
  }
  if (leader_required && fit.at(d).leader_state > 0 && fit.at(d).slice_state_with_leader < threshold) {
    clear_leader_capacity(fit, d);
  }
}

void prune_below_threshold(KueueFitState& fit, const std::vector<int>& list, std::int32_t threshold,
                           int level, bool leader_required) {
  for (int d : list) {
    for (int c : std::vector<int>(fit.at(d).children)) prune_node(fit, c, threshold, leader_required);
  }
  for (int d : list) {
    fit.fill_helper(d, fit.request.slice_size, fit.request.slice_level, level, nullptr, leader_required);
    prune_node(fit, d, threshold, leader_required);
  }
}

// The sibling group (children of one domain above the requested level) with the highest threshold,
// fewest domains on a tie; its domains are pruned clones.
std::pair<std::vector<int>, std::int32_t> best_domains_for_balanced(KueueFitState& fit) {
  const KueueFitRequest& req = fit.request;
  const std::int32_t slice_count = req.count / req.slice_size;
  std::vector<std::vector<int>> groups;
  if (req.requested_level == 0) {
    groups.push_back(fit.tree.level_domains(0));
  } else {
    std::vector<int> higher = fit.tree.level_domains(req.requested_level - 1);
    std::sort(higher.begin(), higher.end(), [&](int a, int b) { return fit.values_less(a, b); });
    for (int h : higher) groups.push_back(fit.at(h).children);
  }
  std::int32_t best_threshold = 0;
  std::int32_t best_count = 0;
  std::vector<int> best;
  for (const auto& siblings : groups) {
    std::vector<int> candidates = clone_all(fit, siblings);
    std::vector<int> lower = req.requested_level < req.slice_level ? fit.lower_level(candidates) : candidates;
    Greedy g = evaluate_greedy(fit, lower, slice_count, req.leader_count);
    if (!g.fits) continue;
    std::int32_t threshold = threshold_value(fit, slice_count, g);
    std::int32_t with_reservation = threshold;
    if (req.leader_count > 0 && g.last >= 0) {
      with_reservation = std::min(threshold, fit.at(g.last).slice_state_with_leader);
    }
    if (threshold < best_threshold) continue;
    prune_below_threshold(fit, candidates, threshold, req.requested_level, req.leader_count > 0);
    Greedy after = evaluate_greedy(fit, candidates, slice_count, req.leader_count);
    if (!after.fits && with_reservation < threshold) {
      if (with_reservation <= 0 || with_reservation < best_threshold) continue;
      threshold = with_reservation;
      candidates = clone_all(fit, siblings);
      prune_below_threshold(fit, candidates, threshold, req.requested_level, req.leader_count > 0);
      after = evaluate_greedy(fit, candidates, slice_count, req.leader_count);
    }
    if (!after.fits) continue;
    if (threshold > best_threshold || (threshold == best_threshold && after.selected < best_count)) {
      best_threshold = threshold;
      best_count = after.selected;
      best = candidates;
    }
  }
  return {best, best_threshold};
}

std::tuple<std::vector<int>, int, std::string> apply_balanced(KueueFitState& fit, std::int32_t threshold,
                                                              std::vector<int> domains) {
  const KueueFitRequest& req = fit.request;
  const std::int32_t slice_count = req.count / req.slice_size;
  int fit_level;
  if (req.requested_level < req.slice_level) {
    std::vector<int> chosen =
        select_optimal_domain_set(fit, domains, slice_count, req.leader_count, req.slice_size, true);
    if (chosen.empty()) return {{}, 0, kKueueBalancedNoDomainSet};
    domains = fit.lower_level(chosen);
    fit_level = req.requested_level + 1;
  } else {
    fit_level = req.requested_level;
  }
  auto [placed, reason] =
      place_balanced(fit, domains, slice_count, req.leader_count, req.slice_size, threshold);
  if (!reason.empty()) return {{}, 0, reason};
  return {placed, fit_level, ""};
}

}  // namespace

std::optional<KueueBalancedPlacement> kueue_place_balanced(KueueFitState& fit) {
  auto [candidates, threshold] = best_domains_for_balanced(fit);
  if (threshold <= 0) return std::nullopt;
  auto [placed, level, reason] = apply_balanced(fit, threshold, candidates);
  if (!reason.empty()) return std::nullopt;  // Kueue falls back to BestFit
  return KueueBalancedPlacement{placed, level};
}

}  // namespace hypertopo::scheduler
