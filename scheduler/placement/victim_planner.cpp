#include "scheduler/placement/victim_planner.h"

#include <algorithm>
#include <climits>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "scheduler/index/node_affinity.h"

namespace hypertopo::scheduler {

bool is_gpu_resource(const std::string& name) {
  return name == "gpu" || (name.size() > 4 && name.ends_with("/gpu"));
}

bool DisruptionBudget::matches(const PreemptionCandidate& pod) const {
  // defaultpreemption filterPodsWithPDBViolation: a pod with no labels matches no budget, a budget
  // of another namespace or with an empty selector matches nothing.
  if (pod.labels.empty() || pod.ns != ns || !selector_set) return false;
  return selector.matches_labels(pod.labels);
}

namespace {

// The preemptor's view of the cluster while it plans: dense amounts, the pods it may evict per
// node (most important first), and the room each node has.
class VictimSearch {
 public:
  VictimSearch(TopologyIndex& index, const PodSetRequest& ps, std::span<const PreemptionCandidate> pods,
               std::span<const DisruptionBudget> budgets, const PreemptionOptions& options)
      : index_(index), pods_(pods), budgets_(budgets), r_(index.resource_count()) {
    request_.assign(r_, 0);
    for (const auto& [name, amount] : ps.per_pod) {
      if (amount <= 0 || name == "pods") continue;
      const int id = index.resource_id(name);
      if (id < 0) {
        unknown_resource_ = name;
        continue;
      }
      request_[static_cast<std::size_t>(id)] += amount;
    }
    pods_id_ = index.resource_id("pods");
    if (pods_id_ >= 0) request_[static_cast<std::size_t>(pods_id_)] = 1;
    amounts_.assign(pods.size() * r_, 0);
    gpus_.assign(pods.size(), 0);
    matched_.resize(pods.size());
    potential_.resize(index.nodes().size());
    for (std::size_t c = 0; c < pods.size(); ++c) {
      const PreemptionCandidate& p = pods[c];
      for (const auto& [name, amount] : p.requests) {
        if (name == "pods") continue;
        if (const int id = index.resource_id(name); id >= 0)
          amounts_[c * r_ + static_cast<std::size_t>(id)] += amount;
        if (is_gpu_resource(name)) gpus_[c] += amount;
      }
      if (pods_id_ >= 0) amounts_[c * r_ + static_cast<std::size_t>(pods_id_)] = 1;
      if (p.node < 0 || static_cast<std::size_t>(p.node) >= index.nodes().size()) continue;
      if (!p.gang.empty()) gang_gpus_[p.gang] += gpus_[c];
      for (std::size_t b = 0; b < budgets.size(); ++b) {
        if (budgets[b].matches(p) && !budgets[b].disrupted_pods.contains(p.name))
          matched_[c].push_back(static_cast<int>(b));
      }
      if (!p.terminating && p.priority < options.priority)
        potential_[static_cast<std::size_t>(p.node)].push_back(c);
    }
    for (auto& list : potential_)
      std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) { return more_important(a, b); });
  }

  const std::string& unknown_resource() const { return unknown_resource_; }
  const std::vector<std::size_t>& potential(int node) const {
    return potential_[static_cast<std::size_t>(node)];
  }
  std::int64_t gpus(std::size_t c) const { return gpus_[c]; }
  std::int64_t gang_gpus(const std::string& gang) const {
    auto it = gang_gpus_.find(gang);
    return it == gang_gpus_.end() ? 0 : it->second;
  }

  // MoreImportantPod (pkg/scheduler/util): higher priority, then the earlier start; a pod not
  // started yet counts as starting now (latest).
  bool more_important(std::size_t a, std::size_t b) const {
    const PreemptionCandidate& x = pods_[a];
    const PreemptionCandidate& y = pods_[b];
    if (x.priority != y.priority) return x.priority > y.priority;
    const bool xs = !x.start_time.empty();
    const bool ys = !y.start_time.empty();
    if (xs != ys) return xs;
    if (x.start_time != y.start_time) return x.start_time < y.start_time;
    return a < b;
  }

