// scheduler/input/volcano_pod_group.h: a Volcano PodGroup with subGroupPolicy, and its Pods -> the
// neutral JobRequest.
//
// Volcano (scheduling.volcano.sh/v1beta1 PodGroup, volcano-sh/apis pkg/apis/scheduling/types.go
// SubGroupPolicySpec) groups the pods of a PodGroup (named by each pod's
// scheduling.k8s.io/group-name annotation) for topology: each `subGroupPolicy` entry takes the pods
// its `labelSelector` matches that carry a value for each of its `matchLabelKeys`, splits them by
// those values (KubeRay's NVL72 worker groups: one sub-group per replica), and places each sub-group of
// `subGroupSize` pods inside one HyperNode under its `networkTopology` (hard: at or below the tier, soft: as
// close as that). The PodGroup's own `networkTopology` binds the whole gang. A policy's `minSubGroups`
// (absent = 0, as in Volcano) and the PodGroup's `minMember` (absent = 0) say when the gang may start: with
// that many sub-groups of each policy and that many pods placed (at least one; pods no policy selects are
// always needed); the other sub-groups are placed where they fit (Volcano's gang plugin,
// pkg/scheduler/plugins/gang/gang.go JobReady). Sub-groups are tried in Volcano's sub-job order: the
// first match value as a number, then the policy and values. A count that is negative, not an
// integer or above 2^31-1 is an error naming the key, as the CRD's schema refuses it; a minimum
// the pods cannot reach leaves the gang pending. Placement follows
// scheduler/placement/sub_group_placement.h.
//
//   if (is_volcano_pod_group_list(doc)) auto job = volcano_pod_group_list(doc);   // expected<LoadedJob>
#pragma once

#include <expected>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "errors/error.h"
#include "scheduler/input/job_loader.h"

namespace hypertopo::scheduler {

inline constexpr const char* kVolcanoGroupNameAnnotation = "scheduling.k8s.io/group-name";

// A List whose items include a scheduling.volcano.sh PodGroup.
bool is_volcano_pod_group_list(const nlohmann::json& doc);
// Every Pod of the List belongs to the one PodGroup; format "volcano". A PodGroup whose
// spec.minMember is above its Pods (bound or pending) reads, with LoadedJob::waits saying so as
// gang_waits_for_pods does: Volcano's gang plugin finds such a job not valid (gang.go validJobFn,
// JobInfo.ValidTaskNum below MinAvailable) and places none of its pods.
std::expected<LoadedJob, Error> volcano_pod_group_list(const nlohmann::json& doc);
// The sub-group a pod with `labels` joins under the PodGroup `pod_group`, named as
// volcano_pod_group_list names it (the first policy whose labelSelector matches and whose every
// matchLabelKeys key the pod has a value for, then those values: "workers/3"); "" when no policy
// takes it (it belongs to the gang itself, as in Volcano).
std::expected<std::string, Error> volcano_sub_group_of(const nlohmann::json& pod_group,
                                                       const std::map<std::string, std::string>& labels);

}  // namespace hypertopo::scheduler
