// Topology-aware preemption through the path kube-scheduler takes: a full cluster in the loopback API
// server, the kube-scheduler stand-in running DefaultPreemption (kube_scheduler_standin.h) with the
// shipped config's preemptVerb, the extender fed by its own list + watch. A high-priority gang makes
// room in one domain and evicts nothing else; budgets, preemptionPolicy Never and equal priorities
// are respected; whole lower-priority gangs are taken before several are broken.
#include <gtest/gtest.h>

#include <set>

#include "tests/scheduler/extender/live_cluster_fixture.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
using testing::kLivePods;

const k8s::Resource kBudgets{"policy", "v1", "poddisruptionbudgets", true};

class PreemptionTest : public testing::LiveClusterTest {
 protected:
  // A running pod of lower priority, bound straight to `node` (it takes all eight GPUs).
  void run_pod(const std::string& node, const std::string& name, int priority,
               const std::map<std::string, std::string>& annotations = {},
               const std::map<std::string, std::string>& labels = {}) {
    json pod = testing::pod_object(name, "", "8", annotations, labels);
    pod["metadata"].erase("uid");
    pod.erase("status");
    pod["spec"]["nodeName"] = node;
    pod["spec"]["priority"] = priority;
    seen([&] { ASSERT_TRUE(client_->create(kLivePods, "ml", pod).has_value()); });
  }

  // Every node full, one pod each, named after the node.
  void fill(int priority,
            const std::function<std::map<std::string, std::string>(const std::string&)>& labels = nullptr) {
    for (const auto& n : cluster_.node_names)
      run_pod(n, "busy-" + n, priority, {}, labels ? labels(n) : std::map<std::string, std::string>{});
  }

  json gang_pod(const std::string& job, int index, int priority, const std::string& policy = "") {
    json pod = job_pod(job, index, "8", hard_gang(job, 8), {{"priority", priority}});
    if (!policy.empty()) pod["spec"]["preemptionPolicy"] = policy;
    return pod;
  }

  // Runs cycles until `pods` gang pods are bound or `limit` cycles passed; between cycles the
  // kubelet finishes the evictions and the extender's watch sees them go.
  int run_until_bound(int pods, int limit = 4) {
    int bound = 0;
    for (int c = 0; c < limit && bound < pods; ++c) {
      bound += schedule();
      scheduler_->finish_terminations();
      EXPECT_TRUE(testing::eventually([&] {
        const json plans_now = ext_->service.plans();
        for (const auto& g : plans_now["gangs"]) {
          for (const auto& v : g.value("victims", json::array())) {
            if (v["state"] != "gone") return false;
          }
        }
        return true;
      }));
    }
    return bound;
  }

  std::vector<std::string> all_victims() const {
    std::vector<std::string> out;
    for (const auto& p : scheduler_->preemptions()) out.insert(out.end(), p.victims.begin(), p.victims.end());
    return out;
  }

  std::set<std::string> leaves_of_victims() const {
    std::set<std::string> out;
    for (const auto& v : all_victims())
      out.insert(cluster_.leaf_of.at(v.substr(std::string("busy-").size())));
    return out;
  }

  // A PodDisruptionBudget over the pods labelled app=`app`, with `allowed` disruptions left (its
  // status as the disruption controller writes it).
  void protect(const std::string& app, int allowed) {
    const json pdb{{"apiVersion", "policy/v1"},
                   {"kind", "PodDisruptionBudget"},
                   {"metadata", {{"name", app}, {"namespace", "ml"}}},
                   {"spec", {{"selector", {{"matchLabels", {{"app", app}}}}}}}};
    seen([&] {
      auto made = client_->create(kBudgets, "ml", pdb);
      ASSERT_TRUE(made.has_value());
      json with_status = *made;
      with_status["status"] = {{"disruptionsAllowed", allowed}};
      ASSERT_TRUE(client_->update_status(kBudgets, "ml", with_status).has_value());
    });
  }

