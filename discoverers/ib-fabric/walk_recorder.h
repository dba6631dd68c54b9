// discoverers/ib-fabric/walk_recorder.h: the walker child a simulated (or any) subnet is walked by.
//
// umad2sim must be preloaded when a process starts, so a live walk against ibsim runs in a child:
// `hypertopo ib-walk --graph OUT [--cache CACHE]` (hidden subcommand) or the small
// `hypertopo-ib-walk` executable. Both take the same flags, walk with libibnetdisc, hand the graph
// over in the graph_handover.h format and, when asked, record the walk as an ibnd cache.
//
//   CLI::App app{"walker"};
//   WalkRecorderRequest request;
//   add_walk_recorder_options(app, request);
//   CLI11_PARSE(app, argc, argv);
//   return run_walk_recorder(request, std::cerr);   // 0 on success, else 2 or 3 with one line on stderr
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "discoverers/ib-fabric/fabric_walk.h"

namespace hypertopo::discoverers::ib_fabric {

struct WalkRecorderRequest {
  WalkOptions walk;
  std::string cache;  // ibnd cache to record ("" for none)
  std::string graph;  // graph hand-over file ("" for none); one of the two is required
};

// --graph PATH, --cache PATH, --ca NAME, --port N, --timeout-ms N, --retries N, --max-hops N, --max-smps N.
void add_walk_recorder_options(CLI::App& app, WalkRecorderRequest& request);

int run_walk_recorder(const WalkRecorderRequest& request, std::ostream& err);

}  // namespace hypertopo::discoverers::ib_fabric
