// scheduler/input/coscheduling_pod_group.h: a coscheduling PodGroup and its Pods -> the neutral
// JobRequest.
//
// The coscheduling plugin of kubernetes-sigs/scheduler-plugins (scheduling.x-k8s.io/v1alpha1
// PodGroup; pkg/coscheduling/core/core.go) makes the Pods that carry the label
// scheduling.x-k8s.io/pod-group one gang of spec.minMember:
//   - PreFilter rejects every Pod of the group while the namespace holds fewer Pods with the label
//     than minMember ("cannot find enough sibling pods"): fewer Pods than minMember wait;
//   - with spec.minResources set, PreFilter then asks the whole cluster for them
//     (CheckClusterResource): each Node's allocatable less what its pods request, the group's own
//     pods counted free, summed over the Nodes, must reach minResources and minMember "pods"; if
//     not, every Pod of the group is rejected ("resource gap"). Both doors check it alike
//     (min_resources_gap): `place` refuses, the extender's filter fails every node;
//   - Permit holds each Pod until minMember of them are assumed or bound, then lets them all bind;
//     Pods beyond minMember bind as they come. The gang is elastic: it starts with minMember Pods
//     and the others join it.
// The PodGroup says nothing of topology; spec.scheduleTimeoutSeconds is how long Permit waits,
// which places no pod. A Pod's own topology annotations (pod_request.h) give the gang's
// constraint, as the extender reads them. The Pods
// are read as the extender reads the Pod it is asked about (pod_set_request): one pod set per
// distinct spec and topology annotations, named after the PodGroup ("-1", "-2" for the others).
// One pod set whose Pods outnumber minMember is elastic (PodSetRequest::min_count = minMember),
// as the extender's gang book plans it: minMember Pods first, the others around them.
//
//   if (is_coscheduling_pod_group_list(doc)) auto job = coscheduling_pod_group_list(doc);
#pragma once

#include <expected>
#include <nlohmann/json.hpp>

#include "errors/error.h"
#include "scheduler/index/topology_index.h"
#include "scheduler/input/job_loader.h"

namespace hypertopo::scheduler {

// A List whose items include a scheduling.x-k8s.io PodGroup.
bool is_coscheduling_pod_group_list(const nlohmann::json& doc);
// Every Pod of the List belongs to the one PodGroup (its label, where set, names it); format
// "coscheduling". A PodGroup whose spec.minMember is above its Pods reads, with LoadedJob::waits
// saying so as gang_waits_for_pods does.
std::expected<LoadedJob, Error> coscheduling_pod_group_list(const nlohmann::json& doc);

// The PodGroup's spec.minResources as the check PreFilter makes (nullopt when it sets none), its
// `held` left empty; an error names a quantity that does not read.
std::expected<std::optional<MinResourcesCheck>, Error> coscheduling_min_resources(
    const nlohmann::json& pod_group);
// Why the cluster cannot hold the check's resources (core.go CheckClusterResource: the Nodes' free
// resources plus `held`, summed; "pods" only where Nodes state it), naming the PodGroup and what is
// missing; "" when it can.
std::string min_resources_gap(const MinResourcesCheck& check, const TopologyIndex& index);

}  // namespace hypertopo::scheduler
