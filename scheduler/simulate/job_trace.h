// scheduler/simulate/job_trace.h: a JSON Lines trace of job arrivals for `hypertopo simulate`.
//
// One event per line: a job arrives at `time` (whole seconds, >= 0) and, once started, runs for
// `duration` seconds (> 0); it departs at its start time + duration. `arrive` is the same job
// object `hypertopo place --job` reads (Volcano Job, batch/v1 Job with Kueue annotations, KaiwoJob
// or PlacementRequest, see docs/placement.md), as JSON on that one line. `job` names the event and
// must be unique in the trace. Blank lines are skipped; any other key is an error, so a typo does not
// silently change the replay. Lines need not be sorted: arrivals are replayed by time, then by line.
//
//   {"time": 0, "job": "j1", "duration": 3600, "arrive": {"kind": "PlacementRequest", "podSets": [...]}}
//
// Optional keys: "priority" (an int32, default 0) and "preemptionPolicy" ("PreemptLowerPriority" or
// "Never"); with priorities the queue is ordered by priority and a job that does not fit may preempt
// (trace_simulator.h).
//
// A line with "node" instead of "job" is a node event (NodeEvent below): the node fails or recovers.
//
// Every error names the line: "jobs.jsonl:17: duration must be a positive integer".
//
//   auto trace = load_trace("jobs.jsonl", nodes);   // nodes: for a KaiwoJob's GPUs-per-node rule
//   for (const TraceJob& j : *trace) std::cout << j.where << " " << j.id << "\n";
#pragma once

#include <cstdint>
#include <expected>
#include <filesystem>
#include <istream>
#include <string>
#include <vector>

#include "errors/error.h"
#include "scheduler/index/cluster_model.h"
#include "scheduler/placement/job_request.h"

namespace hypertopo::scheduler {

struct TraceJob {
  std::string id;            // the event's "job"
  std::string where;         // "<source>:<line>", for messages about this job
  std::int64_t arrival = 0;  // seconds
  std::int64_t duration = 0;
  JobRequest request;  // its name defaults to `id`
  // "priority" (spec.priority's int32, default 0) and "preemptionPolicy" (PreemptLowerPriority,
  // the default, or Never): a job that does not fit may evict jobs of lower priority.
  std::int32_t priority = 0;
  bool preempt_never = false;
};

// A node failing (NotReady: the pods on it are lost) or coming back, at `time`:
//   {"time": 600, "node": "n-17", "event": "fail"}      {"time": 1800, "node": "n-17", "event": "recover"}
struct NodeEvent {
  std::int64_t time = 0;
  std::string node;
  bool fail = true;   // false: recover
  std::string where;  // "<source>:<line>"
};

// `source` names the input in messages (a file name, or "<stdin>"). Node events go to
// `node_events`, in trace order; without it, a node event is an error naming its line.
std::expected<std::vector<TraceJob>, Error> parse_trace(std::istream& in, const std::string& source,
                                                        const std::vector<NodeSpec>& nodes,
                                                        std::vector<NodeEvent>* node_events = nullptr);
std::expected<std::vector<TraceJob>, Error> load_trace(const std::filesystem::path& path,
                                                       const std::vector<NodeSpec>& nodes,
                                                       std::vector<NodeEvent>* node_events = nullptr);

}  // namespace hypertopo::scheduler
