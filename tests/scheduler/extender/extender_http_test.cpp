// The extender end to end over HTTP: kube-scheduler's calls are POSTed to the HttpServer (port 0)
// and the cluster view comes through list + watch from the loopback API server (no real API server
// here; tests/support/apiserver holds the Nodes, HyperNodes and PodGroups).
//
// The calls stand in for kube-scheduler's HTTPExtender (kubernetes/kubernetes
// pkg/scheduler/extender.go: HTTPExtender.Filter POSTs ExtenderArgs {pod, nodenames} to
// <urlPrefix>/<filterVerb> when nodeCacheCapable and keeps the returned nodenames;
// HTTPExtender.Prioritize POSTs the same args and reads a HostPriorityList). kube-scheduler
// schedules one pod at a time, in its queue's order, which is not the pods' index order: the
// tests send pods shuffled.
#include "scheduler/extender/extender_http.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <thread>

#include "k8s/client/kube_client.h"
#include "net/http_transport.h"
#include "scheduler/extender/cluster_watcher.h"
#include "tests/scheduler/extender/extender_cluster.h"
#include "tests/scheduler/extender/loopback_extender.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/fixtures.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

const k8s::Resource kHyperNodes{"topology.volcano.sh", "v1alpha1", "hypernodes", false};
const k8s::Resource kPodGroups{"scheduling.x-k8s.io", "v1alpha1", "podgroups", true};

struct Reply {
  int status = 0;
  std::string body;
  json doc() const { return json::parse(body, nullptr, false); }
};

using Extender = testing::LoopbackExtender;

class ExtenderHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.start().has_value());
    k8s::ClusterConfig config;
    config.server = api_.url();
    k8s::ClientOptions options;
    options.qps = 0;
    auto c = k8s::KubeClient::create(config, options);
    ASSERT_TRUE(c.has_value());
    client_ = std::move(*c);
    ASSERT_TRUE(testing::write_cluster(*client_, cluster_));
    start_extender();
  }

  void start_extender(const std::string& state = "state.json") {
    ext_.reset();
    ext_ = std::make_unique<Extender>(*client_, dir_.path() / state);
    ASSERT_TRUE(ext_->service.load_state().has_value());
    ext_->watcher.start();
    ASSERT_TRUE(ext_->watcher.wait_synced(std::chrono::seconds(20)));
    ASSERT_TRUE(ext_->server.start().has_value());
    auto t = net::HttpTransport::create({.host = "127.0.0.1", .port = std::to_string(ext_->server.port())});
    ASSERT_TRUE(t.has_value());
    http_ = std::move(*t);
  }

  Reply call(const std::string& method, const std::string& path, const std::string& body = "") {
    auto r = http_->round_trip({method, path, {{"Content-Type", "application/json"}}, body},
                               std::chrono::seconds(30), true);
    if (!r) return {0, r.error().error.message()};
    return {r->status, r->body};
  }
  Reply filter(const json& args) { return call("POST", "/scheduler/filter", args.dump()); }

  std::string admitted(const json& pod) {
    Reply r = filter({{"pod", pod}, {"nodenames", cluster_.node_names}});
    EXPECT_EQ(r.status, 200) << r.body;
    const json doc = r.doc();
    if (!doc.contains("nodenames") || doc["nodenames"].size() != 1) return {};
    return doc["nodenames"][0].get<std::string>();
  }

  testing::TempDir dir_;
  testing::LoopbackApiServer api_;
  std::unique_ptr<k8s::KubeClient> client_;
  testing::ExtenderCluster cluster_ = testing::make_cluster();
  std::unique_ptr<Extender> ext_;
  std::unique_ptr<net::HttpTransport> http_;
};

std::map<std::string, std::string> hard_gang(const std::string& name, int size) {
  return {{"scheduling.k8s.io/group-name", name},
          {"hypertopo.io/gang-size", std::to_string(size)},
          {"hypertopo.io/network-topology-mode", "hard"},
          {"hypertopo.io/highest-tier-allowed", "1"}};
}

