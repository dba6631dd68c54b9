#include "scheduler/placement/kueue_fit.h"

#include <algorithm>
#include <limits>

#include "scheduler/placement/kueue_leader_workers.h"

namespace hypertopo::scheduler {
namespace {

constexpr std::int32_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();

// How many times `request` fits into `capacity`, and the resource that limits it (ties broken by
// name, as Kueue does for deterministic messages).
std::pair<std::int32_t, std::string> count_in(const KueueAmounts& request, const KueueAmounts& capacity) {
  bool have = false;
  std::int32_t result = 0;
  std::string limiting;
  for (const auto& [name, value] : request) {
    auto it = capacity.find(name);
    if (it == capacity.end() && value != 0) return {0, name};
    std::int64_t count = kMaxInt32;
    if (value != 0) {
      count = std::clamp<std::int64_t>(it->second / value, 0, kMaxInt32);
    }
    if (!have || count < result || (count == result && name < limiting)) {
      have = true;
      result = static_cast<std::int32_t>(count);
      limiting = name;
    }
  }
  return {have ? result : 0, limiting};
}

template <typename Field>
int best_fit_by(KueueFitState& fit, const std::vector<int>& list, std::size_t from, std::int32_t needed,
                Field field) {
  int best = list[from];
  std::int32_t best_value = field(fit.at(best));
  for (std::size_t i = from; i < list.size(); ++i) {
    std::int32_t v = field(fit.at(list[i]));
    if (v >= needed && v < best_value) {
      best = list[i];
      best_value = v;
    }
  }
  return best;
}

}  // namespace

KueueFitState::KueueFitState(const KueueDomainTree& t, const KueueFeatureGates& g, std::string name)
    : tree(t), gates(g), topology_name(std::move(name)) {
  doms.resize(tree.domain_count());
  for (std::size_t d = 0; d < doms.size(); ++d) {
    doms[d].origin = static_cast<int>(d);
    doms[d].parent = tree.parent(static_cast<int>(d));
    doms[d].children = tree.children(static_cast<int>(d));
  }
}

std::vector<int> KueueFitState::sorted(std::vector<int> list, bool unc) {
  const bool lfc = least_free_capacity(unc);
  std::sort(list.begin(), list.end(), [&](int a, int b) {
    const Domain& x = at(a);
    const Domain& y = at(b);
    if (x.slice_state != y.slice_state)
      return lfc ? x.slice_state < y.slice_state : x.slice_state > y.slice_state;
    if (x.state != y.state) return x.state < y.state;
    return values_less(a, b);
  });
  return list;
}

std::vector<int> KueueFitState::sorted_with_leader(std::vector<int> list, bool unc) {
  const bool lfc = least_free_capacity(unc);
  std::sort(list.begin(), list.end(), [&](int a, int b) {
    const Domain& x = at(a);
    const Domain& y = at(b);
    if (x.leader_state != y.leader_state) return x.leader_state > y.leader_state;
    if (x.slice_state_with_leader != y.slice_state_with_leader) {
      return lfc ? x.slice_state_with_leader < y.slice_state_with_leader
                 : x.slice_state_with_leader > y.slice_state_with_leader;
    }
    if (x.state_with_leader != y.state_with_leader) return x.state_with_leader < y.state_with_leader;
    return values_less(a, b);
  });
  return list;
}

int KueueFitState::best_fit_pods(const std::vector<int>& list, std::size_t from, std::int32_t needed,
                                 std::int32_t leaders) {
  if (leaders > 0)
    return best_fit_by(*this, list, from, needed, [](const Domain& d) { return d.state_with_leader; });
  return best_fit_by(*this, list, from, needed, [](const Domain& d) { return d.state; });
}

int KueueFitState::best_fit_slices(const std::vector<int>& list, std::size_t from, std::int32_t needed,
                                   std::int32_t leaders) {
  if (leaders > 0) {
    return best_fit_by(*this, list, from, needed, [](const Domain& d) { return d.slice_state_with_leader; });
  }
  return best_fit_by(*this, list, from, needed, [](const Domain& d) { return d.slice_state; });
}

void KueueFitState::fill_helper(int d, std::int32_t size, int slice_lvl, int level,
                                const std::map<int, std::int32_t>* inner, bool leader_required) {
  Domain& dom = at(d);
  if (dom.children.empty()) {
    if (level == slice_lvl) {
      dom.slice_state = dom.state / size;
      dom.slice_state_with_leader = dom.state_with_leader / size;
    }
    return;
  }
  std::int32_t children_capacity = 0, slice_capacity = 0, leader_state = 0;
  bool contributor = false;
  std::int32_t min_state_diff = kMaxInt32, min_slice_diff = kMaxInt32;
  const int child_level = level + 1;
  std::int32_t inner_size = 0;
  if (inner != nullptr) {
    if (auto it = inner->find(child_level); it != inner->end()) inner_size = it->second;
  }
  const std::vector<int> kids = dom.children;
  for (int c : kids) {
    fill_helper(c, size, slice_lvl, child_level, inner, leader_required);
    const Domain& child = at(c);
    std::int32_t child_state = child.state;
    std::int32_t child_state_with_leader = child.state_with_leader;
    if (inner_size > 0) {
      child_state = (child.state / inner_size) * inner_size;
      child_state_with_leader = (child.state_with_leader / inner_size) * inner_size;
    }
    children_capacity += child_state;
    slice_capacity += child.slice_state;
    if (!leader_required || child.leader_state > 0) {
      contributor = true;
      min_state_diff = std::min(child_state - child_state_with_leader, min_state_diff);
      min_slice_diff = std::min(child.slice_state - child.slice_state_with_leader, min_slice_diff);
    }
    leader_state = std::max(child.leader_state, leader_state);
  }
  Domain& self = at(d);
  self.state = children_capacity;
  std::int32_t slice_with_leader = 0;
  if (contributor) {
    self.state_with_leader = children_capacity - min_state_diff;
    slice_with_leader = slice_capacity - min_slice_diff;
  } else {
    self.state_with_leader = 0;
  }
  self.leader_state = leader_state;
  if (level == slice_lvl) {
    slice_capacity = self.state / size;
    slice_with_leader = self.state_with_leader / size;
  }
  self.slice_state = slice_capacity;
  self.slice_state_with_leader = slice_with_leader;
}

void KueueFitState::fill_in_counts(const KueueAmounts& requests, const KueueAmounts* leader_requests,
                                   const std::map<std::string, KueueAmounts>& assumed,
                                   const KueuePodSet& ps) {
  for (auto& d : doms) {
    d.state = d.state_with_leader = d.slice_state = d.slice_state_with_leader = d.leader_state = 0;
  }
  for (const auto& leaf : tree.leaves()) {
    excluded.total_nodes++;
    if (tree.lowest_is_node()) {
      const NodeSpec& node = tree.node(leaf);
      const NodeTaint* untolerated = nullptr;
      for (const auto& taint : node.taints) {
        if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
        bool tolerated = std::any_of(ps.tolerations.begin(), ps.tolerations.end(),
                                     [&](const Toleration& t) { return t.tolerates(taint); });
        if (!tolerated) {
          untolerated = &taint;
          break;
        }
      }
      if (untolerated != nullptr) {
        excluded.taints[kueue_taint_string(*untolerated)]++;
        continue;
      }
      bool selected = true;
      for (const auto& [k, v] : ps.node_selector) {
        auto it = node.labels.find(k);
        if (it == node.labels.end() || it->second != v) selected = false;
      }
      if (!selected) {
        excluded.node_selector++;
        continue;
      }
    }
    KueueAmounts remaining = leaf.free;
    if (auto it = assumed.find(tree.id(leaf.domain)); it != assumed.end()) {
      for (const auto& [r, v] : it->second) remaining[r] -= v;
    }
    Domain& dom = at(leaf.domain);
    auto [fit, limiting] = count_in(requests, remaining);
    dom.state = fit;
    if (fit == 0 && !limiting.empty()) excluded.resources[limiting]++;
    dom.leader_state = 0;
    if (leader_requests != nullptr && count_in(*leader_requests, remaining).first > 0) {
      dom.leader_state = 1;
      for (const auto& [r, v] : *leader_requests) remaining[r] -= v;
    }
    dom.state_with_leader = count_in(requests, remaining).first;
  }
  for (int root : tree.roots()) {
    fill_helper(root, request.slice_size, request.slice_level, 0, &request.slice_size_at_level,
                request.leader_count > 0);
  }
}

std::int32_t KueueFitState::count_slices_in_subtree(int d, int current, int target, std::int32_t size) {
  if (current == target) return at(d).state / size;
  std::int32_t total = 0;
  for (int c : at(d).children) total += count_slices_in_subtree(c, current + 1, target, size);
  return total;
}

std::string KueueFitState::not_fit(int search_level, std::int32_t fit, std::int32_t total) {
  if (request.multi_layer.empty()) {
    return kueue_not_fit_message(topology_name, fit, total, request.slice_size, excluded);
  }
  // Several slice layers: Kueue reports each layer's count in the domain holding the most slices.
  int best = -1;
  for (int d : tree.level_domains(search_level)) {
    if (best < 0 || at(d).slice_state > at(best).slice_state ||
        (at(d).slice_state == at(best).slice_state && tree.id(d) < tree.id(best))) {
      best = d;
    }
  }
  if (best < 0) return kueue_multi_layer_message(topology_name, std::nullopt, excluded);
  std::vector<KueueLayerFit> layers;
  for (const auto& c : request.multi_layer) {
    int target = tree.level_of(c.topology);
    if (target < 0) continue;
    layers.push_back(KueueLayerFit{c.topology, count_slices_in_subtree(best, search_level, target, c.size),
                                   request.count / c.size});
  }
  return kueue_multi_layer_message(topology_name, layers, excluded);
}

std::tuple<int, std::vector<int>, std::string> KueueFitState::find_level_with_fit_domains(int search_level) {
  const bool unconstrained = request.unconstrained;
  const std::int32_t leader_count = request.leader_count;
  const auto& level_domains = tree.level_domains(search_level);
  if (level_domains.empty()) {
    return {0, {}, "no topology domains at level: " + tree.levels()[static_cast<std::size_t>(search_level)]};
  }
  std::vector<int> sorted_domains = sorted_with_leader(level_domains, unconstrained);
  int top = sorted_domains[0];
  const std::int32_t slice_count = request.count / request.slice_size;
  if (best_fit(unconstrained) && at(top).slice_state_with_leader >= slice_count &&
      at(top).leader_state >= leader_count) {
    top = best_fit_slices(sorted_domains, 0, slice_count, leader_count);
  }
  if (least_free_capacity(unconstrained)) {
    for (int candidate : sorted_domains) {
      if (at(candidate).slice_state_with_leader >= slice_count &&
          at(candidate).leader_state >= leader_count) {
        return {search_level, {candidate}, ""};
      }
    }
    if (request.required) {
      return {0, {}, not_fit(search_level, at(sorted_domains.back()).state, slice_count)};
    }
  }
  if (at(top).slice_state_with_leader < slice_count || at(top).leader_state < leader_count) {
    if (request.required) return {0, {}, not_fit(search_level, at(top).slice_state, slice_count)};
    if (search_level > 0 && !unconstrained) return find_level_with_fit_domains(search_level - 1);
    std::vector<int> results;
    std::int32_t remaining_slices = slice_count;
    std::int32_t remaining_leaders = leader_count;
    kueue_put_cheapest_leader_first(*this, sorted_domains, true);
    std::size_t idx = 0;
    for (; remaining_leaders > 0 && idx < sorted_domains.size() && at(sorted_domains[idx]).leader_state > 0;
         ++idx) {
      int d = sorted_domains[idx];
      if (best_fit(unconstrained) && at(d).slice_state_with_leader >= remaining_slices) {
        d = best_fit_slices(sorted_domains, idx, remaining_slices, remaining_leaders);
      }
      results.push_back(d);
      remaining_leaders -= at(d).leader_state;
      remaining_slices -= at(d).slice_state_with_leader;
    }
    if (remaining_leaders > 0) {
      return {0, {}, not_fit(search_level, leader_count - remaining_leaders, slice_count)};
    }
    std::vector<int> rest =
        sorted(std::vector<int>(sorted_domains.begin() + static_cast<long>(idx), sorted_domains.end()),
               unconstrained);
    for (std::size_t i = 0; remaining_slices > 0 && i < rest.size(); ++i) {
      int d = rest[i];
      if (best_fit(unconstrained) && at(d).slice_state >= remaining_slices) {
        d = best_fit_slices(rest, i, remaining_slices, 0);
      }
      results.push_back(d);
      remaining_slices -= at(d).slice_state;
    }
    if (remaining_slices > 0) {
      return {0, {}, not_fit(search_level, slice_count - remaining_slices, slice_count)};
    }
    return {search_level, results, ""};
  }
  return {search_level, {top}, ""};
}

std::vector<int> KueueFitState::update_counts_to_minimum(const std::vector<int>& list, std::int32_t cnt,
                                                         std::int32_t leaders, std::int32_t size, bool unc,
                                                         bool slices) {
  std::vector<int> result;
  std::int32_t remaining = slices ? cnt / size : cnt;
  std::int32_t remaining_leaders = leaders;
  std::vector<int> ordered = list;
  if (remaining_leaders > 0) kueue_put_cheapest_leader_first(*this, ordered, slices);
  const std::vector<int>& list_in_order = ordered;
  for (std::size_t i = 0; i < list_in_order.size(); ++i) {
    int d = list_in_order[i];
    if (remaining_leaders > 0) {
      auto [chosen, done] = kueue_consume_with_leaders(*this, d, list_in_order, i, remaining,
                                                       remaining_leaders, unc, size, slices);
      result.push_back(chosen);
      if (done) return result;
      continue;
    }
    if (slices) {
      if (best_fit(unc) && at(d).slice_state >= remaining)
        d = best_fit_slices(list_in_order, i, remaining, 0);
      at(d).leader_state = 0;
      if (at(d).slice_state >= remaining) {
        at(d).state = remaining * size;
        at(d).slice_state = remaining;
        result.push_back(d);
        return result;
      }
      at(d).state = at(d).slice_state * size;
      remaining -= at(d).slice_state;
      result.push_back(d);
      continue;
    }
    if (best_fit(unc) && at(d).state >= remaining) d = best_fit_pods(list_in_order, i, remaining, 0);
    at(d).leader_state = 0;
    if (at(d).state >= remaining) {
      at(d).state = remaining;
      result.push_back(d);
      return result;
    }
    remaining -= at(d).state;
    result.push_back(d);
  }
  return {};  // the counts promised more than the domains hold: Kueue logs and returns nothing
}

std::vector<int> KueueFitState::lower_level(const std::vector<int>& list) const {
  std::vector<int> out;
  for (int d : list) out.insert(out.end(), at(d).children.begin(), at(d).children.end());
  return out;
}

}  // namespace hypertopo::scheduler
