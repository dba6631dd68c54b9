// scheduler/placement/around_bound.h: the rest of a gang planned around its pods already bound.
//
// The cluster is the source of truth: pods of a gang already running keep their nodes and ranks,
// and the missing pods go inside the innermost domain that holds the bound ones, widening one
// parent at a time only as far as the gang's required tier allows (a preferred or no constraint
// may widen to the root). The extender's gang book plans this way when it meets a gang whose pods
// are partly bound (a restart without the state file, another replica's binds, a gang that grew),
// and `place` does the same for a job whose pods are partly running, so both answer alike.
//
// Ranks: a bound pod's rank comes from its index keys (scheduler/input/pod_request.h); a pod
// without one, or whose rank another bound pod took first, gets the lowest free rank in the order
// given (arrival order). The rest fill the free ranks lowest first, in the engine's rank order.
// Preemption is the caller's: when the rest do not fit, `rest` and `widest` are what a victim
// planner scoped to the bound pods' domain needs, and add_rest() numbers what it placed.
//
//   std::vector<BoundGangPod> bound{{.node = "a1", .rank = 0}, {.node = "a2", .rank = 1}};
//   auto around = place_around_bound(index, engine, request, bound, /*missing=*/6);
//   if (around && !around->fit) std::cout << around_bound_refusal(index, *around);
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "errors/error.h"
#include "scheduler/index/node_affinity.h"
#include "scheduler/index/topology_index.h"
#include "scheduler/placement/job_request.h"
#include "scheduler/placement/placement_engine.h"

