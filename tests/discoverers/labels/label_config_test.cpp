// The label topology config in every shape admins have, and errors that name the file and the key.
#include "discoverers/labels/label_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fixtures.h"

namespace hypertopo::discoverers::labels {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string error_of(const std::string& yaml) {
  auto config = parse_label_config(yaml, "labels.yaml");
  EXPECT_FALSE(config.has_value()) << "accepted:\n" << yaml;
  return config ? std::string() : config.error().message();
}

TEST(LabelConfig, VolcanoControllerConfigFixture) {
  HT_REQUIRE_FIXTURE(path, "volcano/discovery-configmap-example.yaml");
  auto config = load_label_config(path);
  ASSERT_TRUE(config.has_value()) << config.error().message();
  ASSERT_EQ(config->types.size(), 2u);
  EXPECT_EQ(config->types[0].name, "topologyA2");
  EXPECT_THAT(config->types[0].levels, ElementsAre("volcano.sh/tor"));
  EXPECT_EQ(config->types[0].node_label, "kubernetes.io/hostname");
  EXPECT_EQ(config->types[1].name, "topologyA3");
  EXPECT_THAT(config->types[1].levels, ElementsAre("volcano.sh/hypercluster", "volcano.sh/hypernode"));
  EXPECT_THAT(config->notes, IsEmpty());
}

TEST(LabelConfig, BareMapAndConfigWrapperReadAlike) {
  const char* bare = R"(
networkTopologyTypes:
  b: [{nodeLabel: example.com/rack}, {nodeLabel: kubernetes.io/hostname}]
  a: [{nodeLabel: example.com/block}, {nodeLabel: example.com/rack}, {nodeLabel: kubernetes.io/hostname}]
)";
  const char* wrapped = R"(
config:
  networkTopologyTypes:
    b: [{nodeLabel: example.com/rack}, {nodeLabel: kubernetes.io/hostname}]
    a: [{nodeLabel: example.com/block}, {nodeLabel: example.com/rack}, {nodeLabel: kubernetes.io/hostname}]
)";
  for (const char* text : {bare, wrapped}) {
    auto config = parse_label_config(text, "labels.yaml");
    ASSERT_TRUE(config.has_value()) << config.error().message();
    ASSERT_EQ(config->types.size(), 2u);
    EXPECT_EQ(config->types[0].name, "a");  // sorted by name
    EXPECT_THAT(config->types[0].levels, ElementsAre("example.com/block", "example.com/rack"));
    EXPECT_THAT(config->types[1].levels, ElementsAre("example.com/rack"));
  }
}

TEST(LabelConfig, VolcanoDropsTheLastEntryWhateverItIs) {
  auto config =
      parse_label_config("networkTopologyTypes: {t: [{nodeLabel: rack}, {nodeLabel: host}]}", "l.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  EXPECT_THAT(config->types[0].levels, ElementsAre("rack"));
  EXPECT_EQ(config->types[0].node_label, "host");
}

TEST(LabelConfig, DisabledLabelEntryIsUsedWithANote) {
  auto config = parse_label_config(R"(
networkTopologyDiscovery:
  - source: ufm
    config: {endpoint: https://ufm}
  - source: label
    enabled: false
    interval: 10m
    config:
      networkTopologyTypes:
        t: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]
)",
                                   "controller.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  EXPECT_THAT(config->notes,
              ElementsAre(AllOf(HasSubstr("networkTopologyDiscovery[1]"), HasSubstr("enabled: false"))));
}

TEST(LabelConfig, KueueTopologyLevelsHighestFirst) {
  auto config = parse_label_config(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata:
  name: default
spec:
  levels:
  - nodeLabel: cloud.provider.com/topology-block
  - nodeLabel: cloud.provider.com/topology-rack
  - nodeLabel: kubernetes.io/hostname
)",
                                   "topology.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  ASSERT_EQ(config->types.size(), 1u);
  EXPECT_EQ(config->types[0].name, "default");
  EXPECT_THAT(config->types[0].levels,
              ElementsAre("cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"));
}

TEST(LabelConfig, KueueLowestLevelIsKeptUnlessItIsTheHostname) {
  auto config = parse_label_config(R"(
kind: Topology
metadata: {name: racks}
spec:
  levels: [{nodeLabel: example.com/block}, {nodeLabel: example.com/rack}]
---
kind: Topology
metadata: {name: blocks}
spec:
  levels: [{nodeLabel: example.com/block}, {nodeLabel: kubernetes.io/hostname}]
)",
                                   "topologies.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  ASSERT_EQ(config->types.size(), 2u);
  EXPECT_EQ(config->types[0].name, "blocks");
  EXPECT_THAT(config->types[0].levels, ElementsAre("example.com/block"));
  EXPECT_THAT(config->types[1].levels, ElementsAre("example.com/block", "example.com/rack"));
  EXPECT_EQ(config->types[1].node_label, "");
}

