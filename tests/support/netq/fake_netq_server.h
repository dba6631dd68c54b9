// tests/support/netq/fake_netq_server.h: an NVIDIA NetQ REST stand-in for tests.
//
// Test code only; there is no NetQ server here, so the tests talk to this one over real HTTPS (the
// loopback API server's raw-handler hook). It answers what NVIDIA topograph's netq provider asks
// (pkg/providers/netq/netq.go getNetworkTree, getPremisesTopology; nmx.go getNvlDomains):
//   POST /api/netq/auth/v1/login {"username", "password"} -> {access_token, premises: [{opid,
//        name, config_key_viewed}]}, 401 on other credentials;
//   GET  /api/netq/auth/v1/select/opid/{opid} (Bearer login token) -> {access_token} for that premises;
//   POST /api/netq/telemetry/v1/object/topologygraph/fetch-topology?timestamp=0 (Bearer premises
//        token) -> the premises' topology graph, as saved;
//   GET  /nmx/v1/compute-nodes (Basic username:password) -> the compute nodes, as saved.
// Scripted answers (5xx, delays, oversized bodies) jump the queue in order. Every request's target
// and Authorization header are kept.
//
//   FakeNetqServer netq;
//   netq.set_credentials("admin", "pw");
//   netq.add_premises(7, graph_json);
//   netq.set_compute_nodes(nodes_json);
//   ASSERT_TRUE(netq.start().has_value());
#pragma once

#include <expected>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "errors/error.h"
#include "tests/support/apiserver/loopback_apiserver.h"

namespace hypertopo::testing {

class FakeNetqServer {
 public:
  explicit FakeNetqServer(bool tls = true);
  std::expected<void, Error> start();

  void set_credentials(const std::string& user, const std::string& password);
  // A premises whose configuration key was viewed (topograph asks only those), with its graph.
  void add_premises(int opid, std::string topology_graph, bool config_key_viewed = true);
  void set_compute_nodes(std::string body);  // "" : 404
  void script(RawHttpResponse response);

  std::string url() const { return server_.url(); }
  const std::string& ca_pem() const { return server_.certificate().cert_pem; }
  std::vector<std::string> targets() const;
  std::vector<std::string> authorizations() const;

 private:
  std::optional<RawHttpResponse> handle(const RawHttpRequest& request);

  LoopbackApiServer server_;
  mutable std::mutex mutex_;
  std::string user_;
  std::string password_;
  std::map<int, std::pair<std::string, bool>> premises_;
  std::string compute_nodes_;
  std::vector<RawHttpResponse> scripted_;
  std::vector<std::string> targets_;
  std::vector<std::string> authorizations_;
};

}  // namespace hypertopo::testing
