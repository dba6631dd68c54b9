// k8s/client/clock.h: time as a dependency, so rate limits and backoff are testable without waiting.
//
// The client never calls std::this_thread::sleep_for or a clock directly: it asks a Clock. Production
// code uses SystemClock; tests hand a ManualClock whose sleep_for() moves its time forward at once
// and remembers how long each sleep would have been.
//
//   auto clock = std::make_shared<ManualClock>();
//   ClientOptions options{.clock = clock};
//   ...                                     // a 429 with Retry-After: 2 is retried
//   EXPECT_EQ(clock->sleeps().back(), std::chrono::seconds(2));
#pragma once

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace hypertopo::k8s {

class Clock {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
  virtual void sleep_for(Duration d) = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  void sleep_for(Duration d) override { std::this_thread::sleep_for(d); }
};

// Time moves only when someone sleeps or calls advance(). Thread-safe.
class ManualClock final : public Clock {
 public:
  TimePoint now() const override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  void sleep_for(Duration d) override {
    std::lock_guard lock(mutex_);
    sleeps_.push_back(d);
    if (d > Duration::zero()) now_ += d;
  }
  void advance(Duration d) {
    std::lock_guard lock(mutex_);
    now_ += d;
  }
  std::vector<Duration> sleeps() const {
    std::lock_guard lock(mutex_);
    return sleeps_;
  }
  void clear_sleeps() {
    std::lock_guard lock(mutex_);
    sleeps_.clear();
  }

 private:
  mutable std::mutex mutex_;
  TimePoint now_{std::chrono::hours(1)};
  std::vector<Duration> sleeps_;
};

}  // namespace hypertopo::k8s
