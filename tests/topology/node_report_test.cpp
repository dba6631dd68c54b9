// NodeReport model tests: the custom-object shape, JSON and YAML round trips, and errors that name
// the field at fault.
#include "topology/node_report.h"

#include <gtest/gtest.h>

#include <functional>

#include "discoverers/ib-local/ib_local_probe.h"
#include "tests/support/fake_sysfs.h"

namespace hypertopo::topology {
namespace {

using nlohmann::json;
using namespace std::chrono;

NodeReport full_report() {
  NodeReport r;
  r.node_name = "gb200-r07-t03";
  r.probed_at = sys_days{year{2026} / 11 / 22} + hours{4} + minutes{30} + seconds{45};
  HcaDevice ib{.name = "mlx5_0",
               .node_guid = "0xa088c20300a10000",
               .sys_image_guid = "0xa088c20300a10000",
               .node_description = "gb200-r07-t03 mlx5_0",
               .ports = {HcaPort{.number = 1,
                                 .port_guid = "0xa088c20300a10000",
                                 .state = "ACTIVE",
                                 .phys_state = "LinkUp",
                                 .link_layer = LinkLayer::kInfiniBand,
                                 .rate = "400 Gb/sec (4X NDR)",
                                 .lid = 28,
                                 .netdev = "ibp3s0"}}};
  HcaDevice roce{.name = "mlx5_4",
                 .node_guid = "0xa088c20300c30000",
                 .sys_image_guid = "0xa088c20300c30000",
                 .node_description = "true",  // must survive YAML as a string
                 .ports = {HcaPort{.number = 1,
                                   .state = "DOWN",
                                   .phys_state = "Disabled",
                                   .link_layer = LinkLayer::kEthernet,
                                   .rate = "400 Gb/sec (1X NDR)",
                                   .netdev = "enp12s0np0"}}};
  r.hcas = {ib, roce};
  r.roce = {RoceNetdev{.netdev = "enp12s0np0",
                       .rdma_device = "mlx5_4",
                       .rdma_port = 1,
                       .oper_state = "up",
                       .speed_mbps = 400000,
                       .neighbor = LldpNeighbor{.chassis_id = "1c:34:da:aa:bb:cc",
                                                .chassis_id_subtype = "mac",
                                                .system_name = "leaf-1",
                                                .port_id = "swp1",
                                                .port_id_subtype = "ifname",
                                                .port_description = "0123"}},
            RoceNetdev{.netdev = "enp13s0np0"}};
  NvlinkFacts nv;
  nv.source = "nvml";
  nv.clique_id = "dc6e40c4-d722-4357-9ba6-5291dd461278.2";
  nv.gpus = {GpuFabric{.index = 0,
                       .cluster_uuid = "dc6e40c4-d722-4357-9ba6-5291dd461278",
                       .clique_id = 2,
                       .state = "Completed",
                       .status = "Success",
                       .health_mask = 2,
                       .health_summary = "Unhealthy",
                       .in_domain = true},
             GpuFabric{.index = 1,
                       .cluster_uuid = "dc6e40c4-d722-4357-9ba6-5291dd461278",
                       .clique_id = 4000000005ull,
                       .state = "InProgress",
                       .status = "Success"}};
  nv.conflicts = {"example conflict"};
  r.nvlink = nv;
  r.warnings = {"mlx5_9: ports/1/rate: missing"};
  return r;
}

TEST(NodeReport, RendersAKubernetesCustomObjectBody) {
  auto j = render_node_report(full_report());
  EXPECT_EQ(j["apiVersion"], "hypertopo.io/v1alpha1");
  EXPECT_EQ(j["kind"], "NodeReport");
  EXPECT_EQ(j["metadata"]["name"], "gb200-r07-t03");
  EXPECT_EQ(j["spec"]["nodeName"], "gb200-r07-t03");
  EXPECT_EQ(j["spec"]["probedAt"], "2026-11-22T04:30:45Z");
  EXPECT_EQ(j["spec"]["hcas"][0]["ports"][0]["portGuid"], "0xa088c20300a10000");
  EXPECT_EQ(j["spec"]["hcas"][0]["ports"][0]["linkLayer"], "InfiniBand");
  EXPECT_EQ(j["spec"]["hcas"][0]["ports"][0]["lid"], 28);
  EXPECT_FALSE(j["spec"]["hcas"][1]["ports"][0].contains("portGuid"));
  EXPECT_EQ(j["spec"]["roce"][0]["lldpNeighbor"]["systemName"], "leaf-1");
  EXPECT_EQ(j["spec"]["roce"][0]["lldpNeighbor"]["chassisIdSubtype"], "mac");
  EXPECT_FALSE(j["spec"]["roce"][1].contains("lldpNeighbor"));
  EXPECT_EQ(j["spec"]["nvlink"]["cliqueId"], "dc6e40c4-d722-4357-9ba6-5291dd461278.2");
  EXPECT_EQ(j["spec"]["nvlink"]["gpus"][0]["healthMask"], 2);
  EXPECT_FALSE(j["spec"]["nvlink"]["gpus"][1].contains("healthMask"));
}

TEST(NodeReport, JsonRoundTrip) {
  const NodeReport original = full_report();
  auto back = parse_node_report(render_node_report(original));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(*back, original);
  auto from_text = parse_node_report_text(render_node_report(original).dump(2));
  ASSERT_TRUE(from_text.has_value()) << from_text.error().message();
  EXPECT_EQ(*from_text, original);
}

TEST(NodeReport, YamlRoundTrip) {
  const NodeReport original = full_report();
  const std::string yaml = render_node_report_yaml(original);
  EXPECT_NE(yaml.find("kind: \"NodeReport\""), std::string::npos) << yaml;
  auto back = parse_node_report_text(yaml);
  ASSERT_TRUE(back.has_value()) << back.error().message() << "\n" << yaml;
  EXPECT_EQ(*back, original);
}

TEST(NodeReport, HandWrittenYamlWithPlainScalars) {
  const std::string yaml = R"(apiVersion: hypertopo.io/v1alpha1
kind: NodeReport
metadata:
  name: dgx-001
spec:
  nodeName: dgx-001
  probedAt: 2026-11-22T06:30:45+02:00
  hcas:
    - name: mlx5_0
      nodeGuid: "0xa088c20300a10000"
      ports:
        - port: 1
          linkLayer: InfiniBand
          lid: 28
)";
  auto r = parse_node_report_text(yaml);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->node_name, "dgx-001");
  EXPECT_EQ(format_rfc3339(r->probed_at), "2026-11-22T04:30:45Z");
  ASSERT_EQ(r->hcas.size(), 1u);
  EXPECT_EQ(r->hcas[0].ports[0].lid, 28u);
  EXPECT_FALSE(r->nvlink.has_value());
}

