#include <cerrno>
#include <cstring>
#include <iostream>

#include "cli/commands.h"

namespace hypertopo::cli {

int run_cli(int argc, char** argv) {
  CLI::App app{
      "hypertopo: discovers the network topology of GPU clusters (InfiniBand, RoCE, NVLink, node labels),\n"
      "publishes it as Volcano HyperNodes and places gang workloads on it."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "hypertopo 0.1.0");
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
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
