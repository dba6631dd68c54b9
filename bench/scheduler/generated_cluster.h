// bench/scheduler/generated_cluster.h: the cluster the scheduler benchmarks read, at Volcano's
// pain-point scale, as Kubernetes objects: 6,000 GPU Nodes (8 GPUs each, every 97th tainted),
// 9,510 HyperNodes (6,000 single-node NVLink domains, 3,000 pairs, 500 leaves of 12 nodes, 10
// spines of 600) and 1,800 running Pods of 4 GPUs on three nodes of every ten. cluster_load_bench
// writes it as kubectl's lists, extender_list_bench as an API server's pages.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hypertopo::scheduler {

struct GeneratedCluster {
  std::vector<nlohmann::json> nodes, hypernodes, pods;
};

// The same shape at another size (status_memory in scripts/bench.sh: 10,000 Nodes, 100,000 Pods):
// a leaf of 12 nodes and a spine of 50 leaves as far as the nodes go, the GPU pods on three nodes of
// every ten as above, and every pod beyond those a CPU pod (2 cores, 4 GiB) on the nodes in turn, as
// the system and service pods that make up most of a large cluster's pods. generate_cluster() is
// generate_cluster(6000, 1800).
GeneratedCluster generate_cluster(int nodes, int pods);
GeneratedCluster generate_cluster();

// A HyperNode whose members are named exactly (members of `type` Node or HyperNode), with no
// tierName or status: the shape the benchmarks that seed an API server create.
nlohmann::json exact_hypernode(const std::string& name, int tier, const char* type,
                               const std::vector<std::string>& members);

// `prefix` and `v`, zero-padded to `width` digits: "gpu-0042". The names every bench cluster uses.
std::string padded_name(const char* prefix, int v, int width = 0);

}  // namespace hypertopo::scheduler
