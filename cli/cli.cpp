#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/version_info.h"

namespace hypertopo::cli {

namespace {

// The exit status of an invalid invocation (a missing or unknown flag, a bad value).
constexpr int kUsageError = 2;

// Levenshtein distance, for "did you mean".
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "unknown subcommand 'plcae' (did you mean 'place'?)" when the first argument names no subcommand.
std::optional<std::string> unknown_subcommand(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string given = argv[1];
  std::string closest;
  std::size_t best = std::string::npos;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string& name = sub->get_name();
    if (name == given) return std::nullopt;
    const std::size_t d = edit_distance(given, name);
    if (d < best) best = d, closest = name;
  }
  // Shown in quotes, at most 40 characters of it.
  const std::string shown = given.size() > 40 ? given.substr(0, 40) + "..." : given;
  std::string message = "unknown subcommand '" + shown + "'";
  if (!closest.empty() && (best <= 2 || best * 2 <= given.size()))
    message += " (did you mean '" + closest + "'?)";
  return message;
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
  add_completion_command(app, action);
  if (auto unknown = unknown_subcommand(app, argc, argv)) {
    std::cerr << "hypertopo: " << *unknown << "\nRun with --help for the subcommands.\n";
    return kUsageError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every invalid invocation exits 2, not CLI11's own codes (105 for
    // a failed check, 106 for a value out of a set, ...), as the docs and getopt tools promise.
    return app.exit(e) == 0 ? 0 : kUsageError;
  }
  if (!action) return 0;
  int code = 1;
  try {
    code = action();
  } catch (const std::exception& e) {
    std::cerr << "hypertopo: " << e.what() << "\n";
    return 1;
  }
  // Output that did not reach its file (a full disk, a closed pipe) is a failure, not a success
  // with a truncated result.
  errno = 0;
  std::cout.flush();
  if (!std::cout) {
    const int err = errno;
    std::cerr << "hypertopo: error: cannot write the output"
              << (err != 0 ? std::string(": ") + std::strerror(err) : "") << "\n";
    return code == 0 ? 1 : code;
  }
  return code;
}

}  // namespace hypertopo::cli
