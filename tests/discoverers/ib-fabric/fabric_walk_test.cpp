#include "discoverers/ib-fabric/fabric_walk.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "discoverers/ib-fabric/graph_handover.h"
#include "discoverers/ib-fabric/ib_fabric_source.h"
#include "tests/support/fixtures.h"

namespace hypertopo::discoverers::ib_fabric {
namespace {

using hypertopo::testing::TempDir;
using hypertopo::testing::write_text;

TEST(RateText, FollowsPortInfoEncodings) {
  EXPECT_EQ(rate_text(2, 1, 0), "4xSDR");
  EXPECT_EQ(rate_text(2, 4, 0), "4xQDR");
  EXPECT_EQ(rate_text(8, 2, 0), "12xDDR");
  EXPECT_EQ(rate_text(2, 4, 1), "4xFDR");
  EXPECT_EQ(rate_text(2, 4, 2), "4xEDR");
  EXPECT_EQ(rate_text(4, 4, 4), "8xHDR");
  EXPECT_EQ(rate_text(2, 4, 8), "4xNDR");
  EXPECT_EQ(rate_text(16, 4, 8), "2xNDR");
  EXPECT_EQ(rate_text(1, 1, 0), "1xSDR");
  EXPECT_EQ(rate_text(3, 1, 0), "") << "a width mask, not one width";
  EXPECT_EQ(rate_text(2, 0, 0), "");
}

TEST(AggregationNode, RecognisedByItsDescription) {
  EXPECT_TRUE(is_aggregation_node_description("MF0;a09-p1-ibleaf-01:MQM9700/U1 Aggregation Node"));
  EXPECT_FALSE(is_aggregation_node_description("a08-p1-dgx-04-c01 mlx5_5"));
  EXPECT_FALSE(is_aggregation_node_description(""));
}

TEST(LoadFabricCache, MissingFileIsNotFound) {
  TempDir dir;
  auto r = load_fabric_cache(dir.path() / "absent.ibnd");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(r.error().message().find("absent.ibnd"), std::string::npos);
}

TEST(LoadFabricCache, GarbageEmptyAndTextFilesFailCleanly) {
  TempDir dir;
  const std::pair<const char*, std::string> inputs[] = {
      {"empty.ibnd", ""},
      {"text.ibnd", "Switch 8 \"S-0000000000200000\" # \"Switch1\"\n"},
      {"binary.ibnd", std::string("\x00\x01\x02\xff\xfe garbage \x7f", 16)},
  };
  for (const auto& [name, content] : inputs) {
    write_text(dir.path() / name, content);
    auto r = load_fabric_cache(dir.path() / name);
    ASSERT_FALSE(r.has_value()) << name;
    EXPECT_EQ(r.error().code(), ErrorCode::kParse) << name;
    EXPECT_NE(r.error().message().find(name), std::string::npos) << r.error().message();
  }
}

TEST(LiveWalk, FailsCleanlyWithoutAnInfinibandPort) {
  // No HCA and no simulator preload here: the walk must fail with an error, not hang or crash.
  WalkOptions options;
  options.ca_name = "no-such-hca";
  options.timeout_ms = 50;
  options.retries = 1;
  auto r = walk_fabric(options);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message().find("no-such-hca"), std::string::npos) << r.error().message();
}

TEST(GraphHandover, RoundTripsEveryFieldAndRejectsDamage) {
  topology::FabricGraph g;
  auto leaf = g.add_switch("0x2c5eab0300b87b40", "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1");
  g.vertex(leaf).system_guid = "0x2c5eab0300b87b40";
  auto hca = g.add_endpoint("0xe09d7303007a4bd8", "a08-p1-dgx-04-c01 mlx5_5");
  g.vertex(hca).node_guid = "0xe09d7303007a4bd7";
  g.vertex(hca).port = 1;
  auto an = g.add_endpoint("0x0000000000000031", "MF0;x:MQM9700/U1 Aggregation Node");
  g.vertex(an).aggregation_node = true;
  auto bare = g.add_endpoint("0x0000000000000041", "");
  g.add_link(leaf, 17, hca, 1, "4xNDR");
  g.add_link(leaf, 18, an, 1);
  g.add_link(leaf, 19, bare, 1);

  TempDir dir;
  std::ostringstream out;
  write_graph_handover(g, out);
  write_text(dir.path() / "g.graph", out.str());
  auto back = read_graph_handover(dir.path() / "g.graph");
  ASSERT_TRUE(back.has_value()) << back.error().message();
  ASSERT_EQ(back->vertex_count(), g.vertex_count());
  for (topology::VertexId v = 0; v < g.vertex_count(); ++v) {
    const auto& a = g.vertex(v);
    const auto& b = back->vertex(v);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.description, b.description);
    EXPECT_EQ(a.system_guid, b.system_guid);
    EXPECT_EQ(a.node_guid, b.node_guid);
    EXPECT_EQ(a.port, b.port);
    EXPECT_EQ(a.aggregation_node, b.aggregation_node);
  }
  ASSERT_EQ(back->links().size(), g.links().size());
  for (std::size_t i = 0; i < g.links().size(); ++i) {
    EXPECT_EQ(back->links()[i].a, g.links()[i].a);
    EXPECT_EQ(back->links()[i].port_b, g.links()[i].port_b);
    EXPECT_EQ(back->links()[i].rate, g.links()[i].rate);
  }

