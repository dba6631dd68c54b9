#include "scheduler/simulate/job_trace.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

#include "io/bounded_file.h"
#include "io/config_reader.h"
#include "io/json_reader.h"
#include "io/json_writer.h"
#include "scheduler/input/job_loader.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

// A trace line's problems read as a config file's do (io/config_reader.h): "<key>: <what>", after
// the "<file>:<line>" that parse_trace puts in front.
std::unexpected<Error> bad(const std::string& key, const std::string& what) {
  return io::config_error("", key, what);
}

// Times and durations stay at most 10^12 s (31,700 years): the simulated clock adds a job's duration
// to when it starts, and a trace file of 256 MiB holds at most a few million jobs run one after the
// other, so the clock can never pass 2^63 (a larger value would wrap it and end the simulation in
// the past).
constexpr std::int64_t kMaxTraceSeconds = 1'000'000'000'000;

std::expected<std::int64_t, Error> seconds(const json& event, const char* key) {
  auto it = event.find(key);
  if (it == event.end()) return bad(key, "is required");
  if (!it->is_number_integer())
    return bad(key, "must be a whole number of seconds, got " + io::json_text(*it));
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxTraceSeconds))
    return bad(key,
               "must be at most " + std::to_string(kMaxTraceSeconds) + " seconds, got " + io::json_text(*it));
  const auto value = it->get<std::int64_t>();
  if (value > kMaxTraceSeconds)
    return bad(key,
               "must be at most " + std::to_string(kMaxTraceSeconds) + " seconds, got " + io::json_text(*it));
  return value;
}

std::expected<json, Error> parse_line(const std::string& line) {
  // nlohmann's parser keeps its own stack, but a value 100,000 arrays deep still overflows the
  // native stack of the recursive code that walks and destroys it.
  if (io::json_depth(line) > io::kMaxJsonDepth) {
    return fail(ErrorCode::kParse, "nested deeper than " + std::to_string(io::kMaxJsonDepth) + " levels");
  }
  json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (event.is_discarded()) return fail(ErrorCode::kParse, "not a valid JSON object");
  if (!event.is_object())
    return fail(ErrorCode::kParse, "expected a JSON object, got " + io::json_text(event));
  return event;
}

std::expected<TraceJob, Error> parse_event(const json& event, const std::vector<NodeSpec>& nodes) {
  static const std::vector<std::string> kKeys = {"time",     "job",      "arrive",
                                                 "duration", "priority", "preemptionPolicy"};
  for (const auto& [key, value] : event.items()) {
    if (std::ranges::find(kKeys, key) == kKeys.end()) return io::unknown_key_error("", key, kKeys);
  }
  TraceJob job;
  auto time = seconds(event, "time");
  if (!time) return std::unexpected(time.error());
  if (*time < 0) return bad("time", "must be >= 0, got " + std::to_string(*time));
  job.arrival = *time;
  auto duration = seconds(event, "duration");
  if (!duration) return std::unexpected(duration.error());
  if (*duration <= 0) return bad("duration", "must be > 0, got " + std::to_string(*duration));
  job.duration = *duration;
  auto id = event.find("job");
  if (id == event.end()) return bad("job", "is required");
  if (!id->is_string() || id->get<std::string>().empty()) return bad("job", "must be a non-empty string");
  job.id = id->get<std::string>();
  auto arrive = event.find("arrive");
  if (arrive == event.end()) return bad("arrive", "is required");
  if (!arrive->is_object()) return bad("arrive", "must be a job object (as hypertopo place --job reads)");
  auto loaded = parse_job(*arrive, nodes);
  if (!loaded) return std::unexpected(loaded.error().context("job " + job.id));
  job.request = std::move(loaded->request);
  if (job.request.name.empty()) job.request.name = job.id;
  if (auto prio = event.find("priority"); prio != event.end()) {
    if (!prio->is_number_integer() || prio->get<std::int64_t>() < std::numeric_limits<std::int32_t>::min() ||
        prio->get<std::int64_t>() > std::numeric_limits<std::int32_t>::max())
      return bad("priority", "must be an integer in the int32 range (a PriorityClass value), got " +
                                 io::json_text(*prio));
    job.priority = static_cast<std::int32_t>(prio->get<std::int64_t>());
  }
  if (auto policy = event.find("preemptionPolicy"); policy != event.end()) {
    if (!policy->is_string() || (*policy != "Never" && *policy != "PreemptLowerPriority"))
      return bad("preemptionPolicy", "must be PreemptLowerPriority or Never, got " + io::json_text(*policy));
    job.preempt_never = *policy == "Never";
  }
  return job;
}

std::expected<NodeEvent, Error> parse_node_event(const json& event) {
  static const std::vector<std::string> kKeys = {"time", "node", "event"};
  for (const auto& [key, value] : event.items()) {
    if (std::ranges::find(kKeys, key) == kKeys.end()) return io::unknown_key_error("", key, kKeys);
  }
  NodeEvent out;
  auto time = seconds(event, "time");
  if (!time) return std::unexpected(time.error());
  if (*time < 0) return bad("time", "must be >= 0, got " + std::to_string(*time));
  out.time = *time;
  const auto& node = event["node"];
  if (!node.is_string() || node.get<std::string>().empty()) return bad("node", "must be a node's name");
  out.node = node.get<std::string>();
  auto kind = event.find("event");
  if (kind == event.end()) return bad("event", "is required (fail or recover)");
  if (!kind->is_string() || (*kind != "fail" && *kind != "recover"))
    return bad("event", "must be fail or recover, got " + io::json_text(*kind));
  out.fail = *kind == "fail";
  return out;
}

}  // namespace

std::expected<std::vector<TraceJob>, Error> parse_trace(std::istream& in, const std::string& source,
                                                        const std::vector<NodeSpec>& nodes,
                                                        std::vector<NodeEvent>* node_events) {
  std::vector<TraceJob> out;
  std::unordered_set<std::string> seen;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (blank(line)) continue;
    const std::string where = source + ":" + std::to_string(number);
    auto parsed = parse_line(line);
    if (!parsed) return std::unexpected(parsed.error().context(where));
    if (parsed->contains("node")) {
      if (!node_events)
        return fail(ErrorCode::kInvalidArgument, where + ": node events are replayed by simulate only");
      auto event = parse_node_event(*parsed);
      if (!event) return std::unexpected(event.error().context(where));
      event->where = where;
      node_events->push_back(std::move(*event));
      continue;
    }
    auto job = parse_event(*parsed, nodes);
    if (!job) return std::unexpected(job.error().context(where));
    if (!seen.insert(job->id).second) {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": job \"" + job->id + "\" appears twice in the trace");
    }
    job->where = where;
    out.push_back(std::move(*job));
  }
  if (in.bad()) return fail(ErrorCode::kParse, source + ": read error");
  return out;
}

std::expected<std::vector<TraceJob>, Error> load_trace(const std::filesystem::path& path,
                                                       const std::vector<NodeSpec>& nodes,
                                                       std::vector<NodeEvent>* node_events) {
  auto text = io::read_bounded_file(path, io::kDataFileLimit);
  if (!text) return std::unexpected(text.error().context("trace"));
  std::istringstream in(std::move(*text));
  return parse_trace(in, path.string(), nodes, node_events);
}

}  // namespace hypertopo::scheduler
