// The reconciler against the loopback API server (no real API server here; the loopback one keeps
// the semantics that matter: resourceVersion, 409 Conflict / AlreadyExists, selectors, /status).
#include "agent/reconciler/hypernode_reconciler.h"

#include <gtest/gtest.h>

#include "tests/agent/reconciler/reconciler_harness.h"
#include "tests/support/volcano/volcano_hypernode_status.h"
#include "topology/hypernode.h"

namespace hypertopo::agent {
namespace {

using nlohmann::json;

int count_kind(const ReconcileResult& r, ActionKind kind) {
  int n = 0;
  for (const auto& a : r.actions) n += a.kind == kind;
  return n;
}

const ReconcileAction* action_for(const ReconcileResult& r, const std::string& name) {
  for (const auto& a : r.actions) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

using HyperNodeReconcilerTest = ReconcilerHarness;

TEST_F(HyperNodeReconcilerTest, FirstSyncCreatesAllThenUnchangedWritesNothingThenOneHostWritesLittle) {
  auto tree = small_tree(5, 4);
  auto r = reconciler();
  auto first = r.reconcile(tree, true);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->summary_line(), "created=6 updated=0 deleted=0 unchanged=0 held=0");
  EXPECT_EQ(server_->store().object_count(kHyperNodeCollection), 6u);
  // 6 creates and 6 status writes (merge patches of status.nodeCount).
  EXPECT_EQ(server_->count("create"), 6);
  EXPECT_EQ(server_->count("patch"), 6);
  auto spine = stored("spine-0");
  ASSERT_TRUE(spine);
  // Volcano's value (hypernode_handler.go actualNodeCnt): the spine's 5 leaf members, not its 20 hosts.
  EXPECT_EQ((*spine)["status"]["nodeCount"], 5);
  EXPECT_EQ((*stored("leaf-0"))["status"]["nodeCount"], 4);
  EXPECT_EQ((*spine)["metadata"]["labels"][topology::kManagedByLabel], "hypertopo");
  EXPECT_EQ((*spine)["metadata"]["labels"][topology::kSourceLabel], "hypertopo");
  ASSERT_EQ(first->actions.size(), 6u);
  EXPECT_EQ(first->actions.front().name, "leaf-0");  // sorted by name

  server_->reset_counts();
  auto second = r.reconcile(tree, true);
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(second->summary_line(), "created=0 updated=0 deleted=0 unchanged=6 held=0");
  EXPECT_EQ(server_->writes(), 0);
  EXPECT_EQ(second->write_attempts(), 0);

  // One host joins leaf-2: leaf-2's members change (update + status); the spine still has 5
  // members, so its count stays and nothing else is written.
  tree.domain(*tree.find("leaf-2")).nodes.push_back("host-2-new");
  server_->reset_counts();
  auto third = r.reconcile(tree, true);
  ASSERT_TRUE(third) << third.error().message();
  EXPECT_EQ(third->summary_line(), "created=0 updated=1 deleted=0 unchanged=5 held=0");
  EXPECT_EQ(server_->writes(), 2);
  EXPECT_EQ((*stored("spine-0"))["status"]["nodeCount"], 5);
  EXPECT_EQ((*stored("leaf-2"))["status"]["nodeCount"], 5);
  EXPECT_EQ((*stored("leaf-2"))["spec"]["members"].size(), 5u);
}

// Volcano's hyperNode-controller writes status.nodeCount too (hypernode_handler.go, actualNodeCnt):
// distinct member names, exactMatch names of any member type plus the Nodes regexMatch / labelMatch
// select. The stand-in copies that function; ours must give the same number for every object.
TEST_F(HyperNodeReconcilerTest, StatusIsVolcanosMemberCountAndKeepsOtherWritersFields) {
  auto r = reconciler();
  ASSERT_TRUE(r.reconcile(small_tree(3, 2), true));
  for (const auto& hn : server_->store().objects(kHyperNodeCollection)) {
    EXPECT_EQ(hn["status"]["nodeCount"].get<std::int64_t>(),
              testing::VolcanoHyperNodeStatusLoop::actual_node_count(hn, {}))
        << hn["metadata"]["name"];
  }
  // Another controller keeps conditions in status, and someone set a wrong count: our write puts the
  // count right and leaves the conditions alone.
  auto leaf = *stored("leaf-0");
  leaf["status"]["nodeCount"] = 99;
  leaf["status"]["conditions"] = json::array({{{"type", "FabricHealthy"}, {"status", "True"}}});
  ASSERT_TRUE(client_->update_status(kHyperNodesResource, "", leaf));
  server_->reset_counts();
  ASSERT_TRUE(r.reconcile(small_tree(3, 2), true));
  EXPECT_EQ(server_->writes(), 1);
  EXPECT_EQ((*stored("leaf-0"))["status"]["nodeCount"], 2);
  EXPECT_EQ((*stored("leaf-0"))["status"]["conditions"][0]["type"], "FabricHealthy");
}

TEST(VolcanoNodeCount, CountsDistinctNamesOfEveryMemberKindAndSelector) {
  auto node = [](const std::string& name, const std::string& rack) {
    return json{{"metadata", {{"name", name}, {"labels", {{"rack", rack}}}}}};
  };
  const std::vector<json> nodes = {node("gpu-1", "r1"), node("gpu-2", "r1"), node("cpu-1", "r2"),
                                   node("cpu-2", "r3")};
  auto exact = [](const std::string& type, const std::string& name) {
    return json{{"type", type}, {"selector", {{"exactMatch", {{"name", name}}}}}};
  };
  json regex = {{"type", "Node"}, {"selector", {{"regexMatch", {{"pattern", "gpu-[0-9]"}}}}}};
  json in_r2 = {{"key", "rack"}, {"operator", "In"}, {"values", json::array({"r2"})}};
  json label = {{"type", "Node"},
                {"selector", {{"labelMatch", {{"matchExpressions", json::array({in_r2})}}}}}};
  json members = json::array(
      {exact("Node", "gpu-1"), exact("HyperNode", "leaf-x"), exact("Node", "gpu-1"), regex, label});
  json hn = {{"spec", {{"members", members}}}};
  // gpu-1 and leaf-x by name, gpu-2 by the (unanchored) pattern, cpu-1 by label: 4 names.
  EXPECT_EQ(testing::VolcanoHyperNodeStatusLoop::actual_node_count(hn, nodes), 4);
  // Only exactMatch: what our objects carry, and all our own count sees.
  json ours = {
      {"spec", {{"members", json::array({exact("HyperNode", "leaf-0"), exact("HyperNode", "leaf-1")})}}}};
  EXPECT_EQ(testing::VolcanoHyperNodeStatusLoop::actual_node_count(ours, nodes), 2);
  EXPECT_EQ(topology::volcano_exact_member_count(ours["spec"]), 2u);
}

TEST_F(HyperNodeReconcilerTest, MemberOrderAndServerFieldsDoNotCauseWrites) {
  auto tree = small_tree(2, 3);
  auto r = reconciler();
  ASSERT_TRUE(r.reconcile(tree, true));
  // Someone reorders the members and adds a label and an annotation of their own: not our business.
  auto leaf = *stored("leaf-0");
  auto& members = leaf["spec"]["members"];
  std::reverse(members.begin(), members.end());
  leaf["metadata"]["labels"]["team"] = "net";
  auto put = client_->update(kHyperNodesResource, "", leaf);
  ASSERT_TRUE(put) << put.error().error.message();
  server_->reset_counts();
  auto again = r.reconcile(tree, true);
  ASSERT_TRUE(again);
  EXPECT_EQ(server_->writes(), 0);
  EXPECT_EQ(again->unchanged, 3);
}

TEST_F(HyperNodeReconcilerTest, IncompleteDiscoveryNeverDeletes) {
  auto r = reconciler();
  ASSERT_TRUE(r.reconcile(small_tree(10, 2), true));
  server_->reset_counts();
  auto partial = r.reconcile(small_tree(9, 2), /*complete=*/false);
  ASSERT_TRUE(partial) << partial.error().message();
  EXPECT_EQ(partial->deleted, 0);
  EXPECT_EQ(partial->held, 1);
  EXPECT_EQ(server_->count("delete"), 0);
  EXPECT_EQ(server_->store().object_count(kHyperNodeCollection), 11u);
  ASSERT_NE(action_for(*partial, "leaf-9"), nullptr);
  EXPECT_EQ(action_for(*partial, "leaf-9")->kind, ActionKind::kHeld);

  // Complete, and within the guard (1 of 11): deleted, with preconditions.
  auto full = r.reconcile(small_tree(9, 2), true);
  ASSERT_TRUE(full);
  EXPECT_EQ(full->deleted, 1);
  EXPECT_FALSE(stored("leaf-9"));
  EXPECT_EQ(server_->store().object_count("/v1/events"), 0u);
}

TEST_F(HyperNodeReconcilerTest, MassDeletionIsHeldWithAnEvent) {
  auto r = reconciler();
  ASSERT_TRUE(r.reconcile(small_tree(10, 2), true));
  server_->reset_counts();
  auto shrunk = r.reconcile(small_tree(2, 2), true);  // 8 of 11 would go: more than 20%
  ASSERT_TRUE(shrunk) << shrunk.error().message();
  EXPECT_EQ(shrunk->held, 8);
  EXPECT_EQ(shrunk->deleted, 0);
  EXPECT_EQ(count_kind(*shrunk, ActionKind::kHeld), 8);
  EXPECT_EQ(server_->count("delete"), 0);
  EXPECT_EQ(server_->store().object_count(kHyperNodeCollection), 11u);
  EXPECT_TRUE(shrunk->event_emitted);
  auto events = client_->list(k8s::kEventsResource, "hypertopo-system");
  ASSERT_TRUE(events);
  ASSERT_EQ(events->items.size(), 1u);
  EXPECT_EQ(events->items[0]["reason"], "MassDeletionHeld");
  EXPECT_NE(events->items[0]["message"].get<std::string>().find("held 8 HyperNode deletion(s) of 11"),
            std::string::npos);
  EXPECT_EQ(shrunk->writes.at("event/ok"), 1);

  // An admin raises the limit: now they go.
  auto allowed = reconciler({.max_delete_fraction = 1.0}).reconcile(small_tree(2, 2), true);
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->deleted, 8);
  EXPECT_EQ(server_->store().object_count(kHyperNodeCollection), 3u);
}

TEST_F(HyperNodeReconcilerTest, ConcurrentWriterConverges) {
  auto r = reconciler();
  ASSERT_TRUE(r.reconcile(small_tree(3, 2), true));
  auto tree = small_tree(3, 2);
  tree.domain(*tree.find("leaf-1")).nodes.push_back("host-1-new");
  // Right after our list, another writer changes leaf-1 (a label of its own): our update carries a
  // stale resourceVersion and gets 409.
  bool bumped = false;
  on_request_ = [&](const k8s::RequestRecord& rec) {
    if (bumped || rec.verb != "list") return;
    bumped = true;
    auto leaf = *stored("leaf-1");
    leaf["metadata"]["labels"]["other-writer"] = "yes";
    auto res = server_->store().handle({.method = "PUT",
                                        .path = "/apis/topology.volcano.sh/v1alpha1/hypernodes/leaf-1",
                                        .content_type = "application/json",
                                        .body = leaf.dump()});
    ASSERT_EQ(res.status, 200) << res.body;
  };
  auto result = r.reconcile(tree, true);
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_TRUE(bumped);
  EXPECT_EQ(result->writes["update/conflict"], 1);
  EXPECT_EQ(result->failed, 0);
  auto leaf = *stored("leaf-1");
  EXPECT_EQ(leaf["spec"]["members"].size(), 3u);
  EXPECT_EQ(leaf["metadata"]["labels"]["other-writer"], "yes");  // their change kept
  // Injected 409s on updates, too.
  on_request_ = nullptr;
  tree.domain(*tree.find("leaf-0")).nodes.push_back("host-0-new");
  server_->fail_next(2, 409, 0, "update");
  auto again = r.reconcile(tree, true);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->failed, 0);
  EXPECT_EQ((*stored("leaf-0"))["spec"]["members"].size(), 3u);
  server_->reset_counts();
  ASSERT_TRUE(r.reconcile(tree, true));
  EXPECT_EQ(server_->writes(), 0);
}

