#include "scheduler/input/job_loader.h"

#include <limits>

#include "scheduler/index/quantity.h"
#include "scheduler/input/cluster_loader.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

constexpr const char* kKueuePrefix = "kueue.x-k8s.io/";

std::string str(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::expected<std::int64_t, Error> integer(const json& obj, const char* key, std::int64_t fallback,
                                           const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_string()) {
    try {
      std::size_t used = 0;
      auto v = std::stoll(it->get<std::string>(), &used);
      if (used == it->get<std::string>().size()) return v;
    } catch (const std::exception&) {
    }
  }
  return fail(ErrorCode::kInvalidArgument, where + ": " + key + " must be an integer, got " + it->dump());
}

std::expected<ResourceAmounts, Error> quantities(const json& obj, const std::string& where) {
  ResourceAmounts out;
  if (!obj.is_object()) return out;
  for (const auto& [k, v] : obj.items()) {
    auto q = parse_quantity(k, v.is_string() ? v.get<std::string>() : v.dump());
    if (!q) return std::unexpected(q.error().context(where));
    out[k] = *q;
  }
  return out;
}

std::vector<Toleration> tolerations(const json& list) {
  std::vector<Toleration> out;
  if (!list.is_array()) return out;
  for (const auto& t : list) {
    Toleration tol;
    tol.key = str(t, "key");
    tol.value = str(t, "value");
    tol.effect = str(t, "effect");
    if (!str(t, "operator").empty()) tol.op = str(t, "operator");
    out.push_back(tol);
  }
  return out;
}

// Per-pod requests, nodeSelector and tolerations from a pod template spec.
std::expected<void, Error> read_pod_spec(const json& spec, PodSetRequest& ps, const std::string& where) {
  ResourceAmounts sum;
  for (const auto& c : spec.value("containers", json::array())) {
    auto r = quantities(c.value("resources", json::object()).value("requests", json::object()),
                        where + " container " + str(c, "name") + " resources.requests");
    if (!r) return std::unexpected(r.error());
    for (const auto& [k, v] : *r) sum[k] += v;
  }
  ps.per_pod = std::move(sum);
  if (spec.contains("nodeSelector") && spec["nodeSelector"].is_object()) {
    for (const auto& [k, v] : spec["nodeSelector"].items())
      ps.node_selector[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  ps.tolerations = tolerations(spec.value("tolerations", json::array()));
  return {};
}

// networkTopology {mode, highestTierAllowed | highestTierName} onto a pod set.
std::expected<void, Error> read_network_topology(const json& nt, PodSetRequest& ps,
                                                 const std::string& where) {
  if (!nt.is_object()) return {};
  const bool has_allowed = nt.contains("highestTierAllowed") && !nt["highestTierAllowed"].is_null();
  const bool has_name = nt.contains("highestTierName") && !nt["highestTierName"].is_null();
  if (has_allowed && has_name) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": highestTierAllowed and highestTierName are mutually exclusive");
  }
  const std::string mode = nt.value("mode", std::string("hard"));
  if (mode != "hard" && mode != "soft") {
    return fail(ErrorCode::kInvalidArgument, where + ": mode must be hard or soft, got '" + mode + "'");
  }
  ps.mode = mode == "hard" ? TopologyMode::kRequired : TopologyMode::kPreferred;
  if (has_allowed) {
    auto tier = integer(nt, "highestTierAllowed", 0, where);
    if (!tier) return std::unexpected(tier.error());
    if (*tier < 0)
      return fail(ErrorCode::kInvalidArgument, where + ": highestTierAllowed must not be negative");
    ps.level = std::to_string(*tier);
  } else if (has_name) {
    ps.level = str(nt, "highestTierName");
  }
  return {};
}

