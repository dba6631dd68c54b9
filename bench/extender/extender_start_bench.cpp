// The extender's start to ready, as the binary starts: ClusterWatcher lists every kind from the
// in-tree loopback API server (pages of 500, its HTTP and JSON included) into a new ExtenderService,
// and the gate opens once every first list landed and the index is built (what /readyz waits for,
// and what the pod's postStart hook holds kube-scheduler back for). Two scales:
//   6,000 Nodes:  6,000 single-node NVLink HyperNodes, 3,000 pairs, 500 leaves of 12 nodes, 10 spines
//                 (9,510 HyperNodes, as bench/scheduler/generated_cluster.h) and 1,800 bound Pods;
//   20,000 Nodes: the same shape, 31,701 HyperNodes and 6,000 bound Pods.
// The second argument is the watcher's page size (500: the binary's).
// Targets: ready within 5 s and 15 s. Wall time (the work is on the watcher's threads); the counters
// say when each of the three big lists landed and when the gate opened (ms after start), which is
// where the time goes. The loopback server is not the real API server: it serialises each page from
// its store on the request, so the list times include a server that is slower than etcd's watch cache.
//
//   build-rel/bench/extender_start_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include "bench/scheduler/generated_cluster.h"
#include "k8s/client/kube_client.h"
#include "scheduler/extender/cluster_watcher.h"
#include "scheduler/extender/extender_service.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "timing/clock.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string name_of(const char* prefix, int v) {
  std::string digits = std::to_string(v);
  if (digits.size() < 5) digits.insert(0, 5 - digits.size(), '0');
  std::string out(prefix);
  out.append(digits);
  return out;
}

json node(int n) {
  const std::string host = name_of("gpu-", n);
  json spec = json::object();
  if (n % 97 == 0)
    spec["taints"] = {{{"key", "nvidia.com/gpu-maintenance"}, {"value", "true"}, {"effect", "NoSchedule"}}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", host},
            {"labels",
             {{"kubernetes.io/hostname", host},
              {"kubernetes.io/arch", "amd64"},
              {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
              {"node.kubernetes.io/instance-type", "dgx-h100"}}}}},
          {"spec", spec},
          {"status",
           {{"allocatable",
             {{"cpu", "224"},
              {"memory", "2063731Mi"},
              {"pods", "110"},
              {"nvidia.com/gpu", "8"},
              {"rdma/ib", "8"}}},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}}}}};
}

json pod(int p, int on_node) {
  const json requests = {{"cpu", "32"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "4"}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name_of("train-", p)}, {"namespace", "ml-team"}, {"labels", {{"app", "train"}}}}},
          {"spec",
           {{"nodeName", name_of("gpu-", on_node)},
            {"containers",
             {{{"name", "main"},
               {"image", "nvcr.io/nvidia/pytorch:24.08-py3"},
               {"resources", {{"requests", requests}, {"limits", {{"nvidia.com/gpu", "4"}}}}}}}}}},
          {"status", {{"phase", "Running"}}}};
}

bool put(testing::LoopbackApiServer& api, const std::string& method, const std::string& path,
         const json& body) {
  const auto r = api.store().handle(
      {.method = method, .path = path, .query = {}, .content_type = "application/json", .body = body.dump()});
  return r.status < 300;
}

