// Extender filter/prioritize latency at Volcano's pain-point scale: 6,000 nodes, 9,600 HyperNodes
// (the shape of bench/scheduler: 6,000 single-node NVLink HyperNodes, 3,000 pairs, 500 leaves of
// 12 nodes, 100 spines), every third node already busy. Each call sees all 6,000 candidates, as
// kube-scheduler sends them. Reports p50/p99 per call (target: p99 < 20 ms).
//
//   build/bench/extender_filter_bench --benchmark_counters_tabular=true
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <simdjson.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "bench/extender/latency_counters.h"
#include "bench/scheduler/generated_cluster.h"
#include "scheduler/extender/extender_http.h"
#include "scheduler/extender/extender_service.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

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

// `scripts/bench.sh --smoke` (HYPERTOPO_BENCH_SMOKE=1) proves the benchmarks run, under the
// sanitizers: a tenth of the cluster (600 nodes, same shape) there.
struct ClusterObjects {
  std::vector<json> nodes, hypernodes, pods;
  std::vector<std::string> names;
};

const ClusterObjects& cluster_objects() {
  static const ClusterObjects objects = [] {
    const int node_count = std::getenv("HYPERTOPO_BENCH_SMOKE") != nullptr ? 600 : 6000;
    ClusterObjects out;
    std::vector<json>& nodes = out.nodes;
    std::vector<json>& hns = out.hypernodes;
    std::vector<json>& pods = out.pods;
    for (int n = 0; n < node_count; ++n) {
      const std::string node = padded_name("node-", n, 4);
      out.names.push_back(node);
      nodes.push_back(
          {{"metadata", {{"name", node}}},
           {"status",
            {{"allocatable", {{"cpu", "128"}, {"memory", "1Ti"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}},
             {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
      hns.push_back(hypernode(padded_name("nvl-", n, 4), 1, "Node", {node}));
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
    for (int p = 0; p < node_count / 2; ++p)
      hns.push_back(hypernode(padded_name("pair-", p, 4), 2, "HyperNode",
                              {padded_name("nvl-", 2 * p, 4), padded_name("nvl-", 2 * p + 1, 4)}));
    for (int l = 0; l < node_count / 12; ++l) {
      std::vector<std::string> m;
      for (int k = 0; k < 6; ++k) m.push_back(padded_name("pair-", 6 * l + k, 4));
      hns.push_back(hypernode(padded_name("leaf-", l, 3), 3, "HyperNode", m));
    }
    for (int sp = 0; sp < node_count / 60; ++sp) {
      std::vector<std::string> m;
      for (int k = 0; k < 5; ++k) m.push_back(padded_name("leaf-", 5 * sp + k, 3));
      hns.push_back(hypernode(padded_name("spine-", sp, 3), 4, "HyperNode", m));
    }
    return out;
  }();
  return objects;
}

Scale& scale() {
  static Scale s = [] {
    Scale out;
    out.service = std::make_unique<ExtenderService>(ExtenderOptions{.clock = out.clock});
    const ClusterObjects& o = cluster_objects();
    out.names = o.names;
    if (!out.service->set_hypernodes(o.hypernodes) || !out.service->set_nodes(o.nodes) ||
        !out.service->set_pods(o.pods))
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

template <typename Call>
void timed(benchmark::State& state, Call&& call) {
  std::vector<double> ms;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    call(ms.size());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  report_latency(state, ms);
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

// How many feasible nodes kube-scheduler looks for before it stops and hands them to the extenders
// (kubernetes/kubernetes pkg/scheduler/schedule_one.go, numFeasibleNodesToFind): every node below
// 100 (minFeasibleNodesToFind); else `percentage` of them, where 0 means 50 - nodes/125 and at
// least 5 (minFeasibleNodesPercentageToFind); never fewer than 100.
std::size_t feasible_nodes_to_find(int percentage, std::size_t nodes) {
  constexpr std::size_t kMinFeasibleNodes = 100;
  constexpr int kMinPercentage = 5;
  if (nodes < kMinFeasibleNodes || percentage >= 100) return nodes;
  if (percentage == 0) percentage = std::max(50 - static_cast<int>(nodes / 125), kMinPercentage);
  return std::max(nodes * static_cast<std::size_t>(percentage) / 100, kMinFeasibleNodes);
}

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

// A kept-alive HTTP/1.1 connection that does no more than kube-scheduler's client must: one send per
// request (headers and body together, TCP_NODELAY as Go sets it), then the answer read to its
// Content-Length. Blocking, no timers, no pool: what is timed through it is the extender's side.
class PlainHttpConnection {
 public:
  explicit PlainHttpConnection(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) close();
  }
  ~PlainHttpConnection() { close(); }
  bool open() const { return fd_ >= 0; }

  // The status and body of POST `path` with `body`; status 0 when the connection failed.
  std::pair<int, std::string> post(const std::string& path, const std::string& body) {
    std::string request = "POST " + path +
                          " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
                          "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    request += body;
    for (std::size_t sent = 0; sent < request.size();) {
      const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return {0, {}};
      sent += static_cast<std::size_t>(n);
    }
    std::size_t header_end;
    while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos)
      if (!read_more()) return {0, {}};
    const int status = std::atoi(buffer_.c_str() + 9);  // "HTTP/1.1 200"
    std::size_t length = 0;
    if (auto at = lower(buffer_.substr(0, header_end)).find("content-length:"); at != std::string::npos)
      length = std::strtoull(buffer_.c_str() + at + 15, nullptr, 10);
    while (buffer_.size() < header_end + 4 + length)
      if (!read_more()) return {0, {}};
    std::string answer = buffer_.substr(header_end + 4, length);
    buffer_.erase(0, header_end + 4 + length);
    return {status, std::move(answer)};
  }

 private:
  static std::string lower(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  }
  bool read_more() {
    char chunk[256 * 1024];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
  std::string buffer_;
};

// The same pair as kube-scheduler's HTTPExtender sends it (kubernetes/kubernetes
// pkg/scheduler/extender.go, HTTPExtender.send: one POST per verb, JSON both ways, a kept-alive
// connection), to the extender's HTTP server on loopback: its routes and its threads, timed from
// the first byte of the filter request to the last byte of the prioritize answer. Wall time: the
// work is on the server's threads. What kube-scheduler spends encoding the request and decoding the
// answers is on its side and not counted.
// The argument is the profile's percentageOfNodesToScore: 100 offers every node (the gang profile),
// 0 the nodes kube-scheduler's default stops at (300 of 6,000; the single-pod profile).
void BM_FilterThenPrioritizeOverHttp(benchmark::State& state) {
  Scale& s = scale();
  net::HttpServer server(net::HttpServerOptions{.address = "127.0.0.1", .port = 0});
  register_extender_routes(server, *s.service, "/scheduler");
  if (!server.start()) {
    state.SkipWithError("the extender's HTTP server did not start");
    return;
  }
  PlainHttpConnection connection(server.port());
  if (!connection.open()) {
    state.SkipWithError("no connection to the extender");
    return;
  }
  const json the_pod = pod("web", "", "1");
  const auto offered = feasible_nodes_to_find(static_cast<int>(state.range(0)), s.names.size());
  const std::vector<std::string> names(s.names.begin(),
                                       s.names.begin() + static_cast<std::ptrdiff_t>(offered));
  const std::string filter_body = json{{"pod", the_pod}, {"nodenames", names}}.dump();
  auto [first_status, first] = connection.post("/scheduler/filter", filter_body);
  if (first_status != 200) {
    state.SkipWithError("filter over HTTP failed");
    return;
  }
  const json kept = json::parse(first).at("nodenames");
  const std::string prioritize_body = json{{"pod", the_pod}, {"nodenames", kept}}.dump();
  std::size_t bytes = 0;
  timed(state, [&](std::size_t) {
    auto [f_status, f] = connection.post("/scheduler/filter", filter_body);
    auto [p_status, p] = connection.post("/scheduler/prioritize", prioritize_body);
    if (f_status != 200 || p_status != 200) state.SkipWithError("a call over HTTP failed");
    bytes = filter_body.size() + prioritize_body.size() + f.size() + p.size();
  });
  state.counters["bytes_per_pod"] = static_cast<double>(bytes);
  state.counters["nodes_offered"] = static_cast<double>(offered);
  server.stop();
}
BENCHMARK(BM_FilterThenPrioritizeOverHttp)
    ->ArgName("percentageOfNodesToScore")
    ->Arg(100)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

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

// Smoke runs (scripts/bench.sh --smoke) only prove a benchmark runs: a tenth of the iterations.
benchmark::IterationCount iterations(benchmark::IterationCount full) {
  return std::getenv("HYPERTOPO_BENCH_SMOKE") != nullptr ? full / 10 : full;
}

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
BENCHMARK(BM_FilterGangPod)->Unit(benchmark::kMillisecond)->Iterations(iterations(1280));

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
BENCHMARK(BM_FilterBodyGangPod)->Unit(benchmark::kMillisecond)->Iterations(iterations(1280));

void BM_PrioritizeNormalPod(benchmark::State& state) {
  Scale& s = scale();
  const json args{{"pod", pod("web", "", "1")}, {"nodenames", s.names}};
  timed(state, [&](std::size_t) {
    auto r = s.service->prioritize(args);
    benchmark::DoNotOptimize(r);
  });
}
BENCHMARK(BM_PrioritizeNormalPod)->Unit(benchmark::kMillisecond);

// The real load between two calls: kube-scheduler binds each pod it scheduled, and the extender's
// watch delivers that binding (the Pod update with spec.nodeName, then the kubelet's Running status)
// before the next pod's filter. Each iteration: filter over every node, prioritize over the kept
// ones, bind on the best-scored node, the two watch events applied as the service receives them.
// Only the service's own work is timed (the request bodies are made and the answers read outside).
// rebuilds_per_1k_pods counts index rebuilds per 1,000 bound pods (a binding changes usage, not
// topology: the target is 0); calls_per_core_s counts filter and prioritize calls per second of the
// timed work. Arg 1 replays the cost a binding had before usage was updated in place: each binding
// is followed by a Node update that changes a label, which rebuilds the index on the next call.
void BM_FilterPrioritizeBindLoop(benchmark::State& state) {
  Scale& s = scale();
  static int round = 0;
  const bool rebuild_each = state.range(0) == 1;
  const std::string names = json(s.names).dump();
  (void)s.service->filter(
      json{{"pod", pod("warm-up", "", "1")}, {"nodenames", s.names}});  // the index is built
  const auto rebuilds_before = s.service->counters().view.index_rebuilds;
  std::vector<json> bound_pods;
  std::vector<double> ms;
  double total_s = 0;
  std::size_t i = 0;
  json node_doc = cluster_objects().nodes.front();
  for (auto _ : state) {
    const std::string uid = "bind-" + std::to_string(round) + "-" + std::to_string(i++);
    json the_pod = pod(uid, "", "1");
    const std::string filter_body = "{\"pod\":" + the_pod.dump() + ",\"nodenames\":" + names + "}";
    auto t0 = std::chrono::steady_clock::now();
    auto f = s.service->filter_body(filter_body);
    double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!f) {
      state.SkipWithError("filter failed");
      return;
    }
    const std::string prioritize_body =
        json{{"pod", the_pod}, {"nodenames", json::parse(*f).at("nodenames")}}.dump();
    t0 = std::chrono::steady_clock::now();
    auto p = s.service->prioritize_body(prioritize_body);
    spent += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!p) {
      state.SkipWithError("prioritize failed");
      return;
    }
    std::string best;
    std::int64_t top = -1;
    for (const auto& h : json::parse(*p)) {
      if (h["score"].get<std::int64_t>() > top) {
        top = h["score"].get<std::int64_t>();
        best = h["host"].get<std::string>();
      }
    }
    the_pod["spec"]["nodeName"] = best;
    json running = the_pod;
    running["status"]["phase"] = "Running";
    node_doc["metadata"]["labels"]["bench-tick"] = std::to_string(i);
    t0 = std::chrono::steady_clock::now();
    (void)s.service->upsert_pod(the_pod);  // the binding
    (void)s.service->upsert_pod(running);  // the kubelet's status
    if (rebuild_each) (void)s.service->upsert_node(node_doc);
    spent += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(spent);
    ms.push_back(spent * 1000.0);
    total_s += spent;
    bound_pods.push_back(std::move(running));
  }
  report_latency(state, ms);
  const auto rebuilds = s.service->counters().view.index_rebuilds - rebuilds_before;
  state.counters["rebuilds_per_1k_pods"] = 1000.0 * static_cast<double>(rebuilds) /
                                           static_cast<double>(std::max<std::int64_t>(1, state.iterations()));
  state.counters["calls_per_core_s"] =
      total_s > 0 ? 2.0 * static_cast<double>(state.iterations()) / total_s : 0.0;
  // The pods leave again, so that the other benchmarks see the cluster they expect.
  for (const auto& b : bound_pods) s.service->remove_pod(b);
  node_doc["metadata"]["labels"].erase("bench-tick");
  (void)s.service->upsert_node(node_doc);
  ++round;
}
BENCHMARK(BM_FilterPrioritizeBindLoop)
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(iterations(400));

// Gang pods' filter calls with 2,000 gang plans held and a state file: the file is written off the
// request path (debounced in the background), so the filter's cost should match the same calls
// without a state file (Arg 0: no state file, Arg 1: a state file).
void BM_FilterGangPodWith2000Plans(benchmark::State& state) {
  Scale& s = scale();
  const bool with_file = state.range(0) == 1;
  const auto dir = std::filesystem::temp_directory_path() / ("hypertopo-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ExtenderService service(ExtenderOptions{
      .state_file = with_file ? dir / "state.json" : std::filesystem::path(), .clock = s.clock});
  if (!service.set_hypernodes(cluster_objects().hypernodes) || !service.set_nodes(cluster_objects().nodes)) {
    state.SkipWithError("building the cluster failed");
    return;
  }
  const int plans = std::getenv("HYPERTOPO_BENCH_SMOKE") != nullptr ? 200 : 2000;
  for (int g = 0; g < plans; ++g) {
    json p = pod("plan-" + std::to_string(g), "plan-" + std::to_string(g), "1");
    p["metadata"]["annotations"]["hypertopo.io/gang-size"] = "2";
    (void)service.filter(json{{"pod", p}, {"nodenames", s.names}});
  }
  service.flush_state();
  static int gangs = 0;
  timed(state, [&](std::size_t i) {
    const std::string gang = "s" + std::to_string(gangs) + "-" + std::to_string(i / 2);
    json p = pod(gang + "-" + std::to_string(i % 2), gang, "1");
    p["metadata"]["annotations"]["hypertopo.io/gang-size"] = "2";
    auto r = service.filter(json{{"pod", p}, {"nodenames", s.names}});
    benchmark::DoNotOptimize(r);
  });
  ++gangs;
  service.flush_state();
  std::error_code ec;
  state.counters["state_file_kib"] =
      with_file ? static_cast<double>(std::filesystem::file_size(dir / "state.json", ec)) / 1024.0 : 0.0;
  std::filesystem::remove_all(dir, ec);
}
BENCHMARK(BM_FilterGangPodWith2000Plans)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(iterations(400));

}  // namespace
}  // namespace hypertopo::scheduler

BENCHMARK_MAIN();
