// scheduler/placement/sub_group_placement.h: gangs with nested sub-groups, placed as KAI-Scheduler
// places a PodGroup (scheduling.run.ai/v2alpha2 `spec.topologyConstraint` and `spec.subGroups`).
//
// The job and each sub-group may name a required level (all its pods inside one domain at or below
// it) and a preferred level (as close as that when it fits). Groups are placed from the job down:
//   1. The candidate domains of a group are those inside its parent's domain from the preferred
//      level (else the required one) up to the required level (else the cluster), lowest level
//      first. Within a level they come in KAI's packing order (kai-scheduler
//      pkg/scheduler/plugins/topology/job_filtering.go, sortTree and sortDomainInfos): siblings by
//      the group's request over the domain's free resources, the fullest first, then by name, and
//      a domain's place is its ancestors' places first (the top-most domain is packed first).
//      A domain whose free resources cannot hold the group's request is skipped.
//   2. The group's child groups and pod sets are placed inside the first candidate where all of
//      them fit; otherwise everything placed for it is taken back and the next candidate is tried.
//   3. A group whose domain is above its preferred level spreads its pods over the preferred-level
//      domains inside it in the reverse of that packing order, filling one before the next
//      (KAI's calculateNodeScores gives the last domain of the order the highest node score);
//      groups without a level of their own inherit that order from the nearest ancestor.
//   3b. Volcano's minSubGroups (JobRequest::min_sub_groups, min_pods): the job's sub-groups of such a
//      policy are tried in the order Volcano's allocate action tries sub-jobs (what the gang cannot
//      do without, then each policy's first minSubGroups, then the rest); a candidate holds the job
//      when each policy's minimum and min_pods fit in it. The sub-groups left out are tried again
//      anywhere inside the job's required-level domain (the cluster without one), and those that
//      still do not fit are reported, the job fitting with fewer pods. A candidate is skipped only
//      when what the job cannot do without exceeds its free resources.
//   4. Elastic sub-groups (minMember below their pod count) first place minMember pods of every
//      sub-group, then the rest where it fits; the job fits when every minimum is placed.
// Pods of one pod set inside a chosen domain go where the engine packs them (PlacementEngine with
// the pod set's own node constraints), so node selectors, affinity and taints still apply.
//
//   JobRequest job{.name = "serve", .pod_sets = {...}, .sub_groups = {{.name = "replica1",
//                  .required = "k8s.io/spine"}}, .job_required = "k8s.io/zone"};
//   auto placed = place_sub_groups(engine, index, job);   // std::expected<JobPlacement, Error>
#pragma once

#include <expected>

#include "errors/error.h"
#include "scheduler/index/topology_index.h"
#include "scheduler/placement/job_request.h"
#include "scheduler/placement/placement_engine.h"

namespace hypertopo::scheduler {

// Errors are for inconsistent requests (an unknown parent or level, a cycle, a duplicate name,
// sub-groups nested deeper than kMaxSubGroupDepth); a job that does not fit returns fit = false with
// the reason and leaves the index unchanged.
std::expected<JobPlacement, Error> place_sub_groups(PlacementEngine& engine, TopologyIndex& index,
                                                    const JobRequest& job);

}  // namespace hypertopo::scheduler