std::expected<LoadedJob, Error> volcano_job(const json& doc) {
  LoadedJob out;
  out.format = "volcano";
  out.request.name = str(doc.value("metadata", json::object()), "name");
  const json spec = doc.value("spec", json::object());
  const std::string where = "Volcano Job " + out.request.name;
  PodSetRequest job_level;
  if (auto ok = read_network_topology(spec.value("networkTopology", json()), job_level,
                                      where + " spec.networkTopology");
      !ok) {
    return std::unexpected(ok.error());
  }
  // The job-level networkTopology binds all tasks together, not each task on its own.
  out.request.mode = job_level.mode;
  out.request.level = job_level.level;
  const json tasks = spec.value("tasks", json::array());
  if (tasks.empty()) return fail(ErrorCode::kInvalidArgument, where + ": spec.tasks is empty");
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const json& task = tasks[i];
    PodSetRequest ps;
    ps.name = str(task, "name");
    const std::string tw = where + " task " + (ps.name.empty() ? std::to_string(i) : ps.name);
    auto replicas = integer(task, "replicas", 1, tw);
    if (!replicas) return std::unexpected(replicas.error());
    ps.count = static_cast<std::int32_t>(*replicas);
    if (auto ok = read_pod_spec(task.value("template", json::object()).value("spec", json::object()), ps, tw);
        !ok) {
      return std::unexpected(ok.error());
    }
    ps.mode = job_level.mode;
    ps.level = job_level.level;
    if (task.contains("partitionPolicy") && task["partitionPolicy"].is_object()) {
      const json& pp = task["partitionPolicy"];
      PartitionRequest part;
      auto total = integer(pp, "totalPartitions", 0, tw + " partitionPolicy");
      auto size = integer(pp, "partitionSize", 0, tw + " partitionPolicy");
      if (!total) return std::unexpected(total.error());
      if (!size) return std::unexpected(size.error());
      auto min = integer(pp, "minPartitions", *total, tw + " partitionPolicy");
      if (!min) return std::unexpected(min.error());
      part.total = static_cast<std::int32_t>(*total);
      part.size = static_cast<std::int32_t>(*size);
      part.min = static_cast<std::int32_t>(*min);
      if (part.total * static_cast<std::int64_t>(part.size) != ps.count) {
        return fail(ErrorCode::kInvalidArgument, tw + ": replicas " + std::to_string(ps.count) +
                                                     " != totalPartitions " + std::to_string(part.total) +
                                                     " x partitionSize " + std::to_string(part.size));
      }
      PodSetRequest partition_level;
      if (auto ok = read_network_topology(pp.value("networkTopology", json()), partition_level,
                                          tw + " partitionPolicy.networkTopology");
          !ok) {
        return std::unexpected(ok.error());
      }
      part.level = partition_level.level;
      ps.partitions = part;
      if (ps.mode == TopologyMode::kNone) ps.mode = TopologyMode::kUnconstrained;
    }
    out.request.pod_sets.push_back(std::move(ps));
  }
  return out;
}