namespace hypertopo::scheduler {

struct BoundGangPod {
  std::string node;        // a node of the index
  std::int32_t rank = -1;  // from its index keys; -1: it has none
};

struct AroundBoundSlot {
  std::int32_t rank = 0;
  std::string node;
  std::vector<std::string> domain_path;
  int bound = -1;         // the bound pod's position in the input; -1 for a pod of the rest
  bool by_index = false;  // a bound pod ranked by its index keys (else in arrival order)
};

struct AroundBound {
  std::vector<AroundBoundSlot> slots;  // by rank: the bound pods, then the rest once placed
  std::int32_t bound = 0;
  std::int32_t missing = 0;
  int common = -1;     // the innermost domain holding the bound pods (the root when spread)
  int widest = -1;     // the widest domain the gang's constraint allows around them
  PodSetRequest rest;  // the missing pods' request as planned (count = missing, level = widest's tier)
  bool fit = false;    // nothing missing, or the rest placed
  std::optional<PodSetPlacement> placed;  // the rest's placement, when it fit
  std::string why;  // when it did not: the engine's reason in the innermost domain tried
};

// `request` is the gang's pod set (its count is the gang's size); the engine places on `index`,
// and a placed rest stays on it as the engine leaves it. An Error: a bound pod's node is not in
// the index, or the engine refused the request.
std::expected<AroundBound, Error> place_around_bound(const TopologyIndex& index, PlacementEngine& engine,
                                                     const PodSetRequest& request,
                                                     std::span<const BoundGangPod> bound,
                                                     std::int32_t missing);

// The deepest domain on every path (root first, as IndexDomain paths are): the root when the paths
// share none or none is given. A name the index no longer has is passed over for its parent.
int deepest_common_domain(const TopologyIndex& index, std::span<const std::vector<std::string>* const> paths);

// Numbers a placement of the rest (the engine's, or one made with victims) into the free ranks.
void add_rest(AroundBound& around, const PodSetPlacement& placed);

// An elastic gang (Volcano's minAvailable, a PodGroup's minMember below its pods) is placed for its
// minimum alone, then grows one pod at a time: Volcano's allocate action
// (volcano-sh/volcano pkg/scheduler/actions/allocate/allocate.go, allocateForJob ->
// allocateResourcesForTasks) stops a job's tasks at JobReady when it picks the gang's HyperNode,
// commits, and puts the job back for the rest, which later rounds place inside the search root
// network_topology_aware.go's hyperNodeGradientFn gives a running job (hard: the highest ancestor of
// its HyperNode within highestTierAllowed, never the cluster; soft: the cluster), nearest first
// (nearest_room.h). `job_domain` is the domain the minimum was planned in (-1: the cluster).
// Each rank of `ranks` in order gets a slot in `around` and its requests on `index`, or none; the
// ranks left without room are returned. The extender's gang book grows a plan by the same rule as
// each pod beyond the minimum comes.
std::vector<std::int32_t> grow_elastic(TopologyIndex& index, AroundBound& around,
                                       const PodSetRequest& request, int job_domain,
                                       std::span<const std::int32_t> ranks);

// An elastic gang as a whole: its minimum (request.min_count) placed by the engine, or around its
// bound pods when it has some, then grow_elastic() for every other rank. `around.fit` false: the
// minimum does not fit (`around.why` says why).
struct ElasticPlan {
  AroundBound around;
  std::vector<std::int32_t> left;  // the ranks beyond the minimum that found no room
};
std::expected<ElasticPlan, Error> place_elastic(TopologyIndex& index, PlacementEngine& engine,
                                                const PodSetRequest& request,
                                                std::span<const BoundGangPod> bound);

// A gang of several pod sets (KAI or Volcano sub-groups, a KAI leader of its own spec) whose pods
// partly run. The rule both doors follow:
//   - bound pods keep their nodes; within its pod set a bound pod takes the lowest free rank in the
//     order given, the rest fill the other ranks;
//   - the gang's domain is the innermost one holding all its bound pods; the gang may widen from
//     there only within its own required level (a preferred or no level: up to the cluster);
//   - a sub-group (the gang's own pods count as one, named "") with bound pods plans its rest in the
//     innermost domain holding them, widening one parent at a time only within the tier its own
//     required level, its parents' and its pod sets' allow, and never past the gang's widest domain;
//   - a sub-group with no pod bound is placed inside the gang's domain, widening as the gang may,
//     each of its pod sets inside one domain of its required level (the sub-group's, else its own).
// Sub-groups with bound pods are planned first, by name, then the others in the job's order.
// This is Volcano's search root for a job or sub-job that has an allocated HyperNode
// (volcano-sh/volcano pkg/scheduler/plugins/network-topology-aware: hyperNodeGradientForJobFn and
// hyperNodeGradientForSubJobFn start from JobInfo.AllocatedHyperNode / SubJobInfo.AllocatedHyperNode,
// widened by getHighestAllowedHyperNode to the highest ancestor within highestTierAllowed, and a
// sub-job's root must lie inside its job's), searched nearest first as place_around_bound does, and
// KAI-Scheduler's allocation of a running PodGroup, which places only the tasks still to allocate
// (kai-scheduler pkg/scheduler/plugins/topology/job_filtering.go: podgroup_info.GetTasksToAllocate),
// the running ones keeping their nodes. Elastic gangs of several pod sets are not planned here.
struct GangBoundPod {
  std::string node;
  std::string sub_group;     // "" = the gang's own pods
  ResourceAmounts requests;  // picks its pod set among its sub-group's (the first when none asks alike)
};

struct GangAroundBound {
  JobRequest job;                     // the gang as planned: each pod set counts its bound pods
  std::vector<AroundBound> pod_sets;  // one per job.pod_sets: its slots (bound ones index `bound`)
  std::int32_t bound = 0;
  std::int32_t missing = 0;
  int common = -1;  // the innermost domain holding every bound pod
  int widest = -1;  // the widest domain the gang's constraint allows around them
  bool fit = false;
  std::string why;  // when it did not fit: the sub-group and the engine's reason
};

// `job` as its reader makes it; `counted`: its pod sets' counts include the bound pods (`place` reads
// them from the same List), else they count only the pods still to place (the extender's view), and
// a bound pod whose sub-group and requests match no pod set gets a pod set of its own. The rest stay
// on `index` when the gang fits; when it does not, the index is left as it was. An Error: a bound
// pod's node is not in the index, or a level does not resolve.
std::expected<GangAroundBound, Error> place_gang_around_bound(TopologyIndex& index, PlacementEngine& engine,
                                                              JobRequest job,
                                                              std::span<const GangBoundPod> bound,
                                                              bool counted);

// Whether place_gang_around_bound plans `job`: several pod sets or sub-groups, none of them elastic.
bool plans_around_bound_by_groups(const JobRequest& job);

// "N pods are bound in D and the other M do not fit inside W, the widest domain the gang's
// constraint allows: <why>".
std::string around_bound_refusal(const TopologyIndex& index, const AroundBound& around,
                                 const std::string& why);

}  // namespace hypertopo::scheduler
