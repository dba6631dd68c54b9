// The agent's node label export (`exports.nodeLabels`) from its YAML alone, against the loopback API
// server holding real Node objects: the tier labels appear, an unchanged tree writes no Node, a Node
// that leaves the tree loses exactly our keys (topograph's users met stale tier labels, NVIDIA
// topograph issue 408), labels of others stay, a failed source strips nothing, and turning the
// export off takes our keys away once. The leader's fabric is the built-in demo model; which Nodes
// exist and carry `nvidia.com/gpu.present` decides who is in the tree.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "agent/config/agent_config.h"
#include "agent/reconciler/node_label_reconciler.h"
#include "agent/runtime/agent_daemon.h"
#include "k8s/client/kube_config.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/eventually.h"
#include "tests/support/fixtures.h"

namespace hypertopo::agent {
namespace {

using hypertopo::testing::eventually;

using namespace std::chrono_literals;
using json = nlohmann::json;
using Labels = std::map<std::string, std::string>;

constexpr const char* kAgentNamespace = "hypertopo-system";
constexpr const char* kHyperNodesStorePath = "topology.volcano.sh/v1alpha1/hypernodes";
constexpr const char* kNodes = "/v1/nodes";
constexpr const char* kGpu = "nvidia.com/gpu.present";

std::string config_yaml(const std::string& exports, const std::string& extra_sources = "") {
  return "sources:\n"
         "  - kind: demo\n"
         "    config: {mode: model}\n" +
         extra_sources +
         "nodeSelector: {matchLabels: {nvidia.com/gpu.present: \"true\"}}\n"
         "exports: " +
         exports +
         "\n"
         "reconcile: {debounce: 100ms, resync: 1h}\n"
         "leaderElection: {leaseDuration: 1500ms, renewDeadline: 1000ms, retryPeriod: 200ms}\n";
}

class AgentNodeLabels : public ::testing::Test {
 protected:
  void SetUp() override {
    // Counts what reaches the Nodes (answers nothing itself).
    server_.set_raw_handler(
        [this](const testing::RawHttpRequest& r) -> std::optional<testing::RawHttpResponse> {
          if (r.method == "PATCH" && r.target.starts_with("/api/v1/nodes/")) {
            ++node_patches_;
            // A held Node PATCH waits here, in flight, until the test lets it through.
            std::unique_lock lock(gate_mutex_);
            gate_.wait(lock, [this] { return !hold_patches_; });
          }
          if (r.method == "PUT" && r.target.starts_with("/api/v1/nodes/")) ++node_puts_;
          return std::nullopt;
        });
    ASSERT_TRUE(server_.start().has_value());
    auto cluster = k8s::parse_kubeconfig(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: l\n  cluster:\n    server: " + server_.url() +
            "\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: l\n  context:\n"
            "    cluster: l\n    user: u\ncurrent-context: l\n",
        dir_.path(), "", "kubeconfig");
    ASSERT_TRUE(cluster) << cluster.error().message();
    auto client = k8s::KubeClient::create(*cluster, {.qps = 0});
    auto agent = k8s::KubeClient::create(*cluster, {.qps = 0});
    auto election =
        k8s::KubeClient::create(*cluster, {.connect_timeout = 400ms, .request_timeout = 500ms, .qps = 0});
    // The export's own client, as the agent makes one; a held PATCH must not time out meanwhile.
    auto labels = k8s::KubeClient::create(*cluster, {.request_timeout = 300s, .qps = 0});
    ASSERT_TRUE(client && agent && election && labels);
    client_ = std::move(*client);
    agent_client_ = std::move(*agent);
    election_client_ = std::move(*election);
    label_client_ = std::move(*labels);
  }
  void hold_node_patches(bool hold) {
    {
      std::lock_guard lock(gate_mutex_);
      hold_patches_ = hold;
    }
    gate_.notify_all();
  }
  void TearDown() override {
    hold_node_patches(false);
    if (daemon_) daemon_->stop();
    if (HasFailure()) {
      std::lock_guard lock(mutex_);
      for (const auto& l : lines_) std::printf("agent: %s\n", l.c_str());
    }
  }

