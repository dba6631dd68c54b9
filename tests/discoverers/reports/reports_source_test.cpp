// `reports:DIR`: saved NodeReports read from a directory and handed to the pipeline as node facts.
#include "discoverers/reports/reports_source.h"

#include <gtest/gtest.h>

#include "discoverers/pipeline/discovery_pipeline.h"
#include "tests/support/fixtures.h"

namespace hypertopo::discoverers {
namespace {

topology::NodeReport ib_report(const std::string& node, const std::string& guid) {
  topology::NodeReport r;
  r.node_name = node;
  topology::HcaDevice hca;
  hca.name = "mlx5_0";
  hca.node_guid = guid;
  topology::HcaPort port;
  port.port_guid = guid;
  port.link_layer = topology::LinkLayer::kInfiniBand;
  port.state = "ACTIVE";
  hca.ports.push_back(port);
  r.hcas.push_back(hca);
  return r;
}

TEST(LoadNodeReports, ReadsYamlAndJsonInNameOrderAndIgnoresOtherFiles) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "b.yaml", topology::render_node_report_yaml(ib_report("gpu-b", "0x21")));
  testing::write_text(dir.path() / "a.json", topology::render_node_report(ib_report("gpu-a", "0x11")).dump());
  testing::write_text(dir.path() / "README.txt", "not a report");
  auto reports = load_node_reports(dir.path());
  ASSERT_TRUE(reports) << reports.error().message();
  ASSERT_EQ(reports->size(), 2u);
  EXPECT_EQ((*reports)[0].node_name, "gpu-a");
  EXPECT_EQ((*reports)[1].node_name, "gpu-b");
  EXPECT_EQ((*reports)[1].hcas[0].ports[0].port_guid, "0x21");
}

TEST(LoadNodeReports, ErrorsNameTheFileAtFault) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "a.yaml", topology::render_node_report_yaml(ib_report("gpu-a", "0x11")));
  testing::write_text(dir.path() / "broken.yaml",
                      "apiVersion: hypertopo.io/v1alpha1\nkind: NodeReport\nspec: [");
  auto broken = load_node_reports(dir.path());
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message().find("broken.yaml"), std::string::npos) << broken.error().message();

  std::filesystem::remove(dir.path() / "broken.yaml");
  testing::write_text(dir.path() / "z.json", topology::render_node_report(ib_report("gpu-a", "0x12")).dump());
  auto twice = load_node_reports(dir.path());
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message().find("z.json"), std::string::npos) << twice.error().message();
  EXPECT_NE(twice.error().message().find("a.yaml"), std::string::npos) << twice.error().message();

  testing::TempDir empty;
  auto none = load_node_reports(empty.path());
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("no NodeReport files"), std::string::npos);
  EXPECT_FALSE(load_node_reports(empty.path() / "absent"));
}

// A source that records what the pipeline handed it as DiscoveryDeps::reports.
class ReportsSeen : public Discoverer {
 public:
  explicit ReportsSeen(std::size_t* seen, const DiscoveryDeps& deps) {
    *seen = deps.reports ? deps.reports->size() : 0;
  }
  std::string name() const override { return "seen"; }
  std::expected<Discovery, Error> discover() override {
    Discovery d;
    d.tree = topology::Tree{};
    return d;
  }
};

TEST(ReportsSource, RunsFirstAndFeedsTheOtherSourcesAndTheNodeFacts) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "a.yaml", topology::render_node_report_yaml(ib_report("gpu-a", "0x11")));
  testing::write_text(dir.path() / "b.yaml", topology::render_node_report_yaml(ib_report("gpu-b", "0x21")));
  DiscovererRegistry registry;
  register_builtin_discoverers(registry);
  std::size_t seen = 99;
  ASSERT_TRUE(registry
                  .add(entry_without_config("seen", "test",
                                            [&](const SourceSpec&, const DiscoveryDeps& deps)
                                                -> std::expected<std::unique_ptr<Discoverer>, Error> {
                                              return std::make_unique<ReportsSeen>(&seen, deps);
                                            }))
                  .has_value());
  PipelineInput input;
  // Given after the source that needs them: the pipeline still runs `reports:` first.
  input.sources = {*SourceSpec::parse("seen"), *SourceSpec::parse("reports:" + dir.path().string())};
  auto run = run_discovery(registry, input);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(seen, 2u);
  EXPECT_EQ(run->reports.size(), 2u);
  ASSERT_EQ(run->outcomes.size(), 2u);
  EXPECT_EQ(run->outcomes[0].source, "reports:" + dir.path().string());
  EXPECT_TRUE(run->tree.empty());

  auto missing = run_discovery(registry, PipelineInput{.sources = {*SourceSpec::parse("reports")}});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("reports:DIR"), std::string::npos) << missing.error().message();
}

}  // namespace
}  // namespace hypertopo::discoverers
