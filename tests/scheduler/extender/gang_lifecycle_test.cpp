// A gang's life in a live cluster, through the path kube-scheduler takes: pods created in the loopback
// API server, scheduled by the kube-scheduler stand-in (kube_scheduler_standin.h: framework filters,
// then the extender's filter and prioritize over HTTP, then the bind), the extender fed by its own
// list + watch. Pods are deleted and recreated as the Job controller does (same completion index, a
// new uid), nodes are cordoned, the extender restarts without its state, gangs grow.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "scheduler/extender/cluster_watcher.h"
#include "scheduler/extender/extender_http.h"
#include "tests/scheduler/extender/extender_cluster.h"
#include "tests/scheduler/extender/kube_scheduler_standin.h"
#include "tests/scheduler/extender/live_cluster_fixture.h"
#include "tests/scheduler/extender/loopback_extender.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/eventually.h"
#include "tests/support/fixtures.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

class GangLifecycleTest : public testing::LiveClusterTest {};

TEST_F(GangLifecycleTest, ARecreatedGangPodBindsOnItsOldNodeInOneCycle) {
  for (int i = 0; i < 8; ++i) create(job_pod("ra", i, "8", hard_gang("ra", 8)));
  ASSERT_EQ(schedule(), 8);
  std::set<std::string> leaves;
  for (int i = 0; i < 8; ++i) leaves.insert(cluster_.leaf_of.at(node_of("ra-" + std::to_string(i))));
  ASSERT_EQ(leaves.size(), 1u);
  const auto rebuilds = ext_->service.counters().view.index_rebuilds;
  const std::string old_node = node_of("ra-3");
  // The Job controller replaces a deleted pod: same completion index, a new uid.
  delete_pod("ra-3");
  ASSERT_TRUE(testing::eventually([&] { return ext_->service.counters().book.slots_released == 1; }));
  create(job_pod("ra", 3, "8", hard_gang("ra", 8)));
  ASSERT_EQ(schedule(), 1) << scheduler_->failure("ra-3");
  EXPECT_EQ(node_of("ra-3"), old_node);
  const json g = gang_plan("ml/ra");
  EXPECT_EQ(g["slots"][3]["state"], "bound");
  EXPECT_EQ(g["slots"][3]["releases"], 1);
  // Bindings, deletions and re-creations changed usage in place: not one index rebuild.
  EXPECT_EQ(ext_->service.counters().view.index_rebuilds, rebuilds);
}

TEST_F(GangLifecycleTest, ARecreatedPodWhoseNodeIsCordonedMovesInsideItsLeaf) {
  // Six 8-GPU pods in a leaf of eight nodes: two nodes of the leaf stay free.
  for (int i = 0; i < 6; ++i) create(job_pod("rb", i, "8", hard_gang("rb", 6)));
  ASSERT_EQ(schedule(), 6);
  const std::string old_node = node_of("rb-2");
  const std::string leaf = cluster_.leaf_of.at(old_node);
  set_unschedulable(old_node, true);
  delete_pod("rb-2");
  ASSERT_TRUE(testing::eventually([&] { return ext_->service.counters().book.slots_released == 1; }));
  create(job_pod("rb", 2, "8", hard_gang("rb", 6)));
  ASSERT_EQ(schedule(), 1) << scheduler_->failure("rb-2");
  const std::string now = node_of("rb-2");
  EXPECT_NE(now, old_node);
  EXPECT_EQ(cluster_.leaf_of.at(now), leaf);
  EXPECT_GE(gang_plan("ml/rb")["swaps"].get<int>(), 1);
}

