// The extender's parts on their own interfaces: the cluster view (cluster_view.h) and the gang book
// (gang_book.h). The verbs and the whole service are tested over HTTP in the other files; these pin
// what each part promises the others: which events a pod change means, when the index is rebuilt
// and what a rebuild keeps, and how the book's reservations follow its slots.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "scheduler/extender/cluster_view.h"
#include "scheduler/extender/extender_service.h"
#include "scheduler/extender/gang_book.h"
#include "tests/scheduler/extender/extender_cluster.h"
#include "tests/support/fixtures.h"
#include "timing/clock.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
using testing::bound;
using testing::pod_object;

class ClusterViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = testing::make_cluster(1, 2, 4);  // leaf-00, leaf-01: n-00-0..3, n-01-0..3
    ASSERT_TRUE(view_.set_hypernodes(cluster_.hypernodes).has_value());
    ASSERT_TRUE(view_.set_nodes(cluster_.nodes).has_value());
    ASSERT_TRUE(view_.set_pods({}).has_value());
    ASSERT_EQ(view_.ensure_index().value(), true);
  }

  std::int64_t gpus_used(const std::string& node) {
    const TopologyIndex& index = view_.index();
    return index.node_used(index.find_node(node), index.resource_id("nvidia.com/gpu"));
  }

  json node(const std::string& name) {
    for (const auto& n : cluster_.nodes) {
      if (n["metadata"]["name"] == name) return n;
    }
    return json();
  }

  testing::ExtenderCluster cluster_;
  ClusterView view_;
};

TEST_F(ClusterViewTest, EachPodChangeSaysWhatItMeansForAGangSlot) {
  const std::map<std::string, std::string> gang{{"hypertopo.io/gang", "g"}, {"hypertopo.io/gang-size", "2"}};
  json pending = pod_object("p-0", "u-0", "8", gang);
  auto e = view_.upsert_pod(pending);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, PodEvent::Kind::kNone);

  e = view_.upsert_pod(bound(pending, "n-00-0"));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, PodEvent::Kind::kBound);
  ASSERT_NE(e->pod, nullptr);
  EXPECT_EQ(e->pod->gang, "ml/g");
  EXPECT_EQ(e->pod->node, "n-00-0");

  json terminating = bound(pending, "n-00-0");
  terminating["metadata"]["deletionTimestamp"] = "2026-11-27T10:00:00Z";
  e = view_.upsert_pod(terminating);
  EXPECT_EQ(e->kind, PodEvent::Kind::kGone);
  EXPECT_EQ(e->uid, "u-0");

  json done = pending;
  done["status"]["phase"] = "Succeeded";
  EXPECT_EQ(view_.upsert_pod(done)->kind, PodEvent::Kind::kSucceeded);
  EXPECT_EQ(view_.pod("u-0"), nullptr);  // a finished pod uses nothing
  EXPECT_EQ(view_.remove_pod(pending).kind, PodEvent::Kind::kGone);
}

TEST_F(ClusterViewTest, PodsChangeUsageInPlaceAndOnlyTopologyRebuildsTheIndex) {
  ASSERT_TRUE(view_.upsert_pod(bound(pod_object("a", "u-a", "4"), "n-00-1")).has_value());
  EXPECT_EQ(view_.ensure_index().value(), false);
  EXPECT_EQ(gpus_used("n-00-1"), 4);
  EXPECT_EQ(view_.counters().index_pod_updates, 1);

  // A heartbeat (only the status's timestamps change) is not a topology change.
  json heartbeat = node("n-00-1");
  heartbeat["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-11-27T10:00:00Z";
  ASSERT_TRUE(view_.upsert_node(heartbeat).has_value());
  EXPECT_EQ(view_.ensure_index().value(), false);

  // A label is: the next call rebuilds, and the pods' usage comes from the view.
  json labelled = node("n-00-1");
  labelled["metadata"]["labels"]["pool"] = "reserved";
  ASSERT_TRUE(view_.upsert_node(labelled).has_value());
  EXPECT_FALSE(view_.index_current());
  EXPECT_EQ(view_.ensure_index().value(), true);
  EXPECT_EQ(gpus_used("n-00-1"), 4);
  EXPECT_EQ(view_.counters().index_rebuilds, 2);
}

TEST_F(ClusterViewTest, AListThatDoesNotReadNamesTheObjectAndLeavesTheViewAsItWas) {
  json broken = node("n-00-2");
  broken["status"]["allocatable"]["nvidia.com/gpu"] = "many";
  std::vector<json> nodes = cluster_.nodes;
  nodes.push_back(broken);
  auto r = view_.set_nodes(nodes);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("n-00-2"), std::string::npos) << r.error().message();
  EXPECT_EQ(view_.node_count(), cluster_.nodes.size());
}

