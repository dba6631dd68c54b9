#include "scheduler/placement/placement_engine.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

#include "scheduler/placement/sub_group_placement.h"

namespace hypertopo::scheduler {

const char* to_string(TopologyMode mode) {
  switch (mode) {
    case TopologyMode::kNone:
      return "none";
    case TopologyMode::kRequired:
      return "required";
    case TopologyMode::kPreferred:
      return "preferred";
    case TopologyMode::kUnconstrained:
      return "unconstrained";
  }
  return "none";
}

PlacementEngine::PlacementEngine(TopologyIndex& index, BinpackWeights weights, FabricHealthMode health)
    : index_(index), weights_(std::move(weights)), health_(health) {
  domains_by_tier_.resize(index_.domains().size());
  std::iota(domains_by_tier_.begin(), domains_by_tier_.end(), 0);
  std::stable_sort(domains_by_tier_.begin(), domains_by_tier_.end(),
                   [&](int a, int b) { return index_.domain(a).tier < index_.domain(b).tier; });
}

std::int32_t PlacementEngine::granularity(int tier) const {
  // Layers are sorted by tier, highest first: the first one at or below `tier` applies.
  for (const auto& layer : layers_) {
    if (layer.tier <= tier) return layer.size;
  }
  return 1;
}

void PlacementEngine::compute_fit_counts(const PodSetRequest& ps) {
  std::vector<std::pair<int, std::int64_t>> dense;
  bool impossible = false;
  for (const auto& [name, amount] : ps.per_pod) {
    if (amount <= 0 || name == "pods") continue;
    int r = index_.resource_id(name);
    if (r < 0) impossible = true;
    dense.emplace_back(r, amount);
  }
  dense.emplace_back(index_.resource_id("pods"), 1);
  node_fit_.assign(index_.nodes().size(), 0);
  excluded_nodes_.clear();
  if (impossible) return;
  // Nodes kube-scheduler's own filters drop for this pod, by reason: a no-fit message names them.
  std::map<std::string, std::int64_t> excluded;
  for (std::size_t n = 0; n < index_.nodes().size(); ++n) {
    const NodeSpec& spec = index_.nodes()[n].spec;
    if (!in_scope(static_cast<int>(n))) continue;
    const NodeConstraintCheck check =
        check_node_constraints(spec, ps.node_selector, ps.affinity, ps.tolerations);
    if (!check.passed()) {
      ++excluded[check.message()];
      continue;
    }
    if (!spec.ready || spec.unschedulable) continue;
    std::int64_t fit = std::numeric_limits<std::int64_t>::max();
    for (const auto& [r, amount] : dense) {
      const int node = static_cast<int>(n);
      std::int64_t free = index_.node_allocatable(node, r) - index_.node_used(node, r);
      fit = std::min(fit, free <= 0 ? 0 : free / amount);
    }
    node_fit_[n] = fit;
  }
  std::int64_t total = 0;
  for (const auto& [why, n] : excluded) total += n;
  if (total > 0) {
    excluded_nodes_ = std::to_string(total) + " of " + std::to_string(index_.nodes().size()) +
                      " nodes are excluded by the pod's node constraints (";
    bool first = true;
    for (const auto& [why, n] : excluded) {
      excluded_nodes_ += (first ? "" : ", ") + std::to_string(n) + " " + why;
      first = false;
    }
    excluded_nodes_ += ")";
  }
}

bool PlacementEngine::degraded_domain(int domain) const {
  return health_ != FabricHealthMode::kIgnore && index_.domain(domain).health.degraded;
}

bool PlacementEngine::degraded_node(int node) const {
  return health_ != FabricHealthMode::kIgnore && index_.node(node).link_degraded;
}

void PlacementEngine::compute_capacities() {
  domain_cap_.assign(index_.domains().size(), 0);
  const bool exclude = health_ == FabricHealthMode::kExclude;
  // Under exclude a degraded domain or node holds nothing; open_cap_ keeps what it would hold, so
  // that a gang that fits only there is told why it does not fit.
  if (exclude) open_cap_.assign(index_.domains().size(), 0);
  const std::int64_t g0 = granularity(0);
  for (int d : domains_by_tier_) {
    const IndexDomain& dom = index_.domain(d);
    std::int64_t raw = 0;
    std::int64_t open = 0;
    for (int n : dom.nodes) {
      const std::int64_t fit = node_fit_[static_cast<std::size_t>(n)] / g0 * g0;
      open += fit;
      if (!exclude || !degraded_node(n)) raw += fit;
    }
    for (int c : dom.children) {
      raw += domain_cap_[static_cast<std::size_t>(c)];
      if (exclude) open += open_cap_[static_cast<std::size_t>(c)];
    }
    const std::int64_t g = granularity(dom.tier);
    domain_cap_[static_cast<std::size_t>(d)] = exclude && degraded_domain(d) ? 0 : raw / g * g;
    if (exclude) open_cap_[static_cast<std::size_t>(d)] = open / g * g;
  }
}

namespace {

std::string pod_count(std::int64_t n) { return std::to_string(n) + (n == 1 ? " pod" : " pods"); }

std::string condition_text(const IndexDomain& d, bool with_message) {
  std::string text = "FabricDegraded " + (d.health.reason.empty() ? std::string("True") : d.health.reason);
  if (with_message && !d.health.message.empty()) text += ": " + d.health.message;
  return text;
}

}  // namespace

std::string PlacementEngine::exclusion_cause(int domain) const {
  // The domain itself, else the first degraded domain or node below it (tree order) that holds
  // capacity the exclusion took away.
  std::vector<int> stack{domain};
  while (!stack.empty()) {
    const int d = stack.back();
    stack.pop_back();
    const IndexDomain& dom = index_.domain(d);
    if (degraded_domain(d) && open_cap_[static_cast<std::size_t>(d)] > 0) {
      return "HyperNode " + dom.name + " is " + condition_text(dom, true);
    }
    for (int n : dom.nodes) {
      if (degraded_node(n) && node_fit_[static_cast<std::size_t>(n)] > 0) {
        return "node " + index_.node(n).spec.name + " has a degraded own link (" +
               kDegradedMembersAnnotation + " of HyperNode " + dom.name + ")";
      }
    }
    for (auto it = dom.children.rbegin(); it != dom.children.rend(); ++it) stack.push_back(*it);
  }
  return "";
}

void PlacementEngine::note_degraded_pieces(int chosen,
                                           const std::vector<std::pair<int, std::int32_t>>& pieces,
                                           PodSetPlacement& result) const {
  if (health_ == FabricHealthMode::kIgnore) return;
  // Degraded domains strictly inside the chosen one, and degraded nodes, that received pods.
  std::map<int, std::int64_t> in_domain;
  for (const auto& [node, count] : pieces) {
    for (int d = index_.node(node).domain; d >= 0 && d != chosen; d = index_.domain(d).parent) {
      if (degraded_domain(d)) in_domain[d] += count;
    }
  }
  for (const auto& [d, count] : in_domain) {
    result.fabric_health.push_back(pod_count(count) + " in degraded HyperNode " + index_.domain(d).name +
                                   " (" + condition_text(index_.domain(d), false) +
                                   "): given pods after the healthy domains beside it");
  }
  for (const auto& [node, count] : pieces) {
    if (!degraded_node(node)) continue;
    result.fabric_health.push_back(pod_count(count) + " on node " + index_.node(node).spec.name +
                                   ", whose own link is degraded: given pods last");
  }
}

void PlacementEngine::distribute(int domain, std::int64_t pods,
                                 std::vector<std::pair<int, std::int32_t>>& out) {
  struct Item {
    bool is_node;
    int id;
    std::int64_t cap;
    std::int64_t gran;
    std::size_t order;  // tree order inside the domain
    bool degraded;      // given pods only after every healthy item of its granularity
  };
  const IndexDomain& dom = index_.domain(domain);
  std::vector<Item> items;
  const std::int64_t g0 = granularity(0);
  for (int c : dom.children) {
    std::int64_t cap = domain_cap_[static_cast<std::size_t>(c)];
    if (cap > 0)
      items.push_back({false, c, cap, granularity(index_.domain(c).tier), items.size(), degraded_domain(c)});
  }
  for (int n : dom.nodes) {
    const bool degraded = degraded_node(n);
    if (degraded && health_ == FabricHealthMode::kExclude) continue;
    std::int64_t cap = node_fit_[static_cast<std::size_t>(n)] / g0 * g0;
    if (cap > 0) items.push_back({true, n, cap, g0, items.size(), degraded});
  }
  // Coarser pieces first when granularities differ, then healthy before degraded, then the most
  // capacity (fewest domains).
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.gran != b.gran) return a.gran > b.gran;
    if (a.degraded != b.degraded) return !a.degraded;
    if (a.cap != b.cap) return a.cap > b.cap;
    return a.order < b.order;
  });
  std::vector<std::pair<std::size_t, std::int64_t>> chosen;  // (index into items, pods)
  std::int64_t remaining = pods;
  for (std::size_t i = 0; remaining > 0 && i < items.size(); ++i) {
    if (items[i].cap >= remaining && remaining % items[i].gran == 0) {
      // Best fit for the last piece: the smallest item that still holds the rest.
      std::size_t best = i;
      for (std::size_t j = i + 1; j < items.size(); ++j) {
        if (items[j].degraded != items[i].degraded) continue;  // never a degraded one for a healthy one
        if (items[j].cap >= remaining && items[j].cap < items[best].cap && remaining % items[j].gran == 0)
          best = j;
      }
      chosen.emplace_back(best, remaining);
      remaining = 0;
      break;
    }
    std::int64_t take = std::min(items[i].cap, remaining) / items[i].gran * items[i].gran;
    if (take > 0) {
      chosen.emplace_back(i, take);
      remaining -= take;
    }
  }
  std::sort(chosen.begin(), chosen.end(),
            [&](const auto& a, const auto& b) { return items[a.first].order < items[b.first].order; });
  for (const auto& [i, take] : chosen) {
    const Item& item = items[i];
    if (item.is_node) {
      out.emplace_back(item.id, static_cast<std::int32_t>(take));
    } else {
      distribute(item.id, take, out);
    }
  }
}

