// The extender at 20,000 Nodes, 32,000 HyperNodes and 100,000 Pods: 20,000 single-node NVLink
// domains, 10,000 pairs, 1,666 leaves of 12 nodes, 333 spines and one cluster HyperNode; five bound
// Pods on every Node (a third of the Nodes also run a 4-GPU pod). The lists come in as the API
// server pages them (500 objects a page) and are read as page texts, as the watcher reads them.
// Figures, per call (p50/p99 in ms), with the targets they are held to:
//   - a normal pod's filter then prioritize, on the 1,000 names kube-scheduler offers at this size
//     (percentageOfNodesToScore unset: 5%) and on all 20,000 (100%): p99 < 5 ms;
//   - a gang pod's filter then prioritize on all 20,000 names (the gang profile sets 100%);
//   - watch events (a pod bound, its status updated, a Node heartbeat, the pod deleted) while
//     another thread runs filter and prioritize back to back: event in to view updated out,
//     p99 < 10 ms;
//   - the process's peak resident memory (VmHWM, the pages of the lists included): < 600 MiB.
// HYPERTOPO_BENCH_SMOKE=1 (scripts/bench.sh --smoke) shrinks the cluster to 480 Nodes of the same
// shape, so that the sanitizer build proves the benchmark runs.
//
//   build-rel/bench/extender_scale_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/extender/latency_counters.h"
#include "bench/scheduler/generated_cluster.h"
#include "scheduler/extender/extender_service.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

bool smoke() { return std::getenv("HYPERTOPO_BENCH_SMOKE") != nullptr; }
int node_count() { return smoke() ? 480 : 20000; }
constexpr int kPodsPerNode = 5;
constexpr int kGangSize = 32;

// A /proc/self/status field in MiB (VmHWM: the peak resident set; VmRSS: now).
double status_mib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::strtod(line.c_str() + key.size(), nullptr) / 1024.0;  // kB
  }
  return 0;
}

std::string node_name(int n) { return padded_name("gpu-", n, 5); }

json node(int n, const std::string& heartbeat = "2026-11-27T10:00:00Z") {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", node_name(n)},
            {"resourceVersion", std::to_string(100000 + n)},
            {"labels", {{"kubernetes.io/hostname", node_name(n)}, {"nvidia.com/gpu.product", "H100"}}}}},
          {"spec", json::object()},
          {"status",
           {{"allocatable", {{"cpu", "224"}, {"memory", "2000Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"lastHeartbeatTime", heartbeat}}}}}}};
}

json bound_pod(const std::string& name, int on_node, bool gpus) {
  json requests{{"cpu", "4"}, {"memory", "16Gi"}};
  if (gpus) requests["nvidia.com/gpu"] = "4";
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "team"}, {"uid", "uid-" + name}}},
          {"spec",
           {{"nodeName", node_name(on_node)},
            {"containers", {{{"name", "main"}, {"resources", {{"requests", requests}}}}}}}},
          {"status", {{"phase", "Running"}}}};
}

// `count` objects made by `make`, as list pages of 500 (with simdjson's padding room).
template <typename Make>
std::vector<std::string> pages_of(const char* kind, int count, Make&& make) {
  constexpr int kPage = 500;
  std::vector<std::string> pages;
  for (int first = 0; first < count; first += kPage) {
    json page{{"apiVersion", "v1"}, {"kind", kind}, {"metadata", {{"resourceVersion", "99"}}}};
    json& items = page["items"] = json::array();
    for (int i = first; i < std::min(count, first + kPage); ++i) items.push_back(make(i));
    pages.push_back(page.dump());
    pages.back().reserve(pages.back().size() + simdjson::SIMDJSON_PADDING);
  }
  return pages;
}

