// cli/commands.h: the subcommands of the `hypertopo` binary.
//
// Each subcommand lives in its own file and installs itself on the root CLI11 app. Its callback
// stores the work to run in `action`; run_cli() runs it after parsing, so parse errors and the
// work's own errors both end in one clear line and a non-zero exit.
//
//   CLI::App app{"hypertopo"};
//   std::function<int()> action;
//   add_discover_command(app, action);
#pragma once

#include <functional>

// CLI11's header is declared here, not included: it takes about 7 s of compiling under the test
// build's flags, and the tests that call run_cli() need none of it. The files that add
// subcommands include <CLI/CLI.hpp> themselves.
namespace CLI {
class App;
}  // namespace CLI

namespace hypertopo::cli {

using Action = std::function<int()>;

void add_discover_command(CLI::App& app, Action& action);
void add_probe_command(CLI::App& app, Action& action);
void add_place_command(CLI::App& app, Action& action);
void add_ib_walk_command(CLI::App& app, Action& action);
void add_apply_command(CLI::App& app, Action& action);
void add_extender_command(CLI::App& app, Action& action);
void add_status_command(CLI::App& app, Action& action);
void add_simulate_command(CLI::App& app, Action& action);
void add_agent_command(CLI::App& app, Action& action);
void add_version_command(CLI::App& app, Action& action);
// Registered last: its script lists every subcommand registered before it.
void add_completion_command(CLI::App& app, Action& action);

// Parses argv and runs the chosen subcommand; returns the process exit code.
int run_cli(int argc, char** argv);

}  // namespace hypertopo::cli