TEST_F(ExtenderHttpTest, HardGangOf64LandsInOneLeafAndRanksAreServed) {
  // Identified by the coscheduling label; size and constraint from annotations.
  auto annotations = hard_gang("unused", 64);
  annotations.erase("scheduling.k8s.io/group-name");
  std::set<std::string> leaves;
  for (int i = 0; i < 64; ++i) {
    const std::string node =
        admitted(testing::pod_object("g-" + std::to_string(i), "g-" + std::to_string(i), "1", annotations,
                                     {{"scheduling.x-k8s.io/pod-group", "big"}}));
    ASSERT_FALSE(node.empty()) << "pod " << i;
    leaves.insert(cluster_.leaf_of[node]);
  }
  EXPECT_EQ(leaves.size(), 1u);
  Reply plans = call("GET", "/plans");
  ASSERT_EQ(plans.status, 200);
  bool found = false;
  const json doc = plans.doc();
  for (const auto& g : doc["gangs"]) {
    if (g["key"] != "ml/big") continue;
    found = true;
    EXPECT_EQ(g["slots"].size(), 64u);
    EXPECT_EQ(g["slots"][63]["annotations"]["hypertopo.io/rank"], "63");
  }
  EXPECT_TRUE(found);
}

// Pods of an Indexed Job (batch.kubernetes.io/job-completion-index), offered every node.
json indexed_pod(const std::string& job, int index, const std::map<std::string, std::string>& annotations,
                 const std::map<std::string, std::string>& labels = {}) {
  auto a = annotations;
  a["batch.kubernetes.io/job-completion-index"] = std::to_string(index);
  return testing::pod_object(job + "-" + std::to_string(index), job + "-uid-" + std::to_string(index), "8", a,
                             labels);
}

TEST_F(ExtenderHttpTest, PartitionedGangLandsPartitionByPartitionByPodIndexInShuffledOrder) {
  // 16 pods of 8 GPUs, partitions of 8 (one leaf each), the whole job inside one spine.
  const std::map<std::string, std::string> gang{
      {"scheduling.k8s.io/group-name", "trainer"},    {"hypertopo.io/gang-size", "16"},
      {"hypertopo.io/network-topology-mode", "hard"}, {"hypertopo.io/highest-tier-allowed", "2"},
      {"hypertopo.io/partition-size", "8"},           {"hypertopo.io/partition-highest-tier-allowed", "1"}};
  std::vector<int> order(16);
  for (int i = 0; i < 16; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(20260101));
  ASSERT_NE(order[0], 0);
  std::map<int, std::string> node_of;
  for (int i : order) {
    node_of[i] = admitted(indexed_pod("trainer", i, gang));
    ASSERT_FALSE(node_of[i].empty()) << "pod index " << i;
  }
  std::set<std::string> nodes, spines;
  for (int partition = 0; partition < 2; ++partition) {
    std::set<std::string> leaves;
    for (int i = partition * 8; i < partition * 8 + 8; ++i) {
      leaves.insert(cluster_.leaf_of[node_of[i]]);
      nodes.insert(node_of[i]);
    }
    EXPECT_EQ(leaves.size(), 1u) << "partition " << partition << " spans leaves";
    spines.insert(std::string(1, cluster_.leaf_of[node_of[partition * 8]][5]));  // leaf-<s><l>
  }
  EXPECT_EQ(nodes.size(), 16u);
  EXPECT_EQ(spines.size(), 1u);
  EXPECT_NE(cluster_.leaf_of[node_of[0]], cluster_.leaf_of[node_of[8]]);
  // The rank hint each pod gets is its own index.
  const json doc = call("GET", "/plans").doc();
  ASSERT_EQ(doc["gangs"].size(), 1u);
  const json& g = doc["gangs"][0];
  EXPECT_EQ(g["slotsTakenInArrivalOrder"], 0);
  for (const auto& slot : g["slots"]) {
    const int rank = slot["rank"];
    EXPECT_EQ(slot["podUID"], "trainer-uid-" + std::to_string(rank));
    EXPECT_EQ(slot["node"], node_of[rank]);
    EXPECT_EQ(slot["annotations"]["hypertopo.io/rank"], std::to_string(rank));
    EXPECT_EQ(slot["takenBy"], "podIndex");
  }
}

TEST_F(ExtenderHttpTest, PodsWithoutIndexTakeSlotsInArrivalOrderAndThePlanSaysSo) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(admitted(testing::pod_object("a-" + std::to_string(i), "a-" + std::to_string(i), "8",
                                              hard_gang("arrivals", 3)))
                     .empty());
  }
  const json g = call("GET", "/plans").doc()["gangs"][0];
  EXPECT_EQ(g["slotsTakenInArrivalOrder"], 3);
  EXPECT_EQ(g["slots"][0]["takenBy"], "arrivalOrder");
  // A rank beyond the gang's size joins it (an elastic gang: minMember below the replicas), inside
  // the gang's leaf, and the plan says it grew.
  const std::string leaf = cluster_.leaf_of.at(g["slots"][0]["node"].get<std::string>());
  const std::string joined = admitted(indexed_pod("arrivals", 7, hard_gang("arrivals", 3)));
  ASSERT_FALSE(joined.empty());
  EXPECT_EQ(cluster_.leaf_of.at(joined), leaf);
  const json grown = call("GET", "/plans").doc()["gangs"][0];
  EXPECT_EQ(grown["grown"], 1);
  EXPECT_EQ(grown["slots"].size(), 4u);
  EXPECT_EQ(grown["slots"][3]["rank"], 7);
}

