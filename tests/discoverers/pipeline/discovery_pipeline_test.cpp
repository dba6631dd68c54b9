// The discovery pipeline: node facts (node list, NodeReports) decide host identity, and a failing
// source either ends the run or is recorded as an incomplete run that must not delete anything.
#include "discoverers/pipeline/discovery_pipeline.h"

#include <gtest/gtest.h>

#include "tests/support/fixtures.h"

namespace hypertopo::discoverers {
namespace {

// One leaf with two HCAs whose descriptions are firmware defaults: no host name can be read from
// them, so only GUID facts can place them.
constexpr const char* kCapture = R"(vendid=0x2c9
devid=0xd2f0
sysimgguid=0x1
switchguid=0x1(1)
Switch	4 "S-0000000000000001"		# "MF0;leaf-a:MQM9700/U1" enhanced port 0 lid 1 lmc 0
[1]	"H-0000000000000011"[1](11) 		# "MT4129 ConnectX7 Mellanox Technologies" lid 2 4xNDR
[2]	"H-0000000000000021"[1](21) 		# "MT4129 ConnectX7 Mellanox Technologies" lid 3 4xNDR

vendid=0x2c9
devid=0x1021
sysimgguid=0x11
caguid=0x11
Ca	1 "H-0000000000000011"		# "MT4129 ConnectX7 Mellanox Technologies"
[1](11) 	"S-0000000000000001"[1]		# lid 2 lmc 0 "MF0;leaf-a:MQM9700/U1" lid 1 4xNDR

vendid=0x2c9
devid=0x1021
sysimgguid=0x21
caguid=0x21
Ca	1 "H-0000000000000021"		# "MT4129 ConnectX7 Mellanox Technologies"
[1](21) 	"S-0000000000000001"[2]		# lid 3 lmc 0 "MF0;leaf-a:MQM9700/U1" lid 1 4xNDR
)";

topology::NodeReport ib_report(const std::string& node, const std::string& port_guid) {
  topology::NodeReport r;
  r.node_name = node;
  topology::HcaDevice hca;
  hca.name = "mlx5_0";
  hca.node_guid = port_guid;
  topology::HcaPort port;
  port.port_guid = port_guid;
  port.link_layer = topology::LinkLayer::kInfiniBand;
  port.state = "ACTIVE";
  hca.ports.push_back(port);
  r.hcas.push_back(hca);
  return r;
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    capture_ = dir_.path() / "fabric.out";
    testing::write_text(capture_, kCapture);
    register_builtin_discoverers(registry_);
    input_.sources.push_back(*SourceSpec::parse("ibnetdiscover:" + capture_.string()));
  }
  testing::TempDir dir_;
  std::filesystem::path capture_;
  DiscovererRegistry registry_;
  PipelineInput input_;
};

TEST_F(PipelineTest, WithoutNodeFactsFirmwareDescriptionsLeaveHostsUnmapped) {
  auto run = run_discovery(registry_, input_);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_TRUE(run->complete);
  EXPECT_EQ(run->tree.node_count(), 0u);
  EXPECT_EQ(run->tree.report.unmapped_endpoints.size(), 2u);
}

TEST_F(PipelineTest, NodeReportGuidsPlaceHostsExactly) {
  std::vector<topology::NodeReport> reports = {ib_report("gpu-a", "0x0000000000000011"),
                                               ib_report("gpu-b", "0x0000000000000021")};
  input_.deps.reports = &reports;
  auto run = run_discovery(registry_, input_);
  ASSERT_TRUE(run) << run.error().message();
  ASSERT_EQ(run->tree.size(), 1u);
  EXPECT_EQ(run->tree.domain(0).nodes, (std::vector<std::string>{"gpu-a", "gpu-b"}));
  EXPECT_TRUE(run->tree.report.unmapped_endpoints.empty());
}

TEST_F(PipelineTest, AGuidClaimedByTwoNodesIsLeftUnmappedAndReported) {
  std::vector<topology::NodeReport> reports = {ib_report("gpu-a", "0x11"), ib_report("gpu-b", "0x11"),
                                               ib_report("gpu-c", "0x21")};
  input_.deps.reports = &reports;
  auto run = run_discovery(registry_, input_);
  ASSERT_TRUE(run) << run.error().message();
  // gpu-c alone on the leaf merges nothing; the contested GUID stays unmapped.
  ASSERT_EQ(run->tree.report.unmapped_endpoints.size(), 1u);
  EXPECT_EQ(run->tree.report.unmapped_endpoints[0].guid, "0x0000000000000011");
  bool reported = false;
  for (const auto& w : run->tree.report.warnings) {
    reported |=
        w.find("0x0000000000000011") != std::string::npos && w.find("gpu-a, gpu-b") != std::string::npos;
  }
  EXPECT_TRUE(reported);
}

TEST_F(PipelineTest, RoceReportsDoNotClaimFabricGuids) {
  auto roce = ib_report("gpu-a", "0x11");
  roce.hcas[0].ports[0].link_layer = topology::LinkLayer::kEthernet;
  std::vector<topology::NodeReport> reports = {roce};
  input_.deps.reports = &reports;
  auto run = run_discovery(registry_, input_);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->tree.node_count(), 0u);
}

TEST_F(PipelineTest, NodeListAnnotationsMapGuidsAndDefineComputeHosts) {
  k8s::NodeList nodes;
  nodes.items.push_back(
      {.name = "gpu-a", .annotations = {{kNodeGuidAnnotation, "0x11, 0x0000000000000021"}}});
  input_.deps.nodes = &nodes;
  auto run = run_discovery(registry_, input_);
  ASSERT_TRUE(run) << run.error().message();
  // Both GUIDs belong to gpu-a; a one-host leaf merges nothing, so no domain is emitted.
  EXPECT_TRUE(run->tree.report.unmapped_endpoints.empty());
  EXPECT_TRUE(run->tree.report.excluded_hosts.empty());
}

TEST_F(PipelineTest, AFailingSourceEndsACliRun) {
  input_.sources.push_back(*SourceSpec::parse("ibnetdiscover:" + (dir_.path() / "missing.out").string()));
  auto run = run_discovery(registry_, input_);
  ASSERT_FALSE(run);
  EXPECT_NE(run.error().message().find("missing.out"), std::string::npos) << run.error().message();
}

TEST_F(PipelineTest, AFailingSourceMakesAnAgentRunIncompleteButKeepsTheOthers) {
  std::vector<topology::NodeReport> reports = {ib_report("gpu-a", "0x11"), ib_report("gpu-b", "0x21")};
  input_.deps.reports = &reports;
  input_.stop_on_source_error = false;
  input_.sources.insert(input_.sources.begin(),
                        *SourceSpec::parse("ibnetdiscover:" + (dir_.path() / "missing.out").string()));
  auto run = run_discovery(registry_, input_);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_FALSE(run->complete);
  ASSERT_EQ(run->outcomes.size(), 2u);
  EXPECT_FALSE(run->outcomes[0].ok);
  EXPECT_NE(run->outcomes[0].error.find("missing.out"), std::string::npos);
  EXPECT_TRUE(run->outcomes[1].ok);
  EXPECT_EQ(run->outcomes[1].domains, 1u);
  EXPECT_EQ(run->tree.size(), 1u);
}

}  // namespace
}  // namespace hypertopo::discoverers
