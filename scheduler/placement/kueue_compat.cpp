#include "scheduler/placement/kueue_compat.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <unordered_map>

namespace hypertopo::scheduler {
namespace {

using Amounts = std::map<std::string, std::int64_t>;
constexpr std::int32_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();

std::string join(const std::vector<std::string>& values, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to; ++i) {
    if (i > from) out += ',';
    out += values[i];
  }
  return out;
}

// How many times `request` fits into `capacity`, and the resource that limits it (ties broken by
// name, as Kueue does for deterministic messages).
std::pair<std::int32_t, std::string> count_in(const Amounts& request, const Amounts& capacity) {
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

std::string taint_string(const NodeTaint& t) {
  if (t.effect.empty()) return t.value.empty() ? t.key : t.key + "=" + t.value + ":";
  return t.value.empty() ? t.key + ":" + t.effect : t.key + "=" + t.value + ":" + t.effect;
}

// Go's %q for the plain label-ish strings that reach messages.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

struct ExclusionStats {
  int total_nodes = 0;
  int node_selector = 0;
  std::map<std::string, int> taints;
  std::map<std::string, int> resources;
  bool any() const { return node_selector > 0 || !taints.empty() || !resources.empty(); }
  std::string format() const {
    std::vector<std::string> reasons;
    if (node_selector > 0) reasons.push_back("nodeSelector: " + std::to_string(node_selector));
    for (const auto& [t, n] : taints) reasons.push_back("taint " + quoted(t) + ": " + std::to_string(n));
    for (const auto& [r, n] : resources)
      reasons.push_back("resource " + quoted(r) + ": " + std::to_string(n));
    std::sort(reasons.begin(), reasons.end());
    std::string out;
    for (const auto& r : reasons) out += (out.empty() ? "" : ", ") + r;
    return out;
  }
};

}  // namespace

KueueTopologySnapshot::KueueTopologySnapshot(std::vector<std::string> levels,
                                             const std::vector<NodeSpec>& nodes,
                                             const std::vector<BoundPod>& non_tas_pods,
                                             const std::map<std::string, std::string>& flavor_labels,
                                             std::string topology_name)
    : levels_(std::move(levels)), topology_name_(std::move(topology_name)) {
  lowest_is_node_ = !levels_.empty() && levels_.back() == kHostnameLabel;
  per_level_.resize(levels_.size());
  if (levels_.empty()) return;
  node_copies_.reserve(nodes.size());
  for (const auto& n : nodes) {
    if (!n.ready || n.unschedulable) continue;
    bool keep = true;
    for (const auto& [k, v] : flavor_labels) {
      auto it = n.labels.find(k);
      if (it == n.labels.end() || it->second != v) keep = false;
    }
    for (const auto& level : levels_) {
      if (!n.labels.contains(level)) keep = false;
    }
    if (keep) node_copies_.push_back(n);
  }
  std::unordered_map<std::string, int> by_id;
  std::unordered_map<std::string, int> leaf_of_node;
  auto add_domain = [&](std::vector<std::string> values, std::string id) {
    int d = static_cast<int>(values_.size());
    per_level_[values.size() - 1].push_back(d);
    values_.push_back(std::move(values));
    ids_.push_back(id);
    parents_.push_back(-1);
    children_.emplace_back();
    by_id.emplace(std::move(id), d);
    return d;
  };
  for (const auto& n : node_copies_) {
    std::vector<std::string> values;
    for (const auto& level : levels_) values.push_back(n.labels.at(level));
    std::string id = lowest_is_node_ ? values.back() : join(values, 0, values.size());
    auto found = by_id.find(id);
    int leaf_index;
    if (found == by_id.end()) {
      int d = add_domain(values, id);
      leaf_index = static_cast<int>(leaves_.size());
      leaves_.push_back(LeafData{d, {}, &n});
    } else {
      leaf_index = -1;
      for (std::size_t l = 0; l < leaves_.size(); ++l) {
        if (leaves_[l].domain == found->second) leaf_index = static_cast<int>(l);
      }
    }
    for (const auto& [r, v] : n.allocatable) leaves_[static_cast<std::size_t>(leaf_index)].free[r] += v;
    leaf_of_node[n.name] = leaf_index;
  }
  for (const auto& pod : non_tas_pods) {
    auto it = leaf_of_node.find(pod.node);
    if (it == leaf_of_node.end()) continue;
    auto& free = leaves_[static_cast<std::size_t>(it->second)].free;
    for (const auto& [r, v] : pod.requests) free[r] -= v;
    free["pods"] -= 1;
  }
  // Connect parents, creating the upper levels on the way.
  const std::size_t leaf_count = values_.size();
  for (std::size_t leaf = 0; leaf < leaf_count; ++leaf) {
    int child = static_cast<int>(leaf);
    while (values_[static_cast<std::size_t>(child)].size() > 1) {
      std::vector<std::string> parent_values(values_[static_cast<std::size_t>(child)].begin(),
                                             values_[static_cast<std::size_t>(child)].end() - 1);
      std::string parent_id = join(parent_values, 0, parent_values.size());
      auto it = by_id.find(parent_id);
      bool created = false;
      int parent;
      if (it == by_id.end()) {
        parent = add_domain(std::move(parent_values), parent_id);
        created = true;
      } else {
        parent = it->second;
      }
      parents_[static_cast<std::size_t>(child)] = parent;
      children_[static_cast<std::size_t>(parent)].push_back(child);
      if (!created) break;
      child = parent;
    }
    if (values_[static_cast<std::size_t>(child)].size() == 1 &&
        parents_[static_cast<std::size_t>(child)] < 0 &&
        std::find(roots_.begin(), roots_.end(), child) == roots_.end()) {
      roots_.push_back(child);
    }
  }
}

struct KueueTopologySnapshot::Run {
  struct Dom {
    int origin = 0;  // index into the snapshot's static arrays (values, id)
    int parent = -1;
    std::vector<int> children;
    std::int32_t state = 0, state_with_leader = 0, slice_state = 0, slice_state_with_leader = 0,
                 leader_state = 0;
  };