  // How many of the gang's pods fit on `node` with every pod it may evict gone.
  std::int64_t max_pods(int node) const {
    std::vector<std::int64_t> free = room(node);
    for (std::size_t c : potential(node)) add(free, c, +1);
    return count_fit(free);
  }

  // kube-scheduler's SelectVictimsOnNode for `m` of the gang's pods: the victims (most important
  // first) and whether each violates a budget; false when m do not fit even with all gone.
  bool victims_for(int node, std::int64_t m, std::vector<std::pair<std::size_t, bool>>& out) const {
    out.clear();
    std::vector<std::int64_t> free = room(node);
    const auto& candidates = potential(node);
    for (std::size_t c : candidates) add(free, c, +1);
    if (count_fit(free) < m) return false;
    std::vector<std::int32_t> allowed(budgets_.size());
    for (std::size_t b = 0; b < budgets_.size(); ++b) allowed[b] = budgets_[b].disruptions_allowed;
    std::vector<std::size_t> violating, other;
    for (std::size_t c : candidates) {
      bool violates = false;
      for (int b : matched_[c]) {
        if (--allowed[static_cast<std::size_t>(b)] < 0) violates = true;
      }
      (violates ? violating : other).push_back(c);
    }
    auto reprieve = [&](const std::vector<std::size_t>& list, bool violates) {
      for (std::size_t c : list) {
        add(free, c, -1);
        if (count_fit(free) >= m) continue;  // reprieved: it stays
        add(free, c, +1);
        out.emplace_back(c, violates);
      }
    };
    reprieve(violating, true);
    reprieve(other, false);
    return true;
  }

  void evict(std::size_t c, int sign) {
    const PreemptionCandidate& p = pods_[c];
    (void)index_.add_pods(p.node, p.requests, -sign);
  }

 private:
  std::vector<std::int64_t> room(int node) const {
    std::vector<std::int64_t> free(r_);
    for (std::size_t r = 0; r < r_; ++r)
      free[r] =
          index_.node_allocatable(node, static_cast<int>(r)) - index_.node_used(node, static_cast<int>(r));
    return free;
  }
  void add(std::vector<std::int64_t>& free, std::size_t c, int sign) const {
    for (std::size_t r = 0; r < r_; ++r) free[r] += sign * amounts_[c * r_ + r];
  }
  std::int64_t count_fit(const std::vector<std::int64_t>& free) const {
    std::int64_t fit = INT64_MAX;
    for (std::size_t r = 0; r < r_; ++r) {
      if (request_[r] <= 0) continue;
      fit = std::min(fit, free[r] <= 0 ? 0 : free[r] / request_[r]);
    }
    return fit == INT64_MAX ? 0 : fit;
  }

  TopologyIndex& index_;
  std::span<const PreemptionCandidate> pods_;
  std::span<const DisruptionBudget> budgets_;
  std::size_t r_;
  int pods_id_ = -1;
  std::string unknown_resource_;
  std::vector<std::int64_t> request_;
  std::vector<std::int64_t> amounts_;  // candidate x resource
  std::vector<std::int64_t> gpus_;
  std::vector<std::vector<int>> matched_;  // budgets per candidate
  std::vector<std::vector<std::size_t>> potential_;
  std::unordered_map<std::string, std::int64_t> gang_gpus_;
};

// The cost of a victim set: budgets counted across it, units and GPUs lost.
VictimCost cost_of(const VictimSearch& search, std::span<const PreemptionCandidate> pods,
                   std::span<const DisruptionBudget> budgets, std::vector<std::size_t> victims,
                   std::vector<std::string>* broken,
                   std::unordered_map<std::size_t, bool>* violated_out = nullptr) {
  VictimCost cost;
  std::sort(victims.begin(), victims.end(),
            [&](std::size_t a, std::size_t b) { return search.more_important(a, b); });
  std::vector<std::int32_t> allowed(budgets.size());
  for (std::size_t b = 0; b < budgets.size(); ++b) allowed[b] = budgets[b].disruptions_allowed;
  std::unordered_map<std::size_t, bool> violated;
  std::set<std::string> gangs;
  for (std::size_t c : victims) {
    const PreemptionCandidate& p = pods[c];
    bool v = false;
    for (std::size_t b = 0; b < budgets.size(); ++b) {
      if (!budgets[b].matches(p) || budgets[b].disrupted_pods.contains(p.name)) continue;
      if (--allowed[b] < 0) v = true;
    }
    violated[c] = v;
    if (v) ++cost.budget_violations;
    cost.highest_priority = std::max<std::int64_t>(cost.highest_priority, p.priority);
    ++cost.victims;
    if (p.gang.empty()) {
      ++cost.units;
      cost.gpus_lost += search.gpus(c);
    } else if (gangs.insert(p.gang).second) {
      ++cost.units;
      cost.gpus_lost += search.gang_gpus(p.gang);
    }
  }
  if (broken) broken->assign(gangs.begin(), gangs.end());
  if (violated_out) *violated_out = std::move(violated);
  return cost;
}

}  // namespace

