// scheduler/input/coscheduling_pod_group.h: a coscheduling PodGroup and its Pods -> the neutral
// JobRequest.
//
// The coscheduling plugin of kubernetes-sigs/scheduler-plugins (scheduling.x-k8s.io/v1alpha1
// PodGroup; pkg/coscheduling/core/core.go) makes the Pods that carry the label
// scheduling.x-k8s.io/pod-group one gang of spec.minMember:
//   - PreFilter rejects every Pod of the group while the namespace holds fewer Pods with the label
//     than minMember ("cannot find enough sibling pods"): fewer Pods than minMember wait;
//   - Permit holds each Pod until minMember of them are assumed or bound, then lets them all bind;
//     Pods beyond minMember bind as they come. The gang is elastic: it starts with minMember Pods
//     and the others join it.
// The PodGroup says nothing of topology, and neither door reads the rest of its spec:
// spec.scheduleTimeoutSeconds is how long Permit waits, and spec.minResources a sum over the whole
// cluster's free resources that PreFilter checks before any Pod is placed (CheckClusterResource),
// which the extender does not check either. A Pod's own topology
// annotations (pod_request.h) give the gang's constraint, as the extender reads them. The Pods
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
#include "scheduler/input/job_loader.h"

namespace hypertopo::scheduler {

// A List whose items include a scheduling.x-k8s.io PodGroup.
bool is_coscheduling_pod_group_list(const nlohmann::json& doc);
// Every Pod of the List belongs to the one PodGroup (its label, where set, names it); format
// "coscheduling". A PodGroup whose spec.minMember is above its Pods reads, with LoadedJob::waits
// saying so as gang_waits_for_pods does.
std::expected<LoadedJob, Error> coscheduling_pod_group_list(const nlohmann::json& doc);

}  // namespace hypertopo::scheduler
