// scheduler/input/job_loader.h: job manifests -> the neutral JobRequest.
//
// Understands a Volcano Job (batch.volcano.sh/v1alpha1: tasks, replicas, networkTopology,
// partitionPolicy), a batch/v1 Job whose pod template carries Kueue TAS or KAI topology
// annotations (parallelism = pod count, container requests = per-pod requests, nodeSelector and
// tolerations respected), a JobSet (jobset.x-k8s.io: one pod set per replicatedJob), a KaiwoJob
// (kaiwo.silogen.ai/v1alpha1), a Kubeflow PyTorchJob or MPIJob and a LeaderWorkerSet
// (leader_worker_jobs.h), a KEP-5732 PodGroup (scheduling.k8s.io/v1alpha2, alone, in a List
// with one Pod as its template, or in a List with the Pods naming it in spec.schedulingGroup), a
// KAI, Volcano or coscheduling PodGroup in a List with its Pods (kai_pod_group.h,
// volcano_pod_group.h, coscheduling_pod_group.h) and the neutral request documented in docs/placement.md
// (apiVersion hypertopo.io/v1alpha1, kind PlacementRequest). Every count is range-checked where it is read
// and a field of the wrong JSON type is an error naming it.
//
// Each pod set also carries what its pods say of their priority (PriorityRequest), for preemption:
// spec.priority, spec.priorityClassName and spec.preemptionPolicy of its pod template (a Volcano
// Job: the task template's class, else the Job's spec.priorityClassName; a PodGroup List: its first
// Pod, else a Volcano PodGroup's spec.priorityClassName;
// the neutral request: its top-level priority fields). The names are resolved later, against the
// PriorityClasses the caller has (placement_session.h).
//
//   auto job = load_job("job.yaml", nodes);   // nodes: for Kaiwo's GPUs-per-node rule
//   if (job) engine.place(job->request);
#pragma once

#include <expected>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "errors/error.h"
#include "scheduler/index/cluster_model.h"
#include "scheduler/placement/job_request.h"

namespace hypertopo::io {
class ObjectLedger;
}  // namespace hypertopo::io

namespace hypertopo::scheduler {

// A pod template's priority before PriorityClasses resolve it.
struct PriorityRequest {
  std::optional<std::int32_t> value;  // spec.priority
  std::string class_name;             // spec.priorityClassName
  std::string preemption_policy;      // spec.preemptionPolicy: "", "Never" or "PreemptLowerPriority"
  std::string source;                 // the object and field path, for messages ("Job train template spec")
};

// A coscheduling PodGroup's spec.minResources, which the plugin's PreFilter checks against the
// free resources of the whole cluster before it lets any of the group's pods on
// (coscheduling_pod_group.h min_resources_gap).
struct MinResourcesCheck {
  std::string group;            // namespace/name
  std::int32_t min_member = 0;  // asked as "pods" too
  ResourceAmounts min_resources;
  // What the group's own bound pods take ("pods" included): the plugin counts it as free.
  ResourceAmounts held;
};

struct LoadedJob {
  JobRequest request;
  std::string format;  // volcano | batch | kueue | kai | kaiwo | podgroup | coscheduling | pytorch | mpi |
                       // lws | neutral
  // One per pod set of `request`, in the same order (a pod set without one reads as unset).
  std::vector<PriorityRequest> priorities;
  // Why the gang cannot start with the pods given, as its scheduler waits for more (a KAI
  // PodGroup's minMember above its Pods: kai_pod_group.h); "" when it can.
  std::string waits;
  // A coscheduling PodGroup's minResources, checked against the cluster once it is read.
  std::optional<MinResourcesCheck> min_resources;
};

std::expected<LoadedJob, Error> parse_job(const nlohmann::json& doc, const std::vector<NodeSpec>& nodes);
// A file of one document is one job, as parse_job reads it. Of several documents (io/object_reader.h),
// one job is read alone, or PodGroups and Pods as the one List that would hold them; two jobs, or a
// job beside PodGroups or Pods, are an error naming the documents; objects of other kinds are left
// in `ledger` (named in its warning).
std::expected<LoadedJob, Error> load_job(const std::filesystem::path& path,
                                         const std::vector<NodeSpec>& nodes,
                                         io::ObjectLedger* ledger = nullptr);

// The pod-template readers the loaders share, also used for single pods (the extender):
// per-pod requests (containers summed), nodeSelector and tolerations of a pod spec ...
std::expected<void, Error> read_pod_spec(const nlohmann::json& spec, PodSetRequest& ps,
                                         const std::string& where);
// ... its spec.priority, spec.priorityClassName and spec.preemptionPolicy, type-checked ...
std::expected<PriorityRequest, Error> read_priority(const nlohmann::json& spec, const std::string& where);
// ... and the Kueue TAS / KAI topology annotations; `format` becomes "kueue" or "kai" when present.
std::expected<void, Error> topology_annotations(const nlohmann::json& annotations, PodSetRequest& ps,
                                                std::string& format, const std::string& where);

// A Kubeflow job's replica (PyTorchJob's Master or Worker, MPIJob's Launcher or Worker) joins its
// gang as a pod set. The gang is placed under one constraint, the one its replicas' pods carry; two
// replicas asking for different ones are an error naming `templates` and `where`.
std::expected<void, Error> join_replica(JobRequest& gang, PodSetRequest ps, const std::string& where,
                                        const std::string& templates);
// Once every replica has joined: each pod set under the gang's constraint, or packed by the
// topology without one (still a gang).
void constrain_replicas(JobRequest& gang);

// Kaiwo's replica rule for Ray jobs: user replicas x gpusPerReplica when both are set and fit in the
// cluster's GPUs; otherwise replicas = ceil(gpus / min GPUs per node of the vendor) and
// gpusPerReplica = gpus / replicas.
struct KaiwoReplicas {
  int replicas = 1;
  int gpus_per_replica = 0;
};
std::expected<KaiwoReplicas, Error> kaiwo_replicas(int gpus, int replicas, int gpus_per_replica,
                                                   std::int64_t cluster_gpus, std::int64_t min_gpus_per_node);

}  // namespace hypertopo::scheduler