TEST_F(HyperNodeReconcilerTest, RetriesServerErrorsAndRateLimitsUntilTheWriteLands) {
  server_->fail_next(2, 503, 1, "create");
  server_->fail_next(1, 429, 3, "create");
  server_->fail_next(1, 500, 0, "patch");
  auto result = reconciler().reconcile(small_tree(2, 2), true);
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->created, 3);
  EXPECT_EQ(result->failed, 0);
  EXPECT_EQ(server_->store().object_count(kHyperNodeCollection), 3u);
  for (const char* name : {"leaf-0", "leaf-1", "spine-0"}) {
    auto object = stored(name);
    ASSERT_TRUE(object) << name;
    EXPECT_TRUE((*object)["status"].contains("nodeCount")) << name;
  }
  bool waited_retry_after = false;
  for (auto d : clock_->sleeps()) waited_retry_after |= d >= std::chrono::seconds(3);
  EXPECT_TRUE(waited_retry_after) << "Retry-After: 3 was not honoured";
}

TEST_F(HyperNodeReconcilerTest, TruncatedAnswersAndDroppedConnectionsAreRetried) {
  server_->truncate_next(1, "create");  // the object is stored, the answer is cut
  server_->drop_next(1, "create");      // no answer at all
  server_->drop_next(1, "list");
  auto r = reconciler();
  auto result = r.reconcile(small_tree(3, 2), true);
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->failed, 0);
  EXPECT_EQ(result->created, 4);
  EXPECT_EQ(server_->store().object_count(kHyperNodeCollection), 4u);
  server_->reset_counts();
  auto again = r.reconcile(small_tree(3, 2), true);
  ASSERT_TRUE(again);
  EXPECT_EQ(server_->writes(), 0) << again->summary_line();
}

