// tests/agent/reconciler/reconciler_harness.h: a loopback API server, a client on a ManualClock, small trees.
//
// No real API server exists here; the in-tree loopback server keeps its semantics (resourceVersion,
// 409s, AlreadyExists, selectors, pagination, /status) and injects the faults.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "agent/reconciler/hypernode_reconciler.h"
#include "k8s/client/kube_client.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "topology/tree.h"

namespace hypertopo::agent {

inline constexpr const char* kHyperNodeCollection = "topology.volcano.sh/v1alpha1/hypernodes";

// A two-tier tree: `leaves` leaves "leaf-<i>" of `hosts` nodes "host-<i>-<j>" under "spine-0".
inline topology::Tree small_tree(int leaves, int hosts) {
  topology::Tree tree;
  auto spine = tree.add_domain("spine-0", 2, "spine");
  for (int i = 0; i < leaves; ++i) {
    auto leaf = tree.add_domain("leaf-" + std::to_string(i), 1, "leaf");
    for (int j = 0; j < hosts; ++j)
      tree.domain(leaf).nodes.push_back("host-" + std::to_string(i) + "-" + std::to_string(j));
    tree.attach(spine, leaf);
  }
  return tree;
}

class ReconcilerHarness : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::LoopbackApiServer>();
    auto started = server_->start();
    ASSERT_TRUE(started) << started.error().message();
    clock_ = std::make_shared<timing::ManualClock>();
    k8s::ClusterConfig config;
    config.server = server_->url();
    k8s::ClientOptions options;
    options.qps = 0;
    options.clock = clock_;
    options.request_timeout = std::chrono::milliseconds(5000);
    options.observer = [this](const k8s::RequestRecord& r) {
      if (on_request_) on_request_(r);
    };
    auto client = k8s::KubeClient::create(config, options);
    ASSERT_TRUE(client) << client.error().message();
    client_ = std::move(*client);
  }

  HyperNodeReconciler reconciler(ReconcileOptions options = {}) {
    options.clock = clock_;
    return HyperNodeReconciler(*client_, options);
  }

  std::optional<nlohmann::json> stored(const std::string& name) {
    return server_->store().object(kHyperNodeCollection, "", name);
  }

  std::unique_ptr<testing::LoopbackApiServer> server_;
  std::shared_ptr<timing::ManualClock> clock_;
  std::unique_ptr<k8s::KubeClient> client_;
  std::function<void(const k8s::RequestRecord&)> on_request_;
};

}  // namespace hypertopo::agent
