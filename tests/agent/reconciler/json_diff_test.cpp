// The field-by-field diff the dry runs print: objects by key, arrays by index, "absent" for a side
// that has no such field, and a bound on what one object prints.
#include "agent/reconciler/json_diff.h"

#include <gtest/gtest.h>

#include "agent/reconciler/hypernode_reconciler.h"
#include "agent/reconciler/write_plan.h"
#include "discoverers/demo/demo_fabric.h"
#include "topology/tree_builder.h"

namespace hypertopo::agent {
namespace {

using nlohmann::json;

std::vector<std::string> lines_of(const JsonDiff& diff) {
  std::vector<std::string> out;
  for (const auto& c : diff.changes)
    out.push_back(c.path + ": " + describe_value(c.old_value) + " -> " + describe_value(c.new_value));
  return out;
}

TEST(JsonDiff, ObjectsByKeyArraysByIndexAbsentNamedAsSuch) {
  const json before = json::parse(R"({"spec": {"tier": 1, "members": [
      {"type": "Node", "selector": {"exactMatch": {"name": "a"}}},
      {"type": "Node", "selector": {"exactMatch": {"name": "b"}}}]},
    "metadata": {"labels": {"volcano.sh/network-topology-source": "x", "gone": "1"}}})");
  const json after = json::parse(R"({"spec": {"tier": 1, "tierName": "leaf", "members": [
      {"type": "Node", "selector": {"exactMatch": {"name": "a"}}},
      {"type": "Node", "selector": {"exactMatch": {"name": "c"}}},
      {"type": "Node", "selector": {"exactMatch": {"name": "d"}}}]},
    "metadata": {"labels": {"volcano.sh/network-topology-source": "y"}}})");
  JsonDiff diff;
  diff_json(&before, &after, "", 20, diff);
  EXPECT_EQ(lines_of(diff),
            (std::vector<std::string>{
                R"(metadata.labels.gone: "1" -> absent)",
                R"(metadata.labels["volcano.sh/network-topology-source"]: "x" -> "y")",
                R"(spec.members[1].selector.exactMatch.name: "b" -> "c")",
                R"(spec.members[2]: absent -> {"selector":{"exactMatch":{"name":"d"}},"type":"Node"})",
                R"(spec.tierName: absent -> "leaf")"}));
  EXPECT_EQ(diff.omitted, 0u);

  JsonDiff same;
  diff_json(&before, &before, "", 20, same);
  EXPECT_TRUE(same.empty());
  // A changed type is one change; a null is a value, not an absence.
  JsonDiff typed;
  const json one = 1, text = "1", null = nullptr;
  diff_json(&one, &text, "status.nodeCount", 20, typed);
  diff_json(nullptr, &null, "x", 20, typed);
  EXPECT_EQ(lines_of(typed),
            (std::vector<std::string>{R"(status.nodeCount: 1 -> "1")", "x: absent -> null"}));
  EXPECT_EQ(to_json(typed.changes[1]), json::parse(R"({"path": "x", "new": null})"));
  EXPECT_EQ(to_json(typed.changes[0]), json::parse(R"({"path": "status.nodeCount", "old": 1, "new": "1"})"));
}

TEST(JsonDiff, AtMostLimitChangesAreKeptAndTheRestCounted) {
  json before = json::array(), after = json::array();
  for (int i = 0; i < 50; ++i) {
    before.push_back(i);
    after.push_back(i + 1);
  }
  JsonDiff diff;
  diff_json(&before, &after, "spec.members", 20, diff);
  ASSERT_EQ(diff.changes.size(), 20u);
  EXPECT_EQ(diff.omitted, 30u);
  EXPECT_EQ(diff.changes.back().path, "spec.members[19]");
  // A second call into the same diff keeps counting against the same bound.
  const json a = 1, b = 2;
  diff_json(&a, &b, "status.nodeCount", 20, diff);
  EXPECT_EQ(diff.omitted, 31u);
  const std::string text = write_plan_text({{"update", "HyperNode", "leaf-x", "", diff}});
  EXPECT_NE(text.find("update HyperNode leaf-x\n  spec.members[0]: 0 -> 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  ... and 31 more changes\n"), std::string::npos) << text;
  EXPECT_EQ(write_plan_json({{"update", "HyperNode", "leaf-x", "", diff}})[0]["omittedChanges"], 31);
}

TEST(JsonDiff, LongValuesAreCutWhenPrinted) {
  const json big = std::string(500, 'x');
  EXPECT_EQ(describe_value(big).size(), 123u);
  EXPECT_TRUE(describe_value(big).ends_with("..."));
  EXPECT_EQ(describe_value(std::nullopt), "absent");
}

// A HyperNode as our reconciler stored it, and after another writer's fields are added: only ours
// are compared, and a status not yet written reads "absent", never -1.
TEST(HyperNodeChanges, OnlyOurFieldsAndAbsentStatusAsAbsent) {
  discoverers::DemoFabricSpec spec;
  spec.scalable_units = 2;
  spec.hosts_per_su = 4;
  spec.rails = 2;
  auto built = topology::TreeBuilder::create(discoverers::demo_builder_options())
                   ->build(discoverers::generate_demo_fabric(spec));
  ASSERT_TRUE(built) << built.error().message();
  const auto want = desired_hypernodes(*built, {});
  const DesiredHyperNode& leaf = want.begin()->second;
  json stored = leaf.object;
  stored["metadata"]["uid"] = "u-1";
  stored["metadata"]["labels"]["team"] = "infra";
  stored["metadata"]["annotations"]["note"] = "by hand";
  // Nothing of ours is in status yet: nodeCount and our condition are all that would change.
  JsonDiff status_only = hypernode_changes(&stored, leaf, 20);
  ASSERT_TRUE(leaf.condition.has_value());
  ASSERT_FALSE(status_only.changes.empty());
  for (const auto& c : status_only.changes) {
    EXPECT_TRUE(c.path == "status.nodeCount" || c.path.starts_with("status.conditions[type=FabricDegraded]."))
        << c.path;
    EXPECT_FALSE(c.old_value.has_value()) << c.path;
  }
  EXPECT_EQ(status_only.changes.back().path, "status.nodeCount");
  EXPECT_EQ(status_only.changes.back().new_value, json(leaf.node_count));

  // Our condition as stored (with its transition time, which is not compared) changes nothing.
  json condition = *leaf.condition;
  condition["lastTransitionTime"] = "2026-01-02T03:04:05Z";
  stored["status"]["conditions"] =
      json::array({json{{"type", "OtherController"}, {"status", "True"}}, condition});
  stored["status"]["nodeCount"] = leaf.node_count + 1;
  stored["spec"]["members"][0]["selector"]["exactMatch"]["name"] = "zz-someone-else";
  const auto lines = lines_of(hypernode_changes(&stored, leaf, 20));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), "status.nodeCount: " + std::to_string(leaf.node_count + 1) + " -> " +
                              std::to_string(leaf.node_count));
  for (const auto& l : lines) {
    EXPECT_EQ(l.find(": -1 ->"), std::string::npos) << l;
    EXPECT_FALSE(l.ends_with("-> -1")) << l;
  }

  const auto created = lines_of(hypernode_changes(nullptr, leaf, 100));
  EXPECT_NE(std::ranges::find(
                created, "spec.tier: absent -> " + std::to_string(leaf.object["spec"]["tier"].get<int>())),
            created.end());
}

}  // namespace
}  // namespace hypertopo::agent