TEST_F(ClusterViewTest, ANodeKubeSchedulerWouldFilterOutSaysWhy) {
  json cordoned = node("n-01-0");
  cordoned["spec"]["unschedulable"] = true;
  ASSERT_TRUE(view_.upsert_node(cordoned).has_value());
  const PodSetRequest ps;
  EXPECT_FALSE(view_.node_usable_for(ps, "n-01-0"));
  EXPECT_EQ(view_.why_unusable(ps, "n-01-0"), "is unschedulable (cordoned)");
  EXPECT_EQ(view_.why_unusable(ps, "n-09-9"), "left the cluster");
  EXPECT_TRUE(view_.node_usable_for(ps, "n-01-1"));
}

TEST_F(ClusterViewTest, APodGroupWithSubGroupsKeepsItsPendingPodsDocuments) {
  // As a List item: no kind, no apiVersion.
  const json group{{"metadata", {{"name", "serve"}, {"namespace", "ml"}}},
                   {"spec", {{"minMember", 2}, {"subGroups", {{{"name", "decode"}, {"minMember", 2}}}}}}};
  view_.set_pod_groups({group}, PodGroupKind::kKai);
  ASSERT_TRUE(view_.grouped("ml/serve"));
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(view_
                    .upsert_pod(pod_object("d-" + std::to_string(i), "u-d" + std::to_string(i), "8",
                                           {{"pod-group-name", "serve"}},
                                           {{"kai.scheduler/subgroup-name", "decode"}}))
                    .has_value());
  }
  auto gang = view_.grouped_gang("ml/serve");
  ASSERT_TRUE(gang.has_value());
  EXPECT_EQ((*gang->pod_group)["apiVersion"], "scheduling.run.ai/v2alpha2");
  ASSERT_EQ(gang->pending.size(), 2u);
  EXPECT_EQ((*gang->pending[0])["metadata"]["labels"]["kai.scheduler/subgroup-name"], "decode");
  // Bound, a pod is no longer pending.
  ASSERT_TRUE(view_
                  .upsert_pod(bound(pod_object("d-0", "u-d0", "8", {{"pod-group-name", "serve"}},
                                               {{"kai.scheduler/subgroup-name", "decode"}}),
                                    "n-00-0"))
                  .has_value());
  EXPECT_EQ(view_.grouped_gang("ml/serve")->pending.size(), 1u);
  // A relist holds bound pods only: a pending one deleted while unseen must not linger, so all are
  // forgotten until kube-scheduler's next filter call for each notes it again.
  ASSERT_TRUE(view_.set_pods({}).has_value());
  EXPECT_TRUE(view_.grouped_gang("ml/serve")->pending.empty());
  view_.note_pending(pod_object("d-1", "u-d1", "8", {{"pod-group-name", "serve"}},
                                {{"kai.scheduler/subgroup-name", "decode"}}),
                     "ml/serve");
  EXPECT_EQ(view_.grouped_gang("ml/serve")->pending.size(), 1u);
  view_.remove_pod_group(group, PodGroupKind::kKai);
  EXPECT_FALSE(view_.grouped("ml/serve"));
}

