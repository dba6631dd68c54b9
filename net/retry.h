// net/retry.h: when an HTTP call is worth repeating, and how long to wait before it.
//
// One rule for every client (the API server, UFM): exponential backoff from a base, capped; a
// server's Retry-After (seconds) lengthens the wait up to a limit, never shortens it; 429 means the
// server did not act, so any request may repeat; a 5xx repeats only an idempotent request.
//
//   auto wait = retry_wait(backoff_delay(500ms, 8s, attempt), res.retry_after, 30s);
//   if (retryable_status(res.status, /*idempotent=*/true)) clock.sleep_for(wait);
#pragma once

#include <chrono>
#include <string_view>

namespace hypertopo::net {

// base * 2^attempt (attempt 0 is the first retry), at most `cap`.
std::chrono::milliseconds backoff_delay(std::chrono::milliseconds base, std::chrono::milliseconds cap,
                                        int attempt);

// A Retry-After header in seconds; 0 when absent, negative or not a number (HTTP dates are not used
// by the servers we call).
std::chrono::seconds parse_retry_after(std::string_view header);

// The wait before the next attempt: the backoff, or the server's Retry-After when that is longer,
// at most `max_retry_after`.
std::chrono::milliseconds retry_wait(std::chrono::milliseconds backoff, std::string_view retry_after_header,
                                     std::chrono::milliseconds max_retry_after);

bool retryable_status(int status, bool idempotent);

}  // namespace hypertopo::net
