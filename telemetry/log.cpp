#include "telemetry/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <mutex>

namespace hypertopo::telemetry {
namespace {
constexpr const char* kLevelNames[] = {"trace", "debug", "info", "warn", "error"};
}  // namespace

std::optional<LogLevel> parse_log_level(std::string_view text) {
  for (int i = 0; i < 5; ++i) {
    if (text == kLevelNames[i]) return static_cast<LogLevel>(i);
  }
  return std::nullopt;
}

std::string_view log_level_name(LogLevel level) { return kLevelNames[static_cast<int>(level)]; }

std::string logfmt_quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

Logger make_stderr_logger(LogLevel min) {
  auto mutex = std::make_shared<std::mutex>();
  return [min, mutex](LogLevel level, const std::string& message) {
    if (level < min) return;
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char stamp[96];  // room for any int the compiler can imagine in each field
    std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    std::lock_guard lock(*mutex);
    std::cerr << "ts=" << stamp << " level=" << log_level_name(level) << " msg=" << logfmt_quote(message)
              << "\n";
  };
}

}  // namespace hypertopo::telemetry
