// The agent daemon against the loopback API server (no Kubernetes API server exists here; the
// in-tree one keeps resourceVersions, 409s, watches with bookmarks and 410, Leases and /status).
// Node facts come from a probe function the test hands in, since there are no HCAs or GPUs; the
// leader's fabric is the built-in demo model. Election and debounce run on real time with short
// settings, so the waits below poll with generous limits and assert outcomes, never durations.
#include "agent/runtime/agent_daemon.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "k8s/client/kube_config.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/eventually.h"
#include "tests/support/fixtures.h"
#include "tests/support/volcano/volcano_hypernode_status.h"
#include "topology/hypernode.h"
#include "topology/hypernode_status.h"
#include "topology/nvlink_merge.h"

namespace hypertopo::agent {
namespace {

using hypertopo::testing::eventually;

using namespace std::chrono_literals;
using json = nlohmann::json;

constexpr const char* kNamespace = "hypertopo-system";
constexpr const char* kHyperNodes = "topology.volcano.sh/v1alpha1/hypernodes";
constexpr const char* kClusterUuid = "dc6e40c4-d722-4357-9ba6-5291dd461278";

std::string demo_host(int su, int n) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "demo-su%02d-node%03d", su, n);
  return buf;
}

// An NVL72-style report: four GPUs of one clique.
topology::NodeReport nvlink_report(const std::string& node, int clique) {
  topology::NodeReport r;
  r.node_name = node;
  r.probed_at = std::chrono::sys_seconds(std::chrono::seconds(1795000000));
  topology::NvlinkFacts f;
  f.source = "nvml";
  for (int g = 0; g < 4; ++g) {
    f.gpus.push_back({.index = g,
                      .cluster_uuid = kClusterUuid,
                      .clique_id = static_cast<std::uint64_t>(clique),
                      .state = "Completed",
                      .status = "Success",
                      .in_domain = true});
  }
  f.clique_id = std::string(kClusterUuid) + "." + std::to_string(clique);
  r.nvlink = f;
  return r;
}

// A source as `kind:arg` on the command line would give it, through the registry's own parser.
SourceConfig source(const std::string& kind, std::chrono::seconds interval = 3600s, std::string arg = "") {
  if (kind == "demo" && arg.empty()) arg = "model";
  auto s = source_from_arg(kind, arg);
  EXPECT_TRUE(s) << s.error().message();
  s->interval = interval;
  return *s;
}

class AgentDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::LoopbackApiServer>(
        testing::LoopbackApiServerOptions{.bearer_token = "t0ken"});
    // Observes every request (answers none): HyperNode writes, whoever sends them.
    server_->set_raw_handler(
        [this](const testing::RawHttpRequest& r) -> std::optional<testing::RawHttpResponse> {
          if (r.target.find("/hypernodes") == std::string::npos) return std::nullopt;
          if (r.method != "GET") ++hypernode_writes_;
          if (r.method == "GET" && r.target.find("labelSelector=") != std::string::npos) {
            std::lock_guard lock(hypernode_reads_mutex_);
            hypernode_reads_.push_back(r.target.find("watch=1") != std::string::npos ? "watch" : "list");
          }
          if (r.method == "POST" && refuse_hypernode_creates_) {
            return testing::RawHttpResponse{.status = 503, .body = R"({"kind":"Status","code":503})"};
          }
          return std::nullopt;
        });
    auto started = server_->start();
    ASSERT_TRUE(started) << started.error().message();
    auto cluster = k8s::parse_kubeconfig(
        "apiVersion: v1\nkind: Config\n"
        "clusters:\n- name: loop\n  cluster:\n    server: " +
            server_->url() +
            "\nusers:\n- name: me\n  user:\n    token: t0ken\n"
            "contexts:\n- name: loop\n  context:\n    cluster: loop\n    user: me\n"
            "current-context: loop\n",
        dir_.path(), "", "kubeconfig");
    ASSERT_TRUE(cluster) << cluster.error().message();
    cluster_ = *cluster;
    client_ = make_client(false);

    config_.sources = {source("ib-local", 600s), source("demo")};
    config_.debounce = 100ms;
    config_.lease_duration = 1500ms;
    config_.renew_deadline = 1000ms;
    config_.retry_period = 200ms;
  }

  std::unique_ptr<k8s::KubeClient> make_client(bool election) {
    k8s::ClientOptions o;
    o.qps = 0;
    if (election) {
      o.connect_timeout = 400ms;
      o.request_timeout = 500ms;
      o.retry.max_attempts = 1;
    }
    auto c = k8s::KubeClient::create(cluster_, o);
    EXPECT_TRUE(c) << c.error().message();
    return std::move(*c);
  }

  // One pod: its own clients and metrics, a probe that reports one HCA-less node.
  struct Pod {
    std::unique_ptr<k8s::KubeClient> client, election;
    telemetry::MetricsRegistry metrics;
    std::unique_ptr<AgentDaemon> daemon;
  };
  std::unique_ptr<Pod> make_pod(const std::string& node, const std::string& pod_name,
                                std::shared_ptr<timing::Clock> clock = nullptr) {
    auto pod = std::make_unique<Pod>();
    pod->client = make_client(false);
    pod->election = make_client(true);
    AgentDeps deps;
    deps.client = pod->client.get();
    deps.election_client = pod->election.get();
    deps.metrics = &pod->metrics;
    deps.work_dir = dir_.path() / pod_name;
    deps.clock = std::move(clock);
    deps.probe = [this](const SourceConfig& s, const std::filesystem::path&,
                        topology::NodeReport& report) -> std::expected<void, Error> {
      ++probe_calls_;
      if (s.kind != "ib-local") return fail(ErrorCode::kNotFound, s.kind + ": no such device");
      report.warnings.push_back("recorded: no HCA");
      return {};
    };
    pod->daemon = std::make_unique<AgentDaemon>(config_, AgentIdentity{node, pod_name, kNamespace}, deps);
    return pod;
  }

  void write_report(const topology::NodeReport& r) {
    json object = topology::render_node_report(r);
    object["metadata"]["namespace"] = kNamespace;
    auto made = client_->create(kNodeReportsResource, kNamespace, object);
    ASSERT_TRUE(made) << made.error().error.message();
  }

  std::map<std::string, std::string> hypernode_versions() {
    std::map<std::string, std::string> out;
    auto list = client_->list({"topology.volcano.sh", "v1alpha1", "hypernodes", false}, "");
    EXPECT_TRUE(list);
    for (const auto& o : list->items) {
      out[o["metadata"]["name"].get<std::string>()] = o["metadata"]["resourceVersion"].get<std::string>();
    }
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::LoopbackApiServer> server_;
  k8s::ClusterConfig cluster_;
  std::unique_ptr<k8s::KubeClient> client_;
  AgentConfig config_;
  std::atomic<int> probe_calls_{0};
  std::atomic<int> hypernode_writes_{0};
  std::atomic<bool> refuse_hypernode_creates_{false};
  std::mutex hypernode_reads_mutex_;
  std::vector<std::string> hypernode_reads_;  // "list" or "watch", of the owned (label-selected) ones
};

