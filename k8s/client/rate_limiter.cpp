#include "k8s/client/rate_limiter.h"

#include <algorithm>

namespace hypertopo::k8s {

TokenBucket::TokenBucket(double qps, int burst, std::shared_ptr<timing::Clock> clock)
    : qps_(qps),
      burst_(std::max(1, burst)),
      clock_(std::move(clock)),
      tokens_(burst_),
      last_(clock_->now()) {}

timing::Clock::Duration TokenBucket::acquire() {
  if (qps_ <= 0) return timing::Clock::Duration::zero();
  timing::Clock::Duration wait{};
  {
    // Reserve the token now (the balance may go negative) and sleep outside the lock, so callers
    // queue in order and each waits exactly for its own share.
    std::lock_guard lock(mutex_);
    auto now = clock_->now();
    if (now > last_) {
      tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * qps_);
      last_ = now;
    }
    tokens_ -= 1;
    if (tokens_ < 0) {
      wait =
          std::chrono::duration_cast<timing::Clock::Duration>(std::chrono::duration<double>(-tokens_ / qps_));
    }
  }
  if (wait > timing::Clock::Duration::zero()) clock_->sleep_for(wait);
  return wait;
}

}  // namespace hypertopo::k8s
