// The tier rule on small fabrics built by hand, and on the built-in demo fabric.
#include "topology/tree_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "discoverers/demo/demo_fabric.h"
#include "topology/hypernode.h"

namespace hypertopo::topology {
namespace {

// A tiny fabric-building language for tests: switches by name, hosts with one HCA per leaf.
class FabricSketch {
 public:
  VertexId sw(const std::string& name) {
    auto it = switches_.find(name);
    if (it != switches_.end()) return it->second;
    auto v = g.add_switch("0x" + hex(++serial_), "MF0;" + name + ":MQM9790/U1");
    switches_[name] = v;
    return v;
  }
  void link(const std::string& a, const std::string& b) { g.add_link(sw(a), port(), sw(b), port(), "4xNDR"); }
  // One HCA of `host` (device `dev`) cabled to `leaf`; returns the endpoint GUID.
  std::string hca(const std::string& host, const std::string& dev, const std::string& leaf) {
    std::string id = "0x" + hex(0xca0000 + ++serial_);
    auto v = g.add_endpoint(id, host + " " + dev);
    g.add_link(sw(leaf), port(), v, 1, "4xNDR");
    return id;
  }
  std::string raw_ca(const std::string& desc, const std::string& leaf) {
    std::string id = "0x" + hex(0xcb0000 + ++serial_);
    auto v = g.add_endpoint(id, desc);
    g.add_link(sw(leaf), port(), v, 1, "4xNDR");
    return id;
  }
  FabricGraph g;

 private:
  static std::string hex(unsigned v) {
    char buf[20];
    std::snprintf(buf, sizeof buf, "%016x", v);
    return buf;
  }
  int port() { return ++port_; }
  std::map<std::string, VertexId> switches_;
  unsigned serial_ = 0;
  int port_ = 0;
};

Tree build(const FabricGraph& g, TreeBuilderOptions o = {}) {
  auto b = TreeBuilder::create(std::move(o));
  EXPECT_TRUE(b.has_value());
  auto t = b->build(g);
  EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().message());
  return t ? std::move(*t) : Tree{};
}

std::map<int, int> domains_per_tier(const Tree& t) {
  std::map<int, int> m;
  for (const auto& d : t.domains()) ++m[d.tier];
  return m;
}

const Domain& named(const Tree& t, const std::string& name) {
  auto id = t.find(name);
  EXPECT_TRUE(id.has_value()) << "no domain " << name;
  return t.domain(id.value_or(0));
}

TEST(TreeBuilder, TwoLevelFatTree) {
  FabricSketch f;
  for (int l = 1; l <= 4; ++l) {
    for (int s = 1; s <= 2; ++s) f.link("LEAF-" + std::to_string(l), "SPINE-" + std::to_string(s));
    for (int h = 1; h <= 3; ++h)
      f.hca("n" + std::to_string(l) + std::to_string(h), "mlx5_0", "LEAF-" + std::to_string(l));
  }
  auto t = build(f.g);
  EXPECT_EQ(domains_per_tier(t), (std::map<int, int>{{1, 4}, {2, 1}}));
  const auto& leaf1 = named(t, "leaf-leaf-1");
  EXPECT_EQ(leaf1.tier_name, "leaf");
  EXPECT_EQ(leaf1.nodes, (std::vector<std::string>{"n11", "n12", "n13"}));
  const auto& top = named(t, "spine-spine-1");
  EXPECT_EQ(top.tier, 2);
  EXPECT_EQ(top.tier_name, "spine");
  EXPECT_EQ(top.children.size(), 4u);
  EXPECT_EQ(t.node_count(), 12u);
}

TEST(TreeBuilder, ThreeLevelFatTreeWithPods) {
  FabricSketch f;
  for (int p = 1; p <= 2; ++p) {
    const std::string P = "P" + std::to_string(p);
    for (int l = 1; l <= 2; ++l) {
      const std::string leaf = P + "-LEAF-" + std::to_string(l);
      for (int s = 1; s <= 2; ++s) f.link(leaf, P + "-SPINE-" + std::to_string(s));
      for (int h = 1; h <= 2; ++h)
        f.hca(P + "l" + std::to_string(l) + "h" + std::to_string(h), "mlx5_0", leaf);
    }
    for (int s = 1; s <= 2; ++s) f.link(P + "-SPINE-" + std::to_string(s), "CORE-1");
  }
  auto t = build(f.g);
  EXPECT_EQ(domains_per_tier(t), (std::map<int, int>{{1, 4}, {2, 2}, {3, 1}}));
  EXPECT_EQ(named(t, "spine-p1-spine-1").children.size(), 2u);
  EXPECT_EQ(named(t, "core-core-1").tier_name, "core");
  EXPECT_EQ(named(t, "core-core-1").children.size(), 2u);
}

TEST(TreeBuilder, RailsOfAHostBridgeTheirLeaves) {
  FabricSketch f;
  for (int su = 1; su <= 2; ++su) {
    for (int r = 1; r <= 2; ++r) {
      const std::string leaf = "SU" + std::to_string(su) + "-LEAF-R" + std::to_string(r);
      f.link(leaf, "SPINE-R" + std::to_string(r));
      for (int h = 1; h <= 3; ++h)
        f.hca("su" + std::to_string(su) + "h" + std::to_string(h), "mlx5_" + std::to_string(r - 1), leaf);
    }
  }
  auto t = build(f.g);
  // One tier-1 domain per scalable unit, with both rail leaves; spines join the two units.
  EXPECT_EQ(domains_per_tier(t), (std::map<int, int>{{1, 2}, {2, 1}}));
  EXPECT_EQ(named(t, "leaf-su1-leaf-r1").nodes, (std::vector<std::string>{"su1h1", "su1h2", "su1h3"}));
  EXPECT_EQ(named(t, "leaf-su2-leaf-r1").nodes.size(), 3u);
}

TEST(TreeBuilder, ALevelThatMergesNothingIsNotATier) {
  FabricSketch f;
  // One host per leaf: leaves merge nothing, so the spine level becomes tier 1.
  for (int l = 1; l <= 3; ++l) {
    f.link("LEAF-" + std::to_string(l), "SPINE-1");
    f.hca("n" + std::to_string(l), "mlx5_0", "LEAF-" + std::to_string(l));
  }
  // A core above a single spine merges nothing either.
  f.link("SPINE-1", "CORE-1");
  auto t = build(f.g);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.domain(0).tier, 1);
  EXPECT_EQ(t.domain(0).tier_name, "spine");
  EXPECT_EQ(t.domain(0).nodes.size(), 3u);
}

