#include "scheduler/input/job_loader.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>

#include "io/json_fields.h"
#include "io/json_integer.h"
#include "io/json_writer.h"
#include "io/object_reader.h"
#include "scheduler/index/quantity.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/coscheduling_pod_group.h"
#include "scheduler/input/kai_pod_group.h"
#include "scheduler/input/leader_worker_jobs.h"
#include "scheduler/input/pod_request.h"
#include "scheduler/input/volcano_pod_group.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

constexpr const char* kKueuePrefix = "kueue.x-k8s.io/";

using io::bounded_integer;
using io::list_at;
using io::object_at;
using io::str_at;

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

// obj[key] when it has the expected JSON type; absent or null gives an empty value of that type.
// A wrong type is an error naming the key, never nlohmann's type_error.
std::expected<json, Error> typed_field(const json& obj, const char* key, json::value_t type,
                                       const std::string& where) {
  const json empty = type == json::value_t::array ? json::array() : json::object();
  if (!obj.is_object()) return empty;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return empty;
  if (it->type() != type) {
    return fail(ErrorCode::kInvalidArgument, where + ": " + key + " must be " +
                                                 (type == json::value_t::array ? "a list" : "an object") +
                                                 ", got " + it->type_name());
  }
  return *it;
}

std::expected<ResourceAmounts, Error> quantities(const json& obj, const std::string& where) {
  ResourceAmounts out;
  if (!obj.is_object()) return out;
  for (const auto& [k, v] : obj.items()) {
    auto q = parse_quantity(k, v.is_string() ? v.get<std::string>() : io::json_text(v));
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
    tol.key = str_at(t, "key");
    tol.value = str_at(t, "value");
    tol.effect = str_at(t, "effect");
    if (!str_at(t, "operator").empty()) tol.op = str_at(t, "operator");
    out.push_back(tol);
  }
  return out;
}

// One NodeSelectorRequirement list (matchExpressions or matchFields) of a term.
std::expected<std::vector<NodeSelectorRequirement>, Error> requirements(const json& term, const char* key,
                                                                        const std::string& where) {
  std::vector<NodeSelectorRequirement> out;
  auto list = typed_field(term, key, json::value_t::array, where);
  if (!list) return std::unexpected(list.error());
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& r = (*list)[i];
    const std::string rw = where + "." + key + "[" + std::to_string(i) + "]";
    if (!r.is_object()) return fail(ErrorCode::kInvalidArgument, rw + " must be an object");
    NodeSelectorRequirement req{str_at(r, "key"), str_at(r, "operator"), {}};
    static const char* const kOps[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    if (std::find(std::begin(kOps), std::end(kOps), req.op) == std::end(kOps)) {
      return fail(ErrorCode::kInvalidArgument,
                  rw + ".operator must be In, NotIn, Exists, DoesNotExist, Gt or Lt, got '" + req.op + "'");
    }
    auto values = typed_field(r, "values", json::value_t::array, rw);
    if (!values) return std::unexpected(values.error());
    for (const auto& v : *values) {
      if (!v.is_string()) return fail(ErrorCode::kInvalidArgument, rw + ".values must be strings");
      req.values.push_back(v.get<std::string>());
    }
    out.push_back(std::move(req));
  }
  return out;
}

std::expected<NodeSelectorTerm, Error> selector_term(const json& term, const std::string& where) {
  if (!term.is_object()) return fail(ErrorCode::kInvalidArgument, where + " must be an object");
  NodeSelectorTerm out;
  auto exprs = requirements(term, "matchExpressions", where);
  if (!exprs) return std::unexpected(exprs.error());
  auto fields = requirements(term, "matchFields", where);
  if (!fields) return std::unexpected(fields.error());
  out.match_expressions = std::move(*exprs);
  out.match_fields = std::move(*fields);
  return out;
}

// spec.affinity.nodeAffinity (core/v1 NodeAffinity).
std::expected<NodeAffinity, Error> node_affinity(const json& spec, const std::string& where) {
  NodeAffinity out;
  auto affinity = typed_field(spec, "affinity", json::value_t::object, where + " spec");
  if (!affinity) return std::unexpected(affinity.error());
  const std::string aw = where + " spec.affinity.nodeAffinity";
  auto na = typed_field(*affinity, "nodeAffinity", json::value_t::object, where + " spec.affinity");
  if (!na) return std::unexpected(na.error());
  auto required =
      typed_field(*na, "requiredDuringSchedulingIgnoredDuringExecution", json::value_t::object, aw);
  if (!required) return std::unexpected(required.error());
  if (na->contains("requiredDuringSchedulingIgnoredDuringExecution") &&
      !(*na)["requiredDuringSchedulingIgnoredDuringExecution"].is_null()) {
    out.has_required = true;
    const std::string rw = aw + ".requiredDuringSchedulingIgnoredDuringExecution";
    auto terms = typed_field(*required, "nodeSelectorTerms", json::value_t::array, rw);
    if (!terms) return std::unexpected(terms.error());
    for (std::size_t i = 0; i < terms->size(); ++i) {
      auto t = selector_term((*terms)[i], rw + ".nodeSelectorTerms[" + std::to_string(i) + "]");
      if (!t) return std::unexpected(t.error());
      out.required.push_back(std::move(*t));
    }
  }
  auto preferred =
      typed_field(*na, "preferredDuringSchedulingIgnoredDuringExecution", json::value_t::array, aw);
  if (!preferred) return std::unexpected(preferred.error());
  for (std::size_t i = 0; i < preferred->size(); ++i) {
    const json& p = (*preferred)[i];
    const std::string pw = aw + ".preferredDuringSchedulingIgnoredDuringExecution[" + std::to_string(i) + "]";
    if (!p.is_object()) return fail(ErrorCode::kInvalidArgument, pw + " must be an object");
    auto weight = bounded_integer(p, "weight", 0, pw, 0, 100);
    if (!weight) return std::unexpected(weight.error());
    auto t = selector_term(p.value("preference", json::object()), pw + ".preference");
    if (!t) return std::unexpected(t.error());
    out.preferred.push_back({static_cast<std::int32_t>(*weight), std::move(*t)});
  }
  return out;
}

}  // namespace

