#include "scheduler/input/placement_session.h"

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <set>
#include <sstream>

#include "io/json_writer.h"
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
    // A fitting pod set has a reason only when it started with fewer pods than asked (minPartitions,
    // minAvailable): it says how many.
    if (!ps.fit || !ps.reason.empty()) p["reason"] = ps.reason;
    if (ps.fit && !ps.reason.empty()) p["placed"] = ps.placed;
    if (!ps.fabric_health.empty()) p["fabricHealth"] = ps.fabric_health;
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
  k.group = ps.group;
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
    if (ps.slices[0].size > 0) k.slice_size = ps.slices[0].size;  // 0: a group leader's, unsized
  } else {
    for (const auto& s : ps.slices) k.slice_constraints.push_back({s.level, s.size});
  }
  return k;
}

// Kueue's feature gates as its --feature-gates flag takes them: "A=true,B=false".
std::expected<KueueFeatureGates, Error> parse_kueue_gates(const std::string& text) {
  KueueFeatureGates gates;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (value != "true" && value != "false") {
      return fail(ErrorCode::kInvalidArgument,
                  "--kueue-feature-gates: '" + item + "' must be <gate>=true or <gate>=false");
    }
    const bool on = value == "true";
    if (name == "TASBalancedPlacement") {
      gates.balanced_placement = on;
    } else if (name == "TASProfileMixed") {
      gates.profile_mixed = on;
    } else if (name == "TASMultiLayerTopology") {
      gates.multi_layer_topology = on;
    } else {
      return fail(ErrorCode::kInvalidArgument,
                  "--kueue-feature-gates: unknown gate '" + name +
                      "' (known: TASBalancedPlacement, TASProfileMixed, TASMultiLayerTopology)");
    }
  }
  return gates;
}