  void add_node(const std::string& name, Labels labels, Labels annotations = {}) {
    json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"labels", labels}}}};
    if (!annotations.empty()) node["metadata"]["annotations"] = annotations;
    auto made = client_->create(k8s::kNodesResource, "", node);
    ASSERT_TRUE(made) << made.error().error.message();
  }
  Labels labels_of(const std::string& node) {
    auto object = server_.store().object(kNodes, "", node);
    Labels out;
    if (object && (*object)["metadata"].contains("labels"))
      out = (*object)["metadata"]["labels"].get<Labels>();
    return out;
  }
  std::string annotation_of(const std::string& node) {
    auto object = server_.store().object(kNodes, "", node);
    if (!object || !(*object)["metadata"].contains("annotations")) return "";
    return (*object)["metadata"]["annotations"].value(std::string(kExportedLabelsAnnotation), "");
  }
  // Only the keys of the export (hypertopo.io/tier-N, and topograph's when asked).
  static Labels ours(const Labels& labels, bool topograph = false) {
    NodeLabelExportOptions options{.enabled = true, .labels = {.topograph_compatible = topograph}};
    Labels out;
    for (const auto& [k, v] : labels) {
      if (topology::exporters::is_our_label_key(k, options.labels)) out[k] = v;
    }
    return out;
  }
  // What the stored HyperNodes say a node's labels must be: tier-N = the tier-N HyperNode holding it,
  // found by walking members up from the one that lists the Node itself.
  std::map<int, json> branch_of(const std::string& node) {
    std::map<int, json> out;
    const auto all = server_.store().objects(kHyperNodesStorePath);
    std::string child = node, type = "Node";
    for (bool found = true; found;) {
      found = false;
      for (const auto& hn : all) {
        for (const auto& m : hn["spec"]["members"]) {
          if (m["type"] == type && m["selector"]["exactMatch"]["name"] == child) {
            out[hn["spec"]["tier"].get<int>()] = hn;
            child = hn["metadata"]["name"].get<std::string>();
            type = "HyperNode";
            found = true;
          }
        }
        if (found) break;
      }
    }
    return out;
  }
  Labels expected_labels(const std::string& node) {
    Labels out;
    for (const auto& [tier, hn] : branch_of(node)) {
      out["hypertopo.io/tier-" + std::to_string(tier)] = hn["metadata"]["name"].get<std::string>();
    }
    return out;
  }

  void start(const std::string& yaml) {
    auto config = parse_agent_config(yaml, "config.yaml");
    ASSERT_TRUE(config) << config.error().message();
    daemon_ =
        std::make_unique<AgentDaemon>(*config, AgentIdentity{"gpu-node-1", "agent-a", kAgentNamespace},
                                      AgentDeps{.client = agent_client_.get(),
                                                .election_client = election_client_.get(),
                                                .label_client = label_client_.get(),
                                                .metrics = &metrics_,
                                                .log = [this](telemetry::LogLevel, const std::string& line) {
                                                  std::lock_guard lock(mutex_);
                                                  lines_.push_back(line);
                                                }});
    daemon_->start();
  }
  // A rebuild that the test causes (one more NodeReport), waited for until it has ended: its
  // summary line is the first to count that many reports.
  void another_rebuild(const std::string& report_name) {
    json report = {{"apiVersion", "hypertopo.io/v1alpha1"},
                   {"kind", "NodeReport"},
                   {"metadata", {{"name", report_name}, {"namespace", kAgentNamespace}}},
                   {"spec",
                    {{"nodeName", report_name},
                     {"probedAt", "2026-11-24T05:00:00Z"},
                     {"hcas", json::array()},
                     {"roce", json::array()}}}};
    ASSERT_TRUE(client_->create(kNodeReportsResource, kAgentNamespace, report));
    const std::string seen = "(" + std::to_string(++reports_written_) + " NodeReports";
    ASSERT_TRUE(eventually([&] { return !lines_matching(seen).empty(); }));
    // The line is logged inside the cycle; its counters show once the cycle has ended.
    ASSERT_TRUE(eventually([&] { return !daemon_->counters().rebuild_pending; }));
  }
  std::vector<std::string> lines_matching(const std::string& text) {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& l : lines_) {
      if (l.find(text) != std::string::npos) out.push_back(l);
    }
    return out;
  }

  testing::TempDir dir_;
  testing::LoopbackApiServer server_;
  std::unique_ptr<k8s::KubeClient> client_, agent_client_, election_client_, label_client_;
  std::mutex gate_mutex_;
  std::condition_variable gate_;
  bool hold_patches_ = false;
  telemetry::MetricsRegistry metrics_;
  std::unique_ptr<AgentDaemon> daemon_;
  std::atomic<int> node_patches_{0}, node_puts_{0};
  int reports_written_ = 0;
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

