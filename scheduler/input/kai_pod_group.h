// scheduler/input/kai_pod_group.h: a KAI-Scheduler PodGroup with its Pods -> the neutral JobRequest.
//
// KAI groups pods by the PodGroup named in each pod's `pod-group-name` annotation and, inside it,
// by the sub-group named in the `kai.scheduler/subgroup-name` label (kai-scheduler
// pkg/common/constants: PodGroupAnnotationForPod, SubGroupLabelKey). The PodGroup
// (scheduling.run.ai/v2alpha2) carries `spec.topologyConstraint` {topology,
// requiredTopologyLevel, preferredTopologyLevel} and `spec.subGroups` [{name, parent, minMember,
// topologyConstraint}]. A pod set is made of the pods of one sub-group that ask for the same
// resources and node constraints; placement follows scheduler/placement/sub_group_placement.h.
// A chain of parents deeper than kMaxSubGroupDepth, or a cycle of them, is an error naming the
// PodGroup (namespace/name) and the depth.
//
//   # job.yaml: a List holding the PodGroup and its pending Pods
//   kind: List
//   items: [{apiVersion: scheduling.run.ai/v2alpha2, kind: PodGroup, ...}, {kind: Pod, ...}, ...]
//
//   if (is_kai_pod_group_list(doc)) auto job = kai_pod_group_list(doc);   // expected<LoadedJob>
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <string>

#include "errors/error.h"
#include "scheduler/input/job_loader.h"

namespace hypertopo::scheduler {

inline constexpr const char* kKaiPodGroupAnnotation = "pod-group-name";
inline constexpr const char* kKaiSubGroupLabel = "kai.scheduler/subgroup-name";

// A List whose items include a scheduling.run.ai PodGroup.
bool is_kai_pod_group_list(const nlohmann::json& doc);
// Every Pod of the List belongs to the one PodGroup; format "kai". A PodGroup whose spec.minMember
// is above its Pods (KAI's scheduler keeps it pending: kai-scheduler pkg/scheduler/api/podgroup_info
// PodGroupInfo.IsReadyForScheduling, alive pods >= max(minMember, 1)) reads, with LoadedJob::waits
// saying so as gang_waits_for_pods does.
std::expected<LoadedJob, Error> kai_pod_group_list(const nlohmann::json& doc);

// Why a gang is not planned yet: `seen` of its `count` pods have come. The one sentence of both
// doors: the extender's gang book while the watch has not delivered them all, `place` when the
// objects it reads hold fewer (`key`: namespace/name; `sub_groups`: its PodGroup divides it).
std::string gang_waits_for_pods(const std::string& key, std::size_t seen, std::int64_t count,
                                bool sub_groups);

}  // namespace hypertopo::scheduler
