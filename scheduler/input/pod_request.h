// scheduler/input/pod_request.h: one pending pod -> the PodSetRequest of its gang, and its index.
//
// kube-scheduler hands the extender single pods, not jobs: the gang's constraint is read straight
// off the pod's annotations, with the same meaning the job loaders give the job-level fields.
//   - Kueue TAS podset annotations (kueue.x-k8s.io/podset-*) and KAI `kai.scheduler/topology-*`:
//     read as the pod template of a batch/v1 Job (job_loader's topology_annotations);
//   - otherwise Volcano's networkTopology / partitionPolicy, given as pod annotations:
//       hypertopo.io/network-topology-mode      hard | soft  (or Volcano's volcano.sh/network-topology-mode)
//       hypertopo.io/highest-tier-allowed       N            (or volcano.sh/network-topology-highest-tier)
//       hypertopo.io/highest-tier-name          a tier name
//       hypertopo.io/partition-size             pods per partition (totalPartitions = gang size / this)
//       hypertopo.io/min-partitions             Volcano minPartitions (default: all)
//       hypertopo.io/partition-highest-tier-allowed  N       (or ...partition-highest-tier-name)
//   - else a LeaderWorkerSet pod's leaderworkerset.sigs.k8s.io/exclusive-topology (a node label): its
//     group inside one domain of that label (required).
// A pod's index (its rank in the gang; each key a label or an annotation) comes from the first of:
//   hypertopo.io/rank                                      an explicit rank
//   jobset.sigs.k8s.io/job-index + job-completion-index    JobSet: job index x pods per Job + index
//   batch.kubernetes.io/job-completion-index               Indexed Job
//   training.kubeflow.org/replica-index                    Kubeflow training operator (env RANK first)
//   leaderworkerset.sigs.k8s.io/worker-index               LeaderWorkerSet (0 = the leader)
//   apps.kubernetes.io/pod-index                           StatefulSet
//   volcano.sh/task-index                                  Volcano Job
//
//   auto ps = pod_set_request(pod, /*count=*/16, /*gang=*/true);   // PodSetRequest or an Error
//   auto index = pod_index(pod);                                    // optional<int32_t> or an Error
#pragma once

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "errors/error.h"
#include "scheduler/placement/job_request.h"

namespace hypertopo::scheduler {

// `count` pods like this one; `gang` false reads only the pod's resources, selector and tolerations.
std::expected<PodSetRequest, Error> pod_set_request(const nlohmann::json& pod, std::int32_t count, bool gang);

inline constexpr const char* kRankKey = "hypertopo.io/rank";
inline constexpr const char* kCompletionIndex = "batch.kubernetes.io/job-completion-index";
inline constexpr const char* kJobSetJobIndex = "jobset.sigs.k8s.io/job-index";
inline constexpr const char* kJobSetReplicas = "jobset.sigs.k8s.io/replicatedjob-replicas";
inline constexpr const char* kKubeflowReplicaIndex = "training.kubeflow.org/replica-index";
inline constexpr const char* kKubeflowReplicaType = "training.kubeflow.org/replica-type";
inline constexpr const char* kLwsWorkerIndex = "leaderworkerset.sigs.k8s.io/worker-index";
inline constexpr const char* kLwsExclusiveTopology = "leaderworkerset.sigs.k8s.io/exclusive-topology";
inline constexpr const char* kPodIndexKey = "apps.kubernetes.io/pod-index";
inline constexpr const char* kVolcanoTaskIndex = "volcano.sh/task-index";

// A pod's reference to the upstream PodGroup (scheduling.k8s.io/v1alpha2) or Workload
// (scheduling.k8s.io/v1alpha1) it belongs to, carried among a bound pod's gang marks by field path.
inline constexpr const char* kSchedulingGroupMark = "spec.schedulingGroup.podGroupName";
inline constexpr const char* kWorkloadNameMark = "spec.workloadRef.name";
inline constexpr const char* kWorkloadPodGroupMark = "spec.workloadRef.podGroup";
inline constexpr const char* kWorkloadReplicaKeyMark = "spec.workloadRef.podGroupReplicaKey";

struct PodIndex {
  std::int32_t value = 0;
  std::string key;  // the annotation or label it came from
  // JobSet: the child Job's index and the replicated Job's replicas (0: unknown); the rank is
  // group x (gang size / groups) + value (rank_in()).
  std::int32_t group = -1;
  std::int32_t groups = 0;
  // The rank in a gang of `gang_size` pods: value, or for a JobSet pod its global position.
  std::int32_t rank_in(std::int32_t gang_size) const {
    if (group < 0) return value;
    const std::int32_t per_job = groups > 0 && gang_size % groups == 0 ? gang_size / groups : 0;
    return per_job > 0 ? group * per_job + value : value;
  }
};
// The labels and annotations that say which gang a pod is in and its rank: what the extender keeps
// of a bound pod to plan around it after a restart.
const std::vector<std::string>& gang_identity_keys();
// Whether the readers here (pod_set_request, pod_index, gang_identity_keys) or the extender's gang
// book read a pod annotation with this key: what a gang plan saved to disk keeps of a pod, so that an
// annotation nobody reads (kubectl's last-applied-configuration, with its env values) is never
// written out. Those readers dispatch on the prefixes hypertopo.io/, volcano.sh/, kai.scheduler/ and
// kueue.x-k8s.io/ (podset-*, pod-group-total-count); a key they learn later under one of them is
// kept without a change here, and the gang and rank keys are gang_identity_keys() itself.
bool read_by_pod_request(std::string_view annotation_key);
// No index key at all: nullopt. A key whose value is not an integer in [0, 2^31): an error naming it.
std::expected<std::optional<PodIndex>, Error> pod_index(const nlohmann::json& pod);

// A positive 32-bit count from an annotation value (gang sizes, partition sizes): an error names
// the key and the value when it is not one.
std::expected<std::int32_t, Error> positive_count(const std::string& value, const std::string& key,
                                                  const std::string& where);

}  // namespace hypertopo::scheduler
