// The extender's cluster view fed by list + watch. No real API server here: the in-tree loopback
// API server (tests/support/apiserver) holds the Nodes, HyperNodes and Pods.
#include "scheduler/extender/cluster_watcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "tests/scheduler/extender/extender_answers.h"
#include "tests/scheduler/extender/extender_cluster.h"
#include "tests/scheduler/extender/loopback_extender.h"
#include "tests/support/apiserver/loopback_apiserver.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

const k8s::Resource kNodes{"", "v1", "nodes", false};
const k8s::Resource kPods{"", "v1", "pods", true};
const k8s::Resource kHyperNodesResource{"topology.volcano.sh", "v1alpha1", "hypernodes", false};

// Polls a condition the watch threads make true; fails after a generous deadline.
bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::yield();
  }
  return condition();
}

class ExtenderWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start().has_value());
    k8s::ClusterConfig config;
    config.server = server_.url();
    k8s::ClientOptions options;
    options.qps = 0;
    options.retry.base = std::chrono::milliseconds(1);
    options.retry.cap = std::chrono::milliseconds(4);
    auto c = k8s::KubeClient::create(config, options);
    ASSERT_TRUE(c.has_value());
    client_ = std::move(*c);
    ASSERT_TRUE(testing::write_cluster(*client_, cluster_));
  }

  std::string admitted(const json& pod) {
    auto r = service_.filter({{"pod", pod}, {"nodenames", cluster_.node_names}});
    if (!r || (*r)["nodenames"].size() != 1) {
      ADD_FAILURE() << (r ? r->dump().substr(0, 400) : r.error().message());
      return {};
    }
    return (*r)["nodenames"][0].get<std::string>();
  }

  testing::LoopbackApiServer server_;
  std::unique_ptr<k8s::KubeClient> client_;
  testing::ExtenderCluster cluster_ = testing::make_cluster();
  ExtenderService service_{ExtenderOptions{}};
};

std::map<std::string, std::string> gang(int size) {
  return {{"hypertopo.io/gang", "w"},
          {"hypertopo.io/gang-size", std::to_string(size)},
          {"hypertopo.io/network-topology-mode", "hard"},
          {"hypertopo.io/highest-tier-allowed", "1"}};
}

TEST_F(ExtenderWatchTest, NodeDeletedMidGangIsSwappedInsideItsLeaf) {
  ClusterWatcher watcher(*client_, service_, std::chrono::milliseconds(5));
  watcher.start();
  ASSERT_TRUE(watcher.wait_synced(std::chrono::seconds(20)));
  ASSERT_EQ(service_.node_count(), cluster_.nodes.size());
  const std::string first = admitted(testing::pod_object("w-0", "w-0", "4", gang(8)));
  ASSERT_FALSE(first.empty());
  const json before = service_.plans();
  std::string victim;
  for (const auto& s : before["gangs"][0]["slots"]) {
    if (s["node"] != first) victim = s["node"];
  }
  ASSERT_FALSE(victim.empty());
  ASSERT_TRUE(client_->delete_object(kNodes, "", victim).has_value());
  ASSERT_TRUE(eventually([&] { return service_.counters().book.swaps > 0; }));
  const json after = service_.plans();
  std::set<std::string> leaves;
  for (const auto& s : after["gangs"][0]["slots"]) {
    EXPECT_NE(s["node"], victim);
    leaves.insert(cluster_.leaf_of[s["node"].get<std::string>()]);
  }
  EXPECT_EQ(leaves, std::set<std::string>{cluster_.leaf_of[first]});
}

// An object the view cannot read is not dropped silently: the watch logs it once, naming its kind
// and name, counts it by kind (hypertopo_extender_watch_errors_total), and goes on.
TEST_F(ExtenderWatchTest, AMalformedNodeFromTheWatchIsLoggedOnceByNameAndCounted) {
  std::mutex log_mu;
  std::vector<std::string> lines;
  ExtenderService service(ExtenderOptions{.log = [&](telemetry::LogLevel, const std::string& line) {
    std::lock_guard lock(log_mu);
    lines.push_back(line);
  }});
  ClusterWatcher watcher(*client_, service, std::chrono::milliseconds(5));
  watcher.start();
  ASSERT_TRUE(watcher.wait_synced(std::chrono::seconds(20)));
  auto logged = [&] {
    std::lock_guard lock(log_mu);
    return lines;
  };
  ASSERT_TRUE(logged().empty());

  json bad = testing::node_object("bad-node", 8);
  auto made = client_->create(kNodes, "", bad);
  ASSERT_TRUE(made.has_value());
  json with_status = *made;
  with_status["status"] = bad["status"];
  with_status["status"]["allocatable"]["nvidia.com/gpu"] = "many";
  ASSERT_TRUE(client_->update_status(kNodes, "", with_status).has_value());
  ASSERT_TRUE(eventually([&] { return !logged().empty(); }));
  const auto counted = service.counters().watch_errors;
  ASSERT_EQ(counted.size(), 1u);
  EXPECT_EQ(counted.begin()->first, "nodes");
  EXPECT_EQ(counted.begin()->second, 1);
  const auto seen = logged();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("Node bad-node from the watch not applied"), std::string::npos) << seen[0];
  EXPECT_NE(seen[0].find("many"), std::string::npos) << seen[0];
  const std::string metrics = extender_metrics_text(service.counters(), service.node_count());
  EXPECT_NE(metrics.find("hypertopo_extender_watch_errors_total{kind=\"nodes\"} 1"), std::string::npos)
      << metrics;
  // The watch goes on: a good Node after it is in the view.
  ASSERT_TRUE(client_->create(kNodes, "", testing::node_object("good-node", 8)).has_value());
  ASSERT_TRUE(eventually([&] { return service.node_count() == cluster_.nodes.size() + 2; }));
}

