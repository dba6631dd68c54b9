// `ibnetdisc` without a CA: which local ports are walked, and how the walks merge. There are no
// RDMA devices here, so the local ports come from fake sysfs trees (tests/support/fake_sysfs.h)
// and the per-port walks are stand-ins returning known graphs; the live libibnetdisc walk itself is
// covered by the ibsim tests.
#include "discoverers/ib-fabric/compute_port_walk.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "discoverers/ib-fabric/ib_fabric_source.h"
#include "discoverers/ib-fabric/simulated_fabric.h"
#include "discoverers/ib-fabric/umad_ports.h"
#include "discoverers/ib-local/ib_local_probe.h"
#include "tests/support/fake_sysfs.h"
#include "tests/support/fixtures.h"

namespace hypertopo::discoverers::ib_fabric {
namespace {

using testing::FakeHca;
using testing::FakePort;
using testing::TempDir;

std::string hex_guid(int i) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "9803:9b03:0067:%04x", i);
  return buf;
}

// A DGX-like node: 8 compute HCAs (one with its port down), 2 storage HCAs, one RoCE NIC.
void write_node(const std::filesystem::path& root) {
  for (int i = 0; i < 10; ++i) {
    FakeHca hca{.name = "mlx5_" + std::to_string(i),
                .node_guid = hex_guid(i),
                .node_desc = "dgx-01 mlx5_" + std::to_string(i)};
    FakePort port;
    if (i == 3) port.state = "1: DOWN";
    hca.ports.push_back(port);
    testing::write_fake_hca(root, hca);
  }
  FakeHca roce{.name = "mlx5_10", .node_guid = hex_guid(10), .node_desc = "dgx-01 mlx5_10"};
  roce.ports.push_back(FakePort{.link_layer = "Ethernet", .lid = "0x0"});
  testing::write_fake_hca(root, roce);
}

// One rail: a leaf and `hosts` HCA ports, GUIDs offset by `rail`.
topology::FabricGraph rail_graph(int rail, int hosts) {
  topology::FabricGraph g;
  char id[24];
  std::snprintf(id, sizeof id, "0x%016x", 0x1000 + rail);
  auto leaf = g.add_switch(id, "MF0;rail-" + std::to_string(rail) + "-leaf:MQM9700/U1");
  for (int h = 0; h < hosts; ++h) {
    std::snprintf(id, sizeof id, "0x%016x", 0x100000 + rail * 0x100 + h);
    auto hca = g.add_endpoint(id, "dgx-" + std::to_string(h) + " mlx5_" + std::to_string(rail));
    g.add_link(leaf, h + 1, hca, 1, "4xNDR");
  }
  return g;
}

TEST(ComputePorts, ActiveInfinibandPortsOfNonExcludedHcas) {
  TempDir root;
  write_node(root.path());
  auto facts = ib_local::probe_ib_local({.root = root.path()});
  ASSERT_TRUE(facts.has_value()) << facts.error().message();
  auto ports = select_compute_ports(facts->hcas, {"mlx5_(8|9)"});
  ASSERT_TRUE(ports.has_value()) << ports.error().message();
  std::vector<std::string> names;
  for (const auto& p : *ports) names.push_back(p.ca + ":" + std::to_string(p.port));
  EXPECT_EQ(names, (std::vector<std::string>{"mlx5_0:1", "mlx5_1:1", "mlx5_2:1", "mlx5_4:1", "mlx5_5:1",
                                             "mlx5_6:1", "mlx5_7:1"}));
  auto all = select_compute_ports(facts->hcas, {});
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 9u);  // storage included, the DOWN port and the RoCE port never
  EXPECT_FALSE(select_compute_ports(facts->hcas, {"mlx5_("}).has_value());
}

TEST(ComputePorts, MergeIsByGuidAndIdempotent) {
  auto a = rail_graph(0, 4);
  topology::FabricGraph merged;
  merge_fabric_graph(merged, a);
  merge_fabric_graph(merged, a);  // two ports on one subnet see the same fabric
  EXPECT_EQ(merged.vertex_count(), a.vertex_count());
  EXPECT_EQ(merged.links().size(), a.links().size());
  merge_fabric_graph(merged, rail_graph(1, 4));  // another rail is another subnet
  EXPECT_EQ(merged.switch_count(), 2u);
  EXPECT_EQ(merged.endpoint_count(), 8u);
  EXPECT_EQ(merged.links().size(), 8u);
  EXPECT_EQ(merged.links().front().rate, "4xNDR");
}