std::expected<PodSetPlacement, Error> PlacementEngine::place_pod_set(const PodSetRequest& ps) {
  const std::string where = "pod set " + (ps.name.empty() ? std::string("<unnamed>") : ps.name);
  if (ps.count <= 0) return fail(ErrorCode::kInvalidArgument, where + ": count must be positive");
  PodSetPlacement result;
  result.name = ps.name;
  // Layers: slices plus partitions, coarsest first.
  layers_.clear();
  std::vector<std::pair<Layer, std::string>> named;
  for (const auto& s : ps.slices) {
    auto tier = index_.resolve_tier(s.level);
    if (!tier) return std::unexpected(tier.error().context(where + ": slice layer"));
    if (s.size <= 0)
      return fail(ErrorCode::kInvalidArgument, where + ": slice size at " + s.level + " must be positive");
    named.push_back({Layer{*tier, s.size}, s.level});
  }
  if (ps.partitions) {
    const auto& p = *ps.partitions;
    if (p.total <= 0 || p.size <= 0) {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": totalPartitions and partitionSize must be positive");
    }
    if (static_cast<std::int64_t>(p.total) * p.size != ps.count) {
      return fail(ErrorCode::kInvalidArgument, where + ": replicas " + std::to_string(ps.count) +
                                                   " != totalPartitions " + std::to_string(p.total) +
                                                   " x partitionSize " + std::to_string(p.size));
    }
    if (p.min < 0 || p.min > p.total) {
      return fail(ErrorCode::kInvalidArgument, where + ": minPartitions " + std::to_string(p.min) +
                                                   " must be within 0.." + std::to_string(p.total));
    }
    int tier = 1;
    if (!p.level.empty()) {
      auto t = index_.resolve_tier(p.level);
      if (!t) return std::unexpected(t.error().context(where + ": partition networkTopology"));
      tier = *t;
    }
    named.push_back({Layer{tier, p.size}, "partition tier " + std::to_string(tier)});
  }
  std::stable_sort(named.begin(), named.end(),
                   [](const auto& a, const auto& b) { return a.first.tier > b.first.tier; });
  for (std::size_t i = 0; i < named.size(); ++i) {
    const auto& [layer, label] = named[i];
    if (i == 0 && ps.count % layer.size != 0) {
      return fail(ErrorCode::kInvalidArgument, where + ": slice size " + std::to_string(layer.size) + " at " +
                                                   label + " does not divide the pod count " +
                                                   std::to_string(ps.count));
    }
    if (i > 0) {
      const auto& outer = named[i - 1];
      if (outer.first.tier == layer.tier) {
        return fail(ErrorCode::kInvalidArgument,
                    where + ": two slice layers at tier " + std::to_string(layer.tier));
      }
      if (outer.first.size % layer.size != 0) {
        return fail(ErrorCode::kInvalidArgument,
                    where + ": slice size " + std::to_string(layer.size) + " at " + label +
                        " does not divide the enclosing slice size " + std::to_string(outer.first.size) +
                        " at " + outer.second);
      }
    }
    layers_.push_back(layer);
  }
  const int root_tier = index_.domain(index_.root()).tier;
  int limit = root_tier;
  if (ps.mode == TopologyMode::kRequired || ps.mode == TopologyMode::kPreferred) {
    if (!ps.level.empty()) {
      auto t = index_.resolve_tier(ps.level);
      if (!t) return std::unexpected(t.error().context(where + ": topology level"));
      limit = *t;
    }
  }
  if (!layers_.empty() && layers_.front().tier > limit) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": slice layer at tier " + std::to_string(layers_.front().tier) +
                    " is above the widest tier allowed (" + std::to_string(limit) + ")");
  }

  compute_fit_counts(ps);
  request_total_.clear();

  std::vector<std::pair<int, std::int32_t>> pieces;
  if (ps.mode == TopologyMode::kNone && layers_.empty()) {
    // Normal pods: each node ranked by the fading-tier score for one pod.
    std::vector<std::pair<double, int>> ranked;
    NormalPodScorer scorer(index_, ps.per_pod, weights_);
    for (std::size_t n = 0; n < node_fit_.size(); ++n) {
      if (node_fit_[n] <= 0) continue;
      double s = weights_.normal_pod_enable ? scorer.score(static_cast<int>(n)) : 0.0;
      ranked.emplace_back(s, static_cast<int>(n));
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::int64_t remaining = ps.count;
    for (const auto& [s, n] : ranked) {
      if (remaining == 0) break;
      std::int64_t take = std::min(node_fit_[static_cast<std::size_t>(n)], remaining);
      pieces.emplace_back(n, static_cast<std::int32_t>(take));
      remaining -= take;
    }
    if (remaining > 0 && ps.min_count > 0 && ps.count - remaining >= ps.min_count) {
      result.reason = "placed " + std::to_string(ps.count - remaining) + " of " + std::to_string(ps.count) +
                      " pods (minAvailable " + std::to_string(ps.min_count) + ")";
    } else if (remaining > 0) {
      result.reason = "the cluster holds only " + std::to_string(ps.count - remaining) + " of " +
                      std::to_string(ps.count) + " pods";
      if (!excluded_nodes_.empty()) result.reason += "; " + excluded_nodes_;
      return result;
    }
    std::sort(pieces.begin(), pieces.end());
    result.tier = root_tier;
    result.domains = {index_.domain(index_.root()).name};
  } else {
    compute_capacities();
    std::int32_t target = ps.count;
    std::int32_t min_target = ps.count;
    std::int32_t step = ps.count;
    if (ps.partitions && ps.partitions->min > 0) {
      min_target = ps.partitions->min * ps.partitions->size;
      step = ps.partitions->size;
    } else if (ps.min_count > 0 && ps.min_count < ps.count) {
      // An elastic gang: the most pods that fit in one domain, down to its minimum, in whole slices.
      step = layers_.empty() ? 1 : layers_.front().size;
      min_target = (ps.min_count + step - 1) / step * step;
    }
    int chosen = -1;
    int chosen_node = -1;
    std::int64_t best_cap_seen = 0;
    std::string best_seen;
    std::string excluded_fit;      // under exclude: the lowest domain that would hold the set, and why not
    std::vector<int> passed_over;  // degraded domains of the chosen tier that hold the set too
    for (; target >= min_target && chosen < 0 && chosen_node < 0; target -= step) {
      request_total_.clear();
      for (const auto& [r, v] : ps.per_pod) request_total_[r] = v * target;
      request_total_["pods"] = target;
      const int start = layers_.empty() ? (limit == 0 ? 0 : 1) : layers_.front().tier;
      if (start == 0) {
        // Tier 0: a single node holds the whole set (best fit, then name).
        for (std::size_t n = 0; n < node_fit_.size(); ++n) {
          if (node_fit_[n] < target) continue;
          const bool degraded = degraded_node(static_cast<int>(n));
          if (degraded && health_ == FabricHealthMode::kExclude) {
            if (excluded_fit.empty()) {
              excluded_fit = "node " + index_.node(static_cast<int>(n)).spec.name +
                             " would hold it, but its own link is degraded";
            }
            continue;
          }
          const bool chosen_degraded = chosen_node >= 0 && degraded_node(chosen_node);
          if (chosen_node < 0 || (chosen_degraded && !degraded) ||
              (chosen_degraded == degraded &&
               node_fit_[n] < node_fit_[static_cast<std::size_t>(chosen_node)])) {
            chosen_node = static_cast<int>(n);
          }
        }
        if (chosen_node >= 0) break;
      }
      const int stop = ps.mode == TopologyMode::kRequired ? limit : root_tier;
      double chosen_score = -1.0;
      for (int t = std::max(start, 1); t <= stop && chosen < 0; ++t) {
        passed_over.clear();
        for (int d : domains_by_tier_) {
          const IndexDomain& dom = index_.domain(d);
          if (dom.tier != t) continue;
          const std::int64_t cap = domain_cap_[static_cast<std::size_t>(d)];
          if (cap > best_cap_seen && t <= limit) {
            best_cap_seen = cap;
            best_seen = dom.name;
          }
          if (t > limit && d != index_.root()) continue;  // preferred spreads only at the cluster top
          if (cap < target) {
            if (health_ == FabricHealthMode::kExclude && excluded_fit.empty() &&
                open_cap_[static_cast<std::size_t>(d)] >= target) {
              const std::string cause = exclusion_cause(d);
              if (!cause.empty()) excluded_fit = dom.name + " would hold it, but " + cause;
            }
            continue;
          }
          // A degraded domain is the last choice among those of this tier that hold the set.
          const bool degraded = degraded_domain(d);
          const bool chosen_degraded = chosen >= 0 && degraded_domain(chosen);
          double s = hypernode_binpack_score(index_, d, request_total_, weights_);
          const std::int64_t chosen_cap = chosen < 0 ? 0 : domain_cap_[static_cast<std::size_t>(chosen)];
          if (degraded) passed_over.push_back(d);
          if (chosen < 0 || (chosen_degraded && !degraded) ||
              (chosen_degraded == degraded &&
               (s > chosen_score || (s == chosen_score && cap < chosen_cap)))) {
            chosen = d;
            chosen_score = s;
          }
        }
        if (chosen >= 0) {
          result.score = 100.0 * weights_.weight * chosen_score;
          break;
        }
      }
      if (chosen >= 0 || chosen_node >= 0) break;
    }
    if (chosen < 0 && chosen_node < 0) {
      std::string unit = ps.partitions ? "partitions" : "pods";
      result.reason =
          "no domain at tier <= " + std::to_string(limit) + " holds " + std::to_string(ps.count) + " pods";
      if (!layers_.empty()) {
        result.reason += " in slices of " + std::to_string(layers_.front().size) + " at tier " +
                         std::to_string(layers_.front().tier);
      }
      const bool nodes_have_room =
          std::any_of(node_fit_.begin(), node_fit_.end(), [](std::int64_t f) { return f > 0; });
      if (!best_seen.empty()) {
        result.reason += "; the largest, " + best_seen + ", holds " + std::to_string(best_cap_seen);
      } else if (nodes_have_room && !layers_.empty()) {
        // Pods fit on nodes, but no domain of the slice's tier holds a whole slice: say how many
        // pods the largest of them holds, not that nodes are full.
        const Layer& slice = layers_.front();
        std::int64_t most = 0;
        std::string largest;
        for (int d : domains_by_tier_) {
          if (index_.domain(d).tier != slice.tier) continue;
          std::int64_t pods = 0;
          for (std::vector<int> stack{d}; !stack.empty();) {
            const IndexDomain& dom = index_.domain(stack.back());
            stack.pop_back();
            for (int n : dom.nodes) pods += node_fit_[static_cast<std::size_t>(n)];
            stack.insert(stack.end(), dom.children.begin(), dom.children.end());
          }
          if (pods > most) {
            most = pods;
            largest = index_.domain(d).name;
          }
        }
        result.reason += "; no domain at tier " + std::to_string(slice.tier) + " holds a slice of " +
                         std::to_string(slice.size) + ": the largest, " + largest + ", holds " +
                         pod_count(most);
      } else {
        result.reason += "; no node has room for one pod";
      }
      if (!excluded_nodes_.empty()) result.reason += "; " + excluded_nodes_;
      if (!excluded_fit.empty()) {
        result.reason += "; " + excluded_fit + " (fabric health mode exclude)";
        result.fabric_health.push_back(excluded_fit);
      }
      return result;
    }
    if (chosen_node >= 0) {
      pieces.emplace_back(chosen_node, target);
      result.tier = 0;
      result.domains = {index_.node(chosen_node).spec.name};
      if (degraded_node(chosen_node)) {
        result.fabric_health.push_back("node " + index_.node(chosen_node).spec.name +
                                       " has a degraded own link; no healthy node holds the pod set");
      }
    } else {
      distribute(chosen, target, pieces);
      result.tier = index_.domain(chosen).tier;
      result.domains = {index_.domain(chosen).name};
      const IndexDomain& dom = index_.domain(chosen);
      if (degraded_domain(chosen)) {
        result.fabric_health.push_back("chose degraded HyperNode " + dom.name + " (" +
                                       condition_text(dom, true) + "): no healthy domain at tier " +
                                       std::to_string(dom.tier) + " holds the pod set");
      } else {
        for (int d : passed_over) {
          result.fabric_health.push_back("avoided degraded HyperNode " + index_.domain(d).name + " (" +
                                         condition_text(index_.domain(d), true) + "), which also holds it");
        }
      }
      note_degraded_pieces(chosen, pieces, result);
    }
    if (target < ps.count && ps.partitions) {
      result.reason = "placed " + std::to_string(target / step) + " of " +
                      std::to_string(ps.partitions->total) + " partitions (minPartitions " +
                      std::to_string(ps.partitions->min) + ")";
    } else if (target < ps.count) {
      result.reason = "placed " + std::to_string(target) + " of " + std::to_string(ps.count) +
                      " pods (minAvailable " + std::to_string(ps.min_count) +
                      "): the others join the same domain as room appears";
    }
  }
  std::int32_t rank = 0;
  for (const auto& [node, count] : pieces) {
    NodeAssignment a;
    a.node = node;
    a.node_name = index_.node(node).spec.name;
    a.count = count;
    a.first_rank = rank;
    a.domain_path = index_.domain_path(index_.node(node).domain);
    rank += count;
    result.assignment.push_back(std::move(a));
  }
  result.placed = rank;
  result.fit = true;
  return result;
}