TEST_F(ExtenderWatchTest, BoundPodsUseCapacityUntilDeleted) {
  ClusterWatcher watcher(*client_, service_, std::chrono::milliseconds(5));
  watcher.start();
  ASSERT_TRUE(watcher.wait_synced(std::chrono::seconds(20)));
  // Fill n-00-0 with a bound 8-GPU pod: a 1-GPU pod may no longer go there.
  auto busy = testing::bound(testing::pod_object("busy", "busy", "8"), "n-00-0");
  busy["metadata"].erase("uid");
  auto made = client_->create(kPods, "ml", busy);
  ASSERT_TRUE(made.has_value());
  json with_status = *made;
  with_status["status"] = busy["status"];
  ASSERT_TRUE(client_->update_status(kPods, "ml", with_status).has_value());
  auto one = testing::pod_object("one", "one", "1");
  ASSERT_TRUE(eventually([&] {
    auto r = service_.filter({{"pod", one}, {"nodenames", json::array({"n-00-0"})}});
    return r && (*r)["nodenames"].empty();
  }));
  server_.store().compact();
  ASSERT_TRUE(client_->delete_object(kPods, "ml", "busy").has_value());
  ASSERT_TRUE(eventually([&] {
    auto r = service_.filter({{"pod", one}, {"nodenames", json::array({"n-00-0"})}});
    return r && (*r)["nodenames"].size() == 1;
  }));
}

// Lists served a few objects a page and read as page texts give the view the objects give: the same
// answers as a service fed the same objects through the JSON-object path.
TEST_F(ExtenderWatchTest, PagedListsGiveTheViewTheObjectsGive) {
  for (const auto& [name, node, gpus] : {std::tuple{"full", "n-00-0", "8"},
                                         {"half", "n-01-1", "4"},
                                         {"three", "n-12-5", "3"},
                                         {"pending", "", "8"}}) {
    json pod = testing::pod_object(name, "", gpus);
    pod["metadata"].erase("uid");
    if (*node) pod = testing::bound(pod, node);
    auto made = client_->create(kPods, "ml", pod);
    ASSERT_TRUE(made.has_value());
    json with_status = *made;
    with_status["status"] = pod["status"];
    ASSERT_TRUE(client_->update_status(kPods, "ml", with_status).has_value());
  }
  server_.reset_counts();
  ClusterWatcher watcher(*client_, service_, std::chrono::milliseconds(5), /*list_page_size=*/3);
  watcher.start();
  ASSERT_TRUE(watcher.wait_synced(std::chrono::seconds(20)));
  // 64 Nodes, 10 HyperNodes and 4 Pods, three a page (PodGroups: no CRD here, one request).
  EXPECT_GE(server_.count("list"), 22 + 4 + 2);
  ASSERT_EQ(service_.node_count(), cluster_.nodes.size());

  ExtenderService objects{ExtenderOptions{}};
  auto nodes = client_->list(kNodes, "");
  auto hypernodes = client_->list(kHyperNodesResource, "");
  auto pods = client_->list(kPods, "");
  ASSERT_TRUE(nodes && hypernodes && pods);
  ASSERT_TRUE(objects.set_nodes(nodes->items).has_value());
  ASSERT_TRUE(objects.set_hypernodes(hypernodes->items).has_value());
  ASSERT_TRUE(objects.set_pods(pods->items).has_value());
  const std::string want = testing::extender_answers(objects, cluster_.node_names);
  EXPECT_EQ(testing::extender_answers(service_, cluster_.node_names), want);
  ExtenderService no_pods{ExtenderOptions{}};
  ASSERT_TRUE(no_pods.set_nodes(nodes->items).has_value());
  ASSERT_TRUE(no_pods.set_hypernodes(hypernodes->items).has_value());
  EXPECT_NE(testing::extender_answers(no_pods, cluster_.node_names), want);  // the pods count
}

