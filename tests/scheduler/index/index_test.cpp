// Quantities, the TopologyIndex from HyperNodes and from label levels, and incremental sums.
#include <gtest/gtest.h>

#include "scheduler/index/quantity.h"
#include "scheduler/index/topology_index.h"

namespace hypertopo::scheduler {
namespace {

TEST(Quantity, ParsesKubernetesForms) {
  EXPECT_EQ(parse_quantity("cpu", "1500m").value(), 1500);
  EXPECT_EQ(parse_quantity("cpu", "2").value(), 2000);
  EXPECT_EQ(parse_quantity("cpu", "0.5").value(), 500);
  EXPECT_EQ(parse_quantity("cpu", "100u").value(), 1);  // rounds up to a whole millicore
  EXPECT_EQ(parse_quantity("memory", "64Gi").value(), 64LL << 30);
  EXPECT_EQ(parse_quantity("memory", "1.5Ki").value(), 1536);
  EXPECT_EQ(parse_quantity("memory", "128974848").value(), 128974848);
  EXPECT_EQ(parse_quantity("memory", "129e6").value(), 129000000);
  EXPECT_EQ(parse_quantity("memory", "123M").value(), 123000000);
  EXPECT_EQ(parse_quantity("memory", "2k").value(), 2000);
  EXPECT_EQ(parse_quantity("nvidia.com/gpu", "8").value(), 8);
  EXPECT_EQ(parse_quantity("ephemeral-storage", "1Ti").value(), 1LL << 40);
}

TEST(Quantity, RejectsMalformedWithTheResourceName) {
  for (const char* bad : {"", "abc", "12XB", "1.2.3", "--1", "1e", "5Qi"}) {
    auto q = parse_quantity("memory", bad);
    ASSERT_FALSE(q.has_value()) << bad;
    EXPECT_NE(q.error().message().find("memory: malformed quantity"), std::string::npos)
        << q.error().message();
  }
  EXPECT_FALSE(parse_quantity("cpu", "-1").has_value());
  EXPECT_FALSE(parse_quantity("memory", "99999999999Ei").has_value());
  auto list = parse_resource_list({{"cpu", "2"}, {"nvidia.com/gpu", "eight"}});
  ASSERT_FALSE(list.has_value());
  EXPECT_NE(list.error().message().find("nvidia.com/gpu"), std::string::npos);
}

TEST(Quantity, FormatsBack) {
  EXPECT_EQ(format_quantity("cpu", 1500), "1500m");
  EXPECT_EQ(format_quantity("cpu", 4000), "4");
  EXPECT_EQ(format_quantity("memory", 64LL << 30), "64Gi");
  EXPECT_EQ(format_quantity("nvidia.com/gpu", 8), "8");
}

NodeSpec node(std::string name, std::map<std::string, std::string> labels, std::int64_t gpus) {
  NodeSpec n;
  n.name = std::move(name);
  n.labels = std::move(labels);
  n.allocatable = {{"cpu", 64000}, {"pods", 110}, {"nvidia.com/gpu", gpus}};
  return n;
}

HyperNodeMember node_member(MemberSelector s) { return {HyperNodeMember::Type::kNode, std::move(s)}; }
HyperNodeMember hn_member(std::string name) {
  return {HyperNodeMember::Type::kHyperNode, MemberSelector::exact(std::move(name))};
}

// The cluster is the root, one tier above the highest HyperNode: the highest tier the reader lets
// through leaves it room, the top int gives no room and is refused, and a tier asked for by number is
// checked against the root's tier without overflowing (it once read "outside 0..-2147483648").
TEST(TopologyIndex, TheHighestTiersKeepTheClusterAboveThem) {
  std::vector<NodeSpec> nodes = {node("gpu-a1", {}, 8)};
  std::vector<HyperNodeSpec> top = {
      {"leaf", 2147483646, "leaf", {node_member(MemberSelector::exact("gpu-a1"))}}};
  auto index = TopologyIndex::from_hypernodes(top, nodes, {});
  ASSERT_TRUE(index.has_value()) << index.error().message();
  EXPECT_EQ(index->domain(index->root()).tier, 2147483647);
  EXPECT_EQ(index->resolve_tier("2147483647").value(), 2147483647);
  EXPECT_EQ(index->resolve_tier("1").value(), 1);
  EXPECT_EQ(index->resolve_tier("2147483648").error().message(),
            "tier 2147483648 is outside 0..2147483647 of this topology");
  EXPECT_EQ(index->resolve_tier("99999999999999999999").error().message(),
            "tier 99999999999999999999 is outside 0..2147483647 of this topology");

  top[0].tier = 2147483647;
  auto refused = TopologyIndex::from_hypernodes(top, nodes, {});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message(),
            "HyperNode leaf: spec.tier 2147483647 leaves no tier above it for the cluster; the highest is "
            "2147483646");
}

TEST(TopologyIndex, FromHyperNodesWithEverySelectorKind) {
  std::vector<NodeSpec> nodes = {node("gpu-a1", {}, 8), node("gpu-a2", {}, 8),
                                 node("gpu-b1", {{"rack", "b"}}, 8), node("gpu-b2", {{"rack", "b"}}, 8),
                                 node("gpu-c1", {}, 4)};
  MemberSelector regex;
  regex.kind = MemberSelector::Kind::kRegex;
  regex.regex_pattern = "^gpu-a[0-9]+$";
  MemberSelector labels;
  labels.kind = MemberSelector::Kind::kLabel;
  labels.match_labels = {{"rack", "b"}};
  std::vector<HyperNodeSpec> hns = {
      {"leaf-a", 1, "leaf", {node_member(regex)}},
      {"leaf-b", 1, "leaf", {node_member(labels)}},
      {"leaf-c",
       1,
       "leaf",
       {node_member(MemberSelector::exact("gpu-c1")), node_member(MemberSelector::exact("gone"))}},
      {"spine", 2, "spine", {hn_member("leaf-a"), hn_member("leaf-b")}},
  };
  auto index = TopologyIndex::from_hypernodes(hns, nodes, {{"p1", "gpu-a1", {{"nvidia.com/gpu", 2}}}});
  ASSERT_TRUE(index.has_value()) << index.error().message();
  EXPECT_EQ(index->max_tier(), 2);
  EXPECT_EQ(index->domain(index->root()).tier, 3);
  const int spine = index->find_domain("spine");
  const int leaf_b = index->find_domain("leaf-b");
  EXPECT_EQ(index->domain(leaf_b).parent, spine);
  EXPECT_EQ(index->domain(index->find_domain("leaf-c")).parent, index->root());
  EXPECT_EQ(index->domain_allocatable(spine, "nvidia.com/gpu"), 32);
  EXPECT_EQ(index->domain_used(spine, "nvidia.com/gpu"), 2);
  EXPECT_EQ(index->domain_used(spine, "pods"), 1);
  EXPECT_EQ(index->domain_allocatable(index->root(), "nvidia.com/gpu"), 36);
  EXPECT_EQ(index->domain_path(index->node(index->find_node("gpu-b2")).domain),
            (std::vector<std::string>{"spine", "leaf-b"}));
  EXPECT_EQ(index->resolve_tier("spine").value(), 2);
  EXPECT_EQ(index->resolve_tier("1").value(), 1);
  EXPECT_FALSE(index->resolve_tier("pod").has_value());
  // Placing and releasing keeps every enclosing sum in step.
  const int b1 = index->find_node("gpu-b1");
  ASSERT_TRUE(index->add_pods(b1, {{"nvidia.com/gpu", 4}}, 2).has_value());
  EXPECT_EQ(index->domain_used(leaf_b, "nvidia.com/gpu"), 8);
  EXPECT_EQ(index->domain_used(spine, "nvidia.com/gpu"), 10);
  ASSERT_TRUE(index->add_pods(b1, {{"nvidia.com/gpu", 4}}, -2).has_value());
  EXPECT_EQ(index->domain_used(spine, "nvidia.com/gpu"), 2);
}

// Node names are found through the index's own open-addressing table: every node by its name,
// nothing by a prefix, an extension or an unknown name, and a node listed twice is refused.
TEST(TopologyIndex, FindsEveryNodeByNameAndNoOther) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 3000; ++i) nodes.push_back(node("n" + std::to_string(i * 7), {}, 8));
  auto index = TopologyIndex::from_hypernodes(std::vector<HyperNodeSpec>{}, nodes, {});
  ASSERT_TRUE(index.has_value()) << index.error().message();
  ASSERT_EQ(index->nodes().size(), nodes.size());
  for (std::size_t id = 0; id < index->nodes().size(); ++id) {
    EXPECT_EQ(index->find_node(index->node(static_cast<int>(id)).spec.name), static_cast<int>(id));
  }
  EXPECT_EQ(index->node(index->find_node("n14")).spec.name, "n14");
  for (const char* other : {"n1", "n15", "n140000", "n", "x14", "n14 "})
    EXPECT_EQ(index->find_node(other), -1);
  nodes.push_back(node("n70", {}, 8));
  auto twice = TopologyIndex::from_hypernodes(std::vector<HyperNodeSpec>{}, nodes, {});
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().message(), "node n70 is listed twice");
  auto twice_by_level = TopologyIndex::from_levels({.levels = {"rack"}}, nodes, {});
  ASSERT_FALSE(twice_by_level.has_value());
  EXPECT_EQ(twice_by_level.error().message(), "node n70 is listed twice");
}

