#include "topology/link_history.h"

#include <gtest/gtest.h>

#include "topology/tree_builder.h"

namespace hypertopo::topology {
namespace {

// Three leaves with two hosts each under two spines; leaf-2's cable to spine-1 is there or not.
Tree build_two_spine_fabric(bool leaf2_uplink) {
  FabricGraph g;
  std::vector<VertexId> spines;
  for (int s = 0; s < 2; ++s) {
    spines.push_back(g.add_switch("0x20000000000000" + std::to_string(10 + s),
                                  "MF0;spine-" + std::to_string(s) + ":MQM9700/U1"));
  }
  for (int l = 0; l < 3; ++l) {
    auto leaf = g.add_switch("0x10000000000000" + std::to_string(10 + l),
                             "MF0;leaf-" + std::to_string(l) + ":MQM9700/U1");
    for (int h = 0; h < 2; ++h) {
      auto host = g.add_endpoint("0x30000000000" + std::to_string(1000 + l * 10 + h),
                                 "node-" + std::to_string(l) + std::to_string(h) + " mlx5_0");
      g.add_link(leaf, h + 1, host, 1, "4xNDR");
    }
    for (int s = 0; s < 2; ++s) {
      if (l == 2 && s == 1 && !leaf2_uplink) continue;
      g.add_link(leaf, 11 + s, spines[static_cast<std::size_t>(s)], 1 + l, "4xNDR");
    }
  }
  auto builder = TreeBuilder::create();
  EXPECT_TRUE(builder.has_value());
  auto tree = builder->build(g);
  EXPECT_TRUE(tree.has_value());
  return std::move(*tree);
}

const DomainHealth& leaf2(const Tree& tree) { return tree.domain(*tree.find("leaf-leaf-2")).health; }

TEST(LinkHistory, AnUplinkThatKeepsGoingAwayIsFlappingWhileItIsBack) {
  LinkHistory history({.window = 10, .min_episodes = 2});
  std::vector<Tree> seen;
  for (bool up : {true, false, true, false, true}) {
    Tree tree = build_two_spine_fabric(up);
    history.apply(tree, /*record=*/true);
    seen.push_back(std::move(tree));
  }
  // While it is away it is missing, the worse reason; the first return is not yet a pattern.
  EXPECT_EQ(leaf2(seen[1]).reason(), HealthReason::kMissingUplinks);
  EXPECT_FALSE(leaf2(seen[2]).degraded()) << leaf2(seen[2]).message();
  EXPECT_EQ(leaf2(seen[3]).reason(), HealthReason::kMissingUplinks);
  ASSERT_TRUE(leaf2(seen[4]).degraded());
  EXPECT_EQ(leaf2(seen[4]).reason(), HealthReason::kLinkFlapping);
  EXPECT_EQ(leaf2(seen[4]).message(),
            "leaf-2 - spine-1: LinkFlapping, down in 2 of the last 4 runs, expected up");
  EXPECT_FALSE(seen[4].domain(*seen[4].find("leaf-leaf-0")).health.degraded());

  // A rebuild from cached results marks it too, and changes nothing remembered.
  Tree cached = build_two_spine_fabric(true);
  EXPECT_EQ(history.apply(cached, /*record=*/false), 1u);
  EXPECT_EQ(leaf2(cached).reason(), HealthReason::kLinkFlapping);
  EXPECT_NE(leaf2(cached).message().find("2 of the last 4 runs"), std::string::npos);

  // Stable for a whole window: forgotten.
  for (int i = 0; i < 10; ++i) {
    Tree tree = build_two_spine_fabric(true);
    history.apply(tree, true);
  }
  Tree stable = build_two_spine_fabric(true);
  EXPECT_EQ(history.apply(stable, true), 0u);
  EXPECT_FALSE(leaf2(stable).degraded());
  EXPECT_EQ(history.tracked(), 0u);
}

TEST(LinkHistory, OnePullAndRestoreIsNotFlapping) {
  LinkHistory history;
  for (bool up : {true, false, true, true}) {
    Tree tree = build_two_spine_fabric(up);
    history.apply(tree, true);
    if (up) {
      EXPECT_FALSE(leaf2(tree).degraded()) << leaf2(tree).message();
    }
  }
  EXPECT_EQ(history.tracked(), 1u);
}

}  // namespace
}  // namespace hypertopo::topology
