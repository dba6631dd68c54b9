#include "discoverers/ib-fabric/walk_recorder.h"

#include <fstream>

#include "discoverers/ib-fabric/graph_handover.h"

namespace hypertopo::discoverers::ib_fabric {

void add_walk_recorder_options(CLI::App& app, WalkRecorderRequest& request) {
  app.add_option("--graph", request.graph, "hand the walked graph over in this file");
  app.add_option("--cache", request.cache, "record the walk as an ibnd cache here");
  app.add_option("--ca", request.walk.ca_name, "local CA to walk from (default: the first one)");
  app.add_option("--port", request.walk.ca_port, "port of that CA (default: the first active one)")
      ->check(CLI::Range(0, 255));
  app.add_option("--timeout-ms", request.walk.timeout_ms, "SMP timeout in ms (default: libibnetdisc's)");
  app.add_option("--retries", request.walk.retries, "SMP retries (default: libibnetdisc's)");
  app.add_option("--max-hops", request.walk.max_hops, "stop the walk this many hops out (default: no limit)");
  app.add_option("--max-smps", request.walk.max_smps, "SMPs in flight (default: libibnetdisc's)");
}

// Exit statuses as every hypertopo subcommand has them (cli/command_errors.h): 2 for the caller's
// mistake, 3 for a walk or a write that failed.
int run_walk_recorder(const WalkRecorderRequest& request, std::ostream& err) {
  WalkOptions options = request.walk;
  if (!request.cache.empty()) options.cache_path = request.cache;
  if (request.graph.empty()) {
    if (request.cache.empty()) {
      err << "hypertopo ib-walk: error: --graph, --cache: nothing to write; give one or both\n";
      return 2;
    }
    if (auto ok = record_fabric_cache(options); !ok) {
      err << "hypertopo ib-walk: error: " << ok.error().message() << "\n";
      return 3;
    }
    return 0;
  }
  std::vector<std::string> notes;
  options.notes = &notes;
  auto graph = walk_fabric(options);
  if (!graph) {
    err << "hypertopo ib-walk: error: " << graph.error().message() << "\n";
    return 3;
  }
  for (const auto& note : notes) err << "hypertopo ib-walk: warning: " << note << "\n";
  std::ofstream out(request.graph, std::ios::binary | std::ios::trunc);
  write_graph_handover(*graph, out);
  out.close();
  if (!out) {
    err << "hypertopo ib-walk: error: cannot write " << request.graph << "\n";
    return 3;
  }
  return 0;
}

}  // namespace hypertopo::discoverers::ib_fabric
