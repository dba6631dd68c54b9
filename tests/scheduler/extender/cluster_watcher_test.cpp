// The extender's cluster view fed by list + watch. No real API server here: the in-tree loopback
// API server (tests/support/apiserver) holds the Nodes, HyperNodes and Pods.
#include "scheduler/extender/cluster_watcher.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <thread>

#include "tests/scheduler/extender/extender_cluster.h"
#include "tests/support/apiserver/loopback_apiserver.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

const k8s::Resource kNodes{"", "v1", "nodes", false};
const k8s::Resource kPods{"", "v1", "pods", true};
const k8s::Resource kHyperNodes{"topology.volcano.sh", "v1alpha1", "hypernodes", false};

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
    for (const auto& n : cluster_.nodes) {
      // Like a real API server, the loopback one ignores status on create: the kubelet's part.
      auto made = client_->create(kNodes, "", n);
      ASSERT_TRUE(made.has_value());
      json with_status = *made;
      with_status["status"] = n["status"];
      ASSERT_TRUE(client_->update_status(kNodes, "", with_status).has_value());
    }
    for (const auto& h : cluster_.hypernodes) ASSERT_TRUE(client_->create(kHyperNodes, "", h).has_value());
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
  ASSERT_TRUE(eventually([&] { return service_.counters().swaps > 0; }));
  const json after = service_.plans();
  std::set<std::string> leaves;
  for (const auto& s : after["gangs"][0]["slots"]) {
    EXPECT_NE(s["node"], victim);
    leaves.insert(cluster_.leaf_of[s["node"].get<std::string>()]);
  }
  EXPECT_EQ(leaves, std::set<std::string>{cluster_.leaf_of[first]});
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

}  // namespace
}  // namespace hypertopo::scheduler