TEST_F(AgentNodeLabels, TierLabelsAppearStayUnwrittenAndLeaveWithTheNodeWhileOthersStay) {
  // Scalable unit 1 keeps two hosts after one leaves, so its leaf still merges something and the
  // tiers stay as they are (a tier that merges nothing is not emitted: the tier rule).
  add_node("demo-su01-node001", {{kGpu, "true"}});
  add_node("demo-su01-node002", {{kGpu, "true"}});
  add_node("demo-su01-node003", {{kGpu, "true"}, {"team", "a"}});
  add_node("demo-su02-node001", {{kGpu, "true"}});
  add_node("demo-su03-node001", {{kGpu, "true"}});
  // A CPU node outside the tree with a tier label left from an earlier tree: it is ours (our prefix)
  // and must go; its other label stays.
  add_node("cpu-node-1", {{"hypertopo.io/tier-2", "spine-gone"}, {"team", "b"}});

  start(config_yaml("{nodeLabels: {enabled: true}}"));
  const std::vector<std::string> gpu = {"demo-su01-node001", "demo-su01-node002", "demo-su01-node003",
                                        "demo-su02-node001", "demo-su03-node001"};
  ASSERT_TRUE(eventually([&] {
    for (const auto& n : gpu) {
      if (ours(labels_of(n)).empty()) return false;
    }
    return labels_of("cpu-node-1").size() == 1;
  })) << daemon_->counters().last_summary
      << " / " << daemon_->counters().last_label_summary;
  ASSERT_TRUE(eventually([&] { return daemon_->counters().node_label_writes >= 6; }));
  const int first_sync = node_patches_.load();
  EXPECT_EQ(first_sync, 6) << "five Nodes labelled, one stale key removed";

  for (const auto& n : gpu) {
    const Labels want = expected_labels(n);
    ASSERT_FALSE(want.empty()) << n << " is in no HyperNode";
    EXPECT_EQ(ours(labels_of(n)), want) << n;
    std::string keys;
    for (const auto& [k, v] : want) keys += (keys.empty() ? "" : ",") + k;
    EXPECT_EQ(annotation_of(n), keys) << n;
  }
  EXPECT_EQ(labels_of("demo-su01-node003").at("team"), "a");
  EXPECT_EQ(labels_of("cpu-node-1"), (Labels{{"team", "b"}}));
  EXPECT_EQ(annotation_of("cpu-node-1"), "");
  EXPECT_EQ(node_puts_.load(), 0) << "Nodes are only ever patched";

  // The same tree again: not one Node write.
  another_rebuild("unrelated-1");
  const int unchanged_sync = node_patches_.load() - first_sync;
  EXPECT_EQ(unchanged_sync, 0);
  EXPECT_EQ(daemon_->counters().last_label_summary, "patched=0 unchanged=6 failed=0 held=0");

  // demo-su01-node003 stops being a compute node: it is in no domain any more and loses exactly our
  // keys; its team label and everyone else's labels stay, and no other Node is written.
  const Labels others_before = labels_of("demo-su01-node001");
  Labels leaving = labels_of("demo-su01-node003");
  const int before_leave = node_patches_.load();
  ASSERT_TRUE(client_->patch(k8s::kNodesResource, "", "demo-su01-node003",
                             json{{"metadata", {{"labels", {{kGpu, nullptr}}}}}}));
  ASSERT_TRUE(eventually([&] { return ours(labels_of("demo-su01-node003")).empty(); }));
  ASSERT_TRUE(eventually([&] {
    return daemon_->counters().last_label_summary == "patched=1 unchanged=5 failed=0 held=0";
  })) << daemon_->counters().last_label_summary;
  const int leave_sync = node_patches_.load() - before_leave - 1;  // the test's own patch is one
  leaving.erase(kGpu);
  std::erase_if(leaving, [](const auto& kv) { return kv.first.starts_with("hypertopo.io/"); });
  EXPECT_EQ(labels_of("demo-su01-node003"), leaving);
  EXPECT_EQ(labels_of("demo-su01-node003").at("team"), "a");
  EXPECT_EQ(annotation_of("demo-su01-node003"), "");
  EXPECT_EQ(labels_of("demo-su01-node001"), others_before);
  EXPECT_EQ(leave_sync, 1);

  const std::string metrics = metrics_.render();
  EXPECT_NE(metrics.find("hypertopo_node_label_writes_total{outcome=\"ok\"} 7"), std::string::npos)
      << metrics;
  EXPECT_EQ(lines_matching("node labels: demo-su01-node003 -hypertopo.io/tier-").size(), 1u);

  // A new leader (the pod restarted, or another one took over) starts from its own lists and finds
  // every Node as it should be.
  daemon_->stop();
  const int before_failover = node_patches_.load();
  start(config_yaml("{nodeLabels: {enabled: true}}"));
  ASSERT_TRUE(eventually([&] { return !daemon_->counters().last_label_summary.empty(); }));
  EXPECT_EQ(daemon_->counters().last_label_summary, "patched=0 unchanged=6 failed=0 held=0");
  const int failover_sync = node_patches_.load() - before_failover;
  EXPECT_EQ(failover_sync, 0);
  std::printf(
      "[agent-numbers] node labels: first sync %d Node write(s) (5 labelled, 1 stale key removed); "
      "unchanged sync %d; a Node leaving the tree %d; a new leader %d\n",
      first_sync, unchanged_sync, leave_sync, failover_sync);
}

