// tests/support/volcano/volcano_hypernode_status.h: a stand-in of Volcano's HyperNode status loop.
//
// Test code only. Volcano's hyperNode-controller is not here, and it writes the same field we do,
// so tests run this copy of it beside the agent to show that neither side ever finds something to
// change. It copies volcano-sh/volcano pkg/controllers/hypernode/hypernode_handler.go:
//   - addHyperNode / updateHyperNode (the HyperNode informer's handlers) enqueue the object, and
//     syncHyperNodeStatus runs for it;
//   - syncHyperNodeStatus computes actualNodeCnt and, only when status.nodeCount differs, sends
//     UpdateStatus with the copy it read (a stale copy gets 409 Conflict and the item is requeued);
//   - actualNodeCnt collects distinct names: each member's exactMatch name whatever the member type
//     (a spine with 3 HyperNode members counts 3, however many hosts sit below), every Node whose
//     name a regexMatch pattern matches (Go's regexp MatchString: RE2 syntax, unanchored), and every
//     Node a labelMatch LabelSelector selects.
//
//   VolcanoHyperNodeStatusLoop volcano(*client);      // a client of its own, like a second process
//   volcano.start();
//   ...                                               // the agent runs
//   EXPECT_EQ(volcano.writes(), 0);
//   volcano.stop();
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "k8s/client/kube_client.h"

namespace hypertopo::testing {

class VolcanoHyperNodeStatusLoop {
 public:
  explicit VolcanoHyperNodeStatusLoop(k8s::KubeClient& client) : client_(client) {}
  ~VolcanoHyperNodeStatusLoop() { stop(); }
  VolcanoHyperNodeStatusLoop(const VolcanoHyperNodeStatusLoop&) = delete;
  VolcanoHyperNodeStatusLoop& operator=(const VolcanoHyperNodeStatusLoop&) = delete;

  void start();
  void stop();

  int writes() const { return writes_.load(); }   // UpdateStatus calls sent (conflicts included)
  int syncs() const { return syncs_.load(); }     // syncHyperNodeStatus runs
  bool listed() const { return listed_.load(); }  // the informer's first list is handled
  std::uint64_t events() const { return events_.load(); }
  // The resourceVersion of the last watch BOOKMARK handled: every HyperNode event up to it has been
  // synced (tests emit a bookmark to know the loop has caught up).
  std::uint64_t bookmark_resource_version() const { return bookmark_rv_.load(); }

  // actualNodeCnt for one HyperNode, given the cluster's Node objects.
  static std::int64_t actual_node_count(const nlohmann::json& hypernode,
                                        const std::vector<nlohmann::json>& nodes);

 private:
  void run(std::stop_token stop);
  void sync(nlohmann::json hypernode);

  k8s::KubeClient& client_;
  std::atomic<int> writes_{0}, syncs_{0};
  std::atomic<bool> listed_{false};
  std::atomic<std::uint64_t> events_{0}, bookmark_rv_{0};
  std::jthread thread_;
};

}  // namespace hypertopo::testing
