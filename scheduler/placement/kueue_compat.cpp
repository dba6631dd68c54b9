#include "scheduler/placement/kueue_compat.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "scheduler/placement/kueue_balanced_placement.h"
#include "scheduler/placement/kueue_fit.h"
#include "scheduler/placement/kueue_leader_workers.h"

namespace hypertopo::scheduler {
namespace {

KueueAssignment build_assignment(const KueueDomainTree& tree,
                                 std::vector<std::pair<std::vector<std::string>, std::int32_t>> entries) {
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  KueueAssignment out;
  const std::size_t from = tree.lowest_is_node() ? tree.levels().size() - 1 : 0;
  out.levels.assign(tree.levels().begin() + static_cast<long>(from), tree.levels().end());
  for (auto& [values, cnt] : entries) {
    if (cnt == 0) continue;
    out.domains.push_back(KueueDomainCount{
        std::vector<std::string>(values.begin() + static_cast<long>(from), values.end()), cnt});
  }
  return out;
}

// Resolves the workers' annotations into fit.request; Kueue's validation message when they are
// invalid (kueue_request_fault names the annotation for each of these).
std::optional<std::string> resolve_request(KueueFitState& fit, const KueuePodSet& workers, bool has_leader) {
  const KueueDomainTree& tree = fit.tree;
  KueueFitRequest& req = fit.request;
  req.count = workers.count;
  if (has_leader) req.leader_count = 1;
  const bool has_layers = !workers.slice_constraints.empty();
  if (has_layers) {
    req.slice_size = workers.slice_constraints.front().size;
  } else if (!workers.slice_required_topology) {
    req.slice_size = 1;
  } else if (!workers.slice_size) {
    return "slice topology requested, but slice size not provided";
  } else {
    req.slice_size = *workers.slice_size;
  }
  const bool slice_only =
      !workers.required && !workers.preferred && (workers.slice_required_topology || has_layers);
  req.required = workers.required.has_value();
  req.unconstrained = workers.unconstrained || workers.implied || slice_only;
  std::optional<std::string> key;
  if (workers.required) {
    key = workers.required;
  } else if (workers.preferred) {
    key = workers.preferred;
  } else if (slice_only) {
    key = tree.levels().front();
  } else if (workers.unconstrained || workers.implied) {
    key = tree.levels().back();
  }
  if (!key) return "topology level not specified";
  req.requested_level = tree.level_of(*key);
  if (req.requested_level < 0) return "no requested topology level: " + *key;
  std::string slice_key = workers.slice_required_topology ? *workers.slice_required_topology
                          : has_layers                    ? workers.slice_constraints.front().topology
                                                          : tree.levels().back();
  req.slice_level = tree.level_of(slice_key);
  if (req.slice_level < 0) return "no requested topology level for slices: " + slice_key;
  if (req.requested_level > req.slice_level) {
    return "podset slice topology " + slice_key + " is above the podset topology " + *key;
  }
  if (fit.gates.multi_layer_topology && workers.slice_constraints.size() > 1) {
    std::int32_t prev_size = req.slice_size;
    int prev_level = req.slice_level;
    for (std::size_t i = 1; i < workers.slice_constraints.size(); ++i) {
      const auto& layer = workers.slice_constraints[i];
      int lvl = tree.level_of(layer.topology);
      if (lvl < 0) return "no requested topology level for additional slice layer: " + layer.topology;
      if (lvl <= prev_level) {
        return "additional slice layer topology " + layer.topology + " must be at a lower level than " +
               tree.levels()[static_cast<std::size_t>(prev_level)];
      }
      if (layer.size <= 0 || prev_size % layer.size != 0) {
        return "additional slice layer size " + std::to_string(layer.size) +
               " must evenly divide parent layer size " + std::to_string(prev_size);
      }
      for (int l = prev_level + 1; l <= lvl; ++l) req.slice_size_at_level[l] = layer.size;
      prev_size = layer.size;
      prev_level = lvl;
    }
    if (!req.slice_size_at_level.empty()) req.multi_layer = workers.slice_constraints;
  }
  if (req.slice_size <= 0) return "slice topology requested, but slice size not provided";
  return std::nullopt;
}

// One group (workers, optional leader) on a fresh fit state; fills `out` by pod set name and
// returns "" when it fits, else Kueue's reason.
std::string place_group(KueueFitState& fit, const KueuePodSet& workers, const KueuePodSet* leader,
                        const std::map<std::string, KueueAmounts>& assumed,
                        std::map<std::string, KueueAssignment>& out) {
  KueueAmounts requests = workers.per_pod;
  requests["pods"] += 1;
  KueueAmounts leader_requests;
  if (leader != nullptr) {
    leader_requests = leader->per_pod;
    leader_requests["pods"] += 1;
  }
  if (auto invalid = resolve_request(fit, workers, leader != nullptr)) return *invalid;
  const KueueFitRequest& req = fit.request;

  fit.fill_in_counts(requests, leader != nullptr ? &leader_requests : nullptr, assumed, workers);

  std::vector<int> chosen;
  int chosen_level = 0;
  bool balanced = false;
  if (fit.gates.balanced_placement && !req.required && !req.unconstrained) {
    if (auto placement = kueue_place_balanced(fit)) {
      balanced = true;
      chosen = std::move(placement->domains);
      chosen_level = placement->level;
    }
  }
  if (!balanced) {
    auto [level, domains, reason] = fit.find_level_with_fit_domains(req.requested_level);
    if (!reason.empty()) return reason;
    chosen_level = level;
    chosen = domains;
  }
  // Down the tree: whole slices to the slice level, then pods (or the inner layers' slices).
  chosen = fit.update_counts_to_minimum(chosen, req.count, req.leader_count, req.slice_size,
                                        req.unconstrained, true);
  int current = chosen_level;
  const int last = fit.tree.level_count() - 1;
  for (; current < std::min(last, req.slice_level) && !balanced; ++current) {
    chosen = fit.update_counts_to_minimum(fit.sorted(fit.lower_level(chosen), req.unconstrained), req.count,
                                          req.leader_count, req.slice_size, req.unconstrained, true);
  }
  for (; current < last; ++current) {
    std::int32_t size_here = req.slice_size;
    if (current >= req.slice_level) {
      size_here = 1;
      if (auto it = req.slice_size_at_level.find(current + 1); it != req.slice_size_at_level.end())
        size_here = it->second;
    }
    std::vector<int> next;
    for (int d : chosen) {
      std::vector<int> kids = fit.sorted(fit.at(d).children, req.unconstrained);
      if (size_here > 1) {
        for (int c : kids) {
          fit.at(c).slice_state = fit.at(c).state / size_here;
          fit.at(c).slice_state_with_leader = fit.at(c).state_with_leader / size_here;
        }
      }
      std::vector<int> add = fit.update_counts_to_minimum(kids, fit.at(d).state, fit.at(d).leader_state,
                                                          size_here, req.unconstrained, size_here > 1);
      next.insert(next.end(), add.begin(), add.end());
    }
    chosen = next;
  }
  std::vector<std::pair<std::vector<std::string>, std::int32_t>> worker_entries, leader_entries;
  for (int d : chosen) {
    if (leader != nullptr && fit.at(d).leader_state > 0)
      leader_entries.emplace_back(fit.values(d), fit.at(d).leader_state);
    if (leader == nullptr || fit.at(d).state > 0) worker_entries.emplace_back(fit.values(d), fit.at(d).state);
  }
  if (leader != nullptr) out[leader->name] = build_assignment(fit.tree, leader_entries);
  out[workers.name] = build_assignment(fit.tree, worker_entries);
  return "";
}

}  // namespace

KueueTopologySnapshot::KueueTopologySnapshot(std::vector<std::string> levels,
                                             const std::vector<NodeSpec>& nodes,
                                             const std::vector<BoundPod>& non_tas_pods,
                                             const std::map<std::string, std::string>& flavor_labels,
                                             std::string topology_name)
    : tree_(std::move(levels), nodes, non_tas_pods, flavor_labels),
      topology_name_(std::move(topology_name)) {}

std::vector<KueuePodSetResult> KueueTopologySnapshot::find_assignments(
    const std::vector<KueuePodSet>& pod_sets, const KueueFeatureGates& gates) {
  std::vector<KueuePodSetResult> results;
  std::map<std::string, KueueAmounts> assumed;  // usage of the pod sets placed so far, by domain id
  for (const auto& group : kueue_pod_set_groups(pod_sets)) {
    std::map<std::string, KueueAssignment> assignments;
    std::string reason;
    if (tree_.levels().empty()) {
      reason = "topology level not specified";
    } else {
      KueueFitState fit(tree_, gates, topology_name_);
      reason = place_group(fit, *group.workers, group.leader, assumed, assignments);
    }
    for (std::size_t m : group.members) {
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
    for (std::size_t m : group.members) {
      const auto& ps = pod_sets[m];
      auto it = assignments.find(ps.name);
      if (it == assignments.end()) continue;
      for (const auto& d : it->second.domains) {
        auto& usage = assumed[kueue_domain_id(d.values)];
        for (const auto& [r, v] : ps.per_pod) usage[r] += v * d.count;
        usage["pods"] += d.count;
      }
    }
  }
  return results;
}

}  // namespace hypertopo::scheduler
