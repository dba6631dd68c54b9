// ib-local probe tests against fake sysfs trees (no RDMA devices exist on the test machines).
#include "discoverers/ib-local/ib_local_probe.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "tests/support/fake_sysfs.h"

namespace hypertopo::discoverers::ib_local {
namespace {

using hypertopo::testing::FakeHca;
using hypertopo::testing::FakePort;
using hypertopo::testing::TempDir;
using hypertopo::testing::write_fake_hca;
using topology::LinkLayer;

// "a088:c203:00a1:b0NN" for device number n (sysfs form).
std::string sysfs_guid(unsigned prefix, int n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "a088:c203:%04x:%04x", prefix, static_cast<unsigned>(n));
  return buf;
}

std::string gid_for(const std::string& guid) { return "fe80:0000:0000:0000:" + guid; }

IbLocalOptions fake_root(const TempDir& dir) {
  IbLocalOptions options;
  options.root = dir.path();
  options.verbs = VerbsMode::kOff;
  return options;
}

// A DGX H100-like node: 8 single-port NDR compute HCAs and one dual-function storage card.
void write_dgx_node(const TempDir& root) {
  const int compute[] = {0, 3, 4, 5, 6, 9, 10, 11};
  int lid = 0x1c;
  for (int n : compute) {
    FakePort port;
    port.lid = "0x" + [&] {
      char b[8];
      std::snprintf(b, sizeof b, "%x", static_cast<unsigned>(lid++));
      return std::string(b);
    }();
    port.gid0 = gid_for(sysfs_guid(0x00a1, n));
    FakeHca hca{.name = "mlx5_" + std::to_string(n),
                .node_guid = sysfs_guid(0x00a1, n),
                .sys_image_guid = sysfs_guid(0x00a1, n),
                .node_desc = "dgx-001 mlx5_" + std::to_string(n),
                .ports = {port},
                .netdevs = {"ibp" + std::to_string(n) + "s0"}};
    write_fake_hca(root.path(), hca);
  }
  for (int n : {1, 2}) {
    FakePort port;
    port.rate = "200 Gb/sec (4X HDR)";
    port.lid = std::to_string(200 + n);  // decimal is accepted as well
    port.gid0 = gid_for(sysfs_guid(0x00b2, n));
    FakeHca hca{.name = "mlx5_" + std::to_string(n),
                .node_guid = sysfs_guid(0x00b2, n),
                .sys_image_guid = sysfs_guid(0x00b2, 0),  // one card, two functions
                .node_desc = "dgx-001 mlx5_" + std::to_string(n),
                .ports = {port},
                .netdevs = {"ibp" + std::to_string(n) + "s0f" + std::to_string(n - 1)}};
    write_fake_hca(root.path(), hca);
  }
}

TEST(IbLocalProbe, DgxNodeWithComputeAndStorageHcas) {
  TempDir root;
  write_dgx_node(root);
  auto facts = probe_ib_local(fake_root(root));
  ASSERT_TRUE(facts.has_value()) << facts.error().message();
  EXPECT_TRUE(facts->warnings.empty()) << facts->warnings.front();
  EXPECT_TRUE(facts->roce.empty());
  ASSERT_EQ(facts->hcas.size(), 10u);

  std::vector<std::string> names;
  for (const auto& h : facts->hcas) names.push_back(h.name);
  EXPECT_EQ(names, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5",
                                             "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"}));

  const auto& first = facts->hcas[0];
  EXPECT_EQ(first.node_guid, "0xa088c20300a10000");
  EXPECT_EQ(first.sys_image_guid, "0xa088c20300a10000");
  EXPECT_EQ(first.node_description, "dgx-001 mlx5_0");
  ASSERT_EQ(first.ports.size(), 1u);
  EXPECT_EQ(first.ports[0].number, 1);
  EXPECT_EQ(first.ports[0].port_guid, "0xa088c20300a10000");
  EXPECT_EQ(first.ports[0].state, "ACTIVE");
  EXPECT_EQ(first.ports[0].phys_state, "LinkUp");
  EXPECT_EQ(first.ports[0].link_layer, LinkLayer::kInfiniBand);
  EXPECT_EQ(first.ports[0].rate, "400 Gb/sec (4X NDR)");
  EXPECT_EQ(first.ports[0].lid, 0x1cu);
  EXPECT_EQ(first.ports[0].netdev, "ibp0s0");

  const auto& last = facts->hcas[9];  // mlx5_11, the eighth compute HCA
  EXPECT_EQ(last.ports[0].port_guid, "0xa088c20300a1000b");
  EXPECT_EQ(last.ports[0].lid, 0x1cu + 7);

  // The two storage functions share the card's system image GUID and keep their own node GUIDs.
  EXPECT_EQ(facts->hcas[1].sys_image_guid, facts->hcas[2].sys_image_guid);
  EXPECT_NE(facts->hcas[1].node_guid, facts->hcas[2].node_guid);
  EXPECT_EQ(facts->hcas[2].ports[0].rate, "200 Gb/sec (4X HDR)");
  EXPECT_EQ(facts->hcas[2].ports[0].lid, 202u);
  EXPECT_EQ(facts->hcas[2].ports[0].netdev, "ibp2s0f1");
}