// topographCompatible adds NVIDIA topograph v1.0's keys: tier-0 is the switch closest to the node
// (our tier 1, the leaf), tier-1 its parent. Turning the export off by hot reload removes every key
// the agent wrote, once, and nothing else.
TEST_F(AgentNodeLabels, TopographKeysAndTurningTheExportOffRemovesOurKeysOnce) {
  add_node("demo-su01-node001", {{kGpu, "true"}, {"team", "a"}});
  add_node("demo-su01-node002", {{kGpu, "true"}});
  add_node("demo-su02-node001", {{kGpu, "true"}});
  // topograph's own tier key on a Node we never labelled: with the export off it is not ours.
  add_node("cpu-node-1", {{"fabric.topograph.run/tier-0", "theirs"}});
  start(config_yaml("{nodeLabels: {enabled: true, topographCompatible: true}}"));
  ASSERT_TRUE(eventually([&] { return !ours(labels_of("demo-su02-node001"), true).empty(); }));
  ASSERT_TRUE(eventually([&] { return daemon_->counters().last_label_summary.starts_with("patched=4 "); }))
      << daemon_->counters().last_label_summary;

  const auto branch = branch_of("demo-su01-node001");
  ASSERT_TRUE(branch.contains(1) && branch.contains(2));
  EXPECT_EQ(branch.at(1)["spec"]["tierName"], "leaf");
  const Labels have = labels_of("demo-su01-node001");
  EXPECT_EQ(have.at("fabric.topograph.run/tier-0"), branch.at(1)["metadata"]["name"]);
  EXPECT_EQ(have.at("fabric.topograph.run/tier-1"), branch.at(2)["metadata"]["name"]);
  EXPECT_EQ(have.at("hypertopo.io/tier-1"), branch.at(1)["metadata"]["name"]);
  EXPECT_FALSE(labels_of("cpu-node-1").contains("fabric.topograph.run/tier-0"))
      << "with topographCompatible on, a node outside the tree loses topograph tier keys too";

  // Hot reload with the export off.
  auto off = parse_agent_config(config_yaml("{nodeLabels: {enabled: false, topographCompatible: true}}"),
                                "config.yaml");
  ASSERT_TRUE(off) << off.error().message();
  const int before_off = node_patches_.load();
  daemon_->reload(*off);
  ASSERT_TRUE(eventually([&] {
    return ours(labels_of("demo-su01-node001"), true).empty() &&
           ours(labels_of("demo-su02-node001"), true).empty();
  }));
  EXPECT_EQ(labels_of("demo-su01-node001"), (Labels{{kGpu, "true"}, {"team", "a"}}));
  EXPECT_EQ(annotation_of("demo-su01-node001"), "");
  const int off_writes = node_patches_.load() - before_off;
  EXPECT_EQ(off_writes, 3);
  // Once: later rebuilds find nothing of ours.
  another_rebuild("unrelated-1");
  EXPECT_EQ(node_patches_.load() - before_off, off_writes);
  EXPECT_EQ(daemon_->counters().last_label_summary, "patched=0 unchanged=4 failed=0 held=0");
  // A topograph key the agent did not write, put there while the export is off, is left alone.
  ASSERT_TRUE(client_->patch(k8s::kNodesResource, "", "cpu-node-1",
                             json{{"metadata", {{"labels", {{"fabric.topograph.run/tier-0", "theirs"}}}}}}));
  another_rebuild("unrelated-2");
  EXPECT_EQ(labels_of("cpu-node-1").at("fabric.topograph.run/tier-0"), "theirs");
  EXPECT_EQ(lines_matching("node label export is off").size(), 1u);
  std::printf("[agent-numbers] node labels: export turned off by hot reload -> %d Node write(s), then 0\n",
              off_writes);
}