class GangBookTest : public ClusterViewTest {
 protected:
  void SetUp() override {
    ClusterViewTest::SetUp();
    book_ =
        std::make_unique<GangBook>(BookOptions{.plan_ttl = std::chrono::seconds(60), .clock = clock_}, view_);
    ASSERT_TRUE(book_->ensure_index().has_value());
  }

  json gang_pod(int rank) {
    return pod_object("g-" + std::to_string(rank), "u-" + std::to_string(rank), "8",
                      {{"hypertopo.io/gang", "g"},
                       {"hypertopo.io/gang-size", "3"},
                       {"hypertopo.io/network-topology-mode", "hard"},
                       {"hypertopo.io/highest-tier-allowed", "1"},
                       {"batch.kubernetes.io/job-completion-index", std::to_string(rank)}});
  }

  std::shared_ptr<timing::ManualClock> clock_ = std::make_shared<timing::ManualClock>();
  std::unique_ptr<GangBook> book_;
};

TEST_F(GangBookTest, ASlotHoldsAReservationUntilItsPodBindsAndGetsItBackWhenThePodGoes) {
  auto plan = book_->plan_for(gang_pod(0), "ml/g");
  ASSERT_TRUE(plan.has_value()) << plan.error().message();
  ASSERT_EQ((*plan)->slots.size(), 3u);
  const std::string node = (*plan)->slots[1].node;
  EXPECT_EQ(gpus_used(node), 8);  // the reservation

  auto slot = book_->take_slot(**plan, gang_pod(1), {});
  ASSERT_TRUE(slot.has_value());
  EXPECT_EQ((*slot)->node, node);
  EXPECT_EQ((*slot)->state, SlotState::kReserved);

  book_->apply(*view_.upsert_pod(bound(gang_pod(1), node)));
  EXPECT_EQ(book_->find("ml/g")->slots[1].state, SlotState::kBound);
  EXPECT_EQ(gpus_used(node), 8);  // the pod counts now, the reservation is gone
  // Rank 0 binds too: a gang none of whose pods is left would be dropped, not kept waiting.
  ASSERT_TRUE(book_->take_slot(*book_->find("ml/g"), gang_pod(0), {}).has_value());
  book_->apply(*view_.upsert_pod(bound(gang_pod(0), book_->find("ml/g")->slots[0].node)));

  book_->apply(view_.remove_pod(gang_pod(1)));
  EXPECT_EQ(book_->find("ml/g")->slots[1].state, SlotState::kPlanned);
  EXPECT_EQ(book_->find("ml/g")->slots[1].node, node);
  EXPECT_EQ(gpus_used(node), 8);  // the reservation is back, for the pod that replaces it
  EXPECT_EQ(book_->counters().slots_released, 1);

  json again = gang_pod(1);
  again["metadata"]["uid"] = "u-1-again";
  auto retaken = book_->take_slot(*book_->find("ml/g"), again, {});
  ASSERT_TRUE(retaken.has_value());
  EXPECT_EQ((*retaken)->node, node);
}

TEST_F(GangBookTest, AfterARebuildEveryReservationIsOnTheNewIndex) {
  auto plan = book_->plan_for(gang_pod(0), "ml/g");
  ASSERT_TRUE(plan.has_value());
  std::vector<std::string> planned;
  for (const auto& s : (*plan)->slots) planned.push_back(s.node);
  json labelled = node("n-01-3");
  labelled["metadata"]["labels"]["pool"] = "x";
  ASSERT_TRUE(view_.upsert_node(labelled).has_value());
  ASSERT_TRUE(book_->ensure_index().has_value());
  EXPECT_EQ(view_.counters().index_rebuilds, 2);
  for (const auto& n : planned) EXPECT_EQ(gpus_used(n), 8) << n;
}