  const KueueTopologySnapshot& s;
  const KueueFeatureGates& gates;
  std::vector<Dom> doms;
  ExclusionStats stats;

  // Parameters of the request being placed.
  std::int32_t count = 0, leader_count = 0, slice_size = 1;
  int requested_level = 0, slice_level = 0;
  bool required = false, unconstrained = false;
  std::map<int, std::int32_t> slice_size_at_level;
  std::vector<KueueSliceLayer> multi_layer;

  Run(const KueueTopologySnapshot& snapshot, const KueueFeatureGates& g) : s(snapshot), gates(g) {
    doms.resize(s.values_.size());
    for (std::size_t d = 0; d < doms.size(); ++d) {
      doms[d].origin = static_cast<int>(d);
      doms[d].parent = s.parents_[d];
      doms[d].children = s.children_[d];
    }
  }

  const std::vector<std::string>& values(int d) const {
    return s.values_[static_cast<std::size_t>(doms[static_cast<std::size_t>(d)].origin)];
  }
  Dom& at(int d) { return doms[static_cast<std::size_t>(d)]; }
  int level_count() const { return static_cast<int>(s.levels_.size()); }

  bool least_free_capacity(bool unc) const { return unc && gates.profile_mixed; }
  bool best_fit(bool unc) const { return !least_free_capacity(unc); }

  int resolve(const std::string& key) const {
    auto it = std::find(s.levels_.begin(), s.levels_.end(), key);
    return it == s.levels_.end() ? -1 : static_cast<int>(it - s.levels_.begin());
  }

  bool values_less(int a, int b) const { return values(a) < values(b); }

  std::vector<int> sorted(std::vector<int> list, bool unc) {
    const bool lfc = least_free_capacity(unc);
    std::sort(list.begin(), list.end(), [&](int a, int b) {
      const Dom& x = at(a);
      const Dom& y = at(b);
      if (x.slice_state != y.slice_state)
        return lfc ? x.slice_state < y.slice_state : x.slice_state > y.slice_state;
      if (x.state != y.state) return x.state < y.state;
      return values_less(a, b);
    });
    return list;
  }

