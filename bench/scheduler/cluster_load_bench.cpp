// Reading the cluster for `hypertopo place` / `simulate` at Volcano's pain-point scale: 6,000 GPU
// Nodes, 9,510 HyperNodes (6,000 single-node NVLink domains, 3,000 pairs, 500 leaves of 12 nodes,
// 10 spines of 600) and 1,800 bound Pods, as `kubectl get ... -o json` gives them (6.6 MB).
// Measures each loader, the three together, the bare simdjson parse of the same bytes (the floor),
// and a whole `place` of a 1,000-pod gang from those files.
//
//   build/bench/cluster_load_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   build/bench/cluster_load_bench --write-cluster=/tmp/cluster   # nodes.json, hypernodes.json,
//   build/bin/hypertopo place --nodes /tmp/cluster/nodes.json ...  # pods.json, job.json to time
#include <benchmark/benchmark.h>
#include <simdjson.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/placement_session.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Built with append: GCC 12 warns falsely (-Wrestrict) on some "literal" + string forms.
std::string name(const char* prefix, int v, int width) {
  std::string digits = std::to_string(v);
  if (static_cast<int>(digits.size()) < width)
    digits.insert(0, static_cast<std::size_t>(width) - digits.size(), '0');
  std::string out(prefix);
  out.append(digits);
  return out;
}

std::string uid(const char* kind, int v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%08x-%04x-4%03x-8%03x-%012x", static_cast<unsigned>(v * 2654435761u),
                static_cast<unsigned>(v & 0xffff), static_cast<unsigned>(std::strlen(kind)), 0x1a2,
                static_cast<unsigned>(v));
  return buf;
}

json node(int n) {
  const std::string host = name("gpu-", n, 4);
  json status = {
      {"allocatable",
       {{"cpu", "224"}, {"memory", "2063731Mi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}, {"rdma/ib", "8"}}},
      {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}},
      {"addresses",
       {{{"type", "InternalIP"},
         {"address", "10.1." + std::to_string(n / 250) + "." + std::to_string(n % 250)}}}}};
  json spec = json::object();
  if (n % 97 == 0)
    spec["taints"] = {{{"key", "nvidia.com/gpu-maintenance"}, {"value", "true"}, {"effect", "NoSchedule"}}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", host},
            {"resourceVersion", std::to_string(100000 + n)},
            {"labels",
             {{"kubernetes.io/hostname", host},
              {"kubernetes.io/arch", "amd64"},
              {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
              {"node.kubernetes.io/instance-type", "dgx-h100"}}}}},
          {"spec", spec},
          {"status", status}};
}

json hypernode(const std::string& n, int tier, const char* tier_name, const char* type,
               const std::vector<std::string>& members) {
  json list = json::array();
  for (const auto& m : members)
    list.push_back({{"type", type}, {"selector", {{"exactMatch", {{"name", m}}}}}});
  return {{"apiVersion", "topology.volcano.sh/v1alpha1"},
          {"kind", "HyperNode"},
          {"metadata", {{"name", n}}},
          {"spec", {{"tier", tier}, {"tierName", tier_name}, {"members", list}}},
          {"status", {{"nodeCount", members.size()}}}};
}

json pod(int p, int on_node) {
  const json requests = {{"cpu", "32"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "4"}};
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name("train-", p, 4)},
        {"namespace", "ml-team"},
        {"uid", uid("Pod", p)},
        {"labels", {{"app", "train"}, {"volcano.sh/job-name", name("job-", p / 60, 2)}}}}},
      {"spec",
       {{"nodeName", name("gpu-", on_node, 4)},
        {"schedulerName", "volcano"},
        {"containers",
         {{{"name", "main"},
           {"image", "nvcr.io/nvidia/pytorch:24.08-py3"},
           {"resources", {{"requests", requests}, {"limits", {{"nvidia.com/gpu", "4"}}}}}}}}}},
      {"status",
       {{"phase", "Running"}, {"podIP", "10.2." + std::to_string(p / 250) + "." + std::to_string(p % 250)}}}};
}

struct ClusterText {
  std::string nodes, hypernodes, pods, job;
};