TEST_F(AgentDaemonTest, PublishesItsReportLeadsReconcilesAndThenWritesNothing) {
  auto pod = make_pod("gpu-node-1", "agent-a");
  pod->daemon->start();
  ASSERT_TRUE(eventually([&] { return pod->daemon->ready(); }));
  auto report = server_->store().object("hypertopo.io/v1alpha1/nodereports", kNamespace, "gpu-node-1");
  ASSERT_TRUE(report);
  EXPECT_EQ((*report)["spec"]["warnings"][0], "recorded: no HCA");

  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().last_summary.starts_with("created=7"); }))
      << pod->daemon->counters().last_summary;
  EXPECT_TRUE(pod->daemon->leading());
  EXPECT_EQ(server_->store().object_count(kHyperNodes), 7u);
  const auto before = hypernode_versions();

  // An unrelated NodeReport arrives: one rebuild, and nothing to write.
  const int rebuilds = pod->daemon->counters().rebuilds;
  topology::NodeReport other;
  other.node_name = "cpu-node-9";
  write_report(other);
  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().rebuilds > rebuilds; }));
  EXPECT_EQ(pod->daemon->counters().last_summary, "created=0 updated=0 deleted=0 unchanged=7 held=0");
  EXPECT_EQ(hypernode_versions(), before);
  // The demo fabric ran once; the rebuild reused it.
  EXPECT_EQ(pod->daemon->counters().source_runs, 1);

  const std::string metrics = pod->metrics.render();
  EXPECT_NE(metrics.find("hypertopo_leader 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("hypertopo_api_writes_total{verb=\"create\",outcome=\"ok\"} 8"), std::string::npos)
      << metrics;  // 7 HyperNodes and the NodeReport
  EXPECT_NE(metrics.find("hypertopo_discovery_runs_total{source=\"demo\",outcome=\"cached\"} 1"),
            std::string::npos)
      << metrics;
  // The demo fabric is healthy: every HyperNode says so, and no link is bad.
  EXPECT_NE(metrics.find("hypertopo_domain_degraded{hypernode=\"core-demo-core-01\"} 0"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("hypertopo_fabric_links{state=\"degraded\"} 0"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("hypertopo_fabric_links{state=\"missing\"} 0"), std::string::npos) << metrics;

  // The same facts probed again: no NodeReport write (probedAt alone is no change).
  server_->reset_counts();
  pod->daemon->reload(config_);  // nothing changed: no rebuild, no probe
  const auto report_before =
      server_->store().object("hypertopo.io/v1alpha1/nodereports", kNamespace, "gpu-node-1");
  pod->daemon->stop();
  EXPECT_EQ(server_->store().object("hypertopo.io/v1alpha1/nodereports", kNamespace, "gpu-node-1"),
            report_before);
  EXPECT_FALSE(pod->daemon->leading());
  // stop() released the Lease for a successor.
  auto lease = server_->store().object("coordination.k8s.io/v1/leases", kNamespace, "hypertopo-agent");
  ASSERT_TRUE(lease);
  EXPECT_EQ((*lease)["spec"].value("holderIdentity", std::string("?")), "");
}

// Volcano's hyperNode-controller writes status.nodeCount as the number of distinct member names (a
// spine with 3 leaves counts 3, not its hosts); with its status loop running beside the agent,
// neither side finds anything to correct, over ten rebuilds and across a change of leader.
TEST_F(AgentDaemonTest, VolcanosStatusLoopAndTheAgentNeverCorrectEachOther) {
  auto volcano_client = make_client(false);
  testing::VolcanoHyperNodeStatusLoop volcano(*volcano_client);
  volcano.start();
  // Every HyperNode event up to now has been handled by the stand-in.
  auto caught_up = [&] {
    const auto rv = server_->store().resource_version();
    return eventually([&] {
      server_->store().emit_bookmark();
      return volcano.bookmark_resource_version() >= rv;
    });
  };
  auto counts_agree = [&] {
    for (const auto& hn : server_->store().objects(kHyperNodes)) {
      const auto& have = hn["status"]["nodeCount"];
      if (!have.is_number_integer() ||
          have.get<std::int64_t>() != testing::VolcanoHyperNodeStatusLoop::actual_node_count(hn, {}))
        return false;
    }
    return true;
  };

  auto a = make_pod("gpu-node-1", "agent-a");
  a->daemon->start();
  ASSERT_TRUE(eventually([&] { return a->daemon->counters().last_summary.starts_with("created=7"); }));
  ASSERT_TRUE(eventually(counts_agree));
  ASSERT_TRUE(caught_up());
  const int first_cycle_volcano = volcano.writes();
  // The spine of the demo fabric: its members are scalable units, and that is what Volcano counts.
  for (const auto& hn : server_->store().objects(kHyperNodes)) {
    EXPECT_EQ(hn["status"]["nodeCount"].get<std::size_t>(), hn["spec"]["members"].size())
        << hn["metadata"]["name"];
  }

  const auto versions = hypernode_versions();
  const int writes_before = hypernode_writes_.load();
  const int volcano_before = volcano.writes();
  for (int i = 0; i < 10; ++i) {
    const int rebuilds = a->daemon->counters().rebuilds;
    topology::NodeReport other;
    other.node_name = "cpu-node-" + std::to_string(i);
    write_report(other);
    ASSERT_TRUE(eventually([&] { return a->daemon->counters().rebuilds > rebuilds; }));
  }
  ASSERT_TRUE(caught_up());
  const int rebuild_writes = hypernode_writes_.load() - writes_before;
  const int rebuild_volcano = volcano.writes() - volcano_before;
  EXPECT_EQ(rebuild_writes, 0);
  EXPECT_EQ(rebuild_volcano, 0);
  EXPECT_EQ(hypernode_versions(), versions);

  // Failover: a new leader rebuilds from scratch and finds nothing to write either.
  auto b = make_pod("gpu-node-2", "agent-b");
  b->daemon->start();
  ASSERT_TRUE(eventually([&] { return b->daemon->ready(); }));
  const int failover_before = hypernode_writes_.load();
  a->daemon->stop();
  ASSERT_TRUE(eventually([&] { return b->daemon->leading(); }, 5s));
  ASSERT_TRUE(eventually([&] { return !b->daemon->counters().last_summary.empty(); }));
  EXPECT_EQ(b->daemon->counters().last_summary, "created=0 updated=0 deleted=0 unchanged=7 held=0");
  ASSERT_TRUE(caught_up());
  const int failover_writes = hypernode_writes_.load() - failover_before;
  EXPECT_EQ(failover_writes, 0);
  EXPECT_EQ(hypernode_versions(), versions);
  std::printf(
      "[agent-numbers] Volcano status stand-in beside the agent: first sync %d Volcano write(s); "
      "10 rebuilds -> %d HyperNode writes (%d by Volcano); failover -> %d\n",
      first_cycle_volcano, rebuild_writes, rebuild_volcano, failover_writes);
  b->daemon->stop();
  volcano.stop();
}

TEST_F(AgentDaemonTest, ANodeReportChangeReachesTheHyperNodes) {
  auto pod = make_pod("gpu-node-1", "agent-a");
  pod->daemon->start();
  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().last_summary.starts_with("created=7"); }));

  // Eighteen trays of one NVL72 rack publish their clique: a tier-1 NVLink HyperNode appears.
  const auto start = std::chrono::steady_clock::now();
  for (int n = 1; n <= 18; ++n) write_report(nvlink_report(demo_host(1, n), 1));
  const auto written = std::chrono::steady_clock::now();
  const std::string name = topology::nvlink_domain_name(std::string(kClusterUuid) + ".1");
  ASSERT_TRUE(eventually([&] { return server_->store().object(kHyperNodes, "", name).has_value(); }, 30s));
  const auto seen = std::chrono::steady_clock::now();
  auto object = server_->store().object(kHyperNodes, "", name);
  EXPECT_EQ((*object)["spec"]["tier"], 1);
  EXPECT_EQ((*object)["spec"]["members"].size(), 18u);
  std::printf(
      "[agent-numbers] 18 NodeReports written in %.1f ms; last write -> NVLink HyperNode stored: %.1f ms "
      "(debounce %lld ms, loopback API server, sanitizer build)\n",
      std::chrono::duration<double, std::milli>(written - start).count(),
      std::chrono::duration<double, std::milli>(seen - written).count(),
      static_cast<long long>(config_.debounce.count()));
  pod->daemon->stop();
}

