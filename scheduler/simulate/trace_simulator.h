// scheduler/simulate/trace_simulator.h: replays a job trace on a cluster and measures placement quality.
//
// A discrete-event replay of job arrivals and departures (scheduler/simulate/job_trace.h), run once
// per policy on its own copy of the index, so both policies see the same trace and the same cluster:
//   - kTopologyAware: the PlacementEngine (gang placement with the job's topology constraints);
//   - kFirstFit: the topology-unaware baseline: nodes in name order, each filled with as many of
//     the pod set's pods as fit before the next node; same capacity rules as the engine (allocatable
//     minus used for every requested resource plus one `pods` slot, Ready, not cordoned, taints
//     tolerated, nodeSelector and required node affinity matched); all pods of the job or none; topology
//     modes, slices and partitions are ignored.
//
// Rules of the replay (the same for both policies):
//   - At one instant, departures are handled first, then the waiting queue is retried, then the
//     arrivals of that instant in trace order (time, then line).
//   - Strict FIFO: an arriving job is tried at once only when nobody waits; otherwise, or when it
//     does not fit, it joins the end of the queue. After departures the queue's head is retried,
//     and every job that now fits starts, until the first that does not (no backfilling).
//   - A job that does not fit the cluster even when no trace job runs (tried on a second, idle copy
//     of the index when it arrives) is never admitted and does not join the queue; every other job
//     is admitted eventually, since the cluster returns to that idle state.
//   - A job starts when placed and departs at start + duration.
//   - Priorities (job_trace.h: "priority", "preemptionPolicy"): when any job has one, the queue is
//     ordered by priority (higher first, FIFO among equals, as kube-scheduler's PrioritySort), an
//     arriving job is tried at once when nobody of its priority or higher waits, and a job that does
//     not fit may preempt jobs of lower priority: topology-aware, the whole gang with
//     plan_with_victims (victim_planner.h: one domain under its constraint, fewest and cheapest
//     victims; single pod set jobs); first fit, per pod as kube-scheduler's DefaultPreemption does
//     without the extender: each pod that finds no free node takes the node whose eviction costs
//     least. Every job that loses a pod is interrupted whole and queues again.
//   - Node events (job_trace.h NodeEvent) come after the departures of their instant: a failed node
//     takes no pods until it recovers, and the jobs that lost pods on it move them or are
//     interrupted and queue again at the head (PolicyReport's node failure figures).
//
// Metrics (GPU figures count `gpu_resource`):
//   - waiting time = start - arrival, over admitted jobs (mean, max);
//   - tier span of a job = the tier of the lowest domain of the index's tree that contains every
//     node the job's pods (all pod sets) landed on: 0 when they share one node, the node's domain
//     tiers above, and the virtual root's tier (max_tier + 1) when only the whole cluster holds
//     them. Computed from the placement's nodes with the same tree for both policies (mean, max,
//     and the number of jobs per span tier);
//   - fragmentation, sampled once after every instant with events and averaged over the samples;
//     for every tier from 0 (single nodes) to max_tier: stranded free GPUs = the sum of free GPUs
//     (allocatable - used) over the domains of that tier that are partly used (0 < used <
//     allocatable); largest free block = the most free GPUs in one domain of that tier;
//   - utilisation = GPU-seconds of admitted jobs / (allocatable GPUs x (last departure - first
//     arrival)).
//
//   SimulationOptions options{.progress_every = 10000, .progress = &std::cerr};
//   auto report = simulate_trace(index, trace, options);   // both policies, side by side
//   for (const PolicyReport& p : report->policies) std::cout << p.policy << " " << p.span_mean << "\n";
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "errors/error.h"
#include "scheduler/index/topology_index.h"
#include "scheduler/placement/fabric_health_mode.h"
#include "scheduler/placement/volcano_score.h"
#include "scheduler/simulate/job_trace.h"

