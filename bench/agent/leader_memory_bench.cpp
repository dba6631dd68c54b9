// The leader's memory at 1k, 5k, 10k and 20k Nodes (ARCHITECTURE §8: a 10,000-node leader under
// 150 MiB with the node label export on).
//
// Each case runs in a child process of its own, so its peak RSS is its own: the child takes a
// NodeList as the API server sends it (pages of 500, each Node real-shaped: managedFields, status
// with conditions, addresses, nodeInfo and images, the labels and annotations kubelet, GPU feature
// discovery and node-feature-discovery put there), builds the leader's view of it, runs one rebuild
// (a 3-level fat tree of one HCA per host, as an ibnetdiscover capture would give, through the
// discovery pipeline with the Node list) and the first node label export (every Node patched, each
// answer read back as the watch would).
//
//   BM_LeaderView          the agent's path: NodeView, paged list, patch answers not kept
//   BM_WholeNodeObjects    the path before the view, for comparison: every Node kept as its JSON
//                          object, the list held whole, the rebuild copying the Nodes into a
//                          NodeList document, every patched Node kept until the export ended
//
//   build/bench/leader_memory_bench --benchmark_counters_tabular=true
//
// Counters: peak_MiB (the child's peak RSS), view_MiB (RSS the Nodes added once listed),
// view_KiB_per_1k (the same per 1,000 Nodes), node_json_B (one Node's JSON), hypernodes, patched.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "agent/reconciler/node_label_reconciler.h"
#include "agent/runtime/node_view.h"
#include "bench/agent/real_node.h"
#include "discoverers/demo/demo_fabric.h"
#include "discoverers/pipeline/discovery_pipeline.h"
#include "discoverers/registry/discoverer.h"
#include "io/json_view.h"
#include "k8s/objects/node_list.h"
#include "topology/exporters/node_labels.h"

namespace {

using namespace hypertopo;
using json = nlohmann::json;

using bench::host_index;
using bench::host_name;
using bench::kHostsPerLeaf;
using bench::make_node;
constexpr std::size_t kPageSize = 500;  // client-go's reflector pages its list by 500

double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// One page of the NodeList, as the API server's text (written a Node at a time, so that making it
// costs no more than the text itself).
std::string node_page(int first, int count, int total) {
  std::string page = R"({"apiVersion":"v1","kind":"NodeList","metadata":{"resourceVersion":"2000000")";
  if (first + count < total) page += R"(,"continue":"page-)" + std::to_string(first + count) + "\"";
  page += R"(},"items":[)";
  for (int i = first; i < first + count; ++i) {
    if (i > first) page += ',';
    page += make_node(i).dump();
  }
  page += "]}";
  return page;
}

// A fabric source that hands over a generated 3-level fat tree, as a saved capture would.
struct FabricSettings : discoverers::SourceSettings {
  std::string describe() const override { return "generated"; }
};
class GeneratedFabric : public discoverers::Discoverer {
 public:
  explicit GeneratedFabric(const topology::FabricGraph& graph) : graph_(graph) {}
  std::string name() const override { return "fabric"; }
  std::expected<discoverers::Discovery, Error> discover() override {
    discoverers::Discovery d;
    d.graph = graph_;  // a copy, as the agent's source cache hands its cached result to each rebuild
    return d;
  }

 private:
  const topology::FabricGraph& graph_;
};

discoverers::DemoFabricSpec fat_tree(int nodes) {
  discoverers::DemoFabricSpec s;
  s.scalable_units = nodes / kHostsPerLeaf;
  s.hosts_per_su = kHostsPerLeaf;
  s.rails = 1;
  s.sus_per_pod = 8;
  s.spines_per_pod = 8;
  s.cores = 16;
  s.core_links_per_spine = 4;
  s.storage = false;
  s.sharp = false;
  s.firmware_default_cas = 0;
  return s;
}

struct Outcome {
  double view_mib = 0;
  double base_mib = 0;
  double node_json_bytes = 0;
  double hypernodes = 0;
  double patched = 0;
  int ok = 0;
  char error[200] = {};
  void fail(const std::string& why) { std::snprintf(error, sizeof error, "%s", why.c_str()); }
};

std::expected<discoverers::PipelineResult, Error> rebuild_tree(const topology::FabricGraph& graph,
                                                               const k8s::NodeList& nodes) {
  discoverers::DiscovererRegistry registry;
  auto added = registry.add(
      {.kind = "fabric",
       .summary = "generated",
       .role = discoverers::SourceRole::kLeader,
       .parse_config = [](const YAML::Node&, const discoverers::ConfigAt&)
           -> std::expected<discoverers::SettingsPtr, Error> { return std::make_shared<FabricSettings>(); },
       .parse_arg = [](const std::string&) -> std::expected<discoverers::SettingsPtr, Error> {
         return std::make_shared<FabricSettings>();
       },
       .factory = [&graph](const discoverers::SourceSpec&, const discoverers::DiscoveryDeps&)
           -> std::expected<std::unique_ptr<discoverers::Discoverer>, Error> {
         return std::make_unique<GeneratedFabric>(graph);
       }});
  if (!added) return std::unexpected(added.error());
  discoverers::PipelineInput input;
  input.sources.push_back({.kind = "fabric", .arg = "", .settings = nullptr});
  input.builder_options = discoverers::demo_builder_options();
  input.stop_on_source_error = true;
  input.deps.nodes = &nodes;
  return discoverers::run_discovery(registry, input);
}

const agent::NodeLabelExportOptions kExport{.enabled = true, .labels = {}};

