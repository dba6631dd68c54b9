// scheduler/input/pod_group_kinds.h: the kinds of gang object the cluster may hold, in one table.
//
// The extender's watcher lists and watches each kind here (scheduler/extender/cluster_watcher.cpp)
// and `place --pod-group` looks for the named group among the same kinds (cluster_snapshot.cpp),
// finding a group's Pods as that kind's scheduler finds them:
//   - scheduling.x-k8s.io/v1alpha1 PodGroup (kubernetes-sigs/scheduler-plugins, the coscheduling
//     plugin): the Pod's label scheduling.x-k8s.io/pod-group (apis/scheduling/v1alpha1
//     PodGroupLabel, read by pkg/util GetPodGroupLabel);
//   - scheduling.volcano.sh/v1beta1 PodGroup: the annotation scheduling.k8s.io/group-name that
//     Volcano's job controller sets;
//   - scheduling.k8s.io/v1alpha2 PodGroup (KEP-4671): the Pod's spec.schedulingGroup.podGroupName;
//   - scheduling.k8s.io/v1alpha1 Workload: the Pod's spec.workloadRef.name (its spec.podGroups are
//     the gangs, one per spec.workloadRef.podGroup);
//   - scheduling.run.ai/v2alpha2 PodGroup (KAI-Scheduler): the annotation pod-group-name its pod
//     grouper sets.
//
//   for (const PodGroupKindInfo& k : pod_group_kinds()) client.list(k.resource, ns, options);
//   if (group_named(pod, pod_group_kind(PodGroupKind::kCoscheduling)) == "train") ...
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "k8s/client/kube_client.h"

namespace hypertopo::scheduler {

enum class PodGroupKind { kCoscheduling, kVolcano, kUpstream, kWorkload, kKai };

// Where a Pod names the group it belongs to.
enum class GroupMark { kLabel, kAnnotation, kSpecField };

struct PodGroupKindInfo {
  PodGroupKind kind;
  k8s::Resource resource;
  const char* object_kind;  // "PodGroup" or "Workload"
  GroupMark mark;
  // The label or annotation key, or the field under the Pod's spec that holds an object whose
  // `name_field` is the group's name (spec.schedulingGroup.podGroupName).
  const char* key;
  const char* name_field;  // only for kSpecField
};

// Every kind, in the order the watcher starts them.
std::span<const PodGroupKindInfo> pod_group_kinds();
const PodGroupKindInfo& pod_group_kind(PodGroupKind kind);
// "podgroups.scheduling.x-k8s.io": the resource as kubectl names it.
std::string resource_name(const k8s::Resource& resource);
// "scheduling.x-k8s.io/v1alpha1".
std::string api_version(const k8s::Resource& resource);
// The name of the group `pod` belongs to as `kind`'s scheduler reads it ("" when it names none).
std::string group_named(const nlohmann::json& pod, const PodGroupKindInfo& kind);

}  // namespace hypertopo::scheduler
