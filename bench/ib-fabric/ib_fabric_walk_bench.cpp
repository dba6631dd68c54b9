// Live walk of a 4,096-HCA simulated fabric: our walker (child walk + ibnd cache + load into a
// FabricGraph) next to stock `ibnetdiscover` on the same ibsim instance, plus the offline replay.
//
//   build-release/bench/ib_fabric_walk_bench --benchmark_enable_random_interleaving=true
#include <benchmark/benchmark.h>

#include <iostream>
#include <memory>
#include <sstream>

#include "discoverers/ib-fabric/fabric_walk.h"
#include "discoverers/ib-fabric/ibsim_netfile.h"
#include "discoverers/ib-fabric/simulated_fabric.h"
#include "discoverers/ibnetdiscover/ibnetdiscover_parser.h"
#include "tests/support/ibsim/ibsim_fabrics.h"

namespace {

namespace ibf = hypertopo::discoverers::ib_fabric;

// 16 SUs x 32 hosts x 8 rails = 4,096 HCAs on 128 rail leaves and 64 spines.
constexpr hypertopo::testing::SuperPodSpec kSpec{
    .scalable_units = 16, .hosts_per_su = 32, .rails = 8, .spines = 64, .uplinks_per_leaf = 32};

struct SharedSimulator {
  std::unique_ptr<ibf::SimulatedFabric> sim;
  std::size_t endpoints = 0;
  std::string error;
};

SharedSimulator& simulator() {
  static SharedSimulator shared = [] {
    SharedSimulator s;
    if (auto missing = ibf::simulator_missing(); !missing.empty()) {
      s.error = "ibsim not available: " + missing;
      return s;
    }
    auto fabric = hypertopo::testing::rail_optimised_superpod(kSpec);
    s.endpoints = fabric.endpoints;
    std::ostringstream net;
    auto summary = ibf::write_ibsim_netfile(fabric.graph, net);
    if (!summary) {
      s.error = summary.error().message();
      return s;
    }
    auto sim = ibf::SimulatedFabric::start(net.str());
    if (!sim) {
      s.error = sim.error().message();
      return s;
    }
    s.sim = std::move(*sim);
    return s;
  }();
  return shared;
}

// state.range(0): 1 also records the walk as an ibnd cache (what replay needs).
void BM_WalkHypertopo(benchmark::State& state) {
  auto& shared = simulator();
  if (!shared.sim) return state.SkipWithError(shared.error.c_str());
  shared.sim->set_record_walks(state.range(0) != 0);
  std::size_t found = 0;
  for (auto _ : state) {
    auto graph = shared.sim->walk({HT_IB_WALKER});
    if (!graph) return state.SkipWithError(graph.error().message().c_str());
    found = graph->endpoint_count();
    benchmark::DoNotOptimize(graph);
  }
  if (found != shared.endpoints) state.SkipWithError("the walk missed CA ports");
  state.counters["hcas"] = static_cast<double>(found);
}

void BM_WalkStockIbnetdiscover(benchmark::State& state) {
  auto& shared = simulator();
  if (!shared.sim) return state.SkipWithError(shared.error.c_str());
  std::size_t size = 0;
  for (auto _ : state) {
    auto text = shared.sim->capture_ibnetdiscover();
    if (!text) return state.SkipWithError(text.error().message().c_str());
    size = text->size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(size);
}

// What the stock tool costs when its text must become a FabricGraph as well.
void BM_WalkStockIbnetdiscoverAndParse(benchmark::State& state) {
  auto& shared = simulator();
  if (!shared.sim) return state.SkipWithError(shared.error.c_str());
  for (auto _ : state) {
    auto text = shared.sim->capture_ibnetdiscover();
    if (!text) return state.SkipWithError(text.error().message().c_str());
    auto parsed = hypertopo::discoverers::parse_ibnetdiscover(*text, "ibnetdiscover");
    if (!parsed) return state.SkipWithError(parsed.error().message().c_str());
    benchmark::DoNotOptimize(parsed);
  }
}

void BM_ReplayCache(benchmark::State& state) {
  auto& shared = simulator();
  if (!shared.sim) return state.SkipWithError(shared.error.c_str());
  shared.sim->set_record_walks(true);
  if (shared.sim->last_cache().empty() && !shared.sim->walk({HT_IB_WALKER})) {
    return state.SkipWithError("no cache to replay");
  }
  for (auto _ : state) {
    auto graph = ibf::load_fabric_cache(shared.sim->last_cache());
    if (!graph) return state.SkipWithError(graph.error().message().c_str());
    benchmark::DoNotOptimize(graph);
  }
}

// Child processes do the walking: wall time is what counts. scripts/bench.sh runs 5 repetitions
// with --benchmark_enable_random_interleaving=true so that load drift on a shared machine hits all
// alike; its smoke run does one walk of each.
BENCHMARK(BM_WalkStockIbnetdiscover)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_WalkHypertopo)
    ->ArgName("record")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK(BM_WalkStockIbnetdiscoverAndParse)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_ReplayCache)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