// tier_domains(node) holds, from the lowest tier up to the root's, the domain the walk up the tree
// meets at that tier: -1 for a tier the node's branch skips.
TEST(TopologyIndex, TierDomainsFollowTheTreeAndSkipMissingTiers) {
  std::vector<NodeSpec> nodes = {node("a1", {}, 8), node("a2", {}, 8), node("b1", {}, 8),
                                 node("loose", {}, 8)};
  std::vector<HyperNodeSpec> hns = {
      {"leaf-a", 1, "", {node_member(MemberSelector::exact("a1")), node_member(MemberSelector::exact("a2"))}},
      {"spine", 3, "", {hn_member("leaf-a"), node_member(MemberSelector::exact("b1"))}},
  };
  auto index = TopologyIndex::from_hypernodes(hns, nodes, {});
  ASSERT_TRUE(index.has_value()) << index.error().message();
  EXPECT_EQ(index->lowest_tier(), 1);
  const int leaf = index->find_domain("leaf-a"), spine = index->find_domain("spine"), root = index->root();
  EXPECT_EQ(index->domain(root).tier, 4);
  using Row = std::vector<int>;
  auto row = [&](const char* name) {
    const auto span = index->tier_domains(index->find_node(name));
    return Row(span.begin(), span.end());
  };
  EXPECT_EQ(row("a1"), (Row{leaf, -1, spine, root}));
  EXPECT_EQ(row("a2"), (Row{leaf, -1, spine, root}));
  EXPECT_EQ(row("b1"), (Row{-1, -1, spine, root}));
  EXPECT_EQ(row("loose"), (Row{-1, -1, -1, root}));
}

