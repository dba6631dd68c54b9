// roce-lldp on recorded data: lldpcli JSON (both shapes, and a real Spectrum-X leaf capture),
// self-neighbour and management filtering, the switch hierarchy, and the RoCE tree.
#include "discoverers/roce-lldp/roce_lldp.h"

#include <gtest/gtest.h>

#include <fstream>

#include "discoverers/registry/discoverer.h"
#include "tests/support/fixtures.h"
#include "topology/tree.h"
#include "topology/tree_builder.h"

namespace hypertopo::discoverers::roce_lldp {
namespace {

using topology::LldpNeighbor;
using topology::NodeReport;
using topology::RoceNetdev;

TEST(LldpcliJson, JsonAndJson0ShapesGiveTheSameNeighbour) {
  HT_REQUIRE_FIXTURE(one, "lldp/lldpd-tests-json-single-neighbor.json");
  HT_REQUIRE_FIXTURE(zero, "lldp/lldpd-tests-json0-single-neighbor.json");
  auto a = read_lldpcli_json_file(one);
  auto b = read_lldpcli_json_file(zero);
  ASSERT_TRUE(a) << a.error().message();
  ASSERT_TRUE(b) << b.error().message();
  ASSERT_EQ(a->neighbors.size(), 1u);
  ASSERT_EQ(b->neighbors.size(), 1u);
  EXPECT_EQ(a->neighbors[0].interface, "eth0");
  const LldpNeighbor& n = a->neighbors[0].neighbor;
  EXPECT_EQ(n.system_name, "ns-2.example.com");
  EXPECT_EQ(n.chassis_id, "00:00:00:00:00:02");
  EXPECT_EQ(n.chassis_id_subtype, "mac");
  EXPECT_EQ(n.port_id, "00:00:00:00:00:02");
  EXPECT_EQ(n.port_id_subtype, "mac");
  EXPECT_EQ(n.port_description, "eth1");
  EXPECT_EQ(b->neighbors[0].interface, "eth0");
  EXPECT_EQ(b->neighbors[0].neighbor, n);
}

TEST(LldpcliJson, RealLeafCaptureFiltersSelfAndManagement) {
  HT_REQUIRE_FIXTURE(path, "lldp/topograph-pr443-lldpctl-f-json.json");
  auto snap = read_lldpcli_json_file(path);
  ASSERT_TRUE(snap) << snap.error().message();
  EXPECT_EQ(snap->neighbors.size(), 49u);  // the capture's 49 interfaces, one neighbour each

  NodeReport report;
  report.node_name = "vr-nvl-mec-03";
  // The VFs and their representors see each other (the host's own chassis) through the eswitch; they
  // name each other as the neighbour port, which is how they are recognised without the local chassis.
  auto ok = apply_snapshot(report, *snap, RoceLldpOptions{});
  ASSERT_TRUE(ok) << ok.error().message();
  // enx... is the BMC-side management NIC (default management pattern); 16 VF/representor entries go.
  EXPECT_EQ(report.roce.size(), 32u);
  for (const auto& r : report.roce) {
    ASSERT_TRUE(r.neighbor) << r.netdev;
    EXPECT_EQ(r.neighbor->system_name, "spcx-qa-spc06-02") << r.netdev;
    EXPECT_EQ(r.neighbor->chassis_id, "f4:20:4d:da:ac:1a");
    EXPECT_EQ(r.neighbor->port_id_subtype, "ifname");
    EXPECT_TRUE(r.neighbor->port_id.starts_with("swp")) << r.neighbor->port_id;
  }
  auto r0p0 =
      std::find_if(report.roce.begin(), report.roce.end(), [](auto& r) { return r.netdev == "eth_r0_p0"; });
  ASSERT_NE(r0p0, report.roce.end());
  EXPECT_EQ(r0p0->neighbor->port_id, "swp5s4");

  // The local chassis id alone (what lldpd says about itself) drops them too.
  LldpSnapshot unpaired = *snap;
  std::erase_if(unpaired.neighbors,
                [](const auto& e) { return e.interface.find("_rep_") != std::string::npos; });
  unpaired.local_chassis_ids = {"ba:d6:08:9d:ad:63"};
  NodeReport by_chassis;
  by_chassis.node_name = "vr-nvl-mec-03";
  ASSERT_TRUE(apply_snapshot(by_chassis, unpaired, RoceLldpOptions{}));
  EXPECT_EQ(by_chassis.roce.size(), 32u);
  NodeReport unfiltered;
  unfiltered.node_name = "vr-nvl-mec-03";
  unpaired.local_chassis_ids.clear();
  ASSERT_TRUE(apply_snapshot(unfiltered, unpaired, RoceLldpOptions{.management_pattern = ""}));
  EXPECT_EQ(unfiltered.roce.size(), 32u + 8u + 1u);  // VFs (no longer paired) and the management NIC
}

TEST(LldpcliJson, SelfByNameAndRailPattern) {
  LldpSnapshot snap;
  snap.local_system_name = "host-a";
  snap.neighbors.push_back({"rail0", {"aa:00:00:00:00:01", "mac", "leaf-1", "swp1", "ifname", "swp1"}});
  snap.neighbors.push_back({"pf0vf0", {"aa:00:00:00:00:09", "mac", "HOST-A", "pf0", "ifname", ""}});
  snap.neighbors.push_back({"mgmt0", {"aa:00:00:00:00:05", "mac", "oob-1", "swp9", "ifname", ""}});
  snap.neighbors.push_back({"data7", {"aa:00:00:00:00:02", "mac", "leaf-2", "swp3", "ifname", ""}});
  NodeReport report;
  report.node_name = "host-a";
  RoceLldpOptions options;
  options.netdev_pattern = "^rail";
  ASSERT_TRUE(apply_snapshot(report, snap, options));
  ASSERT_EQ(report.roce.size(), 1u);
  EXPECT_EQ(report.roce[0].netdev, "rail0");
  EXPECT_EQ(report.roce[0].neighbor->system_name, "leaf-1");

  // Without a pattern: every port but the self-neighbour and the management NIC.
  NodeReport all;
  all.node_name = "host-a";
  ASSERT_TRUE(apply_snapshot(all, snap, RoceLldpOptions{}));
  ASSERT_EQ(all.roce.size(), 2u);
  EXPECT_EQ(all.roce[0].netdev, "data7");
  EXPECT_EQ(all.roce[1].netdev, "rail0");

  // With ib-local's RoCE netdevs in the report, only those get neighbours.
  NodeReport from_ib;
  from_ib.node_name = "host-a";
  from_ib.roce.push_back(RoceNetdev{.netdev = "data7", .rdma_device = "mlx5_3"});
  ASSERT_TRUE(apply_snapshot(from_ib, snap, RoceLldpOptions{}));
  ASSERT_EQ(from_ib.roce.size(), 1u);
  EXPECT_EQ(from_ib.roce[0].rdma_device, "mlx5_3");
  EXPECT_EQ(from_ib.roce[0].neighbor->system_name, "leaf-2");
}

TEST(LldpcliJson, ErrorsNameTheFile) {
  auto r = parse_lldpcli_json(nlohmann::json{{"nope", 1}}, "x.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("x.json"), std::string::npos);
  auto bad =
      parse_lldpcli_json(nlohmann::json::parse(R"({"lldp":{"interface":{"eth0":{"port":{}}}}})"), "y.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("y.json"), std::string::npos);
  EXPECT_NE(bad.error().message().find("chassis"), std::string::npos);
  auto empty = parse_lldpcli_json(nlohmann::json::parse(R"({"lldp":{}})"), "z.json");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->neighbors.empty());
}

TEST(LldpcliJson, ReportRoundTripKeepsTheNeighbour) {
  NodeReport report;
  report.node_name = "host-a";
  report.roce.push_back(
      RoceNetdev{.netdev = "rail0",
                 .oper_state = "up",
                 .speed_mbps = 400000,
                 .neighbor = LldpNeighbor{"aa:bb", "mac", "leaf-1", "swp1", "ifname", "to host-a"}});
  auto back = topology::parse_node_report_text(topology::render_node_report_yaml(report));
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, report);
}

TEST(RoceHierarchy, ExplicitParentsAndRules) {
  auto h = parse_roce_hierarchy(R"(
parents:
  leaf-1: spine-1
  spine-1: superspine-1
rules:
  - {pattern: '^leaf-(\d+)-\d+$', parent: 'spine-pod-$1'}
  - {pattern: '^spine-pod-\d+$', parent: superspine-1}
)",
                                "h.yaml");
  ASSERT_TRUE(h) << h.error().message();
  EXPECT_EQ(h->parent_of("leaf-1"), "spine-1");
  EXPECT_EQ(h->parent_of("spine-1"), "superspine-1");
  EXPECT_EQ(h->parent_of("leaf-7-3"), "spine-pod-7");
  EXPECT_EQ(h->parent_of("spine-pod-7"), "superspine-1");
  EXPECT_EQ(h->parent_of("superspine-1"), std::nullopt);
  EXPECT_EQ(h->parent_of("leaf-x"), std::nullopt);
}

TEST(RoceHierarchy, ErrorsNameFileAndKey) {
  struct Case {
    const char* yaml;
    const char* key;
  };
  for (const Case& c :
       {Case{"parents: [a, b]", "parents"}, Case{"parents: {leaf-1: }", "parents.leaf-1"},
        Case{"rules: [{pattern: '(', parent: x}]", "rules[0].pattern"},
        Case{"rules: [{pattern: 'a', parent: 'x$1'}]", "rules[0].parent"},
        Case{"rules: [{pattern: 'a'}]", "rules[0].parent"},
        Case{"rules: [{pattern: 'a', parent: b, weight: 1}]", "rules[0].weight"}, Case{"tiers: 3", "tiers"},
        Case{"parents: {a: a}", "parents.a"}, Case{"[1", "not valid YAML"}}) {
    auto h = parse_roce_hierarchy(c.yaml, "hier.yaml");
    ASSERT_FALSE(h) << c.yaml;
    EXPECT_NE(h.error().message().find("hier.yaml"), std::string::npos) << h.error().message();
    EXPECT_NE(h.error().message().find(c.key), std::string::npos) << h.error().message();
  }
  // The one format of every config file: "<file>: <key.path>: <what>".
  EXPECT_EQ(parse_roce_hierarchy("tiers: 3", "hier.yaml").error().message(),
            "hier.yaml: tiers: unknown key (known: parents, rules)");
  EXPECT_EQ(parse_roce_hierarchy("rules: [{pattern: 'a'}]", "hier.yaml").error().message(),
            "hier.yaml: rules[0].parent: is required");
  EXPECT_EQ(parse_roce_hierarchy("parents: {leaf-1: ''}", "hier.yaml").error().message(),
            "hier.yaml: parents.leaf-1: must not be empty");
  testing::TempDir dir;
  auto missing = load_roce_hierarchy(dir.path() / "absent.yaml");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("absent.yaml"), std::string::npos);
}

