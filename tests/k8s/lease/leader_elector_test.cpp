// Leader election against the loopback API server (no real API server here; the loopback one keeps
// Lease semantics: resourceVersion on every write, 409 on stale updates). Two electors racing on
// real HTTP calls share real time, so that test uses short real timings and polls for outcomes with
// a deadline; the renewal-failure test runs on a ManualClock and measures in its time.
#include "k8s/lease/leader_elector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/support/apiserver/loopback_apiserver.h"

namespace hypertopo::k8s {
namespace {

using namespace std::chrono_literals;
constexpr const char* kLeaseCollection = "coordination.k8s.io/v1/leases";

class LeaderElectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::LoopbackApiServer>();
    auto started = server_->start();
    ASSERT_TRUE(started) << started.error().message();
  }

  std::unique_ptr<KubeClient> client() {
    ClusterConfig config;
    config.server = server_->url();
    ClientOptions options;
    options.qps = 0;
    options.request_timeout = 500ms;
    options.retry.max_attempts = 1;  // the elector retries on its own period
    auto made = KubeClient::create(config, options);
    EXPECT_TRUE(made) << made.error().message();
    return made ? std::move(*made) : nullptr;
  }

  // Short timings; the Lease records whole seconds, so it says leaseDurationSeconds=1.
  static LeaderElectionOptions options(const std::string& identity) {
    LeaderElectionOptions o;
    o.identity = identity;
    o.lease_duration = 1000ms;
    o.renew_deadline = 600ms;
    o.retry_period = 50ms;
    return o;
  }

  template <typename Pred>
  static bool eventually(Pred pred, std::chrono::milliseconds limit = 3000ms) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (pred()) return true;
      std::this_thread::sleep_for(5ms);
    }
    return pred();
  }

  nlohmann::json lease_spec() {
    auto lease = server_->store().object(kLeaseCollection, "hypertopo-system", "hypertopo-leader");
    return lease ? (*lease)["spec"] : nlohmann::json();
  }

  std::unique_ptr<testing::LoopbackApiServer> server_;
};

