// scheduler/placement/job_request.h: the neutral pod-set request every job format maps onto.
//
// Volcano Jobs, batch/v1 Jobs with Kueue annotations, KAI annotations, KaiwoJobs and the neutral
// JSON request (docs/placement.md) all become a JobRequest: pod sets with a count, per-pod
// requests, a topology mode (required / preferred / unconstrained / none), the widest tier allowed,
// slice layers (any number, coarsest first) and Volcano partitions.
//
//   PodSetRequest ps{.name = "trainer", .count = 64, .per_pod = {{"nvidia.com/gpu", 4}},
//                    .mode = TopologyMode::kRequired, .level = "block",
//                    .slices = {{"rack", 16}, {"nvswitch", 4}, {"0", 2}}};
//   JobRequest job{.name = "llm", .pod_sets = {ps}};
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/index/cluster_model.h"
#include "scheduler/index/node_affinity.h"

namespace hypertopo::scheduler {

enum class TopologyMode {
  kNone,           // no topology: normal pods, scored per node with the fading-tier score
  kRequired,       // all pods inside one domain of tier <= level (Volcano hard, Kueue required)
  kPreferred,      // as close as possible; spread over the cluster when nothing fits (soft, preferred)
  kUnconstrained,  // a gang without a locality demand, packed by the topology
};

const char* to_string(TopologyMode mode);

// `level` names a tier: a number ("2"; 0 = the node itself), a HyperNode tierName, or a level label.
struct SliceLayerRequest {
  std::string level;
  std::int32_t size = 1;
};

// Volcano partitionPolicy: totalPartitions x partitionSize pods, each partition inside one domain
// of tier <= level; minPartitions lets the gang start with fewer.
struct PartitionRequest {
  std::int32_t total = 0;
  std::int32_t size = 0;
  std::int32_t min = 0;
  std::string level;
};

struct PodSetRequest {
  std::string name;
  std::int32_t count = 0;
  ResourceAmounts per_pod;
  std::map<std::string, std::string> node_selector;
  std::vector<Toleration> tolerations;
  // spec.affinity.nodeAffinity: required terms filter nodes, preferred terms break ties.
  NodeAffinity affinity;
  TopologyMode mode = TopologyMode::kNone;
  std::string level;
  std::vector<SliceLayerRequest> slices;
  std::optional<PartitionRequest> partitions;
  // An elastic gang (Volcano minAvailable): it starts with as many pods as fit, at least this
  // many, in one domain under its constraint; 0 means all `count`.
  std::int32_t min_count = 0;
  // Kueue's podset-group-name: pod sets of one group are placed together (leader + workers).
  std::optional<std::string> group;
  // The sub-group (JobRequest::sub_groups) the pod set's pods belong to; "" = the job itself.
  std::string sub_group;
};

// How deep sub-groups may nest (the job itself is level 0). KAI's webhook (kai-scheduler
// pkg/apis/scheduling/v2alpha2/podgroup_webhook.go, validateSubGroups) refuses cycles but sets no
// depth; its own trees are a few levels (replica, then leader and workers), and a topology has at
// most 16 levels (Kueue's and KAI's Topology CRDs) for a sub-group to ask for. Beyond this bound a
// chain of parents is refused with an error instead of walked, so no walk over it can run out of
// stack.
inline constexpr std::size_t kMaxSubGroupDepth = 64;

// A sub-group of a gang (KAI's nested PodGroup `spec.subGroups`): its pods and child sub-groups sit
// inside one domain at or below `required` (a level name, "" = none), as close as `preferred` when
// possible. Sub-groups are placed in the order given, parents before children.
struct SubGroupRequest {
  std::string name;
  std::string parent;  // "" = the job itself
  std::string required;
  std::string preferred;
  // The required level as the job named it, when resolve_label_levels (label_levels.h) turned a node
  // label into a tier number: what a refusal names ("" = `required` as it is).
  std::string required_as_written;
  std::int32_t min_member = 0;  // 0 = every pod of the sub-group
  // The Volcano subGroupPolicy it comes from ("" = none); see JobRequest::min_sub_groups.
  std::string policy;
  // One sub-group per domain of its `required` level: no other exclusive sub-group of the same
  // parent shares that domain (LeaderWorkerSet's exclusive-topology, where each group's leader holds
  // a required pod anti-affinity against every other group's pods on the topology key:
  // kubernetes-sigs/lws pkg/webhooks/pod_webhook.go, SetExclusiveAffinities).
  bool exclusive = false;
};

struct JobRequest {
  std::string name;
  std::vector<PodSetRequest> pod_sets;
  // Job-level topology (Volcano spec.networkTopology): all pod sets together inside one domain of
  // tier <= level (kRequired), or as close as that when possible (kPreferred). kNone: each pod set
  // only obeys its own mode.
  TopologyMode mode = TopologyMode::kNone;
  std::string level;
  // KAI PodGroups (scheduler/placement/sub_group_placement.h): the job's own required and preferred
  // levels and its sub-group tree. When any is set, the job is placed group by group in KAI's
  // domain order instead of by `mode` / `level`.
  std::vector<SubGroupRequest> sub_groups;
  std::string job_required;
  std::string job_preferred;
  // Volcano's subGroupPolicy minSubGroups, by policy name: the sub-groups of a policy named here are
  // placed where they fit once the gang starts, and it starts when at least that many of them fit
  // (0 = none needed); sub-groups of other policies, and the job's own pod sets, are all needed.
  std::map<std::string, std::int32_t> min_sub_groups;
  // Volcano's PodGroup minMember, read with min_sub_groups: the gang also needs this many pods
  // placed (at least one). Unset: every pod of the job.
  std::optional<std::int32_t> min_pods;
  bool grouped() const { return !sub_groups.empty() || !job_required.empty() || !job_preferred.empty(); }
};

}  // namespace hypertopo::scheduler