// The agent's time is a ManualClock here: the debounce passes exactly when the test advances it, so
// however long the burst takes on a loaded machine, what the test asserts cannot depend on it.
TEST_F(AgentDaemonTest, ABurstOfAThousandReportsCostsOneRebuild) {
  config_.debounce = 1000ms;  // quiet time that ends a burst
  auto clock = std::make_shared<timing::ManualClock>();
  auto pod = make_pod("gpu-node-1", "agent-a", clock);
  pod->daemon->start();
  // The first rebuild needs no time to pass: it comes once both lists are in.
  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().last_summary.starts_with("created=7"); }));
  // This pod's own NodeReport is an event too: once the leader has seen it, one debounce settles it.
  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().reports_known == 1; }));
  clock->advance(config_.debounce);
  ASSERT_TRUE(eventually([&] { return !pod->daemon->counters().rebuild_pending; }));
  const int before = pod->daemon->counters().rebuilds;
  for (int i = 0; i < 1000; ++i) {
    topology::NodeReport r;
    char name[32];
    std::snprintf(name, sizeof name, "burst-%04d", i);
    r.node_name = name;
    write_report(r);
  }
  // Every event is in the leader's view, and no time has passed: nothing was rebuilt yet.
  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().reports_known == 1001; }, 30s));
  EXPECT_EQ(pod->daemon->counters().rebuilds, before);
  EXPECT_TRUE(pod->daemon->counters().rebuild_pending);
  // One debounce of quiet: one rebuild, and nothing left pending that a second one would serve.
  clock->advance(config_.debounce);
  ASSERT_TRUE(eventually(
      [&] {
        const auto c = pod->daemon->counters();
        return c.rebuilds > before && !c.rebuild_pending;
      },
      30s));
  const int after = pod->daemon->counters().rebuilds;
  std::printf("[agent-numbers] 1000 NodeReport events -> %d rebuild(s)\n", after - before);
  EXPECT_EQ(after - before, 1);
  EXPECT_EQ(pod->daemon->counters().last_summary, "created=0 updated=0 deleted=0 unchanged=7 held=0");
  pod->daemon->stop();
}

TEST_F(AgentDaemonTest, TwoAgentsOneLeaderAndAHandoverWithoutRewrites) {
  auto a = make_pod("gpu-node-1", "agent-a");
  auto b = make_pod("gpu-node-2", "agent-b");
  a->daemon->start();
  b->daemon->start();
  ASSERT_TRUE(eventually([&] { return a->daemon->leading() || b->daemon->leading(); }));
  auto* leader = a->daemon->leading() ? a.get() : b.get();
  auto* follower = leader == a.get() ? b.get() : a.get();
  ASSERT_TRUE(eventually([&] { return leader->daemon->counters().last_summary.starts_with("created=7"); }));
  // Over several renewals (Lease updates on the server), exactly one leads and only the leader
  // rebuilds. Leader election runs on the system clock: the renewals are waited for, not slept.
  const int updates = server_->count("update");
  ASSERT_TRUE(eventually([&] { return server_->count("update") >= updates + 3; }));
  EXPECT_TRUE(leader->daemon->leading());
  EXPECT_FALSE(follower->daemon->leading());
  EXPECT_EQ(follower->daemon->counters().rebuilds, 0);
  ASSERT_TRUE(eventually([&] { return a->daemon->ready() && b->daemon->ready(); }));
  EXPECT_EQ(server_->store().object_count("hypertopo.io/v1alpha1/nodereports"), 2u);

  const auto before = hypernode_versions();
  leader->daemon->stop();  // SIGTERM: the Lease is released, the other takes over at once
  ASSERT_TRUE(eventually([&] { return follower->daemon->leading(); }, 5s));
  ASSERT_TRUE(eventually([&] { return !follower->daemon->counters().last_summary.empty(); }));
  EXPECT_EQ(follower->daemon->counters().last_summary, "created=0 updated=0 deleted=0 unchanged=7 held=0");
  EXPECT_EQ(hypernode_versions(), before);
  follower->daemon->stop();
}

