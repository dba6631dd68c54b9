// scheduler/placement/label_levels.h: a level named by a node label, as a tier of HyperNodes.
//
// An upstream PodGroup's topology key (KEP-5732: all pods on nodes sharing one value of the label),
// KAI's and Kueue's label levels name a node label; over HyperNodes whose tiers are not named by that
// label the level means the widest tier whose every domain holds nodes sharing one value of it
// (TopologyIndex::tier_of_label). `place` and the extender's gang book resolve a job's levels with
// these functions before either plans, so both doors read a label level alike.
//
//   resolve_label_levels(index, job.request);   // "example.com/rack" -> "1" when leaves are racks
#pragma once

#include <string>

#include "scheduler/index/topology_index.h"
#include "scheduler/placement/job_request.h"

namespace hypertopo::scheduler {

// A level the index resolves (a tier number, a tier name, a level label key of a Kueue Topology) is
// left as it is; a label every node carries whose values no tier's domains share
// (kubernetes.io/hostname) is the node itself, "0"; one that some node lacks and no tier's domains
// agree on is left as it is: the placer names it in its error.
void resolve_label_level(const TopologyIndex& index, std::string& level);
// Every level of `job`: its pod sets', its own (job-level and KAI's required / preferred) and its
// sub-groups'.
void resolve_label_levels(const TopologyIndex& index, JobRequest& job);

}  // namespace hypertopo::scheduler
