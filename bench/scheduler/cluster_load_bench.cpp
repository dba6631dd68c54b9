// Reading the cluster for `hypertopo place` / `simulate` at Volcano's pain-point scale: 6,000 GPU
// Nodes, 9,510 HyperNodes (6,000 single-node NVLink domains, 3,000 pairs, 500 leaves of 12 nodes,
// 10 spines of 600) and 1,800 bound Pods, as `kubectl get ... -o json` gives them (6.6 MB).
// Measures each loader, the three together, the bare simdjson parse of the same bytes (the floor),
// and a whole `place` of a 1,000-pod gang from those files.
//
//   build/bench/cluster_load_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   build/bench/cluster_load_bench --write-cluster=/tmp/cluster   # nodes.json, hypernodes.json,
//   build/bin/hypertopo place --nodes /tmp/cluster/nodes.json ...  # pods.json, job.json to time
//   build/bench/cluster_load_bench --write-cluster=/tmp/big --nodes=10000 --pods=100000  # another size
#include <benchmark/benchmark.h>
#include <simdjson.h>
#include <stdlib.h>

#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/scheduler/generated_cluster.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/placement_session.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct ClusterText {
  std::string nodes, hypernodes, pods, job;
};

// One line per file (kubectl indents; the parsers skip whitespace at memory speed, and the size
// stays near the 5.5 MB of the pain-point cluster's files).
ClusterText cluster_text(int nodes = 6000, int pods = 1800) {
  GeneratedCluster c = generate_cluster(nodes, pods);
  auto list = [](std::vector<json> items) {
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
  return {list(std::move(c.nodes)), list(std::move(c.hypernodes)), list(std::move(c.pods)), job.dump(2)};
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
    text = cluster_text();
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
  // --nodes=N and --pods=N size the cluster --write-cluster writes (generated_cluster.h).
  int nodes = 6000, pods = 1800;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    for (auto [flag, value] : {std::pair{std::string_view("--nodes="), &nodes}, {"--pods=", &pods}}) {
      if (!arg.starts_with(flag)) continue;
      const std::string_view digits = arg.substr(flag.size());
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *value);
      if (ec != std::errc() || end != digits.data() + digits.size() || *value < 1 || *value > 1000000) {
        std::cerr << arg << ": expected a count from 1 to 1,000,000\n";
        return 2;
      }
    }
  }
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with(kWrite)) continue;
    const std::filesystem::path dir(arg.substr(kWrite.size()));
    std::filesystem::create_directories(dir);
    const auto cluster = hypertopo::scheduler::cluster_text(nodes, pods);
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