TEST_F(GangLifecycleTest, AGangWhoseLeafHasNoRoomLeftWaitsThereAndSaysWhy) {
  for (int i = 0; i < 6; ++i) create(job_pod("rc", i, "8", hard_gang("rc", 6)));
  ASSERT_EQ(schedule(), 6);
  const std::string old_node = node_of("rc-4");
  const std::string leaf = cluster_.leaf_of.at(old_node);
  // The leaf's two free nodes are taken by other work; the pod's node is cordoned.
  int filler = 0;
  for (const auto& [node, l] : cluster_.leaf_of) {
    if (l != leaf) continue;
    bool used = false;
    for (int i = 0; i < 6; ++i) used = used || node_of("rc-" + std::to_string(i)) == node;
    if (!used) occupy(node, "filler-" + std::to_string(filler++));
  }
  ASSERT_EQ(filler, 2);
  set_unschedulable(old_node, true);
  delete_pod("rc-4");
  ASSERT_TRUE(testing::eventually([&] { return ext_->service.counters().book.slots_released == 1; }));
  create(job_pod("rc", 4, "8", hard_gang("rc", 6)));
  EXPECT_EQ(schedule(2), 0);
  EXPECT_TRUE(node_of("rc-4").empty());
  // kube-scheduler's FailedScheduling text and /plans both say why, and name the leaf.
  const std::string failure = scheduler_->failure("rc-4");
  EXPECT_NE(failure.find("rank 4 waits for room in " + leaf), std::string::npos) << failure;
  EXPECT_NE(failure.find("unschedulable (cordoned)"), std::string::npos) << failure;
  const json slot = gang_plan("ml/rc")["slots"][4];
  EXPECT_EQ(slot["state"], "reserved");  // the new pod holds its rank's slot, and waits with it
  EXPECT_NE(slot["waiting"].get<std::string>().find(leaf), std::string::npos);
  // Room comes back in the leaf: the pod binds there, never outside.
  delete_pod("filler-0");
  ASSERT_EQ(schedule(), 1) << scheduler_->failure("rc-4");
  EXPECT_EQ(cluster_.leaf_of.at(node_of("rc-4")), leaf);
}

TEST_F(GangLifecycleTest, AnExtenderRestartedWithoutItsStateKeepsTheRestOfTheGangWithTheBoundPods) {
  for (int i = 0; i < 4; ++i) create(job_pod("rd", i, "8", hard_gang("rd", 8)));
  ASSERT_EQ(schedule(), 4);
  const std::string leaf = cluster_.leaf_of.at(node_of("rd-0"));
  // Make another leaf the binpack favourite, so a fresh plan would go there.
  std::string other;
  for (const auto& [node, l] : cluster_.leaf_of) {
    if (l != leaf && other.empty()) other = l;
  }
  int filler = 0;
  for (const auto& [node, l] : cluster_.leaf_of) {
    if (l == other && filler < 3) occupy(node, "busy-" + std::to_string(filler++), "4");
  }
  start_extender("no-such-state.json");  // a new replica, or a restart that lost its file
  for (int i = 4; i < 8; ++i) create(job_pod("rd", i, "8", hard_gang("rd", 8)));
  ASSERT_EQ(schedule(), 4) << scheduler_->failure("rd-4");
  for (int i = 0; i < 8; ++i) EXPECT_EQ(cluster_.leaf_of.at(node_of("rd-" + std::to_string(i))), leaf) << i;
  EXPECT_EQ(ext_->service.counters().book.plans_adopted, 1);
  const json g = gang_plan("ml/rd");
  for (int i = 0; i < 8; ++i) EXPECT_EQ(g["slots"][i]["state"], "bound") << i;
}

TEST_F(GangLifecycleTest, RequiredNodeAffinityExcludingTheBinpackFavouriteBindsTheGangElsewhereInOneLeaf) {
  // leaf-00 is the binpack favourite (partly used) and its nodes are pool=reserved.
  std::string favourite = "leaf-00";
  for (const auto& [node, l] : cluster_.leaf_of) {
    if (l != favourite) continue;
    update_node(node, [&](json& n) { n["metadata"]["labels"]["pool"] = "reserved"; });
  }
  occupy("n-00-0", "busy", "4");
  const json affinity{
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms",
           json::array(
               {{{"matchExpressions",
                  json::array({{{"key", "pool"}, {"operator", "NotIn"}, {"values", {"reserved"}}}})}}})}}}}}};
  // Without the affinity a gang takes the favourite; it then leaves again.
  for (int i = 0; i < 4; ++i) create(job_pod("plain", i, "8", hard_gang("plain", 4)));
  ASSERT_EQ(schedule(), 4);
  EXPECT_EQ(cluster_.leaf_of.at(node_of("plain-0")), favourite);
  for (int i = 0; i < 4; ++i) delete_pod("plain-" + std::to_string(i));
  // With it, the same gang binds elsewhere, whole, in one leaf.
  for (int i = 0; i < 4; ++i) create(job_pod("aff", i, "8", hard_gang("aff", 4), {{"affinity", affinity}}));
  ASSERT_EQ(schedule(), 4) << scheduler_->failure("aff-0");
  std::set<std::string> leaves;
  for (int i = 0; i < 4; ++i) leaves.insert(cluster_.leaf_of.at(node_of("aff-" + std::to_string(i))));
  EXPECT_EQ(leaves.size(), 1u);
  EXPECT_FALSE(leaves.contains(favourite));
}