bool PlacementEngine::in_scope(int node) const {
  if (scope_ < 0) return true;
  for (int d = index_.node(node).domain; d >= 0; d = index_.domain(d).parent) {
    if (d == scope_) return true;
  }
  return false;
}

std::expected<JobPlacement, Error> PlacementEngine::place_within(const JobRequest& job, int domain) {
  if (domain < 0 || static_cast<std::size_t>(domain) >= index_.domains().size())
    return fail(ErrorCode::kInvalidArgument, "job " + job.name + ": no such domain to place within");
  scope_ = domain;
  auto r = place_pod_sets(job);
  scope_ = -1;
  return r;
}

std::expected<JobPlacement, Error> PlacementEngine::place(const JobRequest& job) {
  if (job.grouped()) return place_sub_groups(*this, index_, job);
  const bool job_level = job.pod_sets.size() > 1 &&
                         (job.mode == TopologyMode::kRequired || job.mode == TopologyMode::kPreferred);
  if (!job_level) return place_pod_sets(job);
  const int root_tier = index_.domain(index_.root()).tier;
  int limit = root_tier;
  if (!job.level.empty()) {
    auto t = index_.resolve_tier(job.level);
    if (!t) return std::unexpected(t.error().context("job " + job.name + ": job-level topology"));
    limit = *t;
  }
  // Each candidate domain is a scope for the whole job; place_pod_sets rolls back a partial gang.
  // Healthy domains of a tier first, its degraded ones after them (never under exclude).
  std::vector<std::string> skipped;
  for (int t = 1; t <= limit; ++t) {
    for (const bool degraded_pass : {false, true}) {
      for (int d : domains_by_tier_) {
        if (index_.domain(d).tier != t || degraded_domain(d) != degraded_pass) continue;
        if (degraded_pass && health_ == FabricHealthMode::kExclude) {
          skipped.push_back(index_.domain(d).name + " (" + condition_text(index_.domain(d), false) + ")");
          continue;
        }
        scope_ = d;
        auto r = place_pod_sets(job);
        scope_ = -1;
        if (!r) return r;
        if (r->fit) {
          if (degraded_pass) {
            for (auto& ps : r->pod_sets) {
              ps.fabric_health.insert(ps.fabric_health.begin(), "job domain " + index_.domain(d).name +
                                                                    " is degraded (" +
                                                                    condition_text(index_.domain(d), true) +
                                                                    "): no healthy domain at tier " +
                                                                    std::to_string(t) + " holds the job");
            }
          }
          return r;
        }
      }
    }
  }
  if (job.mode == TopologyMode::kPreferred) return place_pod_sets(job);
  JobPlacement out;
  out.reason = "no domain at tier <= " + std::to_string(limit) + " holds all " +
               std::to_string(job.pod_sets.size()) + " pod sets of job " + job.name + " together";
  if (!skipped.empty()) {
    out.reason += "; degraded HyperNodes left out (fabric health mode exclude):";
    for (const auto& name : skipped) out.reason += " " + name;
  }
  for (const auto& ps : job.pod_sets) {
    PodSetPlacement p;
    p.name = ps.name;
    p.reason = out.reason;
    out.pod_sets.push_back(std::move(p));
  }
  return out;
}