TEST_F(AgentDaemonTest, AFailingSourceDeletesNothingAndIsCounted) {
  // A HyperNode we own that the fabric no longer has: a complete discovery would delete it.
  json stale = {
      {"apiVersion", "topology.volcano.sh/v1alpha1"},
      {"kind", "HyperNode"},
      {"metadata",
       {{"name", "leaf-gone"},
        {"labels",
         {{topology::kSourceLabel, "hypertopo"}, {topology::kManagedByLabel, topology::kManagedByValue}}}}},
      {"spec",
       {{"tier", 1},
        {"members",
         json::array({{{"type", "Node"}, {"selector", {{"exactMatch", {{"name", "old-node"}}}}}}})}}}};
  ASSERT_TRUE(client_->create({"topology.volcano.sh", "v1alpha1", "hypernodes", false}, "", stale));
  config_.sources.push_back(source("ibnetdiscover", 3600s, (dir_.path() / "missing.out").string()));
  auto pod = make_pod("gpu-node-1", "agent-a");
  pod->daemon->start();
  ASSERT_TRUE(eventually([&] { return !pod->daemon->counters().last_summary.empty(); }));
  EXPECT_EQ(pod->daemon->counters().last_summary, "created=7 updated=0 deleted=0 unchanged=0 held=1");
  EXPECT_TRUE(server_->store().object(kHyperNodes, "", "leaf-gone").has_value());
  EXPECT_NE(pod->metrics.render().find(
                "hypertopo_discovery_runs_total{source=\"ibnetdiscover\",outcome=\"error\"} 1"),
            std::string::npos)
      << pod->metrics.render();
  EXPECT_NE(pod->metrics.render().find("hypertopo_held_deletions 1"), std::string::npos);
  pod->daemon->stop();
}

// A HyperNode counts as deleted by another writer only once the leader has seen it exist. A leader
// whose tree is built but whose creates have not landed yet relists its owned HyperNodes (a 410 after
// a compaction): none of the seven it wants exists, and none was deleted. Once they are created, one
// deleted by hand is the one drift counted.
TEST_F(AgentDaemonTest, AHyperNodeNotYetCreatedIsNotCountedAsDeleted) {
  refuse_hypernode_creates_ = true;
  auto pod = make_pod("gpu-node-1", "agent-a");
  auto deleted_drift = [&] {
    return pod->metrics.counter("hypertopo_owned_hypernode_drift_total", "", {"change"}).value({"deleted"});
  };
  pod->daemon->start();
  auto watched_since = [&](std::size_t from) {
    std::lock_guard lock(hypernode_reads_mutex_);
    return std::find(hypernode_reads_.begin() + static_cast<std::ptrdiff_t>(from), hypernode_reads_.end(),
                     "watch") != hypernode_reads_.end();
  };
  // A refused create: the tree is built and what it wants is known to the watch, which is open.
  ASSERT_TRUE(eventually([&] { return hypernode_writes_ > 0 && watched_since(0); }));
  std::size_t reads_before = 0;
  {
    std::lock_guard lock(hypernode_reads_mutex_);
    reads_before = hypernode_reads_.size();
  }
  // A write the owned watch does not see, then a compaction: its resourceVersion is now too old.
  ASSERT_TRUE(client_->create({"", "v1", "configmaps", true}, kNamespace,
                              {{"apiVersion", "v1"},
                               {"kind", "ConfigMap"},
                               {"metadata", {{"name", "unrelated"}, {"namespace", kNamespace}}}}));
  server_->store().compact();
  server_->cut_connections();
  // The watch resumed (410 Gone), the relist, then the watch that starts only once the list has been
  // compared with the tree.
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(hypernode_reads_mutex_);
    auto at = hypernode_reads_.begin() + static_cast<std::ptrdiff_t>(reads_before);
    for (const char* step : {"watch", "list", "watch"}) {
      at = std::find(at, hypernode_reads_.end(), step);
      if (at == hypernode_reads_.end()) return false;
      ++at;
    }
    return true;
  }));
  EXPECT_EQ(server_->store().object_count(kHyperNodes), 0u);
  EXPECT_EQ(deleted_drift(), 0);

  refuse_hypernode_creates_ = false;
  // Created, each with the /status a create cannot carry.
  ASSERT_TRUE(eventually([&] {
    auto list = client_->list({"topology.volcano.sh", "v1alpha1", "hypernodes", false}, "");
    if (!list || list->items.size() != 7) return false;
    return std::ranges::all_of(list->items, [](const json& o) { return o.contains("status"); });
  }));
  EXPECT_EQ(deleted_drift(), 0);

  // kubectl delete hypernode: seen, then gone, then restored.
  const std::string name = hypernode_versions().begin()->first;
  ASSERT_TRUE(client_->delete_object({"topology.volcano.sh", "v1alpha1", "hypernodes", false}, "", name));
  ASSERT_TRUE(eventually([&] { return deleted_drift() == 1; })) << pod->metrics.render();
  ASSERT_TRUE(eventually([&] { return server_->store().object(kHyperNodes, "", name).has_value(); }));
  EXPECT_EQ(deleted_drift(), 1);
  pod->daemon->stop();
}

