#include "scheduler/placement/kueue_leader_workers.h"

#include <algorithm>
#include <map>
#include <string>

namespace hypertopo::scheduler {

std::vector<KueuePodSetGroup> kueue_pod_set_groups(const std::vector<KueuePodSet>& pod_sets) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < pod_sets.size(); ++i) {
    std::string key = pod_sets[i].group ? "g:" + *pod_sets[i].group : "i:" + std::to_string(i);
    if (!groups.contains(key)) order.push_back(key);
    groups[key].push_back(i);
  }
  std::vector<KueuePodSetGroup> out;
  for (const auto& key : order) {
    KueuePodSetGroup group;
    group.members = groups[key];
    group.workers = &pod_sets[group.members[0]];
    if (group.members.size() > 1) {
      group.leader = &pod_sets[group.members[1]];
      if (group.leader->count > group.workers->count) std::swap(group.leader, group.workers);
    }
    out.push_back(std::move(group));
  }
  return out;
}

void kueue_put_cheapest_leader_first(KueueFitState& fit, std::vector<int>& list, bool slices) {
  auto loss = [&](int x) {
    return slices ? fit.at(x).slice_state - fit.at(x).slice_state_with_leader
                  : fit.at(x).state - fit.at(x).state_with_leader;
  };
  int pick = -1;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (fit.at(list[i]).leader_state > 0 &&
        (pick < 0 || loss(list[i]) < loss(list[static_cast<std::size_t>(pick)]))) {
      pick = static_cast<int>(i);
    }
  }
  if (pick > 0) std::rotate(list.begin(), list.begin() + pick, list.begin() + pick + 1);
}

std::pair<int, bool> kueue_consume_with_leaders(KueueFitState& fit, int d, const std::vector<int>& list,
                                                std::size_t from, std::int32_t& remaining,
                                                std::int32_t& remaining_leaders, bool unc, std::int32_t size,
                                                bool slices) {
  auto with_leader = [&](int x) -> std::int32_t& {
    return slices ? fit.at(x).slice_state_with_leader : fit.at(x).state_with_leader;
  };
  auto primary = [&](int x) -> std::int32_t& { return slices ? fit.at(x).slice_state : fit.at(x).state; };
  if (fit.best_fit(unc) && with_leader(d) >= remaining && fit.at(d).leader_state >= remaining_leaders) {
    d = slices ? fit.best_fit_slices(list, from, remaining, remaining_leaders)
               : fit.best_fit_pods(list, from, remaining, remaining_leaders);
  }
  if (with_leader(d) >= remaining && fit.at(d).leader_state >= remaining_leaders) {
    primary(d) = remaining;
    fit.at(d).leader_state = remaining_leaders;
    fit.at(d).state = remaining * size;
    return {d, true};
  }
  if (slices) {
    if (with_leader(d) > remaining) with_leader(d) = remaining;
    if (fit.at(d).leader_state > remaining_leaders) fit.at(d).leader_state = remaining_leaders;
    fit.at(d).state = with_leader(d) * size;
    remaining_leaders -= fit.at(d).leader_state;
    remaining -= with_leader(d);
    return {d, false};
  }
  // Clamp before consuming so the leader placed here stays recorded on this domain.
  if (with_leader(d) > remaining) with_leader(d) = remaining;
  if (fit.at(d).leader_state > remaining_leaders) fit.at(d).leader_state = remaining_leaders;
  remaining -= with_leader(d);
  remaining_leaders -= fit.at(d).leader_state;
  return {d, false};
}

}  // namespace hypertopo::scheduler
