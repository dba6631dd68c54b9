// `hypertopo place --kubeconfig K --job J` against the in-tree loopback API server: the command
// lists 10,000 Nodes, their HyperNodes (leaves of 8 to 16 nodes, spines of 10 leaves) and 100,000
// bound Pods (pages of 500), then places a 64-pod gang (16 in the smoke run). The server and its
// store live in a child process and `hypertopo` in another, so the peak resident memory wait4
// reports (ru_maxrss, the pages of the lists included) is the command's own. Target: under 300 MiB.
// Counters: peak_MiB; the time is the wall time of the whole command (process start, lists over
// HTTP, reading, placing, printing). The loopback server serialises each page from its store on the
// request, slower than a real API server's watch cache, so the listing part is an upper bound.
// HYPERTOPO_BENCH_SMOKE=1 (scripts/bench.sh --smoke) shrinks it to 600 Nodes and 6,000 Pods.
// Measured (2-core VM, release): 2.7 s, peak 171 MiB.
//
//   build-rel/bench/place_cluster_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/scheduler/generated_cluster.h"
#include "tests/support/apiserver/loopback_apiserver.h"

extern char** environ;

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

bool smoke() { return std::getenv("HYPERTOPO_BENCH_SMOKE") != nullptr; }

std::string node_name(int i) {
  std::string digits = std::to_string(i);
  return "n-" + std::string(digits.size() < 5 ? 5 - digits.size() : 0, '0') + digits;
}

