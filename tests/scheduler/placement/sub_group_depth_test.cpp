// Trees nested as deep as a user writes them. Sub-groups (KAI's spec.subGroups, each naming its
// parent): the reader and the placer refuse a chain deeper than kMaxSubGroupDepth with an error that
// names the PodGroup and the depth, and a chain at the bound is placed; a chain 20,000 deep once
// overflowed the placer's recursion (SIGSEGV), and these tests run it in-process, so a regression
// crashes them. HyperNodes (members of type HyperNode) and Topology levels are bounded the same way
// where the index is built, before the engine walks a domain's subtree.
#include <gtest/gtest.h>

#include <algorithm>
#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scheduler/input/kai_pod_group.h"
#include "scheduler/placement/placement_engine.h"
#include "scheduler/placement/sub_group_placement.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Two 8-GPU nodes in one leaf.
std::expected<TopologyIndex, Error> one_leaf() {
  std::vector<NodeSpec> nodes;
  HyperNodeSpec leaf{"leaf", 1, "leaf", {}};
  for (const char* name : {"a", "b"}) {
    NodeSpec n;
    n.name = name;
    n.allocatable = {{"cpu", 64000}, {"pods", 110}, {"nvidia.com/gpu", 8}};
    nodes.push_back(n);
    leaf.members.push_back({HyperNodeMember::Type::kNode, MemberSelector::exact(name)});
  }
  return TopologyIndex::from_hypernodes({leaf}, nodes, {});
}

// sub-groups g1 .. g<depth>, each the child of the one before; `reversed` lists the deepest first.
json chain(std::size_t depth, bool reversed = false) {
  json groups = json::array();
  for (std::size_t i = 1; i <= depth; ++i) {
    json g{{"name", "g" + std::to_string(i)}};
    if (i > 1) g["parent"] = "g" + std::to_string(i - 1);
    groups.push_back(std::move(g));
  }
  if (reversed) std::reverse(groups.begin(), groups.end());
  return groups;
}

// A List with the KAI PodGroup serve/deep and one 1-GPU pod in sub-group `pod_sub_group`.
json kai_list(const json& sub_groups, const std::string& pod_sub_group) {
  json pod{{"kind", "Pod"},
           {"metadata",
            {{"name", "p0"},
             {"namespace", "serve"},
             {"annotations", {{"pod-group-name", "deep"}}},
             {"labels", {{"kai.scheduler/subgroup-name", pod_sub_group}}}}},
           {"spec",
            {{"containers",
              json::array({{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "1"}}}}}}})}}}};
  json group{{"apiVersion", "scheduling.run.ai/v2alpha2"},
             {"kind", "PodGroup"},
             {"metadata", {{"name", "deep"}, {"namespace", "serve"}}},
             {"spec", {{"minMember", 1}, {"subGroups", sub_groups}}}};
  return {{"kind", "List"}, {"items", json::array({group, pod})}};
}

// The neutral request the reader would make, without the reader's check: the placer's own bound.
JobRequest chain_request(std::size_t depth) {
  JobRequest job;
  job.name = "deep";
  for (std::size_t i = 1; i <= depth; ++i) {
    SubGroupRequest sg;
    sg.name = "g" + std::to_string(i);
    if (i > 1) sg.parent = "g" + std::to_string(i - 1);
    job.sub_groups.push_back(sg);
  }
  PodSetRequest ps;
  ps.name = "p";
  ps.count = 1;
  ps.per_pod = {{"nvidia.com/gpu", 1}};
  ps.sub_group = "g" + std::to_string(depth);
  job.pod_sets.push_back(ps);
  return job;
}