TEST_F(GangLifecycleTest, TaintsAreAvoidedUnlessTolerated) {
  for (const auto& [node, l] : cluster_.leaf_of) {
    if (l != "leaf-00") continue;
    update_node(node, [&](json& n) {
      n["spec"]["taints"] =
          json::array({{{"key", "gpu-maintenance"}, {"value", "true"}, {"effect", "NoSchedule"}}});
    });
  }
  occupy("n-00-0", "busy", "4");  // the favourite, were it not tainted
  // A gang that tolerates the taint takes the favourite; it then leaves again.
  const json tolerations =
      json::array({{{"key", "gpu-maintenance"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  for (int i = 0; i < 4; ++i)
    create(job_pod("tol", i, "8", hard_gang("tol", 4), {{"tolerations", tolerations}}));
  ASSERT_EQ(schedule(), 4) << scheduler_->failure("tol-0");
  EXPECT_EQ(cluster_.leaf_of.at(node_of("tol-0")), "leaf-00");
  for (int i = 0; i < 4; ++i) delete_pod("tol-" + std::to_string(i));
  // One that does not goes elsewhere, whole.
  for (int i = 0; i < 4; ++i) create(job_pod("t", i, "8", hard_gang("t", 4)));
  ASSERT_EQ(schedule(), 4) << scheduler_->failure("t-0");
  std::set<std::string> leaves;
  for (int i = 0; i < 4; ++i) leaves.insert(cluster_.leaf_of.at(node_of("t-" + std::to_string(i))));
  EXPECT_EQ(leaves.size(), 1u);
  EXPECT_FALSE(leaves.contains("leaf-00"));
}

class ElasticGangTest : public GangLifecycleTest {
 protected:
  // 1 spine x 2 leaves x 8 nodes.
  void SetUp() override { start_cluster(testing::make_cluster(1, 2, 8)); }
};

TEST_F(ElasticGangTest, MinMemberFourOfEightStartsWhereFourFitAndTheRestJoinThatLeafWhenItFrees) {
  // A coscheduling PodGroup with minMember 4 for a job of 8 (Volcano's minAvailable below replicas).
  json pg{{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "el"}, {"namespace", "ml"}}},
          {"spec", {{"minMember", 4}}}};
  ASSERT_TRUE(client_->create(testing::kLivePodGroups, "ml", pg).has_value());
  start_extender("state.json");  // listed at start: the gang's size is known before its first pod
  // leaf-00 has 4 free nodes; leaf-01 is full.
  for (int i = 0; i < 4; ++i) occupy("n-00-" + std::to_string(i), "a-" + std::to_string(i));
  for (int i = 0; i < 8; ++i) occupy("n-01-" + std::to_string(i), "b-" + std::to_string(i));
  const std::map<std::string, std::string> gang{{"hypertopo.io/network-topology-mode", "hard"},
                                                {"hypertopo.io/highest-tier-allowed", "1"}};
  for (int i = 0; i < 8; ++i) {
    json pod = job_pod("el", i, "8", gang);
    pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = "el";
    create(pod);
  }
  EXPECT_EQ(schedule(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(cluster_.leaf_of.at(node_of("el-" + std::to_string(i))), "leaf-00");
  for (int i = 4; i < 8; ++i) EXPECT_TRUE(node_of("el-" + std::to_string(i)).empty());
  // leaf-01 frees first: the joining pods still wait for their gang's leaf, and say so.
  for (int i = 0; i < 8; ++i) delete_pod("b-" + std::to_string(i));
  EXPECT_EQ(schedule(), 0);
  EXPECT_NE(scheduler_->failure("el-4").find("waits for room in leaf-00"), std::string::npos)
      << scheduler_->failure("el-4");
  for (int i = 0; i < 4; ++i) delete_pod("a-" + std::to_string(i));
  EXPECT_EQ(schedule(), 4);
  for (int i = 4; i < 8; ++i)
    EXPECT_EQ(cluster_.leaf_of.at(node_of("el-" + std::to_string(i))), "leaf-00") << i;
  EXPECT_EQ(gang_plan("ml/el")["grown"], 4);
}

TEST_F(ElasticGangTest, AVolcanoJobWithMinAvailableFourOfEightStartsFourAndTheOthersJoinTheirLeaf) {
  // What Volcano's job controller makes of a Job with minAvailable 4, replicas 8 and a hard tier-1
  // networkTopology: a scheduling.volcano.sh PodGroup with minMember 4 and the Job's topology, and
  // pods annotated with the group's name and their task index (no topology on the pods).
  const k8s::Resource volcano_groups{"scheduling.volcano.sh", "v1beta1", "podgroups", true};
  json pg{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "vj-pg"}, {"namespace", "ml"}}},
          {"spec", {{"minMember", 4}, {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 1}}}}}};
  ASSERT_TRUE(client_->create(volcano_groups, "ml", pg).has_value());
  start_extender("state.json");
  for (int i = 0; i < 4; ++i) occupy("n-00-" + std::to_string(i), "a-" + std::to_string(i));
  for (int i = 0; i < 8; ++i) occupy("n-01-" + std::to_string(i), "b-" + std::to_string(i));
  for (int i = 0; i < 8; ++i) {
    json pod = testing::pod_object(
        "vj-worker-" + std::to_string(i), "", "8",
        {{"scheduling.k8s.io/group-name", "vj-pg"}, {"volcano.sh/task-index", std::to_string(i)}});
    pod["metadata"].erase("uid");
    pod.erase("status");
    // Volcano places none of a PodGroup's pods before minMember of them exist (gang.go validJobFn);
    // the extender waits for its watch to show them, which the controller's creates bring at once.
    seen([&] { create(pod); });
  }
  EXPECT_EQ(schedule(), 4);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(cluster_.leaf_of.at(node_of("vj-worker-" + std::to_string(i))), "leaf-00");
  for (int i = 0; i < 8; ++i) delete_pod("b-" + std::to_string(i));
  EXPECT_EQ(schedule(), 0);  // leaf-01 is free, but the gang's pods run in leaf-00
  for (int i = 0; i < 4; ++i) delete_pod("a-" + std::to_string(i));
  EXPECT_EQ(schedule(), 4);
  for (int i = 4; i < 8; ++i)
    EXPECT_EQ(cluster_.leaf_of.at(node_of("vj-worker-" + std::to_string(i))), "leaf-00") << i;
}