std::expected<PreemptionPlan, Error> plan_with_victims(TopologyIndex& index, const PodSetRequest& ps,
                                                       std::span<const PreemptionCandidate> pods,
                                                       std::span<const DisruptionBudget> budgets,
                                                       const PreemptionOptions& options,
                                                       const BinpackWeights& weights,
                                                       FabricHealthMode health) {
  PreemptionPlan plan;
  if (options.never) {
    plan.reason = "the pod's preemptionPolicy is Never: it evicts no pod";
    return plan;
  }
  // Pods already terminating count as gone while planning (kube-scheduler waits for them too).
  std::vector<std::size_t> terminating;
  for (std::size_t c = 0; c < pods.size(); ++c) {
    const auto& p = pods[c];
    if (p.terminating && p.node >= 0 && static_cast<std::size_t>(p.node) < index.nodes().size()) {
      terminating.push_back(c);
      (void)index.add_pods(p.node, p.requests, -1);
    }
  }
  struct Restore {
    TopologyIndex& index;
    std::span<const PreemptionCandidate> pods;
    const std::vector<std::size_t>& list;
    ~Restore() {
      for (std::size_t c : list) (void)index.add_pods(pods[c].node, pods[c].requests, +1);
    }
  } restore{index, pods, terminating};

  VictimSearch search(index, ps, pods, budgets, options);
  if (!search.unknown_resource().empty()) {
    plan.reason = "no node offers " + search.unknown_resource();
    return plan;
  }
  std::int64_t need = ps.count;
  if (ps.min_count > 0) need = std::min<std::int64_t>(need, ps.min_count);
  if (ps.partitions && ps.partitions->min > 0 && ps.partitions->size > 0)
    need = std::min<std::int64_t>(need, std::int64_t{ps.partitions->min} * ps.partitions->size);
  if (need <= 0) need = 1;

  // Nodes kube-scheduler's own filters leave to the pod, and how many of its pods each could hold.
  const std::size_t node_count = index.nodes().size();
  std::vector<std::int64_t> max_pods(node_count, 0);
  for (std::size_t n = 0; n < node_count; ++n) {
    const NodeSpec& spec = index.node(static_cast<int>(n)).spec;
    if (!spec.ready || spec.unschedulable) continue;
    if (!check_node_constraints(spec, ps.node_selector, ps.affinity, ps.tolerations).passed()) continue;
    if (health == FabricHealthMode::kExclude && index.node(static_cast<int>(n)).link_degraded) continue;
    max_pods[n] = search.max_pods(static_cast<int>(n));
  }
  std::vector<std::int64_t> capacity(index.domains().size(), 0);
  for (std::size_t n = 0; n < node_count; ++n) {
    if (max_pods[n] == 0) continue;
    for (int d = index.node(static_cast<int>(n)).domain; d >= 0; d = index.domain(d).parent)
      capacity[static_cast<std::size_t>(d)] += max_pods[n];
  }

  // The tiers the constraint allows, lowest first.
  const int root_tier = index.domain(index.root()).tier;
  int lowest = 1, highest = root_tier;
  if (ps.mode == TopologyMode::kNone) {
    lowest = root_tier;
  } else if (ps.mode == TopologyMode::kRequired && !ps.level.empty()) {
    auto tier = index.resolve_tier(ps.level);
    if (!tier) return std::unexpected(tier.error().context("pod set " + ps.name));
    highest = std::max(1, std::min(*tier, root_tier));
  }

  auto nodes_under = [&](int d) {
    std::vector<int> out;
    std::vector<int> stack{d};
    while (!stack.empty()) {
      const int dom = stack.back();
      stack.pop_back();
      for (int n : index.domain(dom).nodes) {
        if (max_pods[static_cast<std::size_t>(n)] > 0) out.push_back(n);
      }
      for (int c : index.domain(dom).children) stack.push_back(c);
    }
    return out;
  };

  struct Choice {
    int domain;
    VictimCost cost;
    std::vector<std::size_t> victims;
  };
  // The cheapest victims inside `d` for `need` pods: node increments taken cheapest first, the cost
  // of an increment being what it adds (a gang already broken costs no more units or GPUs).
  auto greedy = [&](int d) -> std::optional<Choice> {
    const std::vector<int> nodes = nodes_under(d);
    std::unordered_map<int, std::int64_t> placed;
    std::unordered_map<int, int> version;
    std::unordered_set<std::size_t> chosen;
    std::unordered_set<std::string> broken;
    std::unordered_map<std::string, std::vector<int>> gang_nodes;
    for (int n : nodes) {
      for (std::size_t c : search.potential(n)) {
        if (!pods[c].gang.empty()) gang_nodes[pods[c].gang].push_back(n);
      }
    }
    using Entry = std::tuple<VictimCost, int, int>;  // cost, node, version
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
    std::vector<std::pair<std::size_t, bool>> v;
    auto increment_cost = [&](int n) -> std::optional<VictimCost> {
      const std::int64_t m = placed[n] + 1;
      if (m > max_pods[static_cast<std::size_t>(n)] || !search.victims_for(n, m, v)) return std::nullopt;
      VictimCost c;
      std::unordered_set<std::string> new_gangs;
      for (const auto& [cand, violates] : v) {
        if (chosen.contains(cand)) continue;
        const PreemptionCandidate& p = pods[cand];
        if (violates) ++c.budget_violations;
        c.highest_priority = std::max<std::int64_t>(c.highest_priority, p.priority);
        ++c.victims;
        if (p.gang.empty()) {
          ++c.units;
          c.gpus_lost += search.gpus(cand);
        } else if (!broken.contains(p.gang) && new_gangs.insert(p.gang).second) {
          ++c.units;
          c.gpus_lost += search.gang_gpus(p.gang);
        }
      }
      return c;
    };
    auto push = [&](int n) {
      if (auto c = increment_cost(n)) heap.emplace(*c, n, version[n]);
    };
    for (int n : nodes) push(n);
    std::int64_t total = 0;
    while (total < need && !heap.empty()) {
      auto [c, n, ver] = heap.top();
      heap.pop();
      if (ver != version[n]) continue;
      const std::int64_t m = placed[n] + 1;
      if (!search.victims_for(n, m, v)) continue;
      ++placed[n];
      ++version[n];
      ++total;
      std::vector<std::string> newly;
      for (const auto& [cand, violates] : v) {
        if (!chosen.insert(cand).second) continue;
        const std::string& g = pods[cand].gang;
        if (!g.empty() && broken.insert(g).second) newly.push_back(g);
      }
      push(n);
      for (const auto& g : newly) {
        for (int other : gang_nodes[g]) {
          if (other == n) continue;
          ++version[other];
          push(other);
        }
      }
    }
    if (total < need) return std::nullopt;
    Choice out{d, {}, std::vector<std::size_t>(chosen.begin(), chosen.end())};
    std::sort(out.victims.begin(), out.victims.end());
    out.cost = cost_of(search, pods, budgets, out.victims, nullptr);
    return out;
  };

  JobRequest job{.name = ps.name, .pod_sets = {ps}};
  std::string last_reason;
  if (options.scope >= 0) {
    if (static_cast<std::size_t>(options.scope) >= index.domains().size())
      return fail(ErrorCode::kInvalidArgument, "pod set " + ps.name + ": no such domain to preempt in");
    lowest = highest = index.domain(options.scope).tier;
  }
  for (int t = lowest; t <= highest && !plan.fit; ++t) {
    std::vector<Choice> choices;
    for (std::size_t d = 0; d < index.domains().size(); ++d) {
      const int dom = static_cast<int>(d);
      if (options.scope >= 0 && dom != options.scope) continue;
      if (index.domain(dom).tier != t || capacity[d] < need) continue;
      if (health == FabricHealthMode::kExclude && index.domain(dom).health.degraded) continue;
      ++plan.domains_considered;
      if (auto c = greedy(dom)) choices.push_back(std::move(*c));
    }
    std::stable_sort(choices.begin(), choices.end(),
                     [](const Choice& a, const Choice& b) { return a.cost < b.cost; });
    for (const Choice& choice : choices) {
      for (std::size_t c : choice.victims) search.evict(c, +1);
      PlacementEngine engine(index, weights, health);
      auto placed = engine.place_within(job, choice.domain);
      if (!placed) {
        for (std::size_t c : choice.victims) search.evict(c, -1);
        return std::unexpected(placed.error());
      }
      if (!placed->fit) {
        last_reason = placed->reason;
        for (std::size_t c : choice.victims) search.evict(c, -1);
        continue;
      }
      // The engine may have used fewer of a node's freed places than the search assumed: each
      // used node keeps the victims kube-scheduler would pick for the pods it got, the others none.
      const PodSetPlacement& p = placed->pod_sets.front();
      std::vector<std::size_t> kept;
      std::vector<std::pair<std::size_t, bool>> v;
      for (const auto& a : p.assignment) {
        // Victims of this node counted as if the gang's pods were not there yet.
        ResourceAmounts one = ps.per_pod;
        (void)index.add_pods(a.node, one, -a.count);
        for (std::size_t c : choice.victims) {
          if (pods[c].node == a.node) search.evict(c, -1);
        }
        if (search.victims_for(a.node, a.count, v)) {
          for (const auto& [c, violates] : v) kept.push_back(c);
        }
        for (std::size_t c : choice.victims) {
          if (pods[c].node == a.node) search.evict(c, +1);
        }
        (void)index.add_pods(a.node, one, +a.count);
      }
      for (std::size_t c : choice.victims) search.evict(c, -1);  // they run until evicted
      std::sort(kept.begin(), kept.end(), [&](std::size_t a, std::size_t b) {
        if (pods[a].node != pods[b].node) return pods[a].node < pods[b].node;
        return search.more_important(a, b);
      });
      kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
      plan.fit = true;
      plan.placement = p;
      plan.domain = choice.domain == index.root() ? std::string() : index.domain(choice.domain).name;
      plan.tier = index.domain(choice.domain).tier;
      plan.victims = kept;
      // Budgets counted over the whole victim set, most important victims first.
      std::unordered_map<std::size_t, bool> violated;
      plan.cost = cost_of(search, pods, budgets, kept, &plan.broken_gangs, &violated);
      for (std::size_t c : kept) {
        plan.violates_budget.push_back(violated[c]);
        plan.gpus_evicted += search.gpus(c);
      }
      break;
    }
  }
  if (!plan.fit) {
    std::int64_t best = 0;
    int best_domain = -1;
    for (std::size_t d = 0; d < index.domains().size(); ++d) {
      const int t = index.domain(static_cast<int>(d)).tier;
      if (t >= lowest && t <= highest && capacity[d] > best) {
        best = capacity[d];
        best_domain = static_cast<int>(d);
      }
    }
    const std::string evicting =
        "evicting every pod of lower priority than " + std::to_string(options.priority);
    const std::string tiers = " at tier <= " + std::to_string(highest);
    if (best < need || best_domain < 0) {
      plan.reason = evicting + " makes room for at most " + std::to_string(best) + " of " +
                    std::to_string(need) + " pods in one domain" + tiers;
    } else {
      // Room enough by pod count, but not as the gang's slices, partitions or constraints need it.
      plan.reason =
          evicting + " would free room for " + std::to_string(best) + " pods in " +
          (best_domain == index.root() ? std::string("the cluster") : index.domain(best_domain).name) +
          tiers + ", but no such domain then holds the gang's " + std::to_string(need) +
          " pods as its slices, partitions and node constraints need them";
    }
    if (!last_reason.empty()) plan.reason += " (" + last_reason + ")";
  }
  return plan;
}

}  // namespace hypertopo::scheduler