// A Kueue ResourceFlavor (kueue.x-k8s.io, kind ResourceFlavor): its spec.nodeLabels.
std::expected<std::map<std::string, std::string>, Error> flavor_labels(const std::filesystem::path& path,
                                                                       const std::string& topology_name) {
  auto doc = read_document(path);
  if (!doc) return std::unexpected(doc.error());
  const std::string where = path.string();
  if (!doc->is_object() || doc->value("kind", json()) != json("ResourceFlavor")) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": expected a Kueue ResourceFlavor (kind: ResourceFlavor)");
  }
  const json spec = doc->value("spec", json::object());
  if (!spec.is_object()) return fail(ErrorCode::kInvalidArgument, where + ": spec must be an object");
  if (auto it = spec.find("topologyName"); it != spec.end() && it->is_string() && *it != topology_name) {
    return fail(ErrorCode::kInvalidArgument, where + ": spec.topologyName '" + it->get<std::string>() +
                                                 "' is not the Topology '" + topology_name + "'");
  }
  std::map<std::string, std::string> out;
  auto labels = spec.find("nodeLabels");
  if (labels == spec.end() || labels->is_null()) return out;
  if (!labels->is_object())
    return fail(ErrorCode::kInvalidArgument, where + ": spec.nodeLabels must be a map");
  for (const auto& [k, v] : labels->items()) {
    if (!v.is_string())
      return fail(ErrorCode::kInvalidArgument, where + ": spec.nodeLabels." + k + " must be a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

json kueue_result(const std::vector<KueuePodSetResult>& results, const JobRequest& job,
                  const TopologyIndex& index, const std::vector<std::string>& levels,
                  const std::map<std::string, std::string>& flavor) {
  json out;
  out["fit"] = results.size() == job.pod_sets.size();
  out["reason"] = "";
  out["podSets"] = json::array();
  const bool by_host = !levels.empty() && levels.back() == kHostnameLabel;
  // Kueue names hosts by their hostname label; map them back to node names for the report.
  std::map<std::string, int> host_node;
  for (std::size_t n = 0; n < index.nodes().size(); ++n) {
    auto it = index.nodes()[n].spec.labels.find(kHostnameLabel);
    host_node[it == index.nodes()[n].spec.labels.end() ? index.nodes()[n].spec.name : it->second] =
        static_cast<int>(n);
  }
  // The nodes of a domain given by its full level path, as Kueue's snapshot keeps them: ready,
  // schedulable, matching the flavor.
  auto nodes_in = [&](const std::vector<std::string>& values) {
    std::vector<std::string> names;
    for (const auto& n : index.nodes()) {
      if (!n.spec.ready || n.spec.unschedulable) continue;
      bool match = values.size() == levels.size();
      for (std::size_t l = 0; match && l < levels.size(); ++l) {
        auto it = n.spec.labels.find(levels[l]);
        match = it != n.spec.labels.end() && it->second == values[l];
      }
      for (const auto& [k, v] : flavor) {
        auto it = n.spec.labels.find(k);
        match = match && it != n.spec.labels.end() && it->second == v;
      }
      if (match) names.push_back(n.spec.name);
    }
    return names;
  };
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
      json kueue_domains = json::array();
      std::int32_t rank = 0;
      for (const auto& d : r.assignment->domains) {
        kueue_domains.push_back({{"values", d.values}, {"count", d.count}});
        json a;
        if (by_host) {
          a["node"] = d.values.back();
          if (auto it = host_node.find(d.values.back()); it != host_node.end()) {
            a["node"] = index.node(it->second).spec.name;
            auto path = index.domain_path(index.node(it->second).domain);
            a["path"] = path;
            if (!path.empty()) domains.insert(path.front());
          }
        } else {
          // A value such as "r1" may name a rack in every block: only the full path is a domain.
          a["domain"] = d.values;
          a["nodes"] = nodes_in(d.values);
          domains.insert(d.values.front());
        }
        a["count"] = d.count;
        a["firstRank"] = rank;
        rank += d.count;
        p["assignment"].push_back(std::move(a));
      }
      p["topologyAssignment"] = {{"levels", r.assignment->levels}, {"domains", std::move(kueue_domains)}};
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

// The indentation of a line at `depth` of the domain tree: two spaces a level, up to 40 levels; deeper
// lines say their depth instead, so that a tree of absurd depth (30,000 tiers) prints in space linear
// in its depth, not quadratic.
std::string indent(std::size_t depth) {
  constexpr std::size_t kMaxIndentLevels = 40;
  if (depth <= kMaxIndentLevels) return std::string(2 * depth, ' ');
  return std::string(2 * kMaxIndentLevels, ' ') + "[" + std::to_string(depth) + "] ";
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
    if (auto notes = ps.find("fabricHealth"); notes != ps.end()) {
      for (const auto& note : *notes) out << "  fabric health: " << note.get<std::string>() << "\n";
    }
    std::vector<std::string> open;  // the domain path printed so far
    for (const auto& a : ps["assignment"]) {
      std::vector<std::string> path =
          a.contains("path") ? a["path"].get<std::vector<std::string>>() : std::vector<std::string>{};
      std::size_t common = 0;
      while (common < open.size() && common < path.size() && open[common] == path[common]) ++common;
      for (std::size_t i = common; i < path.size(); ++i) out << indent(i + 1) << path[i] << "\n";
      open = path;
      const std::int64_t first = a["firstRank"].get<std::int64_t>();
      const std::int64_t count = a["count"].get<std::int64_t>();
      std::string where;
      if (a.contains("node")) {
        where = a["node"].get<std::string>();
      } else {
        for (const auto& v : a["domain"]) where += (where.empty() ? "" : "/") + v.get<std::string>();
        where = "domain " + where;
      }
      out << indent(path.size() + 1) << where << "  x" << count << "  ranks " << first << "-"
          << first + count - 1 << "\n";
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
    report.warnings = config.warnings;
  }
  if (!in.fabric_health.empty()) {
    auto mode = parse_fabric_health_mode(in.fabric_health);
    if (!mode) {
      return fail(ErrorCode::kInvalidArgument, std::string("--fabric-health must be ") + kFabricHealthModes +
                                                   ", got '" + in.fabric_health + "'");
    }
    config.fabric_health = *mode;
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
    // A batch/v1 Job on a Kueue Topology is Kueue's to place, annotated or not (no annotation:
    // Kueue's "implied" unconstrained request).
    const bool kueue_job = job->format == "kueue" || job->format == "batch";
    semantics = topology->kind == TopologySource::Kind::kLevels && (kueue_job || config.profile == "kueue")
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
    auto gates = parse_kueue_gates(in.kueue_feature_gates);
    if (!gates) return std::unexpected(gates.error());
    std::map<std::string, std::string> flavor;
    if (in.resource_flavor) {
      auto f = flavor_labels(*in.resource_flavor, topology->levels.name);
      if (!f) return std::unexpected(f.error());
      flavor = std::move(*f);
    }
    KueueTopologySnapshot snapshot(topology->levels.levels, *nodes, pods, flavor, topology->levels.name);
    const auto results = snapshot.find_assignments(sets, *gates);
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (auto field = kueue_request_fault(results[i].failure)) {
        // Kueue rejects such a request outright; it is not a "does not fit".
        return fail(ErrorCode::kInvalidArgument, in.job.string() + ": pod set " + results[i].name + ": " +
                                                     results[i].failure + " (" + *field + ")");
      }
    }
    report.result = kueue_result(results, job->request, *index, topology->levels.levels, flavor);
  } else {
    for (const auto& ps : job->request.pod_sets) {
      for (const auto& layer : ps.slices) {
        if (layer.size <= 0) {
          return fail(ErrorCode::kInvalidArgument, in.job.string() + ": pod set " + ps.name +
                                                       ": slice topology requested, but slice size not "
                                                       "provided (kueue.x-k8s.io/podset-slice-size)");
        }
      }
    }
    PlacementEngine engine(*index, config.binpack, config.fabric_health);
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
  return io::json_text(report.result, 2) + "\n";
}

}  // namespace hypertopo::scheduler
