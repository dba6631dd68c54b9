#include "scheduler/input/placement_session.h"

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <set>
#include <sstream>

#include "scheduler/config/volcano_config.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/job_loader.h"
#include "scheduler/placement/kueue_compat.h"
#include "scheduler/placement/placement_engine.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

json engine_result(const JobPlacement& placement) {
  json out;
  out["fit"] = placement.fit;
  out["reason"] = placement.reason;
  out["podSets"] = json::array();
  for (const auto& ps : placement.pod_sets) {
    json p;
    p["name"] = ps.name;
    p["assignment"] = json::array();
    for (const auto& a : ps.assignment) {
      p["assignment"].push_back(
          {{"node", a.node_name}, {"count", a.count}, {"firstRank", a.first_rank}, {"path", a.domain_path}});
    }
    p["domains"] = ps.fit ? json(ps.domains) : json::array();
    p["tier"] = ps.fit ? ps.tier : 0;
    if (!ps.fit) p["reason"] = ps.reason;
    out["podSets"].push_back(p);
  }
  return out;
}

KueuePodSet to_kueue(const PodSetRequest& ps) {
  KueuePodSet k;
  k.name = ps.name;
  k.count = ps.count;
  k.per_pod = ps.per_pod;
  k.node_selector = ps.node_selector;
  k.tolerations = ps.tolerations;
  switch (ps.mode) {
    case TopologyMode::kRequired:
      k.required = ps.level;
      break;
    case TopologyMode::kPreferred:
      k.preferred = ps.level;
      break;
    case TopologyMode::kUnconstrained:
      k.unconstrained = ps.slices.empty();
      break;
    case TopologyMode::kNone:
      k.implied = true;
      break;
  }
  if (ps.slices.size() == 1) {
    k.slice_required_topology = ps.slices[0].level;
    k.slice_size = ps.slices[0].size;
  } else {
    for (const auto& s : ps.slices) k.slice_constraints.push_back({s.level, s.size});
  }
  return k;
}

json kueue_result(const std::vector<KueuePodSetResult>& results, const JobRequest& job,
                  const TopologyIndex& index) {
  json out;
  out["fit"] = results.size() == job.pod_sets.size();
  out["reason"] = "";
  out["podSets"] = json::array();
  // Kueue names hosts by their hostname label; map them back to node names for the report.
  std::map<std::string, int> by_host;
  for (std::size_t n = 0; n < index.nodes().size(); ++n) {
    auto it = index.nodes()[n].spec.labels.find(kHostnameLabel);
    by_host[it == index.nodes()[n].spec.labels.end() ? index.nodes()[n].spec.name : it->second] =
        static_cast<int>(n);
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    json p;
    p["name"] = r.name;
    p["assignment"] = json::array();
    std::set<std::string> domains;
    int tier = 0;
    if (!r.failure.empty()) {
      out["fit"] = false;
      if (out["reason"] == "") out["reason"] = "pod set " + r.name + ": " + r.failure;
      p["reason"] = r.failure;
    } else if (r.assignment) {
      std::int32_t rank = 0;
      for (const auto& d : r.assignment->domains) {
        std::string host = d.values.back();
        json a = {{"node", host}, {"count", d.count}, {"firstRank", rank}};
        if (auto it = by_host.find(host); it != by_host.end()) {
          a["node"] = index.node(it->second).spec.name;
          auto path = index.domain_path(index.node(it->second).domain);
          a["path"] = path;
          if (!path.empty()) domains.insert(path.front());
        }
        rank += d.count;
        p["assignment"].push_back(a);
      }
      const auto& ps = job.pod_sets[i];
      if (!ps.level.empty()) {
        auto t = index.resolve_tier(ps.level);
        if (t) tier = *t;
      }
    }
    p["domains"] = std::vector<std::string>(domains.begin(), domains.end());
    p["tier"] = tier;
    out["podSets"].push_back(p);
  }
  if (!out["fit"].get<bool>() && out["reason"] == "") out["reason"] = "an earlier pod set did not fit";
  return out;
}

void emit_yaml(YAML::Emitter& e, const json& v) {
  if (v.is_object()) {
    e << YAML::BeginMap;
    for (const auto& [k, x] : v.items()) {
      e << YAML::Key << k << YAML::Value;
      emit_yaml(e, x);
    }
    e << YAML::EndMap;
  } else if (v.is_array()) {
    e << YAML::BeginSeq;
    for (const auto& x : v) emit_yaml(e, x);
    e << YAML::EndSeq;
  } else if (v.is_string()) {
    e << YAML::DoubleQuoted << v.get<std::string>();
  } else if (v.is_boolean()) {
    e << v.get<bool>();
  } else if (v.is_number_integer()) {
    e << v.get<std::int64_t>();
  } else if (v.is_number()) {
    e << v.get<double>();
  } else {
    e << YAML::Null;
  }
}