std::expected<void, Error> read_pod_spec(const json& spec, PodSetRequest& ps, const std::string& where) {
  if (spec.is_null()) return {};
  if (!spec.is_object()) return fail(ErrorCode::kInvalidArgument, where + ": the pod spec must be an object");
  ResourceAmounts sum;
  auto containers = typed_field(spec, "containers", json::value_t::array, where + " spec");
  if (!containers) return std::unexpected(containers.error());
  for (std::size_t i = 0; i < containers->size(); ++i) {
    const json& c = (*containers)[i];
    const std::string cw = where + " spec.containers[" + std::to_string(i) + "]";
    if (!c.is_object()) return fail(ErrorCode::kInvalidArgument, cw + " must be an object");
    auto resources = typed_field(c, "resources", json::value_t::object, cw);
    if (!resources) return std::unexpected(resources.error());
    auto requests = typed_field(*resources, "requests", json::value_t::object, cw + ".resources");
    if (!requests) return std::unexpected(requests.error());
    auto r = quantities(*requests, where + " container " + str_at(c, "name") + " resources.requests");
    if (!r) return std::unexpected(r.error());
    for (const auto& [k, v] : *r) sum[k] += v;
  }
  ps.per_pod = std::move(sum);
  auto selector = typed_field(spec, "nodeSelector", json::value_t::object, where + " spec");
  if (!selector) return std::unexpected(selector.error());
  for (const auto& [k, v] : selector->items()) {
    if (!v.is_string())
      return fail(ErrorCode::kInvalidArgument, where + " spec.nodeSelector." + k + " must be a string");
    ps.node_selector[k] = v.get<std::string>();
  }
  auto tols = typed_field(spec, "tolerations", json::value_t::array, where + " spec");
  if (!tols) return std::unexpected(tols.error());
  for (std::size_t i = 0; i < tols->size(); ++i) {
    if (!(*tols)[i].is_object()) {
      return fail(ErrorCode::kInvalidArgument,
                  where + " spec.tolerations[" + std::to_string(i) + "] must be an object");
    }
  }
  ps.tolerations = tolerations(*tols);
  auto affinity = node_affinity(spec, where);
  if (!affinity) return std::unexpected(affinity.error());
  ps.affinity = std::move(*affinity);
  return {};
}

namespace {

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
    auto tier = bounded_integer(nt, "highestTierAllowed", 0, where);
    if (!tier) return std::unexpected(tier.error());
    if (*tier < 0)
      return fail(ErrorCode::kInvalidArgument, where + ": highestTierAllowed must not be negative");
    ps.level = std::to_string(*tier);
  } else if (has_name) {
    ps.level = str_at(nt, "highestTierName");
  }
  return {};
}

std::expected<LoadedJob, Error> volcano_job(const json& doc) {
  LoadedJob out;
  out.format = "volcano";
  out.request.name = str_at(doc.value("metadata", json::object()), "name");
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
    ps.name = str_at(task, "name");
    const std::string tw = where + " task " + (ps.name.empty() ? std::to_string(i) : ps.name);
    auto replicas = bounded_integer(task, "replicas", 1, tw, 1);
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
      auto total = bounded_integer(pp, "totalPartitions", 0, tw + " partitionPolicy", 1);
      auto size = bounded_integer(pp, "partitionSize", 0, tw + " partitionPolicy", 1);
      if (!total) return std::unexpected(total.error());
      if (!size) return std::unexpected(size.error());
      auto min = bounded_integer(pp, "minPartitions", *total, tw + " partitionPolicy", 1, *total);
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
    // Volcano TaskSpec.minAvailable: the task starts with at least this many of its replicas.
    auto task_min = bounded_integer(task, "minAvailable", 0, tw, 0, ps.count);
    if (!task_min) return std::unexpected(task_min.error());
    if (*task_min > 0 && *task_min < ps.count) ps.min_count = static_cast<std::int32_t>(*task_min);
    out.request.pod_sets.push_back(std::move(ps));
  }
  // Volcano JobSpec.minAvailable: the job starts when that many pods run. With one task it is that
  // task's minimum; with several, Volcano's gang plugin counts them together, which a per-task
  // minimum cannot say, so the job is placed whole (the note in docs/placement.md).
  std::int64_t total = 0;
  for (const auto& ps : out.request.pod_sets) total += ps.count;
  auto job_min = bounded_integer(spec, "minAvailable", 0, where + " spec", 0, total);
  if (!job_min) return std::unexpected(job_min.error());
  if (*job_min > 0 && *job_min < total && out.request.pod_sets.size() == 1 &&
      !out.request.pod_sets.front().partitions && out.request.pod_sets.front().min_count == 0) {
    out.request.pod_sets.front().min_count = static_cast<std::int32_t>(*job_min);
  }
  return out;
}

}  // namespace