json node(int i) {
  const std::string name = node_name(i);
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"labels",
         {{"kubernetes.io/hostname", name},
          {"kubernetes.io/arch", "amd64"},
          {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}}}},
      {"status",
       {{"allocatable", {{"cpu", "224"}, {"memory", "2063731Mi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}},
        {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

// A pod as a controller writes it: labels, an owner, a container with requests and limits.
json pod(int i, const std::string& on) {
  const json requests = {{"cpu", "8"}, {"memory", "64Gi"}, {"nvidia.com/gpu", "1"}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", "w-" + std::to_string(i)},
            {"namespace", "team-" + std::to_string(i % 20)},
            {"labels", {{"app", "trainer"}, {"job-name", "job-" + std::to_string(i / 8)}}}}},
          {"spec",
           {{"nodeName", on},
            {"schedulerName", "volcano"},
            {"containers",
             {{{"name", "main"},
               {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
               {"resources", {{"requests", requests}, {"limits", requests}}}}}}}},
          {"status", {{"phase", "Running"}, {"startTime", "2026-11-01T00:00:00Z"}}}};
}

struct Seeded {
  pid_t server = 0;  // the process that serves the cluster
  fs::path dir;
};

// Fills the server's store and serves it until the benchmark ends. Run in a child process: the
// benchmark process that starts `hypertopo` stays small, so the peak wait4 reports is the command's
// own (an exec'd child's ru_maxrss starts from its parent's memory).
[[noreturn]] void serve_cluster(int url_out) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  testing::LoopbackApiServer server{testing::LoopbackApiServerOptions{.bearer_token = "t0ken"}};
  if (!server.start()) std::_Exit(1);
  const int nodes = smoke() ? 600 : 10000;
  const int pods = smoke() ? 6000 : 100000;
  auto create = [&](const std::string& path, const json& object) {
    auto r = server.store().handle({.method = "POST", .path = path, .body = object.dump()});
    if (r.status != 201) throw std::runtime_error("seeding " + path + ": " + r.body);
  };
  std::vector<std::string> leaves, members;
  int leaf_size = 8;
  for (int i = 0; i < nodes; ++i) {
    // A create drops status (the kubelet writes it through /status), so it is written there.
    const json n = node(i);
    create("/api/v1/nodes", n);
    auto r = server.store().handle(
        {.method = "PUT", .path = "/api/v1/nodes/" + node_name(i) + "/status", .body = n.dump()});
    if (r.status != 200) throw std::runtime_error("seeding the status of " + node_name(i) + ": " + r.body);
    members.push_back(node_name(i));
    if (static_cast<int>(members.size()) == leaf_size || i == nodes - 1) {
      leaves.push_back("leaf-" + std::to_string(leaves.size()));
      create("/apis/topology.volcano.sh/v1alpha1/hypernodes",
             exact_hypernode(leaves.back(), 1, "Node", members));
      members.clear();
      leaf_size = leaf_size == 16 ? 8 : leaf_size + 4;
    }
  }
  for (std::size_t sp = 0; sp * 10 < leaves.size(); ++sp) {
    const auto first = leaves.begin() + static_cast<std::ptrdiff_t>(sp * 10);
    const auto last = leaves.begin() + static_cast<std::ptrdiff_t>(std::min(leaves.size(), sp * 10 + 10));
    create("/apis/topology.volcano.sh/v1alpha1/hypernodes",
           exact_hypernode("spine-" + std::to_string(sp), 2, "HyperNode",
                           std::vector<std::string>(first, last)));
  }
  // Pods on the first 90% of the nodes; the rest stay free for the gang.
  const int busy = nodes - nodes / 10;
  for (int i = 0; i < pods; ++i) {
    const json p = pod(i, node_name(i % busy));
    create("/api/v1/namespaces/" + p["metadata"]["namespace"].get<std::string>() + "/pods", p);
  }
  const std::string url = server.url() + "\n";
  if (::write(url_out, url.data(), url.size()) != static_cast<ssize_t>(url.size())) std::_Exit(1);
  ::close(url_out);
  for (;;) ::pause();
}

Seeded& cluster() {
  static Seeded* seeded = [] {
    auto* s = new Seeded;
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    s->server = ::fork();
    if (s->server == 0) {
      ::close(fds[0]);
      serve_cluster(fds[1]);
    }
    ::close(fds[1]);
    std::string url;
    char c = 0;
    while (::read(fds[0], &c, 1) == 1 && c != '\n') url += c;
    ::close(fds[0]);
    if (url.empty()) throw std::runtime_error("the loopback API server did not start");
    s->dir = fs::temp_directory_path() / ("place-cluster-bench-" + std::to_string(::getpid()));
    fs::create_directories(s->dir);
    std::ofstream(s->dir / "kubeconfig")
        << "apiVersion: v1\nkind: Config\nclusters:\n- name: loop\n  cluster:\n"
           "    server: "
        << url
        << "\nusers:\n- name: me\n  user:\n    token: t0ken\n"
           "contexts:\n- name: loop\n  context:\n    cluster: loop\n    user: me\n"
           "current-context: loop\n";
    const json spec{
        {"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "8"}}}}}}}}};
    std::ofstream(s->dir / "job.json")
        << json{{"apiVersion", "batch.volcano.sh/v1alpha1"},
                {"kind", "Job"},
                {"metadata", {{"name", "train"}, {"namespace", "ml"}}},
                {"spec",
                 {{"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 2}}},
                  {"tasks",
                   {{{"name", "worker"}, {"replicas", smoke() ? 16 : 64}, {"template", {{"spec", spec}}}}}}}}}
               .dump();
    return s;
  }();
  return *seeded;
}

void BM_PlaceFromCluster(benchmark::State& state) {
  Seeded& s = cluster();
  const std::string kubeconfig = (s.dir / "kubeconfig").string();
  const std::string job = (s.dir / "job.json").string();
  std::vector<std::string> args{HT_HYPERTOPO_BINARY, "place", "--kubeconfig", kubeconfig, "--job", job};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  long peak_kib = 0;
  for (auto _ : state) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
      state.SkipWithError("could not start hypertopo");
      break;
    }
    posix_spawn_file_actions_destroy(&actions);
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      const std::string why = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                                : "signal " + std::to_string(WTERMSIG(status));
      state.SkipWithError(("hypertopo place did not exit 0: " + why).c_str());
      break;
    }
    peak_kib = std::max(peak_kib, usage.ru_maxrss);
  }
  state.counters["peak_MiB"] = static_cast<double>(peak_kib) / 1024.0;
}
BENCHMARK(BM_PlaceFromCluster)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace hypertopo::scheduler

BENCHMARK_MAIN();
