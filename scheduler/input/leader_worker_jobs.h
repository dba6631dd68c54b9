// scheduler/input/leader_worker_jobs.h: Kubeflow MPIJob and LeaderWorkerSet -> the neutral JobRequest.
//
// Internal to the job loader (job_loader.cpp's parse_job dispatches here); each kind is read so
// that `place` answers for the object what the extender plans for the pods its controller makes.
//
// MPIJob (kubeflow.org/v2beta1, kubeflow/mpi-operator pkg/apis/kubeflow/v2beta1/types.go):
// spec.mpiReplicaSpecs.{Launcher,Worker}, one gang of Launcher + Worker pods (the operator's
// PodGroup counts workers + 1: pkg/controller/podgroup.go, calculateMinAvailable). Worker i carries
// training.kubeflow.org/replica-index i, and the launcher none, unless spec.runLauncherAsWorker puts
// it first in the hostfile with index 0 and the workers at i + 1 (pkg/controller/mpi_job_controller.go,
// workerReplicaIndexLabel and newLauncherPodTemplate). So the pod sets are Worker then Launcher
// (the launcher takes the slot after the workers), or Launcher then Worker with runLauncherAsWorker,
// and the ranks `place` gives are the indexes the extender reads (pod_request.h pod_index).
//
// LeaderWorkerSet (leaderworkerset.x-k8s.io/v1, kubernetes-sigs/lws
// api/leaderworkerset/v1/leaderworkerset_types.go): spec.replicas groups of
// spec.leaderWorkerTemplate.size pods, the leader (worker-index 0) from leaderTemplate, else from
// workerTemplate, the workers 1..size-1 from workerTemplate. Each group is a sub-group of the job
// (JobRequest::sub_groups) named as its leader pod, <name>-<group index>; the object's annotation
// leaderworkerset.sigs.k8s.io/exclusive-topology (a node label key) puts each group inside one
// domain of that level and no two groups in one domain (SubGroupRequest::exclusive), and
// spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize with
// leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology does the same for the sub-groups of each
// group.
//
//   if (is_mpi_job(doc)) return mpi_job(doc);                 // expected<LoadedJob, Error>
//   if (is_leader_worker_set(doc)) return leader_worker_set(doc);
#pragma once

#include <expected>
#include <nlohmann/json.hpp>
#include <vector>

#include "errors/error.h"
#include "scheduler/input/job_loader.h"

namespace hypertopo::scheduler {

bool is_mpi_job(const nlohmann::json& doc);
bool is_leader_worker_set(const nlohmann::json& doc);

// format "mpi".
std::expected<LoadedJob, Error> mpi_job(const nlohmann::json& doc);
// format "lws".
std::expected<LoadedJob, Error> leader_worker_set(const nlohmann::json& doc);

// The priority of each pod set of a job the two readers above made, from the pod template its pods
// come from.
std::expected<std::vector<PriorityRequest>, Error> leader_worker_priorities(const nlohmann::json& doc,
                                                                            const LoadedJob& job);

}  // namespace hypertopo::scheduler