std::expected<void, Error> topology_annotations(const json& annotations, PodSetRequest& ps,
                                                std::string& format, const std::string& where) {
  auto get = [&](const std::string& key) { return str(annotations, key.c_str()); };
  const std::string required = get(std::string(kKueuePrefix) + "podset-required-topology");
  const std::string preferred = get(std::string(kKueuePrefix) + "podset-preferred-topology");
  const std::string unconstrained = get(std::string(kKueuePrefix) + "podset-unconstrained-topology");
  const std::string slice_level = get(std::string(kKueuePrefix) + "podset-slice-required-topology");
  const std::string slice_size = get(std::string(kKueuePrefix) + "podset-slice-size");
  const std::string layers = get(std::string(kKueuePrefix) + "podset-slice-required-topology-constraints");
  const std::string kai_required = get("kai.scheduler/topology-required-placement");
  const std::string kai_preferred = get("kai.scheduler/topology-preferred-placement");
  int modes = !required.empty() + !preferred.empty() + (unconstrained == "true");
  if (modes > 1) {
    return fail(ErrorCode::kInvalidArgument,
                where +
                    ": podset-required-topology, podset-preferred-topology and podset-unconstrained-topology "
                    "are mutually exclusive");
  }
  if (!required.empty() || !preferred.empty() || !unconstrained.empty() || !slice_level.empty() ||
      !layers.empty()) {
    format = "kueue";
  } else if (!kai_required.empty() || !kai_preferred.empty()) {
    format = "kai";
  }
  if (!required.empty()) {
    ps.mode = TopologyMode::kRequired;
    ps.level = required;
  } else if (!preferred.empty()) {
    ps.mode = TopologyMode::kPreferred;
    ps.level = preferred;
  } else if (unconstrained == "true") {
    ps.mode = TopologyMode::kUnconstrained;
  } else if (!kai_required.empty()) {
    // KAI's required placement is the widest level allowed; the engine already packs as low as it
    // can, which is what a narrower preferred level asks for.
    ps.mode = TopologyMode::kRequired;
    ps.level = kai_required;
  } else if (!kai_preferred.empty()) {
    ps.mode = TopologyMode::kPreferred;
    ps.level = kai_preferred;
  }
  if (!layers.empty()) {
    json list;
    try {
      list = json::parse(layers);
    } catch (const json::parse_error&) {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": podset-slice-required-topology-constraints is not a JSON list");
    }
    if (!list.is_array()) {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": podset-slice-required-topology-constraints must be a list");
    }
    for (const auto& l : list) {
      auto size = integer(l, "size", 0, where + " slice constraint");
      if (!size) return std::unexpected(size.error());
      ps.slices.push_back({str(l, "topology"), static_cast<std::int32_t>(*size)});
    }
  } else if (!slice_level.empty()) {
    if (slice_size.empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": slice topology requested, but slice size not provided");
    }
    std::int32_t size = 0;
    try {
      size = std::stoi(slice_size);
    } catch (const std::exception&) {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": podset-slice-size '" + slice_size + "' is not an integer");
    }
    ps.slices.push_back({slice_level, size});
  }
  if (!ps.slices.empty() && ps.mode == TopologyMode::kNone) ps.mode = TopologyMode::kUnconstrained;
  return {};
}

std::expected<LoadedJob, Error> batch_job(const json& doc) {
  LoadedJob out;
  out.format = "batch";
  const json meta = doc.value("metadata", json::object());
  out.request.name = str(meta, "name");
  const std::string where = "Job " + out.request.name;
  const json spec = doc.value("spec", json::object());
  PodSetRequest ps;
  ps.name = "main";
  auto parallelism = integer(spec, "parallelism", 1, where + " spec");
  if (!parallelism) return std::unexpected(parallelism.error());
  ps.count = static_cast<std::int32_t>(*parallelism);
  const json tmpl = spec.value("template", json::object());
  if (auto ok = read_pod_spec(tmpl.value("spec", json::object()), ps, where + " template"); !ok) {
    return std::unexpected(ok.error());
  }
  json annotations = tmpl.value("metadata", json::object()).value("annotations", json::object());
  // KAI puts its topology annotations on the workload itself.
  const json workload_annotations = meta.value("annotations", json::object());
  for (const auto& [k, v] : workload_annotations.items()) {
    if (k.rfind("kai.scheduler/", 0) == 0 && !annotations.contains(k)) annotations[k] = v;
  }
  if (auto ok = topology_annotations(annotations, ps, out.format, where + " template annotations"); !ok) {
    return std::unexpected(ok.error());
  }
  out.request.pod_sets.push_back(std::move(ps));
  return out;
}

