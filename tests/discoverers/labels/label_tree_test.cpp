// The labels source: Volcano's label discoverer structure (its own test case, read from the fixture),
// partial labels, names, conflicts, and every HyperNode checked against the CRD and admission policy.
#include "discoverers/labels/label_tree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <tuple>

#include "discoverers/labels/label_config.h"
#include "tests/support/crd/crd_schema.h"
#include "tests/support/fixtures.h"
#include "topology/hypernode.h"

namespace hypertopo::discoverers::labels {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

k8s::NodeInfo node(std::string name, std::map<std::string, std::string> labels) {
  k8s::NodeInfo n;
  n.name = std::move(name);
  n.labels = std::move(labels);
  return n;
}

LabelConfig config_of(const std::string& yaml) {
  auto config = parse_label_config(yaml, "labels.yaml");
  EXPECT_TRUE(config.has_value()) << config.error().message();
  return config.value_or(LabelConfig{});
}

// What a domain is, without its name: tier, tierName, labels, nodes, and the label values of its
// child domains (names are ours, Volcano's are random).
using Shape = std::tuple<int, std::string, std::map<std::string, std::string>, std::set<std::string>,
                         std::set<std::string>>;

std::set<Shape> shapes(const topology::Tree& tree) {
  std::set<Shape> out;
  for (const auto& d : tree.domains()) {
    std::set<std::string> children;
    for (auto c : d.children) children.insert(tree.domain(c).anchor);
    out.emplace(d.tier, d.tier_name, d.labels, std::set<std::string>(d.nodes.begin(), d.nodes.end()),
                children);
  }
  return out;
}

// Every rendered HyperNode must be accepted by a cluster running Volcano's CRD and admission policy.
void expect_accepted_by_cluster(const topology::Tree& tree) {
  auto crd_path = testing::find_fixture("volcano/hypernodes-crd.yaml");
  auto policy_path = testing::find_fixture("volcano/hypernodes-validating-admission-policy.yaml");
  if (!crd_path || !policy_path) {
    // The structure checks still ran; outside CI the fixture tests report the skip.
    if (testing::running_in_ci()) ADD_FAILURE() << testing::missing_message("the Volcano CRD fixtures");
    return;
  }
  auto crd = testing::load_crd_schema(*crd_path);
  auto policy = testing::load_admission_policy(*policy_path);
  ASSERT_TRUE(crd.has_value()) << crd.error();
  ASSERT_TRUE(policy.has_value()) << policy.error();
  for (topology::DomainId id = 0; id < tree.size(); ++id) {
    auto object = topology::render_hypernode(tree, id);
    EXPECT_THAT(testing::validate_against_crd(*crd, object), IsEmpty()) << object.dump();
    EXPECT_THAT(testing::validate_against_policy(*policy, object), IsEmpty()) << object.dump();
  }
}

TEST(LabelTree, ReproducesVolcanoLabelDiscovererCase1) {
  HT_REQUIRE_FIXTURE(path, "volcano/label-discoverer-case1.yaml");
  const YAML::Node fixture = YAML::LoadFile(path.string());
  // The fixture's top level holds `config` beside `nodes` and `expected`: the `config:` wrapper shape.
  auto config = parse_label_config(fixture, path.filename().string());
  ASSERT_TRUE(config.has_value()) << config.error().message();
  ASSERT_EQ(config->types.size(), fixture["config"]["networkTopologyTypes"].size());

  k8s::NodeList nodes;
  for (const auto& entry : fixture["nodes"]) {
    std::map<std::string, std::string> labels;
    for (const auto& l : entry.second) labels[l.first.as<std::string>()] = l.second.as<std::string>();
    nodes.items.push_back(node(entry.first.as<std::string>(), labels));
  }
  ASSERT_FALSE(nodes.items.empty());

  std::set<Shape> expected;
  for (const auto& e : fixture["expected"]) {
    std::map<std::string, std::string> labels;
    for (const auto& l : e["labels"]) labels[l.first.as<std::string>()] = l.second.as<std::string>();
    std::set<std::string> member_nodes, child_values;
    for (const auto& m : e["members"]) {
      const auto name = m["exactMatch"].as<std::string>();
      if (m["type"].as<std::string>() == "Node") {
        member_nodes.insert(name);
      } else {
        // "<tier1 for s0>": the child is the domain of label value s0.
        const auto space = name.rfind(' ');
        ASSERT_NE(space, std::string::npos) << name;
        child_values.insert(name.substr(space + 1, name.size() - space - 2));
      }
    }
    expected.emplace(e["tier"].as<int>(), e["tierName"].as<std::string>(), labels, member_nodes,
                     child_values);
  }
  ASSERT_EQ(expected.size(), fixture["expected"].size());

  auto tree = build_label_tree(*config, nodes);
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  EXPECT_EQ(tree->size(), expected.size());
  EXPECT_EQ(shapes(*tree), expected);
  EXPECT_TRUE(topology::check_invariants(*tree).has_value());
  EXPECT_THAT(tree->report.warnings, IsEmpty());
  // The fixture's file holds more than the config; the keys beside it are named, not silently dropped.
  EXPECT_THAT(config->notes, ElementsAre(AllOf(HasSubstr("expected"), HasSubstr("nodes"))));
  expect_accepted_by_cluster(*tree);
}

const char* kTwoTiers = R"(
networkTopologyTypes:
  rack:
    - nodeLabel: example.com/block
    - nodeLabel: example.com/rack
    - nodeLabel: kubernetes.io/hostname
)";

