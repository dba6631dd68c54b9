// Volcano's formulas on hand-computed examples, and the engine's gang, partition, N-layer slice and
// rank-order behaviour on small trees whose right answers are worked out in the comments.
#include <gtest/gtest.h>

#include <set>

#include "scheduler/placement/placement_engine.h"
#include "scheduler/placement/volcano_score.h"

namespace hypertopo::scheduler {
namespace {

NodeSpec node(std::string name, std::int64_t cpu, std::int64_t gpus = 0,
              std::map<std::string, std::string> labels = {}) {
  NodeSpec n;
  n.name = std::move(name);
  n.labels = std::move(labels);
  n.allocatable = {{"cpu", cpu}, {"pods", 110}};
  if (gpus > 0) n.allocatable["nvidia.com/gpu"] = gpus;
  return n;
}

HyperNodeMember exact_node(std::string n) {
  return {HyperNodeMember::Type::kNode, MemberSelector::exact(std::move(n))};
}
HyperNodeMember exact_hn(std::string n) {
  return {HyperNodeMember::Type::kHyperNode, MemberSelector::exact(std::move(n))};
}

TEST(VolcanoBinpack, HandComputedScore) {
  // Two nodes: 8 cores / 32Gi each; 4 cores and 8Gi already used in the domain.
  NodeSpec a = node("a", 8000);
  NodeSpec b = node("b", 8000);
  a.allocatable["memory"] = 32LL << 30;
  b.allocatable["memory"] = 32LL << 30;
  auto index = TopologyIndex::from_hypernodes({{"leaf", 1, "", {exact_node("a"), exact_node("b")}}}, {a, b},
                                              {{"used", "a", {{"cpu", 4000}, {"memory", 8LL << 30}}}});
  ASSERT_TRUE(index.has_value());
  const int leaf = index->find_domain("leaf");
  BinpackWeights w;
  // cpu: (4000 + 4000) / 16000 = 0.5; memory: (8Gi + 8Gi) / 64Gi = 0.25; (0.5 + 0.25) / 2.
  EXPECT_DOUBLE_EQ(hypernode_binpack_score(*index, leaf, {{"cpu", 4000}, {"memory", 8LL << 30}}, w), 0.375);
  w.resources["cpu"] = 3;
  // (3 * 0.5 + 1 * 0.25) / 4
  EXPECT_DOUBLE_EQ(hypernode_binpack_score(*index, leaf, {{"cpu", 4000}, {"memory", 8LL << 30}}, w), 0.4375);
  // 4000 used + 12001 asked > 16000: overflow scores 0.
  EXPECT_DOUBLE_EQ(hypernode_binpack_score(*index, leaf, {{"cpu", 12001}}, w), 0.0);
  // An unweighted resource is ignored even when it overflows.
  EXPECT_DOUBLE_EQ(
      hypernode_binpack_score(*index, leaf, {{"cpu", 4000}, {"memory", 8LL << 30}, {"pods", 1000}}, w),
      0.4375);
  // A weighted extended resource the domain lacks but the pods ask for: overflow.
  w.resources["nvidia.com/gpu"] = 1;
  EXPECT_DOUBLE_EQ(hypernode_binpack_score(*index, leaf, {{"cpu", 1000}, {"nvidia.com/gpu", 1}}, w), 0.0);
}

TEST(VolcanoNormalPod, HandComputedFadingScore) {
  // spine (tier 2) = {leaf-a (tier 1) = {n1, n2}, leaf-b = {n3}, n4 directly}; cluster top = tier 3.
  std::vector<NodeSpec> nodes = {node("n1", 4000), node("n2", 4000), node("n3", 8000), node("n4", 4000)};
  auto index = TopologyIndex::from_hypernodes(
      {{"leaf-a", 1, "", {exact_node("n1"), exact_node("n2")}},
       {"leaf-b", 1, "", {exact_node("n3")}},
       {"spine", 2, "", {exact_hn("leaf-a"), exact_hn("leaf-b"), exact_node("n4")}}},
      nodes, {{"p1", "n1", {{"cpu", 1000}}}, {"p2", "n3", {{"cpu", 4000}}}});
  ASSERT_TRUE(index.has_value()) << index.error().message();
  BinpackWeights w;
  w.fading = 0.5;  // tier weights 1, 0.5, 0.25 (sum 1.75); memory has no allocatable: left out
  const ResourceAmounts pod = {{"cpu", 1000}};
  // n1: leaf-a (1000+1000)/8000 = 0.25; spine (5000+1000)/20000 = 0.3; top the same 0.3.
  EXPECT_NEAR(normal_pod_node_score(*index, index->find_node("n1"), pod, w),
              (0.25 + 0.5 * 0.3 + 0.25 * 0.3) / 1.75, 1e-12);
  // n3: leaf-b (4000+1000)/8000 = 0.625.
  EXPECT_NEAR(normal_pod_node_score(*index, index->find_node("n3"), pod, w),
              (0.625 + 0.5 * 0.3 + 0.25 * 0.3) / 1.75, 1e-12);
  // n4 is in no tier-1 HyperNode: that tier scores 1.0.
  EXPECT_NEAR(normal_pod_node_score(*index, index->find_node("n4"), pod, w),
              (1.0 + 0.5 * 0.3 + 0.25 * 0.3) / 1.75, 1e-12);
  // A pod that overflows leaf-b scores 0 there but still counts the other tiers.
  EXPECT_NEAR(normal_pod_node_score(*index, index->find_node("n3"), {{"cpu", 5000}}, w),
              (0.0 + 0.5 * (10000.0 / 20000) + 0.25 * (10000.0 / 20000)) / 1.75, 1e-12);
}

TEST(VolcanoNormalPod, NodeOutsideEveryHyperNodeAndTheVirtualTop) {
  // spine (tier 2) = {leaf-a (tier 1) = {n1, n2}}; n5 is in no HyperNode; cluster top = tier 3.
  // p1 uses 2000 of n1's 4000; the cluster holds 12000.
  std::vector<NodeSpec> nodes = {node("n1", 4000), node("n2", 4000), node("n5", 4000)};
  auto index = TopologyIndex::from_hypernodes(
      {{"leaf-a", 1, "", {exact_node("n1"), exact_node("n2")}}, {"spine", 2, "", {exact_hn("leaf-a")}}},
      nodes, {{"p1", "n1", {{"cpu", 2000}}}});
  ASSERT_TRUE(index.has_value()) << index.error().message();
  BinpackWeights w;
  w.fading = 0.5;  // tier weights 1, 0.5, 0.25: sum 1.75
  const ResourceAmounts pod = {{"cpu", 1000}};
  // n1: leaf-a (2000+1000)/8000 = 0.375; spine the same 0.375; top (2000+1000)/12000 = 0.25.
  EXPECT_NEAR(normal_pod_node_score(*index, index->find_node("n1"), pod, w),
              (1.0 * 0.375 + 0.5 * 0.375 + 0.25 * 0.25) / 1.75, 1e-12);
  // n5: in no tier-1 and no tier-2 HyperNode, so both score 1.0; the virtual top still counts.
  EXPECT_NEAR(normal_pod_node_score(*index, index->find_node("n5"), pod, w),
              (1.0 * 1.0 + 0.5 * 1.0 + 0.25 * 0.25) / 1.75, 1e-12);
  // 2000 + 11000 > 12000 overflows the top tier, which scores 0; the missing tiers stay 1.0.
  EXPECT_NEAR(normal_pod_node_score(*index, index->find_node("n5"), {{"cpu", 11000}}, w),
              (1.0 * 1.0 + 0.5 * 1.0 + 0.25 * 0.0) / 1.75, 1e-12);
  // fading 1: every tier weighs 1 (sum 3).
  w.fading = 1.0;
  EXPECT_NEAR(normal_pod_node_score(*index, index->find_node("n1"), pod, w), (0.375 + 0.375 + 0.25) / 3.0,
              1e-12);
}

// The scorer the extender and the engine use over many nodes gives normal_pod_node_score's value,
// to the bit, for every node and pod shape (a resource no node offers, an overflow, GPUs).
TEST(VolcanoNormalPod, ScorerEqualsTheOneNodeScoreOnEveryNode) {
  std::vector<NodeSpec> nodes = {node("n1", 8000), node("n2", 8000), node("n3", 8000), node("n4", 4000),
                                 node("n5", 4000)};
  auto index = TopologyIndex::from_hypernodes(
      {{"leaf-a", 1, "", {exact_node("n1"), exact_node("n2")}},
       {"leaf-b", 1, "", {exact_node("n3")}},
       {"spine", 2, "", {exact_hn("leaf-a"), exact_hn("leaf-b"), exact_node("n4")}}},
      nodes, {{"p1", "n1", {{"cpu", 1000}}}, {"p2", "n3", {{"cpu", 4000}}}});
  ASSERT_TRUE(index.has_value()) << index.error().message();
  BinpackWeights w;
  w.fading = 0.7;
  w.resources = {{"cpu", 2}, {"memory", 1}, {"nvidia.com/gpu", 3}, {"pods", 0}};
  const std::vector<ResourceAmounts> pods = {
      {{"cpu", 1000}}, {{"cpu", 5000}}, {{"cpu", 100}, {"nvidia.com/gpu", 1}}, {}, {{"cpu", 30000}}};
  for (const auto& pod : pods) {
    NormalPodScorer scorer(*index, pod, w);
    for (const char* n : {"n1", "n2", "n3", "n4", "n5", "n1"}) {
      const int id = index->find_node(n);
      EXPECT_EQ(scorer.score(id), normal_pod_node_score(*index, id, pod, w)) << n;
    }
  }
}

// spine-1 = {leaf-1 = {n1, n2}, leaf-2 = {n3, n4}}, spine-2 = {leaf-3 = {n5, n6}, leaf-4 = {n7, n8}};
// every node has 8 GPUs.
std::expected<TopologyIndex, Error> two_spines(const std::vector<BoundPod>& pods = {}) {
  std::vector<NodeSpec> nodes;
  std::vector<HyperNodeSpec> hns;
  for (int leaf = 1; leaf <= 4; ++leaf) {
    HyperNodeSpec h{"leaf-" + std::to_string(leaf), 1, "leaf", {}};
    for (int k = 0; k < 2; ++k) {
      std::string name = "n" + std::to_string((leaf - 1) * 2 + k + 1);
      nodes.push_back(node(name, 64000, 8));
      h.members.push_back(exact_node(name));
    }
    hns.push_back(h);
  }
  hns.push_back({"spine-1", 2, "spine", {exact_hn("leaf-1"), exact_hn("leaf-2")}});
  hns.push_back({"spine-2", 2, "spine", {exact_hn("leaf-3"), exact_hn("leaf-4")}});
  return TopologyIndex::from_hypernodes(hns, nodes, pods);
}

BinpackWeights gpu_weights() {
  BinpackWeights w;
  w.resources = {{"nvidia.com/gpu", 1}};
  return w;
}

PodSetRequest gpus(std::int32_t count, TopologyMode mode, std::string level) {
  PodSetRequest ps;
  ps.name = "workers";
  ps.count = count;
  ps.per_pod = {{"nvidia.com/gpu", 1}};
  ps.mode = mode;
  ps.level = std::move(level);
  return ps;
}

TEST(PlacementEngine, HardModePicksTheLowestTierAndTheFullestDomain) {
  // leaf-3 already runs 6 GPUs: the binpack score prefers it for a 10-pod gang that fits in a leaf.
  auto index = two_spines({{"busy", "n5", {{"nvidia.com/gpu", 6}}}});
  ASSERT_TRUE(index.has_value());
  PlacementEngine engine(*index, gpu_weights());
  auto r = engine.place({"j", {gpus(10, TopologyMode::kRequired, "1")}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_TRUE(r->fit) << r->reason;
  EXPECT_EQ(r->pod_sets[0].tier, 1);
  EXPECT_EQ(r->pod_sets[0].domains, std::vector<std::string>{"leaf-3"});
  // 2 free on n5 + 8 on n6: the best fit puts the rest on the emptier node only as needed.
  std::map<std::string, int> counts;
  for (const auto& a : r->pod_sets[0].assignment) counts[a.node_name] = a.count;
  EXPECT_EQ(counts, (std::map<std::string, int>{{"n5", 2}, {"n6", 8}}));
  // The score is 100 * weight * (6 + 10) / 16.
  EXPECT_DOUBLE_EQ(r->pod_sets[0].score, 100.0);
}

TEST(PlacementEngine, HardModeFailsAboveTheAllowedTierAndSoftSpreads) {
  auto index = two_spines();
  ASSERT_TRUE(index.has_value());
  PlacementEngine engine(*index, BinpackWeights{});
  auto hard = engine.place({"j", {gpus(24, TopologyMode::kRequired, "leaf")}});
  ASSERT_TRUE(hard.has_value());
  EXPECT_FALSE(hard->fit);
  EXPECT_NE(hard->reason.find("no domain at tier <= 1 holds 24 pods"), std::string::npos) << hard->reason;
  EXPECT_EQ(index->domain_used(index->root(), "nvidia.com/gpu"), 0);  // a failed gang takes nothing
  auto spine = engine.place({"j", {gpus(24, TopologyMode::kRequired, "spine")}});
  ASSERT_TRUE(spine.has_value() && spine->fit);
  EXPECT_EQ(spine->pod_sets[0].tier, 2);
  engine.release({"j", {gpus(24, TopologyMode::kRequired, "spine")}}, *spine);
  auto soft = engine.place({"j", {gpus(40, TopologyMode::kPreferred, "1")}});
  ASSERT_TRUE(soft.has_value() && soft->fit) << (soft ? soft->reason : soft.error().message());
  EXPECT_EQ(soft->pod_sets[0].tier, 3);  // the virtual cluster top
}

TEST(PlacementEngine, PartitionsStayInsideTheirOwnDomains) {
  // 4 partitions of 6 pods, each inside one leaf (16 GPUs): a leaf holds 2 partitions (12 pods).
  auto index = two_spines();
  ASSERT_TRUE(index.has_value());
  PlacementEngine engine(*index, BinpackWeights{});
  PodSetRequest ps = gpus(24, TopologyMode::kRequired, "spine");
  ps.partitions = PartitionRequest{4, 6, 4, "leaf"};
  auto r = engine.place({"j", {ps}});
  ASSERT_TRUE(r.has_value() && r->fit) << (r ? r->reason : r.error().message());
  // Partition p = ranks [6p, 6p + 6) must sit inside one leaf.
  std::vector<std::string> leaf_of_rank;
  for (const auto& a : r->pod_sets[0].assignment) {
    for (int k = 0; k < a.count; ++k) leaf_of_rank.push_back(a.domain_path.back());
  }
  ASSERT_EQ(leaf_of_rank.size(), 24u);
  for (int p = 0; p < 4; ++p) {
    std::set<std::string> leaves(leaf_of_rank.begin() + 6 * p, leaf_of_rank.begin() + 6 * p + 6);
    EXPECT_EQ(leaves.size(), 1u) << "partition " << p;
  }
  EXPECT_EQ(r->pod_sets[0].domains, std::vector<std::string>{"spine-1"});
}

TEST(PlacementEngine, MinPartitionsLetsAPartialGangStart) {
  // A partition of 10 must sit inside one 16-GPU leaf, so a leaf holds one partition and a spine
  // (the widest tier allowed) holds 2: with minPartitions 2, 2 of the 5 partitions start.
  auto index = two_spines();
  ASSERT_TRUE(index.has_value());
  PlacementEngine engine(*index, BinpackWeights{});
  PodSetRequest ps = gpus(50, TopologyMode::kRequired, "spine");
  ps.partitions = PartitionRequest{5, 10, 2, "leaf"};
  auto r = engine.place({"j", {ps}});
  ASSERT_TRUE(r.has_value() && r->fit) << (r ? r->reason : r.error().message());
  EXPECT_EQ(r->pod_sets[0].placed, 20);
  EXPECT_NE(r->reason.find("placed 2 of 5 partitions"), std::string::npos) << r->reason;
  ps.partitions->min = 3;
  auto none = engine.place({"j2", {ps}});
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->fit);
}

TEST(PlacementEngine, InconsistentRequestsAreErrors) {
  auto index = two_spines();
  ASSERT_TRUE(index.has_value());
  PlacementEngine engine(*index, BinpackWeights{});
  PodSetRequest bad_partitions = gpus(10, TopologyMode::kRequired, "spine");
  bad_partitions.partitions = PartitionRequest{3, 4, 3, "leaf"};
  auto r1 = engine.place({"j", {bad_partitions}});
  ASSERT_FALSE(r1.has_value());
  EXPECT_NE(r1.error().message().find("replicas 10 != totalPartitions 3 x partitionSize 4"),
            std::string::npos);
  auto r2 = engine.place({"j", {gpus(4, TopologyMode::kRequired, "rack")}});
  ASSERT_FALSE(r2.has_value());
  EXPECT_NE(r2.error().message().find("unknown tier or level 'rack'"), std::string::npos)
      << r2.error().message();
  PodSetRequest bad_slice = gpus(10, TopologyMode::kRequired, "spine");
  bad_slice.slices = {{"leaf", 4}};
  auto r3 = engine.place({"j", {bad_slice}});
  ASSERT_FALSE(r3.has_value());
  EXPECT_NE(r3.error().message().find("slice size 4 at leaf does not divide the pod count 10"),
            std::string::npos);
  PodSetRequest not_nested = gpus(24, TopologyMode::kRequired, "spine");
  not_nested.slices = {{"leaf", 12}, {"0", 8}};
  auto r4 = engine.place({"j", {not_nested}});
  ASSERT_FALSE(r4.has_value());
  EXPECT_NE(r4.error().message().find("does not divide the enclosing slice size 12"), std::string::npos);
}

// block > rack > nvswitch > host; 2 blocks x 2 racks x 2 nvswitches x 4 hosts, 3 free GPUs per host
// (one of 4 used) so that "2 per host" must leave one GPU idle on every host it uses.
std::expected<TopologyIndex, Error> four_levels() {
  std::vector<NodeSpec> nodes;
  std::vector<BoundPod> pods;
  for (int b = 0; b < 2; ++b) {
    for (int r = 0; r < 2; ++r) {
      for (int s = 0; s < 2; ++s) {
        for (int h = 0; h < 4; ++h) {
          std::string name =
              "h" + std::to_string(b) + std::to_string(r) + std::to_string(s) + std::to_string(h);
          nodes.push_back(node(name, 64000, 4,
                               {{"block", "b" + std::to_string(b)},
                                {"rack", "r" + std::to_string(r)},
                                {"nvswitch", "s" + std::to_string(s)},
                                {kHostnameLabel, name}}));
          pods.push_back({"busy-" + name, name, {{"nvidia.com/gpu", 1}}});
        }
      }
    }
  }
  return TopologyIndex::from_levels({"default", {"block", "rack", "nvswitch", kHostnameLabel}}, nodes, pods);
}

TEST(PlacementEngine, FourLayerSlicesHoldAtEveryLayer) {
  auto index = four_levels();
  ASSERT_TRUE(index.has_value()) << index.error().message();
  PlacementEngine engine(*index, BinpackWeights{});
  // A block has 2 racks x 2 switches x 4 hosts = 16 hosts; 2 per host => 32 pods per block max.
  PodSetRequest ps = gpus(32, TopologyMode::kRequired, "block");
  ps.slices = {{"rack", 16}, {"nvswitch", 4}, {kHostnameLabel, 2}};
  auto r = engine.place({"seed", {ps}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_TRUE(r->fit) << r->reason;
  std::map<std::string, int> per_block, per_rack, per_switch;
  int total = 0;
  for (const auto& a : r->pod_sets[0].assignment) {
    EXPECT_EQ(a.count % 2, 0) << a.node_name;
    ASSERT_EQ(a.domain_path.size(), 3u);
    per_block[a.domain_path[0]] += a.count;
    per_rack[a.domain_path[1]] += a.count;
    per_switch[a.domain_path[2]] += a.count;
    total += a.count;
  }
  EXPECT_EQ(total, 32);
  EXPECT_EQ(per_block.size(), 1u);
  for (const auto& [k, v] : per_rack) EXPECT_EQ(v % 16, 0) << k;
  for (const auto& [k, v] : per_switch) EXPECT_EQ(v % 4, 0) << k;
  // 34 pods cannot be sliced by 16 at the rack level: the request is inconsistent.
  ps.count = 34;
  EXPECT_FALSE(engine.place({"seed", {ps}}).has_value());
  // 64 pods in 2-per-host slices need 32 hosts inside one block: only 16 are there.
  ps.count = 64;
  auto big = engine.place({"seed", {ps}});
  ASSERT_TRUE(big.has_value());
  EXPECT_FALSE(big->fit);
}

TEST(PlacementEngine, RanksFillOneLowestTierDomainBeforeTheNext) {
  auto index = two_spines();
  ASSERT_TRUE(index.has_value());
  PlacementEngine engine(*index, BinpackWeights{});
  auto r = engine.place({"j", {gpus(32, TopologyMode::kRequired, "spine")}});
  ASSERT_TRUE(r.has_value() && r->fit);
  int expected_rank = 0;
  std::vector<std::string> leaves_in_rank_order;
  for (const auto& a : r->pod_sets[0].assignment) {
    EXPECT_EQ(a.first_rank, expected_rank);
    expected_rank += a.count;
    if (leaves_in_rank_order.empty() || leaves_in_rank_order.back() != a.domain_path.back()) {
      leaves_in_rank_order.push_back(a.domain_path.back());
    }
  }
  // Each leaf appears once: ranks never come back to a leaf they left.
  std::set<std::string> unique(leaves_in_rank_order.begin(), leaves_in_rank_order.end());
  EXPECT_EQ(unique.size(), leaves_in_rank_order.size());
  EXPECT_EQ(leaves_in_rank_order, (std::vector<std::string>{"leaf-1", "leaf-2"}));
}

TEST(PlacementEngine, NormalPodsFollowTheFadingScore) {
  // n1 already runs 7 GPUs: a 1-GPU normal pod packs into leaf-1 (highest score), not an empty leaf.
  auto index = two_spines({{"busy", "n1", {{"nvidia.com/gpu", 7}}}});
  ASSERT_TRUE(index.has_value());
  PlacementEngine engine(*index, gpu_weights());
  auto r = engine.place({"j", {gpus(1, TopologyMode::kNone, "")}});
  ASSERT_TRUE(r.has_value() && r->fit);
  ASSERT_EQ(r->pod_sets[0].assignment.size(), 1u);
  // The fading score is HyperNode-level, so n1 and n2 tie; leaf-1 (7 of 16 GPUs used) and spine-1
  // score above every emptier domain.
  EXPECT_EQ(r->pod_sets[0].assignment[0].domain_path.back(), "leaf-1");
}

TEST(PlacementEngine, TaintsSelectorsAndUnreadyNodesAreSkipped) {
  std::vector<NodeSpec> nodes = {node("a", 8000, 8), node("b", 8000, 8),
                                 node("c", 8000, 8, {{"zone", "z1"}})};
  nodes[0].taints = {{"gpu", "true", "NoSchedule"}};
  nodes[1].ready = false;
  auto index = TopologyIndex::from_hypernodes(
      {{"leaf", 1, "", {exact_node("a"), exact_node("b"), exact_node("c")}}}, nodes, {});
  ASSERT_TRUE(index.has_value());
  PlacementEngine engine(*index, BinpackWeights{});
  PodSetRequest ps = gpus(8, TopologyMode::kRequired, "1");
  ps.node_selector = {{"zone", "z1"}};
  auto r = engine.place({"j", {ps}});
  ASSERT_TRUE(r.has_value() && r->fit);
  EXPECT_EQ(r->pod_sets[0].assignment[0].node_name, "c");
  ps.count = 9;
  auto too_many = engine.place({"j", {ps}});
  ASSERT_TRUE(too_many.has_value());
  EXPECT_FALSE(too_many->fit);
  ps.node_selector.clear();
  ps.tolerations = {{"gpu", "Equal", "true", "NoSchedule"}};
  ps.count = 16;  // a is tolerated now, b stays unready and c already holds the first gang
  auto tolerated = engine.place({"j", {ps}});
  ASSERT_TRUE(tolerated.has_value());
  EXPECT_FALSE(tolerated->fit);
  ps.count = 8;
  auto on_a = engine.place({"j", {ps}});
  ASSERT_TRUE(on_a.has_value() && on_a->fit);
  EXPECT_EQ(on_a->pod_sets[0].assignment[0].node_name, "a");
}

TEST(PlacementEngine, JobLevelTopologyKeepsAllTasksInOneDomain) {
  // spine (tier 2) = {leaf-a = {a1: 4 GPUs, a2: 4}, leaf-b = {b1: 8, b2: 4}}.
  // Task "trainer" = 2 pods x 4 GPUs (8 GPUs), task "ps" = 1 pod x 4 GPUs; job-level hard, tier 1.
  // Per task: trainer fits in both leaves; binpack (8/8 = 1.0 in leaf-a vs 8/12 in leaf-b) picks
  // leaf-a, which leaves ps only leaf-b: two domains. The job together needs 12 GPUs: only leaf-b.
  std::vector<NodeSpec> nodes = {node("a1", 64000, 4), node("a2", 64000, 4), node("b1", 64000, 8),
                                 node("b2", 64000, 4)};
  auto build = [&] {
    return TopologyIndex::from_hypernodes({{"leaf-a", 1, "", {exact_node("a1"), exact_node("a2")}},
                                           {"leaf-b", 1, "", {exact_node("b1"), exact_node("b2")}},
                                           {"spine", 2, "", {exact_hn("leaf-a"), exact_hn("leaf-b")}}},
                                          nodes, {});
  };
  auto task = [](std::string name, std::int32_t count) {
    PodSetRequest ps;
    ps.name = std::move(name);
    ps.count = count;
    ps.per_pod = {{"nvidia.com/gpu", 4}};
    ps.mode = TopologyMode::kRequired;
    ps.level = "1";
    return ps;
  };
  auto leaves = [](const JobPlacement& p) {
    std::set<std::string> out;
    for (const auto& ps : p.pod_sets)
      for (const auto& a : ps.assignment) out.insert(a.domain_path.back());
    return out;
  };
  {
    // Without the job-level constraint the tasks split: this is what the constraint must prevent.
    auto index = build();
    ASSERT_TRUE(index.has_value());
    PlacementEngine engine(*index, gpu_weights());
    auto r = engine.place({"split", {task("trainer", 2), task("ps", 1)}});
    ASSERT_TRUE(r.has_value() && r->fit);
    EXPECT_EQ(leaves(*r), (std::set<std::string>{"leaf-a", "leaf-b"}));
  }
  {
    auto index = build();
    ASSERT_TRUE(index.has_value());
    PlacementEngine engine(*index, gpu_weights());
    JobRequest job{"together", {task("trainer", 2), task("ps", 1)}, TopologyMode::kRequired, "1"};
    auto r = engine.place(job);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    ASSERT_TRUE(r->fit) << r->reason;
    EXPECT_EQ(leaves(*r), (std::set<std::string>{"leaf-b"}));
    // 12 of leaf-b's 12 GPUs are now used: a second identical job fits in no leaf.
    auto again = engine.place(job);
    ASSERT_TRUE(again.has_value());
    EXPECT_FALSE(again->fit);
    EXPECT_NE(again->reason.find("together"), std::string::npos) << again->reason;
    // ... and took nothing: a 2-pod trainer alone still fits in leaf-a.
    auto alone = engine.place({"alone", {task("trainer", 2)}});
    ASSERT_TRUE(alone.has_value() && alone->fit);
    EXPECT_EQ(leaves(*alone), (std::set<std::string>{"leaf-a"}));
  }
}

// Job-level topology and fabric health: leaf-a (FabricDegraded) comes first in tree order and holds
// the job, as leaf-b does when its b1 has 8 GPUs; the job goes to the healthy leaf unless health is
// ignored. With b1 GPU-less only leaf-a holds the 12 GPUs: prefer-healthy uses it and says so,
// exclude leaves it out and names it.
TEST(PlacementEngine, JobLevelTopologyPrefersHealthyDomainsAndExcludeNamesTheDegradedOne) {
  auto build = [](std::int64_t b1_gpus) {
    return TopologyIndex::from_hypernodes(
        {{"leaf-a",
          1,
          "",
          {exact_node("a1"), exact_node("a2")},
          DomainFabricHealth{
              true, "MissingUplinks", "leaf-a - spine: MissingUplinks, 1 uplink, expected 2 uplinks", {}}},
         {"leaf-b", 1, "", {exact_node("b1"), exact_node("b2")}},
         {"spine", 2, "", {exact_hn("leaf-a"), exact_hn("leaf-b")}}},
        {node("a1", 64000, 8), node("a2", 64000, 8), node("b1", 64000, b1_gpus), node("b2", 64000, 8)}, {});
  };
  auto task = [](std::string name, std::int32_t count) {
    PodSetRequest ps;
    ps.name = std::move(name);
    ps.count = count;
    ps.per_pod = {{"nvidia.com/gpu", 4}};
    ps.mode = TopologyMode::kRequired;
    ps.level = "1";
    return ps;
  };
  const JobRequest job{"together", {task("trainer", 2), task("ps", 1)}, TopologyMode::kRequired, "1"};
  auto leaf_of = [](const JobPlacement& p) {
    return p.pod_sets.front().assignment.front().domain_path.back();
  };
  for (const auto& [mode, expected] : {std::pair{FabricHealthMode::kPreferHealthy, "leaf-b"},
                                       std::pair{FabricHealthMode::kIgnore, "leaf-a"}}) {
    auto index = build(8);
    ASSERT_TRUE(index.has_value());
    PlacementEngine engine(*index, gpu_weights(), mode);
    auto r = engine.place(job);
    ASSERT_TRUE(r.has_value() && r->fit) << to_string(mode);
    EXPECT_EQ(leaf_of(*r), expected) << to_string(mode);
  }
  {
    auto index = build(0);
    ASSERT_TRUE(index.has_value());
    PlacementEngine engine(*index, gpu_weights());
    auto r = engine.place(job);
    ASSERT_TRUE(r.has_value() && r->fit);
    EXPECT_EQ(leaf_of(*r), "leaf-a");
    ASSERT_FALSE(r->pod_sets[1].fabric_health.empty());
    EXPECT_EQ(
        r->pod_sets[1].fabric_health.front(),
        "job domain leaf-a is degraded (FabricDegraded MissingUplinks: leaf-a - spine: MissingUplinks, 1 "
        "uplink, expected 2 uplinks): no healthy domain at tier 1 holds the job");
  }
  {
    auto index = build(0);
    ASSERT_TRUE(index.has_value());
    PlacementEngine engine(*index, gpu_weights(), FabricHealthMode::kExclude);
    auto r = engine.place(job);
    ASSERT_TRUE(r.has_value());
    EXPECT_FALSE(r->fit);
    EXPECT_EQ(
        r->reason,
        "no domain at tier <= 1 holds all 2 pod sets of job together together; degraded HyperNodes left out "
        "(fabric health mode exclude): leaf-a (FabricDegraded MissingUplinks)");
  }
}

}  // namespace
}  // namespace hypertopo::scheduler