TEST(NodeReport, ProbedSysfsRoundTrips) {
  hypertopo::testing::TempDir root;
  hypertopo::testing::FakePort port;
  port.gid0 = "fe80:0000:0000:0000:a088:c203:00a1:0000";
  hypertopo::testing::write_fake_hca(root.path(), {.name = "mlx5_0",
                                                   .node_guid = "a088:c203:00a1:0000",
                                                   .sys_image_guid = "a088:c203:00a1:0000",
                                                   .node_desc = "dgx-001 mlx5_0",
                                                   .ports = {port},
                                                   .netdevs = {"ibp0s0"}});
  NodeReport report;
  report.node_name = "dgx-001";
  discoverers::ib_local::IbLocalOptions options;
  options.root = root.path();
  ASSERT_TRUE(discoverers::ib_local::probe_into(report, options).has_value());
  auto back = parse_node_report_text(render_node_report_yaml(report));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(*back, report);
}

// Each broken document must fail with a message naming the field.
struct BrokenCase {
  const char* what;
  std::function<void(json&)> damage;
  const char* expected_in_message;
};

TEST(NodeReport, ErrorsNameTheField) {
  const std::vector<BrokenCase> cases = {
      {"wrong kind", [](json& j) { j["kind"] = "HyperNode"; }, "kind: 'HyperNode'"},
      {"wrong apiVersion", [](json& j) { j["apiVersion"] = "v1"; }, "apiVersion"},
      {"no spec", [](json& j) { j.erase("spec"); }, "spec: missing"},
      {"no nodeName", [](json& j) { j["spec"].erase("nodeName"); }, "spec.nodeName: missing"},
      {"name mismatch", [](json& j) { j["metadata"]["name"] = "other"; }, "metadata.name: 'other'"},
      {"bad time", [](json& j) { j["spec"]["probedAt"] = "yesterday"; }, "spec.probedAt"},
      {"lid as text", [](json& j) { j["spec"]["hcas"][1]["ports"][0]["lid"] = "28"; },
       "spec.hcas[1].ports[0].lid: expected an unsigned integer"},
      {"lid too large", [](json& j) { j["spec"]["hcas"][0]["ports"][0]["lid"] = 1ull << 40; },
       "spec.hcas[0].ports[0].lid: value"},
      {"negative port", [](json& j) { j["spec"]["hcas"][0]["ports"][0]["port"] = -1; },
       "spec.hcas[0].ports[0].port: expected an unsigned integer"},
      {"bad link layer", [](json& j) { j["spec"]["hcas"][0]["ports"][0]["linkLayer"] = "Token Ring"; },
       "spec.hcas[0].ports[0].linkLayer: 'Token Ring'"},
      {"hcas not a list", [](json& j) { j["spec"]["hcas"] = json::object(); }, "spec.hcas: expected a list"},
      {"neighbor not an object", [](json& j) { j["spec"]["roce"][0]["lldpNeighbor"] = 5; },
       "spec.roce[0].lldpNeighbor: expected an object"},
      {"inDomain missing", [](json& j) { j["spec"]["nvlink"]["gpus"][1].erase("inDomain"); },
       "spec.nvlink.gpus[1].inDomain: missing"},
      {"warning not text", [](json& j) { j["spec"]["warnings"][0] = 7; },
       "spec.warnings[0]: expected a string"},
  };
  for (const auto& c : cases) {
    json doc = render_node_report(full_report());
    c.damage(doc);
    auto parsed = parse_node_report(doc);
    ASSERT_FALSE(parsed.has_value()) << c.what;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kParse) << c.what;
    EXPECT_NE(parsed.error().message().find(c.expected_in_message), std::string::npos)
        << c.what << ": " << parsed.error().message();
  }
}

