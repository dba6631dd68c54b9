// The reader of Kubernetes object files (io/object_reader.h) behind every --nodes, --pods,
// --topology and --job: one object, Lists, JSON arrays, multi-document YAML, several kinds in one
// file; then each cluster loader and the job loader on the same file, sharing one ledger, as `place`
// reads them.
#include <vector>

#include "io/object_reader.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/job_loader.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(object_file) {
  using namespace hypertopo;
  (void)io::parse_objects(input, "objects.yaml");
  const auto path = fuzzing::scratch_file("objects.yaml", input);
  io::ObjectLedger ledger;
  auto nodes = scheduler::load_nodes(path, &ledger);
  (void)scheduler::load_pods(path, &ledger);
  (void)scheduler::load_topology(path, &ledger);
  (void)scheduler::load_listed_pods(path);
  static const std::vector<scheduler::NodeSpec> no_nodes;
  (void)scheduler::load_job(path, nodes ? *nodes : no_nodes, &ledger);
  (void)ledger.warnings();
}
