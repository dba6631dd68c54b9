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

#include "scheduler/extender/extender_service.h"
#include "scheduler/input/cluster_loader.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

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
    std::vector<json> nodes, hns, pods;
    for (int n = 0; n < 6000; ++n) {
      nodes.push_back(node(n));
      hns.push_back(hypernode(name("nvl-", n, 4), 1, "nvlink", "Node", {name("gpu-", n, 4)}));
    }
    for (int p = 0; p < 3000; ++p)
      hns.push_back(hypernode(name("pair-", p, 4), 2, "pair", "HyperNode",
                              {name("nvl-", 2 * p, 4), name("nvl-", 2 * p + 1, 4)}));
    for (int leaf = 0; leaf < 500; ++leaf) {
      std::vector<std::string> pairs;
      for (int k = 0; k < 6; ++k) pairs.push_back(name("pair-", 6 * leaf + k, 4));
      hns.push_back(hypernode(name("leaf-", leaf, 3), 3, "leaf", "HyperNode", pairs));
    }
    for (int sp = 0; sp < 10; ++sp) {
      std::vector<std::string> leaves;
      for (int k = 0; k < 50; ++k) leaves.push_back(name("leaf-", 50 * sp + k, 3));
      hns.push_back(hypernode(name("spine-", sp, 2), 4, "spine", "HyperNode", leaves));
    }
    // 1,800 running pods of 4 GPUs, on three nodes of every ten.
    for (int p = 0; p < 1800; ++p) pods.push_back(pod(p, (p / 3) * 10 + p % 3));
    out.nodes = pages_of("NodeList", nodes);
    out.hypernodes = pages_of("HyperNodeList", hns);
    out.pods = pages_of("PodList", pods);
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

// What KubeClient::list does with each page, then the service's object path.
void BM_InitialListsAsObjects(benchmark::State& state) {
  const Lists& l = lists();
  for (auto _ : state) {
    ExtenderService service(ExtenderOptions{.clock = std::make_shared<timing::ManualClock>()});
    auto objects = [](const std::vector<std::string>& pages) {
      std::vector<json> items;
      for (const auto& page : pages) {
        json parsed = json::parse(page);
        for (auto& item : parsed["items"]) items.push_back(std::move(item));
      }
      return items;
    };
    if (!service.set_hypernodes(objects(l.hypernodes)) || !service.set_nodes(objects(l.nodes)) ||
        !service.set_pods(objects(l.pods))) {
      state.SkipWithError("a list did not read");
      return;
    }
    build_index(state, service);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(l.bytes));
  state.counters["list_MB"] = static_cast<double>(l.bytes) / 1e6;
}
BENCHMARK(BM_InitialListsAsObjects)->Unit(benchmark::kMillisecond);

// What KubeClient::list_pages does with each page (simdjson, the list's metadata read), then the
// service's text path.
void BM_InitialListsAsText(benchmark::State& state) {
  const Lists& l = lists();
  simdjson::dom::parser parser;
  for (auto _ : state) {
    ExtenderService service(ExtenderOptions{.clock = std::make_shared<timing::ManualClock>()});
    auto checked = [&](const std::vector<std::string>& pages) {
      for (const auto& page : pages) {
        simdjson::dom::element root;
        std::string_view rv;
        if (parser.parse(page).get(root) || root["metadata"]["resourceVersion"].get(rv)) return false;
        benchmark::DoNotOptimize(rv);
      }
      return true;
    };
    if (!checked(l.hypernodes) || !checked(l.nodes) || !checked(l.pods) ||
        !service.set_hypernode_pages(l.hypernodes) || !service.set_node_pages(l.nodes) ||
        !service.set_pod_pages(l.pods)) {
      state.SkipWithError("a list did not read");
      return;
    }
    build_index(state, service);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(l.bytes));
  state.counters["list_MB"] = static_cast<double>(l.bytes) / 1e6;
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
