// scheduler/input/placement_session.h: one `hypertopo place` answer, from files to a report.
//
// Loads nodes, pods, the topology (HyperNodes or a Kueue Topology), the job and the scheduler
// config; builds the index; places the job with the engine, or with the exact Kueue algorithm when
// the semantics are `kueue` (auto: a Kueue-annotated batch/v1 Job on a Kueue Topology); and
// renders the result as the JSON schema, YAML or a text tree. The CLI only parses flags.
//
//   PlaceInputs in{.nodes = "nodes.json", .topology = "hn.json", .job = "job.yaml"};
//   auto report = run_placement(in);
//   if (report) std::cout << render_report(*report, "json");
#pragma once

#include <expected>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "errors/error.h"

namespace hypertopo::scheduler {

struct PlaceInputs {
  std::filesystem::path nodes;
  std::filesystem::path topology;
  std::filesystem::path job;
  std::optional<std::filesystem::path> pods;
  std::optional<std::filesystem::path> scheduler_config;
  std::string semantics = "auto";  // auto | engine | kueue
};

struct PlacementReport {
  nlohmann::json result;  // {"fit", "reason", "podSets": [{"name", "assignment", "domains", "tier"}]}
  std::string semantics;  // what actually ran: engine | kueue
  double parse_ms = 0, index_ms = 0, place_ms = 0;
};

std::expected<PlacementReport, Error> run_placement(const PlaceInputs& inputs);

// format: json | yaml | text
std::string render_report(const PlacementReport& report, const std::string& format);

}  // namespace hypertopo::scheduler