json pod_doc(const std::string& uid, const std::string& gang, const std::string& gpus) {
  json annotations = json::object();
  if (!gang.empty()) {
    annotations = {{"hypertopo.io/gang", gang},
                   {"hypertopo.io/gang-size", std::to_string(kGangSize)},
                   {"hypertopo.io/network-topology-mode", "hard"},
                   {"hypertopo.io/highest-tier-allowed", "4"}};
  }
  return {
      {"metadata", {{"name", uid}, {"namespace", "ml"}, {"uid", uid}, {"annotations", annotations}}},
      {"spec",
       {{"containers",
         {{{"name", "c"},
           {"resources", {{"requests", {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", gpus}}}}}}}}}}};
}

std::string body(const json& pod, const std::vector<std::string>& names) {
  return json{{"pod", pod}, {"nodenames", names}}.dump();
}

struct Scale {
  std::unique_ptr<ExtenderService> service;
  std::vector<std::string> all_names, sampled_names;  // 100% and kube-scheduler's 5%
  double rss_loaded_mib = 0;
};

Scale& scale() {
  static Scale s = [] {
    Scale out;
    const int nodes = node_count();
    out.service =
        std::make_unique<ExtenderService>(ExtenderOptions{.clock = std::make_shared<timing::ManualClock>()});
    {
      std::vector<std::string> hypernode_pages;
      {
        std::vector<json> hns;
        for (int n = 0; n < nodes; ++n)
          hns.push_back(exact_hypernode(padded_name("nvl-", n, 5), 1, "Node", {node_name(n)}));
        for (int p = 0; p < nodes / 2; ++p)
          hns.push_back(exact_hypernode(padded_name("pair-", p, 5), 2, "HyperNode",
                                        {padded_name("nvl-", 2 * p, 5), padded_name("nvl-", 2 * p + 1, 5)}));
        std::vector<std::string> spines;
        for (int l = 0; l < nodes / 12; ++l) {
          std::vector<std::string> m;
          for (int k = 0; k < 6; ++k) m.push_back(padded_name("pair-", 6 * l + k, 5));
          hns.push_back(exact_hypernode(padded_name("leaf-", l, 4), 3, "HyperNode", m));
        }
        for (int sp = 0; sp < nodes / 60; ++sp) {
          std::vector<std::string> m;
          for (int k = 0; k < 5; ++k) m.push_back(padded_name("leaf-", 5 * sp + k, 4));
          hns.push_back(exact_hypernode(padded_name("spine-", sp, 3), 4, "HyperNode", m));
          spines.push_back(padded_name("spine-", sp, 3));
        }
        hns.push_back(exact_hypernode("cluster", 5, "HyperNode", spines));
        hypernode_pages =
            pages_of("HyperNodeList", static_cast<int>(hns.size()), [&](int i) { return std::move(hns[i]); });
      }
      const auto node_pages = pages_of("NodeList", nodes, [](int n) { return node(n); });
      const auto pod_pages = pages_of("PodList", nodes * kPodsPerNode, [](int i) {
        const int n = i / kPodsPerNode, k = i % kPodsPerNode;
        return bound_pod("p-" + std::to_string(n) + "-" + std::to_string(k), n, k == 0 && n % 3 == 0);
      });
      if (!out.service->set_hypernode_pages(hypernode_pages) || !out.service->set_node_pages(node_pages) ||
          !out.service->set_pod_pages(pod_pages))
        throw std::runtime_error("the benchmark cluster's lists did not read");
    }
    for (int n = 0; n < nodes; ++n) out.all_names.push_back(node_name(n));
    for (int n = 0; n < nodes; n += 20) out.sampled_names.push_back(node_name(n));
    // The first call builds the index.
    auto first = out.service->filter_body(body(pod_doc("probe", "", "1"), {node_name(0)}));
    if (!first || first->find(node_name(0)) == std::string::npos)
      throw std::runtime_error("the benchmark cluster's index did not build");
    out.rss_loaded_mib = status_mib("VmRSS");
    return out;
  }();
  return s;
}

void memory_counters(benchmark::State& state) {
  state.counters["peak_rss_MiB"] = status_mib("VmHWM");
  state.counters["rss_loaded_MiB"] = scale().rss_loaded_mib;
}

// The names a filter answer keeps, as kube-scheduler sends them on to prioritize.
std::vector<std::string> kept_names(const std::string& answer) {
  const json doc = json::parse(answer);
  return doc.value("nodenames", std::vector<std::string>{});
}

void percentiles(benchmark::State& state, const char* prefix, std::vector<double>& ms) {
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ms.size())))];
  };
  state.counters[std::string(prefix) + "_p50_ms"] = at(0.50);
  state.counters[std::string(prefix) + "_p99_ms"] = at(0.99);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A normal pod: filter on the offered names, then prioritize on those it kept. Arg: the share of
// the cluster offered (kube-scheduler's percentageOfNodesToScore: 5 is its default at this size).
void BM_NormalPodFilterThenPrioritize(benchmark::State& state) {
  Scale& s = scale();
  const auto& names = state.range(0) == 100 ? s.all_names : s.sampled_names;
  const json pod = pod_doc("web", "", "1");
  const std::string filter = body(pod, names);
  auto probe = s.service->filter_body(filter);
  if (!probe) {
    state.SkipWithError(probe.error().message().c_str());
    return;
  }
  const std::string prioritize = body(pod, kept_names(*probe));
  std::vector<double> total, filter_ms, prioritize_ms;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    auto f = s.service->filter_body(filter);
    const double f_ms = ms_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    auto p = s.service->prioritize_body(prioritize);
    prioritize_ms.push_back(ms_since(t1));
    filter_ms.push_back(f_ms);
    total.push_back(ms_since(t0));
    if (!f || !p) {
      state.SkipWithError("a verb failed");
      return;
    }
    benchmark::DoNotOptimize(f->size() + p->size());
  }
  percentiles(state, "filter", filter_ms);
  percentiles(state, "prioritize", prioritize_ms);
  report_latency(state, total);
  state.counters["names"] = static_cast<double>(names.size());
  memory_counters(state);
}
BENCHMARK(BM_NormalPodFilterThenPrioritize)
    ->ArgName("percentOffered")
    ->Arg(5)
    ->Arg(100)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(400);

// Gang pods of 32 (8 GPUs each, hard inside a spine of 60 nodes): each pod's filter on all names,
// then prioritize on the node it kept; the pod is then bound (untimed), as kube-scheduler binds it
// and the watch reports it, so later gangs plan around the earlier ones.
void BM_GangPodFilterThenPrioritize(benchmark::State& state) {
  Scale& s = scale();
  std::vector<double> total, filter_ms, prioritize_ms;
  int i = 0;
  for (auto _ : state) {
    const std::string uid = "gang-" + std::to_string(i / kGangSize) + "-" + std::to_string(i % kGangSize);
    const json pod = pod_doc(uid, "g" + std::to_string(i / kGangSize), "8");
    ++i;
    const std::string filter = body(pod, s.all_names);
    const auto t0 = std::chrono::steady_clock::now();
    auto f = s.service->filter_body(filter);
    filter_ms.push_back(ms_since(t0));
    if (!f) {
      state.SkipWithError(f.error().message().c_str());
      return;
    }
    const std::vector<std::string> kept = kept_names(*f);
    if (kept.size() != 1) {
      state.SkipWithError(("a gang pod was not admitted to one node: " + f->substr(0, 300)).c_str());
      return;
    }
    const std::string prioritize = body(pod, kept);
    const auto t1 = std::chrono::steady_clock::now();
    auto p = s.service->prioritize_body(prioritize);
    prioritize_ms.push_back(ms_since(t1));
    total.push_back(filter_ms.back() + prioritize_ms.back());
    state.PauseTiming();
    json bound = pod;
    bound["spec"]["nodeName"] = kept.front();
    bound["status"]["phase"] = "Running";
    if (!p || !s.service->upsert_pod(bound)) state.SkipWithError("prioritize or the binding failed");
    state.ResumeTiming();
  }
  percentiles(state, "filter", filter_ms);
  percentiles(state, "prioritize", prioritize_ms);
  report_latency(state, total);
  state.counters["gangs"] = static_cast<double>(i / kGangSize);
  state.counters["plans_made"] = static_cast<double>(s.service->counters().book.plans_made);
  memory_counters(state);
}
BENCHMARK(BM_GangPodFilterThenPrioritize)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(smoke() ? kGangSize * 4 : kGangSize * 100);

// Watch events, one a millisecond, while another thread runs a normal pod's filter and prioritize
// back to back (Arg: the share of the cluster each call offers). Each event's latency is its call's
// wall time: the event in, the view updated out, any wait for the view's lock included; snapshot_*:
// the event in, a snapshot of its generation out (what the next verb reads), the copy included.
void BM_WatchEventLatencyDuringFilters(benchmark::State& state) {
  Scale& s = scale();
  const auto& names = state.range(0) == 100 ? s.all_names : s.sampled_names;
  const json pod = pod_doc("busy-web", "", "1");
  const std::string filter = body(pod, names);
  auto probe = s.service->filter_body(filter);
  if (!probe) {
    state.SkipWithError(probe.error().message().c_str());
    return;
  }
  const std::string prioritize = body(pod, kept_names(*probe));
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> calls{0};
  std::thread verbs([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      auto f = s.service->filter_body(filter);
      auto p = s.service->prioritize_body(prioritize);
      benchmark::DoNotOptimize(f.has_value() && p.has_value());
      calls.fetch_add(1, std::memory_order_relaxed);
    }
  });
  const int nodes = node_count();
  std::vector<double> ms, bind_ms, heartbeat_ms, snapshot_ms;
  int i = 0;
  // One event a millisecond (a busy cluster's watch rate), so that the verbs run between them.
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    std::this_thread::sleep_until(start + std::chrono::milliseconds(i));
    const int n = (i * 7919) % nodes;
    // A pod bound, its status updated (Running), a Node's heartbeat, the pod deleted: what a
    // busy cluster's watches deliver most.
    const std::string name = "event-" + std::to_string(i / 4);
    const json doc = i % 4 == 2 ? node(n, "2026-11-27T10:00:" + std::to_string(10 + i % 50) + "Z")
                                : bound_pod(name, (i / 4 * 7919) % nodes, false);
    const auto t0 = std::chrono::steady_clock::now();
    bool ok = true;
    if (i % 4 == 2)
      ok = s.service->upsert_node(doc).has_value();
    else if (i % 4 == 3)
      s.service->remove_pod(doc);
    else
      ok = s.service->upsert_pod(doc).has_value();
    const double took = ms_since(t0);
    ok = ok && s.service->snapshot().has_value();
    snapshot_ms.push_back(ms_since(t0));
    ms.push_back(took);
    if (i % 4 == 0) bind_ms.push_back(took);
    if (i % 4 == 2) heartbeat_ms.push_back(took);
    ++i;
    if (!ok) {
      state.SkipWithError("a watch event did not apply");
      break;
    }
  }
  stop = true;
  verbs.join();
  percentiles(state, "bind", bind_ms);
  percentiles(state, "heartbeat", heartbeat_ms);
  percentiles(state, "snapshot", snapshot_ms);
  report_latency(state, ms);
  state.counters["verb_pairs_during"] = static_cast<double>(calls.load());
  state.counters["names"] = static_cast<double>(names.size());
  memory_counters(state);
}
BENCHMARK(BM_WatchEventLatencyDuringFilters)
    ->ArgName("percentOffered")
    ->Arg(5)
    ->Arg(100)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2000)
    ->UseRealTime();

}  // namespace
}  // namespace hypertopo::scheduler

BENCHMARK_MAIN();