std::expected<void, Error> topology_annotations(const json& annotations, PodSetRequest& ps,
                                                std::string& format, const std::string& where) {
  auto get = [&](const std::string& key) { return str_at(annotations, key.c_str()); };
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
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& l = list[i];
      const std::string lw =
          where + ": podset-slice-required-topology-constraints[" + std::to_string(i) + "]";
      if (!l.is_object())
        return fail(ErrorCode::kInvalidArgument, lw + " must be an object {topology, size}");
      // Kueue's constraint has no default size: a missing one is an error, not a slice of 0.
      if (!l.contains("size") || l["size"].is_null())
        return fail(ErrorCode::kInvalidArgument, lw + ": size is required (the pods per slice)");
      auto size = bounded_integer(l, "size", 0, lw, 1, std::max<std::int64_t>(ps.count, 1));
      if (!size) return std::unexpected(size.error());
      if (str_at(l, "topology").empty())
        return fail(ErrorCode::kInvalidArgument, lw + ": topology must be a level label");
      if (i == 0 && ps.count % *size != 0) {
        return fail(ErrorCode::kInvalidArgument, lw + ": size " + std::to_string(*size) +
                                                     " does not divide the pod count " +
                                                     std::to_string(ps.count));
      }
      ps.slices.push_back({str_at(l, "topology"), static_cast<std::int32_t>(*size)});
    }
  } else if (!slice_level.empty()) {
    if (slice_size.empty() && !get(std::string(kKueuePrefix) + "podset-group-name").empty()) {
      // In a leader + workers group Kueue slices by the workers' annotations alone; a leader may
      // carry the slice level without a size. Size 0 leaves the decision to the Kueue placement.
      ps.slices.push_back({slice_level, 0});
    } else if (slice_size.empty()) {
      return fail(
          ErrorCode::kInvalidArgument,
          where +
              ": slice topology requested, but slice size not provided (kueue.x-k8s.io/podset-slice-size)");
    } else {
      std::int64_t size = 0;
      auto [ptr, ec] = std::from_chars(slice_size.data(), slice_size.data() + slice_size.size(), size);
      if (ec != std::errc() || ptr != slice_size.data() + slice_size.size() || size < 1 || size > kInt32Max) {
        return fail(ErrorCode::kInvalidArgument,
                    where + ": kueue.x-k8s.io/podset-slice-size must be a positive integer, got '" +
                        slice_size + "'");
      }
      if (ps.count > 0 && ps.count % size != 0) {
        return fail(ErrorCode::kInvalidArgument, where + ": kueue.x-k8s.io/podset-slice-size " + slice_size +
                                                     " does not divide the pod count " +
                                                     std::to_string(ps.count));
      }
      ps.slices.push_back({slice_level, static_cast<std::int32_t>(size)});
    }
  }
  if (!ps.slices.empty() && ps.mode == TopologyMode::kNone) ps.mode = TopologyMode::kUnconstrained;
  return {};
}

namespace {

std::expected<LoadedJob, Error> batch_job(const json& doc) {
  LoadedJob out;
  out.format = "batch";
  const json meta = doc.value("metadata", json::object());
  out.request.name = str_at(meta, "name");
  const std::string where = "Job " + out.request.name;
  const json spec = doc.value("spec", json::object());
  PodSetRequest ps;
  ps.name = "main";
  auto parallelism = bounded_integer(spec, "parallelism", 1, where + " spec", 1);
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
  if (out.format == "kai") {
    // KAI's pod grouper makes the Job one PodGroup whose topology constraint is these annotations
    // (kai-scheduler/KAI-Scheduler pkg/podgrouper/podgrouper/plugins/defaultgrouper/default_grouper.go,
    // GetPodGroupMetadata): placed as a KAI PodGroup without sub-groups is, in KAI's domain order
    // (scheduler/placement/sub_group_placement.h). The pod set keeps its mode for preemption.
    out.request.job_required = str_at(annotations, "kai.scheduler/topology-required-placement");
    out.request.job_preferred = str_at(annotations, "kai.scheduler/topology-preferred-placement");
  }
  out.request.pod_sets.push_back(std::move(ps));
  return out;
}

// A JobSet (jobset.x-k8s.io): one pod set per replicatedJob, replicas x parallelism pods, Kueue
// annotations on each pod template; kueue.x-k8s.io/podset-group-name joins leader and workers.
std::expected<LoadedJob, Error> jobset(const json& doc) {
  LoadedJob out;
  out.format = "batch";
  const json meta = doc.value("metadata", json::object());
  out.request.name = str_at(meta, "name");
  const std::string where = "JobSet " + out.request.name;
  const json spec = doc.value("spec", json::object());
  const json& jobs = spec.is_object() && spec.contains("replicatedJobs") ? spec["replicatedJobs"] : json();
  if (!jobs.is_array() || jobs.empty())
    return fail(ErrorCode::kInvalidArgument, where + ": spec.replicatedJobs must be a non-empty list");
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const json& rj = jobs[i];
    const std::string rw = where + " spec.replicatedJobs[" + std::to_string(i) + "]";
    if (!rj.is_object()) return fail(ErrorCode::kInvalidArgument, rw + " must be an object");
    PodSetRequest ps;
    ps.name = str_at(rj, "name");
    if (ps.name.empty()) return fail(ErrorCode::kInvalidArgument, rw + ": name is required");
    auto replicas = bounded_integer(rj, "replicas", 1, rw, 1);
    if (!replicas) return std::unexpected(replicas.error());
    const json job_tmpl = rj.value("template", json::object());
    const json job_spec = job_tmpl.is_object() ? job_tmpl.value("spec", json::object()) : json::object();
    if (!job_spec.is_object())
      return fail(ErrorCode::kInvalidArgument, rw + ": template.spec must be an object");
    auto parallelism = bounded_integer(job_spec, "parallelism", 1, rw + " template.spec", 1);
    if (!parallelism) return std::unexpected(parallelism.error());
    if (*replicas * *parallelism > kInt32Max) {
      return fail(ErrorCode::kInvalidArgument,
                  rw + ": replicas x parallelism is above " + std::to_string(kInt32Max));
    }
    ps.count = static_cast<std::int32_t>(*replicas * *parallelism);
    const json pod_tmpl = job_spec.value("template", json::object());
    if (!pod_tmpl.is_object())
      return fail(ErrorCode::kInvalidArgument, rw + ": template.spec.template must be an object");
    if (auto ok = read_pod_spec(pod_tmpl.value("spec", json::object()), ps, rw); !ok)
      return std::unexpected(ok.error());
    const json pod_meta = pod_tmpl.value("metadata", json::object());
    const json annotations =
        pod_meta.is_object() ? pod_meta.value("annotations", json::object()) : json::object();
    std::string format = out.format;
    if (auto ok = topology_annotations(annotations, ps, format, rw + " pod template annotations"); !ok)
      return std::unexpected(ok.error());
    if (format != "batch") out.format = format;
    if (const std::string g = str_at(annotations, "kueue.x-k8s.io/podset-group-name"); !g.empty())
      ps.group = g;
    out.request.pod_sets.push_back(std::move(ps));
  }
  return out;
}

