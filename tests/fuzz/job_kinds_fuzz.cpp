// The readers of the job kinds both doors accept beside the PodGroups (Kubeflow MPIJob,
// LeaderWorkerSet; scheduler/input/leader_worker_jobs.h) and the coscheduling PodGroup with its
// Pods (coscheduling_pod_group.h), through the path `place --job` takes: parse_job, the node-label
// levels resolved on the index (label_levels.h: exclusive-topology on kubernetes.io/hostname is the
// node itself), then the engine on a small two-leaf cluster whose nodes carry their leaf, spine and
// hostname labels. A List holding a PodGroup goes to the extender too: the PodGroup as its watch
// hands it over, each pod noted, then a filter call for each of the first pods.
// The corpus holds small hand-written objects of each kind (tests/fuzz/corpus/job_kinds).
#include <nlohmann/json.hpp>

#include "scheduler/input/cluster_loader.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/fuzz/gang_doors.h"

HT_FUZZ_TARGET(job_kinds) {
  auto doc = hypertopo::scheduler::read_document(hypertopo::fuzzing::scratch_file("job_kinds.yaml", input));
  if (!doc) return;
  hypertopo::fuzzing::through_place(*doc);
  hypertopo::fuzzing::through_extender(*doc);
}
