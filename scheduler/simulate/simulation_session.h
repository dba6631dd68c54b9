// scheduler/simulate/simulation_session.h: one `hypertopo simulate` run, from files to a report.
//
// Loads the nodes, the bound pods, the topology and the scheduler config with the same loaders as
// `hypertopo place` (scheduler/input), reads the JSON Lines trace (job_trace.h), replays it with the
// topology-aware engine and the first-fit baseline (trace_simulator.h) and renders the two side by
// side as a text table or as JSON. The CLI only parses flags.
//
//   SimulateInputs in{.nodes = "nodes.json", .topology = "hypernodes.json", .trace = "jobs.jsonl"};
//   auto report = run_simulation(in);
//   if (report) std::cout << render_simulation(*report, "text");
#pragma once

#include <cstddef>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "errors/error.h"
#include "scheduler/simulate/trace_simulator.h"

namespace hypertopo::scheduler {

struct ClusterSnapshot;

struct SimulateInputs {
  std::filesystem::path nodes;
  std::filesystem::path topology;
  std::filesystem::path trace;
  std::optional<std::filesystem::path> pods;  // bound pods: used for the whole replay
  // A live cluster's objects (cluster_snapshot.h): the starting cluster's nodes, bound pods and
  // topology come from it unless a file gives that kind (nodes, topology empty; pods unset).
  std::shared_ptr<const ClusterSnapshot> cluster;
  std::optional<std::filesystem::path> scheduler_config;
  std::string gpu_resource;  // empty: nvidia.com/gpu or amd.com/gpu
  // prefer-healthy | exclude | ignore (--fabric-health); empty: the scheduler config's
  // hypertopo.fabricHealth, else prefer-healthy.
  std::string fabric_health;
  std::size_t progress_every = 0;
  std::ostream* progress = nullptr;
};

struct SimulationRun {
  SimulationReport report;
  std::string trace;  // the trace's path, for the heading
  // What --scheduler-config holds that Volcano ignores or reads otherwise (the key named).
  std::vector<std::string> warnings;
};

std::expected<SimulationRun, Error> run_simulation(const SimulateInputs& inputs);

// format: text (a side-by-side table) | json
std::string render_simulation(const SimulationRun& run, const std::string& format);

}  // namespace hypertopo::scheduler
