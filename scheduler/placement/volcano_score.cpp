#include "scheduler/placement/volcano_score.h"

#include <cmath>

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
