// The job loaders behind `place --job`: Volcano Job, batch/v1 Job with Kueue or KAI annotations,
// JobSet, KaiwoJob and the neutral PlacementRequest, read as a user's file is (YAML or JSON). Both
// kinds of PodGroup have their own target (pod_group_fuzz.cpp).
#include <vector>

#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/job_loader.h"
#include "tests/fuzz/fuzz_target.h"

HT_FUZZ_TARGET(job) {
  using namespace hypertopo::scheduler;
  auto doc = read_document(hypertopo::fuzzing::scratch_file("job.yaml", input));
  if (!doc) return;
  static const std::vector<NodeSpec> no_nodes;
  (void)parse_job(*doc, no_nodes);
}
