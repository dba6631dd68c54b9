// tests/support/eventually.h: waiting for something another thread or process does.
//
// The agent's loops run on their own threads (or in a child process): a test polls for the outcome
// it expects instead of sleeping a fixed time, so it ends as soon as the outcome is there and fails
// only when it never comes within `limit`.
//
//   ASSERT_TRUE(testing::eventually([&] { return server.writes() == 2; }));
#pragma once

#include <chrono>
#include <thread>

namespace hypertopo::testing {

template <typename F>
bool eventually(F done, std::chrono::milliseconds limit = std::chrono::seconds(20),
                std::chrono::milliseconds poll = std::chrono::milliseconds(5)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(poll);
  }
  return done();
}

}  // namespace hypertopo::testing
