// The lldpd lab (tests/discoverers/roce-lldp/lldp_lab.sh): real lldpd daemons in network namespaces joined by
// veth pairs, `hypertopo probe --source lldp` inside each host namespace, and the RoCE tree built
// from the NodeReports it wrote. Needs root, iproute2 and lldpd; skips without them (fails under CI).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>

#include "discoverers/registry/discoverer.h"
#include "discoverers/roce-lldp/roce_lldp.h"
#include "tests/support/fixtures.h"
#include "topology/tree.h"
#include "topology/tree_builder.h"

namespace hypertopo::discoverers::roce_lldp {
namespace {

constexpr int kPrerequisitesMissing = 77;

TEST(LldpLab, HostsGroupByLeafAndDualRailHostBridges) {
  testing::TempDir dir;
  const auto out = dir.path() / "reports";
  const std::string command = std::string("timeout -k 5 90 bash '") + HT_LLDP_LAB_SCRIPT + "' '" +
                              HT_HYPERTOPO_BINARY + "' '" + out.string() + "'";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  const int rc = WEXITSTATUS(status);
  HT_REQUIRE(rc != kPrerequisitesMissing,
             "root, iproute2 network namespaces and lldpd (see the lab's stderr)");
  ASSERT_EQ(rc, 0) << command;

  std::vector<topology::NodeReport> reports;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    auto report = topology::read_node_report_file(entry.path());
    ASSERT_TRUE(report) << report.error().message();
    reports.push_back(std::move(*report));
  }
  ASSERT_EQ(reports.size(), 6u);
  for (const auto& r : reports) {
    for (const auto& rail : r.roce) {
      EXPECT_TRUE(rail.netdev.starts_with("rail"))
          << r.node_name << ": " << rail.netdev << " (mgmt0 must be dropped)";
      ASSERT_TRUE(rail.neighbor) << r.node_name;
      EXPECT_EQ(rail.neighbor->chassis_id_subtype, "mac");
      EXPECT_EQ(rail.neighbor->port_id_subtype, "ifname");
      EXPECT_TRUE(rail.neighbor->port_id.starts_with("swp")) << rail.neighbor->port_id;
      EXPECT_EQ(rail.oper_state, "up") << r.node_name << " " << rail.netdev;
    }
  }

  const auto hierarchy = dir.path() / "hierarchy.yaml";
  testing::write_text(hierarchy, "rules:\n  - {pattern: '^leaf-\\d+$', parent: spine-1}\n");
  DiscovererRegistry registry;
  register_builtin_discoverers(registry);
  DiscoveryDeps deps;
  deps.reports = &reports;
  auto source = registry.create({"roce", hierarchy.string()}, deps);
  ASSERT_TRUE(source) << source.error().message();
  auto found = (*source)->discover();
  ASSERT_TRUE(found) << found.error().message();
  ASSERT_TRUE(found->graph);
  EXPECT_EQ(found->graph->switch_count(), 4u);  // leaf-1..3 and spine-1; oob-1 never appears
  auto builder = topology::TreeBuilder::create();
  ASSERT_TRUE(builder);
  auto tree = builder->build(*found->graph);
  ASSERT_TRUE(tree) << tree.error().message();
  ASSERT_TRUE(topology::check_invariants(*tree)) << topology::check_invariants(*tree).error().message();

  std::vector<std::vector<std::string>> leaves;
  for (const auto& d : tree->domains()) {
    if (d.tier == 1) {
      EXPECT_EQ(d.tier_name, "leaf");
      leaves.push_back(d.nodes);
    }
  }
  std::sort(leaves.begin(), leaves.end());
  // h5 has rails on leaf-2 and leaf-3, so they are one leaf domain.
  EXPECT_EQ(leaves, (std::vector<std::vector<std::string>>{{"h1", "h2", "h6"}, {"h3", "h4", "h5"}}));
  EXPECT_EQ(tree->max_tier(), 2);
  ASSERT_EQ(tree->roots().size(), 1u);
  EXPECT_EQ(tree->domain(tree->roots()[0]).tier_name, "spine");
  EXPECT_EQ(tree->nodes_under(tree->roots()[0]).size(), 6u);
}

// The same binary without lldpd: `--lldp-json` replays a saved lldpcli capture (a real Spectrum-X
// leaf's view of one host), so no root is needed.
TEST(ProbeCommand, ReplaysLldpcliJson) {
  HT_REQUIRE_FIXTURE(capture, "lldp/topograph-pr443-lldpctl-f-json.json");
  testing::TempDir dir;
  const auto out = dir.path() / "report.yaml";
  const std::string command = std::string("'") + HT_HYPERTOPO_BINARY +
                              "' probe --source lldp --node-name gpu-7 -o yaml --lldp-json '" +
                              capture.string() + "' > '" + out.string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  auto report = topology::read_node_report_file(out);
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->node_name, "gpu-7");
  ASSERT_EQ(report->roce.size(), 32u);  // 49 ports less 16 VF/representor loops and the BMC NIC
  EXPECT_EQ(report->roce.front().netdev, "eth_r0_p0");
  ASSERT_TRUE(report->roce.front().neighbor);
  EXPECT_EQ(report->roce.front().neighbor->system_name, "spcx-qa-spc06-02");

  const std::string bad = std::string("'") + HT_HYPERTOPO_BINARY +
                          "' probe --source lldp --node-name gpu-7 --lldpd-socket '" +
                          (dir.path() / "absent.socket").string() + "' > /dev/null 2>&1";
  EXPECT_NE(std::system(bad.c_str()), 0) << "no lldpd behind the socket must fail the probe";
}

}  // namespace
}  // namespace hypertopo::discoverers::roce_lldp
