// tests/scheduler/extender/loopback_extender.h: an extender process's parts in a test, on the loopback API
// server.
//
// The cluster of extender_cluster.h written to the loopback API server as kubectl and the kubelet
// would (the API server ignores status on create, so each Node's status goes through /status), and
// one extender as its binary runs it: the service, its list + watch, its HTTP routes on port 0.
//
//   ASSERT_TRUE(testing::write_cluster(*client, cluster));
//   LoopbackExtender ext(*client, dir.path() / "state.json");
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

#include "k8s/client/kube_client.h"
#include "net/http_server.h"
#include "scheduler/extender/cluster_watcher.h"
#include "scheduler/extender/extender_http.h"
#include "tests/scheduler/extender/extender_cluster.h"

namespace hypertopo::testing {

// Every Node (with its status) and HyperNode of `cluster`; false at the first write that failed.
inline bool write_cluster(k8s::KubeClient& client, const ExtenderCluster& cluster) {
  const k8s::Resource nodes{"", "v1", "nodes", false};
  const k8s::Resource hypernodes{"topology.volcano.sh", "v1alpha1", "hypernodes", false};
  for (const auto& n : cluster.nodes) {
    auto made = client.create(nodes, "", n);
    if (!made) return false;
    nlohmann::json with_status = *made;
    with_status["status"] = n["status"];
    if (!client.update_status(nodes, "", with_status)) return false;
  }
  for (const auto& h : cluster.hypernodes) {
    if (!client.create(hypernodes, "", h)) return false;
  }
  return true;
}

struct LoopbackExtender {
  scheduler::ExtenderService service;
  scheduler::ClusterWatcher watcher;
  net::HttpServer server;
  LoopbackExtender(k8s::KubeClient& client, std::filesystem::path state)
      : service(scheduler::ExtenderOptions{.state_file = std::move(state)}),
        watcher(client, service, std::chrono::milliseconds(5)),
        server(net::HttpServerOptions{.address = "127.0.0.1", .port = 0}) {
    scheduler::register_extender_routes(server, service, "/scheduler");
  }
};

}  // namespace hypertopo::testing
