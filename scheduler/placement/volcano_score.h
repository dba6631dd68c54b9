// scheduler/placement/volcano_score.h: Volcano's network-topology-aware scores, exactly.
//
// HyperNode-level binpack for a set of pods on domain h (weights w_r per resource):
//   score(h) = 0 if any weighted resource overflows (used_r + req_r > alloc_r), else
//              sum_r w_r * (used_r + req_r) / alloc_r  /  sum_r w_r;  final = 100 * weight * score.
// Normal pods: a node's score fades over tiers, the virtual cluster-top tier included:
//   sum_t fading^(t-1) * s_t / sum_t fading^(t-1), s_t = the tier-t domain's binpack for one pod,
//   or 1.0 where no tier-t domain holds the node.
// Resources with no weight are ignored; a weighted resource that the domain neither has nor is
// asked for is left out of both sums.
//
//   BinpackWeights w;                        // Volcano defaults: cpu 1, memory 1
//   double s = hypernode_binpack_score(index, rack, {{"cpu", 8000}}, w);   // 0..1
//   double node = normal_pod_node_score(index, node_id, {{"cpu", 1000}}, w);
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scheduler/index/topology_index.h"

namespace hypertopo::scheduler {

struct BinpackWeights {
  int weight = 1;
  std::map<std::string, int> resources{{"cpu", 1}, {"memory", 1}};
  bool normal_pod_enable = true;
  double fading = 0.8;
};

// Binpack score in [0, 1] of placing `request` (the total of the pods) on `domain`.
double hypernode_binpack_score(const TopologyIndex& index, int domain, const ResourceAmounts& request,
                               const BinpackWeights& weights);

// The fading-tier score in [0, 1] of one pod with `request` on `node`.
double normal_pod_node_score(const TopologyIndex& index, int node, const ResourceAmounts& request,
                             const BinpackWeights& weights);

// normal_pod_node_score for many nodes and one pod: each domain's binpack score is computed once
// and the weighted resources are resolved to the index's ids once, so scoring every node of a large
// cluster costs one pass over its domains plus a walk up each node's branch. Scores are equal to
// normal_pod_node_score's. Holds references: `index`, `request` and `weights` must outlive it.
class NormalPodScorer {
 public:
  NormalPodScorer(const TopologyIndex& index, const ResourceAmounts& request, const BinpackWeights& weights);
  double score(int node);

 private:
  double domain_score(int domain);

  struct Weighted {
    int resource = -1;  // the index's id; -1 when no node offers it
    std::int64_t request = 0;
    int weight = 0;
  };
  const TopologyIndex& index_;
  std::vector<Weighted> weighted_;    // in the weights' order, as hypernode_binpack_score sums them
  std::vector<double> tier_weight_;   // [t] = fading^(t-1), t = 1 .. max tier + 1
  std::vector<double> domain_score_;  // NaN until computed
  std::vector<int> branch_;           // scratch: the node's domains, lowest first
};

}  // namespace hypertopo::scheduler