TEST_F(GangBookTest, AnIdlePlanExpiresAndGivesItsRoomBack) {
  auto plan = book_->plan_for(gang_pod(0), "ml/g");
  ASSERT_TRUE(plan.has_value());
  const std::string node = (*plan)->slots[0].node;
  clock_->sleep_for(std::chrono::seconds(61));
  book_->check_plans();
  EXPECT_EQ(book_->find("ml/g"), nullptr);
  EXPECT_EQ(book_->counters().plans_expired, 1);
  EXPECT_EQ(gpus_used(node), 0);
}

TEST_F(GangBookTest, ACordonedSlotMovesInsideItsLeafOrWaitsThereSayingWhy) {
  auto plan = book_->plan_for(gang_pod(0), "ml/g");
  ASSERT_TRUE(plan.has_value());
  const std::string leaf = (*plan)->job_domain;
  ASSERT_FALSE(leaf.empty());
  const std::string first = (*plan)->slots[0].node;
  json cordoned = node(first);
  cordoned["spec"]["unschedulable"] = true;
  ASSERT_TRUE(view_.upsert_node(cordoned).has_value());
  book_->check_plans();
  const PlanSlot& moved = book_->find("ml/g")->slots[0];
  EXPECT_NE(moved.node, first);
  EXPECT_EQ(cluster_.leaf_of.at(moved.node), leaf);  // the leaf's fourth node
  EXPECT_EQ(book_->counters().swaps, 1);
  // Bind one pod so the gang may not be planned elsewhere, then cordon another planned node: the
  // leaf has no free node left, so the slot waits and says why.
  book_->apply(*view_.upsert_pod(bound(gang_pod(2), book_->find("ml/g")->slots[2].node)));
  const std::string second = book_->find("ml/g")->slots[1].node;
  json cordoned2 = node(second);
  cordoned2["spec"]["unschedulable"] = true;
  ASSERT_TRUE(view_.upsert_node(cordoned2).has_value());
  book_->check_plans();
  const PlanSlot& waiting = book_->find("ml/g")->slots[1];
  EXPECT_EQ(waiting.node, second);
  EXPECT_NE(waiting.waiting.find("waits for room in " + leaf), std::string::npos) << waiting.waiting;
  EXPECT_NE(waiting.waiting.find("is unschedulable (cordoned)"), std::string::npos) << waiting.waiting;
}

TEST_F(GangBookTest, AStateFileWhoseSlotNamesAMissingSubGroupIsSetAsideNamingThePlan) {
  testing::TempDir dir;
  const auto state = dir.path() / "state.json";
  const json pod = gang_pod(0);
  const json doc{
      {"apiVersion", "hypertopo.io/v1alpha1"},
      {"kind", "ExtenderState"},
      {"plans",
       {{{"key", "ml/serve"},
         {"pod", request_source(pod)},
         {"count", 1},
         {"groups",
          {{{"name", "decode"}, {"domain", "leaf-00"}, {"count", 1}, {"pod", request_source(pod)}}}},
         {"slots", {{{"rank", 0}, {"node", "n-00-0"}, {"state", "planned"}, {"group", 3}}}}}}}};
  {
    std::ofstream out(state);
    out << doc.dump();
  }
  GangBook book(BookOptions{.state_file = state, .clock = clock_}, view_);
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(book.load_state().has_value());  // the plans are a cache: start without them
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("plan ml/serve: slot of rank 0 names sub-group 3"), std::string::npos) << err;
  EXPECT_NE(err.find(state.string()), std::string::npos) << err;
  EXPECT_TRUE(book.plans().empty());
  EXPECT_EQ(book.counters().errors, 1);          // counted in hypertopo_extender_errors_total
  EXPECT_FALSE(std::filesystem::exists(state));  // set aside for a look, not lost
  bool kept = false;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    kept = kept || e.path().filename().string().starts_with("state.json.corrupt-");
  EXPECT_TRUE(kept);
  EXPECT_EQ(gpus_used("n-00-0"), 0);  // nothing reserved for a plan that did not read
}

