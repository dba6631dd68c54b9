// tests/scheduler/extender/live_cluster_fixture.h: a live cluster for extender tests, on the path users take.
//
// The loopback API server with 2 spines x 8 leaves x 8 nodes of 8 GPUs (128 GPU Nodes under 16
// leaves; a test may start another cluster), one extender as its binary runs it (list + watch, HTTP
// routes) and the kube-scheduler stand-in calling it. Helpers create pods as their controllers do,
// bind pods that are not ours, delete pods and edit Nodes, each waiting until the extender's watch
// has seen the change.
//
//   class MyTest : public testing::LiveClusterTest {};
//   TEST_F(MyTest, X) { create(job_pod("ra", 0, "8", hard_gang("ra", 1))); ASSERT_EQ(schedule(), 1); }
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "scheduler/extender/cluster_watcher.h"
#include "scheduler/extender/extender_http.h"
#include "tests/scheduler/extender/extender_cluster.h"
#include "tests/scheduler/extender/kube_scheduler_standin.h"
#include "tests/scheduler/extender/loopback_extender.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/eventually.h"
#include "tests/support/fixtures.h"

namespace hypertopo::testing {

using nlohmann::json;

inline const k8s::Resource kLiveNodes{"", "v1", "nodes", false};
inline const k8s::Resource kLivePods{"", "v1", "pods", true};
inline const k8s::Resource kLivePodGroups{"scheduling.x-k8s.io", "v1alpha1", "podgroups", true};

using Extender = LoopbackExtender;

class LiveClusterTest : public ::testing::Test {
 protected:
  // 2 spines x 8 leaves x 8 nodes of 8 GPUs: 128 GPU Nodes under 16 leaves.
  void SetUp() override { start_cluster(make_cluster(2, 8, 8)); }

  void start_cluster(ExtenderCluster cluster) {
    cluster_ = std::move(cluster);
    ASSERT_TRUE(api_.start().has_value());
    k8s::ClusterConfig config;
    config.server = api_.url();
    k8s::ClientOptions options;
    options.qps = 0;
    auto c = k8s::KubeClient::create(config, options);
    ASSERT_TRUE(c.has_value());
    client_ = std::move(*c);
    ASSERT_TRUE(write_cluster(*client_, cluster_));
    start_extender("state.json");
  }

  void start_extender(const std::string& state) {
    scheduler_.reset();
    http_.reset();
    ext_.reset();
    ext_ = std::make_unique<Extender>(*client_, dir_.path() / state);
    ASSERT_TRUE(ext_->service.load_state().has_value());
    ext_->watcher.start();
    ASSERT_TRUE(ext_->watcher.wait_synced(std::chrono::seconds(20)));
    ASSERT_TRUE(ext_->server.start().has_value());
    auto t = net::HttpTransport::create({.host = "127.0.0.1", .port = std::to_string(ext_->server.port())});
    ASSERT_TRUE(t.has_value());
    http_ = std::move(*t);
    scheduler_ = std::make_unique<KubeSchedulerStandIn>(*client_, *http_, "/scheduler", "ml");
    // kube-scheduler's next cycle finds the binding in its cache; the extender learns it from its
    // watch. Wait for the watch so that each cycle sees the one before it.
    scheduler_->after_bind = [this](const std::string& pod, const std::string&) {
      EXPECT_TRUE(eventually([&] { return pod_seen_bound(pod); })) << pod;
    };
  }

  bool pod_seen_bound(const std::string& pod) {
    auto p = client_->get(kLivePods, "ml", pod);
    if (!p) return false;
    const std::string uid = (*p)["metadata"]["uid"];
    const json plans_now = ext_->service.plans();
    for (const auto& g : plans_now["gangs"]) {
      for (const auto& s : g["slots"]) {
        if (s["podUID"] == uid) return s["state"] == "bound";
      }
    }
    return ext_->service.counters().view.index_pod_updates > 0;  // a normal pod: counted in place
  }

  // A pod as its controller creates it: no uid (the API server gives one), a completion index.
  json job_pod(const std::string& job, int index, const std::string& gpus,
               const std::map<std::string, std::string>& annotations, json spec_extra = json::object()) {
    auto a = annotations;
    a["batch.kubernetes.io/job-completion-index"] = std::to_string(index);
    json pod = pod_object(job + "-" + std::to_string(index), "", gpus, a);
    pod["metadata"].erase("uid");
    for (const auto& [k, v] : spec_extra.items()) pod["spec"][k] = v;
    pod.erase("status");
    return pod;
  }

  std::string create(const json& pod) {
    auto made = client_->create(kLivePods, "ml", pod);
    EXPECT_TRUE(made.has_value());
    return made ? (*made)["metadata"]["uid"].get<std::string>() : std::string();
  }

  std::string node_of(const std::string& pod) {
    auto p = client_->get(kLivePods, "ml", pod);
    if (!p) return {};
    return (*p)["spec"].value("nodeName", std::string());
  }

  // Runs `change` on the API server and waits until the extender's watch has applied it.
  template <typename F>
  void seen(F change) {
    const auto before = ext_->service.counters().view.watch_events;
    change();
    ASSERT_TRUE(eventually([&] { return ext_->service.counters().view.watch_events > before; }));
  }

  // A pod that is not ours, bound straight to a node (it takes `gpus` of the node's eight).
  void occupy(const std::string& node, const std::string& name, const std::string& gpus = "8") {
    json pod = pod_object(name, "", gpus);
    pod["metadata"].erase("uid");
    pod.erase("status");
    pod["spec"]["nodeName"] = node;
    seen([&] { ASSERT_TRUE(client_->create(kLivePods, "ml", pod).has_value()); });
  }

  void delete_pod(const std::string& name) {
    seen([&] { ASSERT_TRUE(client_->delete_object(kLivePods, "ml", name).has_value()); });
  }

  void update_node(const std::string& node, const std::function<void(json&)>& edit) {
    seen([&] {
      auto r = client_->update_with_retry(kLiveNodes, "", node, [&](json& n) {
        edit(n);
        return true;
      });
      ASSERT_TRUE(r.has_value());
    });
  }

  void set_unschedulable(const std::string& node, bool value) {
    update_node(node, [&](json& n) { n["spec"]["unschedulable"] = value; });
  }

  json gang_plan(const std::string& key) {
    const json plans_now = ext_->service.plans();
    for (const auto& g : plans_now["gangs"]) {
      if (g["key"] == key) return g;
    }
    return json();
  }

  int schedule(int cycles = 1) {
    int bound = 0;
    for (int i = 0; i < cycles; ++i) bound += scheduler_->cycle();
    return bound;
  }

  static std::map<std::string, std::string> hard_gang(const std::string& name, int size) {
    return {{"scheduling.k8s.io/group-name", name},
            {"hypertopo.io/gang-size", std::to_string(size)},
            {"hypertopo.io/network-topology-mode", "hard"},
            {"hypertopo.io/highest-tier-allowed", "1"}};
  }

  TempDir dir_;
  LoopbackApiServer api_;
  std::unique_ptr<k8s::KubeClient> client_;
  ExtenderCluster cluster_;
  std::unique_ptr<Extender> ext_;
  std::unique_ptr<net::HttpTransport> http_;
  std::unique_ptr<KubeSchedulerStandIn> scheduler_;
};

}  // namespace hypertopo::testing