NodeReport host(const std::string& name, std::vector<std::pair<std::string, std::string>> rails) {
  NodeReport r;
  r.node_name = name;
  int port = 1;
  for (auto& [netdev, leaf] : rails) {
    RoceNetdev n;
    n.netdev = netdev;
    n.neighbor = LldpNeighbor{"chassis-" + leaf, "mac", leaf, "swp" + std::to_string(port++), "ifname", ""};
    r.roce.push_back(std::move(n));
  }
  return r;
}

topology::Tree build(const std::vector<NodeReport>& reports, const RoceHierarchy& h) {
  auto graph = build_roce_fabric(reports, h);
  EXPECT_TRUE(graph) << graph.error().message();
  auto builder = topology::TreeBuilder::create();
  EXPECT_TRUE(builder);
  auto tree = builder->build(*graph);
  EXPECT_TRUE(tree) << tree.error().message();
  return std::move(*tree);
}

TEST(RoceFabric, HostsGroupByTorAndDualRailHostsBridge) {
  // leaf-1: a, b; leaf-2: c, d; leaf-3: e, f (e bridges leaf-3 and leaf-4); leaf-4: g.
  std::vector<NodeReport> reports = {host("a", {{"r0", "leaf-1"}}),
                                     host("b", {{"r0", "leaf-1"}}),
                                     host("c", {{"r0", "leaf-2"}}),
                                     host("d", {{"r0", "leaf-2"}}),
                                     host("e", {{"r0", "leaf-3"}, {"r1", "leaf-4"}}),
                                     host("f", {{"r0", "leaf-3"}}),
                                     host("g", {{"r0", "leaf-4"}}),
                                     host("lonely", {})};
  auto h = parse_roce_hierarchy(
      "rules: [{pattern: '^leaf-[12]$', parent: spine-a}, {pattern: '^leaf-[34]$', parent: spine-b}]\n"
      "parents: {spine-a: super-1, spine-b: super-1}\n",
      "h.yaml");
  ASSERT_TRUE(h) << h.error().message();
  std::vector<std::string> notes;
  auto graph = build_roce_fabric(reports, *h, &notes);
  ASSERT_TRUE(graph);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("lonely"), std::string::npos);
  topology::Tree tree = build(reports, *h);
  ASSERT_TRUE(topology::check_invariants(tree)) << topology::check_invariants(tree).error().message();

  std::vector<std::vector<std::string>> leaves;
  for (const auto& d : tree.domains())
    if (d.tier == 1) leaves.push_back(d.nodes);
  std::sort(leaves.begin(), leaves.end());
  EXPECT_EQ(leaves, (std::vector<std::vector<std::string>>{{"a", "b"}, {"c", "d"}, {"e", "f", "g"}}));
  EXPECT_EQ(tree.max_tier(), 3);
  ASSERT_EQ(tree.roots().size(), 1u);
  EXPECT_EQ(tree.nodes_under(tree.roots()[0]).size(), 7u);
}

