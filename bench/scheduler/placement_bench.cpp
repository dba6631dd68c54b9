// Placement at Volcano's pain-point scale (PR 5811: ~5.5 minutes per PodGroup on 6,000 nodes /
// 9,600 HyperNodes) and a 100,000-node four-layer slice request, plus the index's memory.
//
//   build-release/bench/scheduler_placement_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>

#include "bench/scheduler/generated_cluster.h"
#include "scheduler/index/topology_index.h"
#include "scheduler/placement/placement_engine.h"

namespace hypertopo::scheduler {
namespace {

HyperNodeMember node_member(const std::string& n) {
  return {HyperNodeMember::Type::kNode, MemberSelector::exact(n)};
}
HyperNodeMember hn_member(const std::string& n) {
  return {HyperNodeMember::Type::kHyperNode, MemberSelector::exact(n)};
}

// 6,000 nodes; tier 1: 6,000 single-node HyperNodes (a host's NVLink domain), tier 2: 3,000 pairs,
// tier 3: 500 leaf groups of 12 nodes, tier 4: 100 spines of 60 nodes = 9,600 HyperNodes. Every
// third node already runs work.
TopologyIndex volcano_scale_index() {
  std::vector<NodeSpec> nodes;
  std::vector<HyperNodeSpec> hns;
  std::vector<BoundPod> pods;
  for (int n = 0; n < 6000; ++n) {
    NodeSpec node;
    node.name = padded_name("node-", n, 4);
    node.allocatable = {{"cpu", 128000}, {"memory", 1LL << 40}, {"pods", 110}, {"nvidia.com/gpu", 8}};
    nodes.push_back(node);
    hns.push_back({padded_name("nvl-", n, 4), 1, "nvlink", {node_member(node.name)}});
    if (n % 3 == 0)
      pods.push_back(
          {std::string("busy-").append(node.name), node.name, {{"cpu", 32000}, {"memory", 64LL << 30}}});
  }
  for (int p = 0; p < 3000; ++p) {
    hns.push_back({padded_name("pair-", p, 4),
                   2,
                   "pair",
                   {hn_member(padded_name("nvl-", 2 * p, 4)), hn_member(padded_name("nvl-", 2 * p + 1, 4))}});
  }
  for (int l = 0; l < 500; ++l) {
    HyperNodeSpec leaf{padded_name("leaf-", l, 3), 3, "leaf", {}};
    for (int k = 0; k < 6; ++k) leaf.members.push_back(hn_member(padded_name("pair-", 6 * l + k, 4)));
    hns.push_back(leaf);
  }
  for (int s = 0; s < 100; ++s) {
    HyperNodeSpec spine{padded_name("spine-", s, 3), 4, "spine", {}};
    for (int k = 0; k < 5; ++k) spine.members.push_back(hn_member(padded_name("leaf-", 5 * s + k, 3)));
    hns.push_back(spine);
  }
  auto index = TopologyIndex::from_hypernodes(hns, nodes, pods);
  if (!index) throw std::runtime_error(index.error().message());
  return std::move(*index);
}

void BM_VolcanoGang1000In100Partitions(benchmark::State& state) {
  TopologyIndex index = volcano_scale_index();
  PlacementEngine engine(index, BinpackWeights{});
  PodSetRequest ps;
  ps.name = "trainer";
  ps.count = 1000;
  ps.per_pod = {{"cpu", 2000}, {"memory", 8LL << 30}};
  ps.mode = TopologyMode::kRequired;
  ps.level = std::to_string(4);  // tier 4: the spines
  ps.partitions = PartitionRequest{100, 10, 100, std::to_string(2)};
  JobRequest job{"gang", {ps}};
  for (auto _ : state) {
    auto placed = engine.place(job);
    if (!placed || !placed->fit) {
      state.SkipWithError(placed ? placed->reason.c_str() : placed.error().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(placed->pod_sets[0].assignment.data());
    // What the placement looked like, so a run shows it placed the whole gang where it should.
    state.counters["job_tier"] = placed->pod_sets[0].tier;
    state.counters["pods_placed"] = placed->pod_sets[0].placed;
    state.counters["nodes_used"] = static_cast<double>(placed->pod_sets[0].assignment.size());
    engine.release(job, *placed);
  }
  state.counters["hypernodes"] = static_cast<double>(index.domains().size() - 1);
  state.counters["nodes"] = static_cast<double>(index.nodes().size());
}
BENCHMARK(BM_VolcanoGang1000In100Partitions)->Unit(benchmark::kMillisecond);

// 100,000 hosts: 25 blocks x 125 racks x 8 NVSwitch domains x 4 hosts, 8 GPUs each.
// HYPERTOPO_BENCH_SMOKE=1 (scripts/bench.sh --smoke) builds 2 of the blocks (8,000 hosts): the
// 4,096-pod request still fits in one block, and the run proves the benchmarks run.
std::vector<NodeSpec> hundred_k_nodes() {
  const int blocks = std::getenv("HYPERTOPO_BENCH_SMOKE") != nullptr ? 2 : 25;
  std::vector<NodeSpec> nodes;
  nodes.reserve(static_cast<std::size_t>(blocks) * 4000);
  int n = 0;
  for (int b = 0; b < blocks; ++b) {
    for (int r = 0; r < 125; ++r) {
      for (int s = 0; s < 8; ++s) {
        for (int h = 0; h < 4; ++h, ++n) {
          NodeSpec node;
          node.name = padded_name("gpu-", n, 6);
          node.labels = {{"topology/block", padded_name("b", b)},
                         {"topology/rack", padded_name("r", r)},
                         {"topology/nvswitch", padded_name("s", s)},
                         {kHostnameLabel, node.name}};
          node.allocatable = {{"cpu", 192000}, {"memory", 2LL << 40}, {"pods", 110}, {"nvidia.com/gpu", 8}};
          nodes.push_back(std::move(node));
        }
      }
    }
  }
  return nodes;
}

const LevelTopologySpec kFourLevels{"default",
                                    {"topology/block", "topology/rack", "topology/nvswitch", kHostnameLabel}};

void BM_FourLayerSlices4096On100k(benchmark::State& state) {
  auto index = TopologyIndex::from_levels(kFourLevels, hundred_k_nodes(), {});
  if (!index) {
    state.SkipWithError(index.error().message().c_str());
    return;
  }
  PlacementEngine engine(*index, BinpackWeights{});
  PodSetRequest ps;
  ps.name = "seed";
  ps.count = 4096;
  ps.per_pod = {{"nvidia.com/gpu", 4}, {"cpu", 16000}};
  ps.mode = TopologyMode::kRequired;
  ps.level = "topology/block";
  ps.slices = {{"topology/rack", 16}, {"topology/nvswitch", 4}, {kHostnameLabel, 2}};
  JobRequest job{"seed", {ps}};
  for (auto _ : state) {
    auto placed = engine.place(job);
    if (!placed || !placed->fit) {
      state.SkipWithError(placed ? placed->reason.c_str() : placed.error().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(placed->pod_sets[0].assignment.data());
    state.counters["job_tier"] = placed->pod_sets[0].tier;
    state.counters["pods_placed"] = placed->pod_sets[0].placed;
    state.counters["nodes_used"] = static_cast<double>(placed->pod_sets[0].assignment.size());
    engine.release(job, *placed);
  }
}
BENCHMARK(BM_FourLayerSlices4096On100k)->Unit(benchmark::kMillisecond);

long maxrss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

void BM_Index100kBuild(benchmark::State& state) {
  std::size_t bytes = 0;
  long rss_before = 0, rss_after = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto nodes = hundred_k_nodes();
    rss_before = maxrss_kib();
    state.ResumeTiming();
    auto index = TopologyIndex::from_levels(kFourLevels, std::move(nodes), {});
    benchmark::DoNotOptimize(index);
    state.PauseTiming();
    bytes = index ? index->approximate_bytes() : 0;
    rss_after = maxrss_kib();
    state.ResumeTiming();
  }
  state.counters["index_MiB"] = static_cast<double>(bytes) / (1024.0 * 1024.0);
  state.counters["peak_rss_MiB"] = static_cast<double>(rss_after) / 1024.0;
  state.counters["rss_growth_MiB"] = static_cast<double>(rss_after - rss_before) / 1024.0;
}
BENCHMARK(BM_Index100kBuild)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace hypertopo::scheduler

BENCHMARK_MAIN();
