// Gangs whose PodGroup divides them into sub-groups, placed by the extender over HTTP: KAI's nested
// PodGroups (scheduling.run.ai/v2alpha2 spec.subGroups, pods labelled kai.scheduler/subgroup-name)
// and Volcano's subGroupPolicy (scheduling.volcano.sh/v1beta1; KubeRay's worker groups, one
// sub-group per replica), on the loopback API server with the kube-scheduler stand-in calling the
// extender as kube-scheduler does.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/scheduler/extender/live_cluster_fixture.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

const k8s::Resource kKaiPodGroups{"scheduling.run.ai", "v2alpha2", "podgroups", true};
const k8s::Resource kVolcanoPodGroups{"scheduling.volcano.sh", "v1beta1", "podgroups", true};

class SubGroupTest : public testing::LiveClusterTest {
 protected:
  // 2 spines x 2 leaves x 6 nodes of 8 GPUs, each node labelled with its rack (leaf) and block
  // (spine) as KAI's topology levels name them. Two nodes of every leaf are taken, so each leaf has
  // room for one sub-group of four whole-node pods and no more.
  void SetUp() override {
    auto cluster = testing::make_cluster(2, 2, 6);
    for (auto& n : cluster.nodes) {
      const std::string name = n["metadata"]["name"];
      const std::string leaf = cluster.leaf_of.at(name);
      n["metadata"]["labels"]["example.com/rack"] = leaf;
      n["metadata"]["labels"]["example.com/block"] = "spine-" + leaf.substr(5, 1);
    }
    start_cluster(std::move(cluster));
    for (const char* leaf : {"00", "01", "10", "11"}) {
      for (int i = 4; i < 6; ++i) {
        const std::string node = std::string("n-") + leaf + "-" + std::to_string(i);
        occupy(node, "busy-" + std::string(leaf) + "-" + std::to_string(i));
      }
    }
  }

  void create_group(const k8s::Resource& r, const json& group) {
    seen([&] { ASSERT_TRUE(client_->create(r, "ml", group).has_value()); });
  }

  // A whole-node pod (8 GPUs) with labels and annotations, as its controller makes it.
  json member_pod(const std::string& name, const std::map<std::string, std::string>& labels,
                  const std::map<std::string, std::string>& annotations) {
    json pod = testing::pod_object(name, "", "8", annotations);
    pod["metadata"].erase("uid");
    pod.erase("status");
    for (const auto& [k, v] : labels) pod["metadata"]["labels"][k] = v;
    return pod;
  }

  std::set<std::string> leaves_of(const std::vector<std::string>& pods) {
    std::set<std::string> out;
    for (const auto& p : pods) {
      const std::string node = node_of(p);
      out.insert(node.empty() ? std::string("(unbound)") : cluster_.leaf_of.at(node));
    }
    return out;
  }

  static std::string spine_of(const std::string& leaf) { return "spine-" + leaf.substr(5, 1); }

  static std::string join(const std::set<std::string>& values) {
    std::string out;
    for (const auto& v : values) out += (out.empty() ? "" : ", ") + v;
    return out;
  }

  // KAI: PodGroup serve (minMember 8, inside one block) with sub-groups decode and prefill of
  // four pods each, each inside one rack. The pods come interleaved (decode-0, prefill-0, ...), as
  // a controller that makes both kinds at once may create them.
  void create_kai_serve() {
    create_group(
        kKaiPodGroups,
        {{"apiVersion", "scheduling.run.ai/v2alpha2"},
         {"kind", "PodGroup"},
         {"metadata", {{"name", "serve"}, {"namespace", "ml"}}},
         {"spec",
          {{"minMember", 8},
           {"topologyConstraint", {{"topology", "cluster"}, {"requiredTopologyLevel", "example.com/block"}}},
           {"subGroups",
            {{{"name", "decode"},
              {"minMember", 4},
              {"topologyConstraint",
               {{"topology", "cluster"}, {"requiredTopologyLevel", "example.com/rack"}}}},
             {{"name", "prefill"},
              {"minMember", 4},
              {"topologyConstraint",
               {{"topology", "cluster"}, {"requiredTopologyLevel", "example.com/rack"}}}}}}}}});
    for (int i = 0; i < 4; ++i) {
      for (const char* sub : {"decode", "prefill"}) {
        create(member_pod(std::string(sub) + "-" + std::to_string(i), {{"kai.scheduler/subgroup-name", sub}},
                          {{"pod-group-name", "serve"}}));
      }
    }
  }