// Volcano's hard gradient for a job already running (volcano-sh/volcano
// pkg/scheduler/plugins/network-topology-aware/network_topology_aware.go): hyperNodeGradientFn with
// the job's allocated HyperNode searches from getSearchRoot, the highest ancestor of that HyperNode
// whose tier is within highestTierAllowed (getHighestAllowedHyperNode), and isEligibleHyperNode
// skips the resource pre-filter there; batchNodeOrderFnForNetworkAwarePods then ranks nodes by the
// tier of their LCA with the allocated HyperNode (networkTopologyAwareScore), ties by the job's task
// count in the node's HyperNode (scoreWithTaskNum).
class ElasticHardGradientTest : public GangLifecycleTest {
 protected:
  // 2 spines x 2 leaves x 4 nodes: tiers 1 (leaves) and 2 (spines).
  void SetUp() override { start_cluster(testing::make_cluster(2, 2, 4)); }

  // A Volcano Job of 8 one-node pods, minAvailable `min_member`, networkTopology hard with
  // highestTierAllowed 2, as its controller makes it: the PodGroup `<job>-pg` and pods annotated
  // with it and their task index. leaf-00 is the one leaf with 4 free nodes; leaf-01 (the same
  // spine) keeps 2 free nodes, leaf-10 and leaf-11 (the other spine) 3 each.
  void start_job(const std::string& job, int min_member) {
    const k8s::Resource volcano_groups{"scheduling.volcano.sh", "v1beta1", "podgroups", true};
    json pg{
        {"apiVersion", "scheduling.volcano.sh/v1beta1"},
        {"kind", "PodGroup"},
        {"metadata", {{"name", job + "-pg"}, {"namespace", "ml"}}},
        {"spec",
         {{"minMember", min_member}, {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 2}}}}}};
    ASSERT_TRUE(client_->create(volcano_groups, "ml", pg).has_value());
    start_extender("state.json");
    occupy("n-01-0", "a-0");
    occupy("n-01-1", "a-1");
    occupy("n-10-0", "b-0");
    occupy("n-11-0", "b-1");
    for (int i = 0; i < 8; ++i) {
      json pod = testing::pod_object(
          job + "-worker-" + std::to_string(i), "", "8",
          {{"scheduling.k8s.io/group-name", job + "-pg"}, {"volcano.sh/task-index", std::to_string(i)}});
      pod["metadata"].erase("uid");
      pod.erase("status");
      seen([&] { create(pod); });  // the gang waits until the extender has seen minMember pods
    }
  }
};

