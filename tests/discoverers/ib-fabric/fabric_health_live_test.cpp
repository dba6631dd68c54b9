// Fabric health from live walks of ibsim: a leaf uplink that trained at 1x, and an uplink pulled
// between two walks and put back, as the tree and `hypertopo discover -o tree` show them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "discoverers/ib-fabric/fabric_walk.h"
#include "discoverers/ib-fabric/simulated_fabric.h"
#include "tests/support/fixtures.h"
#include "tests/support/ibsim/ibsim_fabrics.h"
#include "topology/tree_builder.h"

namespace hypertopo {
namespace {

namespace ibf = discoverers::ib_fabric;

const std::vector<std::string> kWalker = {HT_IB_WALKER};

#define HT_REQUIRE_SIMULATOR() \
  HT_REQUIRE(ibf::simulator_missing().empty(), "ibsim: " + ibf::simulator_missing())

// Three leaves with two hosts each, every leaf cabled to both spines (leaf port 3 to spine-1, port 4
// to spine-2). `w=1` on both ends of leaf-2's link to spine-1 makes ibsim train it at one lane.
std::string netfile(bool narrow_uplink) {
  testing::HealthFabricSpec spec;
  if (narrow_uplink) spec.narrow_uplinks = {{2, 1}};
  return testing::health_fabric_netfile(spec);
}

topology::Tree build(const topology::FabricGraph& graph) {
  auto builder = topology::TreeBuilder::create();
  EXPECT_TRUE(builder.has_value());
  auto tree = builder->build(graph);
  EXPECT_TRUE(tree.has_value()) << (tree ? "" : tree.error().message());
  return tree ? std::move(*tree) : topology::Tree{};
}

const topology::DomainHealth& health_of(const topology::Tree& tree, const std::string& name) {
  static const topology::DomainHealth kNone;
  auto id = tree.find(name);
  EXPECT_TRUE(id.has_value()) << name << " is not in the tree";
  return id ? tree.domain(*id).health : kNone;
}

testing::CapturedRun discover_tree(const std::filesystem::path& cache, const std::string& output) {
  return testing::run_captured(cli::run_cli,
                               {"discover", "--source", "ibnetdisc-cache:" + cache.string(), "-o", output});
}

TEST(FabricHealthLive, UplinkTrainedAtOneLaneMarksItsLeaf) {
  HT_REQUIRE_SIMULATOR();
  auto sim = ibf::SimulatedFabric::start(netfile(true));
  ASSERT_TRUE(sim.has_value()) << sim.error().message();
  auto graph = (*sim)->walk(kWalker);
  ASSERT_TRUE(graph.has_value()) << graph.error().message();

  // The walk carries both ends' PortInfo through the child's hand-over.
  std::size_t narrow = 0, wide = 0;
  for (const auto& l : graph->links()) {
    ASSERT_TRUE(l.end_a.known() && l.end_b.known()) << l.rate;
    EXPECT_EQ(l.end_a.phys_state, 5);  // LinkUp
    EXPECT_EQ(l.end_a.speed_active, 2500u);
    if (l.end_a.width_active == 1 && l.end_b.width_active == 1) {
      ++narrow;
      EXPECT_EQ(l.rate, "1xSDR");
    } else if (l.end_a.width_active == 4) {
      ++wide;
    }
  }
  EXPECT_EQ(narrow, 1u);
  EXPECT_EQ(wide, graph->links().size() - 1);

  auto tree = build(*graph);
  const auto& leaf = health_of(tree, "leaf-leaf-2");
  ASSERT_TRUE(leaf.degraded());
  EXPECT_EQ(leaf.reason(), topology::HealthReason::kDegradedLinkWidth);
  ASSERT_EQ(leaf.bad_links.size(), 1u);
  EXPECT_EQ(leaf.bad_links[0].end_a, "leaf-2[3]");
  EXPECT_EQ(leaf.bad_links[0].end_b, "spine-1[2]");
  EXPECT_EQ(leaf.bad_links[0].seen, "1x");
  EXPECT_EQ(leaf.bad_links[0].expected, "4x");
  EXPECT_FALSE(health_of(tree, "leaf-leaf-1").degraded());
  EXPECT_FALSE(health_of(tree, "leaf-leaf-3").degraded());

  // The recorded walk replays with the same facts, and the user's command shows the reason.
  ASSERT_FALSE((*sim)->last_cache().empty());
  auto replay = ibf::load_fabric_cache((*sim)->last_cache());
  ASSERT_TRUE(replay.has_value()) << replay.error().message();
  ASSERT_EQ(replay->links().size(), graph->links().size());
  for (std::size_t i = 0; i < replay->links().size(); ++i) {
    EXPECT_EQ(replay->links()[i].end_a, graph->links()[i].end_a) << i;
    EXPECT_EQ(replay->links()[i].end_b, graph->links()[i].end_b) << i;
  }
  auto text = discover_tree((*sim)->last_cache(), "tree");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("leaf-leaf-2  [leaf]  2 nodes  DEGRADED DegradedLinkWidth (uplinks 63% healthy"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("leaf-2[3] - spine-1[2]: DegradedLinkWidth, 1x, expected 4x"), std::string::npos)
      << text.out;
  auto json = discover_tree((*sim)->last_cache(), "json");
  ASSERT_EQ(json.code, 0) << json.err;
  auto list = nlohmann::json::parse(json.out);
  std::size_t conditions = 0;
  for (const auto& item : list["items"]) {
    if (!item.contains("status")) continue;
    ++conditions;
    EXPECT_EQ(item["status"]["conditions"][0]["reason"], "DegradedLinkWidth");
  }
  EXPECT_EQ(conditions, 2u);  // the leaf, and the spine domain the link is internal to
}

TEST(FabricHealthLive, PulledUplinkIsMissingUntilItIsBack) {
  HT_REQUIRE_SIMULATOR();
  auto sim = ibf::SimulatedFabric::start(netfile(false));
  ASSERT_TRUE(sim.has_value()) << sim.error().message();
  auto before = (*sim)->walk(kWalker);
  ASSERT_TRUE(before.has_value()) << before.error().message();
  const auto healthy = build(*before);
  for (const auto& d : healthy.domains()) EXPECT_FALSE(d.health.degraded()) << d.name;

  ASSERT_TRUE((*sim)->unlink("S-leaf-3", 4).has_value());
  auto pulled = (*sim)->walk(kWalker);
  ASSERT_TRUE(pulled.has_value()) << pulled.error().message();
  auto tree = build(*pulled);
  const auto& leaf = health_of(tree, "leaf-leaf-3");
  ASSERT_TRUE(leaf.degraded());
  EXPECT_EQ(leaf.reason(), topology::HealthReason::kMissingUplinks);
  EXPECT_EQ(leaf.bad_links.at(0).end_a, "leaf-3");
  EXPECT_EQ(leaf.bad_links.at(0).end_b, "spine-2");
  EXPECT_EQ(leaf.bad_links.at(0).seen, "1 uplink");
  EXPECT_DOUBLE_EQ(leaf.uplink_healthy, 0.5);
  EXPECT_FALSE(health_of(tree, "leaf-leaf-1").degraded());
  auto text = discover_tree((*sim)->last_cache(), "tree");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("leaf-leaf-3  [leaf]  2 nodes  DEGRADED MissingUplinks"), std::string::npos)
      << text.out;

  ASSERT_TRUE((*sim)->link("S-leaf-3", 4, "S-spine-2", 3).has_value());
  auto restored = (*sim)->walk(kWalker);
  ASSERT_TRUE(restored.has_value()) << restored.error().message();
  const auto back = build(*restored);
  for (const auto& d : back.domains()) EXPECT_FALSE(d.health.degraded()) << d.name << d.health.message();
}

}  // namespace
}  // namespace hypertopo