TEST(KaiSubGroupNesting, AChainAtTheBoundIsReadAndPlaced) {
  auto loaded =
      kai_pod_group_list(kai_list(chain(kMaxSubGroupDepth), "g" + std::to_string(kMaxSubGroupDepth)));
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message();
  ASSERT_EQ(loaded->request.sub_groups.size(), kMaxSubGroupDepth);
  auto index = one_leaf();
  ASSERT_TRUE(index.has_value()) << index.error().message();
  PlacementEngine engine(*index, BinpackWeights{});
  auto placed = place_sub_groups(engine, *index, loaded->request);
  ASSERT_TRUE(placed.has_value()) << placed.error().message();
  ASSERT_TRUE(placed->fit) << placed->reason;
  ASSERT_EQ(placed->pod_sets.size(), 1u);
  EXPECT_EQ(placed->pod_sets[0].placed, 1);
  EXPECT_EQ(index->domain_used(index->root(), "nvidia.com/gpu"), 1);
}

TEST(KaiSubGroupNesting, OneLevelPastTheBoundNamesThePodGroupAndTheDepth) {
  const std::size_t depth = kMaxSubGroupDepth + 1;
  for (bool reversed : {false, true}) {
    auto loaded = kai_pod_group_list(kai_list(chain(depth, reversed), "g1"));
    ASSERT_FALSE(loaded.has_value()) << "reversed=" << reversed;
    const std::string message = loaded.error().message();
    EXPECT_TRUE(contains(message, "PodGroup serve/deep")) << message;
    EXPECT_TRUE(contains(message, "deeper than " + std::to_string(kMaxSubGroupDepth) + " levels")) << message;
    EXPECT_TRUE(contains(
        message, "sub-group g" + std::to_string(depth) + " is " + std::to_string(depth) + " levels deep"))
        << message;
  }
}

