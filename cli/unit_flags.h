// cli/unit_flags.h: flags that take a time or a size, read as the configs read them: a Go-style
// duration ("30s", "10m", "1h30m", or plain seconds: io::parse_duration) or a Kubernetes quantity
// ("512Mi", "2Gi", or plain bytes: io::parse_byte_size). A value out of range or not one of those is
// refused naming the flag, with the range written in the same units.
//
//   add_duration_flag(cmd, "--ufm-timeout", flags.timeout, "Time for the whole fetch",
//                     std::chrono::milliseconds(1), std::chrono::hours(1));
//   add_size_flag(cmd, "--ufm-max-bytes", flags.max_bytes, "Largest UFM response", 1, 64ULL << 30);
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <string>

namespace hypertopo::cli {

// `seconds` receives the duration in (fractional) seconds.
CLI::Option* add_duration_flag(CLI::App* cmd, const std::string& name, double& seconds,
                               const std::string& help, std::chrono::milliseconds min,
                               std::chrono::milliseconds max);
// `value` receives the duration in milliseconds.
CLI::Option* add_duration_flag(CLI::App* cmd, const std::string& name, std::chrono::milliseconds& value,
                               const std::string& help, std::chrono::milliseconds min,
                               std::chrono::milliseconds max);
CLI::Option* add_size_flag(CLI::App* cmd, const std::string& name, std::uint64_t& bytes,
                           const std::string& help, std::uint64_t min, std::uint64_t max);

}  // namespace hypertopo::cli