// The upstream kube-scheduler's topology-aware workload scheduling (KEP-5732): a
// scheduling.k8s.io/v1alpha2 PodGroup with schedulingPolicy.gang.minCount pods, all inside one
// domain of the node label schedulingConstraints.topology[0].key. The PodGroup carries no pod
// spec: `pod` (a Pod of the group, or null) gives the per-pod requests, selector and tolerations.
std::expected<LoadedJob, Error> kep5732_pod_group(const json& doc, const json& pod) {
  LoadedJob out;
  out.format = "podgroup";
  const json meta = doc.value("metadata", json::object());
  out.request.name = str_at(meta, "name");
  const std::string where = "PodGroup " + out.request.name;
  auto spec = typed_field(doc, "spec", json::value_t::object, where);
  if (!spec) return std::unexpected(spec.error());
  auto policy = typed_field(*spec, "schedulingPolicy", json::value_t::object, where + " spec");
  if (!policy) return std::unexpected(policy.error());
  auto gang = typed_field(*policy, "gang", json::value_t::object, where + " spec.schedulingPolicy");
  if (!gang) return std::unexpected(gang.error());
  if (gang->empty() || !gang->contains("minCount")) {
    return fail(ErrorCode::kInvalidArgument, where + ": spec.schedulingPolicy.gang.minCount is required");
  }
  auto count = bounded_integer(*gang, "minCount", 0, where + " spec.schedulingPolicy.gang", 1);
  if (!count) return std::unexpected(count.error());
  PodSetRequest ps;
  ps.name = out.request.name.empty() ? "gang" : out.request.name;
  ps.count = static_cast<std::int32_t>(*count);
  ps.mode = TopologyMode::kUnconstrained;
  auto constraints = typed_field(*spec, "schedulingConstraints", json::value_t::object, where + " spec");
  if (!constraints) return std::unexpected(constraints.error());
  auto topology =
      typed_field(*constraints, "topology", json::value_t::array, where + " spec.schedulingConstraints");
  if (!topology) return std::unexpected(topology.error());
  if (topology->size() > 1) {
    return fail(ErrorCode::kInvalidArgument, where + ": spec.schedulingConstraints.topology lists " +
                                                 std::to_string(topology->size()) +
                                                 " levels; one is supported (as in Kubernetes 1.36)");
  }
  if (topology->size() == 1) {
    const json& level = (*topology)[0];
    if (!level.is_object() || str_at(level, "key").empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": spec.schedulingConstraints.topology[0].key must name a node label");
    }
    ps.mode = TopologyMode::kRequired;
    ps.level = str_at(level, "key");
  }
  if (!pod.is_null()) {
    const std::string pw = "Pod " + str_at(pod.value("metadata", json::object()), "name");
    if (auto ok = read_pod_spec(pod.value("spec", json::object()), ps, pw); !ok)
      return std::unexpected(ok.error());
  }
  out.request.pod_sets.push_back(std::move(ps));
  return out;
}

// Kubeflow's PyTorchJob (kubeflow.org/v1, kubeflow/training-operator pkg/apis/kubeflow.org/v1
// pytorch_types.go): spec.pytorchReplicaSpecs.{Master,Worker}, each `replicas` pods of its
// `template`. The operator makes them one gang (one PodGroup, minMember = every replica) and numbers
// them as the extender reads them (pod_request.h pod_index: env RANK, the master 0 and worker i
// rank i + 1): pod set Master, then Worker. Each template is read as the extender reads one of its
// pods (pod_set_request): requests, selector, tolerations and the gang's topology annotations, which
// bind the whole job, as every pod of the gang carries them.
std::expected<LoadedJob, Error> pytorch_job(const json& doc) {
  LoadedJob out;
  out.format = "pytorch";
  out.request.name = str_at(doc.value("metadata", json::object()), "name");
  const std::string where = "PyTorchJob " + out.request.name;
  auto spec = typed_field(doc, "spec", json::value_t::object, where);
  if (!spec) return std::unexpected(spec.error());
  auto replicas = typed_field(*spec, "pytorchReplicaSpecs", json::value_t::object, where + " spec");
  if (!replicas) return std::unexpected(replicas.error());
  for (const auto& [type, rs] : replicas->items()) {
    if (type != "Master" && type != "Worker") {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": spec.pytorchReplicaSpecs." + type + ": a replica type is Master or Worker");
    }
  }
  for (const char* type : {"Master", "Worker"}) {
    if (!replicas->contains(type)) continue;
    const std::string rw = where + " spec.pytorchReplicaSpecs." + type;
    const json& rs = (*replicas)[type];
    if (!rs.is_object()) return fail(ErrorCode::kInvalidArgument, rw + " must be an object");
    auto count = bounded_integer(rs, "replicas", 1, rw, 0);
    if (!count) return std::unexpected(count.error());
    if (*count == 0) continue;
    auto tmpl = typed_field(rs, "template", json::value_t::object, rw);
    if (!tmpl) return std::unexpected(tmpl.error());
    auto meta = typed_field(*tmpl, "metadata", json::value_t::object, rw + " template");
    if (!meta) return std::unexpected(meta.error());
    auto pod_spec = typed_field(*tmpl, "spec", json::value_t::object, rw + " template");
    if (!pod_spec) return std::unexpected(pod_spec.error());
    json pod{{"metadata", *meta}, {"spec", *pod_spec}};
    pod["metadata"]["name"] = out.request.name + "-" + (type[0] == 'M' ? "master" : "worker");
    auto ps = pod_set_request(pod, static_cast<std::int32_t>(*count), /*gang=*/true);
    if (!ps) return std::unexpected(ps.error());
    ps->name = type;
    if (auto joined = join_replica(out.request, std::move(*ps), where, "Master and Worker"); !joined)
      return std::unexpected(joined.error());
  }
  if (out.request.pod_sets.empty())
    return fail(ErrorCode::kInvalidArgument,
                where + ": spec.pytorchReplicaSpecs has no Master or Worker replicas");
  constrain_replicas(out.request);
  return out;
}

