// The extender's start-up, and every relist after a 410 Gone, at Volcano's pain-point scale: the
// cluster `place` reads in bench/scheduler/cluster_load_bench.cpp (6,000 GPU Nodes; 9,510
// HyperNodes: 6,000 single-node NVLink domains, 3,000 pairs, 500 leaves of 12 nodes, 10 spines;
// 1,800 bound Pods; the same objects, generated the same way), as the API server pages its lists
// (500 objects a page), to a built index. Two ways, CPU time for the three lists:
//   objects: each page parsed into nlohmann objects (k8s::KubeClient::list), then set_nodes,
//            set_hypernodes, set_pods;
//   text:    each page checked with simdjson (k8s::KubeClient::list_pages), then set_node_pages,
//            set_hypernode_pages, set_pod_pages (scheduler/input/cluster_loader.h).
//
//   build-rel/bench/extender_list_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <cstdio>
#include <cstring>
#include <functional>

#include "bench/scheduler/generated_cluster.h"
#include "scheduler/extender/extender_service.h"
#include "scheduler/input/cluster_loader.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

// `items` as a list's pages of 500, with the room for simdjson's padding that list_pages leaves.
std::vector<std::string> pages_of(const char* kind, const std::vector<json>& items) {
  constexpr std::size_t kPage = 500;
  std::vector<std::string> pages;
  for (std::size_t first = 0; first < items.size(); first += kPage) {
    json page{{"apiVersion", "v1"}, {"kind", kind}, {"metadata", {{"resourceVersion", "99"}}}};
    page["items"] = json::array();
    for (std::size_t i = first; i < std::min(items.size(), first + kPage); ++i)
      page["items"].push_back(items[i]);
    if (first + kPage < items.size()) page["metadata"]["continue"] = "token-" + std::to_string(first);
    pages.push_back(page.dump());
    pages.back().reserve(pages.back().size() + simdjson::SIMDJSON_PADDING);
  }
  return pages;
}

struct Lists {
  std::vector<std::string> nodes, hypernodes, pods;
  std::string probe;  // a filter call's body: the first one builds the index
  std::size_t bytes = 0;
};

const Lists& lists() {
  static const Lists l = [] {
    Lists out;
    GeneratedCluster c = generate_cluster();
    out.nodes = pages_of("NodeList", c.nodes);
    out.hypernodes = pages_of("HyperNodeList", c.hypernodes);
    out.pods = pages_of("PodList", c.pods);
    for (const auto* list : {&out.nodes, &out.hypernodes, &out.pods}) {
      for (const auto& page : *list) out.bytes += page.size();
    }
    out.probe = json{{"pod", {{"metadata", {{"name", "p"}, {"namespace", "ml"}, {"uid", "p"}}}}},
                     {"nodenames", json::array({"gpu-0001"})}}
                    .dump();
    return out;
  }();
  return l;
}

// The index is built by the first call that needs it; one node kept says it was built whole.
void build_index(benchmark::State& state, ExtenderService& service) {
  auto kept = service.filter_body(lists().probe);
  if (!kept || kept->find("gpu-0001") == std::string::npos) state.SkipWithError("the index was not built");
}

// The three lists read into a new service by `read` and the index built, timed per iteration.
void lists_to_index(benchmark::State& state, const std::function<bool(ExtenderService&)>& read) {
  const Lists& l = lists();
  for (auto _ : state) {
    ExtenderService service(ExtenderOptions{.clock = std::make_shared<timing::ManualClock>()});
    if (!read(service)) {
      state.SkipWithError("a list did not read");
      return;
    }
    build_index(state, service);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(l.bytes));
  state.counters["list_MB"] = static_cast<double>(l.bytes) / 1e6;
}

// What KubeClient::list does with each page, then the service's object path.
void BM_InitialListsAsObjects(benchmark::State& state) {
  auto objects = [](const std::vector<std::string>& pages) {
    std::vector<json> items;
    for (const auto& page : pages) {
      json parsed = json::parse(page);
      for (auto& item : parsed["items"]) items.push_back(std::move(item));
    }
    return items;
  };
  lists_to_index(state, [&](ExtenderService& service) {
    const Lists& l = lists();
    return service.set_hypernodes(objects(l.hypernodes)) && service.set_nodes(objects(l.nodes)) &&
           service.set_pods(objects(l.pods));
  });
}
BENCHMARK(BM_InitialListsAsObjects)->Unit(benchmark::kMillisecond);

// What KubeClient::list_pages does with each page (simdjson, the list's metadata read), then the
// service's text path.
void BM_InitialListsAsText(benchmark::State& state) {
  simdjson::dom::parser parser;
  auto checked = [&](const std::vector<std::string>& pages) {
    for (const auto& page : pages) {
      simdjson::dom::element root;
      std::string_view rv;
      if (parser.parse(page).get(root) || root["metadata"]["resourceVersion"].get(rv)) return false;
      benchmark::DoNotOptimize(rv);
    }
    return true;
  };
  lists_to_index(state, [&](ExtenderService& service) {
    const Lists& l = lists();
    return checked(l.hypernodes) && checked(l.nodes) && checked(l.pods) &&
           service.set_hypernode_pages(l.hypernodes) && service.set_node_pages(l.nodes) &&
           service.set_pod_pages(l.pods);
  });
}
BENCHMARK(BM_InitialListsAsText)->Unit(benchmark::kMillisecond);

// Where the text path's time goes: the three lists read into the index's types ...
void BM_ReadPagesOnly(benchmark::State& state) {
  const Lists& l = lists();
  for (auto _ : state) {
    auto nodes = parse_node_pages(l.nodes);
    auto hypernodes = parse_hypernode_pages(l.hypernodes);
    auto pods = parse_pod_pages(l.pods);
    if (!nodes || !hypernodes || !pods) {
      state.SkipWithError("a list did not read");
      return;
    }
    benchmark::DoNotOptimize(nodes);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(l.bytes));
}
BENCHMARK(BM_ReadPagesOnly)->Unit(benchmark::kMillisecond);

// ... and the index built from what they read (as the service's first filter call builds it).
void BM_IndexFromReadLists(benchmark::State& state) {
  const Lists& l = lists();
  auto nodes = parse_node_pages(l.nodes);
  auto hypernodes = parse_hypernode_pages(l.hypernodes);
  auto pods = parse_pod_pages(l.pods);
  if (!nodes || !hypernodes || !pods) {
    state.SkipWithError("a list did not read");
    return;
  }
  std::vector<BoundPod> bound;
  for (const auto& p : *pods) bound.push_back(p.bound);
  for (auto _ : state) {
    auto index = TopologyIndex::from_hypernodes(*hypernodes, *nodes, bound);
    if (!index) state.SkipWithError("the index was not built");
    benchmark::DoNotOptimize(index);
  }
}
BENCHMARK(BM_IndexFromReadLists)->Unit(benchmark::kMillisecond);

// The floor: simdjson parsing the same pages and nothing else.
void BM_ParsePagesOnly(benchmark::State& state) {
  const Lists& l = lists();
  simdjson::dom::parser parser;
  for (auto _ : state) {
    for (const auto* list : {&l.hypernodes, &l.nodes, &l.pods}) {
      for (const auto& page : *list) {
        simdjson::dom::element root;
        if (parser.parse(page).get(root)) {
          state.SkipWithError("a page did not parse");
          return;
        }
        benchmark::DoNotOptimize(root);
      }
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(l.bytes));
}
BENCHMARK(BM_ParsePagesOnly)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hypertopo::scheduler

BENCHMARK_MAIN();