// The cluster of `nodes` Nodes written straight into the server's store (the API server ignores
// status on create, so each Node's status goes through /status as the kubelet writes it).
bool seed(testing::LoopbackApiServer& api, int nodes) {
  for (int n = 0; n < nodes; ++n) {
    const json made = node(n);
    const std::string name = made["metadata"]["name"];
    if (!put(api, "POST", "/api/v1/nodes", made)) return false;
    json with_status = made;
    with_status["metadata"] = json::parse(api.store()
                                              .handle({.method = "GET",
                                                       .path = "/api/v1/nodes/" + name,
                                                       .query = {},
                                                       .content_type = "",
                                                       .body = ""})
                                              .body)["metadata"];
    if (!put(api, "PUT", "/api/v1/nodes/" + name + "/status", with_status)) return false;
  }
  const std::string hn = "/apis/topology.volcano.sh/v1alpha1/hypernodes";
  for (int n = 0; n < nodes; ++n) {
    if (!put(api, "POST", hn, exact_hypernode(name_of("nvl-", n), 1, "Node", {name_of("gpu-", n)})))
      return false;
  }
  for (int p = 0; p < nodes / 2; ++p) {
    if (!put(api, "POST", hn,
             exact_hypernode(name_of("pair-", p), 2, "HyperNode",
                             {name_of("nvl-", 2 * p), name_of("nvl-", 2 * p + 1)})))
      return false;
  }
  const int leaves = (nodes / 2 + 5) / 6;
  for (int l = 0; l < leaves; ++l) {
    std::vector<std::string> pairs;
    for (int k = 6 * l; k < std::min(6 * l + 6, nodes / 2); ++k) pairs.push_back(name_of("pair-", k));
    if (!put(api, "POST", hn, exact_hypernode(name_of("leaf-", l), 3, "HyperNode", pairs))) return false;
  }
  for (int s = 0; s * 50 < leaves; ++s) {
    std::vector<std::string> members;
    for (int k = 50 * s; k < std::min(50 * s + 50, leaves); ++k) members.push_back(name_of("leaf-", k));
    if (!put(api, "POST", hn, exact_hypernode(name_of("spine-", s), 4, "HyperNode", members))) return false;
  }
  // Bound pods of 4 GPUs on three nodes of every ten.
  for (int p = 0; p < nodes * 3 / 10; ++p) {
    if (!put(api, "POST", "/api/v1/namespaces/ml-team/pods", pod(p, (p / 3) * 10 + p % 3))) return false;
  }
  return true;
}

// HYPERTOPO_BENCH_SMOKE=1 (scripts/bench.sh --smoke) lists a twentieth of the cluster: the run proves
// the benchmark works, the release run gives the figures.
bool smoke() { return std::getenv("HYPERTOPO_BENCH_SMOKE") != nullptr; }

void BM_StartToReady(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0)) / (smoke() ? 20 : 1);
  const int page_size = static_cast<int>(state.range(1));  // objects per list request
  testing::LoopbackApiServer api;
  if (!api.start() || !seed(api, nodes)) {
    state.SkipWithError("the loopback API server did not take the cluster");
    return;
  }
  k8s::ClusterConfig config;
  config.server = api.url();
  k8s::ClientOptions options;
  options.qps = 0;
  auto client = k8s::KubeClient::create(config, options);
  if (!client) {
    state.SkipWithError("no client");
    return;
  }
  std::map<std::string, double> landed_ms;  // summed over iterations
  for (auto _ : state) {
    ExtenderService service(ExtenderOptions{.clock = std::make_shared<timing::ManualClock>()});
    ClusterWatcher watcher(**client, service, std::chrono::milliseconds(1000), page_size);
    const auto start = Clock::now();
    watcher.start();
    std::string last = service.not_ready_reason();
    // Polled every millisecond: when each big list left the gate's list, and when the gate opened.
    while (!service.ready()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      const std::string now = service.not_ready_reason();
      if (now == last) continue;
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      for (const char* kind : {"nodes", "pods", "hypernodes.topology.volcano.sh"}) {
        const std::string with = std::string(kind);
        auto listed = [&](const std::string& reason) {
          return reason.find(": " + with) != std::string::npos ||
                 reason.find(", " + with) != std::string::npos;
        };
        if (listed(last) && !listed(now)) landed_ms[with] += ms;
      }
      last = now;
    }
    const double ready_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    landed_ms["ready"] += ready_ms;
    state.SetIterationTime(ready_ms / 1000.0);
    if (service.node_count() != static_cast<std::size_t>(nodes)) state.SkipWithError("not every Node listed");
    watcher.stop();
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["nodes_landed_ms"] = landed_ms["nodes"] / n;
  state.counters["pods_landed_ms"] = landed_ms["pods"] / n;
  state.counters["hypernodes_landed_ms"] = landed_ms["hypernodes.topology.volcano.sh"] / n;
  state.counters["ready_ms"] = landed_ms["ready"] / n;
}
BENCHMARK(BM_StartToReady)
    ->Args({6000, 500})
    ->Args({6000, 5000})
    ->Args({20000, 500})
    ->Args({20000, 5000})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
}  // namespace hypertopo::scheduler

BENCHMARK_MAIN();
