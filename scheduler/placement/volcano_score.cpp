#include "scheduler/placement/volcano_score.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hypertopo::scheduler {
namespace {

// Whether Volcano counts `amount` of `name` as requested: Resource.ResourceNames() lists a resource
// whose amount is at least 0.1 in its units (millicores, bytes, milli-units of scalars), which for
// our whole amounts is at least 1. `pods` never is: a task's Resreq is built from its containers'
// requests (GetPodResourceWithoutInitContainers), where no pod count appears; the engine's
// pods-per-set figure is ours.
bool requested(const std::string& name, std::int64_t amount) { return amount >= 1 && name != "pods"; }

// Binpack over explicit allocatable/used figures; `alloc`/`used` return 0 for unknown resources.
template <typename Alloc, typename Used>
double binpack(const ResourceAmounts& request, const BinpackWeights& weights, Alloc alloc, Used used) {
  double numerator = 0.0;
  double denominator = 0.0;
  for (const auto& [name, req] : request) {
    if (!requested(name, req)) continue;
    auto w = weights.resources.find(name);
    if (w == weights.resources.end()) continue;
    const std::int64_t a = alloc(name);
    const std::int64_t u = used(name);
    if (u + req > a) return 0.0;  // also a resource the domain does not have at all
    numerator += static_cast<double>(w->second) * static_cast<double>(u + req) / static_cast<double>(a);
    denominator += static_cast<double>(w->second);
  }
  return denominator > 0.0 ? numerator / denominator : 0.0;
}

// The tier weights fading^(t-1) for t = first .. top (index t; lower entries unused).
std::vector<double> tier_weights(int first, int top, double fading) {
  std::vector<double> w(static_cast<std::size_t>(top) + 1, 0.0);
  // std::pow(0, 0) is 1, as Go's math.Pow: a fading of 0 leaves tier 1 alone weighing.
  for (int t = first; t <= top; ++t) w[static_cast<std::size_t>(t)] = std::pow(fading, t - 1);
  return w;
}

// The lowest common domain of two domains (the root at worst).
int common_domain(const TopologyIndex& index, int a, int b) {
  std::vector<int> up;
  for (int d = a; d >= 0; d = index.domain(d).parent) up.push_back(d);
  for (int d = b; d >= 0; d = index.domain(d).parent) {
    if (std::find(up.begin(), up.end(), d) != up.end()) return d;
  }
  return index.root();
}

// The node's domain of the lowest tier (Volcano's FindHyperNodeForNode looks only there); -1 when no
// domain of that tier holds it.
int lowest_tier_domain(const TopologyIndex& index, int node, int first_tier) {
  for (int d = index.node(node).domain; d >= 0; d = index.domain(d).parent) {
    if (index.domain(d).tier == first_tier) return d;
  }
  return -1;
}

bool holds(const TopologyIndex& index, int domain, int node) {
  for (int d = index.node(node).domain; d >= 0; d = index.domain(d).parent) {
    if (d == domain) return true;
  }
  return false;
}

}  // namespace

int lowest_tier(const TopologyIndex& index) { return index.lowest_tier(); }

double hypernode_binpack_score(const TopologyIndex& index, int domain, const ResourceAmounts& request,
                               const BinpackWeights& weights) {
  return binpack(
      request, weights, [&](const std::string& r) { return index.domain_allocatable(domain, r); },
      [&](const std::string& r) { return index.domain_used(domain, r); });
}

NormalPodScorer::NormalPodScorer(const TopologyIndex& index, const ResourceAmounts& request,
                                 const BinpackWeights& weights)
    : index_(index), domain_score_(index.domains().size(), std::numeric_limits<double>::quiet_NaN()) {
  for (const auto& [name, req] : request) {
    if (!requested(name, req)) continue;
    auto w = weights.resources.find(name);
    if (w == weights.resources.end()) continue;
    weighted_.push_back({index.resource_id(name), req, w->second});
  }
  first_tier_ = lowest_tier(index);
  tier_weight_ = tier_weights(first_tier_, index.domain(index.root()).tier, weights.fading);
  for (int t = first_tier_; t < static_cast<int>(tier_weight_.size()); ++t)
    weight_sum_ += tier_weight_[static_cast<std::size_t>(t)];
}