std::expected<LoadedJob, Error> kaiwo_job(const json& doc, const std::vector<NodeSpec>& nodes) {
  LoadedJob out;
  out.format = "kaiwo";
  out.request.name = str(doc.value("metadata", json::object()), "name");
  const std::string where = "KaiwoJob " + out.request.name;
  const json spec = doc.value("spec", json::object());
  const std::string vendor = spec.value("gpuVendor", std::string("amd"));
  if (vendor != "amd" && vendor != "nvidia") {
    return fail(ErrorCode::kInvalidArgument,
                where + ": gpuVendor must be amd or nvidia, got '" + vendor + "'");
  }
  const std::string gpu_resource = vendor == "nvidia" ? "nvidia.com/gpu" : "amd.com/gpu";
  auto gpus = integer(spec, "gpus", 0, where);
  auto replicas = integer(spec, "replicas", 0, where);
  auto per_replica = integer(spec, "gpusPerReplica", 0, where);
  if (!gpus) return std::unexpected(gpus.error());
  if (!replicas) return std::unexpected(replicas.error());
  if (!per_replica) return std::unexpected(per_replica.error());
  std::int64_t cluster_gpus = 0;
  std::int64_t min_per_node = std::numeric_limits<std::int64_t>::max();
  for (const auto& n : nodes) {
    auto it = n.allocatable.find(gpu_resource);
    if (it == n.allocatable.end() || it->second <= 0) continue;
    cluster_gpus += it->second;
    min_per_node = std::min(min_per_node, it->second);
  }
  if (min_per_node == std::numeric_limits<std::int64_t>::max()) min_per_node = 0;
  PodSetRequest ps;
  ps.name = "workers";
  const bool ray = spec.value("ray", false);
  if (ray) {
    auto r = kaiwo_replicas(static_cast<int>(*gpus), static_cast<int>(*replicas),
                            static_cast<int>(*per_replica), cluster_gpus, min_per_node);
    if (!r) return std::unexpected(r.error().context(where));
    ps.count = r->replicas;
    ps.per_pod[gpu_resource] = r->gpus_per_replica;
  } else {
    ps.count = 1;
    std::int64_t g = *gpus > 0 ? *gpus : *per_replica;
    if (g > 0) ps.per_pod[gpu_resource] = g;
  }
  auto extra = quantities(spec.value("resources", json::object()).value("requests", json::object()),
                          where + " spec.resources.requests");
  if (!extra) return std::unexpected(extra.error());
  for (const auto& [k, v] : *extra) ps.per_pod.emplace(k, v);
  const std::string required = str(spec, "requiredTopologyLabel");
  const std::string preferred = str(spec, "preferredTopologyLabel");
  if (!required.empty()) {
    ps.mode = TopologyMode::kRequired;
    ps.level = required;
  } else if (!preferred.empty()) {
    ps.mode = TopologyMode::kPreferred;
    ps.level = preferred;
  } else {
    ps.mode = TopologyMode::kUnconstrained;
  }
  out.request.pod_sets.push_back(std::move(ps));
  return out;
}

std::expected<LoadedJob, Error> neutral_request(const json& doc) {
  LoadedJob out;
  out.format = "neutral";
  out.request.name = doc.value("name", str(doc.value("metadata", json::object()), "name"));
  const json sets = doc.value("podSets", json::array());
  if (sets.empty())
    return fail(ErrorCode::kInvalidArgument, "PlacementRequest " + out.request.name + ": podSets is empty");
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const json& s = sets[i];
    PodSetRequest ps;
    ps.name = str(s, "name");
    const std::string where = "PlacementRequest podSets[" + std::to_string(i) + "]";
    auto count = integer(s, "count", 0, where);
    if (!count) return std::unexpected(count.error());
    ps.count = static_cast<std::int32_t>(*count);
    auto req = quantities(s.value("requests", json::object()), where + " requests");
    if (!req) return std::unexpected(req.error());
    ps.per_pod = std::move(*req);
    if (s.contains("nodeSelector") && s["nodeSelector"].is_object()) {
      for (const auto& [k, v] : s["nodeSelector"].items())
        ps.node_selector[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
    ps.tolerations = tolerations(s.value("tolerations", json::array()));
    const json topo = s.value("topology", json::object());
    const std::string mode = topo.value("mode", std::string("none"));
    if (mode == "required") {
      ps.mode = TopologyMode::kRequired;
    } else if (mode == "preferred") {
      ps.mode = TopologyMode::kPreferred;
    } else if (mode == "unconstrained") {
      ps.mode = TopologyMode::kUnconstrained;
    } else if (mode != "none") {
      return fail(
          ErrorCode::kInvalidArgument,
          where + ": topology.mode must be required, preferred, unconstrained or none, got '" + mode + "'");
    }
    if (topo.contains("level")) {
      ps.level = topo["level"].is_string() ? topo["level"].get<std::string>() : topo["level"].dump();
    }
    for (const auto& l : s.value("slices", json::array())) {
      auto size = integer(l, "size", 0, where + " slices");
      if (!size) return std::unexpected(size.error());
      std::string level =
          l.contains("level") && !l["level"].is_string() ? l["level"].dump() : str(l, "level");
      ps.slices.push_back({level, static_cast<std::int32_t>(*size)});
    }
    if (s.contains("partitions") && s["partitions"].is_object()) {
      const json& p = s["partitions"];
      PartitionRequest part;
      auto total = integer(p, "total", 0, where + " partitions");
      auto size = integer(p, "size", 0, where + " partitions");
      if (!total) return std::unexpected(total.error());
      if (!size) return std::unexpected(size.error());
      auto min = integer(p, "min", *total, where + " partitions");
      if (!min) return std::unexpected(min.error());
      part.total = static_cast<std::int32_t>(*total);
      part.size = static_cast<std::int32_t>(*size);
      part.min = static_cast<std::int32_t>(*min);
      part.level = p.contains("level") && !p["level"].is_string() ? p["level"].dump() : str(p, "level");
      ps.partitions = part;
      if (ps.mode == TopologyMode::kNone) ps.mode = TopologyMode::kUnconstrained;
    }
    if (!ps.slices.empty() && ps.mode == TopologyMode::kNone) ps.mode = TopologyMode::kUnconstrained;
    out.request.pod_sets.push_back(std::move(ps));
  }
  return out;
}

}  // namespace