TEST_F(LeaderElectorTest, TwoCandidatesExactlyOneLeadsAndStopHandsOver) {
  auto client_a = client();
  auto client_b = client();
  auto clock = std::make_shared<timing::SystemClock>();
  LeaderElector a(*client_a, options("pod-a"), clock);
  LeaderElector b(*client_b, options("pod-b"), clock);
  std::atomic<int> leading{0}, max_leading{0}, starts_a{0}, starts_b{0};
  auto started = [&](std::atomic<int>& starts) {
    return [&] {
      ++starts;
      int now = ++leading;
      int seen = max_leading.load();
      while (now > seen && !max_leading.compare_exchange_weak(seen, now)) {
      }
    };
  };
  auto stopped = [&] { --leading; };
  std::thread ta([&] { a.run(started(starts_a), stopped); });
  std::thread tb([&] { b.run(started(starts_b), stopped); });

  ASSERT_TRUE(eventually([&] { return a.is_leader() || b.is_leader(); }));
  // Several renew periods: never two leaders, and no flapping.
  for (int i = 0; i < 40; ++i) {
    EXPECT_FALSE(a.is_leader() && b.is_leader());
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(max_leading.load(), 1);
  EXPECT_EQ(starts_a + starts_b, 1);
  LeaderElector& leader = a.is_leader() ? a : b;
  LeaderElector& follower = a.is_leader() ? b : a;
  std::thread& leader_thread = a.is_leader() ? ta : tb;
  const std::string leader_name = a.is_leader() ? "pod-a" : "pod-b";
  const std::string follower_name = a.is_leader() ? "pod-b" : "pod-a";
  EXPECT_TRUE(eventually([&] { return follower.observed_leader() == leader_name; }));
  auto spec = lease_spec();
  EXPECT_EQ(spec["holderIdentity"], leader_name);
  EXPECT_EQ(spec["leaseDurationSeconds"], 1);
  EXPECT_EQ(spec["renewTime"].get<std::string>().size(), std::string("2026-11-23T04:31:07.123456Z").size());

  // The leader shuts down: it releases the lease, and the other takes over well within the lease.
  const auto stop_at = std::chrono::steady_clock::now();
  leader.stop();
  leader_thread.join();
  EXPECT_FALSE(leader.is_leader());
  ASSERT_TRUE(eventually([&] { return follower.is_leader(); }, 2000ms));
  EXPECT_LT(std::chrono::steady_clock::now() - stop_at, 1000ms)
      << "takeover waited for expiry, not the release";
  spec = lease_spec();
  EXPECT_EQ(spec["holderIdentity"], follower_name);
  EXPECT_GE(spec["leaseTransitions"].get<int>(), 1);

  follower.stop();
  (leader_thread.get_id() == ta.get_id() ? tb : ta).join();
  EXPECT_EQ(lease_spec()["holderIdentity"], "");
  EXPECT_EQ(leading.load(), 0);
}

TEST_F(LeaderElectorTest, ALeaderThatCannotRenewStopsBeforeTheLeaseRunsOut) {
  auto c = client();
  auto clock = std::make_shared<timing::ManualClock>();  // moves only when the elector pauses
  LeaderElector elector(*c, options("pod-a"), clock);
  std::atomic<int> starts{0}, stops{0};
  std::atomic<timing::Clock::Duration::rep> stopped_at{0};
  std::thread t([&] {
    elector.run([&] { ++starts; },
                [&] {
                  stopped_at = clock->now().time_since_epoch().count();
                  ++stops;
                });
  });
  ASSERT_TRUE(eventually([&] { return elector.is_leader(); }));
  // Let a couple of renewals land, then every update fails.
  ASSERT_TRUE(eventually([&] { return server_->count("update") >= 2; }));
  server_->fail_next(40, 503, 0, "update");
  const auto failing_from = clock->now();
  ASSERT_TRUE(eventually([&] { return stops.load() == 1; }));
  const auto stopped_after =
      timing::Clock::TimePoint(timing::Clock::Duration(stopped_at.load())) - failing_from;
  // The lease it wrote lasts leaseDurationSeconds=1 from its last renewal (before the faults): it
  // stopped acting when renewals had failed for the 600 ms renew deadline, well before that.
  EXPECT_LT(stopped_after, 1000ms);
  EXPECT_GE(stopped_after, 600ms - 50ms);  // not at the first failed renewal
  EXPECT_FALSE(elector.is_leader());
  // Once the faults are used up it competes again and wins its own lease back.
  ASSERT_TRUE(eventually([&] { return elector.is_leader(); }));
  EXPECT_EQ(starts.load(), 2);
  elector.stop();
  t.join();
  EXPECT_EQ(stops.load(), 2);
  EXPECT_EQ(lease_spec()["holderIdentity"], "");
}

TEST_F(LeaderElectorTest, ALeaderThatDiedIsReplacedWhenItsLeaseExpiresByLocalObservation) {
  // A holder that vanished without releasing: its record stops changing. The renewTime in it is
  // from long ago, which must not matter: expiry counts from when this candidate saw it change.
  auto c = client();
  nlohmann::json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                          {"kind", "Lease"},
                          {"metadata", {{"name", "hypertopo-leader"}, {"namespace", "hypertopo-system"}}},
                          {"spec",
                           {{"holderIdentity", "dead-pod"},
                            {"leaseDurationSeconds", 2},
                            {"acquireTime", "2020-01-01T00:00:00.000000Z"},
                            {"renewTime", "2020-01-01T00:00:00.000000Z"},
                            {"leaseTransitions", 3}}}};
  ASSERT_TRUE(c->create(kLeasesResource, "hypertopo-system", lease));
  auto clock = std::make_shared<timing::ManualClock>();
  LeaderElector elector(*c, options("pod-b"), clock);
  const auto start = clock->now();
  std::atomic<timing::Clock::Duration::rep> started_at{0};
  std::thread t([&] { elector.run([&] { started_at = clock->now().time_since_epoch().count(); }, nullptr); });
  ASSERT_TRUE(eventually([&] { return elector.is_leader(); }));
  const auto waited = timing::Clock::TimePoint(timing::Clock::Duration(started_at.load())) - start;
  EXPECT_GE(waited, 2000ms);
  EXPECT_LT(waited, 2000ms + 100ms);
  EXPECT_EQ(lease_spec()["holderIdentity"], "pod-b");
  EXPECT_EQ(lease_spec()["leaseTransitions"], 4);
  elector.stop();
  t.join();
}

TEST(MicroTime, FormatsMicroseconds) {
  const auto t = std::chrono::system_clock::time_point(std::chrono::microseconds(1795926667123456LL));
  EXPECT_EQ(format_micro_time(t), "2026-11-29T04:31:07.123456Z");
}

}  // namespace
}  // namespace hypertopo::k8s
