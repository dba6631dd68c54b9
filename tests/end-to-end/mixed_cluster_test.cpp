// The mixed scenario of Volcano issue 5732: GB200 NVL72 racks (NVLink domains of 18 nodes) in two
// InfiniBand scalable units and HGX H100 nodes directly on the leaves of two more, discovered through
// the pipeline from a fabric graph and saved NodeReports (`reports:DIR`). Every HyperNode must pass
// the CRD schema and Volcano's admission policy (the in-tree validator stands in for an API server),
// and the tier names must mean one physical layer each, so `highestTierName: leaf` covers both kinds.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "discoverers/demo/demo_fabric.h"
#include "discoverers/pipeline/discovery_pipeline.h"
#include "discoverers/reports/reports_source.h"
#include "tests/support/crd/crd_schema.h"
#include "tests/support/fixtures.h"
#include "topology/hypernode.h"

namespace hypertopo::discoverers {
namespace {

// Real cluster UUIDs from the nvidia-smi fixtures (GB200 captures); clique ids per rack.
constexpr const char* kClusterA = "dc6e40c4-d722-4357-9ba6-5291dd461278";
constexpr const char* kClusterB = "9c6f5af3-53bf-49b5-a436-b66766c413c3";
constexpr const char* kZeroUuid = "00000000-0000-0000-0000-000000000000";

DemoFabricSpec mixed_spec() {
  DemoFabricSpec s;
  s.scalable_units = 4;  // su01, su02: GB200; su03, su04: H100
  s.hosts_per_su = 36;   // two NVL72 racks of 18 compute trays per GB200 SU
  s.rails = 4;
  s.sus_per_pod = 2;
  s.spines_per_pod = 4;
  s.cores = 4;
  s.core_links_per_spine = 2;
  s.storage = false;
  s.sharp = false;
  s.firmware_default_cas = 0;
  s.prefix = "mx";
  return s;
}

std::string host(int su, int n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "mx-su%02d-node%03d", su, n);
  return buf;
}

// The fabric graph as a source, so the test runs the same pipeline as `hypertopo discover`.
class GraphSource : public Discoverer {
 public:
  std::string name() const override { return "mixed-fabric"; }
  std::expected<Discovery, Error> discover() override {
    Discovery d;
    d.graph = generate_demo_fabric(mixed_spec());
    return d;
  }
};

topology::NodeReport gpu_report(const std::string& node, const std::string& uuid, std::uint64_t clique) {
  topology::NodeReport r;
  r.node_name = node;
  r.probed_at = std::chrono::sys_seconds(std::chrono::seconds(1795000000));
  topology::NvlinkFacts f;
  f.source = "nvml";
  const bool mnnvl = uuid != kZeroUuid;
  for (int g = 0; g < 4; ++g) {
    topology::GpuFabric gpu;
    gpu.index = g;
    gpu.cluster_uuid = uuid;
    gpu.clique_id = clique;
    gpu.state = "Completed";
    gpu.status = "Success";
    gpu.in_domain = mnnvl;
    f.gpus.push_back(gpu);
  }
  if (mnnvl) f.clique_id = uuid + "." + std::to_string(clique);
  r.nvlink = f;
  return r;
}

class MixedCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    register_builtin_discoverers(registry_);
    ASSERT_TRUE(registry_
                    .add(entry_without_config("mixed-fabric", "test fabric",
                                              [](const SourceSpec&, const DiscoveryDeps&)
                                                  -> std::expected<std::unique_ptr<Discoverer>, Error> {
                                                return std::make_unique<GraphSource>();
                                              }))
                    .has_value());
    // su01: racks 1 and 2 of cluster A; su02: racks 3 and 4 of cluster B. Rack 4 miscabled: its last
    // tray sits in su03 (another pod), so that NVLink domain spans pods. su03/su04: HGX H100.
    for (int n = 1; n <= 36; ++n) write(gpu_report(host(1, n), kClusterA, n <= 18 ? 1 : 2));
    for (int n = 1; n <= 35; ++n) write(gpu_report(host(2, n), kClusterB, n <= 18 ? 3 : 4));
    write(gpu_report(host(3, 1), kClusterB, 4));
    for (int su = 3; su <= 4; ++su) {
      for (int n = su == 3 ? 2 : 1; n <= 36; ++n) write(gpu_report(host(su, n), kZeroUuid, 0));
    }
    // su02's node 36 has no report: a GB200 tray whose agent is down still sits on its leaf.
    input_.sources = {*SourceSpec::parse("mixed-fabric"),
                      *SourceSpec::parse("reports:" + dir_.path().string())};
  }
  void write(const topology::NodeReport& r) {
    testing::write_text(dir_.path() / (r.node_name + ".yaml"), topology::render_node_report_yaml(r));
  }

  testing::TempDir dir_;
  DiscovererRegistry registry_;
  PipelineInput input_;
};

