// The cluster view's checks on a snapshot of its index (cluster_view.h ViewSnapshot), for the verbs
// that read it on their own threads.
#include "scheduler/extender/cluster_view.h"
#include "scheduler/index/node_affinity.h"

namespace hypertopo::scheduler {

ClusterView::ResolvedRequest ClusterView::resolve(const TopologyIndex& index,
                                                  const ResourceAmounts& request) {
  ResolvedRequest out;
  for (const auto& [name, amount] : request) {
    if (amount <= 0) continue;
    const int r = index.resource_id(name);
    if (r < 0) {
      out.unknown = true;  // no node has any of it
      continue;
    }
    out.amounts.emplace_back(r, amount);
  }
  if (!request.contains("pods")) out.pods = index.resource_id("pods");
  return out;
}

bool ClusterView::fits(const TopologyIndex& index, int node, const ResolvedRequest& request,
                       const PodSetRequest* ps) {
  if (request.unknown) return false;
  const IndexNode& n = index.node(node);
  if (!n.spec.ready || n.spec.unschedulable) return false;
  // Most pods name no node and most nodes carry no taint: then there is nothing more to check (a
  // filter asks this of every one of 6,000 nodes).
  const bool constrained =
      ps && (!ps->node_selector.empty() || ps->affinity.has_required || !n.spec.taints.empty());
  if (constrained &&
      !check_node_constraints(n.spec, ps->node_selector, ps->affinity, ps->tolerations).passed())
    return false;
  if (!ps) {
    for (const auto& taint : n.spec.taints) {
      if (taint.effect == "NoSchedule" || taint.effect == "NoExecute") return false;
    }
  }
  for (const auto& [r, amount] : request.amounts) {
    if (index.node_allocatable(node, r) - index.node_used(node, r) < amount) return false;
  }
  if (request.pods >= 0 &&
      index.node_allocatable(node, request.pods) - index.node_used(node, request.pods) < 1)
    return false;
  return true;
}

}  // namespace hypertopo::scheduler