TEST_F(HyperNodeReconcilerTest, AFailedCreateIsReportedNotDropped) {
  server_->fail_next(100, 500, 0, "create");
  auto result = reconciler({.max_attempts = 3}).reconcile(small_tree(1, 2), true);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->failed, 2);
  EXPECT_EQ(result->created, 0);
  EXPECT_EQ(result->writes["create/error"], 6);
  ASSERT_NE(action_for(*result, "leaf-0"), nullptr);
  EXPECT_EQ(action_for(*result, "leaf-0")->kind, ActionKind::kFailed);
  EXPECT_NE(action_for(*result, "leaf-0")->detail.find("500"), std::string::npos);
}

TEST_F(HyperNodeReconcilerTest, AnObjectWithOurNameButForeignLabelsIsReportedNotOverwritten) {
  json foreign = {{"apiVersion", "topology.volcano.sh/v1alpha1"},
                  {"kind", "HyperNode"},
                  {"metadata", {{"name", "leaf-1"}, {"labels", {{topology::kSourceLabel, "ufm"}}}}},
                  {"spec", {{"tier", 1}, {"members", json::array()}}}};
  ASSERT_TRUE(client_->create(kHyperNodesResource, "", foreign));
  auto before = *stored("leaf-1");
  auto r = reconciler();
  auto result = r.reconcile(small_tree(2, 2), true);
  ASSERT_TRUE(result) << result.error().message();
  ASSERT_NE(action_for(*result, "leaf-1"), nullptr);
  EXPECT_EQ(action_for(*result, "leaf-1")->kind, ActionKind::kForeign);
  EXPECT_EQ(result->foreign, 1);
  EXPECT_EQ(result->created, 2);
  EXPECT_EQ(*stored("leaf-1"), before);
  // And it is never a deletion candidate either.
  auto shrink = r.reconcile(small_tree(1, 2), true);
  ASSERT_TRUE(shrink);
  EXPECT_TRUE(stored("leaf-1"));
}

