// `hypertopo probe` end to end through run_cli: a fake sysfs tree (no RDMA devices exist here) and
// the fake libnvidia-ml.so.1 (no real NVML exists here; the fake keeps NVML's ABI).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <future>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "tests/support/fake_sysfs.h"
#include "topology/node_report.h"

namespace hypertopo::cli {
namespace {

using hypertopo::testing::TempDir;

using Run = hypertopo::testing::CapturedRun;

Run run_probe(std::vector<std::string> args) {
  return hypertopo::testing::run_captured(run_cli, std::move(args));
}

std::string fake_nvml(const std::string& scenario) {
  return std::string(HT_FAKE_NVML_ROOT) + "/" + scenario + "/libnvidia-ml.so.1";
}

void write_one_hca(const TempDir& root) {
  hypertopo::testing::FakePort port;
  port.gid0 = "fe80:0000:0000:0000:a088:c203:00a1:0007";
  hypertopo::testing::write_fake_hca(root.path(), {.name = "mlx5_0",
                                                   .node_guid = "a088:c203:00a1:0007",
                                                   .sys_image_guid = "a088:c203:00a1:0007",
                                                   .node_desc = "gb200-r07-t03 mlx5_0",
                                                   .ports = {port},
                                                   .netdevs = {"ibp3s0"}});
}

TEST(ProbeCommand, IbLocalAndNvmlMakeOneReport) {
  TempDir root;
  write_one_hca(root);
  auto r = run_probe({"probe", "--source", "ib-local", "--source", "nvlink", "--root", root.path().string(),
                      "--node-name", "gb200-r07-t03", "--nvml-library", fake_nvml("gb200_completed"), "-o",
                      "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto report = topology::parse_node_report_text(r.out);
  ASSERT_TRUE(report.has_value()) << report.error().message() << "\n" << r.out;
  EXPECT_EQ(report->node_name, "gb200-r07-t03");
  ASSERT_EQ(report->hcas.size(), 1u);
  EXPECT_EQ(report->hcas[0].ports[0].port_guid, "0xa088c20300a10007");
  ASSERT_TRUE(report->nvlink.has_value());
  EXPECT_EQ(report->nvlink->clique_id, "dc6e40c4-d722-4357-9ba6-5291dd461278.2");
  EXPECT_TRUE(report->warnings.empty());
}

TEST(ProbeCommand, YamlOutputParsesBack) {
  TempDir root;
  write_one_hca(root);
  auto r = run_probe({"probe", "--source", "ib-local", "--root", root.path().string(), "--node-name",
                      "dgx-001", "-o", "yaml"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto report = topology::parse_node_report_text(r.out);
  ASSERT_TRUE(report.has_value()) << report.error().message() << "\n" << r.out;
  EXPECT_EQ(report->node_name, "dgx-001");
  EXPECT_FALSE(report->nvlink.has_value());
}

TEST(ProbeCommand, NoNvmlIsAReportWithoutNvlink) {
  TempDir root;
  auto r = run_probe({"probe", "--source", "nvlink", "--node-name", "cpu-01", "--nvml-library",
                      (root.path() / "libnvidia-ml.so.1").string(), "-v"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto report = topology::parse_node_report_text(r.out);
  ASSERT_TRUE(report.has_value()) << report.error().message();
  EXPECT_FALSE(report->nvlink.has_value());
  EXPECT_NE(r.err.find("no NVLink facts"), std::string::npos) << r.err;
}

TEST(ProbeCommand, ErrorsAreOneLineAndNonZero) {
  auto bad_source = run_probe({"probe", "--source", "ufm", "--node-name", "n1"});
  EXPECT_EQ(bad_source.code, 2);
  EXPECT_NE(bad_source.err.find("'ufm' is not a node probe"), std::string::npos) << bad_source.err;

  auto bad_name = run_probe({"probe", "--source", "nvlink", "--node-name", "Not_A_Name"});
  EXPECT_EQ(bad_name.code, 2);
  EXPECT_NE(bad_name.err.find("Not_A_Name"), std::string::npos) << bad_name.err;

  auto broken_nvml = run_probe(
      {"probe", "--source", "nvlink", "--node-name", "n1", "--nvml-library", fake_nvml("init_fails")});
  EXPECT_EQ(broken_nvml.code, 3);
  EXPECT_NE(broken_nvml.err.find("Driver Not Loaded"), std::string::npos) << broken_nvml.err;
  EXPECT_EQ(broken_nvml.out, "");
}

// Something listens on lldpd's control socket and never answers (a wedged lldpd): liblldpctl's own
// I/O would wait for ever. The probe ends within its timeout (5 s) with one error naming the socket.
TEST(ProbeCommand, ASilentLldpdSocketEndsWithinTheTimeoutWithOneError) {
  TempDir dir;
  const std::string path = (dir.path() / "lldpd.socket").string();
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);  // connections wait in the backlog, never accepted
  auto probe = std::async(std::launch::async, [&] {
    return run_probe({"probe", "--source", "lldp", "--node-name", "n1", "--lldpd-socket", path});
  });
  const bool ended = probe.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  ::close(listener);  // resets a connection still waiting, so that a hung probe returns after all
  const auto result = probe.get();
  ASSERT_TRUE(ended) << "the probe waited on a silent lldpd socket for 30 s";
  EXPECT_EQ(result.code, 3);
  EXPECT_NE(result.err.find("lldpd control socket " + path + ": no answer within 5000 ms"), std::string::npos)
      << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_EQ(result.out, "");
}

}  // namespace
}  // namespace hypertopo::cli