  static std::vector<std::string> names(const std::string& prefix) {
    std::vector<std::string> out;
    for (int i = 0; i < 4; ++i) out.push_back(prefix + "-" + std::to_string(i));
    return out;
  }
};

TEST_F(SubGroupTest, AKaiNestedPodGroupPutsEachSubGroupInOneRackInsideOneBlock) {
  create_kai_serve();
  ASSERT_EQ(schedule(), 8) << scheduler_->failure("decode-0") << scheduler_->failure("prefill-0");
  const auto decode = leaves_of(names("decode"));
  const auto prefill = leaves_of(names("prefill"));
  ASSERT_EQ(decode.size(), 1u) << join(decode);
  ASSERT_EQ(prefill.size(), 1u) << join(prefill);
  EXPECT_NE(*decode.begin(), *prefill.begin());  // a rack has room for one sub-group only
  EXPECT_EQ(spine_of(*decode.begin()), spine_of(*prefill.begin()));
  const json g = gang_plan("ml/serve");
  ASSERT_TRUE(g.contains("subGroups")) << g.dump();
  std::set<std::string> domains;
  for (const auto& s : g["subGroups"]) {
    EXPECT_EQ(s["slots"], 4) << s.dump();
    domains.insert(s["domain"].get<std::string>());
  }
  EXPECT_EQ(domains, (std::set<std::string>{*decode.begin(), *prefill.begin()}));
  for (const auto& s : g["slots"]) EXPECT_EQ(s["state"], "bound") << s.dump();
}

TEST_F(SubGroupTest, ARestartedSubGroupPodComesBackToItsRackAndNeverLeavesIt) {
  create_kai_serve();
  ASSERT_EQ(schedule(), 8) << scheduler_->failure("decode-0");
  const std::string rack = *leaves_of(names("decode")).begin();
  const std::string old_node = node_of("decode-2");
  // Its node is cordoned and the pod deleted; its controller makes it again. A node of its rack is
  // freed meanwhile: the slot moves there, not to a free node of another rack.
  set_unschedulable(old_node, true);
  delete_pod("decode-2");
  const std::string free_node = "n-" + rack.substr(5) + "-4";
  delete_pod("busy-" + rack.substr(5) + "-4");
  // The other racks have a free node too: leaving the rack would be easy, and wrong.
  delete_pod(spine_of(rack) == "spine-0" ? "busy-10-4" : "busy-00-4");
  create(member_pod("decode-2", {{"kai.scheduler/subgroup-name", "decode"}}, {{"pod-group-name", "serve"}}));
  ASSERT_EQ(schedule(), 1) << scheduler_->failure("decode-2");
  EXPECT_EQ(node_of("decode-2"), free_node);
  EXPECT_EQ(leaves_of(names("decode")), std::set<std::string>{rack});
}

TEST_F(SubGroupTest, ASubGroupWithNoRoomLeftInItsRackWaitsAndSaysSo) {
  create_kai_serve();
  ASSERT_EQ(schedule(), 8) << scheduler_->failure("decode-0");
  const std::string old_node = node_of("prefill-1");
  set_unschedulable(old_node, true);
  delete_pod("prefill-1");
  create(
      member_pod("prefill-1", {{"kai.scheduler/subgroup-name", "prefill"}}, {{"pod-group-name", "serve"}}));
  EXPECT_EQ(schedule(), 0);
  EXPECT_EQ(node_of("prefill-1"), "");
  const std::string why = scheduler_->failure("prefill-1");
  EXPECT_NE(why.find("waits for room in leaf-"), std::string::npos) << why;
  EXPECT_NE(why.find("is unschedulable (cordoned)"), std::string::npos) << why;
}