  json plans_over_http() {
    auto r = http_->round_trip({"GET", "/plans", {}, ""}, std::chrono::seconds(10), true);
    EXPECT_TRUE(r.has_value());
    return r ? json::parse(r->body, nullptr, false) : json();
  }
};

// 1 spine x 2 leaves x 8 nodes.
class TwoLeafPreemptionTest : public PreemptionTest {
 protected:
  void SetUp() override { start_cluster(testing::make_cluster(1, 2, 8)); }
};

TEST_F(PreemptionTest, AHighPriorityGangOnAFullClusterEvictsTheEightPodsOfOneLeafAndBindsThere) {
  // 128 GPU Nodes under 16 leaves, every node full of priority-0 pods (one 8-GPU pod each); a
  // priority-1000 hard tier-1 gang of 8 x 8 GPUs.
  fill(0);
  for (int i = 0; i < 8; ++i) create(gang_pod("big", i, 1000));
  ASSERT_EQ(run_until_bound(8), 8) << scheduler_->failure("big-0");
  ASSERT_TRUE(scheduler_->preempt_errors_.empty()) << scheduler_->preempt_errors_.front();
  // Exactly eight victims, all in one leaf, and the gang is in that leaf.
  const auto victims = all_victims();
  EXPECT_EQ(victims.size(), 8u);
  EXPECT_EQ(std::set<std::string>(victims.begin(), victims.end()).size(), 8u);
  ASSERT_EQ(leaves_of_victims().size(), 1u);
  std::set<std::string> gang_leaves;
  for (int i = 0; i < 8; ++i) gang_leaves.insert(cluster_.leaf_of.at(node_of("big-" + std::to_string(i))));
  EXPECT_EQ(gang_leaves, leaves_of_victims());
  // Each preemption kept only the pod's planned node: where it then bound.
  for (const auto& p : scheduler_->preemptions()) EXPECT_EQ(node_of(p.pod), p.node) << p.pod;
  // GET /plans shows the victims, gone now.
  const json plans = plans_over_http();
  ASSERT_EQ(plans["gangs"].size(), 1u);
  ASSERT_EQ(plans["gangs"][0]["victims"].size(), 8u);
  for (const auto& v : plans["gangs"][0]["victims"]) {
    EXPECT_EQ(v["state"], "gone");
    EXPECT_EQ(v["priority"], 0);
  }
  EXPECT_EQ(ext_->service.counters().book.victim_plans, 1);
  EXPECT_EQ(ext_->service.counters().book.victims_planned, 8);
  std::cout << "[ measured ] preemption, 128 nodes / 16 leaves full: " << victims.size() << " victims in "
            << leaves_of_victims().size() << " leaf, " << scheduler_->preempt_calls() << " preempt calls\n";
}

TEST_F(PreemptionTest, WithoutThePreemptVerbKubeSchedulerEvictsAcrossLeaves) {
  // The same cluster with a profile that does not name the verb: DefaultPreemption picks a node per
  // pod from a random offset (GetOffsetAndNumCandidates), and the extender refuses the gang pods
  // that land outside its plan. This is the behaviour the verb replaces.
  scheduler_->preempt_verb.clear();
  fill(0);
  for (int i = 0; i < 8; ++i) create(gang_pod("big", i, 1000));
  const int bound = run_until_bound(8, 2);
  std::cout << "[ measured ] without preemptVerb after 2 cycles: " << all_victims().size() << " victims in "
            << leaves_of_victims().size() << " leaves, " << bound << " of 8 gang pods bound\n";
  EXPECT_GT(leaves_of_victims().size(), 1u);
  EXPECT_GT(all_victims().size(), 8u);
}

