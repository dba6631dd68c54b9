// k8s/lease/leader_elector.h: leader election on a coordination.k8s.io/v1 Lease, as client-go does it.
//
// Candidates share one Lease. A candidate takes it when it has no holder or when the record has not
// changed for leaseDurationSeconds of *local* observation time (no clock sync between nodes needed),
// writing with the resourceVersion it read, so of two racing candidates one gets a 409 and loses.
// The leader renews every retry_period; one that cannot renew for renew_deadline (shorter than the
// lease duration) stops acting (on_stopped_leading) before anyone else may take over, then competes
// again. stop() releases a held lease (holderIdentity "", leaseDurationSeconds 1, as client-go's
// ReleaseOnCancel), so a successor takes over at once.
//
// Give the elector a client whose request timeout and retries fit inside renew_deadline (e.g.
// retry.max_attempts = 1, request_timeout below renew_deadline): a renewal that blocks longer
// cannot be noticed in time.
//
//   LeaderElector elector(*client, {.identity = pod_name}, std::make_shared<SystemClock>());
//   std::jthread loop([&] { elector.run([] { start_reconciling(); }, [] { stop_reconciling(); }); });
//   ...
//   elector.stop();   // on SIGTERM: run() returns, the lease is released
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "k8s/client/kube_client.h"
#include "timing/clock.h"

namespace hypertopo::k8s {

struct LeaderElectionOptions {
  std::string lease_namespace = "hypertopo-system";
  std::string lease_name = "hypertopo-leader";
  std::string identity;  // pod name; required
  // client-go's defaults.
  std::chrono::milliseconds lease_duration{15000}, renew_deadline{10000}, retry_period{2000};
};

class LeaderElector {
 public:
  LeaderElector(KubeClient& client, LeaderElectionOptions options, std::shared_ptr<timing::Clock> clock);
  // Runs the acquire/renew loop on the calling thread until stop(); callbacks run on that thread.
  // After losing the lease it competes again.
  void run(std::function<void()> on_started_leading, std::function<void()> on_stopped_leading);
  void stop();             // thread-safe; makes run() return, releasing the lease if held
  bool is_leader() const;  // thread-safe
  std::string observed_leader() const;
  int transitions_observed() const;  // leaseTransitions of the last record seen

 private:
  // One attempt to take or renew the lease; true when we hold it afterwards.
  bool try_acquire_or_renew();
  void release();
  // Sleeps on the clock in short steps so that stop() is noticed promptly.
  void pause(std::chrono::milliseconds total);
  void observe(const nlohmann::json& spec);

  KubeClient& client_;
  LeaderElectionOptions options_;
  std::shared_ptr<timing::Clock> clock_;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> leader_{false};
  mutable std::mutex mutex_;
  nlohmann::json observed_record_;  // the Lease spec as last seen
  timing::Clock::TimePoint observed_time_{};
  std::string observed_leader_;
  int transitions_ = 0;
};

// A MicroTime as the API writes it: "2026-11-23T04:31:07.123456Z".
std::string format_micro_time(std::chrono::system_clock::time_point t);

}  // namespace hypertopo::k8s
