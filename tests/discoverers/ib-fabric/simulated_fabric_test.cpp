#include "discoverers/ib-fabric/simulated_fabric.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "discoverers/demo/demo_fabric.h"
#include "discoverers/ib-fabric/child_process.h"
#include "discoverers/ibnetdiscover/ibnetdiscover_parser.h"
#include "tests/support/fixtures.h"
#include "topology/tree_builder.h"

namespace hypertopo::discoverers::ib_fabric {
namespace {

using hypertopo::testing::TempDir;

const std::vector<std::string> kWalker = {HT_IB_WALKER};

#define HT_REQUIRE_IBSIM() HT_REQUIRE(simulator_missing().empty(), "ibsim: " + simulator_missing())

bool socket_listed(const std::string& name) {
  std::ifstream in("/proc/net/unix");
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("@" + name + ":ctl") != std::string::npos) return true;
  }
  return false;
}

const char* kTwoSwitches =
    "Switch 8 \"S1\" # \"leaf one\"\n"
    "[1] \"H1\"[1]\n"
    "[3] \"S2\"[3]\n"
    "\n"
    "Switch 8 \"S2\" # \"spine one\"\n"
    "[3] \"S1\"[3]\n"
    "\n"
    "Hca 1 \"H1\" # \"node-1 mlx5_0\"\n"
    "[1] \"S1\"[1]\n";

TEST(ChildProcess, ReportsExitCodesMissingProgramsAndOverruns) {
  ChildSpec ok{.argv = {"sh", "-c", "exit 3"}, .env = environment_with({})};
  auto r = run_child(ok, std::chrono::seconds(10));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->timed_out);

  ChildSpec missing{.argv = {"/nonexistent/hypertopo-walker"}, .env = environment_with({})};
  auto m = run_child(missing, std::chrono::seconds(10));
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message().find("/nonexistent/hypertopo-walker"), std::string::npos);

  // A child that never ends is stopped at the limit (the limit, not a sleep, ends this test).
  ChildSpec stuck{.argv = {"sh", "-c", "while :; do :; done"}, .env = environment_with({})};
  auto s = run_child(stuck, std::chrono::milliseconds(50));
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->timed_out);
}

TEST(ChildProcess, EnvironmentOverridesReplaceAndRemoveKeys) {
  setenv("HT_TEST_KEEP", "1", 1);
  setenv("HT_TEST_DROP", "1", 1);
  auto env = environment_with({{"HT_TEST_DROP", ""}, {"HT_TEST_NEW", "x"}});
  auto has = [&](const std::string& e) { return std::find(env.begin(), env.end(), e) != env.end(); };
  EXPECT_TRUE(has("HT_TEST_KEEP=1"));
  EXPECT_FALSE(has("HT_TEST_DROP=1"));
  EXPECT_TRUE(has("HT_TEST_NEW=x"));
  unsetenv("HT_TEST_KEEP");
  unsetenv("HT_TEST_DROP");
}

TEST(SimulatedFabric, MissingSimulatorIsUnavailable) {
  SimulatorOptions options;
  options.ibsim = "/nonexistent/ibsim";
  auto sim = SimulatedFabric::start(kTwoSwitches, options);
  ASSERT_FALSE(sim.has_value());
  EXPECT_EQ(sim.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(sim.error().message().find("ibsim"), std::string::npos);
}

TEST(SimulatedFabric, BrokenNetFileFailsWithTheSimulatorsReason) {
  HT_REQUIRE_IBSIM();
  auto sim = SimulatedFabric::start("Switch 8 \"S1\"\n[1] \"nowhere\"[1]\n");
  ASSERT_FALSE(sim.has_value());
  EXPECT_EQ(sim.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(sim.error().message().find("nowhere"), std::string::npos) << sim.error().message();
}

TEST(SimulatedFabric, ServesWalksTakesCommandsAndAlwaysStops) {
  HT_REQUIRE_IBSIM();
  std::string socket;
  {
    auto sim = SimulatedFabric::start(kTwoSwitches);
    ASSERT_TRUE(sim.has_value()) << sim.error().message();
    socket = (*sim)->socket_name();
    EXPECT_TRUE(socket_listed(socket));
    EXPECT_EQ((*sim)->attach_node(), "H1");

    auto g = (*sim)->walk(kWalker);
    ASSERT_TRUE(g.has_value()) << g.error().message();
    EXPECT_EQ(g->switch_count(), 2u);
    EXPECT_EQ(g->endpoint_count(), 1u);
    EXPECT_EQ(g->links().size(), 2u);
    auto hca = g->find("0x0000000000100001");  // ibsim's first CA: node GUID 0x100000, port 1
    ASSERT_TRUE(hca.has_value());
    EXPECT_EQ(g->vertex(*hca).description, "node-1 mlx5_0");
    EXPECT_EQ(g->vertex(*hca).node_guid, "0x0000000000100000");
    EXPECT_EQ(g->vertex(*hca).port, 1);

    // Pull the leaf-spine cable: the spine drops out of the next walk.
    ASSERT_TRUE((*sim)->unlink("S1", 3).has_value());
    auto after = (*sim)->walk(kWalker);
    ASSERT_TRUE(after.has_value()) << after.error().message();
    EXPECT_EQ(after->switch_count(), 1u);
    ASSERT_TRUE((*sim)->link("S1", 3, "S2", 3).has_value());
    auto again = (*sim)->walk(kWalker);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->switch_count(), 2u);

    auto refused = (*sim)->command("Link \"S1\"[3] \"S2\"[3]");
    ASSERT_FALSE(refused.has_value()) << "the port is already linked";
    EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_FALSE((*sim)->command("Unlink \"S1\"[3]\nQuit").has_value());

    (*sim)->stop();
    EXPECT_FALSE((*sim)->running());
    EXPECT_FALSE((*sim)->walk(kWalker).has_value()) << "a stopped simulator serves no walks";
  }
  EXPECT_FALSE(socket_listed(socket));

  {
    auto sim = SimulatedFabric::start(kTwoSwitches);
    ASSERT_TRUE(sim.has_value());
    socket = (*sim)->socket_name();
    EXPECT_TRUE(socket_listed(socket));
  }  // the destructor alone stops it
  EXPECT_FALSE(socket_listed(socket));
}

TEST(SimulatedFabric, WalkerFailuresAreReported) {
  HT_REQUIRE_IBSIM();
  auto sim = SimulatedFabric::start(kTwoSwitches);
  ASSERT_TRUE(sim.has_value());
  auto missing = (*sim)->walk({"/nonexistent/walker"});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("/nonexistent/walker"), std::string::npos)
      << missing.error().message();
  auto wrong_ca = (*sim)->walk(kWalker, {.ca_name = "mlx5_9", .timeout_ms = 100, .retries = 1});
  ASSERT_FALSE(wrong_ca.has_value());
  EXPECT_NE(wrong_ca.error().message().find("mlx5_9"), std::string::npos) << wrong_ca.error().message();
}

