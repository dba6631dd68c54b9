#include "net/retry.h"

#include <algorithm>
#include <charconv>

namespace hypertopo::net {

std::chrono::milliseconds backoff_delay(std::chrono::milliseconds base, std::chrono::milliseconds cap,
                                        int attempt) {
  auto delay = base;
  for (int i = 0; i < attempt && delay < cap; ++i) delay *= 2;
  return std::min(delay, cap);
}

std::chrono::seconds parse_retry_after(std::string_view header) {
  long seconds = 0;
  auto [ptr, ec] = std::from_chars(header.data(), header.data() + header.size(), seconds);
  if (ec != std::errc() || ptr != header.data() + header.size() || seconds < 0)
    return std::chrono::seconds(0);
  return std::chrono::seconds(seconds);
}

std::chrono::milliseconds retry_wait(std::chrono::milliseconds backoff, std::string_view retry_after_header,
                                     std::chrono::milliseconds max_retry_after) {
  const auto asked = parse_retry_after(retry_after_header);
  if (asked.count() <= 0) return backoff;
  return std::max(backoff, std::min<std::chrono::milliseconds>(asked, max_retry_after));
}

bool retryable_status(int status, bool idempotent) { return status == 429 || (status >= 500 && idempotent); }

}  // namespace hypertopo::net