  std::vector<int> sorted_with_leader(std::vector<int> list, bool unc) {
    const bool lfc = least_free_capacity(unc);
    std::sort(list.begin(), list.end(), [&](int a, int b) {
      const Dom& x = at(a);
      const Dom& y = at(b);
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

  // The first domain with the lowest value >= needed; the first domain when none reaches it.
  template <typename Field>
  int best_fit_by(const std::vector<int>& list, std::size_t from, std::int32_t needed, Field field) {
    int best = list[from];
    std::int32_t best_value = field(at(best));
    for (std::size_t i = from; i < list.size(); ++i) {
      std::int32_t v = field(at(list[i]));
      if (v >= needed && v < best_value) {
        best = list[i];
        best_value = v;
      }
    }
    return best;
  }
  int best_fit_pods(const std::vector<int>& list, std::size_t from, std::int32_t needed,
                    std::int32_t leaders) {
    if (leaders > 0) return best_fit_by(list, from, needed, [](const Dom& d) { return d.state_with_leader; });
    return best_fit_by(list, from, needed, [](const Dom& d) { return d.state; });
  }
  int best_fit_slices(const std::vector<int>& list, std::size_t from, std::int32_t needed,
                      std::int32_t leaders) {
    if (leaders > 0)
      return best_fit_by(list, from, needed, [](const Dom& d) { return d.slice_state_with_leader; });
    return best_fit_by(list, from, needed, [](const Dom& d) { return d.slice_state; });
  }

  void fill_helper(int d, std::int32_t size, int slice_lvl, int level,
                   const std::map<int, std::int32_t>* inner, bool leader_required) {
    Dom& dom = at(d);
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
      const Dom& child = at(c);
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
    Dom& self = at(d);
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

  void fill_in_counts(const Amounts& requests, const Amounts* leader_requests,
                      const Amounts& assumed_usage_unused, const std::map<std::string, Amounts>& assumed,
                      const KueuePodSet& ps) {
    (void)assumed_usage_unused;
    for (auto& d : doms) {
      d.state = d.state_with_leader = d.slice_state = d.slice_state_with_leader = d.leader_state = 0;
    }
    for (const auto& leaf : s.leaves_) {
      stats.total_nodes++;
      if (s.lowest_is_node_) {
        const NodeSpec& node = *leaf.node;
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
          stats.taints[taint_string(*untolerated)]++;
          continue;
        }
        bool selected = true;
        for (const auto& [k, v] : ps.node_selector) {
          auto it = node.labels.find(k);
          if (it == node.labels.end() || it->second != v) selected = false;
        }
        if (!selected) {
          stats.node_selector++;
          continue;
        }
      }
      Amounts remaining = leaf.free;
      if (auto it = assumed.find(s.ids_[static_cast<std::size_t>(leaf.domain)]); it != assumed.end()) {
        for (const auto& [r, v] : it->second) remaining[r] -= v;
      }
      Dom& dom = at(leaf.domain);
      auto [fit, limiting] = count_in(requests, remaining);
      dom.state = fit;
      if (fit == 0 && !limiting.empty()) stats.resources[limiting]++;
      dom.leader_state = 0;
      if (leader_requests != nullptr && count_in(*leader_requests, remaining).first > 0) {
        dom.leader_state = 1;
        for (const auto& [r, v] : *leader_requests) remaining[r] -= v;
      }
      dom.state_with_leader = count_in(requests, remaining).first;
    }
    for (int root : s.roots_)
      fill_helper(root, slice_size, slice_level, 0, &slice_size_at_level, leader_count > 0);
  }

  std::string not_fit_message(std::int32_t fit, std::int32_t total, std::int32_t size) const {
    std::string unit = size == 1 ? "pod" : "slice";
    std::string out;
    if (fit == 0) {
      out = "topology " + quoted(s.topology_name_) + " doesn't allow to fit any of " + std::to_string(total) +
            " " + unit + "(s)";
    } else {
      out = "topology " + quoted(s.topology_name_) + " allows to fit only " + std::to_string(fit) +
            " out of " + std::to_string(total) + " " + unit + "(s)";
    }
    if (stats.any())
      out += ". Total nodes: " + std::to_string(stats.total_nodes) + "; excluded: " + stats.format();
    return out;
  }

  std::int32_t count_slices_in_subtree(int d, int current, int target, std::int32_t size) {
    if (current == target) return at(d).state / size;
    std::int32_t total = 0;
    for (int c : at(d).children) total += count_slices_in_subtree(c, current + 1, target, size);
    return total;
  }

  std::string multi_layer_message(int level) {
    std::string out = "topology " + quoted(s.topology_name_) + " doesn't allow to fit";
    int best = -1;
    for (int d : s.per_level_[static_cast<std::size_t>(level)]) {
      if (best < 0 || at(d).slice_state > at(best).slice_state ||
          (at(d).slice_state == at(best).slice_state &&
           s.ids_[static_cast<std::size_t>(d)] < s.ids_[static_cast<std::size_t>(best)])) {
        best = d;
      }
    }
    if (best < 0) return out;
    for (const auto& c : multi_layer) {
      int target = resolve(c.topology);
      if (target < 0) continue;
      out += "; " + std::to_string(count_slices_in_subtree(best, level, target, c.size)) + "/" +
             std::to_string(count / c.size) + " slice(s) fit on level " + c.topology;
    }
    if (stats.any())
      out += ". Total nodes: " + std::to_string(stats.total_nodes) + "; excluded: " + stats.format();
    return out;
  }

  std::string not_fit(int search_level, std::int32_t fit, std::int32_t total) {
    if (!multi_layer.empty()) return multi_layer_message(search_level);
    return not_fit_message(fit, total, slice_size);
  }

  std::tuple<int, std::vector<int>, std::string> find_level_with_fit_domains(int search_level) {
    const auto& level_domains = s.per_level_[static_cast<std::size_t>(search_level)];
    if (level_domains.empty()) {
      return {0, {}, "no topology domains at level: " + s.levels_[static_cast<std::size_t>(search_level)]};
    }
    std::vector<int> sorted_domains = sorted_with_leader(level_domains, unconstrained);
    int top = sorted_domains[0];
    const std::int32_t slice_count = count / slice_size;
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
      if (required) {
        return {0, {}, not_fit(search_level, at(sorted_domains.back()).state, slice_count)};
      }
    }
    if (at(top).slice_state_with_leader < slice_count || at(top).leader_state < leader_count) {
      if (required) return {0, {}, not_fit(search_level, at(top).slice_state, slice_count)};
      if (search_level > 0 && !unconstrained) return find_level_with_fit_domains(search_level - 1);
      std::vector<int> results;
      std::int32_t remaining_slices = slice_count;
      std::int32_t remaining_leaders = leader_count;
      put_cheapest_leader_first(sorted_domains, true);
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

  // Returns the chosen domain and whether the request is complete.
  std::pair<int, bool> consume_with_leaders(int d, const std::vector<int>& list, std::size_t from,
                                            std::int32_t& remaining, std::int32_t& remaining_leaders,
                                            bool unc, std::int32_t size, bool slices) {
    auto with_leader = [&](int x) -> std::int32_t& {
      return slices ? at(x).slice_state_with_leader : at(x).state_with_leader;
    };
    auto primary = [&](int x) -> std::int32_t& { return slices ? at(x).slice_state : at(x).state; };
    if (best_fit(unc) && with_leader(d) >= remaining && at(d).leader_state >= remaining_leaders) {
      d = slices ? best_fit_slices(list, from, remaining, remaining_leaders)
                 : best_fit_pods(list, from, remaining, remaining_leaders);
    }
    if (with_leader(d) >= remaining && at(d).leader_state >= remaining_leaders) {
      primary(d) = remaining;
      at(d).leader_state = remaining_leaders;
      at(d).state = remaining * size;
      return {d, true};
    }
    if (slices) {
      if (with_leader(d) > remaining) with_leader(d) = remaining;
      if (at(d).leader_state > remaining_leaders) at(d).leader_state = remaining_leaders;
      at(d).state = with_leader(d) * size;
      remaining_leaders -= at(d).leader_state;
      remaining -= with_leader(d);
      return {d, false};
    }
    // Clamp before consuming so the leader placed here stays recorded on this domain.
    if (with_leader(d) > remaining) with_leader(d) = remaining;
    if (at(d).leader_state > remaining_leaders) at(d).leader_state = remaining_leaders;
    remaining -= with_leader(d);
    remaining_leaders -= at(d).leader_state;
    return {d, false};
  }

  std::vector<int> update_counts_to_minimum(const std::vector<int>& list, std::int32_t cnt,
                                            std::int32_t leaders, std::int32_t size, bool unc, bool slices) {
    std::vector<int> result;
    std::int32_t remaining = slices ? cnt / size : cnt;
    std::int32_t remaining_leaders = leaders;
    std::vector<int> ordered = list;
    if (remaining_leaders > 0) put_cheapest_leader_first(ordered, slices);
    const std::vector<int>& list_in_order = ordered;
    for (std::size_t i = 0; i < list_in_order.size(); ++i) {
      int d = list_in_order[i];
      if (remaining_leaders > 0) {
        auto [chosen, done] =
            consume_with_leaders(d, list_in_order, i, remaining, remaining_leaders, unc, size, slices);
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

  // The leader goes where it costs the fewest workers (or slices); the others keep their order.
  void put_cheapest_leader_first(std::vector<int>& list, bool slices) {
    auto loss = [&](int x) {
      return slices ? at(x).slice_state - at(x).slice_state_with_leader
                    : at(x).state - at(x).state_with_leader;
    };
    int pick = -1;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (at(list[i]).leader_state > 0 &&
          (pick < 0 || loss(list[i]) < loss(list[static_cast<std::size_t>(pick)]))) {
        pick = static_cast<int>(i);
      }
    }
    if (pick > 0) std::rotate(list.begin(), list.begin() + pick, list.begin() + pick + 1);
  }

  std::vector<int> lower_level(const std::vector<int>& list) {
    std::vector<int> out;
    for (int d : list) out.insert(out.end(), at(d).children.begin(), at(d).children.end());
    return out;
  }

  // ---- balanced placement (TASBalancedPlacement) ----

  struct Greedy {
    bool fits = false;
    std::int32_t selected = 0;
    int last_with_leader = -1;
    int last = -1;
  };

  Greedy evaluate_greedy(const std::vector<int>& list, std::int32_t slice_count, std::int32_t leaders) {
    Greedy g;
    std::int32_t remaining_slices = slice_count;
    std::int32_t remaining_leaders = leaders;
    std::vector<int> without_leader;
    if (leaders > 0) {
      std::vector<int> with_leader = sorted_with_leader(list, false);
      std::size_t idx = 0;
      for (; remaining_leaders > 0 && idx < with_leader.size() && at(with_leader[idx]).leader_state > 0;
           ++idx) {
        g.selected++;
        g.last_with_leader = with_leader[idx];
        remaining_leaders -= at(with_leader[idx]).leader_state;
        remaining_slices -= at(with_leader[idx]).slice_state_with_leader;
      }
      without_leader =
          sorted(std::vector<int>(with_leader.begin() + static_cast<long>(idx), with_leader.end()), false);
    } else {
      without_leader = sorted(list, false);
    }
    if (remaining_leaders > 0) return Greedy{};
    for (std::size_t idx = 0;
         remaining_slices > 0 && idx < without_leader.size() && at(without_leader[idx]).slice_state > 0;
         ++idx) {
      g.selected++;
      g.last = without_leader[idx];
      remaining_slices -= at(without_leader[idx]).slice_state;
    }
    if (remaining_slices > 0) return Greedy{};
    g.fits = true;
    return g;
  }

  std::int32_t threshold_value(std::int32_t slice_count, const Greedy& g) {
    std::int32_t threshold = slice_count / g.selected;
    if (g.last_with_leader >= 0)
      threshold = std::min(threshold, at(g.last_with_leader).slice_state_with_leader);
    if (g.last >= 0) threshold = std::min(threshold, at(g.last).slice_state);
    return threshold;
  }

  double entropy(const std::vector<int>& list) {
    if (list.empty()) return 0.0;
    std::int64_t total = 0;
    for (int d : list) total += at(d).state;
    if (total == 0) return 0.0;
    double e = 0.0;
    for (int d : list) {
      if (at(d).state > 0) {
        double p = static_cast<double>(at(d).state) / static_cast<double>(total);
        e += -p * std::log2(p);
      }
    }
    return e;
  }

  std::vector<int> select_optimal_domain_set(const std::vector<int>& list, std::int32_t slice_count,
                                             std::int32_t leaders, std::int32_t size, bool by_entropy) {
    Greedy g = evaluate_greedy(list, slice_count, leaders);
    if (!g.fits) return {};
    std::vector<int> ordered = list;
    if (by_entropy) {
      std::vector<double> ent(doms.size(), 0.0);
      for (int d : ordered) ent[static_cast<std::size_t>(d)] = entropy(at(d).children);
      std::sort(ordered.begin(), ordered.end(), [&](int a, int b) {
        if (at(a).leader_state != at(b).leader_state) return at(a).leader_state > at(b).leader_state;
        if (at(a).slice_state_with_leader != at(b).slice_state_with_leader) {
          return at(a).slice_state_with_leader > at(b).slice_state_with_leader;
        }
        double ea = ent[static_cast<std::size_t>(a)], eb = ent[static_cast<std::size_t>(b)];
        if (ea != eb) return ea > eb;
        return values_less(a, b);
      });
    } else {
      std::sort(ordered.begin(), ordered.end(), [&](int a, int b) { return values_less(a, b); });
    }
    const auto optimal = static_cast<std::size_t>(g.selected);
    // placements[i][leaders_left][pods_left] = domains chosen, using i domains.
    std::vector<std::map<std::int32_t, std::map<std::int32_t, std::vector<int>>>> placements(optimal + 1);
    placements[0][leaders][slice_count * size] = {};
    for (int d : ordered) {
      const Dom& dom = at(d);
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

  std::pair<std::vector<int>, std::string> place_balanced(const std::vector<int>& list,
                                                          std::int32_t slice_count, std::int32_t leaders,
                                                          std::int32_t size, std::int32_t threshold) {
    std::vector<int> result = select_optimal_domain_set(list, slice_count, leaders, size, false);
    if (result.empty())
      return {{}, "TAS Balanced Placement: Cannot find optimal domain set to fit the request"};
    if (slice_count < static_cast<std::int32_t>(result.size()) * threshold) {
      return {{}, "TAS Balanced Placement: Not enough slices to meet the threshold"};
    }
    result = sorted_with_leader(result, false);
    std::int32_t extra_left = slice_count - static_cast<std::int32_t>(result.size()) * threshold;
    std::int32_t leaders_left = leaders;
    for (int d : result) {
      Dom& dom = at(d);
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
    if (extra_left > 0 || leaders_left > 0) {
      return {{}, "TAS Balanced Placement: Not all slices or leaders could be placed"};
    }
    return {result, ""};
  }

  int clone(int d, int parent) {
    Dom copy = at(d);
    const int id = static_cast<int>(doms.size());
    doms.push_back(copy);
    std::vector<int> kids;
    for (int c : copy.children) kids.push_back(clone(c, id));
    at(id).children = std::move(kids);
    at(id).parent = parent;
    return id;
  }

  std::vector<int> clone_all(const std::vector<int>& list) {
    std::vector<int> out;
    for (int d : list) out.push_back(clone(d, -1));
    return out;
  }

  void clear_state(int d) {
    Dom& dom = at(d);
    dom.state = dom.state_with_leader = dom.slice_state = dom.slice_state_with_leader = dom.leader_state = 0;
    for (int c : std::vector<int>(dom.children)) clear_state(c);
  }

  void clear_leader_capacity(int d) {
    Dom& dom = at(d);
    dom.state_with_leader = dom.slice_state_with_leader = dom.leader_state = 0;
    for (int c : std::vector<int>(dom.children)) clear_leader_capacity(c);
  }

  void prune_node(int d, std::int32_t threshold, bool leader_required) {
    if (at(d).slice_state < threshold) {
      clear_state(d);
      return;
    }
    if (leader_required && at(d).leader_state > 0 && at(d).slice_state_with_leader < threshold) {
      clear_leader_capacity(d);
    }
  }

  void prune_below_threshold(const std::vector<int>& list, std::int32_t threshold, int level,
                             bool leader_required) {
    for (int d : list) {
      for (int c : std::vector<int>(at(d).children)) prune_node(c, threshold, leader_required);
    }
    for (int d : list) {
      fill_helper(d, slice_size, slice_level, level, nullptr, leader_required);
      prune_node(d, threshold, leader_required);
    }
  }

  std::pair<std::vector<int>, std::int32_t> best_domains_for_balanced() {
    const std::int32_t slice_count = count / slice_size;
    std::vector<std::vector<int>> groups;
    if (requested_level == 0) {
      groups.push_back(s.per_level_[0]);
    } else {
      std::vector<int> higher = s.per_level_[static_cast<std::size_t>(requested_level - 1)];
      std::sort(higher.begin(), higher.end(), [&](int a, int b) { return values_less(a, b); });
      for (int h : higher) groups.push_back(at(h).children);
    }
    std::int32_t best_threshold = 0;
    std::int32_t best_count = 0;
    std::vector<int> best;
    for (const auto& siblings : groups) {
      std::vector<int> candidates = clone_all(siblings);
      std::vector<int> lower = requested_level < slice_level ? lower_level(candidates) : candidates;
      Greedy g = evaluate_greedy(lower, slice_count, leader_count);
      if (!g.fits) continue;
      std::int32_t threshold = threshold_value(slice_count, g);
      std::int32_t with_reservation = threshold;
      if (leader_count > 0 && g.last >= 0) {
        with_reservation = std::min(threshold, at(g.last).slice_state_with_leader);
      }
      if (threshold < best_threshold) continue;
      prune_below_threshold(candidates, threshold, requested_level, leader_count > 0);
      Greedy after = evaluate_greedy(candidates, slice_count, leader_count);
      if (!after.fits && with_reservation < threshold) {
        if (with_reservation <= 0 || with_reservation < best_threshold) continue;
        threshold = with_reservation;
        candidates = clone_all(siblings);
        prune_below_threshold(candidates, threshold, requested_level, leader_count > 0);
        after = evaluate_greedy(candidates, slice_count, leader_count);
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

  std::tuple<std::vector<int>, int, std::string> apply_balanced(std::int32_t threshold,
                                                                std::vector<int> fit) {
    const std::int32_t slice_count = count / slice_size;
    int fit_level;
    if (requested_level < slice_level) {
      std::vector<int> chosen = select_optimal_domain_set(fit, slice_count, leader_count, slice_size, true);
      if (chosen.empty())
        return {{}, 0, "TAS Balanced Placement: Cannot find optimal domain set to fit the request"};
      fit = lower_level(chosen);
      fit_level = requested_level + 1;
    } else {
      fit_level = requested_level;
    }
    auto [placed, reason] = place_balanced(fit, slice_count, leader_count, slice_size, threshold);
    if (!reason.empty()) return {{}, 0, reason};
    return {placed, fit_level, ""};
  }

  KueueAssignment build_assignment(std::vector<std::pair<std::vector<std::string>, std::int32_t>> entries) {
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    KueueAssignment out;
    const std::size_t from = s.lowest_is_node_ ? s.levels_.size() - 1 : 0;
    out.levels.assign(s.levels_.begin() + static_cast<long>(from), s.levels_.end());
    for (auto& [values, cnt] : entries) {
      if (cnt == 0) continue;
      out.domains.push_back(KueueDomainCount{
          std::vector<std::string>(values.begin() + static_cast<long>(from), values.end()), cnt});
    }
    return out;
  }

  std::string place(const KueuePodSet& workers, const KueuePodSet* leader,
                    const std::map<std::string, Amounts>& assumed,
                    std::map<std::string, KueueAssignment>& out) {
    count = workers.count;
    Amounts requests = workers.per_pod;
    requests["pods"] += 1;
    Amounts leader_requests;
    if (leader != nullptr) {
      leader_requests = leader->per_pod;
      leader_requests["pods"] += 1;
      leader_count = 1;
    }
    const bool has_layers = !workers.slice_constraints.empty();
    if (has_layers) {
      slice_size = workers.slice_constraints.front().size;
    } else if (!workers.slice_required_topology) {
      slice_size = 1;
    } else if (!workers.slice_size) {
      return "slice topology requested, but slice size not provided";
    } else {
      slice_size = *workers.slice_size;
    }
    const bool slice_only =
        !workers.required && !workers.preferred && (workers.slice_required_topology || has_layers);
    required = workers.required.has_value();
    unconstrained = workers.unconstrained || workers.implied || slice_only;
    std::optional<std::string> key;
    if (workers.required) {
      key = workers.required;
    } else if (workers.preferred) {
      key = workers.preferred;
    } else if (slice_only) {
      key = s.levels_.front();
    } else if (workers.unconstrained || workers.implied) {
      key = s.levels_.back();
    }
    if (!key) return "topology level not specified";
    requested_level = resolve(*key);
    if (requested_level < 0) return "no requested topology level: " + *key;
    std::string slice_key = workers.slice_required_topology ? *workers.slice_required_topology
                            : has_layers                    ? workers.slice_constraints.front().topology
                                                            : s.levels_.back();
    slice_level = resolve(slice_key);
    if (slice_level < 0) return "no requested topology level for slices: " + slice_key;
    if (requested_level > slice_level) {
      return "podset slice topology " + slice_key + " is above the podset topology " + *key;
    }
    if (gates.multi_layer_topology && workers.slice_constraints.size() > 1) {
      std::int32_t prev_size = slice_size;
      int prev_level = slice_level;
      for (std::size_t i = 1; i < workers.slice_constraints.size(); ++i) {
        const auto& layer = workers.slice_constraints[i];
        int lvl = resolve(layer.topology);
        if (lvl < 0) return "no requested topology level for additional slice layer: " + layer.topology;
        if (lvl <= prev_level) {
          return "additional slice layer topology " + layer.topology + " must be at a lower level than " +
                 s.levels_[static_cast<std::size_t>(prev_level)];
        }
        if (layer.size <= 0 || prev_size % layer.size != 0) {
          return "additional slice layer size " + std::to_string(layer.size) +
                 " must evenly divide parent layer size " + std::to_string(prev_size);
        }
        for (int l = prev_level + 1; l <= lvl; ++l) slice_size_at_level[l] = layer.size;
        prev_size = layer.size;
        prev_level = lvl;
      }
      if (!slice_size_at_level.empty()) multi_layer = workers.slice_constraints;
    }
    if (slice_size <= 0) return "slice topology requested, but slice size not provided";

    fill_in_counts(requests, leader != nullptr ? &leader_requests : nullptr, {}, assumed, workers);

    std::vector<int> fit;
    int fit_level = 0;
    bool balanced = false;
    if (gates.balanced_placement && !required && !unconstrained) {
      auto [candidates, threshold] = best_domains_for_balanced();
      balanced = threshold > 0;
      if (balanced) {
        auto [placed, level, reason] = apply_balanced(threshold, candidates);
        if (!reason.empty()) {
          balanced = false;  // fall back to BestFit, as Kueue does
        } else {
          fit = placed;
          fit_level = level;
        }
      }
    }
    if (!balanced) {
      auto [level, domains, reason] = find_level_with_fit_domains(requested_level);
      if (!reason.empty()) return reason;
      fit_level = level;
      fit = domains;
    }
    fit = update_counts_to_minimum(fit, count, leader_count, slice_size, unconstrained, true);
    int current = fit_level;
    const int last = level_count() - 1;
    for (; current < std::min(last, slice_level) && !balanced; ++current) {
      fit = update_counts_to_minimum(sorted(lower_level(fit), unconstrained), count, leader_count, slice_size,
                                     unconstrained, true);
    }
    for (; current < last; ++current) {
      std::int32_t size_here = slice_size;
      if (current >= slice_level) {
        size_here = 1;
        if (auto it = slice_size_at_level.find(current + 1); it != slice_size_at_level.end())
          size_here = it->second;
      }
      std::vector<int> next;
      for (int d : fit) {
        std::vector<int> kids = sorted(at(d).children, unconstrained);
        if (size_here > 1) {
          for (int c : kids) {
            at(c).slice_state = at(c).state / size_here;
            at(c).slice_state_with_leader = at(c).state_with_leader / size_here;
          }
        }
        std::vector<int> add = update_counts_to_minimum(kids, at(d).state, at(d).leader_state, size_here,
                                                        unconstrained, size_here > 1);
        next.insert(next.end(), add.begin(), add.end());
      }
      fit = next;
    }
    std::vector<std::pair<std::vector<std::string>, std::int32_t>> worker_entries, leader_entries;
    for (int d : fit) {
      if (leader != nullptr && at(d).leader_state > 0)
        leader_entries.emplace_back(values(d), at(d).leader_state);
      if (leader == nullptr || at(d).state > 0) worker_entries.emplace_back(values(d), at(d).state);
    }
    if (leader != nullptr) out[leader->name] = build_assignment(leader_entries);
    out[workers.name] = build_assignment(worker_entries);
    return "";
  }
};

std::optional<std::string> kueue_request_fault(const std::string& failure) {
  // The messages Run::place returns before it looks at any capacity, longest prefix first.
  static const std::pair<const char*, const char*> kFaults[] = {
      {"slice topology requested, but slice size not provided", "kueue.x-k8s.io/podset-slice-size"},
      {"no requested topology level for additional slice layer",
       "kueue.x-k8s.io/podset-slice-required-topology-constraints"},
      {"additional slice layer", "kueue.x-k8s.io/podset-slice-required-topology-constraints"},
      {"no requested topology level for slices", "kueue.x-k8s.io/podset-slice-required-topology"},
      {"podset slice topology", "kueue.x-k8s.io/podset-slice-required-topology"},
      {"no requested topology level:",
       "kueue.x-k8s.io/podset-required-topology or kueue.x-k8s.io/podset-preferred-topology"},
      {"topology level not specified", "the Topology's spec.levels"},
  };
  for (const auto& [prefix, field] : kFaults) {
    if (failure.starts_with(prefix)) return std::string(field);
  }
  return std::nullopt;
}

std::vector<KueuePodSetResult> KueueTopologySnapshot::find_assignments(
    const std::vector<KueuePodSet>& pod_sets, const KueueFeatureGates& gates) {
  std::vector<KueuePodSetResult> results;
  std::map<std::string, Amounts> assumed;
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < pod_sets.size(); ++i) {
    std::string key = pod_sets[i].group ? "g:" + *pod_sets[i].group : "i:" + std::to_string(i);
    if (!groups.contains(key)) order.push_back(key);
    groups[key].push_back(i);
  }
  for (const auto& key : order) {
    const auto& members = groups[key];
    const KueuePodSet* workers = &pod_sets[members[0]];
    const KueuePodSet* leader = nullptr;
    if (members.size() > 1) {
      leader = &pod_sets[members[1]];
      if (leader->count > workers->count) std::swap(leader, workers);
    }
    std::map<std::string, KueueAssignment> assignments;
    std::string reason;
    if (levels_.empty()) {
      reason = "topology level not specified";
    } else {
      Run run(*this, gates);
      reason = run.place(*workers, leader, assumed, assignments);
    }
    for (std::size_t m : members) {
      KueuePodSetResult r;
      r.name = pod_sets[m].name;
      r.failure = reason;
      if (reason.empty()) {
        auto it = assignments.find(pod_sets[m].name);
        if (it != assignments.end()) r.assignment = it->second;
      }
      results.push_back(std::move(r));
    }
    if (!reason.empty()) return results;
    for (std::size_t m : members) {
      const auto& ps = pod_sets[m];
      auto it = assignments.find(ps.name);
      if (it == assignments.end()) continue;
      for (const auto& d : it->second.domains) {
        auto& usage = assumed[join(d.values, 0, d.values.size())];
        for (const auto& [r, v] : ps.per_pod) usage[r] += v * d.count;
        usage["pods"] += d.count;
      }
    }
  }
  return results;
}

}  // namespace hypertopo::scheduler