TEST(RoceFabric, WithoutHierarchyEachTorIsARoot) {
  std::vector<NodeReport> reports = {host("a", {{"r0", "leaf-1"}}), host("b", {{"r0", "leaf-1"}}),
                                     host("c", {{"r0", "leaf-2"}}), host("d", {{"r0", "leaf-2"}})};
  topology::Tree tree = build(reports, RoceHierarchy{});
  EXPECT_EQ(tree.roots().size(), 2u);
  EXPECT_EQ(tree.max_tier(), 1);
}

TEST(RoceFabric, HierarchyCycleIsAnError) {
  auto h = parse_roce_hierarchy("parents: {leaf-1: spine-1, spine-1: leaf-1}", "loop.yaml");
  ASSERT_TRUE(h);
  auto graph = build_roce_fabric({host("a", {{"r0", "leaf-1"}})}, *h);
  ASSERT_FALSE(graph);
  EXPECT_NE(graph.error().message().find("loop.yaml"), std::string::npos);
  EXPECT_NE(graph.error().message().find("cycle"), std::string::npos);
}

TEST(RoceSource, RegisteredAndNeedsReports) {
  DiscovererRegistry registry;
  register_builtin_discoverers(registry);
  std::vector<NodeReport> reports = {host("a", {{"r0", "leaf-1"}}), host("b", {{"r0", "leaf-1"}})};
  DiscoveryDeps deps;
  auto none = registry.create({"roce", ""}, deps);
  ASSERT_TRUE(none);
  EXPECT_FALSE((*none)->discover());
  deps.reports = &reports;
  auto source = registry.create({"roce", ""}, deps);
  ASSERT_TRUE(source);
  auto found = (*source)->discover();
  ASSERT_TRUE(found) << found.error().message();
  ASSERT_TRUE(found->graph);
  EXPECT_EQ(found->graph->switch_count(), 1u);
  EXPECT_EQ(found->graph->endpoint_count(), 2u);
  auto bad = registry.create({"roce", "/nonexistent/h.yaml"}, deps);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("/nonexistent/h.yaml"), std::string::npos);
}

TEST(LinkState, ReadsSpeedFromSysfsUnderRoot) {
  testing::TempDir root;
  std::filesystem::create_directories(root.path() / "sys/class/net/rail0");
  testing::write_text(root.path() / "sys/class/net/rail0/speed", "400000\n");
  std::filesystem::create_directories(root.path() / "sys/class/net/rail1");
  testing::write_text(root.path() / "sys/class/net/rail1/speed", "-1\n");
  auto states = read_link_states({"rail0", "rail1", "lo"}, root.path());
  EXPECT_EQ(states["rail0"].speed_mbps, 400000u);
  EXPECT_EQ(states["rail1"].speed_mbps, std::nullopt);
  // "lo" exists in every network namespace; libnl reports its oper state ("unknown" for loopback).
  EXPECT_FALSE(states["lo"].oper_state.empty());
}

}  // namespace
}  // namespace hypertopo::discoverers::roce_lldp
