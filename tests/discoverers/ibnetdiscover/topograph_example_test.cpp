// The real NDR DGX capture (NVIDIA topograph's example.out) comes out as the fabric it is: 31 rail
// leaves on 4 rails form 8 scalable units under 9 spines. And every HyperNode built from every
// capture is one a real API server with Volcano's CRD and admission policy would accept.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "discoverers/demo/demo_fabric.h"
#include "discoverers/ibnetdiscover/ibnetdiscover_parser.h"
#include "tests/support/crd/crd_schema.h"
#include "tests/support/fixtures.h"
#include "topology/hypernode.h"
#include "topology/tree_builder.h"

namespace hypertopo::discoverers {
namespace {

using topology::DomainId;
using topology::VertexKind;

TEST(TopographExample, EightScalableUnitsUnderOneSpineTier) {
  HT_REQUIRE_FIXTURE(path, "ibnetdiscover/topograph-example.out");
  auto parsed = parse_ibnetdiscover_file(path);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->switches, 40u);
  EXPECT_EQ(parsed->cas, 582u);
  auto tree = topology::TreeBuilder::create()->build(parsed->graph);
  ASSERT_TRUE(tree) << tree.error().message();

  std::vector<DomainId> tier1, tier2;
  for (DomainId i = 0; i < tree->size(); ++i) (tree->domain(i).tier == 1 ? tier1 : tier2).push_back(i);
  ASSERT_EQ(tier1.size(), 8u);
  ASSERT_EQ(tier2.size(), 1u);
  const auto& top = tree->domain(tier2[0]);
  EXPECT_EQ(top.children.size(), 8u);
  EXPECT_EQ(top.tier_name, "spine");
  EXPECT_EQ(top.name, "spine-a10-p1-ibspine-01");

  // Which leaves does each tier-1 domain span? Every leaf of a unit, and only that unit's.
  const auto& g = parsed->graph;
  std::map<std::string, std::set<std::string>> leaves_of_host;
  for (topology::VertexId v = 0; v < g.vertex_count(); ++v) {
    if (g.vertex(v).kind != VertexKind::kEndpoint) continue;
    auto host = topology::TreeBuilder::create()->host_from_description(g.vertex(v).description);
    if (!host) continue;
    for (auto s : g.neighbors(v)) leaves_of_host[*host].insert(topology::switch_display_name(g.vertex(s)));
  }
  std::set<std::string> all_leaves;
  std::size_t three_leaf_units = 0;
  for (DomainId d : tier1) {
    std::set<std::string> leaves, units, racks;
    for (const auto& n : tree->domain(d).nodes) {
      leaves.insert(leaves_of_host[n].begin(), leaves_of_host[n].end());
      racks.insert(n.substr(0, 3));
    }
    for (const auto& l : leaves) {
      EXPECT_TRUE(all_leaves.insert(l).second) << l << " is in two scalable units";
      units.insert(l.substr(l.size() - 2));  // "...-ibleaf-<rail>-<unit>"
    }
    EXPECT_EQ(units.size(), 1u) << tree->domain(d).name << " mixes units";
    if (leaves.size() == 3) {
      ++three_leaf_units;
      EXPECT_TRUE(racks.contains("a05")) << "the three-leaf unit is the one on racks a05";
    } else {
      EXPECT_EQ(leaves.size(), 4u) << tree->domain(d).name;
    }
  }
  EXPECT_EQ(all_leaves.size(), 31u);
  EXPECT_EQ(three_leaf_units, 1u);