// Events touch what they change (kube-scheduler's cache applies each event to what it names): a
// Node heartbeat checks no slot, a Node event checks the slots on that Node alone, and a pod's slot
// is found by its uid without reading the other plans.
class ServiceEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = testing::make_cluster(1, 4, 4);  // 4 leaves of 4 nodes: n-0L-0..3
    ASSERT_TRUE(service_.set_hypernodes(cluster_.hypernodes).has_value());
    ASSERT_TRUE(service_.set_nodes(cluster_.nodes).has_value());
    ASSERT_TRUE(service_.set_pods({}).has_value());
  }

  // Rank `rank` of gang `gang` (2 pods of 8 GPUs in one leaf).
  static json gang_pod(int gang, int rank) {
    const std::string name = "g" + std::to_string(gang);
    return pod_object(name + "-" + std::to_string(rank), "u-" + name + "-" + std::to_string(rank), "8",
                      {{"hypertopo.io/gang", name},
                       {"hypertopo.io/gang-size", "2"},
                       {"hypertopo.io/network-topology-mode", "hard"},
                       {"hypertopo.io/highest-tier-allowed", "1"},
                       {"batch.kubernetes.io/job-completion-index", std::to_string(rank)}});
  }

  // The node filter admits the pod to (its slot's).
  std::string admitted(const json& pod) {
    auto r = service_.filter(testing::args_by_name(pod, cluster_.node_names));
    EXPECT_TRUE(r.has_value());
    if (!r || (*r)["nodenames"].size() != 1) return {};
    return (*r)["nodenames"][0].get<std::string>();
  }

  json node(const std::string& name) {
    for (const auto& n : cluster_.nodes) {
      if (n["metadata"]["name"] == name) return n;
    }
    return json();
  }

  testing::ExtenderCluster cluster_;
  std::shared_ptr<timing::ManualClock> clock_ = std::make_shared<timing::ManualClock>();
  ExtenderService service_{ExtenderOptions{.plan_ttl = std::chrono::seconds(60), .clock = clock_}};
};