TEST_F(TwoLeafPreemptionTest, BudgetsSteerTheGangToALeafWhoseEvictionsViolateNone) {
  // leaf-00 (first in tree order) runs pods a budget protects with no disruption left.
  fill(0, [&](const std::string& node) {
    return cluster_.leaf_of.at(node) == "leaf-00" ? std::map<std::string, std::string>{{"app", "db"}}
                                                  : std::map<std::string, std::string>{{"app", "batch"}};
  });
  protect("db", 0);
  for (int i = 0; i < 8; ++i) create(gang_pod("big", i, 1000));
  ASSERT_EQ(run_until_bound(8), 8) << scheduler_->failure("big-0");
  EXPECT_EQ(leaves_of_victims(), std::set<std::string>{"leaf-01"});
  const json plans = plans_over_http();
  for (const auto& v : plans["gangs"][0]["victims"]) EXPECT_FALSE(v["violatesBudget"].get<bool>());
}

TEST_F(TwoLeafPreemptionTest, WhenEveryLeafIsProtectedTheBudgetIsViolatedAsALastResortAndCounted) {
  fill(0, [](const std::string&) { return std::map<std::string, std::string>{{"app", "db"}}; });
  protect("db", 2);
  for (int i = 0; i < 8; ++i) create(gang_pod("big", i, 1000));
  ASSERT_EQ(run_until_bound(8), 8) << scheduler_->failure("big-0");
  int violating = 0;
  const json plans = plans_over_http();
  for (const auto& v : plans["gangs"][0]["victims"]) violating += v["violatesBudget"].get<bool>();
  EXPECT_EQ(violating, 6);  // two disruptions allowed, eight pods evicted
}

TEST_F(TwoLeafPreemptionTest, PreemptionPolicyNeverEvictsNothing) {
  fill(0);
  for (int i = 0; i < 8; ++i) create(gang_pod("polite", i, 1000, "Never"));
  EXPECT_EQ(run_until_bound(8, 2), 0);
  EXPECT_TRUE(scheduler_->preemptions().empty());
  // Asked directly, the verb names no victim either.
  json pod = gang_pod("polite", 0, 1000, "Never");
  pod["metadata"]["uid"] = "u-polite";
  auto r = http_->round_trip({"POST",
                              "/scheduler/preempt",
                              {{"Content-Type", "application/json"}},
                              json{{"Pod", pod}, {"NodeNameToMetaVictims", json::object()}}.dump()},
                             std::chrono::seconds(10), true);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["NodeNameToMetaVictims"], json::object());
}

TEST_F(TwoLeafPreemptionTest, PodsOfEqualOrHigherPriorityAreNeverVictims) {
  // leaf-00 runs pods of the gang's own priority, leaf-01 pods of a lower one.
  for (const auto& n : cluster_.node_names)
    run_pod(n, "busy-" + n, cluster_.leaf_of.at(n) == "leaf-00" ? 1000 : 10);
  for (int i = 0; i < 8; ++i) create(gang_pod("big", i, 1000));
  ASSERT_EQ(run_until_bound(8), 8) << scheduler_->failure("big-0");
  EXPECT_EQ(leaves_of_victims(), std::set<std::string>{"leaf-01"});
  // A second gang of the same priority finds nothing it may evict.
  for (int i = 0; i < 8; ++i) create(gang_pod("late", i, 1000));
  const auto preemptions = scheduler_->preemptions().size();
  EXPECT_EQ(run_until_bound(8, 2), 0);
  EXPECT_EQ(scheduler_->preemptions().size(), preemptions);
}

TEST_F(TwoLeafPreemptionTest, AWholeLowerPriorityGangIsTakenBeforeTwoAreBroken) {
  // leaf-00 (first in tree order) runs two gangs of four, leaf-01 one gang of eight.
  for (const auto& n : cluster_.node_names) {
    const bool first = cluster_.leaf_of.at(n) == "leaf-00";
    const int i = n.back() - '0';
    const std::string gang = first ? (i < 4 ? "small-a" : "small-b") : "whole";
    run_pod(n, "busy-" + n, 0, {{"scheduling.k8s.io/group-name", gang}});
  }
  for (int i = 0; i < 8; ++i) create(gang_pod("big", i, 1000));
  ASSERT_EQ(run_until_bound(8), 8) << scheduler_->failure("big-0");
  EXPECT_EQ(leaves_of_victims(), std::set<std::string>{"leaf-01"});
  const json plans = plans_over_http();
  const json g = plans["gangs"][0];
  EXPECT_EQ(g["brokenGangs"], json::array({"ml/whole"}));
}

