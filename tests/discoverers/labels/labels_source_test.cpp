// The "labels:CONFIG" source through the registry, as `hypertopo discover` creates it.
#include "discoverers/labels/labels_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fixtures.h"

namespace hypertopo::discoverers {
namespace {

using ::testing::HasSubstr;

k8s::NodeList two_racks() {
  k8s::NodeList nodes;
  for (const auto& [name, rack] : {std::pair{"n1", "r1"}, {"n2", "r1"}, {"n3", "r2"}}) {
    k8s::NodeInfo n;
    n.name = name;
    n.labels = {{"example.com/rack", rack}, {"example.com/block", "b1"}};
    nodes.items.push_back(n);
  }
  return nodes;
}

const DiscovererRegistry& labels_registry() {
  static const DiscovererRegistry registry = [] {
    DiscovererRegistry r;
    register_builtin_discoverers(r);
    return r;
  }();
  return registry;
}

const char* kConfig =
    "networkTopologyTypes:\n"
    "  rack: [{nodeLabel: example.com/block}, {nodeLabel: example.com/rack}, {nodeLabel: "
    "kubernetes.io/hostname}]\n";

TEST(LabelsSource, IsRegisteredAndBuildsATree) {
  DiscovererRegistry registry;
  register_builtin_discoverers(registry);
  EXPECT_THAT(registry.kinds(), ::testing::Contains("labels"));
  testing::TempDir dir;
  testing::write_text(dir.path() / "labels.yaml", kConfig);
  auto nodes = two_racks();
  DiscoveryDeps deps;
  deps.nodes = &nodes;
  auto source = registry.create({"labels", (dir.path() / "labels.yaml").string()}, deps);
  ASSERT_TRUE(source.has_value()) << source.error().message();
  EXPECT_EQ((*source)->name(), "labels");
  auto found = (*source)->discover();
  ASSERT_TRUE(found.has_value()) << found.error().message();
  ASSERT_TRUE(found->tree.has_value());
  EXPECT_FALSE(found->graph.has_value());
  EXPECT_EQ(found->tree->size(), 3u);  // r1, r2 under b1
  EXPECT_EQ(found->tree->node_count(), 3u);
  EXPECT_THAT(found->notes.front(), HasSubstr("3 HyperNodes from the labels of 3 nodes"));
  EXPECT_TRUE(topology::check_invariants(*found->tree).has_value());
}

TEST(LabelsSource, NeedsNodesAndAConfig) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "labels.yaml", kConfig);
  DiscoveryDeps deps;
  auto no_nodes = labels_registry().create({"labels", (dir.path() / "labels.yaml").string()}, deps);
  ASSERT_FALSE(no_nodes.has_value());
  EXPECT_EQ(no_nodes.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(no_nodes.error().message(), HasSubstr("--nodes"));

  auto nodes = two_racks();
  deps.nodes = &nodes;
  auto no_arg = labels_registry().create({"labels", ""}, deps);
  ASSERT_FALSE(no_arg.has_value());
  EXPECT_THAT(no_arg.error().message(), HasSubstr("labels:CONFIG"));
}

TEST(LabelsSource, ABadConfigFailsAtCreationNamingTheFile) {
  testing::TempDir dir;
  const auto path = dir.path() / "labels.yaml";
  testing::write_text(path, "networkTopologyTypes: {t: [{nodeLabel: [x]}, {nodeLabel: h}]}\n");
  auto nodes = two_racks();
  DiscoveryDeps deps;
  deps.nodes = &nodes;
  auto source = labels_registry().create({"labels", path.string()}, deps);
  ASSERT_FALSE(source.has_value());
  EXPECT_THAT(source.error().message(),
              ::testing::EndsWith(path.string() + ": networkTopologyTypes.t[0].nodeLabel: must be a string"));
}

TEST(LabelsSource, AConflictFailsDiscoveryNamingTheConfig) {
  testing::TempDir dir;
  const auto path = dir.path() / "labels.yaml";
  testing::write_text(path, kConfig);
  auto nodes = two_racks();
  nodes.items[1].labels["example.com/block"] = "b2";  // r1 now under b1 and b2
  DiscoveryDeps deps;
  deps.nodes = &nodes;
  auto source = labels_registry().create({"labels", path.string()}, deps);
  ASSERT_TRUE(source.has_value());
  auto found = (*source)->discover();
  ASSERT_FALSE(found.has_value());
  EXPECT_THAT(found.error().message(), HasSubstr("while building HyperNodes from " + path.string()));
}

}  // namespace
}  // namespace hypertopo::discoverers
