// Parsing UFM's resources/ports answer at the size ARCHITECTURE §8 names: a ~100 MiB body (about
// 118,000 port records of a rail-optimised fabric, 132 scalable units x 32 hosts x 8 rails, with
// the fields UFM sends and we skip) in under half a second, with the parser reused (the steady
// state) and with a fresh parser (a one-shot run, first-touch memory included); and the whole
// fetch-free path from the ports and links bodies to the FabricGraph.
//
//   build/bench/ufm_parse_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include "discoverers/ufm/ufm_fabric.h"
#include "tests/support/ufm/ufm_generator.h"

namespace {

using namespace hypertopo;

const testing::GeneratedUfm& fabric() {
  static const testing::GeneratedUfm generated = testing::generate_ufm_fabric(
      {.pods = 132, .hosts_per_leaf = 32, .rails = 8, .spines_per_pod = 8, .cores = 16});
  return generated;
}

const std::string& ports_body() {
  static const std::string body = testing::json_list(fabric().ports);
  return body;
}

void BM_ParseUfmPorts(benchmark::State& state) {
  std::string body = ports_body();
  body.reserve(body.size() + 64);  // simdjson's padding, as a transport buffer would have it
  discoverers::ufm::UfmResponseParser parser;
  std::vector<discoverers::ufm::UfmPort> ports;
  // The steady state: the parser's buffers and the vector already sized by an earlier fetch.
  if (!parser.ports(body, ports)) {
    state.SkipWithError("parse failed");
    return;
  }
  for (auto _ : state) {
    ports.clear();
    auto page = parser.ports(body, ports);
    if (!page) {
      state.SkipWithError(page.error().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(ports.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
  state.counters["MiB"] = static_cast<double>(body.size()) / (1024.0 * 1024.0);
  state.counters["records"] = static_cast<double>(ports.size());
}
BENCHMARK(BM_ParseUfmPorts)->Unit(benchmark::kMillisecond);

// A one-shot `hypertopo discover`: a new parser (its ~100 MiB buffers touched for the first time)
// and a new record vector on every iteration.
void BM_ParseUfmPortsFreshParser(benchmark::State& state) {
  std::string body = ports_body();
  body.reserve(body.size() + 64);
  for (auto _ : state) {
    discoverers::ufm::UfmResponseParser parser;
    std::vector<discoverers::ufm::UfmPort> ports;
    if (!parser.ports(body, ports)) {
      state.SkipWithError("parse failed");
      return;
    }
    benchmark::DoNotOptimize(ports.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_ParseUfmPortsFreshParser)->Unit(benchmark::kMillisecond);

void BM_ParseUfmPortsAndLinksToGraph(benchmark::State& state) {
  std::string ports_text = ports_body();
  std::string links_text = testing::json_list(fabric().links);
  discoverers::ufm::UfmResponseParser parser;
  std::size_t vertices = 0;
  for (auto _ : state) {
    std::vector<discoverers::ufm::UfmPort> ports;
    std::vector<discoverers::ufm::UfmLink> links;
    if (!parser.ports(ports_text, ports) || !parser.links(links_text, links)) {
      state.SkipWithError("parse failed");
      return;
    }
    std::vector<std::string> notes;
    auto graph = discoverers::ufm::build_ufm_graph(ports, links, &notes);
    vertices = graph.vertex_count();
    benchmark::DoNotOptimize(vertices);
  }
  state.SetBytesProcessed(
      static_cast<std::int64_t>(state.iterations() * (ports_text.size() + links_text.size())));
  state.counters["vertices"] = static_cast<double>(vertices);
}
BENCHMARK(BM_ParseUfmPortsAndLinksToGraph)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