TEST(TreeBuilder, UnmappedEndpointsAreReportedByGuidNeverGuessed) {
  FabricSketch f;
  f.hca("n1", "mlx5_0", "LEAF-1");
  f.hca("n2", "mlx5_0", "LEAF-1");
  auto fw = f.raw_ca("MT4129 ConnectX7   Mellanox Technologies", "LEAF-1");
  auto blank = f.raw_ca("", "LEAF-1");
  auto t = build(f.g);
  ASSERT_EQ(t.report.unmapped_endpoints.size(), 2u);
  std::set<std::string> guids{t.report.unmapped_endpoints[0].guid, t.report.unmapped_endpoints[1].guid};
  EXPECT_EQ(guids, (std::set<std::string>{fw, blank}));
  EXPECT_EQ(t.node_count(), 2u);
}

TEST(TreeBuilder, GuidMappingWinsOverTheDescription) {
  FabricSketch f;
  auto a = f.hca("localhost", "mlx5_0", "LEAF-1");
  f.hca("n2", "mlx5_0", "LEAF-1");
  auto fw = f.raw_ca("MT4129 ConnectX7   Mellanox Technologies", "LEAF-1");
  TreeBuilderOptions o;
  o.node_by_endpoint = {{a, "gpu-node-7"}, {fw, "gpu-node-8"}};
  auto t = build(f.g, o);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.domain(0).nodes, (std::vector<std::string>{"gpu-node-7", "gpu-node-8", "n2"}));
  EXPECT_TRUE(t.report.unmapped_endpoints.empty());
}

// A Node list that names a generic host keeps it; the warning says its HCAs are taken as one machine.
TEST(TreeBuilder, GenericHostNamesANodeListKeepsAreFlagged) {
  FabricSketch f;
  f.hca("localhost", "mlx5_0", "LEAF-1");
  f.hca("n2", "mlx5_0", "LEAF-1");
  TreeBuilderOptions o;
  o.known_nodes = std::set<std::string>{"localhost", "n2"};
  auto t = build(f.g, o);
  ASSERT_EQ(t.report.warnings.size(), 1u);
  EXPECT_NE(t.report.warnings[0].find("'localhost'"), std::string::npos);
  EXPECT_EQ(t.node_count(), 2u);
}