TEST(KaiSubGroupNesting, ATwentyThousandDeepChainIsAnErrorNotACrash) {
  auto loaded = kai_pod_group_list(kai_list(chain(20'000), "g20000"));
  ASSERT_FALSE(loaded.has_value());
  EXPECT_TRUE(contains(loaded.error().message(), "PodGroup serve/deep")) << loaded.error().message();
  EXPECT_TRUE(contains(loaded.error().message(), "sub-group g20000 is 20000 levels deep"))
      << loaded.error().message();
}

TEST(KaiSubGroupNesting, ACycleOfParentsIsNamed) {
  json groups = chain(3);
  groups[0]["parent"] = "g3";
  auto loaded = kai_pod_group_list(kai_list(groups, "g1"));
  ASSERT_FALSE(loaded.has_value());
  EXPECT_TRUE(contains(loaded.error().message(), "a cycle of parents")) << loaded.error().message();
  EXPECT_TRUE(contains(loaded.error().message(), "PodGroup serve/deep")) << loaded.error().message();
}

TEST(SubGroupPlacerNesting, TheBoundHoldsForARequestMadeWithoutTheReader) {
  auto index = one_leaf();
  ASSERT_TRUE(index.has_value()) << index.error().message();
  PlacementEngine engine(*index, BinpackWeights{});
  auto at_bound = place_sub_groups(engine, *index, chain_request(kMaxSubGroupDepth));
  ASSERT_TRUE(at_bound.has_value()) << at_bound.error().message();
  EXPECT_TRUE(at_bound->fit) << at_bound->reason;
  engine.release(chain_request(kMaxSubGroupDepth), *at_bound);
  for (std::size_t depth : {kMaxSubGroupDepth + 1, std::size_t{20'000}}) {
    auto placed = place_sub_groups(engine, *index, chain_request(depth));
    ASSERT_FALSE(placed.has_value()) << depth;
    const std::string message = placed.error().message();
    // The first sub-group past the bound is named, with how deep it sits.
    EXPECT_TRUE(contains(message, "job deep: sub-group g" + std::to_string(kMaxSubGroupDepth + 1) +
                                      " is nested " + std::to_string(kMaxSubGroupDepth + 1) + " levels deep"))
        << message;
  }
  EXPECT_EQ(index->domain_used(index->root(), "nvidia.com/gpu"), 0);
}

TEST(SubGroupPlacerNesting, ALongCycleIsACycleNotADepth) {
  auto index = one_leaf();
  ASSERT_TRUE(index.has_value()) << index.error().message();
  PlacementEngine engine(*index, BinpackWeights{});
  JobRequest job = chain_request(1'000);
  job.sub_groups.front().parent = "g1000";
  auto placed = place_sub_groups(engine, *index, job);
  ASSERT_FALSE(placed.has_value());
  EXPECT_TRUE(contains(placed.error().message(), "is its own ancestor (a cycle of parents)"))
      << placed.error().message();
}

// HyperNodes h1 (tier 1, holding nodes a and b) .. h<depth> (tier depth), each a member of the next.
std::vector<HyperNodeSpec> hypernode_chain(int depth) {
  std::vector<HyperNodeSpec> out;
  for (int i = 1; i <= depth; ++i) {
    HyperNodeSpec h{"h" + std::to_string(i), i, "", {}};
    if (i == 1) {
      for (const char* n : {"a", "b"})
        h.members.push_back({HyperNodeMember::Type::kNode, MemberSelector::exact(n)});
    } else {
      h.members.push_back(
          {HyperNodeMember::Type::kHyperNode, MemberSelector::exact("h" + std::to_string(i - 1))});
    }
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<NodeSpec> two_nodes() {
  std::vector<NodeSpec> nodes;
  for (const char* name : {"a", "b"}) {
    NodeSpec n;
    n.name = name;
    n.labels = {{"kubernetes.io/hostname", name}};
    n.allocatable = {{"cpu", 64000}, {"pods", 110}, {"nvidia.com/gpu", 8}};
    nodes.push_back(n);
  }
  return nodes;
}

TEST(TopologyNesting, AHyperNodeChainAtTheBoundIsIndexedAndPlaced) {
  auto index = TopologyIndex::from_hypernodes(hypernode_chain(64), two_nodes(), {});
  ASSERT_TRUE(index.has_value()) << index.error().message();
  PlacementEngine engine(*index, BinpackWeights{});
  PodSetRequest ps;
  ps.name = "w";
  ps.count = 16;
  ps.per_pod = {{"nvidia.com/gpu", 1}};
  ps.mode = TopologyMode::kRequired;
  ps.level = "64";
  auto placed = engine.place({"j", {ps}});
  ASSERT_TRUE(placed.has_value()) << placed.error().message();
  EXPECT_TRUE(placed->fit) << placed->reason;
  EXPECT_EQ(index->domain_used(index->root(), "nvidia.com/gpu"), 16);
}

TEST(TopologyNesting, AHundredThousandDeepHyperNodeChainIsRefusedByName) {
  for (int depth : {65, 100'000}) {
    auto index = TopologyIndex::from_hypernodes(hypernode_chain(depth), two_nodes(), {});
    ASSERT_FALSE(index.has_value()) << depth;
    // The deepest is the lowest one, h1, under every other.
    EXPECT_TRUE(
        contains(index.error().message(), "HyperNode h1 is nested " + std::to_string(depth) +
                                              " HyperNodes deep (members of type HyperNode); HyperNodes nest "
                                              "at most 64 deep"))
        << index.error().message();
  }
}

TEST(TopologyNesting, ATopologyOfMoreLevelsThanItsCrdAdmitsIsRefused) {
  LevelTopologySpec topology;
  topology.name = "dc";
  for (int i = 0; i < 16; ++i) topology.levels.push_back("level-" + std::to_string(i));
  auto at_limit = TopologyIndex::from_levels(topology, two_nodes(), {});
  ASSERT_TRUE(at_limit.has_value()) << at_limit.error().message();
  topology.levels.push_back(kHostnameLabel);
  auto over = TopologyIndex::from_levels(topology, two_nodes(), {});
  ASSERT_FALSE(over.has_value());
  EXPECT_TRUE(contains(over.error().message(), "Topology dc has 17 levels; at most 16 are read"))
      << over.error().message();
}

}  // namespace
}  // namespace hypertopo::scheduler