TEST_F(AgentDaemonTest, AFabricSourceThatStartsFailingKeepsItsLastGoodTopology) {
  HT_REQUIRE_FIXTURE(capture, "ibnetdiscover/topograph-example.out");
  const auto copy = dir_.path() / "fabric.out";
  std::filesystem::copy_file(capture, copy);
  // Interval 0: every rebuild runs the source again.
  config_.sources = {source("ib-local", 600s), source("ibnetdiscover", 0s, copy.string())};
  auto pod = make_pod("gpu-node-1", "agent-a");
  pod->daemon->start();
  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().last_summary.starts_with("created="); }));
  const std::string first = pod->daemon->counters().last_summary;
  ASSERT_NE(first, "created=0 updated=0 deleted=0 unchanged=0 held=0");
  const auto before = hypernode_versions();

  // The capture goes away (as UFM answering 503 would): the next rebuild fails that source, and the
  // last good topology stands in: nothing updated, nothing held, nothing deleted.
  std::filesystem::remove(copy);
  topology::NodeReport other;
  other.node_name = "cpu-node-9";
  write_report(other);
  const std::string failed = "hypertopo_discovery_runs_total{source=\"ibnetdiscover\",outcome=\"error\"} 1";
  ASSERT_TRUE(eventually([&] { return pod->metrics.render().find(failed) != std::string::npos; }));
  // One more rebuild after the failure was seen: it too runs the source (interval 0), which fails
  // again, and the reconcile it ends with is the one checked below.
  const int rebuilds = pod->daemon->counters().rebuilds;
  other.node_name = "cpu-node-10";
  write_report(other);
  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().rebuilds > rebuilds; }));
  EXPECT_TRUE(pod->daemon->counters().last_summary.starts_with("created=0 updated=0 deleted=0 unchanged="))
      << pod->daemon->counters().last_summary;
  EXPECT_TRUE(pod->daemon->counters().last_summary.ends_with(" held=0"))
      << pod->daemon->counters().last_summary;
  EXPECT_EQ(hypernode_versions(), before);
  pod->daemon->stop();
}