TEST_F(TwoLeafPreemptionTest, AGangThatFitsNeedsNoPreemption) {
  for (const auto& n : cluster_.node_names) {
    if (cluster_.leaf_of.at(n) == "leaf-00") run_pod(n, "busy-" + n, 0);
  }
  for (int i = 0; i < 8; ++i) create(gang_pod("big", i, 1000));
  ASSERT_EQ(schedule(), 8) << scheduler_->failure("big-0");
  EXPECT_TRUE(scheduler_->preemptions().empty());
  EXPECT_EQ(scheduler_->preempt_calls(), 0);
  const json plans = plans_over_http();
  EXPECT_FALSE(plans["gangs"][0].contains("victims"));
}

TEST_F(TwoLeafPreemptionTest, TheVerbReadsFullVictimsAndKeepsANormalPodOffGangNodes) {
  fill(0);
  // A gang plans with victims in one leaf (its pods preempt there).
  for (int i = 0; i < 8; ++i) create(gang_pod("big", i, 1000));
  schedule();
  ASSERT_EQ(scheduler_->preemptions().size(), 8u);
  const std::string gang_leaf = *leaves_of_victims().begin();
  // A normal high-priority pod, asked with full victims (nodeCacheCapable: false): the gang's
  // planned nodes are not offered back, whatever kube-scheduler proposed.
  json victims = json::object();
  auto list = client_->list(kLivePods, "ml");
  ASSERT_TRUE(list.has_value());
  for (const auto& p : list->items) {
    const std::string node = p["spec"].value("nodeName", std::string());
    if (node.empty() || p["metadata"].contains("deletionTimestamp")) continue;
    victims[node] = {{"Pods", json::array({p})}, {"NumPDBViolations", 0}};
  }
  json normal = testing::pod_object("solo", "u-solo", "8");
  normal["spec"]["priority"] = 500;
  auto r = http_->round_trip({"POST",
                              "/scheduler/preempt",
                              {{"Content-Type", "application/json"}},
                              json{{"Pod", normal}, {"NodeNameToVictims", victims}}.dump()},
                             std::chrono::seconds(10), true);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  const json kept = json::parse(r->body)["NodeNameToMetaVictims"];
  ASSERT_FALSE(kept.empty());
  for (const auto& [node, v] : kept.items()) {
    EXPECT_NE(cluster_.leaf_of.at(node), gang_leaf) << node;
    ASSERT_EQ(v["Pods"].size(), 1u);
    EXPECT_FALSE(v["Pods"][0]["UID"].get<std::string>().empty());
  }
  // A body that is not ExtenderPreemptionArgs is refused with the reason.
  auto bad = http_->round_trip({"POST",
                                "/scheduler/preempt",
                                {{"Content-Type", "application/json"}},
                                R"({"NodeNameToMetaVictims":[]})"},
                               std::chrono::seconds(10), true);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("Pod"), std::string::npos) << bad->body;
}