// The agent's path.
Outcome leader_view(int total) {
  Outcome out;
  const auto graph = discoverers::generate_demo_fabric(fat_tree(total));
  out.base_mib = rss_mib();
  agent::NodeView view;
  view.begin_relist();
  for (int first = 0; first < total; first += static_cast<int>(kPageSize)) {
    std::string page = node_page(first, std::min<int>(kPageSize, total - first), total);
    if (auto read = view.apply_page(page, kExport); !read) {
      out.fail(read.error().message());
      return out;
    }
  }
  view.end_relist();
  out.view_mib = rss_mib() - out.base_mib;
  out.node_json_bytes = static_cast<double>(make_node(0).dump().size());

  auto run = rebuild_tree(graph, view.node_list({{"nvidia.com/gpu.present", "true"}},
                                                std::set<std::string>{"nvidia.com/gpu.clique"}));
  if (!run) {
    out.fail(run.error().message());
    return out;
  }
  out.hypernodes = static_cast<double>(run->tree.size());
  const auto desired = topology::exporters::node_labels(run->tree, kExport.labels);
  auto plan = agent::plan_node_labels(view, &desired, kExport, true);
  // Each patch's answer is the whole Node again; it is read into the view and dropped.
  for (auto& w : plan.writes) {
    auto it = desired.find(w.node);
    const int index = host_index(w.node);
    json answer = json::parse(make_node(index, it == desired.end() ? agent::LabelMap{} : it->second).dump());
    w.patch = json();
    view.apply(io::NlohmannView(answer), kExport);
    out.patched += 1;
  }
  out.ok = 1;
  return out;
}

// The path before the view.
Outcome whole_node_objects(int total) {
  Outcome out;
  const auto graph = discoverers::generate_demo_fabric(fat_tree(total));
  out.base_mib = rss_mib();
  std::map<std::string, json> nodes;
  {
    // KubeClient::list(): every page parsed and its items kept until the list ends.
    std::vector<json> items;
    for (int first = 0; first < total; first += static_cast<int>(kPageSize)) {
      json page = json::parse(node_page(first, std::min<int>(kPageSize, total - first), total));
      for (auto& item : page["items"]) items.push_back(std::move(item));
    }
    for (const auto& item : items) nodes[item["metadata"]["name"].get<std::string>()] = item;
  }
  out.view_mib = rss_mib() - out.base_mib;
  out.node_json_bytes = static_cast<double>(make_node(0).dump().size());
  // The rebuild: the selected Nodes copied into an array, that array into a NodeList document, parsed.
  json node_items = json::array();
  for (const auto& [name, n] : nodes) node_items.push_back(n);
  auto list = k8s::parse_node_list(json{{"kind", "NodeList"}, {"items", node_items}});
  if (!list) {
    out.fail(list.error().message());
    return out;
  }
  auto run = rebuild_tree(graph, *list);
  if (!run) {
    out.fail(run.error().message());
    return out;
  }
  out.hypernodes = static_cast<double>(run->tree.size());
  // The export inside the rebuild: every answer kept until it ended, then copied into the view.
  auto plan = agent::plan_node_labels(&run->tree, nodes, kExport, true);
  const auto desired = topology::exporters::node_labels(run->tree, kExport.labels);
  std::map<std::string, json> stored;
  for (const auto& w : plan.writes) {
    auto it = desired.find(w.node);
    const int index = host_index(w.node);
    stored[w.node] =
        json::parse(make_node(index, it == desired.end() ? agent::LabelMap{} : it->second).dump());
    out.patched += 1;
  }
  for (const auto& [name, object] : stored) nodes[name] = object;
  out.ok = 1;
  return out;
}

// Runs `work` in a child process; its peak RSS comes back from wait4.
void run_in_child(benchmark::State& state, Outcome (*work)(int)) {
  const int total = static_cast<int>(state.range(0));
  for (auto _ : state) {
    int fds[2];
    if (pipe(fds) != 0) {
      state.SkipWithError("pipe failed");
      return;
    }
    const pid_t child = fork();
    if (child == 0) {
      close(fds[0]);
      const Outcome o = work(total);
      const ssize_t wrote = write(fds[1], &o, sizeof o);
      _exit(wrote == static_cast<ssize_t>(sizeof o) ? 0 : 1);
    }
    close(fds[1]);
    Outcome o;
    const ssize_t got = read(fds[0], &o, sizeof o);
    close(fds[0]);
    int status = 0;
    rusage usage{};
    wait4(child, &status, 0, &usage);
    if (got != static_cast<ssize_t>(sizeof o) || !o.ok) {
      state.SkipWithError(("the child failed: " + std::string(o.error)).c_str());
      return;
    }
    state.counters["nodes"] = total;
    state.counters["peak_MiB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
    state.counters["view_MiB"] = o.view_mib;
    state.counters["view_KiB_per_1k"] = o.view_mib * 1024.0 / (total / 1000.0);
    state.counters["node_json_B"] = o.node_json_bytes;
    state.counters["hypernodes"] = o.hypernodes;
    state.counters["patched"] = o.patched;
  }
}

void BM_LeaderView(benchmark::State& state) { run_in_child(state, leader_view); }
void BM_WholeNodeObjects(benchmark::State& state) { run_in_child(state, whole_node_objects); }

// Smoke runs (scripts/bench.sh --smoke, part of the test command, under the sanitizers) only prove
// the benchmark runs: 200 Nodes, not 1,000 to 20,000 (whole objects at 20,000 take GBs).
void cluster_sizes(benchmark::internal::Benchmark* b) {
  if (std::getenv("HYPERTOPO_BENCH_SMOKE") != nullptr) {
    b->Arg(200);
    return;
  }
  b->Arg(1000)->Arg(5000)->Arg(10000)->Arg(20000);
}

BENCHMARK(BM_LeaderView)->Apply(cluster_sizes)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_WholeNodeObjects)->Apply(cluster_sizes)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