// The export runs beside the HyperNode reconcile, from the agent's YAML: while its PATCHes are
// still in flight (held by the API server here), a Node joins the fabric and the HyperNode that
// gains it is written at once; /metrics shows what is still to send. Once the PATCHes go through,
// the export finishes against the newer tree, every Node written once.
TEST_F(AgentNodeLabels, ATreeChangeLandsWhileLabelPatchesArePending) {
  const std::vector<std::string> gpu = {"demo-su01-node001", "demo-su01-node002", "demo-su02-node001",
                                        "demo-su02-node002", "demo-su03-node001"};
  for (const auto& n : gpu) add_node(n, {{kGpu, "true"}});
  hold_node_patches(true);
  start(config_yaml("{nodeLabels: {enabled: true}}\napiClient: {qps: 50, burst: 100, parallelWrites: 2}"));
  // The first tree is written; two PATCHes are in flight and held, three wait behind them.
  ASSERT_TRUE(eventually([&] {
    return !branch_of("demo-su02-node002").empty() && node_patches_.load() == 2;
  })) << daemon_->counters().last_summary;
  EXPECT_EQ(daemon_->counters().node_labels_pending, 5u);
  EXPECT_NE(metrics_.render().find("hypertopo_node_labels_pending 5"), std::string::npos)
      << metrics_.render();

  // A Node joins scalable unit 3: its leaf HyperNode gains a member while the labels are held.
  const auto leaf_before = branch_of("demo-su03-node001").at(1);
  add_node("demo-su03-node002", {{kGpu, "true"}});
  ASSERT_TRUE(eventually([&] {
    const auto branch = branch_of("demo-su03-node002");
    return branch.contains(1) && branch.at(1)["metadata"]["name"] == leaf_before["metadata"]["name"];
  })) << daemon_->counters().last_summary;
  EXPECT_EQ(node_patches_.load(), 2) << "the HyperNode change did not wait for the label export";
  EXPECT_GT(daemon_->counters().node_labels_pending, 0u);
  EXPECT_TRUE(ours(labels_of("demo-su03-node002")).empty());

  hold_node_patches(false);
  std::vector<std::string> all = gpu;
  all.push_back("demo-su03-node002");
  ASSERT_TRUE(eventually([&] {
    for (const auto& n : all) {
      if (ours(labels_of(n)) != expected_labels(n)) return false;
    }
    return !daemon_->counters().rebuild_pending;
  })) << daemon_->counters().last_label_summary;
  EXPECT_EQ(node_patches_.load(), 6) << "each Node written once, across the superseded pass and the next";
  EXPECT_EQ(daemon_->counters().node_labels_pending, 0u);
  EXPECT_NE(metrics_.render().find("hypertopo_node_labels_pending 0"), std::string::npos);
  EXPECT_NE(metrics_.render().find("hypertopo_node_label_writes_total{outcome=\"ok\"} 6"), std::string::npos)
      << metrics_.render();
  // Nothing changed since: another rebuild writes no Node.
  another_rebuild("unrelated-1");
  EXPECT_EQ(node_patches_.load(), 6);
  EXPECT_EQ(daemon_->counters().last_label_summary, "patched=0 unchanged=6 failed=0 held=0");
}

