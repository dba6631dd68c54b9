// io/size_and_duration.h: sizes as people write them in configs and on command lines (a plain byte
// count or a Kubernetes quantity: resource.Quantity's suffixes, whole bytes only), and durations
// written back the way io::parse_duration (io/config_reader.h) reads them, for messages.
//
//   parse_byte_size("512Mi");   // 536870912
//   parse_byte_size("1.5G");    // 1500000000
//   parse_byte_size("4096");    // 4096
//   parse_byte_size("12XB");    // Error: '12XB' is not a size (bytes, or a quantity: 512Mi, 2Gi, 1G)
//   format_byte_size(512 << 20);  // "512Mi", for messages that name a limit
//   format_duration(std::chrono::milliseconds(5400000));  // "1h30m"
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "errors/error.h"

namespace hypertopo::io {

// Binary suffixes Ki Mi Gi Ti Pi Ei (powers of 1024) and decimal k M G T P E (powers of 1000), after
// a number with an optional fraction; the result must be a whole number of bytes, at most 8 EiB - 1.
std::expected<std::uint64_t, Error> parse_byte_size(std::string_view text);

// The shortest exact form: "512Mi", "1G", "1500" (bytes).
std::string format_byte_size(std::uint64_t bytes);

// Go's form, largest unit first: "1h30m", "30s", "250ms", "0ms".
std::string format_duration(std::chrono::milliseconds d);

}  // namespace hypertopo::io