namespace hypertopo::scheduler {

enum class SimulationPolicy { kTopologyAware, kFirstFit };
const char* to_string(SimulationPolicy policy);  // "topology-aware" | "first-fit"

struct SimulationOptions {
  std::string gpu_resource;  // empty: nvidia.com/gpu, else amd.com/gpu, whichever a node offers
  BinpackWeights weights;    // the engine's binpack weights (volcano-scheduler.conf)
  FabricHealthMode fabric_health = FabricHealthMode::kPreferHealthy;  // the engine's; first fit has none
  std::size_t progress_every = 0;  // events between progress lines; 0: none
  std::ostream* progress = nullptr;
};

struct JobOutcome {
  std::string id;
  std::int64_t arrival = 0;
  std::int64_t start = -1;  // -1: never admitted
  std::int64_t gpus = 0;    // GPUs its placed pods hold
  int span = -1;            // tier span; -1 when never admitted
  std::string reason;       // why it was never admitted
};

struct TierFragmentation {
  int tier = 0;           // 0: single nodes
  std::string tier_name;  // "node" for tier 0
  double stranded_free_mean = 0;
  std::int64_t stranded_free_max = 0;
  double largest_free_block_mean = 0;
  std::int64_t largest_free_block_min = 0;
};

struct PolicyReport {
  std::string policy;
  std::size_t jobs = 0;
  std::size_t admitted = 0;
  std::size_t never_admitted = 0;
  double wait_mean = 0;
  std::int64_t wait_max = 0;
  double span_mean = 0;
  int span_max = 0;
  std::map<int, std::size_t> jobs_per_span;      // span tier -> admitted jobs
  std::vector<TierFragmentation> fragmentation;  // tier 0 .. max_tier
  std::size_t samples = 0;
  std::size_t events = 0;  // arrivals + departures handled
  double utilisation = 0;
  std::int64_t end = 0;              // the last departure (or arrival) time
  std::vector<JobOutcome> outcomes;  // in trace order
  // Node failures (NodeEvent): the pods a failed node held are lost. A running job whose lost pods
  // all find room again moves them (topology-aware: inside the job's constraint domain, the
  // domain of its required tier holding its other pods, nearest first, as the extender moves a
  // gang's slots; first fit: the first nodes in name order with room); a job whose pods do not is
  // interrupted: all of it is released, the GPU-seconds it ran are lost, and it queues again.
  std::size_t node_failures = 0;
  std::size_t pods_lost = 0;
  std::size_t pods_replaced = 0;
  std::size_t jobs_interrupted = 0;
  double gpu_seconds_lost = 0;
  // Preemption (a trace with priorities): jobs started by evicting pods of lower priority, the pods
  // evicted, the jobs they belonged to (each interrupted whole and queued again: a broken gang loses
  // its work), the GPU-seconds those jobs had run, and the lowest-tier domains the victims of one
  // preemption came from (mean over preemptions).
  std::size_t preemptions = 0;
  std::size_t victim_pods = 0;
  std::size_t victim_jobs = 0;
  double preemption_gpu_seconds_lost = 0;
  double victim_domains_mean = 0;
};

struct SimulationReport {
  std::size_t nodes = 0;
  std::int64_t gpus = 0;  // allocatable
  std::string gpu_resource;
  int max_tier = 0;
  std::vector<std::string> tier_names;  // index t = tier t; [0] = "node"
  std::vector<PolicyReport> policies;   // topology-aware, then first-fit
};

// Replays `trace` with one policy on a copy of `index` (the index itself is not changed). Errors are
// for requests the engine rejects as inconsistent (an unknown tier, ...); they name the trace line.
std::expected<PolicyReport, Error> simulate_policy(const TopologyIndex& index,
                                                   const std::vector<TraceJob>& trace,
                                                   SimulationPolicy policy, const SimulationOptions& options,
                                                   const std::vector<NodeEvent>& node_events = {});

// Both policies on the same trace and cluster.
std::expected<SimulationReport, Error> simulate_trace(const TopologyIndex& index,
                                                      const std::vector<TraceJob>& trace,
                                                      const SimulationOptions& options,
                                                      const std::vector<NodeEvent>& node_events = {});

}  // namespace hypertopo::scheduler
