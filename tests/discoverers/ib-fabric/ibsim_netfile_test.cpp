#include "discoverers/ib-fabric/ibsim_netfile.h"

#include <gtest/gtest.h>

#include <sstream>

namespace hypertopo::discoverers::ib_fabric {
namespace {

using topology::FabricGraph;

std::string write(const FabricGraph& g, IbsimNetfileSummary* summary = nullptr,
                  IbsimNetfileOptions options = {}) {
  std::ostringstream out;
  auto s = write_ibsim_netfile(g, out, options);
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().message());
  if (s && summary) *summary = *s;
  return out.str();
}

TEST(IbsimNetfile, WritesSwitchAndCaBlocksWithGuidsPortsAndRates) {
  FabricGraph g;
  auto leaf = g.add_switch("0x2c5eab0300b87b40", "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1");
  auto hca = g.add_endpoint("0xe09d7303007a4bd8", "a08-p1-dgx-04-c01 mlx5_5");
  g.add_link(leaf, 17, hca, 1, "4xNDR");
  IbsimNetfileSummary summary;
  std::string text = write(g, &summary);
  EXPECT_NE(text.find("switchguid=0x2c5eab0300b87b40\nSwitch\t17 \"S-2c5eab0300b87b40\"\t# "
                      "\"MF0;A09-P1-IBLEAF-04-04:MQM9701/U1\"\n[17]\t\"H-e09d7303007a4bd7\"[1] w=3 s=7\n"),
            std::string::npos)
      << text;
  // The CA's node GUID is the port GUID minus the port number, as ibsim numbers ports.
  EXPECT_NE(
      text.find("caguid=0xe09d7303007a4bd7\nHca\t1 \"H-e09d7303007a4bd7\"\t# \"a08-p1-dgx-04-c01 mlx5_5\"\n"
                "[1]\t\"S-2c5eab0300b87b40\"[17] w=3 s=7\n"),
      std::string::npos)
      << text;
  EXPECT_LT(text.find("Switch\t"), text.find("Hca\t"));
  EXPECT_EQ(summary.switches, 1u);
  EXPECT_EQ(summary.cas, 1u);
  EXPECT_EQ(summary.links, 1u);
  EXPECT_EQ(summary.ports, 18u + 1u);
  EXPECT_EQ(summary.first_ca, "H-e09d7303007a4bd7");
  EXPECT_EQ(summary.node_ids.at("0x2c5eab0300b87b40"), "S-2c5eab0300b87b40");
  EXPECT_TRUE(summary.notes.empty());

  std::string roomy = write(g, nullptr, {.min_switch_ports = 40});
  EXPECT_NE(roomy.find("Switch\t40 \"S-2c5eab0300b87b40\""), std::string::npos) << roomy;
  EXPECT_NE(roomy.find("Hca\t1 "), std::string::npos) << "CAs keep their port count";
}

TEST(IbsimNetfile, RatesMapToWhatIbsimCanSimulate) {
  FabricGraph g;
  auto s = g.add_switch("0x10", "s");
  const char* rates[] = {"1xSDR", "4xDDR", "12xQDR", "8xHDR", "4xNDR", "", "bogus", "2xNDR"};
  const char* expected[] = {" w=1 s=1", " w=3 s=3", " w=11 s=7", " w=7 s=7", " w=3 s=7", "", "", ""};
  for (int i = 0; i < 8; ++i) {
    auto e = g.add_endpoint("0x" + std::to_string(1001 + 2 * i), "h" + std::to_string(i) + " mlx5_0");
    g.add_link(s, i + 1, e, 1, rates[i]);
  }
  std::string text = write(g);
  for (int i = 0; i < 8; ++i) {
    std::string line = "[" + std::to_string(i + 1) + "]\t\"H-";
    auto pos = text.find(line);
    ASSERT_NE(pos, std::string::npos);
    auto end = text.find('\n', pos);
    std::string port_line = text.substr(pos, end - pos);
    EXPECT_TRUE(port_line.ends_with("[1]" + std::string(expected[i]))) << rates[i] << ": " << port_line;
  }
}

TEST(IbsimNetfile, DescriptionsAreQuotedSafelyAndCutToTheNodeDescriptionSize) {
  FabricGraph g;
  auto s = g.add_switch("0x10", std::string("spine \"A\"\tone ") + std::string(80, 'x'));
  auto e = g.add_endpoint("0x21", "h1 mlx5_0");
  g.add_link(s, 1, e, 1);
  IbsimNetfileSummary summary;
  std::string text = write(g, &summary);
  std::string expected = "# \"spine 'A' one " + std::string(kIbsimMaxDescriptionBytes - 14, 'x') + "\"\n";
  EXPECT_NE(text.find(expected), std::string::npos) << text;
  ASSERT_EQ(summary.notes.size(), 1u);
  EXPECT_NE(summary.notes[0].find("cut to 63 bytes"), std::string::npos);
}

TEST(IbsimNetfile, AggregationNodesAreKeptOrLeftOut) {
  FabricGraph g;
  auto s = g.add_switch("0x10", "leaf");
  auto an = g.add_endpoint("0x31", "MF0;leaf:MQM9700/U1 Aggregation Node");
  g.vertex(an).aggregation_node = true;
  auto e = g.add_endpoint("0x21", "h1 mlx5_0");
  g.add_link(s, 1, an, 1);
  g.add_link(s, 2, e, 1);
  IbsimNetfileSummary kept;
  EXPECT_NE(write(g, &kept).find("Aggregation Node"), std::string::npos);
  EXPECT_EQ(kept.cas, 2u);
  EXPECT_EQ(kept.first_ca, "H-0000000000000020") << "an aggregation node is no place to attach a client";

  IbsimNetfileSummary left;
  std::string text = write(g, &left, {.include_aggregation_nodes = false});
  EXPECT_EQ(text.find("Aggregation Node"), std::string::npos);
  EXPECT_EQ(text.find("H-0000000000000030"), std::string::npos)
      << "the switch port of the left-out node stays unconnected";
  EXPECT_EQ(left.cas, 1u);
  EXPECT_EQ(left.omitted_aggregation_nodes, 1u);
}

TEST(IbsimNetfile, SelfLoopsConflictsAndUnnumberedPortsAreHandled) {
  FabricGraph g;
  auto a = g.add_switch("0x10", "a");
  auto b = g.add_switch("0x11", "b");
  g.add_link(a, 1, a, 2);  // self-loop
  g.add_link(a, 3, b, 3);
  g.add_link(a, 3, b, 4);  // port 3 on a is taken
  g.add_link(a, 0, b, 0);  // no port numbers (LLDP-like): next free ports
  IbsimNetfileSummary summary;
  std::string text = write(g, &summary);
  EXPECT_NE(text.find("[3]\t\"S-0000000000000011\"[3]"), std::string::npos) << text;
  EXPECT_NE(text.find("[1]\t\"S-0000000000000011\"[1]"), std::string::npos) << text;
  EXPECT_EQ(summary.links, 2u);
  EXPECT_EQ(summary.notes.size(), 2u);
}

TEST(IbsimNetfile, NonGuidIdsGetSyntheticGuids) {
  FabricGraph g;
  auto s = g.add_switch("leaf-a", "leaf-a");
  auto e = g.add_endpoint("aa:bb:cc:dd:ee:ff", "h1 eth0");
  g.add_link(s, 1, e, 1);
  IbsimNetfileSummary summary;
  write(g, &summary);
  EXPECT_TRUE(summary.node_ids.at("leaf-a").starts_with("S-fe"));
  EXPECT_TRUE(summary.node_ids.at("aa:bb:cc:dd:ee:ff").starts_with("H-fe"));
  EXPECT_NE(summary.node_ids.at("leaf-a").substr(2), summary.node_ids.at("aa:bb:cc:dd:ee:ff").substr(2));
}

TEST(IbsimNetfile, RejectsWhatIbsimCannotSimulate) {
  {
    FabricGraph g;
    auto s = g.add_switch("0x10", "wide");
    auto e = g.add_endpoint("0x21", "h1 mlx5_0");
    g.add_link(s, 300, e, 1);
    std::ostringstream out;
    auto r = write_ibsim_netfile(g, out);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message().find("255"), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find("0x10"), std::string::npos);
  }
  {
    // A CA whose node GUID (port GUID - 1) is a switch's GUID.
    FabricGraph g;
    auto s = g.add_switch("0x20", "leaf");
    auto e = g.add_endpoint("0x21", "h1 mlx5_0");
    g.add_link(s, 1, e, 1);
    std::ostringstream out;
    auto r = write_ibsim_netfile(g, out);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find("share node GUID"), std::string::npos) << r.error().message();
  }
}

}  // namespace
}  // namespace hypertopo::discoverers::ib_fabric
