// scheduler/placement/volcano_score.h: Volcano's network-topology-aware scores, exactly.
//
// Follows volcano-sh/volcano pkg/scheduler/plugins/network-topology-aware/network_topology_aware.go.
// HyperNode-level binpack for a set of pods on domain h (getPodHyperNodeBinPackingScore for one pod,
// getSubJobHyperNodeBinPackingScore for a gang):
//   over the resources the pods request (an amount of at least 1 in our units, which is Volcano's
//   "at least 0.1" of its millicores, bytes and milli-units) that carry a weight w_r:
//   score(h) = 0 if any of them overflows (used_r + req_r > alloc_r), else
//              sum_r w_r * (used_r + req_r) / alloc_r  /  sum_r w_r  (0 when the weights sum to 0);
//   final = 100 * weight * score. A weighted resource the pods do not ask for never counts.
// Normal pods (batchNodeOrderFnForNormalPods): a node's score fades over the tiers from the lowest
// tier any domain has (not always 1) up to the virtual cluster-top tier:
//   sum_t fading^(t-1) * s_t / sum_t fading^(t-1), s_t = the tier-t domain's binpack for one pod,
//   or 1.0 where no tier-t domain holds the node.
// A gang with pods already running (batchNodeOrderFnForNetworkAwarePods): a node scores by the tier
// of the lowest domain common to its lowest-tier domain and the gang's allocated domain, ties at the
// best score broken by the share of the gang's tasks under the node's lowest-tier domain.
//
//   BinpackWeights w;                        // Volcano defaults: cpu 1, memory 1
//   double s = hypernode_binpack_score(index, rack, {{"cpu", 8000}}, w);   // 0..1
//   double node = normal_pod_node_score(index, node_id, {{"cpu", 1000}}, w);
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "scheduler/index/topology_index.h"

namespace hypertopo::scheduler {

struct BinpackWeights {
  // Go ints (64 bits): a weight is as large as Volcano's configuration can write it.
  std::int64_t weight = 1;
  // Resources that carry a weight; cpu and memory always do in Volcano (getBinPackWeight). A weight
  // of 0 still counts the resource's overflow, as there.
  std::map<std::string, std::int64_t> resources{{"cpu", 1}, {"memory", 1}};
  bool normal_pod_enable = true;
  double fading = 0.8;
};

// Binpack score in [0, 1] of placing `request` (the total of the pods) on `domain`.
double hypernode_binpack_score(const TopologyIndex& index, int domain, const ResourceAmounts& request,
                               const BinpackWeights& weights);

// The fading-tier score in [0, 1] of one pod with `request` on `node`.
double normal_pod_node_score(const TopologyIndex& index, int node, const ResourceAmounts& request,
                             const BinpackWeights& weights);

// The lowest tier any domain of the index has (the cluster top's when there is no other): the
// first tier Volcano's parseHyperNodesTiers lists.
int lowest_tier(const TopologyIndex& index);

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
    std::int64_t weight = 0;
  };
  const TopologyIndex& index_;
  std::vector<Weighted> weighted_;  // the requested, weighted resources, as hypernode_binpack_score sums them
  int first_tier_ = 1;              // lowest_tier(index)
  std::vector<double> tier_weight_;   // [t] = fading^(t-1), t = first_tier_ .. max tier + 1
  double weight_sum_ = 0.0;           // of tier_weight_ from first_tier_ up
  std::vector<double> domain_score_;  // NaN until computed
};

// Volcano's node scores for a pod of a gang whose pods already run (its allocated HyperNode is
// `allocated`; -1 when it has none, and then every node scores 0). `task_nodes` holds the node of
// every task of the gang, -1 for a pending one (its size is the gang's task count). One score per
// candidate node, scaled as Volcano scales it: 100 * weight * (tier score [+ task share]).
std::vector<double> allocated_gang_node_scores(const TopologyIndex& index, int allocated,
                                               std::span<const int> candidates,
                                               std::span<const int> task_nodes,
                                               const BinpackWeights& weights);

}  // namespace hypertopo::scheduler