TEST_F(SubGroupTest, AGroupIsPlannedOnlyOnceEveryPodItCountsHasCome) {
  create_group(kKaiPodGroups,
               {{"apiVersion", "scheduling.run.ai/v2alpha2"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", "half"}, {"namespace", "ml"}}},
                {"spec",
                 {{"minMember", 4},
                  {"subGroups",
                   {{{"name", "a"},
                     {"minMember", 2},
                     {"topologyConstraint", {{"requiredTopologyLevel", "example.com/rack"}}}},
                    {{"name", "b"},
                     {"minMember", 2},
                     {"topologyConstraint", {{"requiredTopologyLevel", "example.com/rack"}}}}}}}}});
  create(member_pod("a-0", {{"kai.scheduler/subgroup-name", "a"}}, {{"pod-group-name", "half"}}));
  create(member_pod("b-0", {{"kai.scheduler/subgroup-name", "b"}}, {{"pod-group-name", "half"}}));
  EXPECT_EQ(schedule(), 0);
  const std::string why = scheduler_->failure("a-0");
  EXPECT_NE(why.find("2 of its 4 pods are seen so far"), std::string::npos) << why;
  EXPECT_FALSE(gang_plan("ml/half").is_object());
  create(member_pod("a-1", {{"kai.scheduler/subgroup-name", "a"}}, {{"pod-group-name", "half"}}));
  create(member_pod("b-1", {{"kai.scheduler/subgroup-name", "b"}}, {{"pod-group-name", "half"}}));
  ASSERT_EQ(schedule(), 4) << scheduler_->failure("a-0");
  EXPECT_EQ(leaves_of({"a-0", "a-1"}).size(), 1u);
  EXPECT_EQ(leaves_of({"b-0", "b-1"}).size(), 1u);
}

// The coscheduling plugin counts a group's pods from its pod lister (scheduler-plugins
// pkg/coscheduling/core/core.go PodGroupManager.PreFilter), pending ones included. An extender that
// starts (or relists) while a gang's pods wait counts them from its list: kube-scheduler's first
// call for each is answered, not refused until every pod has been asked for once.
TEST_F(SubGroupTest, AnExtenderStartedWhileAGangsPodsWaitCountsThemFromItsList) {
  create_group(testing::kLivePodGroups, {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                                         {"kind", "PodGroup"},
                                         {"metadata", {{"name", "train"}, {"namespace", "ml"}}},
                                         {"spec", {{"minMember", 4}}}});
  for (int i = 0; i < 4; ++i)
    create(member_pod("train-" + std::to_string(i), {{"scheduling.x-k8s.io/pod-group", "train"}}, {}));
  start_extender("state.json");
  ASSERT_EQ(schedule(), 4) << scheduler_->failure("train-0");
  // A relist finds them bound and forgets nothing it still needs.
  start_extender("state.json");
  EXPECT_TRUE(gang_plan("ml/train").is_object());
}

TEST_F(SubGroupTest, AVolcanoSubGroupPolicyKeepsEachWorkerReplicaInOneLeaf) {
  // KubeRay's shape: the PodGroup binds the gang to one spine (tier 2), and each worker group
  // replica (ray.io/group-replica) of four pods to one leaf (tier 1).
  create_group(kVolcanoPodGroups,
               {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", "ray"}, {"namespace", "ml"}}},
                {"spec",
                 {{"minMember", 8},
                  {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 2}}},
                  {"subGroupPolicy",
                   {{{"name", "workers"},
                     {"subGroupSize", 4},
                     {"labelSelector", {{"matchLabels", {{"ray.io/node-type", "worker"}}}}},
                     {"matchLabelKeys", {"ray.io/group-replica"}},
                     {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 1}}}}}}}}});
  for (int i = 0; i < 4; ++i) {
    for (const char* replica : {"0", "1"}) {
      create(member_pod(std::string("w") + replica + "-" + std::to_string(i),
                        {{"ray.io/node-type", "worker"}, {"ray.io/group-replica", replica}},
                        {{"scheduling.k8s.io/group-name", "ray"}}));
    }
  }
  ASSERT_EQ(schedule(), 8) << scheduler_->failure("w0-0");
  const auto r0 = leaves_of(names("w0"));
  const auto r1 = leaves_of(names("w1"));
  ASSERT_EQ(r0.size(), 1u) << join(r0);
  ASSERT_EQ(r1.size(), 1u) << join(r1);
  EXPECT_NE(*r0.begin(), *r1.begin());
  EXPECT_EQ(spine_of(*r0.begin()), spine_of(*r1.begin()));
  const json g = gang_plan("ml/ray");
  ASSERT_TRUE(g.contains("subGroups")) << g.dump();
  std::set<std::string> subs;
  for (const auto& s : g["subGroups"]) subs.insert(s["name"].get<std::string>());
  EXPECT_EQ(subs, (std::set<std::string>{"workers/0", "workers/1"}));
}