TEST(IbLocalProbe, RoceNodeReportsEthernetPortsAndTheirNetdevs) {
  TempDir root;
  for (int n : {0, 1}) {
    FakePort port;
    port.link_layer = "Ethernet";
    port.rate = "400 Gb/sec (1X NDR)";
    port.lid = "0x0";
    port.gid0 = "fe80:0000:0000:0000:0a88:c2ff:fe00:000" + std::to_string(n);  // MAC-derived
    FakeHca hca{.name = "mlx5_" + std::to_string(n),
                .node_guid = sysfs_guid(0x00c3, n),
                .sys_image_guid = sysfs_guid(0x00c3, 0),
                .node_desc = "roce-01 mlx5_" + std::to_string(n),
                .ports = {port},
                .netdevs = {"enp12s0f" + std::to_string(n) + "np" + std::to_string(n)}};
    if (n == 1) hca.ports[0].roce_ndev = "rail1";  // the GID table names the netdev (a renamed one)
    write_fake_hca(root.path(), hca);
  }
  auto facts = probe_ib_local(fake_root(root));
  ASSERT_TRUE(facts.has_value()) << facts.error().message();
  EXPECT_TRUE(facts->warnings.empty()) << facts->warnings.front();
  ASSERT_EQ(facts->hcas.size(), 2u);
  const auto& port = facts->hcas[0].ports[0];
  EXPECT_EQ(port.link_layer, LinkLayer::kEthernet);
  EXPECT_EQ(port.port_guid, "") << "a RoCE GID is derived from the MAC, not a port GUID";
  EXPECT_EQ(port.lid, 0u);
  EXPECT_EQ(port.netdev, "enp12s0f0np0");

  ASSERT_EQ(facts->roce.size(), 2u);
  EXPECT_EQ(facts->roce[0].netdev, "enp12s0f0np0");
  EXPECT_EQ(facts->roce[0].rdma_device, "mlx5_0");
  EXPECT_EQ(facts->roce[0].rdma_port, 1);
  EXPECT_FALSE(facts->roce[0].neighbor.has_value());
  EXPECT_EQ(facts->roce[1].netdev, "rail1");
  EXPECT_EQ(facts->roce[1].rdma_device, "mlx5_1");
}

TEST(IbLocalProbe, PortDownIsReportedAsDown) {
  TempDir root;
  FakePort up;
  up.gid0 = gid_for(sysfs_guid(0x00d4, 1));
  FakePort down;
  down.number = 2;
  down.state = "1: DOWN";
  down.phys_state = "3: Disabled";
  down.rate = "10 Gb/sec (4X SDR)";
  down.lid = "0x0";
  down.gid0 = gid_for(sysfs_guid(0x00d4, 2));
  FakeHca hca{.name = "mlx4_0",
              .node_guid = sysfs_guid(0x00d4, 0),
              .sys_image_guid = sysfs_guid(0x00d4, 0),
              .node_desc = "node-7 mlx4_0",
              .ports = {up, down},
              .netdevs = {"ib0", "ib1"}};
  write_fake_hca(root.path(), hca);
  // mlx4: two ports on one PCI function; dev_port tells the netdevs apart.
  hypertopo::testing::write_text(root.path() / "sys/class/infiniband/mlx4_0/device/net/ib0/dev_port", "0\n");
  hypertopo::testing::write_text(root.path() / "sys/class/infiniband/mlx4_0/device/net/ib1/dev_port", "1\n");

  auto facts = probe_ib_local(fake_root(root));
  ASSERT_TRUE(facts.has_value()) << facts.error().message();
  EXPECT_TRUE(facts->warnings.empty()) << facts->warnings.front();
  ASSERT_EQ(facts->hcas.size(), 1u);
  ASSERT_EQ(facts->hcas[0].ports.size(), 2u);
  const auto& p1 = facts->hcas[0].ports[0];
  const auto& p2 = facts->hcas[0].ports[1];
  EXPECT_EQ(p1.state, "ACTIVE");
  EXPECT_EQ(p1.netdev, "ib0");
  EXPECT_EQ(p2.number, 2);
  EXPECT_EQ(p2.state, "DOWN");
  EXPECT_EQ(p2.phys_state, "Disabled");
  EXPECT_EQ(p2.lid, 0u);
  EXPECT_EQ(p2.port_guid, "0xa088c20300d40002") << "a down port still has its GUID";
  EXPECT_EQ(p2.netdev, "ib1");
}

