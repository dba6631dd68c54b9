#include "scheduler/input/pod_group_kinds.h"

#include "io/json_fields.h"

namespace hypertopo::scheduler {
namespace {

const PodGroupKindInfo kKinds[] = {
    {PodGroupKind::kCoscheduling,
     {"scheduling.x-k8s.io", "v1alpha1", "podgroups", true},
     "PodGroup",
     GroupMark::kLabel,
     "scheduling.x-k8s.io/pod-group",
     ""},
    {PodGroupKind::kVolcano,
     {"scheduling.volcano.sh", "v1beta1", "podgroups", true},
     "PodGroup",
     GroupMark::kAnnotation,
     "scheduling.k8s.io/group-name",
     ""},
    {PodGroupKind::kUpstream,
     {"scheduling.k8s.io", "v1alpha2", "podgroups", true},
     "PodGroup",
     GroupMark::kSpecField,
     "schedulingGroup",
     "podGroupName"},
    {PodGroupKind::kWorkload,
     {"scheduling.k8s.io", "v1alpha1", "workloads", true},
     "Workload",
     GroupMark::kSpecField,
     "workloadRef",
     "name"},
    {PodGroupKind::kKai,
     {"scheduling.run.ai", "v2alpha2", "podgroups", true},
     "PodGroup",
     GroupMark::kAnnotation,
     "pod-group-name",
     ""},
};

}  // namespace

std::span<const PodGroupKindInfo> pod_group_kinds() { return kKinds; }

const PodGroupKindInfo& pod_group_kind(PodGroupKind kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k;
  return kKinds[0];  // every enumerator is in the table
}

std::string resource_name(const k8s::Resource& r) {
  return r.group.empty() ? r.plural : r.plural + "." + r.group;
}

std::string api_version(const k8s::Resource& r) {
  return r.group.empty() ? r.version : r.group + "/" + r.version;
}

std::string group_named(const nlohmann::json& pod, const PodGroupKindInfo& kind) {
  using io::object_at;
  using io::str_at;
  const nlohmann::json& meta = object_at(pod, "metadata");
  switch (kind.mark) {
    case GroupMark::kLabel:
      return str_at(object_at(meta, "labels"), kind.key);
    case GroupMark::kAnnotation:
      return str_at(object_at(meta, "annotations"), kind.key);
    case GroupMark::kSpecField:
      return str_at(object_at(object_at(pod, "spec"), kind.key), kind.name_field);
  }
  return {};
}

}  // namespace hypertopo::scheduler