// A relist (410 Gone) whose list holds a malformed Node is refused as a whole, naming the Node, and
// the view keeps what it had: nothing is lost to bad input.
TEST_F(ExtenderWatchTest, ARelistWithAMalformedNodeKeepsTheView) {
  server_.drop_watches_after(1);  // a watch stream is cut when its second event is due
  ClusterWatcher watcher(*client_, service_, std::chrono::milliseconds(5), /*list_page_size=*/7);
  watcher.start();
  ASSERT_TRUE(watcher.wait_synced(std::chrono::seconds(20)));
  // The Node arrives without status (the API server ignores it on create): a Node with no capacity.
  json bad = testing::node_object("n-bad", 8);
  ASSERT_TRUE(client_->create(kNodes, "", bad).has_value());
  ASSERT_TRUE(eventually([&] { return service_.node_count() == cluster_.nodes.size() + 1; }));
  const std::string before = testing::extender_answers(service_, cluster_.node_names);
  const int watches = server_.count("watch");
  // A write no watch here sees moves the store past the Node's version, then history is compacted.
  ASSERT_TRUE(
      client_->create(k8s::kConfigMapsResource, "ml", {{"metadata", {{"name", "unrelated"}}}}).has_value());
  server_.store().compact();
  // Its status update is due as the stream's second event: the stream is cut, the watch resumes from
  // a compacted version (410) and the Nodes are listed again, the malformed one among them.
  auto fetched = client_->get(kNodes, "", "n-bad");
  ASSERT_TRUE(fetched.has_value());
  json with_status = *fetched;
  with_status["status"] = bad["status"];
  with_status["status"]["allocatable"]["nvidia.com/gpu"] = "eight";
  ASSERT_TRUE(client_->update_status(kNodes, "", with_status).has_value());
  ASSERT_TRUE(eventually([&] { return watcher.relists() >= 1 && server_.count("watch") >= watches + 2; }))
      << watcher.relists() << " relists, " << server_.count("watch") - watches << " watches";
  EXPECT_EQ(service_.node_count(), cluster_.nodes.size() + 1);
  EXPECT_EQ(testing::extender_answers(service_, cluster_.node_names), before);

  auto listed = client_->list_pages(kNodes, "", {.page_size = 7});
  ASSERT_TRUE(listed.has_value());
  auto refused = service_.set_node_pages(listed->pages);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message().find("node n-bad status.allocatable"), std::string::npos)
      << refused.error().message();
  EXPECT_EQ(service_.node_count(), cluster_.nodes.size() + 1);
}

// A Node list whose body is not valid UTF-8 is refused as the API client has always refused it, and
// listed again: the extender syncs once the server answers well.
TEST(ExtenderWatchPages, AListBodyWithInvalidUtf8IsRefusedAndListedAgain) {
  testing::LoopbackApiServer server;
  testing::ExtenderCluster cluster = testing::make_cluster();
  std::atomic<int> refused{0};
  json list{{"apiVersion", "v1"},
            {"kind", "NodeList"},
            {"metadata", {{"resourceVersion", "1"}}},
            {"items", cluster.nodes}};
  std::string bad_body = list.dump();
  bad_body.replace(bad_body.find("\"n-00-3\""), 8, "\"n-00-\xc3\x28\"");
  server.set_raw_handler([&](const testing::RawHttpRequest& r) -> std::optional<testing::RawHttpResponse> {
    if (r.method != "GET" || !r.target.starts_with("/api/v1/nodes?") ||
        r.target.find("watch=") != std::string::npos)
      return std::nullopt;
    if (refused.fetch_add(1) >= 2) return std::nullopt;
    return testing::RawHttpResponse{.body = bad_body};
  });
  ASSERT_TRUE(server.start().has_value());
  k8s::ClusterConfig config;
  config.server = server.url();
  auto client = k8s::KubeClient::create(config, {.qps = 0});
  ASSERT_TRUE(client.has_value());
  for (const auto& n : cluster.nodes) {
    auto made = (*client)->create(kNodes, "", n);
    ASSERT_TRUE(made.has_value());
    json with_status = *made;
    with_status["status"] = n["status"];
    ASSERT_TRUE((*client)->update_status(kNodes, "", with_status).has_value());
  }
  for (const auto& h : cluster.hypernodes)
    ASSERT_TRUE((*client)->create(kHyperNodesResource, "", h).has_value());
  ExtenderService service{ExtenderOptions{}};
  ClusterWatcher watcher(**client, service, std::chrono::milliseconds(5));
  watcher.start();
  ASSERT_TRUE(watcher.wait_synced(std::chrono::seconds(20)));
  EXPECT_GE(refused.load(), 3);  // two refused, then the good one
  EXPECT_EQ(service.node_count(), cluster.nodes.size());
  auto r = service.filter(
      {{"pod", testing::pod_object("one", "one", "1")}, {"nodenames", json::array({"n-00-3"})}});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ((*r)["nodenames"], json::array({"n-00-3"}));
}

}  // namespace
}  // namespace hypertopo::scheduler
