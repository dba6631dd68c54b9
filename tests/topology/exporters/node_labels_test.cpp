#include "topology/exporters/node_labels.h"

#include <gtest/gtest.h>

#include "tests/topology/exporters/exporter_trees.h"

namespace hypertopo::topology::exporters {
namespace {

using testing::slurm_fixture_shaped_tree;

TEST(NodeLabels, OneKeyPerTierOfTheNodesBranch) {
  Tree t = slurm_fixture_shaped_tree();
  auto labels = node_labels(t);
  ASSERT_EQ(labels.size(), 96u);
  const LabelMap& l = labels.at("srv2105");
  EXPECT_EQ(l.size(), 3u);
  EXPECT_EQ(l.at("hypertopo.io/tier-1"), "leaf-2-1");
  EXPECT_EQ(l.at("hypertopo.io/tier-2"), "spine-2");
  EXPECT_EQ(l.at("hypertopo.io/tier-3"), "core");
}

// topograph v1.0's documented example (docs/k8s/labels of NVIDIA/topograph): a node under leaf
// switch sw11 under spine sw21 in NVLink domain nvl1 carries
//   accelerator.topograph.run/domain: nvl1, fabric.topograph.run/tier-0: sw11, tier-1: sw21.
TEST(NodeLabels, TopographKeysCountFabricTiersFromTheLeafAndNvlinkIsTheAcceleratorDomain) {
  Tree t;
  auto spine = t.add_domain("sw21", 3, "spine");
  auto leaf = t.add_domain("sw11", 2, "leaf");
  auto nvl = t.add_domain("nvl1", 1, "nvlink");
  t.attach(spine, leaf);
  t.attach(leaf, nvl);
  t.domain(nvl).nodes = {"gb-01", "gb-02"};
  NodeLabelOptions opts;
  opts.topograph_compatible = true;
  opts.key_prefix = "example.com/tier-";
  const LabelMap l = node_labels(t, opts).at("gb-02");
  EXPECT_EQ(l.at("example.com/tier-1"), "nvl1");
  EXPECT_EQ(l.at("example.com/tier-2"), "sw11");
  EXPECT_EQ(l.at("accelerator.topograph.run/domain"), "nvl1");
  EXPECT_EQ(l.at("fabric.topograph.run/tier-0"), "sw11");
  EXPECT_EQ(l.at("fabric.topograph.run/tier-1"), "sw21");
  EXPECT_FALSE(l.contains("fabric.topograph.run/tier-2"));  // the NVLink domain is no fabric tier
  EXPECT_FALSE(l.contains("hypertopo.io/tier-1"));
  EXPECT_EQ(l.size(), 6u);

  // Without NVLink the leaf is still tier-0.
  Tree flat;
  auto s2 = flat.add_domain("sw21", 2, "spine");
  auto l1 = flat.add_domain("sw11", 1, "leaf");
  flat.attach(s2, l1);
  flat.domain(l1).nodes = {"h100-01"};
  const LabelMap f = node_labels(flat, opts).at("h100-01");
  EXPECT_EQ(f.at("fabric.topograph.run/tier-0"), "sw11");
  EXPECT_EQ(f.at("fabric.topograph.run/tier-1"), "sw21");
  EXPECT_FALSE(f.contains("accelerator.topograph.run/domain"));
}

TEST(NodeLabels, TopographValuesOver63CharactersAreXPlusFnv64a) {
  // FNV-64a("a") = af63dc4c8601ec8c, the algorithm's published test vector.
  EXPECT_EQ(topograph_label_value(std::string(63, 'a')), std::string(63, 'a'));
  const std::string long_name = "rack-" + std::string(70, 'a');
  EXPECT_EQ(topograph_label_value(long_name), "xb9aae2fa6c456473");
  Tree t;
  auto d = t.add_domain(long_name, 1, "leaf");
  t.domain(d).nodes = {"n1"};
  NodeLabelOptions opts;
  opts.topograph_compatible = true;
  EXPECT_EQ(node_labels(t, opts).at("n1").at("fabric.topograph.run/tier-0"), "xb9aae2fa6c456473");
}

TEST(NodeLabels, LongDomainNamesBecomeValidStableValues) {
  const std::string long_name(40, 'a');
  Tree t;
  auto d = t.add_domain(long_name + "." + long_name, 1, "leaf");
  t.domain(d).nodes = {"n1"};
  auto other = t.add_domain(long_name + "." + long_name + "x", 1, "leaf");
  t.domain(other).nodes = {"n2"};
  auto labels = node_labels(t);
  const std::string v1 = labels.at("n1").at("hypertopo.io/tier-1");
  const std::string v2 = labels.at("n2").at("hypertopo.io/tier-1");
  EXPECT_LE(v1.size(), kMaxLabelValueLength);
  EXPECT_TRUE(is_valid_label_value(v1)) << v1;
  EXPECT_TRUE(is_valid_label_value(v2)) << v2;
  EXPECT_NE(v1, v2);
  EXPECT_EQ(v1, label_value_for(long_name + "." + long_name));  // stable
}

TEST(NodeLabels, EveryDemoLabelIsValid) {
  Tree t = testing::demo_tree();
  auto labels = node_labels(t);
  ASSERT_EQ(labels.size(), t.node_count());
  for (const auto& [node, map] : labels) {
    for (const auto& [key, value] : map) {
      EXPECT_TRUE(is_valid_label_value(value)) << node << " " << key << "=" << value;
      EXPECT_TRUE(key.starts_with("hypertopo.io/tier-")) << key;
    }
  }
}

TEST(NodeLabels, ValidatorRejectsBadValues) {
  EXPECT_TRUE(is_valid_label_value(""));
  EXPECT_TRUE(is_valid_label_value("a.b_c-d"));
  EXPECT_FALSE(is_valid_label_value("-a"));
  EXPECT_FALSE(is_valid_label_value("a/b"));
  EXPECT_FALSE(is_valid_label_value(std::string(64, 'a')));
}

TEST(NodeLabelPatch, OnlyChangedKeysAndStaleKeysOfOursRemoved) {
  const LabelMap current{{"hypertopo.io/tier-1", "leaf-1"},
                         {"hypertopo.io/tier-2", "spine-old"},
                         {"hypertopo.io/tier-3", "core"},
                         {"kubernetes.io/hostname", "n1"},
                         {"fabric.topograph.run/tier-1", "x"}};
  const LabelMap desired{{"hypertopo.io/tier-1", "leaf-1"}, {"hypertopo.io/tier-2", "spine-new"}};
  auto patch = node_label_patch(current, desired);
  ASSERT_TRUE(patch.has_value());
  const auto& labels = (*patch)["metadata"]["labels"];
  EXPECT_EQ(labels.size(), 2u) << patch->dump();
  EXPECT_EQ(labels["hypertopo.io/tier-2"], "spine-new");
  EXPECT_TRUE(labels["hypertopo.io/tier-3"].is_null());
  // topograph keys are not ours unless enabled; others' labels are never touched.
  EXPECT_FALSE(labels.contains("fabric.topograph.run/tier-1"));
  EXPECT_FALSE(labels.contains("kubernetes.io/hostname"));
}

TEST(NodeLabelPatch, NothingToDoGivesNoPatch) {
  const LabelMap same{{"hypertopo.io/tier-1", "leaf-1"}, {"other", "x"}};
  EXPECT_FALSE(node_label_patch(same, {{"hypertopo.io/tier-1", "leaf-1"}}).has_value());
}

TEST(TopologyObjects, KueueAndKaiListKeysHighestFirstThenHostname) {
  Tree t = slurm_fixture_shaped_tree();
  const std::vector<std::string> want{"hypertopo.io/tier-3", "hypertopo.io/tier-2", "hypertopo.io/tier-1",
                                      "kubernetes.io/hostname"};
  EXPECT_EQ(topology_level_keys(t), want);
  auto kueue = render_kueue_topology(t, {}, "fabric");
  EXPECT_EQ(kueue["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(render_kueue_topology(t, {}, "fabric", "kueue.x-k8s.io/v1beta1")["apiVersion"],
            "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(kueue["kind"], "Topology");
  EXPECT_EQ(kueue["metadata"]["name"], "fabric");
  auto kai = render_kai_topology(t, {});
  EXPECT_EQ(kai["apiVersion"], "kai.scheduler/v1alpha1");
  for (const auto& obj : {kueue, kai}) {
    ASSERT_EQ(obj["spec"]["levels"].size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(obj["spec"]["levels"][i]["nodeLabel"], want[i]);
  }
  // KAI levels carry our tier names as their alias (kai.scheduler/v1alpha1 TopologyLevel.alias);
  // Kueue's TopologyLevel has no such field.
  const std::vector<std::string> aliases{"core", "spine", "leaf", "hostname"};
  for (std::size_t i = 0; i < aliases.size(); ++i) {
    EXPECT_EQ(kai["spec"]["levels"][i]["alias"], aliases[i]) << kai.dump();
    EXPECT_FALSE(kueue["spec"]["levels"][i].contains("alias"));
  }
  // Every key a node carries is a level, so Kueue's "node carries every level label" rule holds.
  for (const auto& [node, labels] : node_labels(t)) {
    for (std::size_t i = 0; i + 1 < want.size(); ++i) EXPECT_TRUE(labels.contains(want[i])) << node;
  }
}

}  // namespace
}  // namespace hypertopo::topology::exporters
