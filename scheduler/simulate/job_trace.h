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
};

// `source` names the input in messages (a file name, or "<stdin>").
std::expected<std::vector<TraceJob>, Error> parse_trace(std::istream& in, const std::string& source,
                                                        const std::vector<NodeSpec>& nodes);
std::expected<std::vector<TraceJob>, Error> load_trace(const std::filesystem::path& path,
                                                       const std::vector<NodeSpec>& nodes);

}  // namespace hypertopo::scheduler
