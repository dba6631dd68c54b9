// The node label export's patch rules on Node objects: only our keys move, the ownership annotation
// follows them, and the agent's own writes coming back through its watch cause no rebuild.
#include "agent/reconciler/node_label_reconciler.h"

#include <gtest/gtest.h>

namespace hypertopo::agent {
namespace {

using json = nlohmann::json;
using Labels = topology::exporters::LabelMap;

json node(const Labels& labels, const std::string& annotation = "") {
  json n = {{"metadata", {{"name", "n1"}, {"resourceVersion", "7"}, {"labels", labels}}}};
  if (!annotation.empty()) n["metadata"]["annotations"][std::string(kExportedLabelsAnnotation)] = annotation;
  return n;
}

const std::string kAnnotation(kExportedLabelsAnnotation);
const NodeLabelExportOptions kOn{.enabled = true};
const NodeLabelExportOptions kOff{.enabled = false};

TEST(NodeExportPatch, AddsOurKeysAndNamesThemInTheAnnotation) {
  auto patch = node_export_patch(node({{"team", "a"}}), {{"hypertopo.io/tier-1", "leaf-a"}}, kOn, true);
  ASSERT_TRUE(patch);
  EXPECT_EQ(*patch, (json{{"metadata",
                           {{"labels", {{"hypertopo.io/tier-1", "leaf-a"}}},
                            {"annotations", {{kAnnotation, "hypertopo.io/tier-1"}}}}}}));
  // Already there: nothing to write.
  EXPECT_FALSE(
      node_export_patch(node({{"team", "a"}, {"hypertopo.io/tier-1", "leaf-a"}}, "hypertopo.io/tier-1"),
                        {{"hypertopo.io/tier-1", "leaf-a"}}, kOn, true));
}

TEST(NodeExportPatch, ANodeInNoDomainLosesOurKeysOnly) {
  auto patch =
      node_export_patch(node({{"team", "a"}, {"hypertopo.io/tier-1", "leaf-a"}, {"hypertopo.io/tier-2", "s"}},
                             "hypertopo.io/tier-1,hypertopo.io/tier-2"),
                        {}, kOn, true);
  ASSERT_TRUE(patch);
  EXPECT_EQ(*patch, (json{{"metadata",
                           {{"labels", {{"hypertopo.io/tier-1", nullptr}, {"hypertopo.io/tier-2", nullptr}}},
                            {"annotations", {{kAnnotation, nullptr}}}}}}));
}

TEST(NodeExportPatch, WithoutRemovalKeysStayAndStayOwned) {
  const json n = node({{"hypertopo.io/tier-1", "leaf-a"}, {"hypertopo.io/tier-2", "s"}},
                      "hypertopo.io/tier-1,hypertopo.io/tier-2");
  // The tree lost tier 2 but the discovery was incomplete: tier 1 changes, tier 2 stays ours.
  auto patch = node_export_patch(n, {{"hypertopo.io/tier-1", "leaf-b"}}, kOn, false);
  ASSERT_TRUE(patch);
  EXPECT_EQ(*patch, (json{{"metadata", {{"labels", {{"hypertopo.io/tier-1", "leaf-b"}}}}}}));
  EXPECT_FALSE(node_export_patch(n, {}, kOn, false));
}

TEST(NodeExportPatch, OffRemovesOnlyWhatTheAnnotationNames) {
  // A hand-set tier label the agent never wrote stays; the one it wrote goes.
  const json n =
      node({{"hypertopo.io/tier-1", "leaf-a"}, {"hypertopo.io/tier-2", "by-hand"}}, "hypertopo.io/tier-1");
  auto patch = node_export_patch(n, {{"hypertopo.io/tier-1", "leaf-a"}}, kOff, true);
  ASSERT_TRUE(patch);
  EXPECT_EQ(
      *patch,
      (json{{"metadata",
             {{"labels", {{"hypertopo.io/tier-1", nullptr}}}, {"annotations", {{kAnnotation, nullptr}}}}}}));
  EXPECT_FALSE(node_export_patch(node({{"hypertopo.io/tier-2", "by-hand"}}), {}, kOff, true));
}

TEST(NodeExportPatch, ANewPrefixMovesTheLabels) {
  NodeLabelExportOptions renamed = kOn;
  renamed.labels.key_prefix = "example.com/tier-";
  auto patch = node_export_patch(node({{"hypertopo.io/tier-1", "leaf-a"}}, "hypertopo.io/tier-1"),
                                 {{"example.com/tier-1", "leaf-a"}}, renamed, true);
  ASSERT_TRUE(patch);
  EXPECT_EQ(*patch, (json{{"metadata",
                           {{"labels", {{"example.com/tier-1", "leaf-a"}, {"hypertopo.io/tier-1", nullptr}}},
                            {"annotations", {{kAnnotation, "example.com/tier-1"}}}}}}));
}

TEST(DiffersOnlyInExport, OurOwnPatchComingBackIsNoChange) {
  const json before = node({{"team", "a"}});
  json after = node({{"team", "a"}, {"hypertopo.io/tier-1", "leaf-a"}}, "hypertopo.io/tier-1");
  after["metadata"]["resourceVersion"] = "8";
  EXPECT_TRUE(differs_only_in_export(before, after, kOn));
  json relabelled = after;
  relabelled["metadata"]["labels"]["team"] = "b";
  EXPECT_FALSE(differs_only_in_export(before, relabelled, kOn));
  json status = after;
  status["status"]["conditions"] = json::array({{{"type", "Ready"}, {"status", "False"}}});
  EXPECT_FALSE(differs_only_in_export(before, status, kOn));
}

}  // namespace
}  // namespace hypertopo::agent