TEST_F(ExtenderHttpTest, VolcanoPodAnnotationsAndCoschedulingPodGroupGiveTheSamePlanAsOurKeys) {
  auto nodes_of_plan = [&]() {
    std::vector<std::string> out;
    const json doc = call("GET", "/plans").doc();
    for (const auto& s : doc["gangs"][0]["slots"]) out.push_back(s["node"]);
    return out;
  };
  // Ours: gang name, size and constraint all from hypertopo.io keys.
  for (int i = 7; i >= 0; --i) ASSERT_FALSE(admitted(indexed_pod("ours", i, hard_gang("ours", 8))).empty());
  const auto ours = nodes_of_plan();
  ASSERT_EQ(ours.size(), 8u);

  // A coscheduling PodGroup sizes the gang; Volcano's pod annotations constrain it. A fresh
  // extender (empty state), so both plans start from the same empty cluster.
  ASSERT_TRUE(client_
                  ->create(kPodGroups, "ml",
                           {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                            {"kind", "PodGroup"},
                            {"metadata", {{"name", "theirs"}, {"namespace", "ml"}}},
                            {"spec", {{"minMember", 8}}}})
                  .has_value());
  start_extender("fresh-state.json");
  const std::map<std::string, std::string> volcano{{"volcano.sh/network-topology-mode", "hard"},
                                                   {"volcano.sh/network-topology-highest-tier", "1"}};
  auto theirs = [&](int i) {
    return indexed_pod("theirs", i, volcano, {{"scheduling.x-k8s.io/pod-group", "theirs"}});
  };
  // The coscheduling plugin's PreFilter rejects each pod of the group until minMember of them exist
  // (scheduler-plugins pkg/coscheduling/core/core.go); the extender waits alike for the eighth.
  for (int i = 7; i >= 1; --i) {
    const Reply r = filter({{"pod", theirs(i)}, {"nodenames", cluster_.node_names}});
    EXPECT_NE(r.body.find("of its 8 pods are seen so far"), std::string::npos) << i << ": " << r.body;
  }
  for (int i = 0; i <= 7; ++i) ASSERT_FALSE(admitted(theirs(i)).empty()) << i;
  EXPECT_EQ(nodes_of_plan(), ours);
  const json g = call("GET", "/plans").doc()["gangs"][0];
  EXPECT_EQ(g["key"], "ml/theirs");
  EXPECT_EQ(g["slots"].size(), 8u);  // minMember
  std::set<std::string> leaves;
  for (const auto& n : ours) leaves.insert(cluster_.leaf_of[n]);
  EXPECT_EQ(leaves.size(), 1u);

  // A pod-group label naming no PodGroup is not planned (kube-scheduler retries it).
  Reply missing =
      filter({{"pod", indexed_pod("nogroup", 0, volcano, {{"scheduling.x-k8s.io/pod-group", "absent"}})},
              {"nodenames", cluster_.node_names}});
  ASSERT_EQ(missing.status, 200);
  EXPECT_TRUE(missing.doc()["nodenames"].empty());
  EXPECT_NE(missing.body.find("PodGroup ml/absent"), std::string::npos) << missing.body;
}

TEST_F(ExtenderHttpTest, NormalPodsPackAndBothNodeCacheModesAnswer) {
  // A planned gang's reserved slots count as used: its leaf is fuller than an untouched one.
  ASSERT_FALSE(admitted(testing::pod_object("r-0", "r-0", "8", hard_gang("res", 2))).empty());
  const json gangs = call("GET", "/plans").doc()["gangs"];
  const std::string reserved = gangs[0]["slots"][1]["node"];
  std::string empty;
  for (const auto& n : cluster_.node_names) {
    if (cluster_.leaf_of[n] != cluster_.leaf_of[reserved]) empty = n;
  }
  const json pod = testing::pod_object("web", "web", "0");
  Reply scores =
      call("POST", "/scheduler/prioritize", json{{"pod", pod}, {"nodenames", {empty, reserved}}}.dump());
  ASSERT_EQ(scores.status, 200) << scores.body;
  const json list = scores.doc();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_GT(list[1]["score"].get<int>(), list[0]["score"].get<int>()) << scores.body;

  Reply by_name = filter({{"pod", pod}, {"nodenames", {empty, reserved}}});
  ASSERT_EQ(by_name.status, 200);
  EXPECT_EQ(by_name.doc()["nodenames"].size(), 2u);  // a CPU-only pod fits both
  Reply full =
      filter({{"pod", pod}, {"nodes", {{"items", json::array({cluster_.nodes[0], cluster_.nodes[9]})}}}});
  ASSERT_EQ(full.status, 200);
  EXPECT_EQ(full.doc()["nodes"]["items"].size(), 2u);
  EXPECT_FALSE(full.doc().contains("nodenames"));
}

