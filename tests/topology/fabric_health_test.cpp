#include "topology/fabric_health.h"

#include <gtest/gtest.h>

#include "topology/hypernode.h"
#include "topology/tree_builder.h"
#include "topology/tree_text.h"

namespace hypertopo::topology {
namespace {

// 4xNDR as a Quantum-2 port reports it: 1x/2x/4x enabled and supported, Active, LinkUp.
PortFacts ndr(unsigned lanes = 4, std::uint32_t speed = 106250) {
  PortFacts f;
  f.width_active = static_cast<std::uint8_t>(lanes);
  f.width_enabled = 4;
  f.width_supported = 4;
  f.speed_active = speed;
  f.speed_enabled = 106250;
  f.speed_supported = 106250;
  f.state = 4;
  f.phys_state = 5;
  return f;
}

struct Fabric {
  FabricGraph graph;
  std::vector<VertexId> leaves, spines;
};

// `leaves` leaves with two hosts each, every leaf cabled once to every spine (port 10 + spine);
// the host named `slow_host` has its own link trained at 1x.
Fabric fat_tree(int leaves, int spines, const std::string& slow_host = "") {
  Fabric f;
  for (int s = 0; s < spines; ++s) {
    f.spines.push_back(f.graph.add_switch("0x20000000000000" + std::to_string(10 + s),
                                          "MF0;spine-" + std::to_string(s) + ":MQM9700/U1"));
  }
  for (int l = 0; l < leaves; ++l) {
    auto leaf = f.graph.add_switch("0x10000000000000" + std::to_string(10 + l),
                                   "MF0;leaf-" + std::to_string(l) + ":MQM9700/U1");
    f.leaves.push_back(leaf);
    for (int h = 0; h < 2; ++h) {
      const std::string name = "node-" + std::to_string(l) + "-" + std::to_string(h);
      auto host = f.graph.add_endpoint("0x30000000000" + std::to_string(1000 + l * 10 + h), name + " mlx5_0");
      const PortFacts end = name == slow_host ? ndr(1) : ndr();
      f.graph.add_link(leaf, h + 1, host, 1, name == slow_host ? "1xNDR" : "4xNDR", end, end);
    }
  }
  return f;
}

void cable_uplinks(Fabric& f, int skip_leaf = -1, int skip_spine = -1, PortFacts odd = {},
                   int odd_leaf = -1) {
  for (std::size_t l = 0; l < f.leaves.size(); ++l) {
    for (std::size_t s = 0; s < f.spines.size(); ++s) {
      if (static_cast<int>(l) == skip_leaf && static_cast<int>(s) == skip_spine) continue;
      const bool is_odd = static_cast<int>(l) == odd_leaf && s == 0;
      const PortFacts end = is_odd ? odd : ndr();
      f.graph.add_link(f.leaves[l], 11 + static_cast<int>(s), f.spines[s], 1 + static_cast<int>(l), "4xNDR",
                       end, end);
    }
  }
}

Tree build_assessed(const FabricGraph& graph, bool assess = true) {
  TreeBuilderOptions options;
  options.assess_health = assess;
  auto builder = TreeBuilder::create(options);
  EXPECT_TRUE(builder.has_value());
  auto tree = builder->build(graph);
  EXPECT_TRUE(tree.has_value()) << tree.error().message();
  return std::move(*tree);
}

const DomainHealth& health_of(const Tree& tree, const std::string& name) {
  auto id = tree.find(name);
  EXPECT_TRUE(id.has_value()) << name;
  return tree.domain(id.value_or(0)).health;
}

TEST(FabricHealth, HealthyFabricHasNoBadLinks) {
  auto f = fat_tree(3, 2);
  cable_uplinks(f);
  auto tree = build_assessed(f.graph);
  for (const auto& d : tree.domains()) {
    EXPECT_TRUE(d.health.assessed) << d.name;
    EXPECT_FALSE(d.health.degraded()) << d.name << ": " << d.health.message();
    EXPECT_DOUBLE_EQ(d.health.uplink_healthy, 1.0);
    EXPECT_DOUBLE_EQ(d.health.internal_healthy, 1.0);
  }
  auto list = render_hypernode_list(tree, "2026-11-24T00:00:00Z");
  for (const auto& item : list["items"]) EXPECT_FALSE(item.contains("status"));
}

TEST(FabricHealth, UplinkAtOneLaneDegradesItsLeafAndTheSpineDomain) {
  auto f = fat_tree(3, 2);
  cable_uplinks(f, -1, -1, ndr(1), /*odd_leaf=*/1);
  auto tree = build_assessed(f.graph);
  const auto& leaf = health_of(tree, "leaf-leaf-1");
  ASSERT_TRUE(leaf.degraded());
  EXPECT_EQ(leaf.reason(), HealthReason::kDegradedLinkWidth);
  ASSERT_EQ(leaf.bad_links.size(), 1u);
  EXPECT_TRUE(leaf.bad_links[0].uplink);
  EXPECT_EQ(leaf.bad_links[0].end_a, "leaf-1[11]");
  EXPECT_EQ(leaf.bad_links[0].end_b, "spine-0[2]");
  EXPECT_EQ(leaf.bad_links[0].expected, "4x");
  EXPECT_EQ(leaf.bad_links[0].seen, "1x");
  // Two uplinks of four lanes expected, five lanes there.
  EXPECT_DOUBLE_EQ(leaf.uplink_healthy, 5.0 / 8.0);
  EXPECT_DOUBLE_EQ(leaf.internal_healthy, 1.0);
  EXPECT_FALSE(health_of(tree, "leaf-leaf-0").degraded());
  EXPECT_FALSE(health_of(tree, "leaf-leaf-2").degraded());
  const auto& top = health_of(tree, "spine-spine-0");
  ASSERT_TRUE(top.degraded());
  EXPECT_FALSE(top.bad_links[0].uplink);
  EXPECT_DOUBLE_EQ(top.internal_healthy, (5.0 * 4 + 1) / 24.0);

  const std::string text = render_tree_text(tree);
  EXPECT_NE(text.find("leaf-leaf-1  [leaf]  2 nodes  DEGRADED DegradedLinkWidth (uplinks 63% healthy"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("leaf-1[11] - spine-0[2]: DegradedLinkWidth, 1x, expected 4x"), std::string::npos)
      << text;
  EXPECT_NE(render_tree_dot(tree).find("#fdae61"), std::string::npos);

  // Without the time the fabric was observed there is no condition to print (lastTransitionTime is
  // required); with it, the two degraded domains carry theirs.
  const auto untimed = render_hypernode_list(tree);
  for (const auto& item : untimed["items"]) EXPECT_FALSE(item.contains("status"));
  auto list = render_hypernode_list(tree, "2026-11-24T00:00:00Z");
  int with_status = 0;
  for (const auto& item : list["items"]) {
    if (!item.contains("status")) continue;
    ++with_status;
    const auto& c = item["status"]["conditions"][0];
    EXPECT_EQ(c["type"], "FabricDegraded");
    EXPECT_EQ(c["status"], "True");
    EXPECT_EQ(c["reason"], "DegradedLinkWidth");
    EXPECT_EQ(c["lastTransitionTime"], "2026-11-24T00:00:00Z");
    EXPECT_NE(c["message"].get<std::string>().find("leaf-1[11] - spine-0[2]"), std::string::npos);
  }
  EXPECT_EQ(with_status, 2);
}

// A host's own link is an internal link of its leaf: the leaf is degraded, the bad link names the
// host, and the rendered leaf lists it in hypertopo.io/degraded-members for placement.
TEST(FabricHealth, AHostLinkAtOneLaneNamesTheHostOnItsLeaf) {
  auto f = fat_tree(3, 2, "node-2-1");
  cable_uplinks(f);
  auto tree = build_assessed(f.graph);
  const auto& leaf = health_of(tree, "leaf-leaf-2");
  ASSERT_EQ(leaf.bad_links.size(), 1u);
  EXPECT_FALSE(leaf.bad_links[0].uplink);
  EXPECT_EQ(leaf.bad_links[0].host, "node-2-1");
  EXPECT_EQ(leaf.bad_links[0].end_a, "node-2-1[1]");
  EXPECT_FALSE(health_of(tree, "spine-spine-0").degraded());
  const auto object = render_hypernode(tree, *tree.find("leaf-leaf-2"));
  EXPECT_EQ(object["metadata"]["annotations"][kDegradedMembersAnnotation], "node-2-1");
  EXPECT_FALSE(render_hypernode(tree, *tree.find("leaf-leaf-1"))["metadata"].contains("annotations"));
  // An uplink names no host: the healthy-host tree renders without the annotation.
  auto uplink = fat_tree(3, 2);
  cable_uplinks(uplink, -1, -1, ndr(1), /*odd_leaf=*/1);
  const auto degraded_uplink = build_assessed(uplink.graph);
  EXPECT_EQ(degraded_members(degraded_uplink.domain(*degraded_uplink.find("leaf-leaf-1"))), "");
}

TEST(FabricHealth, SlowerSpeedAndLinkDownAreTheirOwnReasons) {
  auto f = fat_tree(3, 2);
  cable_uplinks(f, -1, -1, ndr(4, 53125), /*odd_leaf=*/0);
  auto slow = build_assessed(f.graph);
  EXPECT_EQ(health_of(slow, "leaf-leaf-0").reason(), HealthReason::kDegradedLinkSpeed);
  EXPECT_EQ(health_of(slow, "leaf-leaf-0").bad_links[0].seen, "HDR");
  EXPECT_EQ(health_of(slow, "leaf-leaf-0").bad_links[0].expected, "NDR");

  auto g = fat_tree(3, 2);
  PortFacts down = ndr();
  down.state = 1;
  down.phys_state = 2;
  cable_uplinks(g, -1, -1, down, /*odd_leaf=*/2);
  auto tree = build_assessed(g.graph);
  EXPECT_EQ(health_of(tree, "leaf-leaf-2").reason(), HealthReason::kLinkDown);
  EXPECT_DOUBLE_EQ(health_of(tree, "leaf-leaf-2").uplink_healthy, 0.5);
}

TEST(FabricHealth, WidthBelowWhatBothEndsEnableIsDegradedEvenWhenEverySiblingIs) {
  // Every uplink at 2x while both ends enable and support 4x: no sibling is better, the ends are.
  auto f = fat_tree(2, 1);
  for (std::size_t l = 0; l < f.leaves.size(); ++l) {
    f.graph.add_link(f.leaves[l], 11, f.spines[0], 1 + static_cast<int>(l), "2xNDR", ndr(2), ndr(2));
  }
  auto tree = build_assessed(f.graph);
  EXPECT_EQ(health_of(tree, "leaf-leaf-0").reason(), HealthReason::kDegradedLinkWidth);
  EXPECT_EQ(health_of(tree, "leaf-leaf-1").bad_links.at(0).expected, "4x");
}

TEST(FabricHealth, LeafWithFewerUplinksThanItsSiblingsMissesThem) {
  auto f = fat_tree(3, 2);
  cable_uplinks(f, /*skip_leaf=*/2, /*skip_spine=*/1);
  auto tree = build_assessed(f.graph);
  const auto& leaf = health_of(tree, "leaf-leaf-2");
  ASSERT_TRUE(leaf.degraded());
  EXPECT_EQ(leaf.reason(), HealthReason::kMissingUplinks);
  EXPECT_EQ(leaf.bad_links[0].end_a, "leaf-2");
  EXPECT_EQ(leaf.bad_links[0].end_b, "spine-1");  // what the other leaves reach and this one does not
  EXPECT_EQ(leaf.bad_links[0].expected, "2 uplinks");
  EXPECT_EQ(leaf.bad_links[0].seen, "1 uplink");
  EXPECT_DOUBLE_EQ(leaf.uplink_healthy, 0.5);
  EXPECT_FALSE(health_of(tree, "leaf-leaf-0").degraded());
}

TEST(FabricHealth, RateTextAloneIsJudgedAgainstSiblings) {
  // ibnetdiscover text gives only the rate: "1xNDR" among "4xNDR" siblings.
  auto f = fat_tree(2, 2);
  for (std::size_t l = 0; l < f.leaves.size(); ++l) {
    for (std::size_t s = 0; s < f.spines.size(); ++s) {
      f.graph.add_link(f.leaves[l], 11 + static_cast<int>(s), f.spines[s], 1 + static_cast<int>(l),
                       l == 1 && s == 1 ? "1xNDR" : "4xNDR");
    }
  }
  auto tree = build_assessed(f.graph);
  EXPECT_EQ(health_of(tree, "leaf-leaf-1").reason(), HealthReason::kDegradedLinkWidth);
  EXPECT_FALSE(health_of(tree, "leaf-leaf-0").degraded());
}

TEST(FabricHealth, CanBeTurnedOff) {
  auto f = fat_tree(3, 2);
  cable_uplinks(f, 2, 1);
  auto tree = build_assessed(f.graph, /*assess=*/false);
  for (const auto& d : tree.domains()) EXPECT_FALSE(d.health.assessed);
}

TEST(FabricHealth, RatesParse) {
  EXPECT_EQ(parse_link_rate("4xNDR")->lanes, 4u);
  EXPECT_EQ(parse_link_rate("1xSDR")->lane_mbps, 2500u);
  EXPECT_FALSE(parse_link_rate("4xWHAT").has_value());
  EXPECT_FALSE(parse_link_rate("x").has_value());
  EXPECT_FALSE(parse_link_rate("999999xNDR").has_value());
  EXPECT_EQ(parse_reason("MissingUplinks"), HealthReason::kMissingUplinks);
  EXPECT_FALSE(parse_reason("Healthy").has_value());
}

}  // namespace
}  // namespace hypertopo::topology