TEST(ComputePorts, WalksEveryPortAndKeepsGoingPastOneFailure) {
  std::vector<LocalPort> ports = {{"mlx5_0", 1, ""}, {"mlx5_1", 1, ""}, {"mlx5_2", 1, ""}};
  std::vector<std::string> walked;
  std::vector<std::string> notes;
  auto graph = walk_compute_ports(
      ports,
      [&](const LocalPort& p) -> std::expected<topology::FabricGraph, Error> {
        walked.push_back(p.ca);
        if (p.ca == "mlx5_2") return fail(ErrorCode::kUnavailable, "umad port busy");
        return rail_graph(p.ca == "mlx5_0" ? 0 : 1, 3);
      },
      &notes);
  ASSERT_TRUE(graph.has_value()) << graph.error().message();
  EXPECT_EQ(walked, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2"}));
  EXPECT_EQ(graph->switch_count(), 2u);
  EXPECT_EQ(graph->endpoint_count(), 6u);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.front().find("mlx5_2:1"), std::string::npos) << notes.front();

  auto none =
      walk_compute_ports({}, [](const LocalPort&) { return std::expected<topology::FabricGraph, Error>(); });
  ASSERT_FALSE(none.has_value());
  auto all_fail =
      walk_compute_ports(ports, [](const LocalPort&) -> std::expected<topology::FabricGraph, Error> {
        return fail(ErrorCode::kUnavailable, "no SM");
      });
  ASSERT_FALSE(all_fail.has_value());
  EXPECT_NE(all_fail.error().message().find("mlx5_1:1: no SM"), std::string::npos)
      << all_fail.error().message();
}