TEST(TopologyIndex, RejectsInconsistentHyperNodes) {
  std::vector<NodeSpec> nodes = {node("n1", {}, 8)};
  auto missing = TopologyIndex::from_hypernodes({{"s", 2, "", {hn_member("nope")}}}, nodes, {});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("nope does not exist"), std::string::npos);
  auto same_tier = TopologyIndex::from_hypernodes({{"a", 1, "", {node_member(MemberSelector::exact("n1"))}},
                                                   {"b", 1, "", {node_member(MemberSelector::exact("n1"))}}},
                                                  nodes, {});
  ASSERT_FALSE(same_tier.has_value());
  EXPECT_NE(same_tier.error().message().find("same tier"), std::string::npos);
  auto upside_down = TopologyIndex::from_hypernodes(
      {{"a", 2, "", {node_member(MemberSelector::exact("n1"))}}, {"b", 1, "", {hn_member("a")}}}, nodes, {});
  ASSERT_FALSE(upside_down.has_value());
}

TEST(TopologyIndex, FromKueueLevels) {
  std::vector<NodeSpec> nodes = {
      node("x1", {{"block", "b1"}, {"rack", "r1"}, {kHostnameLabel, "x1"}}, 8),
      node("x2", {{"block", "b1"}, {"rack", "r2"}, {kHostnameLabel, "x2"}}, 8),
      node("x3", {{"block", "b2"}, {"rack", "r1"}, {kHostnameLabel, "x3"}}, 8),
      node("unlabelled", {}, 8),
  };
  auto index = TopologyIndex::from_levels({"default", {"block", "rack", kHostnameLabel}}, nodes, {});
  ASSERT_TRUE(index.has_value()) << index.error().message();
  EXPECT_EQ(index->max_tier(), 2);
  EXPECT_EQ(index->resolve_tier("block").value(), 2);
  EXPECT_EQ(index->resolve_tier(kHostnameLabel).value(), 0);
  // Rack r1 under b1 and r1 under b2 are different domains.
  EXPECT_GE(index->find_domain("b1/r1"), 0);
  EXPECT_GE(index->find_domain("b2/r1"), 0);
  EXPECT_EQ(index->domain_allocatable(index->find_domain("b1"), "nvidia.com/gpu"), 16);
  EXPECT_EQ(index->node(index->find_node("unlabelled")).domain, index->root());
}

}  // namespace
}  // namespace hypertopo::scheduler
