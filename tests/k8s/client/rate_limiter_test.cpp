// The QPS/burst token bucket, on a manual clock: the waits are observed, never taken.
#include "k8s/client/rate_limiter.h"

#include <gtest/gtest.h>

namespace hypertopo::k8s {
namespace {

double milliseconds_of(timing::Clock::Duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

TEST(TokenBucket, BurstThenPacesAtQps) {
  auto clock = std::make_shared<timing::ManualClock>();
  TokenBucket bucket(/*qps=*/10, /*burst=*/3, clock);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.acquire(), timing::Clock::Duration::zero());
  EXPECT_NEAR(milliseconds_of(bucket.acquire()), 100.0, 0.01);
  EXPECT_NEAR(milliseconds_of(bucket.acquire()), 100.0, 0.01);
  // After a quiet second the bucket is full again, but never above the burst.
  clock->advance(std::chrono::seconds(10));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.acquire(), timing::Clock::Duration::zero());
  EXPECT_GT(bucket.acquire(), timing::Clock::Duration::zero());
}

TEST(TokenBucket, ZeroQpsDisablesTheLimit) {
  auto clock = std::make_shared<timing::ManualClock>();
  TokenBucket bucket(0, 1, clock);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(bucket.acquire(), timing::Clock::Duration::zero());
  EXPECT_TRUE(clock->sleeps().empty());
}

}  // namespace
}  // namespace hypertopo::k8s
