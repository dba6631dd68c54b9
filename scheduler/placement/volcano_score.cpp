#include "scheduler/placement/volcano_score.h"

#include <cmath>
#include <limits>

namespace hypertopo::scheduler {
namespace {

// Binpack over explicit allocatable/used figures; `alloc`/`used` return 0 for unknown resources.
template <typename Alloc, typename Used>
double binpack(const ResourceAmounts& request, const BinpackWeights& weights, Alloc alloc, Used used) {
  double numerator = 0.0;
  double denominator = 0.0;
  for (const auto& [name, w] : weights.resources) {
    if (w <= 0) continue;
    auto it = request.find(name);
    const std::int64_t req = it == request.end() ? 0 : it->second;
    const std::int64_t a = alloc(name);
    const std::int64_t u = used(name);
    if (a <= 0) {
      if (req > 0) return 0.0;  // asked for what the domain does not have: overflow
      continue;
    }
    if (u + req > a) return 0.0;
    numerator += static_cast<double>(w) * static_cast<double>(u + req) / static_cast<double>(a);
    denominator += w;
  }
  return denominator > 0.0 ? numerator / denominator : 0.0;
}

}  // namespace

double hypernode_binpack_score(const TopologyIndex& index, int domain, const ResourceAmounts& request,
                               const BinpackWeights& weights) {
  return binpack(
      request, weights, [&](const std::string& r) { return index.domain_allocatable(domain, r); },
      [&](const std::string& r) { return index.domain_used(domain, r); });
}

NormalPodScorer::NormalPodScorer(const TopologyIndex& index, const ResourceAmounts& request,
                                 const BinpackWeights& weights)
    : index_(index), domain_score_(index.domains().size(), std::numeric_limits<double>::quiet_NaN()) {
  for (const auto& [name, w] : weights.resources) {
    if (w <= 0) continue;
    auto it = request.find(name);
    weighted_.push_back({index.resource_id(name), it == request.end() ? 0 : it->second, w});
  }
  const int top = index.max_tier() + 1;
  tier_weight_.assign(static_cast<std::size_t>(top) + 1, 0.0);
  for (int t = 1; t <= top; ++t) tier_weight_[static_cast<std::size_t>(t)] = std::pow(weights.fading, t - 1);
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
    if (a <= 0) {
      if (r.request > 0) {
        result = 0.0;
        break;
      }
      continue;
    }
    if (u + r.request > a) {
      result = 0.0;
      break;
    }
    numerator += static_cast<double>(r.weight) * static_cast<double>(u + r.request) / static_cast<double>(a);
    denominator += r.weight;
  }
  if (result < 0.0) result = denominator > 0.0 ? numerator / denominator : 0.0;
  memo = result;
  return result;
}

double NormalPodScorer::score(int node) {
  // The domains holding the node, lowest first; when two share a tier the higher one counts, as in
  // normal_pod_node_score's map.
  branch_.clear();
  for (int d = index_.node(node).domain; d >= 0; d = index_.domain(d).parent) branch_.push_back(d);
  double total = 0.0;
  double weight_sum = 0.0;
  const int top = static_cast<int>(tier_weight_.size()) - 1;
  for (int t = 1; t <= top; ++t) {
    int chosen = -1;
    for (int d : branch_) {
      if (index_.domain(d).tier == t) chosen = d;
    }
    const double s = chosen >= 0 ? domain_score(chosen) : 1.0;
    total += tier_weight_[static_cast<std::size_t>(t)] * s;
    weight_sum += tier_weight_[static_cast<std::size_t>(t)];
  }
  return weight_sum > 0.0 ? total / weight_sum : 0.0;
}

double normal_pod_node_score(const TopologyIndex& index, int node, const ResourceAmounts& request,
                             const BinpackWeights& weights) {
  // The domain holding the node at each tier, from the lowest to the virtual cluster top.
  std::map<int, int> by_tier;
  for (int d = index.node(node).domain; d >= 0; d = index.domain(d).parent) by_tier[index.domain(d).tier] = d;
  const int top = index.max_tier() + 1;
  double total = 0.0;
  double weight_sum = 0.0;
  for (int t = 1; t <= top; ++t) {
    const double tier_weight = std::pow(weights.fading, t - 1);
    double s = 1.0;
    if (auto it = by_tier.find(t); it != by_tier.end())
      s = hypernode_binpack_score(index, it->second, request, weights);
    total += tier_weight * s;
    weight_sum += tier_weight;
  }
  return weight_sum > 0.0 ? total / weight_sum : 0.0;
}

}  // namespace hypertopo::scheduler
