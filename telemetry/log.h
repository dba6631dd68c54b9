// telemetry/log.h: levelled log lines, one logfmt line per message.
//
// Components take a Logger (a function) rather than writing to stderr, so tests capture lines and
// the process decides the level once. The stderr logger prints `ts=<RFC 3339 ms> level=<l>
// msg="<text>"`, quoting `"`, `\` and newlines so one message is one line.
//
//   Logger log = make_stderr_logger(*parse_log_level("info"));
//   log(LogLevel::kWarn, "UFM answered 503; retrying");
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace hypertopo::telemetry {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError };

// "trace", "debug", "info", "warn", "error"; nullopt for anything else.
std::optional<LogLevel> parse_log_level(std::string_view text);
std::string_view log_level_name(LogLevel level);

using Logger = std::function<void(LogLevel, const std::string&)>;

// One logfmt line per message on stderr, below `min` dropped. Thread-safe.
Logger make_stderr_logger(LogLevel min);

// `text` as a logfmt value: in double quotes, `"` and `\` escaped, newlines as \n.
std::string logfmt_quote(std::string_view text);

}  // namespace hypertopo::telemetry