  // Left out, counted and listed: 40 SHARP aggregation nodes and 69 firmware-default CAs by GUID.
  EXPECT_EQ(tree->report.aggregation_nodes, 40u);
  ASSERT_EQ(tree->report.unmapped_endpoints.size(), 69u);
  for (const auto& u : tree->report.unmapped_endpoints) {
    EXPECT_EQ(u.description.rfind("MT4129 ConnectX7", 0), 0u) << u.guid;
    EXPECT_TRUE(topology::normalize_guid(u.guid).has_value());
  }
  // Set aside, not nodes: the generic hosts localhost and ubuntu and the UFM appliance b11-p1-cufm-02.
  EXPECT_EQ(tree->node_count(), 119u);
  ASSERT_EQ(
      std::ranges::count_if(tree->report.warnings,
                            [](const std::string& w) { return w.find("set aside") != std::string::npos; }),
      1);
}

struct Oracle {
  testing::CrdSchema crd;
  testing::AdmissionPolicy policy;
};

std::optional<Oracle> load_oracle() {
  auto crd_path = testing::find_fixture("volcano/hypernodes-crd.yaml");
  auto policy_path = testing::find_fixture("volcano/hypernodes-validating-admission-policy.yaml");
  if (!crd_path || !policy_path) return std::nullopt;
  auto crd = testing::load_crd_schema(*crd_path);
  auto policy = testing::load_admission_policy(*policy_path);
  EXPECT_TRUE(crd) << (crd ? "" : crd.error());
  EXPECT_TRUE(policy) << (policy ? "" : policy.error());
  if (!crd || !policy) return std::nullopt;
  return Oracle{std::move(*crd), std::move(*policy)};
}

void expect_accepted(const Oracle& oracle, const topology::Tree& tree, const std::string& what) {
  ASSERT_TRUE(topology::check_invariants(tree)) << what;
  // As `discover -o json` prints it: degraded domains with their FabricDegraded condition.
  auto list = topology::render_hypernode_list(tree, "2026-11-24T00:00:00Z");
  for (const auto& object : list["items"]) {
    for (const auto& e : testing::validate_against_crd(oracle.crd, object))
      ADD_FAILURE() << what << ": " << e;
    for (const auto& e : testing::validate_against_policy(oracle.policy, object))
      ADD_FAILURE() << what << ": " << e;
  }
}

TEST(FixtureTrees, EveryHyperNodePassesTheCrdSchemaAndAdmissionPolicy) {
  auto oracle = load_oracle();
  HT_REQUIRE(oracle.has_value(), "fixtures volcano/hypernodes-crd.yaml and its admission policy");
  auto dir = testing::fixtures_dir() / "ibnetdiscover";
  std::size_t objects = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    auto parsed = parse_ibnetdiscover_file(e.path());
    ASSERT_TRUE(parsed) << parsed.error().message();
    // Every host kept (keepHosts: ['.*']): the most objects each capture can make.
    auto tree = topology::TreeBuilder::create({.keep_host_patterns = {".*"}})->build(parsed->graph);
    ASSERT_TRUE(tree) << tree.error().message();
    expect_accepted(*oracle, *tree, e.path().filename().string());
    objects += tree->size();
  }
  auto demo = topology::TreeBuilder::create(demo_builder_options())->build(generate_demo_fabric({}));
  ASSERT_TRUE(demo);
  expect_accepted(*oracle, *demo, "demo");
  objects += demo->size();
  EXPECT_GT(objects, 20u);
}

TEST(FixtureTrees, TheOracleRejectsWhatVolcanoRejects) {
  // The check above is only worth something if a broken object fails it.
  auto oracle = load_oracle();
  HT_REQUIRE(oracle.has_value(), "fixtures volcano/hypernodes-crd.yaml and its admission policy");
  topology::Tree t;
  auto d = t.add_domain("leaf-a", 1, "leaf");
  t.domain(d).nodes = {"n1"};
  auto object = topology::render_hypernode(t, d);
  EXPECT_TRUE(testing::validate_against_crd(oracle->crd, object).empty());
  auto two_selectors = object;
  two_selectors["spec"]["members"][0]["selector"]["regexMatch"] = {{"pattern", "n.*"}};
  EXPECT_FALSE(testing::validate_against_crd(oracle->crd, two_selectors).empty());
  auto negative_tier = object;
  negative_tier["spec"]["tier"] = -1;
  EXPECT_FALSE(testing::validate_against_crd(oracle->crd, negative_tier).empty());
}

}  // namespace
}  // namespace hypertopo::discoverers