// One line per file (kubectl indents; the parsers skip whitespace at memory speed, and the size
// stays near the 5.5 MB of the pain-point cluster's files).
ClusterText generate_cluster() {
  json nodes = json::array(), hns = json::array(), pods = json::array();
  for (int n = 0; n < 6000; ++n) {
    nodes.push_back(node(n));
    hns.push_back(hypernode(name("nvl-", n, 4), 1, "nvlink", "Node", {name("gpu-", n, 4)}));
  }
  for (int p = 0; p < 3000; ++p)
    hns.push_back(hypernode(name("pair-", p, 4), 2, "pair", "HyperNode",
                            {name("nvl-", 2 * p, 4), name("nvl-", 2 * p + 1, 4)}));
  for (int l = 0; l < 500; ++l) {
    std::vector<std::string> pairs;
    for (int k = 0; k < 6; ++k) pairs.push_back(name("pair-", 6 * l + k, 4));
    hns.push_back(hypernode(name("leaf-", l, 3), 3, "leaf", "HyperNode", pairs));
  }
  for (int s = 0; s < 10; ++s) {
    std::vector<std::string> leaves;
    for (int k = 0; k < 50; ++k) leaves.push_back(name("leaf-", 50 * s + k, 3));
    hns.push_back(hypernode(name("spine-", s, 2), 4, "spine", "HyperNode", leaves));
  }
  // 1,800 running pods of 4 GPUs, on three nodes of every ten.
  for (int p = 0; p < 1800; ++p) pods.push_back(pod(p, (p / 3) * 10 + p % 3));
  auto list = [](json items) {
    return json{
        {"apiVersion", "v1"}, {"kind", "List"}, {"metadata", {{"resourceVersion", ""}}}, {"items", items}}
        .dump();
  };
  // A 1,000-pod gang of 2 GPUs each (250 whole nodes), in 100 partitions of 10 that each keep to a
  // leaf, the whole gang inside one spine.
  const json job = {{"apiVersion", "hypertopo.io/v1alpha1"},
                    {"kind", "PlacementRequest"},
                    {"name", "gang"},
                    {"podSets",
                     {{{"name", "trainer"},
                       {"count", 1000},
                       {"requests", {{"cpu", "16"}, {"memory", "64Gi"}, {"nvidia.com/gpu", "2"}}},
                       {"topology", {{"mode", "required"}, {"level", "spine"}}},
                       {"partitions", {{"total", 100}, {"size", 10}, {"level", "leaf"}}}}}}};
  return {list(std::move(nodes)), list(std::move(hns)), list(std::move(pods)), job.dump(2)};
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_cluster(const fs::path& dir, const ClusterText& c) {
  write_file(dir / "nodes.json", c.nodes);
  write_file(dir / "hypernodes.json", c.hypernodes);
  write_file(dir / "pods.json", c.pods);
  write_file(dir / "job.json", c.job);
}

// The files, once, in a private temporary folder removed at exit.
struct ClusterFiles {
  fs::path dir;
  ClusterText text;
  ClusterFiles() {
    std::string pattern = (fs::temp_directory_path() / "cluster-load-bench.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = pattern;
    text = generate_cluster();
    write_cluster(dir, text);
  }
  ~ClusterFiles() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::int64_t bytes() const {
    return static_cast<std::int64_t>(text.nodes.size() + text.hypernodes.size() + text.pods.size());
  }
};

ClusterFiles& files() {
  static ClusterFiles f;
  return f;
}

void BM_LoadNodes(benchmark::State& state) {
  const auto path = files().dir / "nodes.json";
  for (auto _ : state) {
    auto nodes = load_nodes(path);
    if (!nodes || nodes->size() != 6000) state.SkipWithError("nodes did not load");
    benchmark::DoNotOptimize(nodes);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(files().text.nodes.size()));
}
BENCHMARK(BM_LoadNodes)->Unit(benchmark::kMillisecond);

void BM_LoadHyperNodes(benchmark::State& state) {
  const auto path = files().dir / "hypernodes.json";
  for (auto _ : state) {
    auto topology = load_topology(path);
    if (!topology || topology->hypernodes.size() != 9510) state.SkipWithError("HyperNodes did not load");
    benchmark::DoNotOptimize(topology);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(files().text.hypernodes.size()));
}
BENCHMARK(BM_LoadHyperNodes)->Unit(benchmark::kMillisecond);

void BM_LoadPods(benchmark::State& state) {
  const auto path = files().dir / "pods.json";
  for (auto _ : state) {
    auto pods = load_pods(path);
    if (!pods || pods->size() != 1800) state.SkipWithError("pods did not load");
    benchmark::DoNotOptimize(pods);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(files().text.pods.size()));
}
BENCHMARK(BM_LoadPods)->Unit(benchmark::kMillisecond);

// What `place` reads before it builds the index: the parse time of the target (< 60 ms).
void BM_LoadCluster(benchmark::State& state) {
  const ClusterFiles& f = files();
  for (auto _ : state) {
    auto nodes = load_nodes(f.dir / "nodes.json");
    auto topology = load_topology(f.dir / "hypernodes.json");
    auto pods = load_pods(f.dir / "pods.json");
    if (!nodes || !topology || !pods) state.SkipWithError("the cluster did not load");
    benchmark::DoNotOptimize(nodes);
    benchmark::DoNotOptimize(topology);
    benchmark::DoNotOptimize(pods);
  }
  state.SetBytesProcessed(state.iterations() * f.bytes());
}
BENCHMARK(BM_LoadCluster)->Unit(benchmark::kMillisecond);

// The same three files the way YAML (and JSON that simdjson refuses) is read: nlohmann's tree, then
// the same reader over it. This was the only way before simdjson read the cluster files.
void BM_LoadClusterThroughNlohmann(benchmark::State& state) {
  const ClusterFiles& f = files();
  for (auto _ : state) {
    auto nodes_doc = read_document(f.dir / "nodes.json");
    auto topology_doc = read_document(f.dir / "hypernodes.json");
    auto pods_doc = read_document(f.dir / "pods.json");
    if (!nodes_doc || !topology_doc || !pods_doc) {
      state.SkipWithError("the cluster did not parse");
      break;
    }
    auto nodes = parse_nodes(*nodes_doc);
    auto topology = parse_topology(*topology_doc);
    auto pods = parse_pods(*pods_doc);
    if (!nodes || !topology || !pods) state.SkipWithError("the cluster did not load");
    benchmark::DoNotOptimize(nodes);
    benchmark::DoNotOptimize(topology);
    benchmark::DoNotOptimize(pods);
  }
  state.SetBytesProcessed(state.iterations() * f.bytes());
}
BENCHMARK(BM_LoadClusterThroughNlohmann)->Unit(benchmark::kMillisecond);

// The floor: simdjson's DOM parse of the same three documents, nothing read out of them.
void BM_SimdjsonParseOnly(benchmark::State& state) {
  const ClusterFiles& f = files();
  const simdjson::padded_string docs[] = {simdjson::padded_string(f.text.nodes),
                                          simdjson::padded_string(f.text.hypernodes),
                                          simdjson::padded_string(f.text.pods)};
  simdjson::dom::parser parser;
  for (auto _ : state) {
    for (const auto& d : docs) {
      auto doc = parser.parse(d);
      if (doc.error()) state.SkipWithError("simdjson refused the cluster");
      benchmark::DoNotOptimize(doc);
    }
  }
  state.SetBytesProcessed(state.iterations() * f.bytes());
}
BENCHMARK(BM_SimdjsonParseOnly)->Unit(benchmark::kMillisecond);

// A whole `place` but the process start and the printing: load, index, placement.
void BM_PlaceGang1000(benchmark::State& state) {
  const ClusterFiles& f = files();
  PlaceInputs in{
      .nodes = f.dir / "nodes.json", .topology = f.dir / "hypernodes.json", .job = f.dir / "job.json"};
  in.pods = f.dir / "pods.json";
  double parse = 0, index = 0, place = 0;
  for (auto _ : state) {
    auto report = run_placement(in);
    if (!report || !report->result.value("fit", false)) {
      state.SkipWithError(report ? "the gang did not fit" : report.error().message().c_str());
      break;
    }
    parse += report->parse_ms;
    index += report->index_ms;
    place += report->place_ms;
  }
  const double n = static_cast<double>(std::max<benchmark::IterationCount>(state.iterations(), 1));
  state.counters["parse_ms"] = parse / n;
  state.counters["index_ms"] = index / n;
  state.counters["place_ms"] = place / n;
}
BENCHMARK(BM_PlaceGang1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hypertopo::scheduler

int main(int argc, char** argv) {
  constexpr std::string_view kWrite = "--write-cluster=";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with(kWrite)) continue;
    const std::filesystem::path dir(arg.substr(kWrite.size()));
    std::filesystem::create_directories(dir);
    const auto cluster = hypertopo::scheduler::generate_cluster();
    hypertopo::scheduler::write_cluster(dir, cluster);
    std::cout << "wrote " << (dir / "{nodes,hypernodes,pods,job}.json").string() << " ("
              << cluster.nodes.size() + cluster.hypernodes.size() + cluster.pods.size()
              << " bytes of cluster)\n";
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
