// Extender filter/prioritize latency at Volcano's pain-point scale: 6,000 nodes, 9,600 HyperNodes
// (the shape of bench/scheduler: 6,000 single-node NVLink HyperNodes, 3,000 pairs, 500 leaves of
// 12 nodes, 100 spines), every third node already busy. Each call sees all 6,000 candidates, as
// kube-scheduler sends them. Reports p50/p99 per call (target: p99 < 20 ms).
//
//   build/bench/extender_filter_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>

#include "net/http_transport.h"
#include "scheduler/extender/extender_http.h"
#include "scheduler/extender/extender_service.h"

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

json hypernode(const std::string& n, int tier, const char* type, const std::vector<std::string>& members) {
  json list = json::array();
  for (const auto& m : members)
    list.push_back({{"type", type}, {"selector", {{"exactMatch", {{"name", m}}}}}});
  return {{"kind", "HyperNode"}, {"metadata", {{"name", n}}}, {"spec", {{"tier", tier}, {"members", list}}}};
}

struct Scale {
  std::shared_ptr<timing::ManualClock> clock = std::make_shared<timing::ManualClock>();
  std::unique_ptr<ExtenderService> service;
  std::vector<std::string> names;
};

Scale& scale() {
  static Scale s = [] {
    Scale out;
    out.service = std::make_unique<ExtenderService>(ExtenderOptions{.clock = out.clock});
    std::vector<json> nodes, hns, pods;
    for (int n = 0; n < 6000; ++n) {
      const std::string node = name("node-", n, 4);
      out.names.push_back(node);
      nodes.push_back(
          {{"metadata", {{"name", node}}},
           {"status",
            {{"allocatable", {{"cpu", "128"}, {"memory", "1Ti"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}},
             {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
      hns.push_back(hypernode(name("nvl-", n, 4), 1, "Node", {node}));
      if (n % 3 == 0) {
        pods.push_back(
            {{"metadata", {{"name", "busy-" + node}, {"namespace", "x"}, {"uid", "busy-" + node}}},
             {"spec",
              {{"nodeName", node},
               {"containers",
                {{{"name", "c"}, {"resources", {{"requests", {{"cpu", "32"}, {"memory", "64Gi"}}}}}}}}}},
             {"status", {{"phase", "Running"}}}});
      }
    }
    for (int p = 0; p < 3000; ++p)
      hns.push_back(hypernode(name("pair-", p, 4), 2, "HyperNode",
                              {name("nvl-", 2 * p, 4), name("nvl-", 2 * p + 1, 4)}));
    for (int l = 0; l < 500; ++l) {
      std::vector<std::string> m;
      for (int k = 0; k < 6; ++k) m.push_back(name("pair-", 6 * l + k, 4));
      hns.push_back(hypernode(name("leaf-", l, 3), 3, "HyperNode", m));
    }
    for (int sp = 0; sp < 100; ++sp) {
      std::vector<std::string> m;
      for (int k = 0; k < 5; ++k) m.push_back(name("leaf-", 5 * sp + k, 3));
      hns.push_back(hypernode(name("spine-", sp, 3), 4, "HyperNode", m));
    }
    if (!out.service->set_hypernodes(hns) || !out.service->set_nodes(nodes) || !out.service->set_pods(pods))
      throw std::runtime_error("building the benchmark cluster failed");
    return out;
  }();
  return s;
}

json pod(const std::string& uid, const std::string& gang, const std::string& gpus) {
  json annotations = json::object();
  if (!gang.empty()) {
    annotations = {{"hypertopo.io/gang", gang},
                   {"hypertopo.io/gang-size", "64"},
                   {"hypertopo.io/network-topology-mode", "hard"},
                   {"hypertopo.io/highest-tier-allowed", "3"}};
  }
  return {
      {"metadata", {{"name", uid}, {"namespace", "ml"}, {"uid", uid}, {"annotations", annotations}}},
      {"spec",
       {{"containers",
         {{{"name", "c"},
           {"resources", {{"requests", {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", gpus}}}}}}}}}}};
}

void report(benchmark::State& state, std::vector<double>& ms) {
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ms.size())))];
  };
  state.counters["p50_ms"] = at(0.50);
  state.counters["p99_ms"] = at(0.99);
  state.counters["max_ms"] = ms.back();
}

template <typename Call>
void timed(benchmark::State& state, Call&& call) {
  std::vector<double> ms;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    call(ms.size());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  report(state, ms);
}

void BM_FilterNormalPod(benchmark::State& state) {
  Scale& s = scale();
  const json args{{"pod", pod("web", "", "1")}, {"nodenames", s.names}};
  timed(state, [&](std::size_t) {
    auto r = s.service->filter(args);
    benchmark::DoNotOptimize(r);
  });
}
BENCHMARK(BM_FilterNormalPod)->Unit(benchmark::kMillisecond);

// What the HTTP handler does per call: parse the body, filter, serialize the answer.
void BM_FilterNormalPodWithJsonCodec(benchmark::State& state) {
  Scale& s = scale();
  const std::string body = json{{"pod", pod("web", "", "1")}, {"nodenames", s.names}}.dump();
  timed(state, [&](std::size_t) {
    auto r = s.service->filter(json::parse(body));
    std::string out = r->dump();
    benchmark::DoNotOptimize(out);
  });
}
BENCHMARK(BM_FilterNormalPodWithJsonCodec)->Unit(benchmark::kMillisecond);

// What the HTTP routes run per call (extender_wire.cpp): the body read in place, the answer written
// as text.
void BM_FilterBodyNormalPod(benchmark::State& state) {
  Scale& s = scale();
  const std::string body = json{{"pod", pod("web", "", "1")}, {"nodenames", s.names}}.dump();
  timed(state, [&](std::size_t) {
    auto r = s.service->filter_body(body);
    benchmark::DoNotOptimize(r);
  });
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_FilterBodyNormalPod)->Unit(benchmark::kMillisecond);

void BM_PrioritizeBodyNormalPod(benchmark::State& state) {
  Scale& s = scale();
  const std::string body = json{{"pod", pod("web", "", "1")}, {"nodenames", s.names}}.dump();
  timed(state, [&](std::size_t) {
    auto r = s.service->prioritize_body(body);
    benchmark::DoNotOptimize(r);
  });
}
BENCHMARK(BM_PrioritizeBodyNormalPod)->Unit(benchmark::kMillisecond);

// One pod as kube-scheduler schedules it: filter over all 6,000 names, then prioritize over the
// names filter kept, in its order (the prioritize call reuses the node ids filter resolved).
// calls_per_core_s counts both calls per CPU second.
void BM_FilterThenPrioritizeNormalPod(benchmark::State& state) {
  Scale& s = scale();
  const json the_pod = pod("web", "", "1");
  const std::string filter_body = json{{"pod", the_pod}, {"nodenames", s.names}}.dump();
  auto first = s.service->filter_body(filter_body);
  if (!first) {
    state.SkipWithError("filter failed");
    return;
  }
  const json kept = json::parse(*first).at("nodenames");
  const std::string prioritize_body = json{{"pod", the_pod}, {"nodenames", kept}}.dump();
  timed(state, [&](std::size_t) {
    auto f = s.service->filter_body(filter_body);
    auto p = s.service->prioritize_body(prioritize_body);
    benchmark::DoNotOptimize(f);
    benchmark::DoNotOptimize(p);
  });
  state.counters["kept"] = static_cast<double>(kept.size());
  state.counters["calls_per_core_s"] =
      benchmark::Counter(2.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FilterThenPrioritizeNormalPod)->Unit(benchmark::kMillisecond);

// The same pair as kube-scheduler's HTTPExtender sends it (kubernetes/kubernetes
// pkg/scheduler/extender.go, HTTPExtender.send: one POST per verb, JSON both ways, a kept-alive
// connection): the extender's HTTP server on loopback, its routes and its threads, timed from the
// first byte of the filter request to the last byte of the prioritize answer. Wall time: the work
// is on the server's threads. What kube-scheduler spends encoding the request and decoding the
// answers is on its side and not counted.
void BM_FilterThenPrioritizeOverHttp(benchmark::State& state) {
  Scale& s = scale();
  net::HttpServer server(net::HttpServerOptions{.address = "127.0.0.1", .port = 0});
  register_extender_routes(server, *s.service, "/scheduler");
  if (!server.start()) {
    state.SkipWithError("the extender's HTTP server did not start");
    return;
  }
  auto transport = net::HttpTransport::create({.host = "127.0.0.1", .port = std::to_string(server.port())});
  if (!transport) {
    state.SkipWithError("no HTTP transport");
    return;
  }
  const json the_pod = pod("web", "", "1");
  auto post = [&](const std::string& verb, const std::string& body) {
    return (*transport)
        ->round_trip({"POST", "/scheduler/" + verb, {{"Content-Type", "application/json"}}, body},
                     std::chrono::seconds(30), true);
  };
  const std::string filter_body = json{{"pod", the_pod}, {"nodenames", s.names}}.dump();
  auto first = post("filter", filter_body);
  if (!first || first->status != 200) {
    state.SkipWithError("filter over HTTP failed");
    return;
  }
  const json kept = json::parse(first->body).at("nodenames");
  const std::string prioritize_body = json{{"pod", the_pod}, {"nodenames", kept}}.dump();
  std::size_t bytes = 0;
  timed(state, [&](std::size_t) {
    auto f = post("filter", filter_body);
    auto p = post("prioritize", prioritize_body);
    if (!f || !p || f->status != 200 || p->status != 200) state.SkipWithError("a call over HTTP failed");
    bytes = filter_body.size() + prioritize_body.size() + (f ? f->body.size() : 0) + (p ? p->body.size() : 0);
  });
  state.counters["bytes_per_pod"] = static_cast<double>(bytes);
  state.counters["connections"] = (*transport)->connections_opened();
  server.stop();
}
BENCHMARK(BM_FilterThenPrioritizeOverHttp)->Unit(benchmark::kMillisecond)->UseRealTime();

// The floor: simdjson reading the same body's 6,000 names and nothing else.
void BM_ParseBodyOnly(benchmark::State& state) {
  Scale& s = scale();
  const simdjson::padded_string body(json{{"pod", pod("web", "", "1")}, {"nodenames", s.names}}.dump());
  simdjson::dom::parser parser;
  timed(state, [&](std::size_t) {
    std::size_t n = 0;
    simdjson::dom::array names;
    if (!parser.parse(body)["nodenames"].get_array().get(names)) {
      for (auto name : names) {
        std::string_view v;
        if (!name.get_string().get(v)) n += v.size();
      }
    }
    benchmark::DoNotOptimize(n);
  });
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_ParseBodyOnly)->Unit(benchmark::kMillisecond);

// Gang pods of 64 (hard, tier 3): every 64th call plans a new gang, the others take a slot.
void BM_FilterGangPod(benchmark::State& state) {
  Scale& s = scale();
  static int gangs = 0;
  const int base = gangs;
  timed(state, [&](std::size_t i) {
    const std::string gang = "g" + std::to_string(base + static_cast<int>(i / 64));
    auto r = s.service->filter(
        json{{"pod", pod(gang + "-" + std::to_string(i % 64), gang, "1")}, {"nodenames", s.names}});
    benchmark::DoNotOptimize(r);
  });
  gangs += static_cast<int>(state.iterations() / 64) + 1;
}
BENCHMARK(BM_FilterGangPod)->Unit(benchmark::kMillisecond)->Iterations(1280);

// The same gangs through the HTTP routes' text path: each answer names 5,999 failed nodes.
void BM_FilterBodyGangPod(benchmark::State& state) {
  Scale& s = scale();
  static int gangs = 0;
  const int base = 1'000'000 + gangs;
  const std::string names = json(s.names).dump();
  timed(state, [&](std::size_t i) {
    const std::string gang = "t" + std::to_string(base + static_cast<int>(i / 64));
    const std::string body = "{\"pod\":" + pod(gang + "-" + std::to_string(i % 64), gang, "1").dump() +
                             ",\"nodenames\":" + names + "}";
    auto r = s.service->filter_body(body);
    benchmark::DoNotOptimize(r);
  });
  gangs += static_cast<int>(state.iterations() / 64) + 1;
}
BENCHMARK(BM_FilterBodyGangPod)->Unit(benchmark::kMillisecond)->Iterations(1280);

void BM_PrioritizeNormalPod(benchmark::State& state) {
  Scale& s = scale();
  const json args{{"pod", pod("web", "", "1")}, {"nodenames", s.names}};
  timed(state, [&](std::size_t) {
    auto r = s.service->prioritize(args);
    benchmark::DoNotOptimize(r);
  });
}
BENCHMARK(BM_PrioritizeNormalPod)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hypertopo::scheduler

BENCHMARK_MAIN();