TEST_F(ElasticHardGradientTest, PodsBeyondMinMemberJoinTheAllowedSpineWhenTheirLeafIsFull) {
  start_job("hg", 4);
  // Ranks 0-3 take leaf-00. For ranks 4-7 the search root is spine-0 (tier 2 <= 2), so the nodes
  // eligible are spine-0's: leaf-00 is full and leaf-01's free n-01-2 and n-01-3 score
  // networkTopologyAwareScore = (maxTier 2 - LCA tier 2) / (2 - 1) = 0, the only candidates left;
  // spine-1's six free nodes lie outside the gradient. Two pods join leaf-01, two wait in spine-0.
  EXPECT_EQ(schedule(), 6);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(cluster_.leaf_of.at(node_of("hg-worker-" + std::to_string(i))), "leaf-00") << i;
  std::set<std::string> joined;
  for (int i = 4; i < 8; ++i) {
    const std::string node = node_of("hg-worker-" + std::to_string(i));
    if (node.empty()) {
      const std::string why = scheduler_->failure("hg-worker-" + std::to_string(i));
      EXPECT_NE(why.find("waits for room in spine-0"), std::string::npos) << why;
      continue;
    }
    EXPECT_EQ(cluster_.leaf_of.at(node), "leaf-01") << i;
    joined.insert(node);
  }
  EXPECT_EQ(joined, (std::set<std::string>{"n-01-2", "n-01-3"}));
  EXPECT_EQ(gang_plan("ml/hg-pg")["grown"], 2);
}

TEST_F(ElasticHardGradientTest, AGangWhoseMinMemberIsItsSizeWaitsWholeForOneSpineToHoldIt) {
  // The same job with minAvailable 8: no pod is beyond the minimum, so all 8 need one domain of
  // tier <= 2 with room for 8 at once; only spine-1 (leaf-10 + leaf-11: 3 + 3 free) and spine-0
  // (4 + 2 free) are candidates, and neither holds 8: the gang waits whole.
  start_job("hf", 8);
  EXPECT_EQ(schedule(), 0);
  // One pod frees in spine-0: 4 + 3 = 7, still short. A second: 8 fit in spine-0.
  delete_pod("a-0");
  EXPECT_EQ(schedule(), 0);
  delete_pod("a-1");
  EXPECT_EQ(schedule(), 8);
  for (int i = 0; i < 8; ++i) {
    const std::string leaf = cluster_.leaf_of.at(node_of("hf-worker-" + std::to_string(i)));
    EXPECT_TRUE(leaf == "leaf-00" || leaf == "leaf-01") << i << " " << leaf;
  }
}

// PodGroups that carry the gang's topology: KAI-Scheduler's (scheduling.run.ai/v2alpha2,
// spec.topologyConstraint) and the upstream one of KEP-5732 (scheduling.k8s.io/v1alpha2,
// spec.schedulingConstraints.topology). Both name a node label; the nodes carry the rack label
// example.com/rack = their leaf, the HyperNodes do not name their tiers by it.
class GroupTopologyTest : public GangLifecycleTest {
 protected:
  // 1 spine x 2 leaves x 8 nodes, each node labelled with its leaf.
  void SetUp() override {
    auto cluster = testing::make_cluster(1, 2, 8);
    for (auto& n : cluster.nodes) {
      const std::string name = n["metadata"]["name"];
      n["metadata"]["labels"]["example.com/rack"] = cluster.leaf_of.at(name);
    }
    start_cluster(std::move(cluster));
  }