TEST_F(HyperNodeReconcilerTest, DryRunWritesNothingButReportsTheSameActions) {
  auto dry = reconciler({.dry_run = true}).reconcile(small_tree(3, 2), true);
  ASSERT_TRUE(dry);
  EXPECT_EQ(server_->writes(), 0);
  EXPECT_EQ(dry->summary_line(), "created=4 updated=0 deleted=0 unchanged=0 held=0");
  auto real = reconciler().reconcile(small_tree(3, 2), true);
  ASSERT_TRUE(real);
  EXPECT_EQ(real->summary_line(), dry->summary_line());
  server_->reset_counts();
  auto tree = small_tree(2, 2);
  tree.domain(*tree.find("leaf-0")).nodes.push_back("host-0-new");
  auto dry_change = reconciler({.dry_run = true}).reconcile(tree, true);
  ASSERT_TRUE(dry_change);
  EXPECT_EQ(server_->writes(), 0);
  // leaf-0 and spine-0 change; leaf-2 goes (a single deletion is never held by the guard).
  EXPECT_EQ(dry_change->summary_line(), "created=0 updated=2 deleted=1 unchanged=1 held=0");
  EXPECT_EQ(server_->store().object_count(kHyperNodeCollection), 4u);
}

}  // namespace
}  // namespace hypertopo::agent

