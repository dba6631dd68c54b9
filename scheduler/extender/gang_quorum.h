// scheduler/extender/gang_quorum.h: whether a gang's own scheduler would try its pods yet.
//
// Before the gang planner (gang_planner.h) plans a gang from the pod that asks, the gang must be
// one its scheduler tries at all, as `place` finds for the same objects:
//   - a Volcano PodGroup (without sub-groups) with fewer pods than its minMember is not a valid job
//     to Volcano's gang plugin (volcano-sh/volcano pkg/scheduler/plugins/gang/gang.go,
//     OnSessionOpen's validJobFn: JobInfo.ValidTaskNum() below MinAvailable, api/job_info.go), and
//     framework/session.go openSession drops it from the session (volcano_pod_group.h);
//   - a coscheduling PodGroup (kubernetes-sigs/scheduler-plugins pkg/coscheduling/core/core.go
//     PodGroupManager.PreFilter) rejects each of its pods while fewer pods carry its label than
//     minMember ("cannot find enough sibling pods"), and then, when spec.minResources is set, while
//     the cluster's free resources, its own pods' counted free, do not reach them
//     (CheckClusterResource; coscheduling_pod_group.h min_resources_gap).
// The pods the view has seen stand for the pods the cluster holds (the pod asking is one of
// them). A PodGroup with sub-groups waits in the planner's make_grouped_plan.
//
//   if (auto ready = gang_quorum(view, pod, "ml/train", sized_by, 4); !ready) return ...;
#pragma once

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "errors/error.h"
#include "scheduler/extender/cluster_view.h"
#include "scheduler/input/pod_group_kinds.h"

namespace hypertopo::scheduler {

// kUnavailable with the sentence `place` gives for the same objects when the gang's scheduler
// would not try it yet; `sized_by` is the kind of PodGroup whose minimum gave `count`
// (ClusterView::gang_size). Notes the pod as pending in the view when its gang counts pods.
std::expected<void, Error> gang_quorum(ClusterView& view, const nlohmann::json& pod, const std::string& key,
                                       std::optional<PodGroupKind> sized_by, std::int32_t count);

}  // namespace hypertopo::scheduler