TEST(NodeReport, TextAndFileErrors) {
  EXPECT_FALSE(parse_node_report_text("{ not json").has_value());
  EXPECT_FALSE(parse_node_report_text("a: [unclosed").has_value());
  EXPECT_FALSE(parse_node_report_text("- just\n- a list\n").has_value());
  hypertopo::testing::TempDir dir;
  auto missing = read_node_report_file(dir.path() / "nope.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  const auto bad = dir.path() / "bad.yaml";
  hypertopo::testing::write_text(bad, "apiVersion: hypertopo.io/v1alpha1\nkind: NodeReport\n");
  auto parsed = read_node_report_file(bad);
  ASSERT_FALSE(parsed.has_value());
  EXPECT_NE(parsed.error().message().find("bad.yaml: metadata: missing"), std::string::npos)
      << parsed.error().message();
}

// A report cut short anywhere (a partial write, a truncated API response) is an error or a
// different report, never a crash or the original.
TEST(NodeReport, TruncatedTextNeverParsesAsTheOriginal) {
  const NodeReport original = full_report();
  for (const std::string& text : {render_node_report(original).dump(), render_node_report_yaml(original)}) {
    for (std::size_t cut = 0; cut + 1 < text.size(); ++cut) {
      auto parsed = parse_node_report_text(std::string_view(text).substr(0, cut));
      if (parsed) {
        EXPECT_NE(*parsed, original) << "cut at " << cut;
      }
    }
  }
}

TEST(NodeReport, Rfc3339) {
  auto t = parse_rfc3339("2026-11-22T04:30:45.123Z");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(format_rfc3339(*t), "2026-11-22T04:30:45Z");
  auto shifted = parse_rfc3339("2026-11-21T23:30:45-05:00");
  ASSERT_TRUE(shifted.has_value());
  EXPECT_EQ(*shifted, *t);
  EXPECT_FALSE(parse_rfc3339("2026-11-22 04:30:45Z").has_value());
  EXPECT_FALSE(parse_rfc3339("2026-02-30T04:30:45Z").has_value());
  EXPECT_FALSE(parse_rfc3339("2026-11-22T04:30:45").has_value());
  EXPECT_FALSE(parse_rfc3339("2026-11-22T04:30:45Zjunk").has_value());
}

}  // namespace
}  // namespace hypertopo::topology