TEST(SimulatedFabric, ShippedExampleMatchesStockIbnetdiscover) {
  HT_REQUIRE_IBSIM();
  HT_REQUIRE_FIXTURE(netfile, "ibsim/ibsim-net.txt");
  auto sim = SimulatedFabric::start_file(netfile);
  ASSERT_TRUE(sim.has_value()) << sim.error().message();
  auto walked = (*sim)->walk(kWalker);
  ASSERT_TRUE(walked.has_value()) << walked.error().message();
  auto text = (*sim)->capture_ibnetdiscover();
  ASSERT_TRUE(text.has_value()) << text.error().message();
  auto parsed = parse_ibnetdiscover(*text, "ibnetdiscover");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message();
  EXPECT_EQ(walked->switch_count(), 2u);
  EXPECT_EQ(walked->endpoint_count(), 2u);
  EXPECT_EQ(walked->switch_count(), parsed->graph.switch_count());
  EXPECT_EQ(walked->endpoint_count(), parsed->graph.endpoint_count());
  EXPECT_EQ(walked->links().size(), parsed->graph.links().size());
  for (const auto& v : walked->vertices()) {
    auto other = parsed->graph.find(v.id);
    ASSERT_TRUE(other.has_value()) << v.id;
    EXPECT_EQ(parsed->graph.vertex(*other).description, v.description);
  }
}

// The built-in demo fabric, simulated and walked live as `--source demo` does when ibsim is there.
TEST(SimulatedFabric, DemoFabricWalksLiveIntoTheSameFabric) {
  HT_REQUIRE_IBSIM();
  DemoFabricSpec spec;
  auto model = generate_demo_fabric(spec);
  auto live = walk_simulated_graph(model, kWalker);
  ASSERT_TRUE(live.has_value()) << live.error().message();
  for (const auto& note : live->netfile.notes) ADD_FAILURE() << "not simulated exactly: " << note;
  EXPECT_EQ(live->graph.switch_count(), model.switch_count());
  EXPECT_EQ(live->graph.endpoint_count(), model.endpoint_count());
  EXPECT_EQ(live->graph.links().size(), model.links().size());
  std::size_t aggregation = 0;
  for (const auto& v : live->graph.vertices()) aggregation += v.aggregation_node ? 1 : 0;
  std::size_t model_aggregation = 0;
  for (const auto& v : model.vertices()) model_aggregation += v.aggregation_node ? 1 : 0;
  EXPECT_EQ(aggregation, model_aggregation) << "SHARP nodes are CAs to ibsim and come back marked";

  auto builder = topology::TreeBuilder::create(demo_builder_options());
  ASSERT_TRUE(builder.has_value());
  auto tree = builder->build(live->graph);
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  auto shape = expected_demo_shape(spec);
  int tiers[4] = {0, 0, 0, 0};
  for (const auto& d : tree->domains()) {
    if (d.tier >= 1 && d.tier <= 3) ++tiers[d.tier];
  }
  EXPECT_EQ(tiers[1], shape.tier1);
  EXPECT_EQ(tiers[2], shape.tier2);
  EXPECT_EQ(tiers[3], shape.tier3);
  EXPECT_EQ(tree->report.aggregation_nodes, model_aggregation);
}

}  // namespace
}  // namespace hypertopo::discoverers::ib_fabric