// The tier of the lowest domain above `node` whose tierName is `name`, or 0.
int tier_named_above(const topology::Tree& t, const std::string& node, const std::string& name) {
  for (topology::DomainId i = 0; i < t.size(); ++i) {
    const auto& nodes = t.domain(i).nodes;
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) continue;
    for (std::optional<topology::DomainId> d = i; d; d = t.domain(*d).parent) {
      if (t.domain(*d).tier_name == name) return t.domain(*d).tier;
    }
  }
  return 0;
}

TEST_F(MixedCluster, OneValidTreeWithOneTierPerLayer) {
  HT_REQUIRE_FIXTURE(crd_path, "volcano/hypernodes-crd.yaml");
  HT_REQUIRE_FIXTURE(policy_path, "volcano/hypernodes-validating-admission-policy.yaml");
  auto crd = testing::load_crd_schema(crd_path);
  ASSERT_TRUE(crd) << crd.error();
  auto policy = testing::load_admission_policy(policy_path);
  ASSERT_TRUE(policy) << policy.error();

  auto run = run_discovery(registry_, input_);
  ASSERT_TRUE(run) << run.error().message();
  const auto& tree = run->tree;
  ASSERT_TRUE(topology::check_invariants(tree).has_value());
  EXPECT_EQ(run->nvlink_domains, 4u);
  EXPECT_EQ(run->reports.size(), 143u);
  EXPECT_EQ(tree.node_count(), 144u);

  const auto list = topology::render_hypernode_list(tree);
  for (const auto& object : list["items"]) {
    const auto name = object["metadata"]["name"].get<std::string>();
    auto crd_errors = testing::validate_against_crd(*crd, object);
    EXPECT_TRUE(crd_errors.empty()) << name << ": " << crd_errors.front();
    auto policy_errors = testing::validate_against_policy(*policy, object);
    EXPECT_TRUE(policy_errors.empty()) << name << ": " << policy_errors.front();
  }

  // Each tierName is one tier number across the cluster (Volcano resolves highestTierName this way).
  std::map<std::string, std::set<int>> tiers;
  for (const auto& d : tree.domains()) tiers[d.tier_name].insert(d.tier);
  EXPECT_EQ(tiers["nvlink"], std::set<int>{1});
  EXPECT_EQ(tiers["leaf"], std::set<int>{2});
  EXPECT_EQ(tiers["spine"], std::set<int>{3});
  EXPECT_EQ(tiers["core"], std::set<int>{4});

  // NVL72 racks of 18 nodes, each under its scalable unit's leaf domain.
  for (const auto& [uuid, clique] :
       std::vector<std::pair<std::string, int>>{{kClusterA, 1}, {kClusterA, 2}, {kClusterB, 3}}) {
    auto id = tree.find(topology::nvlink_domain_name(uuid + "." + std::to_string(clique)));
    ASSERT_TRUE(id) << uuid << "." << clique;
    EXPECT_EQ(tree.domain(*id).nodes.size(), 18u);
    ASSERT_TRUE(tree.domain(*id).parent);
    EXPECT_EQ(tree.domain(*tree.domain(*id).parent).tier_name, "leaf");
  }

  // highestTierName: leaf -> tier 2 holds a GB200 tray, its report-less rack mate and an H100 node.
  for (const auto& node : {host(1, 1), host(2, 36), host(4, 7)}) {
    EXPECT_EQ(tier_named_above(tree, node, "leaf"), 2) << node;
  }
  // The H100 nodes are direct members of their leaf domain.
  bool h100_direct = false;
  for (const auto& d : tree.domains()) {
    if (d.tier_name == "leaf" && std::find(d.nodes.begin(), d.nodes.end(), host(4, 7)) != d.nodes.end())
      h100_direct = true;
  }
  EXPECT_TRUE(h100_direct);

  // Rack 4 spans two pods: placed under the core and reported by name.
  const std::string rack4 = std::string(kClusterB) + ".4";
  auto spanning = tree.find(topology::nvlink_domain_name(rack4));
  ASSERT_TRUE(spanning);
  EXPECT_EQ(tree.domain(*tree.domain(*spanning).parent).tier_name, "core");
  EXPECT_TRUE(
      std::any_of(tree.report.warnings.begin(), tree.report.warnings.end(), [&](const std::string& w) {
        return w.find(rack4) != std::string::npos &&
               w.find("spans several fabric domains") != std::string::npos;
      }));
}

