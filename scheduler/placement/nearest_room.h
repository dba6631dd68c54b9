// scheduler/placement/nearest_room.h: the node nearest a domain with room for one more pod.
//
// When a pod of a running gang must go elsewhere (its node failed, was cordoned or tainted, or
// kube-scheduler did not offer it; a pod joins an elastic gang), the gang stays together: the
// search looks in the start domain's subtree, then its parent's, and so on up to the limit (the
// gang's constraint domain), never beyond (Kueue's TASFailedNodeReplacement keeps a replacement in
// the domain the same way). Inside one level, kube-scheduler's own preferences break the tie:
// preferred node affinity (higher first), then untolerated PreferNoSchedule taints (fewer first);
// then the lowest domain holding more of the gang's pods (Volcano's scoreWithTaskNum), then tree
// order. The extender's gang book and `simulate`'s node failures both move pods with it.
//
//   std::unordered_map<int, int> mates{{leaf, 3}};          // the gang's pods per lowest domain
//   int n = nearest_room(index, ps, {.start = leaf, .limit = spine,
//                                    .usable = [&](int n) { return has_room(n); }, .mates = &mates});
#pragma once

#include <functional>
#include <unordered_map>

#include "scheduler/index/topology_index.h"
#include "scheduler/placement/job_request.h"

namespace hypertopo::scheduler {

struct RoomSearch {
  int start = -1;  // the domain searched first
  int limit = -1;  // the widest domain searched (an ancestor of start, or start itself)
  int exclude = -1;
  // Whether node n can take the pod now: room for its request, kube-scheduler's node filters.
  std::function<bool(int)> usable;
  const std::unordered_map<int, int>* mates = nullptr;  // the gang's pods per lowest domain
};

// The node, or -1 when no node inside the limit is usable.
int nearest_room(const TopologyIndex& index, const PodSetRequest& ps, const RoomSearch& search);

}  // namespace hypertopo::scheduler
