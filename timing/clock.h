// timing/clock.h: time as a dependency, so rate limits, backoff, debounce and periods are testable
// without waiting.
//
// Code that waits never calls std::this_thread::sleep_for or a clock directly: it asks a Clock.
// Production code uses SystemClock. Tests hand a ManualClock: its sleep_for() moves its time forward
// at once and remembers how long each sleep would have been; wait_until() blocks until the condition
// holds or until the test advance()s the clock past the deadline, so a debounce or a resync period
// passes exactly when the test says so.
//
//   auto clock = std::make_shared<ManualClock>();
//   ClientOptions options{.clock = clock};
//   ...                                     // a 429 with Retry-After: 2 is retried
//   EXPECT_EQ(clock->sleeps().back(), std::chrono::seconds(2));
//
//   std::unique_lock lock(mutex);           // a loop that waits for work or for its period
//   clock->wait_until(wake, lock, stop, clock->now() + period, [&] { return dirty; });
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

namespace hypertopo::timing {

class Clock {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
  virtual void sleep_for(Duration d) = 0;
  // Blocks on `cv` (`lock` holds its mutex) until `done()` is true, `stop` is requested, or this
  // clock reaches `deadline`; returns done(). Whoever makes done() true notifies `cv` under the mutex.
  virtual bool wait_until(std::condition_variable_any& cv, std::unique_lock<std::mutex>& lock,
                          std::stop_token stop, TimePoint deadline, const std::function<bool()>& done) = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  void sleep_for(Duration d) override { std::this_thread::sleep_for(d); }
  bool wait_until(std::condition_variable_any& cv, std::unique_lock<std::mutex>& lock, std::stop_token stop,
                  TimePoint deadline, const std::function<bool()>& done) override {
    return cv.wait_until(lock, stop, deadline, done);
  }
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
  bool wait_until(std::condition_variable_any& cv, std::unique_lock<std::mutex>& lock, std::stop_token stop,
                  TimePoint deadline, const std::function<bool()>& done) override {
    const Waiter self{&cv, lock.mutex()};
    {
      std::lock_guard guard(mutex_);
      waiters_.push_back(self);
      ++waits_begun_;
    }
    const bool result = cv.wait(lock, stop, [&] { return done() || now() >= deadline; }) && done();
    std::lock_guard guard(mutex_);
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), self));
    return result || done();
  }
  // Moves time forward and wakes every wait_until() whose deadline it may have passed.
  void advance(Duration d) {
    std::vector<Waiter> waiters;
    {
      std::lock_guard lock(mutex_);
      now_ += d;
      waiters = waiters_;
    }
    // Under each waiter's own mutex: a waiter is either still checking its condition (and sees the
    // new time) or blocked in wait (and gets the notification); none misses the move.
    for (const auto& w : waiters) {
      std::lock_guard lock(*w.mutex);
      w.cv->notify_all();
    }
  }
  // How many wait_until() calls have begun: a test that advanced the clock knows a loop has gone
  // back to waiting (so it has acted on the new time) when this count has grown.
  std::uint64_t waits_begun() const {
    std::lock_guard lock(mutex_);
    return waits_begun_;
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
  struct Waiter {
    std::condition_variable_any* cv;
    std::mutex* mutex;
    bool operator==(const Waiter&) const = default;
  };
  mutable std::mutex mutex_;
  TimePoint now_{std::chrono::hours(1)};
  std::vector<Duration> sleeps_;
  std::vector<Waiter> waiters_;
  std::uint64_t waits_begun_ = 0;
};

}  // namespace hypertopo::timing