TEST(LabelTree, NodeMissingTheTier2LabelStopsAtTier1) {
  k8s::NodeList nodes;
  nodes.items = {node("a", {{"example.com/rack", "r1"}, {"example.com/block", "b1"}}),
                 node("b", {{"example.com/rack", "r1"}}),  // no block label
                 node("c", {{"example.com/rack", "r2"}})};
  auto tree = build_label_tree(config_of(kTwoTiers), nodes);
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  EXPECT_EQ(shapes(*tree),
            (std::set<Shape>{{1, "example.com/rack", {{"example.com/rack", "r1"}}, {"a", "b"}, {}},
                             {1, "example.com/rack", {{"example.com/rack", "r2"}}, {"c"}, {}},
                             {2, "example.com/block", {{"example.com/block", "b1"}}, {}, {"r1"}}}));
  EXPECT_THAT(
      tree->report.warnings,
      ElementsAre(AllOf(HasSubstr("2 nodes lack the tier-2 label example.com/block"), HasSubstr("b, c"))));
  EXPECT_TRUE(topology::check_invariants(*tree).has_value());
  expect_accepted_by_cluster(*tree);
}

TEST(LabelTree, NodeMissingTheTier1LabelJoinsNothing) {
  k8s::NodeList nodes;
  nodes.items = {node("a", {{"example.com/rack", "r1"}, {"example.com/block", "b1"}}),
                 node("x", {{"example.com/block", "b1"}}),  // a block, but no rack: Volcano places it nowhere
                 node("y", {})};
  auto tree = build_label_tree(config_of(kTwoTiers), nodes);
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  EXPECT_EQ(tree->node_count(), 1u);
  EXPECT_EQ(shapes(*tree),
            (std::set<Shape>{{1, "example.com/rack", {{"example.com/rack", "r1"}}, {"a"}, {}},
                             {2, "example.com/block", {{"example.com/block", "b1"}}, {}, {"r1"}}}));
  EXPECT_THAT(tree->report.warnings,
              ElementsAre(AllOf(HasSubstr("1 node carry a higher level's label but not the tier-1 label"),
                                HasSubstr(": x")),
                          AllOf(HasSubstr("2 nodes of 3 have no tier-1 label"), HasSubstr("x, y"))));
}

TEST(LabelTree, ATier1ValueUnderTwoParentsIsReportedNotGuessed) {
  k8s::NodeList nodes;
  nodes.items = {node("a", {{"example.com/rack", "r1"}, {"example.com/block", "b1"}}),
                 node("b", {{"example.com/rack", "r1"}, {"example.com/block", "b2"}})};
  auto tree = build_label_tree(config_of(kTwoTiers), nodes);
  ASSERT_FALSE(tree.has_value());
  EXPECT_EQ(tree.error().code(), ErrorCode::kInvariant);
  EXPECT_THAT(tree.error().message(),
              AllOf(HasSubstr("example.com/rack=r1"), HasSubstr("example.com/block=b1 (node a)"),
                    HasSubstr("example.com/block=b2 (node b)")));
}

TEST(LabelTree, SeveralTypesShareOneTreeAndANodeInTwoLowestTiersBreaksTheInvariants) {
  auto config = config_of(R"(
networkTopologyTypes:
  gpu:
    - nodeLabel: example.com/rack
    - nodeLabel: kubernetes.io/hostname
  cpu:
    - nodeLabel: example.com/zone
    - nodeLabel: kubernetes.io/hostname
)");
  k8s::NodeList nodes;
  nodes.items = {node("g1", {{"example.com/rack", "r1"}}), node("c1", {{"example.com/zone", "z1"}})};
  auto tree = build_label_tree(config, nodes);
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  EXPECT_EQ(tree->size(), 2u);
  EXPECT_TRUE(topology::check_invariants(*tree).has_value());
  EXPECT_THAT(tree->report.warnings, IsEmpty());  // every node is placed by one type or the other

  nodes.items.push_back(node("both", {{"example.com/rack", "r1"}, {"example.com/zone", "z1"}}));
  tree = build_label_tree(config, nodes);
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  auto ok = topology::check_invariants(*tree);
  ASSERT_FALSE(ok.has_value());
  EXPECT_THAT(ok.error().message(), HasSubstr("node both is a member of both"));
}