std::expected<KaiwoReplicas, Error> kaiwo_replicas(int gpus, int replicas, int gpus_per_replica,
                                                   std::int64_t cluster_gpus,
                                                   std::int64_t min_gpus_per_node) {
  if (replicas > 0 && gpus_per_replica > 0 &&
      static_cast<std::int64_t>(replicas) * gpus_per_replica <= cluster_gpus) {
    return KaiwoReplicas{replicas, gpus_per_replica};
  }
  if (gpus <= 0) {
    return fail(ErrorCode::kInvalidArgument,
                "gpus must be set when replicas x gpusPerReplica is not given or exceeds the cluster's " +
                    std::to_string(cluster_gpus) + " GPUs");
  }
  if (min_gpus_per_node <= 0)
    return fail(ErrorCode::kInvalidArgument, "no node offers GPUs of the requested vendor");
  const std::int64_t r = (gpus + min_gpus_per_node - 1) / min_gpus_per_node;
  return KaiwoReplicas{static_cast<int>(r), static_cast<int>(gpus / r)};
}

std::expected<LoadedJob, Error> parse_job(const json& doc, const std::vector<NodeSpec>& nodes) {
  if (!doc.is_object()) return fail(ErrorCode::kParse, "expected a job object");
  const std::string api = str(doc, "apiVersion");
  const std::string kind = str(doc, "kind");
  if (api.rfind("batch.volcano.sh/", 0) == 0 && kind == "Job") return volcano_job(doc);
  if (api.rfind("kaiwo.silogen.ai/", 0) == 0 && kind == "KaiwoJob") return kaiwo_job(doc, nodes);
  if (api == "batch/v1" && kind == "Job") return batch_job(doc);
  if (kind == "PlacementRequest" || doc.contains("podSets")) return neutral_request(doc);
  return fail(ErrorCode::kInvalidArgument,
              "unsupported job kind '" + kind + "' (apiVersion '" + api +
                  "'): expected a Volcano Job, batch/v1 Job, KaiwoJob or PlacementRequest");
}

std::expected<LoadedJob, Error> load_job(const std::filesystem::path& path,
                                         const std::vector<NodeSpec>& nodes) {
  auto doc = read_document(path);
  if (!doc) return std::unexpected(doc.error());
  auto job = parse_job(*doc, nodes);
  if (!job) return std::unexpected(job.error().context(path.string()));
  return job;
}

}  // namespace hypertopo::scheduler
