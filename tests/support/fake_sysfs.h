// tests/support/fake_sysfs.h: small fake /sys/class/infiniband trees for the ib-local probe tests.
//
// There are no RDMA devices on the test machines, so each test writes the attributes the kernel
// would show, in the kernel's own text format, under a temporary root.
//
//   TempDir root;
//   FakeHca hca{.name = "mlx5_0", .node_guid = "9803:9b03:0067:ab12", ...};
//   write_fake_hca(root.path(), hca);
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"

namespace hypertopo::testing {

struct FakePort {
  int number = 1;
  std::string state = "4: ACTIVE";
  std::string phys_state = "5: LinkUp";
  std::string link_layer = "InfiniBand";
  std::string rate = "400 Gb/sec (4X NDR)";
  std::string lid = "0x1";
  std::string gid0;       // empty: no gids/0 file
  std::string roce_ndev;  // written to gid_attrs/ndevs/0 when set
};

struct FakeHca {
  std::string name;
  std::string node_guid;       // sysfs form "9803:9b03:0067:ab12"; empty: no file
  std::string sys_image_guid;  // empty: no file
  std::string node_desc;       // empty: no file
  std::vector<FakePort> ports;
  std::vector<std::string> netdevs;  // names under device/net/
};

inline void write_fake_hca(const std::filesystem::path& root, const FakeHca& hca) {
  const auto dir = root / "sys" / "class" / "infiniband" / hca.name;
  std::filesystem::create_directories(dir / "ports");
  // The kernel ends every attribute with a newline; the probe must not keep it.
  if (!hca.node_guid.empty()) write_text(dir / "node_guid", hca.node_guid + "\n");
  if (!hca.sys_image_guid.empty()) write_text(dir / "sys_image_guid", hca.sys_image_guid + "\n");
  if (!hca.node_desc.empty()) write_text(dir / "node_desc", hca.node_desc + "\n");
  for (const auto& port : hca.ports) {
    const auto p = dir / "ports" / std::to_string(port.number);
    std::filesystem::create_directories(p / "gids");
    if (!port.state.empty()) write_text(p / "state", port.state + "\n");
    if (!port.phys_state.empty()) write_text(p / "phys_state", port.phys_state + "\n");
    if (!port.link_layer.empty()) write_text(p / "link_layer", port.link_layer + "\n");
    if (!port.rate.empty()) write_text(p / "rate", port.rate + "\n");
    if (!port.lid.empty()) write_text(p / "lid", port.lid + "\n");
    if (!port.gid0.empty()) write_text(p / "gids" / "0", port.gid0 + "\n");
    if (!port.roce_ndev.empty()) {
      std::filesystem::create_directories(p / "gid_attrs" / "ndevs");
      write_text(p / "gid_attrs" / "ndevs" / "0", port.roce_ndev + "\n");
    }
  }
  for (const auto& netdev : hca.netdevs) {
    std::filesystem::create_directories(dir / "device" / "net" / netdev);
  }
}

}  // namespace hypertopo::testing