TEST(LabelTree, NamesComeFromTypeTierAndValue) {
  EXPECT_EQ(label_domain_name("rack", 1, "r1"), "rack-tier1-r1");
  EXPECT_EQ(label_domain_name("topologyA2", 2, "s4"), "topologya2-tier2-s4");
  // Lossy values get a hash of the raw value, so "S0" and "s0" differ and neither depends on the other.
  const auto upper = label_domain_name("rack", 1, "S0");
  EXPECT_THAT(upper, ::testing::MatchesRegex("rack-tier1-s0-[0-9a-f]{8}"));
  EXPECT_NE(upper, label_domain_name("rack", 1, "s0"));
  EXPECT_NE(label_domain_name("rack", 1, "a_b"), label_domain_name("rack", 1, "a.b"));
  EXPECT_THAT(label_domain_name("rack", 1, ""), ::testing::MatchesRegex("rack-tier1-[0-9a-f]{8}"));
  const auto long_name = label_domain_name("rack", 1, std::string(60, 'x') + "1");
  EXPECT_LE(long_name.size(), kMaxDomainNameLength);
  EXPECT_NE(long_name, label_domain_name("rack", 1, std::string(60, 'x') + "2"));
  for (const auto& n : {upper, long_name, label_domain_name("__", 3, "--")}) {
    EXPECT_TRUE(topology::is_dns1123_subdomain(n)) << n;
    EXPECT_TRUE(testing::is_qualified_name(n)) << n;
  }
}

TEST(LabelTree, AddingANodeRenamesNothing) {
  k8s::NodeList nodes;
  nodes.items = {node("a", {{"example.com/rack", "r1"}, {"example.com/block", "b1"}}),
                 node("b", {{"example.com/rack", "R1"}, {"example.com/block", "b1"}})};
  auto before = build_label_tree(config_of(kTwoTiers), nodes);
  nodes.items.push_back(node("c", {{"example.com/rack", "r3"}, {"example.com/block", "b2"}}));
  auto after = build_label_tree(config_of(kTwoTiers), nodes);
  ASSERT_TRUE(before.has_value() && after.has_value());
  for (const auto& d : before->domains()) {
    auto same = after->find(d.name);
    ASSERT_TRUE(same.has_value()) << d.name;
    EXPECT_EQ(after->domain(*same).anchor, d.anchor);
  }
  EXPECT_EQ(after->size(), before->size() + 2);
}

TEST(LabelTree, NodeSelectorsSplitPoolsAndTierNamesAreShared) {
  // A one-level pool and a two-level pool whose top level means the same thing ("cluster").
  auto config = config_of(R"(
networkTopologyTypes:
  shallow:
    nodeSelector: {matchLabels: {example.com/profile: shallow}}
    levels: [{nodeLabel: example.com/shallow-cluster, tierName: cluster}, {nodeLabel: kubernetes.io/hostname}]
  deep:
    nodeSelector: {matchLabels: {example.com/profile: deep}}
    levels: [{nodeLabel: example.com/cluster, tierName: cluster}, {nodeLabel: example.com/pod},
             {nodeLabel: kubernetes.io/hostname}]
)");
  k8s::NodeList nodes;
  nodes.items = {
      node("s1", {{"example.com/profile", "shallow"},
                  {"example.com/shallow-cluster", "c0"},
                  {"example.com/cluster", "x"}}),
      node("d1", {{"example.com/profile", "deep"}, {"example.com/cluster", "x"}, {"example.com/pod", "p0"}}),
      node("d2", {{"example.com/profile", "deep"}, {"example.com/cluster", "x"}, {"example.com/pod", "p1"}}),
      node("other", {{"example.com/pod", "p0"}})};  // no type selects it: out of scope, not a warning
  auto tree = build_label_tree(config, nodes);
  ASSERT_TRUE(tree.has_value()) << tree.error().message();
  const std::string profile = kProfileLabel;
  EXPECT_EQ(shapes(*tree),
            (std::set<Shape>{
                {1, "cluster", {{"example.com/shallow-cluster", "c0"}, {profile, "shallow"}}, {"s1"}, {}},
                {1, "example.com/pod", {{"example.com/pod", "p0"}, {profile, "deep"}}, {"d1"}, {}},
                {1, "example.com/pod", {{"example.com/pod", "p1"}, {profile, "deep"}}, {"d2"}, {}},
                {2, "cluster", {{"example.com/cluster", "x"}, {profile, "deep"}}, {}, {"p0", "p1"}}}));
  EXPECT_THAT(tree->report.warnings, IsEmpty());
  EXPECT_TRUE(topology::check_invariants(*tree).has_value());
  expect_accepted_by_cluster(*tree);
}

TEST(LabelTree, TypesThatLowerCaseToOneNameAreRefused) {
  auto config = config_of(R"(
networkTopologyTypes:
  Rack: [{nodeLabel: a}, {nodeLabel: kubernetes.io/hostname}]
  rack: [{nodeLabel: b}, {nodeLabel: kubernetes.io/hostname}]
)");
  auto tree = build_label_tree(config, k8s::NodeList{});
  ASSERT_FALSE(tree.has_value());
  EXPECT_THAT(tree.error().message(), HasSubstr("'Rack' and 'rack'"));
}

}  // namespace
}  // namespace hypertopo::discoverers::labels
