// PodGroups that divide a gang into sub-groups (KAI's scheduling.run.ai spec.subGroups with their
// chains of parents, Volcano's scheduling.volcano.sh spec.subGroupPolicy), as a List of the
// PodGroup and its Pods, through both doors that read them:
//   - `place --job`: parse_job, then the engine (place_sub_groups for a grouped job) on a small
//     two-leaf cluster;
//   - the extender: the PodGroup as its watch hands it over (by kind), each pod noted, then a filter
//     call for each of the first pods, as kube-scheduler makes them.
// The corpus holds small hand-written Lists of both kinds and the 20,000-deep chain of parents that
// once overflowed the placer's recursion (crash-kai-parent-chain-20000.json).
// Both doors as tests/fuzz/gang_doors.h runs them, as for job_kinds.
#include <nlohmann/json.hpp>

#include "scheduler/input/cluster_loader.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/fuzz/gang_doors.h"

HT_FUZZ_TARGET(sub_group_pod_group) {
  auto doc = hypertopo::scheduler::read_document(
      hypertopo::fuzzing::scratch_file("sub_group_pod_group.yaml", input));
  if (!doc) return;
  hypertopo::fuzzing::through_place(*doc);
  hypertopo::fuzzing::through_extender(*doc);
}
