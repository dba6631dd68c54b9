// k8s/client/rate_limiter.h: the client-side QPS/burst limit (a token bucket), as client-go has.
//
// `burst` requests may go at once; after that, one request per 1/qps seconds. acquire() blocks on
// the injected Clock until a token is free, so a test with a ManualClock sees the waits without
// taking them.
//
//   TokenBucket bucket(/*qps=*/5, /*burst=*/10, clock);
//   bucket.acquire();   // returns at once for the first 10 calls, then paces at 5 per second
#pragma once

#include <memory>
#include <mutex>

#include "timing/clock.h"

namespace hypertopo::k8s {

class TokenBucket {
 public:
  // qps <= 0 disables the limit.
  TokenBucket(double qps, int burst, std::shared_ptr<timing::Clock> clock);
  // Takes one token, sleeping on the clock until one is available; returns how long it waited.
  timing::Clock::Duration acquire();

 private:
  double qps_;
  double burst_;
  std::shared_ptr<timing::Clock> clock_;
  std::mutex mutex_;
  double tokens_;
  timing::Clock::TimePoint last_;
};

}  // namespace hypertopo::k8s
