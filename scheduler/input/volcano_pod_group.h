// scheduler/input/volcano_pod_group.h: a Volcano PodGroup with subGroupPolicy, and its Pods -> the
// neutral JobRequest.
//
// Volcano (scheduling.volcano.sh/v1beta1 PodGroup, volcano-sh/apis pkg/apis/scheduling/types.go
// SubGroupPolicySpec) groups the pods of a PodGroup (named by each pod's
// scheduling.k8s.io/group-name annotation) for topology: each `subGroupPolicy` entry takes the pods
// its `labelSelector` matches, splits them by the values of its `matchLabelKeys` (KubeRay's NVL72
// worker groups: one sub-group per replica), and places each sub-group of `subGroupSize` pods inside
// one HyperNode under its `networkTopology` (hard: at or below the tier, soft: as close as that).
// The PodGroup's own `networkTopology` binds the whole gang. Placement follows
// scheduler/placement/sub_group_placement.h.
//
//   if (is_volcano_pod_group_list(doc)) auto job = volcano_pod_group_list(doc);   // expected<LoadedJob>
#pragma once

#include <expected>
#include <nlohmann/json.hpp>

#include "errors/error.h"
#include "scheduler/input/job_loader.h"

namespace hypertopo::scheduler {

inline constexpr const char* kVolcanoGroupNameAnnotation = "scheduling.k8s.io/group-name";

// A List whose items include a scheduling.volcano.sh PodGroup.
bool is_volcano_pod_group_list(const nlohmann::json& doc);
// Every Pod of the List belongs to the one PodGroup; format "volcano".
std::expected<LoadedJob, Error> volcano_pod_group_list(const nlohmann::json& doc);

}  // namespace hypertopo::scheduler
