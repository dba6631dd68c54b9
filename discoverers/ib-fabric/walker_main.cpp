// hypertopo-ib-walk: walks the subnet with libibnetdisc and records an ibnd cache (see
// walk_recorder.h). Kept apart from the hypertopo binary so tests and benchmarks have a small
// child to preload umad2sim into.
#include <iostream>

#include "discoverers/ib-fabric/walk_recorder.h"

int main(int argc, char** argv) {
  CLI::App app{"hypertopo-ib-walk: walk the InfiniBand subnet and record an ibnd cache"};
  hypertopo::discoverers::ib_fabric::WalkRecorderRequest request;
  hypertopo::discoverers::ib_fabric::add_walk_recorder_options(app, request);
  CLI11_PARSE(app, argc, argv);
  return hypertopo::discoverers::ib_fabric::run_walk_recorder(request, std::cerr);
}
