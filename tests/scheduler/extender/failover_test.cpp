// Two replicas of kube-scheduler with its extender, as deploy/overlays/extender runs them: both
// extenders watch the cluster and keep a warm view, kube-scheduler's leader election lets one
// kube-scheduler schedule at a time, and it calls only its own extender. When the leader's node is
// lost, the other kube-scheduler takes the lease and its extender, which never saw a filter call for
// the gang, adopts the gang's bound pods (GangBook::adopt_bound) and places the rest around them.
// The lease itself is kube-scheduler's (client-go leaderelection): here the test hands over by
// stopping replica A and letting replica B's stand-in schedule, which is what the new leader does.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "tests/scheduler/extender/live_cluster_fixture.h"

namespace hypertopo::testing {
namespace {

// Replica A is the fixture's extender and stand-in; replica B is started beside it.
class FailoverTest : public LiveClusterTest {
 protected:
  void start_standby() {
    standby_ = std::make_unique<Extender>(*client_, dir_.path() / "standby-state.json");
    ASSERT_TRUE(standby_->service.load_state().has_value());
    standby_->watcher.start();
    ASSERT_TRUE(standby_->watcher.wait_synced(std::chrono::seconds(20)));
    ASSERT_TRUE(standby_->server.start().has_value());
    auto t =
        net::HttpTransport::create({.host = "127.0.0.1", .port = std::to_string(standby_->server.port())});
    ASSERT_TRUE(t.has_value());
    standby_http_ = std::move(*t);
  }

  // Replica A's node is lost: its kube-scheduler, its extender and the extender's plans go with it.
  void lose_leader() {
    scheduler_.reset();
    http_.reset();
    ext_.reset();
  }

  // Replica B's kube-scheduler took the lease: it schedules, calling its own extender.
  void take_over() {
    new_leader_ = std::make_unique<KubeSchedulerStandIn>(*client_, *standby_http_, "/scheduler", "ml");
    new_leader_->after_bind = [this](const std::string& pod, const std::string&) {
      EXPECT_TRUE(eventually([&] { return standby_sees_bound(pod); })) << pod;
    };
  }

  bool standby_sees_bound(const std::string& pod) {
    auto p = client_->get(kLivePods, "ml", pod);
    if (!p) return false;
    const std::string uid = (*p)["metadata"]["uid"];
    const json plans_now = standby_->service.plans();
    for (const auto& g : plans_now["gangs"]) {
      for (const auto& s : g["slots"]) {
        if (s["podUID"] == uid) return s["state"] == "bound";
      }
    }
    return false;
  }

  json standby_get(const std::string& path) {
    auto r = standby_http_->round_trip({"GET", path, {}, ""}, std::chrono::seconds(30), true);
    EXPECT_TRUE(r.has_value());
    if (!r) return json();
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body, nullptr, false);
  }

  std::string standby_text(const std::string& path) {
    auto r = standby_http_->round_trip({"GET", path, {}, ""}, std::chrono::seconds(30), true);
    return r ? r->body : std::string();
  }

  // 16 pods of 8 GPUs, hard inside one spine (tier 2): a leaf holds 8 such pods, a spine 64.
  static std::map<std::string, std::string> spine_gang(const std::string& name, int size) {
    return {{"scheduling.k8s.io/group-name", name},
            {"hypertopo.io/gang-size", std::to_string(size)},
            {"hypertopo.io/network-topology-mode", "hard"},
            {"hypertopo.io/highest-tier-allowed", "2"}};
  }

  static std::string spine_of(const std::string& leaf) { return leaf.substr(0, 6); }  // "leaf-1"

  std::unique_ptr<Extender> standby_;
  std::unique_ptr<net::HttpTransport> standby_http_;
  std::unique_ptr<KubeSchedulerStandIn> new_leader_;
};

TEST_F(FailoverTest, TheNewLeadersExtenderAdoptsTheBoundHalfOfAGangAndPlacesTheRestInItsDomain) {
  start_standby();
  // The leader schedules the gang's first 8 pods (its controller made them first).
  std::map<std::string, std::string> uid_of;
  for (int i = 0; i < 8; ++i)
    uid_of["tr-" + std::to_string(i)] = create(job_pod("tr", i, "8", spine_gang("tr", 16)));
  ASSERT_EQ(schedule(), 8);
  ASSERT_EQ(gang_plan("ml/tr")["slots"].size(), 16u);  // replica A planned the whole gang
  std::map<std::string, std::string> first_nodes;
  for (int i = 0; i < 8; ++i) first_nodes["tr-" + std::to_string(i)] = node_of("tr-" + std::to_string(i));
  // The standby watched the bindings but was never asked: it has no plan of the gang.
  ASSERT_TRUE(eventually([&] { return standby_->service.counters().view.index_pod_updates >= 8; }));
  EXPECT_TRUE(standby_->service.plans()["gangs"].empty());

  lose_leader();
  for (int i = 8; i < 16; ++i)
    uid_of["tr-" + std::to_string(i)] = create(job_pod("tr", i, "8", spine_gang("tr", 16)));
  take_over();
  ASSERT_EQ(new_leader_->cycle(), 8) << new_leader_->failure("tr-8");

  // Every pod in the gang's domain (one spine), no node given twice (a node holds one 8-GPU pod),
  // and the first 8 where the old leader put them.
  std::set<std::string> nodes, spines;
  for (const auto& [pod, uid] : uid_of) {
    const std::string node = node_of(pod);
    ASSERT_FALSE(node.empty()) << pod;
    EXPECT_TRUE(nodes.insert(node).second) << pod << " shares " << node;
    spines.insert(spine_of(cluster_.leaf_of.at(node)));
  }
  EXPECT_EQ(nodes.size(), 16u);
  EXPECT_EQ(spines.size(), 1u);
  for (const auto& [pod, node] : first_nodes) EXPECT_EQ(node_of(pod), node) << pod;

  // The new leader's extender, over HTTP: one plan of 16 slots, all bound, the first 8 adopted as
  // bound where they run.
  const json plans = standby_get("/plans");
  ASSERT_EQ(plans["gangs"].size(), 1u) << plans.dump();
  const json& gang = plans["gangs"][0];
  EXPECT_EQ(gang["key"], "ml/tr");
  ASSERT_EQ(gang["slots"].size(), 16u);
  std::map<std::string, json> slot_of;
  for (const auto& s : gang["slots"]) slot_of[s["podUID"].get<std::string>()] = s;
  int adopted = 0;
  for (const auto& [pod, uid] : uid_of) {
    ASSERT_TRUE(slot_of.contains(uid)) << pod;
    EXPECT_EQ(slot_of[uid]["state"], "bound") << pod;
    EXPECT_EQ(slot_of[uid]["node"], node_of(pod)) << pod;
    if (first_nodes.contains(pod) && slot_of[uid]["node"] == first_nodes[pod]) ++adopted;
  }
  EXPECT_EQ(adopted, 8);  // the old leader's pods, in slots of their own nodes
  EXPECT_NE(standby_text("/metrics").find("hypertopo_extender_plans_adopted_total 1"), std::string::npos);
  EXPECT_EQ(standby_->service.counters().book.plans_made, 1);
}

}  // namespace
}  // namespace hypertopo::testing