  // leaf-00, the binpack favourite, keeps three nodes free: a gang of four does not fit there.
  void crowd_favourite() {
    for (int i = 0; i < 5; ++i) occupy("n-00-" + std::to_string(i), "busy-" + std::to_string(i), "8");
  }

  json group_pod(const std::string& name, int index, const json& spec_extra,
                 const std::map<std::string, std::string>& annotations) {
    json pod = job_pod(name, index, "8", annotations, spec_extra);
    return pod;
  }

  void create_group(const k8s::Resource& r, const json& group) {
    seen([&] { ASSERT_TRUE(client_->create(r, "ml", group).has_value()); });
  }
};

TEST_F(GroupTopologyTest, AKaiPodGroupsRequiredLevelKeepsItsPodsInOneRack) {
  crowd_favourite();
  create_group({"scheduling.run.ai", "v2alpha2", "podgroups", true},
               {{"apiVersion", "scheduling.run.ai/v2alpha2"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", "pg-kai"}, {"namespace", "ml"}}},
                {"spec",
                 {{"minMember", 4},
                  {"topologyConstraint",
                   {{"requiredTopologyLevel", "example.com/rack"}, {"topology", "cluster-topology"}}}}}});
  // KAI's pod grouper annotates each pod with its PodGroup; the pods say nothing of topology.
  for (int i = 0; i < 4; ++i) create(group_pod("kai", i, json::object(), {{"pod-group-name", "pg-kai"}}));
  ASSERT_EQ(schedule(), 4) << scheduler_->failure("kai-0");
  std::set<std::string> leaves;
  for (int i = 0; i < 4; ++i) leaves.insert(cluster_.leaf_of.at(node_of("kai-" + std::to_string(i))));
  EXPECT_EQ(leaves, std::set<std::string>{"leaf-01"});
  const json g = gang_plan("ml/pg-kai");
  ASSERT_TRUE(g.is_object());
  EXPECT_EQ(g["slots"].size(), 4u);  // sized by the PodGroup's minMember
  EXPECT_EQ(g["jobDomain"], "leaf-01");
}

TEST_F(GroupTopologyTest, AnUpstreamPodGroupsTopologyKeyKeepsItsPodsOnOneLabelValue) {
  crowd_favourite();
  create_group({"scheduling.k8s.io", "v1alpha2", "podgroups", true},
               {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", "pg-up"}, {"namespace", "ml"}}},
                {"spec",
                 {{"schedulingPolicy", {{"gang", {{"minCount", 4}}}}},
                  {"schedulingConstraints", {{"topology", json::array({{{"key", "example.com/rack"}}})}}}}}});
  const json group_ref = {{"schedulingGroup", {{"podGroupName", "pg-up"}}}};
  for (int i = 0; i < 4; ++i) create(group_pod("up", i, group_ref, {}));
  ASSERT_EQ(schedule(), 4) << scheduler_->failure("up-0");
  std::set<std::string> leaves;
  for (int i = 0; i < 4; ++i) leaves.insert(cluster_.leaf_of.at(node_of("up-" + std::to_string(i))));
  EXPECT_EQ(leaves, std::set<std::string>{"leaf-01"});
  EXPECT_EQ(gang_plan("ml/pg-up")["jobDomain"], "leaf-01");
}

TEST_F(GroupTopologyTest, WithoutTheGroupsTopologyTheSameGangMaySpreadAcrossRacks) {
  // The control: the same four pods in a PodGroup without topology take the favourite's three free
  // nodes first; the group's constraint is what keeps them in one rack.
  crowd_favourite();
  create_group({"scheduling.run.ai", "v2alpha2", "podgroups", true},
               {{"apiVersion", "scheduling.run.ai/v2alpha2"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", "pg-free"}, {"namespace", "ml"}}},
                {"spec", {{"minMember", 4}}}});
  for (int i = 0; i < 4; ++i) create(group_pod("free", i, json::object(), {{"pod-group-name", "pg-free"}}));
  ASSERT_EQ(schedule(), 4) << scheduler_->failure("free-0");
  std::set<std::string> leaves;
  for (int i = 0; i < 4; ++i) leaves.insert(cluster_.leaf_of.at(node_of("free-" + std::to_string(i))));
  EXPECT_EQ(leaves.size(), 2u);
}

}  // namespace
}  // namespace hypertopo::scheduler