TEST_F(ExtenderHttpTest, RestartKeepsThePlan) {
  const std::string node0 = admitted(testing::pod_object("k-0", "k-0", "1", hard_gang("keep", 16)));
  ASSERT_FALSE(node0.empty());
  const json before = call("GET", "/plans").doc()["gangs"][0]["slots"];
  start_extender();  // a new process: a fresh service reading the state file
  EXPECT_EQ(admitted(testing::pod_object("k-0", "k-0", "1", hard_gang("keep", 16))), node0);
  const json after = call("GET", "/plans").doc()["gangs"][0]["slots"];
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i]["node"], before[i]["node"]);
}

// A leaf whose HyperNode carries FabricDegraded=True (as hypertopo's agent writes it through
// /status) is the last choice for a new gang, although Volcano's binpack prefers it, and the plan
// served on /plans says which HyperNode it avoided and why.
TEST_F(ExtenderHttpTest, AGangAvoidsADegradedLeafAndThePlanSaysWhy) {
  const std::string first = admitted(testing::pod_object("a-0", "a-0", "1", hard_gang("first", 8)));
  ASSERT_EQ(cluster_.leaf_of[first], "leaf-00");
  // The first gang's reservation makes leaf-00 the fullest leaf: binpack puts the next gang there.
  const std::string control = admitted(testing::pod_object("b-0", "b-0", "1", hard_gang("control", 8)));
  ASSERT_EQ(cluster_.leaf_of[control], "leaf-00");

  auto leaf = client_->get(kHyperNodes, "", "leaf-00");
  ASSERT_TRUE(leaf.has_value());
  json with_status = *leaf;
  with_status["status"] = {{"nodeCount", 8},
                           {"conditions",
                            {{{"type", "FabricDegraded"},
                              {"status", "True"},
                              {"reason", "DegradedLinkWidth"},
                              {"message", "leaf-00[33] - spine-0[1]: DegradedLinkWidth, 1x, expected 4x"},
                              {"lastTransitionTime", "2026-11-24T05:40:12Z"}}}}};
  ASSERT_TRUE(client_->update_status(kHyperNodes, "", with_status).has_value());
  start_extender();  // lists the HyperNodes again, the condition with them; the plans stay

  const std::string third = admitted(testing::pod_object("c-0", "c-0", "1", hard_gang("third", 8)));
  ASSERT_FALSE(third.empty());
  EXPECT_NE(cluster_.leaf_of[third], "leaf-00");
  bool found = false;
  const json plans = call("GET", "/plans").doc();
  for (const auto& g : plans["gangs"]) {
    if (g["key"] != "ml/third") continue;
    found = true;
    EXPECT_EQ(g["jobDomain"], cluster_.leaf_of[third]);
    ASSERT_EQ(g["fabricHealth"].size(), 1u) << g.dump();
    EXPECT_EQ(
        g["fabricHealth"][0],
        "avoided degraded HyperNode leaf-00 (FabricDegraded DegradedLinkWidth: leaf-00[33] - spine-0[1]: "
        "DegradedLinkWidth, 1x, expected 4x), which also holds it");
  }
  EXPECT_TRUE(found);
}

TEST_F(ExtenderHttpTest, MalformedJsonIs400WithAMessageAndHealthAndMetricsAnswer) {
  Reply bad = call("POST", "/scheduler/filter", "{not json");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("not valid JSON"), std::string::npos) << bad.body;
  Reply no_nodes = call("POST", "/scheduler/prioritize", R"({"pod": {"metadata": {"name": "x"}}})");
  EXPECT_EQ(no_nodes.status, 400);
  EXPECT_NE(no_nodes.body.find("nodenames"), std::string::npos) << no_nodes.body;
  EXPECT_EQ(call("GET", "/healthz").status, 200);
  Reply metrics = call("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("hypertopo_extender_nodes 64"), std::string::npos) << metrics.body;
}

}  // namespace
}  // namespace hypertopo::scheduler
