// scheduler/input/job_loader.h: job manifests -> the neutral JobRequest.
//
// Understands a Volcano Job (batch.volcano.sh/v1alpha1: tasks, replicas, networkTopology,
// partitionPolicy), a batch/v1 Job whose pod template carries Kueue TAS or KAI topology
// annotations (parallelism = pod count, container requests = per-pod requests, nodeSelector and
// tolerations respected), a KaiwoJob (kaiwo.silogen.ai/v1alpha1) and the neutral request documented
// in docs/placement.md (apiVersion hypertopo.io/v1alpha1, kind PlacementRequest).
//
//   auto job = load_job("job.yaml", nodes);   // nodes: for Kaiwo's GPUs-per-node rule
//   if (job) engine.place(job->request);
#pragma once

#include <expected>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "errors/error.h"
#include "scheduler/index/cluster_model.h"
#include "scheduler/placement/job_request.h"

namespace hypertopo::scheduler {

struct LoadedJob {
  JobRequest request;
  std::string format;  // volcano | kueue | kai | kaiwo | neutral
};

std::expected<LoadedJob, Error> parse_job(const nlohmann::json& doc, const std::vector<NodeSpec>& nodes);
std::expected<LoadedJob, Error> load_job(const std::filesystem::path& path,
                                         const std::vector<NodeSpec>& nodes);

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
