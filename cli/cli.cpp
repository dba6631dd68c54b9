#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_errors.h"
#include "cli/commands.h"
#include "cli/version_info.h"

namespace hypertopo::cli {

namespace {

// "hypertopo: error: plcae: unknown subcommand (did you mean place?)" when the first argument names
// no subcommand.
std::optional<std::string> unknown_subcommand(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string given = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == given) return std::nullopt;
    names.push_back(sub->get_name());
  }
  // Shown at most 40 characters of it; a guess only when it is close.
  const std::string shown = given.size() > 40 ? given.substr(0, 40) + "..." : given;
  std::string message = shown + ": unknown subcommand";
  const std::string closest = nearest_name(given, names);
  const std::size_t d = edit_distance(given, closest);
  if (!closest.empty() && (d <= 2 || d * 2 <= given.size())) message += " (did you mean " + closest + "?)";
  return message;
}

// The subcommand argv[1] names, or null.
CLI::App* chosen_subcommand(CLI::App& app, int argc, char** argv) {
  if (argc < 2) return nullptr;
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == argv[1]) return sub;
  }
  return nullptr;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{
      "hypertopo: discovers the network topology of GPU clusters (InfiniBand, RoCE, NVLink, node labels),\n"
      "publishes it as Volcano HyperNodes and places gang workloads on it."};
  app.require_subcommand(1);
  // "hypertopo 0.1.0 (commit 1a2b3c4d5e6f, built 2026-11-27)" (cmake/version_info.cmake).
  app.set_version_flag("--version", std::string("hypertopo ") + HT_VERSION + " (commit " + HT_GIT_COMMIT +
                                        ", built " + HT_BUILD_DATE + ")");
  Action action;
  add_discover_command(app, action);
  add_probe_command(app, action);
  add_place_command(app, action);
  add_ib_walk_command(app, action);
  add_apply_command(app, action);
  add_extender_command(app, action);
  add_status_command(app, action);
  add_simulate_command(app, action);
  add_agent_command(app, action);
  add_version_command(app, action);
  add_completion_command(app, action);
  if (auto unknown = unknown_subcommand(app, argc, argv)) return report_error("", *unknown, kExitInvalid);
  CLI::App* sub = chosen_subcommand(app, argc, argv);
  const std::string command = sub != nullptr ? sub->get_name() : "";
  // Before CLI11 parses: it reports a missing required flag ahead of an unknown one, and the
  // unknown one is most often that required flag misspelt (`discover --sourc demo`).
  if (sub != nullptr) {
    if (auto unknown = unknown_flag(*sub, argc - 2, argv + 2))
      return report_error(command, *unknown, kExitInvalid);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and exit 0; every invalid invocation exits 2 in the one error
    // style, not CLI11's own codes (105 for a failed check, 106 for a value out of a set, ...).
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    return report_error(command, parse_error_message(e), kExitInvalid);
  }
  if (!action) return kExitDone;
  int code = kExitRuntime;
  try {
    code = action();
  } catch (const std::exception& e) {
    // Nothing should throw out of a command; what does is a failure of the run, not of the input.
    return report_error(command, e.what(), kExitRuntime);
  }
  // Output that did not reach its file (a full disk, a closed pipe) is a failure, not a success
  // with a truncated result.
  errno = 0;
  std::cout.flush();
  if (!std::cout) {
    const int err = errno;
    report_error(
        command,
        std::string("cannot write the output") + (err != 0 ? std::string(": ") + std::strerror(err) : ""),
        kExitRuntime);
    return code == kExitDone ? kExitRuntime : code;
  }
  return code;
}

}  // namespace hypertopo::cli