std::string render_text(const json& result) {
  std::ostringstream out;
  out << (result["fit"].get<bool>() ? "fit" : "no fit");
  if (!result["reason"].get<std::string>().empty()) out << ": " << result["reason"].get<std::string>();
  out << "\n";
  for (const auto& ps : result["podSets"]) {
    std::int64_t pods = 0;
    for (const auto& a : ps["assignment"]) pods += a["count"].get<std::int64_t>();
    out << "pod set " << ps["name"].get<std::string>() << ": " << pods << " pods, tier "
        << ps["tier"].get<int>();
    if (!ps["domains"].empty()) {
      out << ", domain";
      for (const auto& d : ps["domains"]) out << " " << d.get<std::string>();
    }
    out << "\n";
    std::vector<std::string> open;  // the domain path printed so far
    for (const auto& a : ps["assignment"]) {
      std::vector<std::string> path =
          a.contains("path") ? a["path"].get<std::vector<std::string>>() : std::vector<std::string>{};
      std::size_t common = 0;
      while (common < open.size() && common < path.size() && open[common] == path[common]) ++common;
      for (std::size_t i = common; i < path.size(); ++i)
        out << std::string(2 * (i + 1), ' ') << path[i] << "\n";
      open = path;
      const std::int64_t first = a["firstRank"].get<std::int64_t>();
      const std::int64_t count = a["count"].get<std::int64_t>();
      out << std::string(2 * (path.size() + 1), ' ') << a["node"].get<std::string>() << "  x" << count
          << "  ranks " << first << "-" << first + count - 1 << "\n";
    }
  }
  return out.str();
}

}  // namespace

std::expected<PlacementReport, Error> run_placement(const PlaceInputs& in) {
  if (in.semantics != "auto" && in.semantics != "engine" && in.semantics != "kueue") {
    return fail(ErrorCode::kInvalidArgument,
                "--semantics must be auto, engine or kueue, got '" + in.semantics + "'");
  }
  PlacementReport report;
  auto start = Clock::now();
  auto nodes = load_nodes(in.nodes);
  if (!nodes) return std::unexpected(nodes.error());
  std::vector<BoundPod> pods;
  if (in.pods) {
    auto p = load_pods(*in.pods);
    if (!p) return std::unexpected(p.error());
    pods = std::move(*p);
  }
  auto topology = load_topology(in.topology);
  if (!topology) return std::unexpected(topology.error());
  auto job = load_job(in.job, *nodes);
  if (!job) return std::unexpected(job.error());
  SchedulerConfig config;
  if (in.scheduler_config) {
    auto c = load_scheduler_config_file(*in.scheduler_config);
    if (!c) return std::unexpected(c.error());
    config = *c;
  }
  for (const auto& ps : job->request.pod_sets) {
    if (ps.count > config.max_pods_per_job) {
      return fail(ErrorCode::kInvalidArgument,
                  "pod set " + ps.name + " asks for " + std::to_string(ps.count) +
                      " pods, above hypertopo.maxPodsPerJob " + std::to_string(config.max_pods_per_job));
    }
  }
  report.parse_ms = ms_since(start);
  start = Clock::now();
  auto index = build_index(*topology, *nodes, pods);
  if (!index) return std::unexpected(index.error().context("while building the topology index"));
  report.index_ms = ms_since(start);
  std::string semantics = in.semantics;
  if (semantics == "auto") {
    semantics = topology->kind == TopologySource::Kind::kLevels &&
                        (job->format == "kueue" || config.profile == "kueue")
                    ? "kueue"
                    : "engine";
  }
  if (semantics == "kueue" && topology->kind != TopologySource::Kind::kLevels) {
    return fail(ErrorCode::kInvalidArgument, "--semantics kueue needs a Kueue Topology as --topology");
  }
  report.semantics = semantics;
  start = Clock::now();
  if (semantics == "kueue") {
    std::vector<KueuePodSet> sets;
    for (const auto& ps : job->request.pod_sets) {
      if (ps.partitions) {
        return fail(ErrorCode::kInvalidArgument,
                    "pod set " + ps.name + ": Kueue has no partitions; use --semantics engine");
      }
      sets.push_back(to_kueue(ps));
    }
    KueueTopologySnapshot snapshot(topology->levels.levels, *nodes, pods, {}, topology->levels.name);
    report.result = kueue_result(snapshot.find_assignments(sets, KueueFeatureGates{}), job->request, *index);
  } else {
    PlacementEngine engine(*index, config.binpack);
    auto placed = engine.place(job->request);
    if (!placed) return std::unexpected(placed.error());
    report.result = engine_result(*placed);
  }
  report.place_ms = ms_since(start);
  return report;
}

std::string render_report(const PlacementReport& report, const std::string& format) {
  if (format == "yaml") {
    YAML::Emitter e;
    emit_yaml(e, report.result);
    return std::string(e.c_str()) + "\n";
  }
  if (format == "text") return render_text(report.result);
  return report.result.dump(2) + "\n";
}

}  // namespace hypertopo::scheduler