TEST_F(TwoLeafPreemptionTest, WhileItsVictimsLeaveAGangPodWaitsForThemAndTakesNoOtherNode) {
  // Every node full but the last of each leaf: the gang of eight plans in leaf-00 (seven victims and
  // its free node, tree order breaking the tie with leaf-01).
  for (const auto& n : cluster_.node_names) {
    if (n != "n-00-7" && n != "n-01-7") run_pod(n, "busy-" + n, 0);
  }
  for (int i = 0; i < 8; ++i) create(gang_pod("big", i, 1000));
  const int first = schedule();  // seven preemptions; the pod planned on n-00-7 binds there
  EXPECT_EQ(first, 1);
  ASSERT_EQ(scheduler_->preemptions().size(), 7u);
  EXPECT_EQ(leaves_of_victims(), std::set<std::string>{"leaf-00"});
  // The victims are terminating. kube-scheduler offers the other free node, n-01-7: the pods keep
  // to their nodes and say why, and nobody preempts again.
  EXPECT_EQ(schedule(), 0);
  bool said = false;
  for (int i = 0; i < 8; ++i) {
    const std::string pod = "big-" + std::to_string(i);
    EXPECT_NE(node_of(pod), "n-01-7") << pod;
    said = said || scheduler_->failure(pod).find("preempted for the gang to leave") != std::string::npos;
  }
  EXPECT_TRUE(said);
  EXPECT_EQ(scheduler_->preemptions().size(), 7u);
  // Once they are gone the gang binds in leaf-00.
  EXPECT_EQ(run_until_bound(7), 7);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(cluster_.leaf_of.at(node_of("big-" + std::to_string(i))), "leaf-00") << i;
}

TEST_F(TwoLeafPreemptionTest, TheRestOfAGangWhosePodsAreBoundEvictsInsideTheirLeafOnly) {
  // Four pods of a hard tier-1 gang of eight run in leaf-00 (bound by another replica, or before a
  // restart without state); lower-priority pods fill the rest of leaf-00, leaf-01 is empty.
  for (int i = 0; i < 4; ++i) {
    json pod = gang_pod("big", i, 1000);
    pod["spec"]["nodeName"] = "n-00-" + std::to_string(i);
    seen([&] { ASSERT_TRUE(client_->create(testing::kLivePods, "ml", pod).has_value()); });
  }
  for (int i = 4; i < 8; ++i) run_pod("n-00-" + std::to_string(i), "busy-n-00-" + std::to_string(i), 0);
  for (int i = 4; i < 8; ++i) create(gang_pod("big", i, 1000));
  // The free leaf does not do: the gang's pods run in leaf-00, so the rest evicts there.
  ASSERT_EQ(run_until_bound(4), 4) << scheduler_->failure("big-4");
  EXPECT_EQ(all_victims().size(), 4u);
  EXPECT_EQ(leaves_of_victims(), std::set<std::string>{"leaf-00"});
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(cluster_.leaf_of.at(node_of("big-" + std::to_string(i))), "leaf-00") << i;
  EXPECT_EQ(ext_->service.counters().book.plans_adopted, 1);
}

TEST_F(TwoLeafPreemptionTest, AVictimRecreatedByItsControllerDoesNotTakeTheRoomItsGangFreed) {
  fill(0);
  for (int i = 0; i < 8; ++i) create(gang_pod("big", i, 1000));
  schedule();
  ASSERT_EQ(scheduler_->preemptions().size(), 8u);
  scheduler_->finish_terminations();
  ASSERT_TRUE(testing::eventually([&] {
    const json plans_now = ext_->service.plans();
    for (const auto& v : plans_now["gangs"][0]["victims"]) {
      if (v["state"] != "gone") return false;
    }
    return true;
  }));
  // The Job controller makes a new pod for each victim; kube-scheduler asks the extender about the
  // freed nodes for it before the gang's pods come round again: they are the gang's.
  std::vector<std::string> freed;
  for (const auto& p : scheduler_->preemptions()) freed.push_back(p.node);
  json again = testing::pod_object("busy-again", "u-busy-again", "8");
  again["spec"]["priority"] = 0;
  auto r = http_->round_trip({"POST",
                              "/scheduler/filter",
                              {{"Content-Type", "application/json"}},
                              json{{"pod", again}, {"nodenames", freed}}.dump()},
                             std::chrono::seconds(10), true);
  ASSERT_TRUE(r.has_value());
  const json answer = json::parse(r->body);
  EXPECT_TRUE(answer["nodenames"].empty()) << r->body;
  EXPECT_EQ(answer["failedNodes"].size(), freed.size()) << r->body;
  // And the gang binds there.
  EXPECT_EQ(run_until_bound(8), 8);
}

}  // namespace
}  // namespace hypertopo::scheduler