// A source that fails makes the discovery incomplete: labels are added and changed, never removed
// (the HyperNode reconciler deletes nothing then either).
TEST_F(AgentNodeLabels, AFailedSourceStripsNoLabel) {
  add_node("demo-su01-node001", {{kGpu, "true"}});
  add_node("demo-su01-node002", {{kGpu, "true"}});
  // Left the tree, but its keys were ours (the annotation says so): kept while discovery is incomplete.
  add_node("demo-su04-node001", {{"hypertopo.io/tier-1", "leaf-old"}, {"team", "a"}},
           {{std::string(kExportedLabelsAnnotation), "hypertopo.io/tier-1"}});
  start(config_yaml("{nodeLabels: {enabled: true}}", "  - kind: ibnetdiscover\n    config: {file: " +
                                                         (dir_.path() / "missing.out").string() + "}\n"));
  ASSERT_TRUE(eventually([&] { return !ours(labels_of("demo-su01-node001")).empty(); }));
  ASSERT_TRUE(eventually([&] { return !daemon_->counters().last_label_summary.empty(); }));
  EXPECT_EQ(daemon_->counters().last_label_summary, "patched=2 unchanged=1 failed=0 held=1");
  EXPECT_EQ(ours(labels_of("demo-su01-node001")), expected_labels("demo-su01-node001"));
  EXPECT_EQ(labels_of("demo-su04-node001"), (Labels{{"hypertopo.io/tier-1", "leaf-old"}, {"team", "a"}}));
  EXPECT_EQ(annotation_of("demo-su04-node001"), "hypertopo.io/tier-1");
  EXPECT_NE(metrics_.render().find("hypertopo_node_labels_held 1"), std::string::npos) << metrics_.render();
  EXPECT_NE(
      metrics_.render().find("hypertopo_discovery_runs_total{source=\"ibnetdiscover\",outcome=\"error\"}"),
      std::string::npos);
}

// The base deployment enables no fabric source: the leader says so once, counts no failed cycle,
// and with the export off still takes the labels it once wrote off the Nodes.
TEST_F(AgentNodeLabels, WithNoFabricSourceTheLeaderSaysSoOnceAndStillCleansUp) {
  add_node("gpu-node-1", {{kGpu, "true"}, {"hypertopo.io/tier-1", "leaf-a"}, {"team", "a"}},
           {{std::string(kExportedLabelsAnnotation), "hypertopo.io/tier-1"}});
  start(
      "sources:\n"
      "  - kind: ibnetdisc\n"
      "    enabled: false\n"
      "exports: {nodeLabels: {enabled: false}}\n"
      "reconcile: {debounce: 100ms, resync: 1h}\n"
      "leaderElection: {leaseDuration: 1500ms, renewDeadline: 1000ms, retryPeriod: 200ms}\n");
  ASSERT_TRUE(eventually([&] { return ours(labels_of("gpu-node-1")).empty(); }));
  EXPECT_EQ(labels_of("gpu-node-1"), (Labels{{kGpu, "true"}, {"team", "a"}}));
  EXPECT_EQ(annotation_of("gpu-node-1"), "");
  ASSERT_TRUE(eventually([&] { return daemon_->counters().rebuilds >= 1; }));
  json report = {{"apiVersion", "hypertopo.io/v1alpha1"},
                 {"kind", "NodeReport"},
                 {"metadata", {{"name", "other"}, {"namespace", kAgentNamespace}}},
                 {"spec",
                  {{"nodeName", "other"},
                   {"probedAt", "2026-11-24T05:00:00Z"},
                   {"hcas", json::array()},
                   {"roce", json::array()}}}};
  ASSERT_TRUE(client_->create(kNodeReportsResource, kAgentNamespace, report));
  ASSERT_TRUE(eventually([&] { return daemon_->counters().rebuilds >= 2; }));
  EXPECT_EQ(lines_matching("no enabled leader source").size(), 1u);
  EXPECT_NE(metrics_.render().find("hypertopo_reconcile_failures_total 0"), std::string::npos)
      << metrics_.render();
}

}  // namespace
}  // namespace hypertopo::agent