TEST(LabelConfig, NewerVolcanoFormWithNodeSelectorAndTierNames) {
  auto config = parse_label_config(R"(
networkTopologyDiscovery:
  - source: label
    config:
      networkTopologyTypes:
        shallow:
          nodeSelector: {matchLabels: {example.com/profile: shallow}}
          levels:
            - {nodeLabel: example.com/cluster, tierName: cluster}
            - {nodeLabel: kubernetes.io/hostname}
        deep:
          levels:
            - {nodeLabel: example.com/cluster, tierName: cluster}
            - {nodeLabel: example.com/pod}
            - {nodeLabel: kubernetes.io/hostname}
)",
                                   "controller.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  ASSERT_EQ(config->types.size(), 2u);
  EXPECT_EQ(config->types[0].name, "deep");
  EXPECT_THAT(config->types[0].levels, ElementsAre("example.com/cluster", "example.com/pod"));
  EXPECT_THAT(config->types[0].tier_names, ElementsAre("cluster", ""));
  EXPECT_TRUE(config->types[0].node_selector.empty());
  EXPECT_TRUE(config->types[0].profile_label);
  EXPECT_EQ(config->types[1].node_selector.at("example.com/profile"), "shallow");
}

TEST(LabelConfigErrors, NewerFormIsCheckedToo) {
  EXPECT_EQ(error_of("networkTopologyTypes: {t: {levels: [{nodeLabel: a, tierName: [x]}, {nodeLabel: h}]}}"),
            "labels.yaml: networkTopologyTypes.t.levels[0].tierName: must be a string");
  EXPECT_EQ(error_of("networkTopologyTypes: {t: {nodeSelector: {matchLabels: {a: b}}}}"),
            "labels.yaml: networkTopologyTypes.t.levels: is required");
  EXPECT_EQ(error_of("networkTopologyTypes: {t: {nodeSelector: {matchExpressions: []}, levels: [{nodeLabel: "
                     "a}, {nodeLabel: h}]}}"),
            "labels.yaml: networkTopologyTypes.t.nodeSelector.matchExpressions: unknown key (known: "
            "matchLabels)");
  EXPECT_THAT(error_of("networkTopologyTypes: {t: [{nodeLabel: a, tierName: x}, {nodeLabel: h}]}"),
              HasSubstr("networkTopologyTypes.t[0].tierName: unknown key"));
  EXPECT_THAT(error_of("networkTopologyTypes: {'a/b': {levels: [{nodeLabel: a}, {nodeLabel: h}]}}"),
              HasSubstr("must be named as a label value"));
}

// --- errors name the file and the key ----------------------------------------------------------------

TEST(LabelConfigErrors, NodeLabelMustBeAString) {
  EXPECT_EQ(error_of("networkTopologyTypes:\n  topologyA2:\n    - nodeLabel: a\n    - nodeLabel: [x]\n"
                     "    - nodeLabel: kubernetes.io/hostname\n"),
            "labels.yaml: networkTopologyTypes.topologyA2[1].nodeLabel: must be a string");
  EXPECT_EQ(error_of("networkTopologyTypes: {t: [{nodeLabel: ~}, {nodeLabel: h}]}"),
            "labels.yaml: networkTopologyTypes.t[0].nodeLabel: must be a string");
}

TEST(LabelConfigErrors, NodeLabelIsRequiredAndNothingElse) {
  EXPECT_EQ(error_of("networkTopologyTypes: {t: [{label: a}, {nodeLabel: h}]}"),
            "labels.yaml: networkTopologyTypes.t[0].label: unknown key (known: nodeLabel)");
  EXPECT_EQ(error_of("networkTopologyTypes: {t: [{}, {nodeLabel: h}]}"),
            "labels.yaml: networkTopologyTypes.t[0].nodeLabel: is required");
  EXPECT_EQ(error_of("networkTopologyTypes: {t: [rack, {nodeLabel: h}]}"),
            "labels.yaml: networkTopologyTypes.t[0]: must be a mapping with a nodeLabel");
}