TEST_F(ServiceEventsTest, AHeartbeatChecksNoSlotAndANodeEventChecksOnlyTheSlotsOnThatNode) {
  // Six gangs of two fill three of the four leaves: one slot per node, one leaf free.
  std::map<std::string, int> slots_on;
  for (int g = 0; g < 6; ++g) {
    const std::string node = admitted(gang_pod(g, 0));
    ASSERT_FALSE(node.empty()) << g;
    ++slots_on[node];
  }
  const auto start = service_.counters().book.slots_checked;
  service_.check_plans();  // every slot checked once: what follows counts from here
  const auto before = service_.counters();
  EXPECT_EQ(before.book.slots_checked - start, 12);
  const std::string planned = slots_on.begin()->first;

  json heartbeat = node(planned);
  heartbeat["metadata"]["resourceVersion"] = "1234";
  heartbeat["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-11-27T10:00:00Z";
  ASSERT_TRUE(service_.upsert_node(heartbeat).has_value());
  auto after = service_.counters();
  EXPECT_EQ(after.book.slots_checked, before.book.slots_checked) << "a heartbeat checks nothing";
  EXPECT_EQ(after.view.index_rebuilds, before.view.index_rebuilds);
  EXPECT_EQ(after.view.watch_events, before.view.watch_events + 1);

  // Cordoned: the one slot on it is checked and, its leaf being full and no pod of its gang bound,
  // the gang is planned again in the free leaf; no other slot is looked at.
  json cordoned = node(planned);
  cordoned["spec"]["unschedulable"] = true;
  ASSERT_TRUE(service_.upsert_node(cordoned).has_value());
  after = service_.counters();
  EXPECT_EQ(after.book.slots_checked - before.book.slots_checked, slots_on[planned]);
  EXPECT_EQ(after.book.replans, before.book.replans + 1);
  const json replanned = service_.plans();
  for (const auto& g : replanned["gangs"]) {
    for (const auto& s : g["slots"]) EXPECT_NE(s["node"], planned) << g["key"];
  }

  // Uncordoned, the node holds no slot any more: one lookup, no check.
  service_.check_plans();
  const auto settled = service_.counters();
  ASSERT_TRUE(service_.upsert_node(node(planned)).has_value());
  EXPECT_EQ(service_.counters().book.slots_checked, settled.book.slots_checked);
  EXPECT_EQ(service_.counters().view.watch_events, settled.view.watch_events + 1);
}

TEST_F(ServiceEventsTest, APodsSlotIsFoundByItsUidWithoutReadingOtherPlans) {
  std::vector<std::string> nodes;
  for (int g = 0; g < 8; ++g) nodes.push_back(admitted(gang_pod(g, 0)));
  const auto before = service_.counters();
  // Gang 5's rank 0 binds: its slot is found among its own plan's two slots, not the sixteen.
  ASSERT_TRUE(service_.upsert_pod(testing::bound(gang_pod(5, 0), nodes[5])).has_value());
  const auto after = service_.counters();
  EXPECT_GE(after.book.slots_searched - before.book.slots_searched, 1);
  EXPECT_LE(after.book.slots_searched - before.book.slots_searched, 2);
  bool seen = false;
  const json plans = service_.plans();
  for (const auto& g : plans["gangs"]) {
    for (const auto& s : g["slots"]) {
      if (s["podUID"] == "u-g5-0") {
        seen = true;
        EXPECT_EQ(s["state"], "bound");
        EXPECT_EQ(s["node"], nodes[5]);
      }
    }
  }
  EXPECT_TRUE(seen);
  // A normal pod binding is no gang's: one lookup that finds nothing, no slot read.
  const auto normal_before = service_.counters().book.slots_searched;
  ASSERT_TRUE(service_.upsert_pod(testing::bound(pod_object("web", "u-web", "0"), nodes[0])).has_value());
  EXPECT_EQ(service_.counters().book.slots_searched, normal_before);
  // Deleted, the pod's slot is released for its replacement, found the same way.
  const auto release_before = service_.counters();
  service_.remove_pod(testing::bound(gang_pod(5, 0), nodes[5]));
  EXPECT_EQ(service_.counters().book.slots_released, release_before.book.slots_released + 1);
  EXPECT_LE(service_.counters().book.slots_searched - release_before.book.slots_searched, 2);
}

// A normal pod of 8 GPUs passes the filter on `node` alone.
bool normal_pod_fits(ExtenderService& service, const std::string& node, const std::string& uid) {
  auto r = service.filter(testing::args_by_name(pod_object(uid, uid, "8"), {node}));
  return r.has_value() && (*r)["nodenames"].size() == 1;
}

TEST_F(ServiceEventsTest, ARankThatRunsAgainAfterItSucceededHoldsItsNodeAgain) {
  const std::string node = admitted(gang_pod(0, 0));
  ASSERT_FALSE(node.empty());
  ASSERT_FALSE(admitted(gang_pod(0, 1)).empty());
  ASSERT_TRUE(service_.upsert_pod(testing::bound(gang_pod(0, 0), node)).has_value());
  EXPECT_FALSE(normal_pod_fits(service_, node, "web-0")) << "the bound rank's pod counts";
  json done = testing::bound(gang_pod(0, 0), node);
  done["status"]["phase"] = "Succeeded";
  ASSERT_TRUE(service_.upsert_pod(done).has_value());
  EXPECT_TRUE(normal_pod_fits(service_, node, "web-1")) << "a done slot holds nothing";
  // Rank 0 again (a Job's success policy restarted it): done -> planned -> reserved, on its node.
  json again = gang_pod(0, 0);
  again["metadata"]["uid"] = "u-g0-0-again";
  again["metadata"]["name"] = "g0-0-again";
  EXPECT_EQ(admitted(again), node);
  EXPECT_FALSE(normal_pod_fits(service_, node, "web-2")) << "the slot holds its reservation again";
  bool seen = false;
  const json plans = service_.plans();
  for (const auto& g : plans["gangs"]) {
    for (const auto& s : g["slots"]) {
      if (s["rank"] != 0) continue;
      seen = true;
      EXPECT_EQ(s["state"], "reserved");
      EXPECT_EQ(s["podUID"], "u-g0-0-again");
    }
  }
  EXPECT_TRUE(seen);
  // The pod that went before is no slot's any more: its deletion releases nothing.
  const auto before = service_.counters();
  service_.remove_pod(done);
  EXPECT_EQ(service_.counters().book.slots_released, before.book.slots_released);
}

TEST_F(ServiceEventsTest, PlansReadBackFromTheStateFileFindTheirPodsByUid) {
  testing::TempDir dir;
  const auto state = dir.path() / "state.json";
  std::string node;
  {
    ExtenderService first{
        ExtenderOptions{.plan_ttl = std::chrono::seconds(60), .state_file = state, .clock = clock_}};
    ASSERT_TRUE(first.set_hypernodes(cluster_.hypernodes).has_value());
    ASSERT_TRUE(first.set_nodes(cluster_.nodes).has_value());
    ASSERT_TRUE(first.set_pods({}).has_value());
    auto r = first.filter(testing::args_by_name(gang_pod(3, 0), cluster_.node_names));
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ((*r)["nodenames"].size(), 1u);
    node = (*r)["nodenames"][0].get<std::string>();
    ASSERT_TRUE(first.filter(testing::args_by_name(gang_pod(3, 1), cluster_.node_names)).has_value());
    first.flush_state();
  }
  ExtenderService second{
      ExtenderOptions{.plan_ttl = std::chrono::seconds(60), .state_file = state, .clock = clock_}};
  ASSERT_TRUE(second.set_hypernodes(cluster_.hypernodes).has_value());
  ASSERT_TRUE(second.set_nodes(cluster_.nodes).has_value());
  ASSERT_TRUE(second.load_state().has_value());
  ASSERT_TRUE(second.set_pods({}).has_value());
  EXPECT_FALSE(normal_pod_fits(second, node, "web-0")) << "the reserved slot read back holds its node";
  const auto before = second.counters();
  ASSERT_TRUE(second.upsert_pod(testing::bound(gang_pod(3, 0), node)).has_value());
  const auto after = second.counters();
  EXPECT_EQ(after.book.slots_searched - before.book.slots_searched, 1);
  EXPECT_EQ(second.plans()["gangs"][0]["slots"][0]["state"], "bound");
  second.remove_pod(testing::bound(gang_pod(3, 0), node));
  EXPECT_EQ(second.counters().book.slots_released, after.book.slots_released + 1);
  // Rank 1 still holds its slot: the plan stays, rank 0's slot waits for its replacement.
  EXPECT_EQ(second.plans()["gangs"][0]["slots"][0]["state"], "planned");
  EXPECT_EQ(second.plans()["gangs"][0]["slots"][1]["state"], "reserved");
  EXPECT_FALSE(normal_pod_fits(second, node, "web-1")) << "the released slot holds its node again";
}

TEST_F(ServiceEventsTest, AnIdlePlanExpiresOnALaterCallWithoutAnExplicitCheck) {
  ASSERT_FALSE(admitted(gang_pod(0, 0)).empty());
  clock_->sleep_for(std::chrono::seconds(61));
  ASSERT_FALSE(admitted(gang_pod(1, 0)).empty());  // a verb call runs the expiry that is due
  EXPECT_EQ(service_.counters().book.plans_expired, 1);
  ASSERT_EQ(service_.plans()["gangs"].size(), 1u);
  EXPECT_EQ(service_.plans()["gangs"][0]["key"], "ml/g1");
}

}  // namespace
}  // namespace hypertopo::scheduler