bool is_kep5732_pod_group(const json& doc) {
  return doc.is_object() && str_at(doc, "apiVersion").starts_with("scheduling.k8s.io/") &&
         str_at(doc, "kind") == "PodGroup";
}

// A List holding a KEP-5732 PodGroup and its Pods: those naming it in
// spec.schedulingGroup.podGroupName (how kube-scheduler's GangScheduling plugin finds them), or one
// Pod naming none, the group's template in a what-if. The first Pod gives the per-pod requests.
// Members fewer than spec.schedulingPolicy.gang.minCount wait: the plugin holds a gang's pods until
// all of them are created and observed (KEP-4671, kubernetes/enhancements
// keps/sig-scheduling/4671-gang-scheduling: "blocked on all pods from a gang to be created").
std::expected<LoadedJob, Error> pod_group_list(const json& doc) {
  const json& items = doc["items"];
  const json* group = nullptr;
  std::vector<const json*> pods;
  for (const auto& item : items) {
    if (is_kep5732_pod_group(item)) {
      if (group) return fail(ErrorCode::kInvalidArgument, "the List holds more than one PodGroup");
      group = &item;
    } else if (item.is_object() && str_at(item, "kind") == "Pod") {
      pods.push_back(&item);
    } else {
      return fail(ErrorCode::kInvalidArgument, "a List for a PodGroup holds only the PodGroup and its Pods");
    }
  }
  if (!group) return fail(ErrorCode::kInvalidArgument, "the List holds no scheduling.k8s.io PodGroup");
  const json meta = group->value("metadata", json::object());
  const std::string name = str_at(meta, "name");
  std::size_t members = 0;
  for (const json* pod : pods) {
    const json spec = pod->value("spec", json::object());
    const json ref = spec.is_object() ? spec.value("schedulingGroup", json::object()) : json::object();
    const std::string named = str_at(ref, "podGroupName");
    const std::string who = "Pod " + str_at(pod->value("metadata", json::object()), "name");
    if (!named.empty() && named != name) {
      return fail(ErrorCode::kInvalidArgument, who + ": spec.schedulingGroup.podGroupName names " + named +
                                                   ", not the List's PodGroup " + name);
    }
    if (named.empty() && pods.size() > 1) {
      return fail(ErrorCode::kInvalidArgument,
                  who + ": spec.schedulingGroup.podGroupName is not set; the Pods of PodGroup " + name +
                      " name it there (one Pod naming none is read as the group's template)");
    }
    if (!named.empty()) ++members;
  }
  auto job = kep5732_pod_group(*group, pods.empty() ? json() : *pods.front());
  if (!job || members == 0) return job;
  if (const std::int32_t count = job->request.pod_sets.front().count;
      static_cast<std::int64_t>(members) < count) {
    const std::string ns = str_at(meta, "namespace");
    job->waits = gang_waits_for_pods(ns.empty() ? name : ns + "/" + name, members, count, false);
  }
  return job;
}

