// Reading UFM's resources/ports answer at the size ARCHITECTURE §8 names: a ~100 MiB body (about
// 118,000 port records of a rail-optimised fabric, 132 scalable units x 32 hosts x 8 rails, with
// the fields UFM sends and we skip), with the parser reused (the steady state, as the agent keeps
// it) and with a fresh parser (a one-shot run, first touch of its buffers included); the whole
// fetch-free path from the ports and links bodies to the FabricGraph; and simdjson alone on the
// same bytes, the yardstick that path is held to (within 3x, ARCHITECTURE §8).
//
//   build/bench/ufm_parse_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <cstdlib>

#include "discoverers/ufm/ufm_fabric.h"
#include "tests/support/ufm/ufm_generator.h"

namespace {

using namespace hypertopo;

// `scripts/bench.sh --smoke` (HYPERTOPO_BENCH_SMOKE=1) proves the benchmarks run, under the
// sanitizers: 4 scalable units (about 3 MiB) instead of 132 there.
const testing::GeneratedUfm& fabric() {
  static const bool smoke = std::getenv("HYPERTOPO_BENCH_SMOKE") != nullptr;
  static const testing::GeneratedUfm generated = testing::generate_ufm_fabric(
      {.pods = smoke ? 4 : 132, .hosts_per_leaf = 32, .rails = 8, .spines_per_pod = 8, .cores = 16});
  return generated;
}

const std::string& ports_body() {
  static const std::string body = testing::json_list(fabric().ports);
  return body;
}

const std::string& links_body() {
  static const std::string body = testing::json_list(fabric().links);
  return body;
}

void BM_ParseUfmPorts(benchmark::State& state) {
  std::string body = ports_body();
  body.reserve(body.size() + 64);  // simdjson's padding, as a transport buffer would have it
  discoverers::ufm::UfmResponseParser parser;
  discoverers::ufm::UfmFabric fabric;
  // The steady state: the parser's buffers and the arrays already sized by an earlier fetch.
  if (!parser.ports(body, fabric)) {
    state.SkipWithError("parse failed");
    return;
  }
  for (auto _ : state) {
    fabric.clear();
    auto page = parser.ports(body, fabric);
    if (!page) {
      state.SkipWithError(page.error().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(fabric.ports.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
  state.counters["MiB"] = static_cast<double>(body.size()) / (1024.0 * 1024.0);
  state.counters["records"] = static_cast<double>(fabric.ports.size());
}
BENCHMARK(BM_ParseUfmPorts)->Unit(benchmark::kMillisecond);

void BM_ParseUfmLinks(benchmark::State& state) {
  std::string body = links_body();
  discoverers::ufm::UfmResponseParser parser;
  discoverers::ufm::UfmFabric fabric;
  for (auto _ : state) {
    fabric.clear();
    if (!parser.links(body, fabric)) {
      state.SkipWithError("parse failed");
      return;
    }
    benchmark::DoNotOptimize(fabric.links.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
  state.counters["MiB"] = static_cast<double>(body.size()) / (1024.0 * 1024.0);
}
BENCHMARK(BM_ParseUfmLinks)->Unit(benchmark::kMillisecond);

// A one-shot `hypertopo discover`: a new parser (its ~100 MiB buffers touched for the first time)
// and a new record vector on every iteration.
void BM_ParseUfmPortsFreshParser(benchmark::State& state) {
  std::string body = ports_body();
  body.reserve(body.size() + 64);
  for (auto _ : state) {
    discoverers::ufm::UfmResponseParser parser;
    discoverers::ufm::UfmFabric fabric;
    if (!parser.ports(body, fabric)) {
      state.SkipWithError("parse failed");
      return;
    }
    benchmark::DoNotOptimize(fabric.ports.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_ParseUfmPortsFreshParser)->Unit(benchmark::kMillisecond);

// The agent's run: the parser and the fabric's arrays kept from the run before (UfmRunState), both
// answers read, the graph built.
void BM_ParseUfmPortsAndLinksToGraph(benchmark::State& state) {
  std::string ports_text = ports_body();
  std::string links_text = links_body();
  discoverers::ufm::UfmResponseParser parser;
  discoverers::ufm::UfmFabric read;
  std::size_t vertices = 0;
  // The run before: without it, the first timed run pays for the parser's buffers and the arrays
  // (first touch of a few hundred MiB), and a benchmark this long runs only a few times.
  if (!parser.ports(ports_text, read) || !parser.links(links_text, read)) {
    state.SkipWithError("parse failed");
    return;
  }
  for (auto _ : state) {
    read.clear();
    if (!parser.ports(ports_text, read) || !parser.links(links_text, read)) {
      state.SkipWithError("parse failed");
      return;
    }
    std::vector<std::string> notes;
    auto graph = discoverers::ufm::build_ufm_graph(read, &notes);
    vertices = graph.vertex_count();
    benchmark::DoNotOptimize(vertices);
  }
  state.SetBytesProcessed(
      static_cast<std::int64_t>(state.iterations() * (ports_text.size() + links_text.size())));
  state.counters["vertices"] = static_cast<double>(vertices);
}
BENCHMARK(BM_ParseUfmPortsAndLinksToGraph)->Unit(benchmark::kMillisecond);

// The graph build of the run above alone, from answers read once.
void BM_UfmGraphFromReadAnswers(benchmark::State& state) {
  std::string ports_text = ports_body();
  std::string links_text = links_body();
  discoverers::ufm::UfmResponseParser parser;
  discoverers::ufm::UfmFabric read;
  if (!parser.ports(ports_text, read) || !parser.links(links_text, read)) {
    state.SkipWithError("parse failed");
    return;
  }
  std::size_t links = 0;
  for (auto _ : state) {
    std::vector<std::string> notes;
    auto graph = discoverers::ufm::build_ufm_graph(read, &notes);
    links = graph.links().size();
    benchmark::DoNotOptimize(links);
  }
  state.counters["links"] = static_cast<double>(links);
}
BENCHMARK(BM_UfmGraphFromReadAnswers)->Unit(benchmark::kMillisecond);

// What simdjson itself costs on the same two bodies, the yardstick of the graph build above.
// The DOM parse reads every byte into simdjson's tape (its published "parse" speed); the on-demand
// walk visits every record, every key and every value (as its raw token, unconverted), the least
// any reading of these answers can do.
void BM_BareSimdjsonDomPortsAndLinks(benchmark::State& state) {
  simdjson::padded_string ports(ports_body());
  simdjson::padded_string links(links_body());
  simdjson::dom::parser parser;
  std::size_t elements = 0;
  // Its buffers sized by a parse before, as for the graph build above.
  if (parser.parse(ports).error() || parser.parse(links).error()) {
    state.SkipWithError("parse failed");
    return;
  }
  for (auto _ : state) {
    for (const auto* body : {&ports, &links}) {
      simdjson::dom::array list;
      if (parser.parse(*body).get(list)) {
        state.SkipWithError("parse failed");
        return;
      }
      elements += list.size();
    }
    benchmark::DoNotOptimize(elements);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (ports.size() + links.size())));
}
BENCHMARK(BM_BareSimdjsonDomPortsAndLinks)->Unit(benchmark::kMillisecond);

void BM_BareSimdjsonOnDemandPortsAndLinks(benchmark::State& state) {
  simdjson::padded_string ports(ports_body());
  simdjson::padded_string links(links_body());
  simdjson::ondemand::parser parser;
  std::size_t touched = 0;
  if (parser.allocate(ports.size()) != simdjson::SUCCESS) {  // its buffers sized before, as above
    state.SkipWithError("allocation failed");
    return;
  }
  for (auto _ : state) {
    for (auto* body : {&ports, &links}) {
      simdjson::ondemand::document doc;
      simdjson::ondemand::array list;
      if (parser.iterate(*body).get(doc) || doc.get_array().get(list)) {
        state.SkipWithError("parse failed");
        return;
      }
      for (auto element : list) {
        simdjson::ondemand::object object;
        if (element.get_object().get(object)) {
          state.SkipWithError("not an object");
          return;
        }
        for (auto field : object) {
          std::string_view key;
          simdjson::ondemand::value value;
          if (field.unescaped_key().get(key) || field.value().get(value)) {
            state.SkipWithError("bad field");
            return;
          }
          touched += key.size() + value.raw_json_token().size();
        }
      }
    }
    benchmark::DoNotOptimize(touched);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (ports.size() + links.size())));
}
BENCHMARK(BM_BareSimdjsonOnDemandPortsAndLinks)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