TEST(IbLocalProbe, MissingAttributesAreWarningsNotFailures) {
  TempDir root;
  FakePort port;
  port.rate = "";                                                                      // no rate file
  port.gid0 = "";                                                                      // no gids/0
  FakeHca hca{.name = "mlx5_0", .node_guid = sysfs_guid(0x00e5, 0), .ports = {port}};  // no desc, no sysimg
  write_fake_hca(root.path(), hca);
  auto facts = probe_ib_local(fake_root(root));
  ASSERT_TRUE(facts.has_value()) << facts.error().message();
  ASSERT_EQ(facts->hcas.size(), 1u);
  EXPECT_EQ(facts->hcas[0].node_guid, "0xa088c20300e50000");
  EXPECT_EQ(facts->hcas[0].ports[0].state, "ACTIVE");
  EXPECT_EQ(facts->hcas[0].ports[0].port_guid, "");
  ASSERT_EQ(facts->warnings.size(), 4u);
  auto has = [&](const std::string& needle) {
    for (const auto& w : facts->warnings) {
      if (w.find(needle) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("mlx5_0: sys_image_guid"));
  EXPECT_TRUE(has("mlx5_0: node_desc"));
  EXPECT_TRUE(has("mlx5_0: ports/1/rate"));
  EXPECT_TRUE(has("mlx5_0: ports/1/gids/0"));
}

TEST(IbLocalProbe, GarbageValuesAreWarnings) {
  TempDir root;
  FakePort port;
  port.lid = "banana";
  port.link_layer = "Token Ring";
  FakeHca hca{.name = "mlx5_0",
              .node_guid = "not-a-guid",
              .sys_image_guid = sysfs_guid(1, 0),
              .node_desc = "x",
              .ports = {port}};
  write_fake_hca(root.path(), hca);
  auto facts = probe_ib_local(fake_root(root));
  ASSERT_TRUE(facts.has_value());
  EXPECT_EQ(facts->hcas[0].node_guid, "");
  EXPECT_EQ(facts->hcas[0].ports[0].link_layer, LinkLayer::kUnknown);
  EXPECT_EQ(facts->warnings.size(), 3u);
}

TEST(IbLocalProbe, NoInfinibandClassMeansNoDevices) {
  TempDir root;
  std::filesystem::create_directories(root.path() / "sys" / "class" / "net");
  std::vector<std::string> log;
  auto options = fake_root(root);
  options.log = [&](const std::string& line) { log.push_back(line); };
  auto facts = probe_ib_local(options);
  ASSERT_TRUE(facts.has_value());
  EXPECT_TRUE(facts->hcas.empty());
  EXPECT_TRUE(facts->warnings.empty());
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.front().find("no RDMA devices"), std::string::npos);
}

TEST(IbLocalProbe, MissingRootIsAnError) {
  TempDir root;
  IbLocalOptions options;
  options.root = root.path() / "absent";
  auto facts = probe_ib_local(options);
  ASSERT_FALSE(facts.has_value());
  EXPECT_EQ(facts.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(facts.error().message().find("absent"), std::string::npos);
}

// libibverbs on a machine without uverbs devices fails (ENOSYS) or lists nothing: never an error.
TEST(IbLocalProbe, VerbsWithoutDevicesIsNoDevices) {
  auto listing = list_verbs_devices();
  EXPECT_EQ(listing.devices.empty(), !listing.note.empty());
  TempDir root;
  auto options = fake_root(root);
  options.verbs = VerbsMode::kOn;
  std::vector<std::string> log;
  options.log = [&](const std::string& line) { log.push_back(line); };
  auto facts = probe_ib_local(options);
  ASSERT_TRUE(facts.has_value()) << facts.error().message();
  // Every device libibverbs lists is missing from the (empty) fake tree, so each is one warning.
  EXPECT_EQ(facts->warnings.size(), listing.devices.size());
}

TEST(IbLocalProbe, ProbeIntoKeepsEarlierWarnings) {
  TempDir root;
  write_dgx_node(root);
  topology::NodeReport report;
  report.warnings.push_back("earlier");
  ASSERT_TRUE(probe_into(report, fake_root(root)).has_value());
  EXPECT_EQ(report.hcas.size(), 10u);
  EXPECT_EQ(report.warnings, std::vector<std::string>{"earlier"});
}

TEST(IbLocalGuids, ParsesSysfsAndGidForms) {
  EXPECT_EQ(guid_from_sysfs("9803:9b03:0067:ab12"), "0x98039b030067ab12");
  EXPECT_EQ(guid_from_sysfs("0x98039B030067AB12"), "0x98039b030067ab12");
  EXPECT_EQ(guid_from_sysfs("9803:9b03:0067"), std::nullopt);
  EXPECT_EQ(guid_from_sysfs("zz03:9b03:0067:ab12"), std::nullopt);
  EXPECT_EQ(port_guid_from_gid("fe80:0000:0000:0000:9803:9b03:0067:ab12"), "0x98039b030067ab12");
  EXPECT_EQ(port_guid_from_gid("fe80:0000:0000:0000:0000:0000:0000:0000"), std::nullopt);
  EXPECT_EQ(port_guid_from_gid("fe80::1"), std::nullopt);
}

}  // namespace
}  // namespace hypertopo::discoverers::ib_local