TEST_F(SubGroupTest, AVolcanoGangStartsWithMinSubGroupsAndTheLastJoinsAsOneWhenALeafHasRoom) {
  // Every leaf keeps two free nodes: a spine holds two worker replicas of two pods, not three.
  for (const char* leaf : {"00", "01", "10", "11"}) {
    for (int i = 2; i < 4; ++i) {
      occupy(std::string("n-") + leaf + "-" + std::to_string(i),
             "extra-" + std::string(leaf) + "-" + std::to_string(i));
    }
  }
  create_group(kVolcanoPodGroups,
               {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", "elastic"}, {"namespace", "ml"}}},
                {"spec",
                 {{"minMember", 4},
                  {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 2}}},
                  {"subGroupPolicy",
                   {{{"name", "workers"},
                     {"subGroupSize", 2},
                     {"minSubGroups", 2},
                     {"labelSelector", {{"matchLabels", {{"ray.io/node-type", "worker"}}}}},
                     {"matchLabelKeys", {"ray.io/group-replica"}},
                     {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 1}}}}}}}}});
  for (const char* replica : {"0", "1", "2"}) {
    for (int i = 0; i < 2; ++i) {
      create(member_pod(std::string("e") + replica + "-" + std::to_string(i),
                        {{"ray.io/node-type", "worker"}, {"ray.io/group-replica", replica}},
                        {{"scheduling.k8s.io/group-name", "elastic"}}));
    }
  }
  // Two replicas start (minSubGroups), each in one leaf of one spine; the third waits, whole.
  EXPECT_EQ(schedule(), 4);
  std::set<std::string> started;
  std::string waiting_replica;
  for (const char* replica : {"0", "1", "2"}) {
    const std::string r(replica);
    const auto leaves = leaves_of({"e" + r + "-0", "e" + r + "-1"});
    if (leaves.contains("(unbound)")) {
      EXPECT_EQ(leaves, std::set<std::string>{"(unbound)"}) << "replica " << r << " half bound";
      waiting_replica = r;
    } else {
      ASSERT_EQ(leaves.size(), 1u) << r;
      started.insert(*leaves.begin());
    }
  }
  ASSERT_EQ(started.size(), 2u);
  ASSERT_FALSE(waiting_replica.empty());
  const std::string spine = spine_of(*started.begin());
  EXPECT_EQ(spine_of(*started.rbegin()), spine);
  const std::string why = scheduler_->failure("e" + waiting_replica + "-0");
  EXPECT_NE(why.find("sub-group workers/" + waiting_replica + " (2 pods) waits for room in " + spine),
            std::string::npos)
      << why;
  // One free node in each leaf of the gang's spine: room for two pods, but not in one leaf.
  const std::string leaf = *started.begin();
  const std::string other = *started.rbegin();
  delete_pod("extra-" + leaf.substr(5) + "-2");
  delete_pod("extra-" + other.substr(5) + "-2");
  EXPECT_EQ(schedule(), 0);
  EXPECT_EQ(leaves_of({"e" + waiting_replica + "-0", "e" + waiting_replica + "-1"}),
            std::set<std::string>{"(unbound)"});
  // Room for both in one leaf: the third replica goes there, both pods together.
  delete_pod("extra-" + leaf.substr(5) + "-3");
  EXPECT_EQ(schedule(), 2) << scheduler_->failure("e" + waiting_replica + "-0");
  EXPECT_EQ(leaves_of({"e" + waiting_replica + "-0", "e" + waiting_replica + "-1"}),
            std::set<std::string>{leaf});
}

TEST_F(SubGroupTest, ARestartedExtenderKeepsTheSubGroupsPlanFromItsStateFile) {
  create_kai_serve();
  // The gang binds, then the extender restarts (its state file written on the way down).
  ASSERT_EQ(schedule(), 8) << scheduler_->failure("decode-0");
  const std::string rack = *leaves_of(names("prefill")).begin();
  ext_->service.flush_state();
  start_extender("state.json");
  const json g = gang_plan("ml/serve");
  ASSERT_TRUE(g.contains("subGroups")) << g.dump();
  delete_pod("prefill-3");
  create(
      member_pod("prefill-3", {{"kai.scheduler/subgroup-name", "prefill"}}, {{"pod-group-name", "serve"}}));
  ASSERT_EQ(schedule(), 1) << scheduler_->failure("prefill-3");
  EXPECT_EQ(leaves_of(names("prefill")), std::set<std::string>{rack});
}