TEST(LabelConfigErrors, LevelsMustBeAListWithALevelAboveTheNode) {
  EXPECT_THAT(error_of("networkTopologyTypes: {t: a}"),
              HasSubstr("labels.yaml: networkTopologyTypes.t: must be a list"));
  EXPECT_EQ(error_of("networkTopologyTypes: {t: {nodeLabel: a}}"),
            "labels.yaml: networkTopologyTypes.t.nodeLabel: unknown key (known: levels, nodeSelector)");
  EXPECT_THAT(error_of("networkTopologyTypes: {t: [{nodeLabel: kubernetes.io/hostname}]}"),
              HasSubstr("labels.yaml: networkTopologyTypes.t: lists only the node-level label"));
  EXPECT_THAT(error_of("networkTopologyTypes: {t: []}"),
              HasSubstr("labels.yaml: networkTopologyTypes.t: must list at least one level"));
  EXPECT_THAT(error_of("networkTopologyTypes: {}"),
              HasSubstr("labels.yaml: networkTopologyTypes: names no topology"));
  EXPECT_THAT(error_of("networkTopologyTypes: [a]"),
              HasSubstr("labels.yaml: networkTopologyTypes: must be a mapping"));
}

TEST(LabelConfigErrors, LabelKeysMustBeValidAndDistinct) {
  EXPECT_EQ(error_of("networkTopologyTypes: {t: [{nodeLabel: 'bad key'}, {nodeLabel: h}]}"),
            "labels.yaml: networkTopologyTypes.t[0].nodeLabel: 'bad key' is not a valid label key");
  EXPECT_EQ(error_of("networkTopologyTypes: {t: [{nodeLabel: a}, {nodeLabel: a}, {nodeLabel: h}]}"),
            "labels.yaml: networkTopologyTypes.t[1].nodeLabel: 'a' is listed twice");
  EXPECT_THAT(error_of("networkTopologyTypes: {t: [{nodeLabel: Example.com/a}, {nodeLabel: h}]}"),
              HasSubstr("not a valid label key"));
}

TEST(LabelConfigErrors, DiscoveryListNeedsExactlyOneLabelEntry) {
  EXPECT_EQ(error_of("networkTopologyDiscovery: [{source: ufm}]"),
            "labels.yaml: networkTopologyDiscovery: has no entry with 'source: label'");
  EXPECT_THAT(
      error_of(
          "networkTopologyDiscovery: [{source: label, config: {networkTopologyTypes: {t: [{nodeLabel: a}, "
          "{nodeLabel: h}]}}}, {source: label}]"),
      HasSubstr("networkTopologyDiscovery[1]: a second 'source: label' entry"));
  EXPECT_EQ(error_of("networkTopologyDiscovery: [{source: label}]"),
            "labels.yaml: networkTopologyDiscovery[0].config: is required (it holds networkTopologyTypes)");
  EXPECT_EQ(
      error_of("networkTopologyDiscovery: [{source: label, enabled: maybe, config: {networkTopologyTypes: "
               "{t: [{nodeLabel: a}, {nodeLabel: h}]}}}]"),
      "labels.yaml: networkTopologyDiscovery[0].enabled: must be true or false");
  EXPECT_EQ(
      error_of("networkTopologyDiscovery: [{source: label, config: {networkTopologyTypes: "
               "{t: [{nodeLabel: 5, x: 1}, {nodeLabel: h}]}}}]"),
      "labels.yaml: networkTopologyDiscovery[0].config.networkTopologyTypes.t[0].x: unknown key (known: "
      "nodeLabel)");
}

TEST(LabelConfigErrors, KueueTopologyNeedsANameAndLevels) {
  EXPECT_EQ(error_of("kind: Topology\nspec: {levels: [{nodeLabel: a}]}"),
            "labels.yaml: metadata.name: must be a string");
  EXPECT_EQ(error_of("kind: Topology\nmetadata: {name: t}\nspec: {}"),
            "labels.yaml: spec.levels: is required");
  EXPECT_THAT(error_of("kind: Topology\nmetadata: {name: t}\n---\nnetworkTopologyTypes: {}"),
              HasSubstr("labels.yaml: document 2: several documents must each be a Kueue Topology"));
}

TEST(LabelConfigErrors, UnreadableShapesAndFiles) {
  EXPECT_THAT(error_of(""), HasSubstr("labels.yaml: empty"));
  EXPECT_THAT(error_of("- a\n- b\n"), HasSubstr("labels.yaml: expected a mapping"));
  EXPECT_THAT(error_of("something: else\n"), HasSubstr("labels.yaml: none of networkTopologyDiscovery"));
  EXPECT_THAT(error_of("networkTopologyTypes: {t: [\n"), HasSubstr("labels.yaml:2: not valid YAML"));
  EXPECT_EQ(error_of("networkTopologyTypes: {t: [{nodeLabel: a}, {nodeLabel: h}]}\nextra: 1\n"),
            "labels.yaml: extra: unknown key (known: networkTopologyTypes)");
  testing::TempDir dir;
  auto missing = load_label_config(dir.path() / "absent.yaml");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr("absent.yaml"));
}

}  // namespace
}  // namespace hypertopo::discoverers::labels
