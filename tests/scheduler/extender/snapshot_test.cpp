// A normal pod's verbs read the view's snapshot (cluster_view.h ViewSnapshot) with no lock held:
// watch events applied while a filter over 6,000 nodes runs do not wait for it, and the next verb
// reads the generation they made. The filter is held at the point where it took its snapshot (the
// service's snapshot_taken hook), so an event that waited on it would wait for the hook's release,
// which only comes after the event returned.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <expected>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "scheduler/extender/extender_service.h"
#include "tests/scheduler/extender/extender_cluster.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
using testing::bound;
using testing::pod_object;

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

bool keeps(const json& reply, const std::string& node) {
  const auto& kept = reply["nodenames"];
  return std::find(kept.begin(), kept.end(), json(node)) != kept.end();
}

TEST(ExtenderSnapshotTest, AWatchEventDuringAFilterOf6000NodesDoesNotWaitForItAndTheNextVerbSeesIt) {
  // 10 spines of 25 leaves of 24 eight-GPU nodes: 6,000 nodes.
  const auto cluster = testing::make_cluster(10, 25, 24);
  ASSERT_EQ(cluster.nodes.size(), 6000u);

  // The hook holds the first filter it is armed for until the test releases it (30 s at most).
  std::atomic<bool> armed{false};
  std::atomic<std::uint64_t> held_generation{0}, last_generation{0};
  std::promise<void> holding;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> hook_timed_out{false};
  ExtenderOptions options;
  options.snapshot_taken = [&](const ViewSnapshot& snap) {
    last_generation = snap.generation;
    if (!armed.exchange(false)) return;
    held_generation = snap.generation;
    holding.set_value();
    if (released.wait_for(std::chrono::seconds(30)) != std::future_status::ready) hook_timed_out = true;
  };
  ExtenderService service(std::move(options));
  ASSERT_TRUE(service.set_hypernodes(cluster.hypernodes).has_value());
  ASSERT_TRUE(service.set_nodes(cluster.nodes).has_value());

  // A normal pod that needs a whole node: every node fits it before the event.
  const json pod = pod_object("web", "web-uid", "8");
  const json args = testing::args_by_name(pod, cluster.node_names);
  const std::string target = cluster.node_names[4321];
  auto warm = service.filter(args);  // builds the index and publishes the first snapshot
  ASSERT_TRUE(warm.has_value());
  ASSERT_TRUE(keeps(*warm, target));

  armed = true;
  std::chrono::steady_clock::time_point filter_start, filter_end;
  std::expected<json, Error> held_reply = json();
  std::thread filter([&] {
    filter_start = std::chrono::steady_clock::now();
    held_reply = service.filter(args);
    filter_end = std::chrono::steady_clock::now();
  });
  ASSERT_EQ(holding.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);

  // The filter holds its snapshot. A pod binds to `target` and fills it: the event applies and a
  // snapshot of the new generation is published while the filter still runs.
  const auto t0 = std::chrono::steady_clock::now();
  const bool applied = service.upsert_pod(bound(pod_object("filler", "filler-uid", "8"), target)).has_value();
  auto fresh = service.snapshot();
  const auto t1 = std::chrono::steady_clock::now();
  const double event_ms = ms_between(t0, t1);
  // The filter goes on holding its old snapshot a while longer before it is let go.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  release.set_value();
  filter.join();

  EXPECT_FALSE(hook_timed_out) << "the filter was held 30 s: the event waited for it";
  ASSERT_TRUE(applied);
  ASSERT_TRUE(fresh.has_value());
  EXPECT_GT((*fresh)->generation, held_generation.load());
  EXPECT_EQ((*fresh)->generation, service.generation());
  const double filter_ms = ms_between(filter_start, filter_end);
  // The event took its own time, not the filter's: the filter ran at least 500 ms past the event.
  EXPECT_LT(event_ms * 4, filter_ms) << "event " << event_ms << " ms, filter " << filter_ms << " ms";
  // The held filter answered on the generation it took: the target still had room there.
  ASSERT_TRUE(held_reply.has_value());
  EXPECT_TRUE(keeps(*held_reply, target));

  // The next filter takes the new generation: the target is full.
  auto next = service.filter(args);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(last_generation.load(), (*fresh)->generation);
  EXPECT_FALSE(keeps(*next, target));
  EXPECT_EQ((*next)["failedNodes"][target], "pod does not fit (resources, taints, selector or node state)");
  EXPECT_EQ((*next)["nodenames"].size(), cluster.node_names.size() - 1);
}

// A snapshot is published only when the generation moved, and shares the index's tree with the
// view: a verb after no change reads the very same snapshot.
TEST(ExtenderSnapshotTest, ASnapshotIsPublishedOnlyWhenTheGenerationMoved) {
  const auto cluster = testing::make_cluster(1, 2, 4);
  ExtenderService service(ExtenderOptions{});
  ASSERT_TRUE(service.set_hypernodes(cluster.hypernodes).has_value());
  ASSERT_TRUE(service.set_nodes(cluster.nodes).has_value());
  auto first = service.snapshot();
  ASSERT_TRUE(first.has_value());
  auto again = service.snapshot();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(first->get(), again->get());
  ASSERT_TRUE(service.upsert_pod(bound(pod_object("p", "p-uid", "2"), "n-00-1")).has_value());
  auto after = service.snapshot();
  ASSERT_TRUE(after.has_value());
  EXPECT_NE(first->get(), after->get());
  EXPECT_GT((*after)->generation, (*first)->generation);
  // The old snapshot is unchanged; the new one holds the pod's GPUs.
  const int node = (*after)->index.find_node("n-00-1");
  const int gpu = (*after)->index.resource_id("nvidia.com/gpu");
  ASSERT_GE(node, 0);
  ASSERT_GE(gpu, 0);
  EXPECT_EQ((*first)->index.node_used(node, gpu), 0);
  EXPECT_EQ((*after)->index.node_used(node, gpu), 2);
  EXPECT_EQ(&(*first)->index.node(node), &(*after)->index.node(node));  // the tree is shared
}

}  // namespace
}  // namespace hypertopo::scheduler
