// scheduler/placement/victim_planner.h: where a gang that fits nowhere can make room, and whom it evicts.
//
// When no domain holds a gang under its constraint, plan_with_victims() finds the domain where
// evicting pods of lower priority makes it fit:
//   1. the lowest tier first (a hard tier-1 gang looks only at tier-1 domains; a soft one widens
//      tier by tier up to the cluster), and among the domains of that tier
//   2. the fewest victims by (PodDisruptionBudget violations, highest victim priority, work units
//      broken, victim count, GPUs lost), where a unit is one pod alone or one whole gang: evicting a
//      gang's first pod loses all of its work, and its other pods cost no more work after that, so a
//      whole lower-priority gang is taken before several are broken.
// On each node the victims are chosen as kube-scheduler's DefaultPreemption chooses them
// (kubernetes/kubernetes pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go,
// SelectVictimsOnNode): every lower-priority pod is removed; if the gang's pods for that node then
// fit, the removed pods are added back one at a time, most important first (MoreImportantPod: higher
// priority, then the earlier start), those whose PodDisruptionBudget would be violated first
// (filterPodsWithPDBViolation), and each pod that no longer leaves room becomes a victim. A budget is
// status.disruptionsAllowed, decremented per matching pod not already in status.disruptedPods; a
// budget whose selector is empty matches nothing (as there). Pods of equal or higher priority are
// never victims; pods already terminating count as gone (their room is free, they are no victims);
// a preemptor with preemptionPolicy Never evicts nothing.
// The chosen domain is then placed by the PlacementEngine with the victims' usage taken off the
// index, so slices, partitions, node constraints and binpack decide the nodes exactly as for a
// gang that fits; victims on nodes the placement did not use are dropped again.
// Out of scope: reclaim across queues (capacity borrowed between tenants), which is a quota decision.
//
//   std::vector<PreemptionCandidate> running = ...;   // every bound pod, with its priority
//   auto plan = plan_with_victims(index, pod_set, running, budgets, {.priority = 1000}, weights);
//   if (plan && plan->fit) for (std::size_t v : plan->victims) evict(running[v]);
#pragma once

#include <cstdint>
#include <expected>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "errors/error.h"
#include "scheduler/index/cluster_model.h"
#include "scheduler/index/topology_index.h"
#include "scheduler/placement/fabric_health_mode.h"
#include "scheduler/placement/job_request.h"
#include "scheduler/placement/placement_engine.h"
#include "scheduler/placement/volcano_score.h"

namespace hypertopo::scheduler {

// A pod running on a node (its usage is in the index).
struct PreemptionCandidate {
  std::string uid, ns, name;
  int node = -1;  // index node id; pods on nodes outside the index are ignored
  std::int32_t priority = 0;
  ResourceAmounts requests;
  std::string gang;        // namespace/name of its gang, "" for a pod alone
  std::string start_time;  // status.startTime (RFC 3339, compares as text); "" = not started
  std::map<std::string, std::string> labels;
  bool terminating = false;  // metadata.deletionTimestamp set: counts as gone
};

// A policy/v1 PodDisruptionBudget as preemption reads it.
struct DisruptionBudget {
  std::string ns, name;
  MemberSelector selector;    // spec.selector (matchLabels, matchExpressions)
  bool selector_set = false;  // spec.selector given and not empty
  std::int32_t disruptions_allowed = 0;
  std::set<std::string> disrupted_pods;  // status.disruptedPods names
  bool matches(const PreemptionCandidate& pod) const;
};

struct PreemptionOptions {
  std::int32_t priority = 0;  // the preemptor's spec.priority
  bool never = false;         // its preemptionPolicy is Never
  // >= 0: the only domain to plan in (the rest of a gang whose bound pods fix its domain); the
  // constraint's tiers are not searched then.
  int scope = -1;
};

// What one plan costs, compared lexicographically (lower is better).
struct VictimCost {
  std::int32_t budget_violations = 0;
  std::int64_t highest_priority = INT64_MIN;  // INT64_MIN: no victim
  std::int32_t units = 0;                     // pods alone + gangs broken
  std::int32_t victims = 0;
  std::int64_t gpus_lost = 0;  // GPUs of the pods alone + every GPU of each broken gang
  auto operator<=>(const VictimCost&) const = default;
};

struct PreemptionPlan {
  bool fit = false;
  std::string reason;         // why not, when !fit
  PodSetPlacement placement;  // the gang's nodes and ranks (the engine's answer inside the domain)
  std::string domain;         // the job domain ("" = the cluster)
  int tier = 0;
  std::vector<std::size_t> victims;   // indexes into the candidates, by node then importance
  std::vector<bool> violates_budget;  // per victim
  VictimCost cost;
  std::vector<std::string> broken_gangs;  // gangs that lose a pod
  std::int64_t gpus_evicted = 0;          // GPUs the victims themselves hold
  std::int32_t domains_considered = 0;
};

// Accelerator resources whose loss the cost counts ("nvidia.com/gpu", "amd.com/gpu", "gpu", ...).
bool is_gpu_resource(const std::string& name);

// Plans `ps` with victims. On a fit the gang's pods are added to `index` (as PlacementEngine::place
// adds them) and the victims' usage stays (they run until evicted); otherwise the index is left as
// it was. Errors are for inconsistent requests, as PlacementEngine::place's.
std::expected<PreemptionPlan, Error> plan_with_victims(
    TopologyIndex& index, const PodSetRequest& ps, std::span<const PreemptionCandidate> pods,
    std::span<const DisruptionBudget> budgets, const PreemptionOptions& options,
    const BinpackWeights& weights, FabricHealthMode health = FabricHealthMode::kPreferHealthy);

}  // namespace hypertopo::scheduler