// A KAI PodGroup without sub-groups is placed in KAI's order too, as `place` places it: siblings
// by the gang's request over their free resources, the fullest first, then by name; ancestors'
// order first (kai-scheduler job_filtering.go sortTree and sortDomainInfos). Volcano's binpack,
// which the engine uses for other gangs, would rank the domain whose CPUs are most used first.
class KaiOrderTest : public testing::LiveClusterTest {
 protected:
  // 1-GPU nodes of 64 CPUs: spine1 holds rack1 (node0, node1) and rack3 (node6, node7), spine2
  // holds rack2 (node2..node5) and rack4 (node8, node9). node0 runs a 1-GPU, 1-CPU pod, node2..node4
  // 1-GPU, 60-CPU pods, rack3 and rack4 are full. Each spine has one free GPU, so a 1-GPU pod asks
  // all of the free GPUs of either (KAI: a tie, spine1 by name, then rack1); rack2's CPUs are far
  // more used (the engine's binpack: rack2).
  void SetUp() override {
    testing::ExtenderCluster cluster;
    const std::vector<std::pair<std::string, std::string>> racks{
        {"node0", "rack1"}, {"node1", "rack1"}, {"node2", "rack2"}, {"node3", "rack2"}, {"node4", "rack2"},
        {"node5", "rack2"}, {"node6", "rack3"}, {"node7", "rack3"}, {"node8", "rack4"}, {"node9", "rack4"}};
    for (const auto& [node, rack] : racks) {
      json n = testing::node_object(node, 1);
      n["metadata"]["labels"]["example.com/rack"] = rack;
      cluster.nodes.push_back(n);
      cluster.node_names.push_back(node);
      cluster.leaf_of[node] = rack;
    }
    cluster.hypernodes.push_back(testing::hypernode_object("rack1", 1, "Node", {"node0", "node1"}));
    cluster.hypernodes.push_back(
        testing::hypernode_object("rack2", 1, "Node", {"node2", "node3", "node4", "node5"}));
    cluster.hypernodes.push_back(testing::hypernode_object("rack3", 1, "Node", {"node6", "node7"}));
    cluster.hypernodes.push_back(testing::hypernode_object("rack4", 1, "Node", {"node8", "node9"}));
    cluster.hypernodes.push_back(testing::hypernode_object("spine1", 2, "HyperNode", {"rack1", "rack3"}));
    cluster.hypernodes.push_back(testing::hypernode_object("spine2", 2, "HyperNode", {"rack2", "rack4"}));
    start_cluster(std::move(cluster));
    busy("node0", "1");
    for (const char* node : {"node2", "node3", "node4"}) busy(node, "60");
    for (const char* node : {"node6", "node7", "node8", "node9"}) busy(node, "1");
  }

  void busy(const std::string& node, const std::string& cpu) {
    json pod = testing::pod_object("busy-" + node, "", "1", {}, {}, cpu);
    pod["metadata"].erase("uid");
    pod.erase("status");
    pod["spec"]["nodeName"] = node;
    seen([&] { ASSERT_TRUE(client_->create(testing::kLivePods, "ml", pod).has_value()); });
  }
};

TEST_F(KaiOrderTest, AKaiPodGroupIsPackedInKaisDomainOrderNotByBinpack) {
  seen([&] {
    ASSERT_TRUE(client_
                    ->create(kKaiPodGroups, "ml",
                             {{"apiVersion", "scheduling.run.ai/v2alpha2"},
                              {"kind", "PodGroup"},
                              {"metadata", {{"name", "pack"}, {"namespace", "ml"}}},
                              {"spec",
                               {{"minMember", 1},
                                {"topologyConstraint",
                                 {{"topology", "cluster"}, {"requiredTopologyLevel", "example.com/rack"}}}}}})
                    .has_value());
  });
  create(job_pod("pack", 0, "1", {{"pod-group-name", "pack"}}));
  ASSERT_EQ(schedule(), 1) << scheduler_->failure("pack-0");
  EXPECT_EQ(node_of("pack-0"), "node1") << gang_plan("ml/pack").dump();
}

}  // namespace
}  // namespace hypertopo::scheduler