std::expected<LoadedJob, Error> kaiwo_job(const json& doc, const std::vector<NodeSpec>& nodes) {
  LoadedJob out;
  out.format = "kaiwo";
  out.request.name = str_at(doc.value("metadata", json::object()), "name");
  const std::string where = "KaiwoJob " + out.request.name;
  const json spec = doc.value("spec", json::object());
  if (auto it = spec.find("gpuVendor"); it != spec.end() && !it->is_null() && !it->is_string())
    return fail(ErrorCode::kInvalidArgument,
                where + " spec: gpuVendor must be a string, got " + io::json_text(*it));
  const std::string vendor = str_at(spec, "gpuVendor").empty() ? "amd" : str_at(spec, "gpuVendor");
  if (vendor != "amd" && vendor != "nvidia") {
    return fail(ErrorCode::kInvalidArgument,
                where + ": gpuVendor must be amd or nvidia, got '" + vendor + "'");
  }
  const std::string gpu_resource = vendor == "nvidia" ? "nvidia.com/gpu" : "amd.com/gpu";
  auto gpus = bounded_integer(spec, "gpus", 0, where + " spec");
  auto replicas = bounded_integer(spec, "replicas", 0, where + " spec");
  auto per_replica = bounded_integer(spec, "gpusPerReplica", 0, where + " spec");
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
  auto ray_it = spec.find("ray");
  if (ray_it != spec.end() && !ray_it->is_null() && !ray_it->is_boolean())
    return fail(ErrorCode::kInvalidArgument,
                where + " spec: ray must be true or false, got " + io::json_text(*ray_it));
  const bool ray = ray_it != spec.end() && ray_it->is_boolean() && ray_it->get<bool>();
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
  const std::string required = str_at(spec, "requiredTopologyLabel");
  const std::string preferred = str_at(spec, "preferredTopologyLabel");
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
  if (auto it = doc.find("name"); it != doc.end() && !it->is_null() && !it->is_string())
    return fail(ErrorCode::kInvalidArgument,
                "PlacementRequest: name must be a string, got " + io::json_text(*it));
  out.request.name = str_at(doc, "name").empty() ? str_at(doc.value("metadata", json::object()), "name")
                                                 : str_at(doc, "name");
  const json sets = doc.value("podSets", json::array());
  if (sets.empty())
    return fail(ErrorCode::kInvalidArgument, "PlacementRequest " + out.request.name + ": podSets is empty");
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const json& s = sets[i];
    PodSetRequest ps;
    ps.name = str_at(s, "name");
    const std::string where = "PlacementRequest podSets[" + std::to_string(i) + "]";
    auto count = bounded_integer(s, "count", 0, where, 1);
    if (!count) return std::unexpected(count.error());
    ps.count = static_cast<std::int32_t>(*count);
    auto req = quantities(s.value("requests", json::object()), where + " requests");
    if (!req) return std::unexpected(req.error());
    ps.per_pod = std::move(*req);
    if (s.contains("nodeSelector") && s["nodeSelector"].is_object()) {
      for (const auto& [k, v] : s["nodeSelector"].items())
        ps.node_selector[k] = v.is_string() ? v.get<std::string>() : io::json_text(v);
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
      ps.level = topo["level"].is_string() ? topo["level"].get<std::string>() : io::json_text(topo["level"]);
    }
    for (const auto& l : s.value("slices", json::array())) {
      auto size = bounded_integer(l, "size", 0, where + " slices", 1);
      if (!size) return std::unexpected(size.error());
      std::string level =
          l.contains("level") && !l["level"].is_string() ? io::json_text(l["level"]) : str_at(l, "level");
      ps.slices.push_back({level, static_cast<std::int32_t>(*size)});
    }
    if (s.contains("partitions") && s["partitions"].is_object()) {
      const json& p = s["partitions"];
      PartitionRequest part;
      auto total = bounded_integer(p, "total", 0, where + " partitions", 1);
      auto size = bounded_integer(p, "size", 0, where + " partitions", 1);
      if (!total) return std::unexpected(total.error());
      if (!size) return std::unexpected(size.error());
      auto min = bounded_integer(p, "min", *total, where + " partitions", 1, *total);
      if (!min) return std::unexpected(min.error());
      part.total = static_cast<std::int32_t>(*total);
      part.size = static_cast<std::int32_t>(*size);
      part.min = static_cast<std::int32_t>(*min);
      part.level =
          p.contains("level") && !p["level"].is_string() ? io::json_text(p["level"]) : str_at(p, "level");
      ps.partitions = part;
      if (ps.mode == TopologyMode::kNone) ps.mode = TopologyMode::kUnconstrained;
    }
    if (!ps.slices.empty() && ps.mode == TopologyMode::kNone) ps.mode = TopologyMode::kUnconstrained;
    out.request.pod_sets.push_back(std::move(ps));
  }
  return out;
}

}  // namespace

std::expected<PriorityRequest, Error> read_priority(const json& spec, const std::string& where) {
  PriorityRequest out;
  out.source = where;
  if (!spec.is_object()) return out;
  if (auto it = spec.find("priority"); it != spec.end() && !it->is_null()) {
    auto v = bounded_integer(spec, "priority", 0, where, std::numeric_limits<std::int32_t>::min(), kInt32Max);
    if (!v) return std::unexpected(v.error());
    out.value = static_cast<std::int32_t>(*v);
  }
  for (auto [key, field] : {std::pair{"priorityClassName", &out.class_name},
                            std::pair{"preemptionPolicy", &out.preemption_policy}}) {
    auto it = spec.find(key);
    if (it == spec.end() || it->is_null()) continue;
    if (!it->is_string())
      return fail(ErrorCode::kInvalidArgument,
                  where + ": " + key + " must be a string, got " + io::json_text(*it));
    *field = it->get<std::string>();
  }
  if (!out.preemption_policy.empty() && out.preemption_policy != "Never" &&
      out.preemption_policy != "PreemptLowerPriority") {
    return fail(ErrorCode::kInvalidArgument,
                where + ": preemptionPolicy must be Never or PreemptLowerPriority, got '" +
                    out.preemption_policy + "'");
  }
  return out;
}