// `ibnetdiscover` text of three leaves (two hosts each) under two spines, leaf l's port 2 + s cabled to
// spine s's port l; without `leaf2_to_spine1` that one cable is gone. `leaves` below 3 leaves out the
// last leaves, their hosts and their cables.
std::string three_leaf_capture(bool leaf2_to_spine1, int leaves = 3) {
  auto guid = [](int kind, int index) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "0002c90300%02d%04d", kind, index);
    return std::string(buf);
  };
  auto cabled = [&](int l, int s) { return leaf2_to_spine1 || !(l == 2 && s == 1); };
  std::string text;
  for (int l = 1; l <= leaves; ++l) {
    text += "switchguid=0x" + guid(1, l) + "\nSwitch\t8 \"S-" + guid(1, l) + "\"\t# \"MF0;leaf-" +
            std::to_string(l) + ":MQM8700/U1\" enhanced port 0 lid " + std::to_string(l) + " lmc 0\n";
    for (int h = 1; h <= 2; ++h) {
      text += "[" + std::to_string(h) + "]\t\"H-" + guid(3, l * 10 + h) + "\"[1]\t# \"node-" +
              std::to_string(l) + std::to_string(h) + " mlx5_0\" lid " + std::to_string(l * 10 + h) +
              " 4xEDR\n";
    }
    for (int s = 1; s <= 2; ++s) {
      if (!cabled(l, s)) continue;
      text += "[" + std::to_string(2 + s) + "]\t\"S-" + guid(2, s) + "\"[" + std::to_string(l) +
              "]\t# \"MF0;spine-" + std::to_string(s) + ":MQM8700/U1\" lid " + std::to_string(100 + s) +
              " 4xEDR\n";
    }
    text += "\n";
  }
  for (int s = 1; s <= 2; ++s) {
    text += "switchguid=0x" + guid(2, s) + "\nSwitch\t8 \"S-" + guid(2, s) + "\"\t# \"MF0;spine-" +
            std::to_string(s) + ":MQM8700/U1\" enhanced port 0 lid " + std::to_string(100 + s) + " lmc 0\n";
    for (int l = 1; l <= leaves; ++l) {
      if (!cabled(l, s)) continue;
      text += "[" + std::to_string(l) + "]\t\"S-" + guid(1, l) + "\"[" + std::to_string(2 + s) +
              "]\t# \"MF0;leaf-" + std::to_string(l) + ":MQM8700/U1\" lid " + std::to_string(l) + " 4xEDR\n";
    }
    text += "\n";
  }
  for (int l = 1; l <= leaves; ++l) {
    for (int h = 1; h <= 2; ++h) {
      text += "caguid=0x" + guid(3, l * 10 + h) + "\nCa\t1 \"H-" + guid(3, l * 10 + h) + "\"\t# \"node-" +
              std::to_string(l) + std::to_string(h) + " mlx5_0\"\n[1]\t\"S-" + guid(1, l) + "\"[" +
              std::to_string(h) + "]\t# lid " + std::to_string(l * 10 + h) + " lmc 0 \"MF0;leaf-" +
              std::to_string(l) + ":MQM8700/U1\" lid " + std::to_string(l) + " 4xEDR\n\n";
    }
  }
  return text;
}

// A cable that goes away and comes back, twice, between the leader's runs: while it is away its leaf
// misses an uplink; once back, the leader remembers and the leaf's FabricDegraded condition says
// LinkFlapping (a single walk would call the leaf healthy).
TEST_F(AgentDaemonTest, AnUplinkThatKeepsGoingAwayIsFlapping) {
  const auto capture = dir_.path() / "fabric.out";
  testing::write_text(capture, three_leaf_capture(true));
  config_.sources = {source("ib-local", 600s), source("ibnetdiscover", 0s, capture.string())};
  auto pod = make_pod("gpu-node-1", "agent-a");
  pod->daemon->start();
  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().last_summary.starts_with("created="); }));
  auto condition_of = [&](const std::string& name) {
    auto object = client_->get({"topology.volcano.sh", "v1alpha1", "hypernodes", false}, "", name);
    if (!object) return json();
    auto c = topology::find_condition(*object, topology::kFabricDegradedCondition);
    return c ? *c : json();
  };
  int step = 0;
  for (bool cabled : {false, true, false, true}) {
    testing::write_text(capture, three_leaf_capture(cabled));
    const int rebuilds = pod->daemon->counters().rebuilds;
    topology::NodeReport other;
    other.node_name = "cpu-node-" + std::to_string(step++);
    write_report(other);
    ASSERT_TRUE(eventually([&] { return pod->daemon->counters().rebuilds > rebuilds; }));
    const std::string want = cabled ? (step == 4 ? "LinkFlapping" : "FabricHealthy") : "MissingUplinks";
    ASSERT_TRUE(eventually([&] { return condition_of("leaf-leaf-2").value("reason", "") == want; }))
        << "step " << step << ": " << condition_of("leaf-leaf-2").dump();
  }
  const json flapping = condition_of("leaf-leaf-2");
  EXPECT_EQ(flapping["status"], "True");
  // How many runs it was seen down in depends on how many rebuilds the events caused; two episodes.
  EXPECT_TRUE(flapping["message"].get<std::string>().starts_with("leaf-2 - spine-1: LinkFlapping, down in "))
      << flapping.dump();
  EXPECT_TRUE(flapping["message"].get<std::string>().ends_with(" runs, expected up")) << flapping.dump();
  EXPECT_EQ(condition_of("leaf-leaf-1")["status"], "False");
  EXPECT_NE(pod->metrics.render().find("hypertopo_fabric_links{state=\"flapping\"} 1"), std::string::npos);
  pod->daemon->stop();
}