TEST(ComputePorts, SourceWithoutLocalPortsSaysWhereItLooked) {
  TempDir root;
  FakeHca down{.name = "mlx5_0", .node_guid = hex_guid(0), .node_desc = "n mlx5_0"};
  down.ports.push_back(FakePort{.state = "1: DOWN"});
  testing::write_fake_hca(root.path(), down);
  DiscovererRegistry registry;
  ASSERT_TRUE(register_ib_fabric_sources(registry).has_value());
  DiscoveryDeps deps;
  deps.root = root.path();
  auto source = registry.create({"ibnetdisc", ""}, deps);
  ASSERT_TRUE(source.has_value());
  auto found = (*source)->discover();
  ASSERT_FALSE(found.has_value());
  EXPECT_EQ(found.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(found.error().message().find("no local InfiniBand port is up"), std::string::npos)
      << found.error().message();
  EXPECT_NE(found.error().message().find((root.path() / "sys/class/infiniband").string()), std::string::npos);
  EXPECT_FALSE(registry.create({"ibnetdisc", "exclude=mlx5_("}, deps).has_value());
}

TEST(ComputePorts, SourceWalksEachSelectedPortAndNamesEachFailure) {
  // The fake HCAs do not exist for libibumad, so each live walk fails at once; the error must name
  // every selected port and none of the excluded ones.
  TempDir root;
  write_node(root.path());
  DiscovererRegistry registry;
  ASSERT_TRUE(register_ib_fabric_sources(registry).has_value());
  DiscoveryDeps deps;
  deps.root = root.path();
  auto source = registry.create({"ibnetdisc", "exclude=mlx5_[2-9]"}, deps);
  ASSERT_TRUE(source.has_value());
  auto found = (*source)->discover();
  ASSERT_FALSE(found.has_value());
  const std::string& m = found.error().message();
  EXPECT_NE(m.find("mlx5_0:1"), std::string::npos) << m;
  EXPECT_NE(m.find("mlx5_1:1"), std::string::npos) << m;
  EXPECT_EQ(m.find("mlx5_4:1"), std::string::npos) << m;
}

TEST(ComputePorts, APortWithoutASubnetManagerIsWalkedButADownOneIsNot) {
  // INIT: the link trained and no SM has configured it yet; directed-route SMPs get through, and
  // ibnetdiscover walks from such a port, so the walk must too.
  std::vector<topology::HcaDevice> hcas(4);
  const char* states[] = {"INIT", "ARMED", "ACTIVE", "DOWN"};
  for (int i = 0; i < 4; ++i) {
    hcas[i].name = "mlx5_" + std::to_string(i);
    hcas[i].ports.push_back(
        {.number = 1, .state = states[i], .link_layer = topology::LinkLayer::kInfiniBand});
  }
  auto ports = select_compute_ports(hcas, {});
  ASSERT_TRUE(ports.has_value()) << ports.error().message();
  std::vector<std::string> names;
  for (const auto& p : *ports) names.push_back(p.ca);
  EXPECT_EQ(names, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2"}));
  EXPECT_EQ(port_state_name(2), "INIT");
  EXPECT_EQ(port_phys_state_name(5), "LinkUp");
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The user's path: `hypertopo discover --source ibnetdisc` with no CA on a host whose only CA is
// ibsim's (through the umad2sim preload, which sysfs does not show), no subnet manager running.
TEST(ComputePorts, DiscoverWithoutACaWalksAnIbsimFabricAndWritesNothing) {
  HT_REQUIRE(simulator_missing().empty(), "ibsim: " + simulator_missing());
  const char* net =
      "Switch 8 \"S1\" # \"MF0;spine-1:MQM9700/U1\"\n"
      "[1] \"L1\"[8]\n"
      "[2] \"L2\"[8]\n"
      "\n"
      "Switch 8 \"L1\" # \"MF0;leaf-1:MQM9700/U1\"\n"
      "[1] \"H1\"[1]\n"
      "[2] \"H2\"[1]\n"
      "[8] \"S1\"[1]\n"
      "\n"
      "Switch 8 \"L2\" # \"MF0;leaf-2:MQM9700/U1\"\n"
      "[1] \"H3\"[1]\n"
      "[2] \"H4\"[1]\n"
      "[8] \"S1\"[2]\n"
      "\n"
      "Hca 1 \"H1\" # \"node-1 mlx5_0\"\n[1] \"L1\"[1]\n\n"
      "Hca 1 \"H2\" # \"node-2 mlx5_0\"\n[1] \"L1\"[2]\n\n"
      "Hca 1 \"H3\" # \"node-3 mlx5_0\"\n[1] \"L2\"[1]\n\n"
      "Hca 1 \"H4\" # \"node-4 mlx5_0\"\n[1] \"L2\"[2]\n";
  SimulatorOptions options;
  options.attach_node = "H1";
  auto sim = SimulatedFabric::start(net, options);
  ASSERT_TRUE(sim.has_value()) << sim.error().message();

  // Whatever the walk might write would land in the temp dir or the working directory.
  hypertopo::testing::TempDir tmp;
  const char* old_tmp = std::getenv("TMPDIR");
  const std::string saved_tmp = old_tmp ? old_tmp : "";
  setenv("TMPDIR", tmp.path().c_str(), 1);
  auto run = (*sim)->run_client({HT_HYPERTOPO_BINARY, "discover", "--source", "ibnetdisc", "-o", "json"});
  if (old_tmp)
    setenv("TMPDIR", saved_tmp.c_str(), 1);
  else
    unsetenv("TMPDIR");
  ASSERT_TRUE(run.has_value()) << run.error().message();
  const std::string out = slurp(run->stdout_path);
  const std::string err = slurp(run->stderr_path);
  ASSERT_EQ(run->exit_code, 0) << err;
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));

  auto doc = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << out;
  // Two leaves of two hosts each under one spine: every host is a member of a leaf HyperNode.
  std::set<std::string> hosts;
  int leaves = 0;
  auto items = doc.is_array() ? doc : doc.value("items", nlohmann::json::array());
  for (const auto& hn : items) {
    bool leaf = false;
    for (const auto& m : hn["spec"]["members"]) {
      if (m.value("type", "") != "Node") continue;
      leaf = true;
      hosts.insert(m["selector"]["exactMatch"]["name"].get<std::string>());
    }
    leaves += leaf;
  }
  EXPECT_EQ(hosts, (std::set<std::string>{"node-1", "node-2", "node-3", "node-4"})) << out;
  EXPECT_EQ(leaves, 2) << out;
}

}  // namespace
}  // namespace hypertopo::discoverers::ib_fabric
