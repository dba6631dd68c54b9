// The FabricDegraded condition through /status: written only when it changes, next to Volcano's
// status.nodeCount and other writers' conditions, against the loopback API server.
#include <gtest/gtest.h>

#include "tests/agent/reconciler/reconciler_harness.h"
#include "tests/support/volcano/volcano_hypernode_status.h"
#include "topology/hypernode.h"
#include "topology/hypernode_status.h"

namespace hypertopo::agent {
namespace {

using nlohmann::json;
using FabricConditionTest = ReconcilerHarness;

// small_tree with health assessed; leaf-1's uplink at 1x when `degraded`.
topology::Tree assessed_tree(bool degraded) {
  auto tree = small_tree(3, 2);
  for (topology::DomainId id = 0; id < tree.size(); ++id) tree.domain(id).health.assessed = true;
  if (degraded) {
    topology::BadLink bad{.reason = topology::HealthReason::kDegradedLinkWidth,
                          .end_a = "leaf-1[3]",
                          .end_b = "spine-1[2]",
                          .expected = "4x",
                          .seen = "1x",
                          .uplink = true};
    tree.domain(*tree.find("leaf-1")).health.bad_links.push_back(bad);
  }
  return tree;
}

json condition(const json& object) {
  auto c = topology::find_condition(object, topology::kFabricDegradedCondition);
  return c ? *c : json();
}

TEST_F(FabricConditionTest, ChangesAreWrittenOnceAndUnchangedHealthCostsNothing) {
  using namespace std::chrono_literals;
  auto wall = std::chrono::system_clock::time_point(std::chrono::seconds(1'795'000'000));
  ReconcileOptions options;
  options.wall_clock = [&] { return wall; };
  auto r = reconciler(options);
  ASSERT_TRUE(r.reconcile(assessed_tree(true), true));
  const json leaf = condition(*stored("leaf-1"));
  EXPECT_EQ(leaf["status"], "True");
  EXPECT_EQ(leaf["reason"], "DegradedLinkWidth");
  EXPECT_EQ(leaf["message"], "leaf-1[3] - spine-1[2]: DegradedLinkWidth, 1x, expected 4x");
  EXPECT_EQ(leaf["lastTransitionTime"], topology::rfc3339(wall));
  EXPECT_EQ(condition(*stored("leaf-0"))["status"], "False");
  EXPECT_EQ((*stored("leaf-1"))["status"]["nodeCount"], 2);

  // Another controller keeps a condition of its own next to ours.
  auto other = *stored("leaf-1");
  other["status"]["conditions"].push_back({{"type", "Ready"}, {"status", "True"}, {"reason", "Synced"}});
  ASSERT_TRUE(client_->update_status(kHyperNodesResource, "", other));

  // Unchanged health, later: not one write.
  wall += 1h;
  server_->reset_counts();
  auto same = r.reconcile(assessed_tree(true), true);
  ASSERT_TRUE(same);
  EXPECT_EQ(server_->writes(), 0);
  EXPECT_EQ(same->write_attempts(), 0);

  // The uplink is back: one write, the transition time moves, the other writer's fields stay.
  server_->reset_counts();
  auto healed = r.reconcile(assessed_tree(false), true);
  ASSERT_TRUE(healed);
  EXPECT_EQ(server_->writes(), 1);
  const json now = *stored("leaf-1");
  EXPECT_EQ(condition(now)["status"], "False");
  EXPECT_EQ(condition(now)["reason"], "FabricHealthy");
  EXPECT_EQ(condition(now)["lastTransitionTime"], topology::rfc3339(wall));
  EXPECT_EQ(now["status"]["nodeCount"], 2);
  ASSERT_EQ(now["status"]["conditions"].size(), 2u);
  EXPECT_EQ(now["status"]["conditions"][1]["type"], "Ready");

  // Volcano's own status loop agrees with the count and has nothing to write.
  EXPECT_EQ(now["status"]["nodeCount"].get<std::int64_t>(),
            testing::VolcanoHyperNodeStatusLoop::actual_node_count(now, {}));
}

// A host whose own link trained low is named on its leaf in hypertopo.io/degraded-members, the
// structured list placement reads; the annotation is written with the health change only, other
// writers' annotations stay, and it goes when the link heals.
TEST_F(FabricConditionTest, DegradedMembersFollowTheHostLinksWithOneWriteEach) {
  auto tree_with = [](bool host_link_bad) {
    auto tree = assessed_tree(false);
    if (host_link_bad) {
      tree.domain(*tree.find("leaf-2"))
          .health.bad_links.push_back({.reason = topology::HealthReason::kDegradedLinkWidth,
                                       .end_a = "host-2-1 mlx5_0[1]",
                                       .end_b = "leaf-2[7]",
                                       .expected = "4x",
                                       .seen = "1x",
                                       .host = "host-2-1"});
    }
    return tree;
  };
  auto members = [&](const std::string& name) {
    const json object = *stored(name);
    const json& annotations = object["metadata"].value("annotations", json::object());
    return annotations.value(topology::kDegradedMembersAnnotation, std::string("<none>"));
  };
  auto r = reconciler();
  ASSERT_TRUE(r.reconcile(tree_with(false), true));
  EXPECT_EQ(members("leaf-2"), "<none>");

  // Someone else annotates the leaf; then host-2-1's link trains at 1x.
  auto other = *stored("leaf-2");
  other["metadata"]["annotations"] = {{"example.com/owner", "team-a"}};
  ASSERT_TRUE(client_->update(kHyperNodesResource, "", other));
  server_->reset_counts();
  auto bad = r.reconcile(tree_with(true), true);
  ASSERT_TRUE(bad);
  EXPECT_EQ(members("leaf-2"), "host-2-1");
  EXPECT_EQ(members("leaf-1"), "<none>");
  EXPECT_EQ((*stored("leaf-2"))["metadata"]["annotations"]["example.com/owner"], "team-a");
  EXPECT_EQ(condition(*stored("leaf-2"))["status"], "True");
  EXPECT_EQ(server_->writes(), 2);  // the annotation (update) and the condition (/status)

  server_->reset_counts();
  auto same = r.reconcile(tree_with(true), true);
  ASSERT_TRUE(same);
  EXPECT_EQ(server_->writes(), 0);

  server_->reset_counts();
  auto healed = r.reconcile(tree_with(false), true);
  ASSERT_TRUE(healed);
  EXPECT_EQ(members("leaf-2"), "<none>");
  EXPECT_EQ((*stored("leaf-2"))["metadata"]["annotations"]["example.com/owner"], "team-a");
  EXPECT_EQ(condition(*stored("leaf-2"))["status"], "False");
  EXPECT_EQ(server_->writes(), 2);
}

TEST(FabricConditionMerge, TransitionTimeMovesOnlyWithTheStatus) {
  json object = {{"status", {{"nodeCount", 3}}}};
  topology::DomainHealth h;
  h.assessed = true;
  h.bad_links.push_back(
      {.reason = topology::HealthReason::kMissingUplinks, .end_a = "leaf-2", .seen = "1 uplink"});
  auto first = topology::merge_fabric_condition(object, topology::fabric_degraded_condition(h), "T1");
  ASSERT_TRUE(first);
  object["status"]["conditions"] = *first;
  EXPECT_FALSE(topology::merge_fabric_condition(object, topology::fabric_degraded_condition(h), "T2"));
  // Still degraded, another link: the message changes, the transition time does not.
  h.bad_links[0].end_a = "leaf-3";
  auto second = topology::merge_fabric_condition(object, topology::fabric_degraded_condition(h), "T3");
  ASSERT_TRUE(second);
  EXPECT_EQ((*second)[0]["lastTransitionTime"], "T1");
  EXPECT_EQ((*second)[0]["reason"], "MissingUplinks");
}

}  // namespace
}  // namespace hypertopo::agent