namespace hypertopo::agent {
namespace {

// Writes go out `parallel` at a time and land exactly as one after another would: the same objects,
// the same counts, no write when nothing changed. A 429 (the API server's Priority and Fairness
// turning a request away) is waited out for its Retry-After before that write is sent again.
TEST_F(HyperNodeReconcilerTest, ParallelWritesLandAsSequentialOnesAndWaitOutRetryAfter) {
  auto tree = small_tree(40, 2);
  auto r = reconciler({.max_delete_fraction = 1.0, .parallel = 8});
  server_->fail_next(3, 429, /*retry_after_seconds=*/2, "create");
  auto first = r.reconcile(tree, true);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->summary_line(), "created=41 updated=0 deleted=0 unchanged=0 held=0");
  EXPECT_EQ(server_->store().object_count(kHyperNodeCollection), 41u);
  EXPECT_EQ(server_->count("create"), 41 + 3);
  EXPECT_EQ(first->writes.at("create/ok"), 41);
  EXPECT_EQ(first->writes.at("status/ok"), 41);
  int waited_out = 0;
  for (const auto& d : clock_->sleeps()) waited_out += d == std::chrono::seconds(2);
  EXPECT_EQ(waited_out, 3);
  ASSERT_EQ(first->actions.size(), 41u);
  EXPECT_TRUE(std::is_sorted(first->actions.begin(), first->actions.end(),
                             [](const auto& a, const auto& b) { return a.name < b.name; }));
  EXPECT_EQ((*stored("leaf-39"))["status"]["nodeCount"], 2);

  server_->reset_counts();
  auto again = r.reconcile(tree, true);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->summary_line(), "created=0 updated=0 deleted=0 unchanged=41 held=0");
  EXPECT_EQ(server_->writes(), 0);

  auto smaller = small_tree(30, 2);
  auto shrunk = r.reconcile(smaller, true);
  ASSERT_TRUE(shrunk);
  EXPECT_EQ(shrunk->summary_line(), "created=0 updated=1 deleted=10 unchanged=30 held=0");
  EXPECT_EQ(shrunk->writes.at("delete/ok"), 10);
  EXPECT_EQ(server_->store().object_count(kHyperNodeCollection), 31u);
}

// What the leader's watch of its HyperNodes calls drift: only what is ours (spec with members as a
// set, our labels, our status once we have written it), never another writer's label, and nothing in
// status before our first status write (the object as created).
TEST(HyperNodeDrift, OnlyWhatIsOursCountsAndStatusOnlyOnceWeHaveWrittenIt) {
  auto member = [](const std::string& node) {
    return json{{"type", "Node"}, {"selector", {{"exactMatch", {{"name", node}}}}}};
  };
  DesiredHyperNode want;
  want.name = "leaf-a";
  want.object = {
      {"metadata",
       {{"name", "leaf-a"},
        {"labels", {{topology::kSourceLabel, "hypertopo"}, {topology::kManagedByLabel, "hypertopo"}}}}},
      {"spec", {{"tier", 1}, {"members", json::array({member("n1"), member("n2")})}}}};
  want.node_count = 2;
  want.condition = json{{"type", topology::kFabricDegradedCondition},
                        {"status", "False"},
                        {"reason", "FabricHealthy"},
                        {"message", "every link is up at its expected width and speed"}};
  json current = want.object;
  current["metadata"]["resourceVersion"] = "7";
  EXPECT_EQ(hypernode_drift(current, want), "");  // as created: no status of ours yet
  current["spec"]["members"] = json::array({member("n2"), member("n1")});
  current["metadata"]["labels"]["example.com/team"] = "ml";
  current["status"] = {{"nodeCount", 2}, {"conditions", json::array({*want.condition})}};
  current["status"]["conditions"][0]["lastTransitionTime"] = "2026-11-27T00:00:00Z";
  EXPECT_EQ(hypernode_drift(current, want), "");

  json edited = current;
  edited["spec"]["tier"] = 6;
  EXPECT_EQ(hypernode_drift(edited, want), "spec");
  edited = current;
  edited["metadata"]["labels"].erase(topology::kManagedByLabel);
  EXPECT_EQ(hypernode_drift(edited, want), "labels");
  edited = current;
  edited["status"]["nodeCount"] = 3;
  EXPECT_EQ(hypernode_drift(edited, want), "status.nodeCount");
  edited = current;
  edited["status"]["conditions"][0]["status"] = "True";
  EXPECT_EQ(hypernode_drift(edited, want), "status.conditions[FabricDegraded]");
  edited = current;
  edited["status"]["conditions"] = json::array();
  EXPECT_EQ(hypernode_drift(edited, want), "status.conditions[FabricDegraded]");
}

}  // namespace
}  // namespace hypertopo::agent