// A leaf that leaves the fabric takes its HyperNode and its hypertopo_domain_degraded series with
// it; the other leaves' series stay as they are.
TEST_F(AgentDaemonTest, ADomainThatLeavesTheTreeLeavesTheMetrics) {
  const auto capture = dir_.path() / "fabric.out";
  testing::write_text(capture, three_leaf_capture(false));
  config_.sources = {source("ib-local", 600s), source("ibnetdiscover", 0s, capture.string())};
  auto pod = make_pod("gpu-node-1", "agent-a");
  pod->daemon->start();
  const std::string leaf2_degraded = "hypertopo_domain_degraded{hypernode=\"leaf-leaf-2\"} 1\n";
  const std::string leaf3_series = "hypertopo_domain_degraded{hypernode=\"leaf-leaf-3\"}";
  ASSERT_TRUE(eventually([&] {
    const std::string m = pod->metrics.render();
    return m.find(leaf2_degraded) != std::string::npos && m.find(leaf3_series + " 0") != std::string::npos;
  })) << pod->metrics.render();

  testing::write_text(capture, three_leaf_capture(false, 2));
  topology::NodeReport other;
  other.node_name = "cpu-node-9";
  write_report(other);
  ASSERT_TRUE(eventually([&] {
    return !client_->get({"topology.volcano.sh", "v1alpha1", "hypernodes", false}, "", "leaf-leaf-3") &&
           pod->metrics.render().find(leaf3_series) == std::string::npos;
  })) << pod->metrics.render();
  const std::string m = pod->metrics.render();
  EXPECT_NE(m.find(leaf2_degraded), std::string::npos) << m;
  EXPECT_NE(m.find("hypertopo_domain_degraded{hypernode=\"leaf-leaf-1\"} 0"), std::string::npos) << m;
  pod->daemon->stop();
}

// A fabric source (a walk, UFM, a capture) runs at most once per interval: a burst of debounced
// rebuilds reuses its result, and a failing run is not retried before the interval has passed.
TEST_F(AgentDaemonTest, AFabricSourceRunsOncePerIntervalWhateverTheRebuilds) {
  HT_REQUIRE_FIXTURE(capture, "ibnetdiscover/topograph-example.out");
  const auto copy = dir_.path() / "fabric.out";
  std::filesystem::copy_file(capture, copy);
  config_.sources = {source("ib-local", 600s), source("ibnetdiscover", 600s, copy.string())};
  auto pod = make_pod("gpu-node-1", "agent-a");
  pod->daemon->start();
  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().last_summary.starts_with("created="); }));
  const int first_runs = pod->daemon->counters().source_runs;
  constexpr int kRebuilds = 5;
  for (int i = 0; i < kRebuilds; ++i) {
    const int rebuilds = pod->daemon->counters().rebuilds;
    topology::NodeReport other;
    other.node_name = "cpu-node-" + std::to_string(i);
    write_report(other);
    ASSERT_TRUE(eventually([&] { return pod->daemon->counters().rebuilds > rebuilds; }));
  }
  const int runs = pod->daemon->counters().source_runs - first_runs;
  std::printf("[agent-numbers] %d debounced rebuilds inside one 10m interval -> %d fabric source run(s)\n",
              kRebuilds, runs);
  EXPECT_EQ(first_runs, 1);
  EXPECT_EQ(runs, 0);
  pod->daemon->stop();
}

TEST_F(AgentDaemonTest, HotReloadRerunsOnlyTheSourcesThatChanged) {
  auto pod = make_pod("gpu-node-1", "agent-a");
  pod->daemon->start();
  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().last_summary.starts_with("created=7"); }));
  ASSERT_EQ(pod->daemon->counters().source_runs, 1);
  const int probes = probe_calls_.load();

  // New tier names: a rebuild that relabels, without walking the fabric again or probing.
  AgentConfig renamed = config_;
  renamed.builder.level_names = {"rack", "row", "hall"};
  const int rebuilds = pod->daemon->counters().rebuilds;
  pod->daemon->reload(renamed);
  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().rebuilds > rebuilds; }));
  EXPECT_EQ(pod->daemon->counters().source_runs, 1);
  EXPECT_EQ(probe_calls_.load(), probes);

  // A changed interval for the fabric source: it runs again; the node probe is left alone.
  AgentConfig faster = renamed;
  faster.sources[1].interval = 1800s;
  pod->daemon->reload(faster);
  ASSERT_TRUE(eventually([&] { return pod->daemon->counters().source_runs == 2; }));
  EXPECT_EQ(probe_calls_.load(), probes);

  // A changed node source: probed again, the fabric source is not rerun.
  AgentConfig reprobe = faster;
  reprobe.sources[0].interval = 300s;
  pod->daemon->reload(reprobe);
  ASSERT_TRUE(eventually([&] { return probe_calls_.load() > probes; }));
  EXPECT_EQ(pod->daemon->counters().source_runs, 2);
  pod->daemon->stop();
}

}  // namespace
}  // namespace hypertopo::agent