std::expected<JobPlacement, Error> PlacementEngine::place_pod_sets(const JobRequest& job) {
  JobPlacement out;
  out.fit = true;
  for (const auto& ps : job.pod_sets) {
    auto placed = place_pod_set(ps);
    if (!placed) {
      for (std::size_t i = 0; i < out.pod_sets.size(); ++i) {
        if (!out.pod_sets[i].fit) continue;
        for (const auto& a : out.pod_sets[i].assignment) {
          (void)index_.add_pods(a.node, job.pod_sets[i].per_pod, -a.count);
        }
      }
      return std::unexpected(placed.error().context("job " + job.name));
    }
    out.pod_sets.push_back(std::move(*placed));
    const PodSetPlacement& p = out.pod_sets.back();
    if (!p.fit) {
      out.fit = false;
      if (out.reason.empty())
        out.reason = (ps.name.empty() ? "pod set" : "pod set " + ps.name) + ": " + p.reason;
      continue;
    }
    for (const auto& a : p.assignment) (void)index_.add_pods(a.node, ps.per_pod, a.count);
  }
  // A gang that did not fully fit takes nothing.
  if (!out.fit) {
    for (std::size_t i = 0; i < out.pod_sets.size(); ++i) {
      if (!out.pod_sets[i].fit) continue;
      for (const auto& a : out.pod_sets[i].assignment) {
        (void)index_.add_pods(a.node, job.pod_sets[i].per_pod, -a.count);
      }
    }
  } else {
    for (const auto& p : out.pod_sets) {
      if (!p.reason.empty()) out.reason = p.reason;
    }
  }
  return out;
}

void PlacementEngine::release(const JobRequest& job, const JobPlacement& placement) {
  if (!placement.fit) return;
  for (std::size_t i = 0; i < placement.pod_sets.size() && i < job.pod_sets.size(); ++i) {
    for (const auto& a : placement.pod_sets[i].assignment) {
      (void)index_.add_pods(a.node, job.pod_sets[i].per_pod, -a.count);
    }
  }
}

}  // namespace hypertopo::scheduler