namespace {

// The priority of each pod set's pods, in the order the readers above made the pod sets.
std::expected<std::vector<PriorityRequest>, Error> job_priorities(const json& doc, const LoadedJob& job) {
  std::vector<PriorityRequest> out;
  const std::string api = str_at(doc, "apiVersion");
  const std::string kind = str_at(doc, "kind");
  const std::string name = str_at(object_at(doc, "metadata"), "name");
  const json spec = object_at(doc, "spec");
  auto add = [&](const json& pod_spec, const std::string& where) -> std::expected<PriorityRequest*, Error> {
    auto p = read_priority(pod_spec, where);
    if (!p) return std::unexpected(p.error());
    out.push_back(std::move(*p));
    return &out.back();
  };
  if (job.format == "mpi" || job.format == "lws") return leader_worker_priorities(doc, job);
  if (api.rfind("batch.volcano.sh/", 0) == 0 && kind == "Job") {
    // Volcano's job controller gives each pod the task template's class, else the Job's own
    // (volcano-sh/volcano pkg/controllers/job/job_controller_util.go, createJobPod).
    const json tasks = list_at(spec, "tasks");
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      const std::string task =
          str_at(tasks[i], "name").empty() ? std::to_string(i) : str_at(tasks[i], "name");
      auto p = add(object_at(object_at(tasks[i], "template"), "spec"),
                   "Volcano Job " + name + " task " + task + " template spec");
      if (!p) return std::unexpected(p.error());
      if ((*p)->class_name.empty() && !str_at(spec, "priorityClassName").empty()) {
        (*p)->class_name = str_at(spec, "priorityClassName");
        (*p)->source = "Volcano Job " + name + " spec";
      }
    }
  } else if (api == "batch/v1" && kind == "Job") {
    if (auto p = add(object_at(object_at(spec, "template"), "spec"), "Job " + name + " template spec"); !p)
      return std::unexpected(p.error());
  } else if (api.rfind("jobset.x-k8s.io/", 0) == 0 && kind == "JobSet") {
    const json jobs = list_at(spec, "replicatedJobs");
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const json pod_spec =
          object_at(object_at(object_at(object_at(jobs[i], "template"), "spec"), "template"), "spec");
      if (auto p = add(pod_spec, "JobSet " + name + " spec.replicatedJobs[" + std::to_string(i) +
                                     "].template.spec.template.spec");
          !p)
        return std::unexpected(p.error());
    }
  } else if (job.format == "pytorch") {
    // The operator gives the pods the template's class, else runPolicy.schedulingPolicy's
    // (kubeflow/training-operator pkg/controller.v1/common/job.go, the PodGroup's priorityClassName).
    const json replicas = object_at(spec, "pytorchReplicaSpecs");
    const std::string fallback =
        str_at(object_at(object_at(spec, "runPolicy"), "schedulingPolicy"), "priorityClass");
    for (const auto& ps : job.request.pod_sets) {
      auto p = add(object_at(object_at(object_at(replicas, ps.name.c_str()), "template"), "spec"),
                   "PyTorchJob " + name + " spec.pytorchReplicaSpecs." + ps.name + ".template.spec");
      if (!p) return std::unexpected(p.error());
      if ((*p)->class_name.empty() && !(*p)->value && !fallback.empty()) {
        (*p)->class_name = fallback;
        (*p)->source = "PyTorchJob " + name + " spec.runPolicy.schedulingPolicy";
      }
    }
  } else if (kind == "List") {
    // A PodGroup with its Pods (KEP-5732, KAI, Volcano): the first Pod's spec gives the priority; a
    // Volcano PodGroup's own spec.priorityClassName stands in when the Pod names none.
    PriorityRequest p;
    const json items = list_at(doc, "items");
    for (const auto& item : items) {
      if (!item.is_object() || str_at(item, "kind") != "Pod") continue;
      auto read = read_priority(object_at(item, "spec"),
                                "Pod " + str_at(object_at(item, "metadata"), "name") + " spec");
      if (!read) return std::unexpected(read.error());
      p = std::move(*read);
      break;
    }
    for (const auto& item : items) {
      if (!item.is_object() || !str_at(item, "apiVersion").starts_with("scheduling.volcano.sh/") ||
          str_at(item, "kind") != "PodGroup" || !p.class_name.empty() || p.value)
        continue;
      const std::string group_class = str_at(object_at(item, "spec"), "priorityClassName");
      if (group_class.empty()) continue;
      p.class_name = group_class;
      p.source = "PodGroup " + str_at(object_at(item, "metadata"), "name") + " spec";
    }
    out.assign(job.request.pod_sets.size(), p);
  } else if (job.format == "neutral") {
    auto p = read_priority(doc, "PlacementRequest " + job.request.name);
    if (!p) return std::unexpected(p.error());
    out.assign(job.request.pod_sets.size(), *p);
  }
  out.resize(job.request.pod_sets.size(), PriorityRequest{});
  return out;
}

}  // namespace

namespace {
std::expected<LoadedJob, Error> parse_job_object(const json& doc, const std::vector<NodeSpec>& nodes);
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
  try {
    auto job = parse_job_object(doc, nodes);
    if (!job) return job;
    auto priorities = job_priorities(doc, *job);
    if (!priorities) return std::unexpected(priorities.error());
    job->priorities = std::move(*priorities);
    return job;
  } catch (const json::exception& e) {
    // The readers check the types of the fields they know; this names what one of them missed.
    std::string what = e.what();
    if (auto end = what.find("] "); what.starts_with("[json.exception.") && end != std::string::npos)
      what = what.substr(end + 2);
    return fail(ErrorCode::kInvalidArgument, "a field of the " + str_at(doc, "kind") + " " +
                                                 str_at(doc.value("metadata", json::object()), "name") +
                                                 " has the wrong JSON type: " + what);
  }
}

namespace {
std::expected<LoadedJob, Error> parse_job_object(const json& doc, const std::vector<NodeSpec>& nodes) {
  const std::string api = str_at(doc, "apiVersion");
  const std::string kind = str_at(doc, "kind");
  if (api.rfind("batch.volcano.sh/", 0) == 0 && kind == "Job") return volcano_job(doc);
  if (api.rfind("kaiwo.silogen.ai/", 0) == 0 && kind == "KaiwoJob") return kaiwo_job(doc, nodes);
  if (api == "batch/v1" && kind == "Job") return batch_job(doc);
  if (api.rfind("jobset.x-k8s.io/", 0) == 0 && kind == "JobSet") return jobset(doc);
  if (api.starts_with("kubeflow.org/") && kind == "PyTorchJob") return pytorch_job(doc);
  if (is_mpi_job(doc)) return mpi_job(doc);
  if (is_leader_worker_set(doc)) return leader_worker_set(doc);
  if (is_kep5732_pod_group(doc)) return kep5732_pod_group(doc, json());
  if (is_kai_pod_group_list(doc)) return kai_pod_group_list(doc);
  if (is_volcano_pod_group_list(doc)) return volcano_pod_group_list(doc);
  if (is_coscheduling_pod_group_list(doc)) return coscheduling_pod_group_list(doc);
  if (kind == "List" && doc.contains("items") && doc["items"].is_array()) return pod_group_list(doc);
  if (kind == "PlacementRequest" || doc.contains("podSets")) return neutral_request(doc);
  if (api.starts_with("scheduling.k8s.io/") && kind == "Workload") {
    // KEP-4671's Workload names its gangs in spec.podGroups with no pods of their own; the extender
    // learns their pods from each Pod's spec.workloadRef. KEP-5832 moved the gang into a PodGroup
    // object of its own, which --job reads with its Pods.
    return fail(ErrorCode::kInvalidArgument,
                "a Workload (" + api +
                    ") is not a job --job places: its spec.podGroups hold no pods; give a "
                    "scheduling.k8s.io/v1alpha2 PodGroup, alone or in a List with the Pods that name it in "
                    "spec.schedulingGroup.podGroupName");
  }
  return fail(ErrorCode::kInvalidArgument,
              "unsupported job kind '" + kind + "' (apiVersion '" + api +
                  "'): expected a Volcano Job, batch/v1 Job, JobSet, KaiwoJob, PyTorchJob, MPIJob, "
                  "LeaderWorkerSet, scheduling.k8s.io PodGroup or PlacementRequest");
}

}  // namespace

