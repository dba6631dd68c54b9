// Tree building at the scale ARCHITECTURE §8 names: a 100,000-endpoint fabric (12,512 nodes x 8
// rails, leaf / pod-spine / core) in well under a second, with its peak memory, and what the fabric
// health pass adds to it (health:1 against health:0).
//
//   build/bench/tree_builder_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "discoverers/demo/demo_fabric.h"
#include "discoverers/ibnetdiscover/ibnetdiscover_parser.h"
#include "topology/tree_builder.h"

namespace {

using namespace hypertopo;

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

// HYPERTOPO_BENCH_SMOKE=1 (scripts/bench.sh --smoke) builds a tenth of it (39 scalable units,
// 9,984 endpoints): the run proves the benchmarks run.
discoverers::DemoFabricSpec large_spec() {
  discoverers::DemoFabricSpec s;
  s.scalable_units = 391;  // x 32 hosts = 12,512 nodes, x 8 rails = 100,096 compute endpoints
  if (std::getenv("HYPERTOPO_BENCH_SMOKE") != nullptr) s.scalable_units = 39;
  s.hosts_per_su = 32;
  s.rails = 8;
  s.sus_per_pod = 4;
  s.spines_per_pod = 16;
  s.cores = 64;
  s.core_links_per_spine = 8;
  s.storage = true;
  s.sharp = true;
  return s;
}

// state.range(0) = 1: with the fabric health pass (the default), 0: without; the difference is
// what the health pass costs.
void BM_BuildTree100kEndpoints(benchmark::State& state) {
  const auto graph = discoverers::generate_demo_fabric(large_spec());
  auto options = discoverers::demo_builder_options();
  options.assess_health = state.range(0) != 0;
  auto builder = topology::TreeBuilder::create(options);
  std::size_t domains = 0;
  for (auto _ : state) {
    auto tree = builder->build(graph);
    if (!tree) {
      state.SkipWithError(tree.error().message().c_str());
      return;
    }
    domains = tree->size();
    benchmark::DoNotOptimize(tree);
  }
  state.counters["endpoints"] = static_cast<double>(graph.endpoint_count());
  state.counters["switches"] = static_cast<double>(graph.switch_count());
  state.counters["links"] = static_cast<double>(graph.links().size());
  state.counters["hypernodes"] = static_cast<double>(domains);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_BuildTree100kEndpoints)->ArgName("health")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

void BM_GenerateAndBuild100kEndpoints(benchmark::State& state) {
  // Everything a one-shot `discover` does after reading its input: the graph and the tree.
  auto builder = topology::TreeBuilder::create(discoverers::demo_builder_options());
  for (auto _ : state) {
    auto graph = discoverers::generate_demo_fabric(large_spec());
    auto tree = builder->build(graph);
    benchmark::DoNotOptimize(tree);
  }
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_GenerateAndBuild100kEndpoints)->Unit(benchmark::kMillisecond);

void BM_ParseTopographExample(benchmark::State& state) {
  const char* dir = std::getenv("HYPERTOPO_FIXTURES");
  std::string path = std::string(dir ? dir : "../shared/fixtures") + "/ibnetdiscover/topograph-example.out";
  std::ifstream in(path);
  if (!in) {
    state.SkipWithError(("fixture not found: " + path).c_str());
    return;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  for (auto _ : state) {
    auto parsed = discoverers::parse_ibnetdiscover(text, path);
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseTopographExample)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