  const std::pair<const char*, std::string> damaged[] = {
      {"empty.graph", ""},
      {"header.graph", "something else\n"},
      {"vertex.graph", "hypertopo-fabric-graph 1\nV\tx\t0x1\n"},
      {"link.graph", "hypertopo-fabric-graph 1\nV\ts\t0x1\t-\t-\t0\t0\td\nL\t0\t1\t7\t1\t-\n"},
      {"unknown.graph", "hypertopo-fabric-graph 1\nQ\n"},
  };
  for (const auto& [name, text] : damaged) {
    write_text(dir.path() / name, text);
    auto r = read_graph_handover(dir.path() / name);
    ASSERT_FALSE(r.has_value()) << name;
    EXPECT_EQ(r.error().code(), ErrorCode::kParse) << name;
  }
  EXPECT_EQ(read_graph_handover(dir.path() / "absent").error().code(), ErrorCode::kNotFound);
}

TEST(Sources, RegisterAndValidateTheirArguments) {
  DiscovererRegistry registry;
  ASSERT_TRUE(register_ib_fabric_sources(registry).has_value());
  auto kinds = registry.kinds();
  EXPECT_EQ(kinds, (std::vector<std::string>{"ibnetdisc", "ibnetdisc-cache", "ibsim"}));
  EXPECT_FALSE(register_ib_fabric_sources(registry).has_value()) << "a second registration is a duplicate";

  DiscoveryDeps deps;
  EXPECT_TRUE(registry.create({"ibnetdisc", ""}, deps).has_value());
  EXPECT_TRUE(registry.create({"ibnetdisc", "mlx5_0:1"}, deps).has_value());
  for (const char* bad : {"mlx5_0:x", "mlx5_0:0", "mlx5_0:256", "mlx5_0:1x"}) {
    auto r = registry.create({"ibnetdisc", bad}, deps);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(registry.create({"ibnetdisc-cache", ""}, deps).has_value());
  EXPECT_FALSE(registry.create({"ibsim", ""}, deps).has_value());

  TempDir dir;
  auto source = registry.create({"ibnetdisc-cache", (dir.path() / "none.ibnd").string()}, deps);
  ASSERT_TRUE(source.has_value());
  auto found = (*source)->discover();
  ASSERT_FALSE(found.has_value());
  EXPECT_EQ(found.error().code(), ErrorCode::kNotFound);
  // The pipeline puts "source ibnetdisc-cache:PATH: " in front (once); the source names the file.
  EXPECT_NE(found.error().message().find("none.ibnd"), std::string::npos) << found.error().message();
}

}  // namespace
}  // namespace hypertopo::discoverers::ib_fabric