namespace {

// What an object of a --job file of several documents is: a job placed alone, a part of a gang
// that is placed as a List of its PodGroup and Pods (as one List document is), or neither.
enum class JobPart { kJob, kGangPart, kOther };

JobPart job_part(const json& obj) {
  const std::string api = str_at(obj, "apiVersion");
  const std::string kind = str_at(obj, "kind");
  if ((api.starts_with("batch.volcano.sh/") && kind == "Job") ||
      (api.starts_with("kaiwo.silogen.ai/") && kind == "KaiwoJob") || (api == "batch/v1" && kind == "Job") ||
      (api.starts_with("jobset.x-k8s.io/") && kind == "JobSet") ||
      (api.starts_with("kubeflow.org/") && kind == "PyTorchJob") || is_mpi_job(obj) ||
      is_leader_worker_set(obj) || kind == "PlacementRequest" || (obj.is_object() && obj.contains("podSets")))
    return JobPart::kJob;
  if (kind == "PodGroup" || kind == "Pod") return JobPart::kGangPart;
  return JobPart::kOther;
}

}  // namespace

std::expected<LoadedJob, Error> load_job(const std::filesystem::path& path,
                                         const std::vector<NodeSpec>& nodes, io::ObjectLedger* ledger) {
  auto file = io::read_objects(path);
  if (!file) return std::unexpected(file.error());
  const std::string name = path.string();
  std::vector<std::string> kinds;
  for (const auto& o : file->objects) kinds.push_back(o.kind);
  // One document is one job, a List of a PodGroup and its Pods included; a List of jobs
  // (`kubectl get jobs -o yaml`) is read as its items are.
  const bool list_of_jobs = std::ranges::any_of(file->objects, [](const io::FileObject& o) {
    return o.origin.item && job_part(*o.object) == JobPart::kJob;
  });
  if (file->documents.size() <= 1 && !list_of_jobs) {
    const json none;
    auto job = parse_job(file->documents.empty() ? none : file->documents.front(), nodes);
    if (!job) return std::unexpected(job.error().context(name));
    if (ledger) ledger->record(*file, kinds);
    return job;
  }
  std::vector<const io::FileObject*> jobs, parts;
  kinds.clear();
  for (const auto& o : file->objects) {
    const JobPart part = job_part(*o.object);
    if (part == JobPart::kOther && o.kind.empty())
      return fail(ErrorCode::kInvalidArgument,
                  name + ": " + file->where(o.origin) + ": an object without a kind");
    if (part == JobPart::kOther) continue;
    (part == JobPart::kJob ? jobs : parts).push_back(&o);
    kinds.push_back(o.kind);
  }
  auto places = [&](const std::vector<const io::FileObject*>& of) {
    std::string out;
    for (const auto* o : of) out += (out.empty() ? "" : ", ") + file->where(o->origin);
    return out;
  };
  if (jobs.size() > 1) {
    return fail(ErrorCode::kInvalidArgument,
                name + ": a job in each of " + places(jobs) + "; --job places one");
  }
  if (!jobs.empty() && !parts.empty()) {
    return fail(ErrorCode::kInvalidArgument, name + ": a " + jobs.front()->kind + " (" + places(jobs) +
                                                 ") and PodGroups or Pods (" + places(parts) +
                                                 "); --job places one job, or one PodGroup with its Pods");
  }
  if (jobs.empty() && parts.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                name + ": no job among its " + std::to_string(file->documents.size()) +
                    " documents (it holds " + file->kinds_summary() +
                    "); expected a Volcano Job, batch/v1 Job, JobSet, KaiwoJob, PyTorchJob, MPIJob, "
                    "LeaderWorkerSet, PodGroup with its Pods or PlacementRequest");
  }
  json doc;
  std::string at;
  if (!jobs.empty()) {
    doc = *jobs.front()->object;
    at = file->where(jobs.front()->origin);
  } else {
    // A gang's PodGroup and Pods in documents of their own read as the List that holds them.
    doc = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", json::array()}};
    for (const auto* o : parts) doc["items"].push_back(*o->object);
    at = places(parts) + " read as one List in that order";
  }
  auto job = parse_job(doc, nodes);
  if (!job) return std::unexpected(job.error().context(at).context(name));
  if (ledger) ledger->record(*file, kinds);
  return job;
}

std::expected<void, Error> join_replica(JobRequest& gang, PodSetRequest ps, const std::string& where,
                                        const std::string& templates) {
  if (ps.mode != TopologyMode::kNone) {
    if (gang.mode != TopologyMode::kNone && (gang.mode != ps.mode || gang.level != ps.level)) {
      return fail(ErrorCode::kInvalidArgument, where + ": the " + templates +
                                                   " templates ask for different topology; the gang is "
                                                   "placed under one constraint");
    }
    gang.mode = ps.mode;
    gang.level = ps.level;
  }
  gang.pod_sets.push_back(std::move(ps));
  return {};
}

void constrain_replicas(JobRequest& gang) {
  for (auto& ps : gang.pod_sets) {
    ps.mode = gang.mode == TopologyMode::kNone ? TopologyMode::kUnconstrained : gang.mode;
    ps.level = gang.level;
  }
}

}  // namespace hypertopo::scheduler