std::vector<std::string> nodes_of(const Tree& t) {
  std::vector<std::string> out;
  for (const auto& d : t.domains()) out.insert(out.end(), d.nodes.begin(), d.nodes.end());
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t count_containing(const std::vector<std::string>& lines, const std::string& part) {
  return static_cast<std::size_t>(std::count_if(
      lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != l.npos; }));
}

// Without a Node list, hosts no compute node is named after are set aside: generic defaults, a host
// named as a switch is, a UFM appliance (by host name or by node description); one warning names them.
TEST(TreeBuilder, HostsThatAreNoComputeNodeAreSetAsideWithOneWarning) {
  FabricSketch f;
  f.hca("n1", "mlx5_0", "LEAF-1");
  f.hca("n2", "mlx5_0", "LEAF-2");
  f.link("LEAF-1", "SPINE-1");
  f.link("LEAF-2", "SPINE-1");
  f.hca("localhost", "mlx5_0", "LEAF-1");
  f.hca("Ubuntu", "mlx5_1", "LEAF-2");
  f.hca("B11-P1-CUFM-02", "mlx5_0", "LEAF-1");
  f.hca("spine-1", "mlx5_0", "LEAF-2");
  auto t = build(f.g);
  EXPECT_EQ(nodes_of(t), (std::vector<std::string>{"n1", "n2"}));
  ASSERT_EQ(count_containing(t.report.warnings, "set aside"), 1u);
  const std::string& w = t.report.warnings[0];
  EXPECT_EQ(w.rfind("4 host(s) set aside, not compute nodes: ", 0), 0u) << w;
  for (const char* part : {"localhost (generic host name)", "ubuntu (generic host name)",
                           "b11-p1-cufm-02 (appliance)", "spine-1 (a switch's name)", "keepHosts"}) {
    EXPECT_NE(w.find(part), std::string::npos) << part << " in " << w;
  }
  // The generic-name warning is for hosts that are kept; these are not.
  EXPECT_EQ(count_containing(t.report.warnings, "generic default"), 0u);

  // keepHosts keeps them (whole names, any case), and the generic one is flagged as before.
  TreeBuilderOptions keep;
  keep.keep_host_patterns = {"LOCALHOST", "b11-p1-cufm-.*"};
  auto kept = build(f.g, keep);
  EXPECT_EQ(nodes_of(kept), (std::vector<std::string>{"b11-p1-cufm-02", "localhost", "n1", "n2"}));
  EXPECT_EQ(count_containing(kept.report.warnings, "2 host(s) set aside"), 1u);
  EXPECT_EQ(count_containing(kept.report.warnings, "'localhost' is a generic default"), 1u);

  // A Node list decides alone: what it names is a node, whatever the name.
  TreeBuilderOptions listed;
  listed.known_nodes = std::set<std::string>{"n1", "n2", "ubuntu"};
  auto by_list = build(f.g, listed);
  EXPECT_EQ(nodes_of(by_list), (std::vector<std::string>{"n1", "n2", "ubuntu"}));
  EXPECT_EQ(count_containing(by_list.report.warnings, "set aside"), 0u);
}