// hypernode_binpack_score's sum, over the resolved resources.
double NormalPodScorer::domain_score(int domain) {
  double& memo = domain_score_[static_cast<std::size_t>(domain)];
  if (!std::isnan(memo)) return memo;
  double numerator = 0.0;
  double denominator = 0.0;
  double result = -1.0;
  for (const Weighted& r : weighted_) {
    const std::int64_t a = r.resource < 0 ? 0 : index_.domain_allocatable(domain, r.resource);
    const std::int64_t u = r.resource < 0 ? 0 : index_.domain_used(domain, r.resource);
    if (u + r.request > a) {
      result = 0.0;
      break;
    }
    numerator += static_cast<double>(r.weight) * static_cast<double>(u + r.request) / static_cast<double>(a);
    denominator += static_cast<double>(r.weight);
  }
  if (result < 0.0) result = denominator > 0.0 ? numerator / denominator : 0.0;
  memo = result;
  return result;
}

double NormalPodScorer::score(int node) {
  // The domain holding the node at each tier, lowest first (when two share a tier the higher one
  // counts, as in normal_pod_node_score's map), read off the index's table rather than its tree.
  const std::span<const int> at_tier = index_.tier_domains(node);
  double total = 0.0;
  for (std::size_t k = 0; k < at_tier.size(); ++k) {
    const double s = at_tier[k] >= 0 ? domain_score(at_tier[k]) : 1.0;
    total += tier_weight_[static_cast<std::size_t>(first_tier_) + k] * s;
  }
  return weight_sum_ > 0.0 ? total / weight_sum_ : 0.0;
}

double normal_pod_node_score(const TopologyIndex& index, int node, const ResourceAmounts& request,
                             const BinpackWeights& weights) {
  // The domain holding the node at each tier, from the lowest tier present to the virtual cluster top.
  std::map<int, int> by_tier;
  for (int d = index.node(node).domain; d >= 0; d = index.domain(d).parent) by_tier[index.domain(d).tier] = d;
  const int first = lowest_tier(index);
  const int top = index.domain(index.root()).tier;
  const std::vector<double> tier_weight = tier_weights(first, top, weights.fading);
  double total = 0.0;
  double weight_sum = 0.0;
  for (int t = first; t <= top; ++t) {
    double s = 1.0;
    if (auto it = by_tier.find(t); it != by_tier.end())
      s = hypernode_binpack_score(index, it->second, request, weights);
    total += tier_weight[static_cast<std::size_t>(t)] * s;
    weight_sum += tier_weight[static_cast<std::size_t>(t)];
  }
  return weight_sum > 0.0 ? total / weight_sum : 0.0;
}

std::vector<double> allocated_gang_node_scores(const TopologyIndex& index, int allocated,
                                               std::span<const int> candidates,
                                               std::span<const int> task_nodes,
                                               const BinpackWeights& weights) {
  std::vector<double> scores(candidates.size(), 0.0);
  if (allocated < 0) return scores;  // the gang's first pods: Volcano leaves every node unscored
  const int min_tier = lowest_tier(index);
  const int max_tier = index.domain(index.root()).tier;
  // scoreHyperNodeWithTier: (maxTier - tier) / (maxTier - minTier), 1 when there is one tier.
  auto tier_score = [&](int tier) {
    if (min_tier == max_tier) return 1.0;
    if (tier < min_tier || tier > max_tier) return 0.0;
    return static_cast<double>(max_tier - tier) / static_cast<double>(max_tier - min_tier);
  };
  std::vector<int> home(candidates.size(), -1);
  double best = -1.0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    home[i] = candidates[i] < 0 ? -1 : lowest_tier_domain(index, candidates[i], min_tier);
    double s = 0.0;  // networkTopologyAwareScore: a node in no lowest-tier HyperNode scores 0
    if (home[i] == allocated) {
      s = 1.0;
    } else if (home[i] >= 0) {
      s = tier_score(index.domain(common_domain(index, home[i], allocated)).tier);
    }
    scores[i] = s;
    best = std::max(best, s);
  }
  // scoreWithTaskNum: when several nodes share the best score, each gains the share of the gang's
  // tasks (pending ones counted in the whole) that run under its lowest-tier HyperNode.
  const auto tied = static_cast<std::size_t>(std::count(scores.begin(), scores.end(), best));
  if (tied > 1 && !task_nodes.empty()) {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (scores[i] != best || home[i] < 0) continue;
      std::size_t here = 0;
      for (int n : task_nodes) {
        if (n >= 0 && holds(index, home[i], n)) ++here;
      }
      scores[i] += static_cast<double>(here) / static_cast<double>(task_nodes.size());
    }
  }
  for (double& s : scores) s *= 100.0 * static_cast<double>(weights.weight);
  return scores;
}

}  // namespace hypertopo::scheduler
