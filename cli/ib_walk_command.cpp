// `hypertopo ib-walk --cache OUT`: walks the subnet once and records it where the user asks (a live
// `discover` records nothing by itself). It is also the walker child: a walk against ibsim needs the
// umad2sim preload from process start, so the demo and the `ibsim:` source re-run this binary with
// the preload set and load the ibnd cache it records (see discoverers/ib-fabric/walk_recorder.h).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "discoverers/ib-fabric/walk_recorder.h"

namespace hypertopo::cli {

void add_ib_walk_command(CLI::App& app, Action& action) {
  auto request = std::make_shared<discoverers::ib_fabric::WalkRecorderRequest>();
  auto* cmd =
      app.add_subcommand("ib-walk", "walk the InfiniBand subnet with libibnetdisc and record an ibnd cache");
  discoverers::ib_fabric::add_walk_recorder_options(*cmd, *request);
  cmd->callback([&action, request] {
    action = [request] { return discoverers::ib_fabric::run_walk_recorder(*request, std::cerr); };
  });
}

}  // namespace hypertopo::cli