TEST(TreeBuilder, TheSetAsideWarningNamesTenHostsAndCountsTheRest) {
  FabricSketch f;
  f.hca("n1", "mlx5_0", "LEAF-1");
  f.hca("n2", "mlx5_0", "LEAF-1");
  for (int i = 1; i <= 13; ++i) f.hca("ufm-" + std::to_string(100 + i), "mlx5_0", "LEAF-1");
  auto t = build(f.g);
  EXPECT_EQ(nodes_of(t), (std::vector<std::string>{"n1", "n2"}));
  ASSERT_EQ(count_containing(t.report.warnings, "set aside"), 1u);
  const std::string& w = t.report.warnings[0];
  EXPECT_NE(w.find("13 host(s) set aside"), std::string::npos) << w;
  EXPECT_NE(w.find("ufm-110 (appliance) and 3 more;"), std::string::npos) << w;
  EXPECT_EQ(w.find("ufm-111"), std::string::npos) << w;

  // A description in another format names the appliance outside the host part.
  FabricSketch custom;
  custom.raw_ca("host=n1 dev=mlx5_0", "LEAF-1");
  custom.raw_ca("host=n2 dev=mlx5_0", "LEAF-1");
  custom.raw_ca("host=mgmt-7 dev=mlx5_0 role=UFM", "LEAF-1");
  TreeBuilderOptions pattern;
  pattern.host_description_pattern = R"(host=(\S+))";
  auto by_description = build(custom.g, pattern);
  EXPECT_EQ(nodes_of(by_description), (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(count_containing(by_description.report.warnings, "mgmt-7 (appliance)"), 1u);
}

TEST(TreeBuilder, HostsThatAreNotNodesAreExcludedAndListed) {
  FabricSketch f;
  f.hca("dgx-1", "mlx5_0", "LEAF-1");
  f.hca("dgx-2", "mlx5_0", "LEAF-1");
  f.hca("ufm-server", "mlx5_0", "LEAF-1");
  f.hca("login-01", "mlx5_0", "LEAF-1");
  TreeBuilderOptions o;
  o.known_nodes = std::set<std::string>{"dgx-1.cluster.local", "dgx-2"};
  auto t = build(f.g, o);
  ASSERT_EQ(t.size(), 1u);
  // A short host name maps to the one node whose first label it is.
  EXPECT_EQ(t.domain(0).nodes, (std::vector<std::string>{"dgx-1.cluster.local", "dgx-2"}));
  EXPECT_EQ(t.report.excluded_hosts, (std::vector<std::string>{"login-01", "ufm-server"}));
}

TEST(TreeBuilder, AggregationNodesStorageAndManagementAreExcluded) {
  FabricSketch f;
  for (int l = 1; l <= 2; ++l) {
    f.link("LEAF-" + std::to_string(l), "SPINE-1");
    for (int h = 1; h <= 2; ++h)
      f.hca("n" + std::to_string(l) + std::to_string(h), "mlx5_0", "LEAF-" + std::to_string(l));
  }
  // SHARP aggregation nodes hang off every switch; left in, they would make the spine a leaf.
  f.raw_ca("Mellanox Technologies Aggregation Node", "SPINE-1");
  f.raw_ca("Mellanox Technologies Aggregation Node", "LEAF-1");
  // Storage HCAs on a storage leaf under the spine; left in, the storage leaf would join all hosts.
  f.link("STORAGE-LEAF-1", "SPINE-1");
  for (const char* h : {"n11", "n12", "n21", "n22"}) f.hca(h, "mlx5_9", "STORAGE-LEAF-1");
  f.hca("filer-1", "mlx5_0", "STORAGE-LEAF-1");
  TreeBuilderOptions o;
  o.excluded_device_patterns = {"mlx5_9"};
  o.excluded_switch_patterns = {"^storage"};
  auto t = build(f.g, o);
  EXPECT_EQ(t.report.aggregation_nodes, 2u);
  EXPECT_EQ(t.report.excluded_endpoints.size(), 5u);  // 4 storage HCAs + the filer behind the cut leaf
  EXPECT_EQ(t.report.excluded_switches, (std::vector<std::string>{"storage-leaf-1"}));
  EXPECT_EQ(domains_per_tier(t), (std::map<int, int>{{1, 2}, {2, 1}}));
  EXPECT_TRUE(t.report.unattached_hosts.empty());

  // Without the patterns the storage leaf merges every host at tier 1: the reason they exist.
  auto unfiltered = build(f.g);
  EXPECT_EQ(domains_per_tier(unfiltered).at(1), 1);
}

TEST(TreeBuilder, BadPatternsAreNamed) {
  TreeBuilderOptions o;
  o.excluded_switch_patterns = {"ok", "(unclosed"};
  auto b = TreeBuilder::create(o);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message().find("excluded switch patterns[1] '(unclosed'"), std::string::npos)
      << b.error().message();
  TreeBuilderOptions no_group;
  no_group.host_description_pattern = "^\\S+";
  EXPECT_FALSE(TreeBuilder::create(no_group));
}

TEST(TreeBuilder, FirmwareDefaultSwitchNamesFallBackToGuid) {
  FabricSketch f;
  auto s1 = f.g.add_switch("0x0000000000000aa1", "SwitchIB Mellanox Technologies");
  auto s2 = f.g.add_switch("0x0000000000000aa2", "SwitchIB Mellanox Technologies");
  for (auto [s, h] : {std::pair{s1, "a"}, std::pair{s2, "b"}}) {
    for (int i = 0; i < 2; ++i) {
      auto e = f.g.add_endpoint("0x00000000000bb" + std::string(h) + std::to_string(i),
                                std::string(h) + std::to_string(i) + " mlx5_0");
      f.g.add_link(s, 1 + i, e, 1);
    }
  }
  auto t = build(f.g);
  EXPECT_TRUE(t.find("leaf-0x0000000000000aa1"));
  EXPECT_TRUE(t.find("leaf-0x0000000000000aa2"));
}

// Rendered objects by name, to compare builds.
std::map<std::string, std::string> rendered(const Tree& t) {
  std::map<std::string, std::string> out;
  for (DomainId i = 0; i < t.size(); ++i) out[t.domain(i).name] = render_hypernode(t, i).dump();
  return out;
}

TEST(TreeBuilder, AddingOrRemovingAHostTouchesOnlyItsDomains) {
  discoverers::DemoFabricSpec spec;
  spec.scalable_units = 4;
  spec.hosts_per_su = 4;
  spec.rails = 2;
  auto opts = discoverers::demo_builder_options();
  auto g = discoverers::generate_demo_fabric(spec);
  auto before = build(g, opts);

  // Add a host with both rails on SU 3's leaves.
  auto g2 = g;
  for (int r = 1; r <= 2; ++r) {
    for (VertexId v = 0; v < g2.vertex_count(); ++v) {
      if (g2.vertex(v).description == "MF0;DEMO-SU03-LEAF-R" + std::to_string(r) + ":QM9790/U1") {
        auto e = g2.add_endpoint("0x00000000feed000" + std::to_string(r),
                                 "demo-su03-new " + std::string("mlx5_") + std::to_string(r - 1));
        g2.add_link(v, 60, e, 1, "4xNDR");
      }
    }
  }
  auto after = build(g2, opts);
  auto a = rendered(before);
  auto b = rendered(after);
  ASSERT_EQ(a.size(), b.size()) << "a host on an existing leaf creates no domain";
  std::set<std::string> changed;
  for (const auto& [name, obj] : a) {
    ASSERT_TRUE(b.contains(name)) << name << " was renamed or removed";
    if (b[name] != obj) changed.insert(name);
  }
  // Exactly the domains that hold the new host changed: its SU, its pod and the core domain.
  std::set<std::string> holding;
  for (DomainId i = 0; i < after.size(); ++i) {
    auto nodes = after.nodes_under(i);
    if (std::binary_search(nodes.begin(), nodes.end(), "demo-su03-new")) holding.insert(after.domain(i).name);
  }
  EXPECT_EQ(holding.size(), 3u);
  // Parents list child HyperNodes, not nodes, so only the tier-1 domain holding the host changes.
  std::set<std::string> tier1_holding;
  for (const auto& name : holding) {
    if (named(after, name).tier == 1) tier1_holding.insert(name);
  }
  EXPECT_EQ(tier1_holding, (std::set<std::string>{"leaf-demo-su03-leaf-r1"}));
  EXPECT_EQ(changed, tier1_holding);
  // Removing it again gives back exactly the first build.
  auto again = build(g, opts);
  EXPECT_EQ(rendered(again), a);
}

TEST(TreeBuilder, DemoFabricHasItsDesignedShape) {
  discoverers::DemoFabricSpec spec;
  auto g = discoverers::generate_demo_fabric(spec);
  auto t = build(g, discoverers::demo_builder_options());
  auto shape = discoverers::expected_demo_shape(spec);
  EXPECT_EQ(domains_per_tier(t), (std::map<int, int>{{1, shape.tier1}, {2, shape.tier2}, {3, shape.tier3}}));
  EXPECT_EQ(static_cast<int>(t.node_count()), shape.hosts);
  EXPECT_EQ(t.report.unmapped_endpoints.size(), static_cast<std::size_t>(spec.firmware_default_cas));
  EXPECT_EQ(t.report.aggregation_nodes, g.switch_count());
  // 128 storage HCAs by device pattern, 4 storage servers behind the cut storage leaf.
  EXPECT_EQ(t.report.excluded_endpoints.size(), 128u + 4u);
  EXPECT_EQ(named(t, "leaf-demo-su01-leaf-r1").nodes.size(), 32u);
  EXPECT_EQ(named(t, "core-demo-core-01").children.size(), 2u);
  ASSERT_TRUE(check_invariants(t));
}

}  // namespace
}  // namespace hypertopo::topology