TEST_F(MixedCluster, ShiftBranchesKeepsH100TiersAndTurningTheMergeOffKeepsTheFabricTree) {
  input_.nvlink.policy = topology::NvlinkTierPolicy::kShiftBranches;
  auto run = run_discovery(registry_, input_);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(tier_named_above(run->tree, host(1, 1), "leaf"), 2);
  // su04 lies in a pod without NVLink: its leaf keeps tier 1 under this policy.
  EXPECT_EQ(tier_named_above(run->tree, host(4, 7), "leaf"), 1);

  input_.nvlink.enabled = false;
  auto plain = run_discovery(registry_, input_);
  ASSERT_TRUE(plain) << plain.error().message();
  EXPECT_EQ(plain->nvlink_domains, 0u);
  for (const auto& d : plain->tree.domains()) EXPECT_NE(d.tier_name, "nvlink");
  EXPECT_EQ(tier_named_above(plain->tree, host(1, 1), "leaf"), 1);
}

TEST_F(MixedCluster, CliqueLabelsStandInForReportsAndDisagreementsAreReported) {
  // No reports: the GFD label nvidia.com/gpu.clique on the Node objects names the racks instead.
  input_.sources = {*SourceSpec::parse("mixed-fabric")};
  k8s::NodeList nodes;
  for (int su = 1; su <= 4; ++su) {
    for (int n = 1; n <= 36; ++n) {
      k8s::NodeInfo info{.name = host(su, n)};
      if (su == 1) info.labels["nvidia.com/gpu.clique"] = std::string(kClusterA) + (n <= 18 ? ".1" : ".2");
      nodes.items.push_back(std::move(info));
    }
  }
  nodes.items[40].labels["nvidia.com/gpu.clique"] = "not-a-clique";
  input_.deps.nodes = &nodes;
  // One report contradicts its node's label: the report (live NVML) wins, and that is reported.
  std::vector<topology::NodeReport> reports = {gpu_report(host(1, 1), kClusterA, 2)};
  input_.deps.reports = &reports;
  auto run = run_discovery(registry_, input_);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->nvlink_domains, 2u);
  auto rack2 = run->tree.find(topology::nvlink_domain_name(std::string(kClusterA) + ".2"));
  ASSERT_TRUE(rack2);
  EXPECT_EQ(run->tree.domain(*rack2).nodes.size(), 19u);
  auto warned = [&](const std::string& a, const std::string& b) {
    return std::any_of(run->tree.report.warnings.begin(), run->tree.report.warnings.end(),
                       [&](const std::string& w) {
                         return w.find(a) != std::string::npos && w.find(b) != std::string::npos;
                       });
  };
  EXPECT_TRUE(warned(host(1, 1), "the NodeReport wins"));
  EXPECT_TRUE(warned(host(2, 5), "not-a-clique"));
}

TEST(NvlinkMembership, GpusThatDisagreeKeepTheNodeOutAndAreReported) {
  topology::NodeReport r = gpu_report("gb-1", kClusterA, 1);
  r.nvlink->clique_id.clear();
  r.nvlink->conflicts = {"GPU 3 names clique dc6e40c4-d722-4357-9ba6-5291dd461278.7"};
  std::vector<topology::NodeReport> reports = {r, gpu_report("gb-2", kClusterA, 1)};
  auto m = collect_nvlink_membership(nullptr, &reports);
  EXPECT_EQ(m.clique_by_node.size(), 1u);
  EXPECT_EQ(m.clique_by_node.at("gb-2"), std::string(kClusterA) + ".1");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("gb-1"), std::string::npos);
  EXPECT_NE(m.warnings[0].find("GPU 3"), std::string::npos);
}

}  // namespace
}  // namespace hypertopo::discoverers
