// cli/command_errors.h: the one contract every subcommand keeps with whoever runs it (a person, a
// script, a probe), written once here and checked over every subcommand by
// tests/cli/cli_contract_test.cpp. docs/commands.md ("Exit status and errors") states it for users.
//
// Exit status:
//   0  done
//   1  the question has no answer: the job does not fit, the probed extender is not ready
//   2  invalid invocation or input: an unknown flag or value, a missing or malformed file, a
//      kubeconfig that is not there or does not read, no cluster found to talk to
//   3  a runtime failure talking to a cluster or a fabric (API server, UFM, the subnet walk)
//
// Every error is one line on stderr, `hypertopo <command>: error: <what>: <why>`, naming the flag,
// file, key, line or object at fault; an unknown flag is named with the nearest known one.
//
//   if (!nodes) return report_error("discover", nodes.error().context("--nodes"));
//   // hypertopo discover: error: --nodes: nodes.json:3: expected a JSON object    (exit 2)
//   if (!listed) return report_error("status", listed.error().error, kExitRuntime);
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "errors/error.h"

namespace hypertopo::cli {

inline constexpr int kExitDone = 0;
inline constexpr int kExitNoAnswer = 1;
inline constexpr int kExitInvalid = 2;
inline constexpr int kExitRuntime = 3;

// The status an error ends a command with when the command knows nothing better: what the caller
// gave (kInvalidArgument, kParse, kNotFound) is 2; talking to something that failed (kUnavailable,
// kPermission, kConflict, kInternal) is 3; a result that breaks its own rules (kInvariant) is 1.
int exit_status_of(ErrorCode code);

// Writes `hypertopo <command>: error: <message>` to stderr, control characters spelled out, and
// returns `status`.
int report_error(std::string_view command, std::string_view message, int status);
// ... with the status exit_status_of(e.code()).
int report_error(std::string_view command, const Error& e);
int report_error(std::string_view command, const Error& e, int status);

// The name of `known` nearest `given`: the shortest that `given` begins, else the fewest edits away
// (Levenshtein); "" when `known` is empty.
std::string nearest_name(std::string_view given, const std::vector<std::string>& known);
// The number of single-character edits that turn `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The first flag among `args` (what follows the subcommand's name) that `command` does not know, as
// "--sourc: unknown flag (did you mean --source?)"; nullopt when every flag is known. Values of
// flags that take one are skipped, and "--" ends the flags.
std::optional<std::string> unknown_flag(const CLI::App& command, int argc, const char* const* args);

// CLI11's message for a parse error, in the contract's "<what>: <why>" shape:
// "--source is required" -> "--source: is required".
std::string parse_error_message(const CLI::ParseError& e);

}  // namespace hypertopo::cli
