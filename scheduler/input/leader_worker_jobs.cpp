#include "scheduler/input/leader_worker_jobs.h"

#include <cstdint>
#include <string>
#include <utility>

#include "io/json_fields.h"
#include "io/json_integer.h"
#include "io/json_writer.h"
#include "scheduler/input/pod_request.h"

namespace hypertopo::scheduler {
namespace {

using io::bounded_integer;
using io::object_at;
using io::str_at;
using nlohmann::json;

constexpr std::int64_t kMaxPodCount = 2147483647;
// The most groups and sub-groups one LeaderWorkerSet may make the request hold: each is a sub-group
// with pod sets of its own, so a spec.replicas near LWS's 1,000,000 is refused rather than expanded.
constexpr std::int64_t kMaxLwsSubGroups = 65536;

constexpr const char* kLwsSubGroupExclusive = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology";

// obj[key] as an object; absent or null: an empty one. Another type is an error naming the key.
std::expected<json, Error> object_member(const json& obj, const char* key, const std::string& where) {
  if (!obj.is_object()) return json::object();
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return json::object();
  if (!it->is_object())
    return fail(ErrorCode::kInvalidArgument,
                where + ": " + key + " must be an object, got " + it->type_name());
  return *it;
}

// A pod template as the pod its controller makes of it: metadata (labels, annotations) and spec.
std::expected<json, Error> pod_of_template(const json& holder, const std::string& pod_name,
                                           const std::string& where) {
  auto tmpl = object_member(holder, "template", where);
  if (!tmpl) return std::unexpected(tmpl.error());
  auto meta = object_member(*tmpl, "metadata", where + " template");
  if (!meta) return std::unexpected(meta.error());
  auto spec = object_member(*tmpl, "spec", where + " template");
  if (!spec) return std::unexpected(spec.error());
  json pod{{"metadata", *meta}, {"spec", *spec}};
  pod["metadata"]["name"] = pod_name;
  return pod;
}

}  // namespace

bool is_mpi_job(const json& doc) {
  return doc.is_object() && str_at(doc, "apiVersion").starts_with("kubeflow.org/") &&
         str_at(doc, "kind") == "MPIJob";
}

bool is_leader_worker_set(const json& doc) {
  return doc.is_object() && str_at(doc, "apiVersion").starts_with("leaderworkerset.x-k8s.io/") &&
         str_at(doc, "kind") == "LeaderWorkerSet";
}

std::expected<LoadedJob, Error> mpi_job(const json& doc) {
  LoadedJob out;
  out.format = "mpi";
  out.request.name = str_at(object_at(doc, "metadata"), "name");
  const std::string where = "MPIJob " + out.request.name;
  auto spec = object_member(doc, "spec", where);
  if (!spec) return std::unexpected(spec.error());
  auto replicas = object_member(*spec, "mpiReplicaSpecs", where + " spec");
  if (!replicas) return std::unexpected(replicas.error());
  for (const auto& [type, rs] : replicas->items()) {
    if (type != "Launcher" && type != "Worker") {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": spec.mpiReplicaSpecs." + type + ": a replica type is Launcher or Worker");
    }
  }
  // mpi-operator's webhook requires the Launcher, exactly one (pkg/apis/kubeflow/validation/validation.go,
  // validateLauncherReplicaSpec).
  if (!replicas->contains("Launcher"))
    return fail(ErrorCode::kInvalidArgument, where + ": spec.mpiReplicaSpecs.Launcher is required");
  bool launcher_is_worker = false;
  if (auto it = spec->find("runLauncherAsWorker"); it != spec->end() && !it->is_null()) {
    if (!it->is_boolean()) {
      return fail(ErrorCode::kInvalidArgument,
                  where + " spec: runLauncherAsWorker must be true or false, got " + io::json_text(*it));
    }
    launcher_is_worker = it->get<bool>();
  }
  // The launcher is created with the workers or once they are Ready; either way the PodGroup counts
  // it (calculateMinAvailable: workers + 1), so it has its slot in the gang.
  if (const std::string policy = str_at(*spec, "launcherCreationPolicy");
      !policy.empty() && policy != "AtStartup" && policy != "WaitForWorkersReady") {
    return fail(ErrorCode::kInvalidArgument,
                where + " spec: launcherCreationPolicy must be AtStartup or WaitForWorkersReady, got '" +
                    policy + "'");
  }
  // Worker i has replica-index i (the launcher none, and it takes the slot after them); with
  // runLauncherAsWorker the launcher has index 0 and worker i has i + 1.
  const char* order[2] = {"Worker", "Launcher"};
  if (launcher_is_worker) std::swap(order[0], order[1]);
  for (const char* type : order) {
    if (!replicas->contains(type)) continue;
    const std::string rw = where + " spec.mpiReplicaSpecs." + type;
    const json& rs = (*replicas)[type];
    if (!rs.is_object()) return fail(ErrorCode::kInvalidArgument, rw + " must be an object");
    const bool launcher = type[0] == 'L';
    auto count = bounded_integer(rs, "replicas", 1, rw, launcher ? 1 : 0, launcher ? 1 : kMaxPodCount);
    if (!count) return std::unexpected(count.error());
    if (*count == 0) continue;
    auto pod = pod_of_template(rs, out.request.name + (launcher ? "-launcher" : "-worker"), rw);
    if (!pod) return std::unexpected(pod.error());
    auto ps = pod_set_request(*pod, static_cast<std::int32_t>(*count), /*gang=*/true);
    if (!ps) return std::unexpected(ps.error());
    ps->name = type;
    if (auto joined = join_replica(out.request, std::move(*ps), where, "Launcher and Worker"); !joined)
      return std::unexpected(joined.error());
  }
  constrain_replicas(out.request);
  // runPolicy.schedulingPolicy.minAvailable is the PodGroup's minMember (calculateMinAvailable). As
  // with a Volcano Job of several tasks (job_loader.cpp volcano_job), a gang minimum over the
  // launcher and the workers together is no per-pod-set minimum: it makes a gang of one pod set
  // elastic, and a gang of both is placed whole.
  std::int64_t total = 0;
  for (const auto& ps : out.request.pod_sets) total += ps.count;
  auto policy = object_member(object_at(*spec, "runPolicy"), "schedulingPolicy", where + " spec.runPolicy");
  if (!policy) return std::unexpected(policy.error());
  auto min =
      bounded_integer(*policy, "minAvailable", 0, where + " spec.runPolicy.schedulingPolicy", 0, total);
  if (!min) return std::unexpected(min.error());
  if (*min > 0 && *min < total && out.request.pod_sets.size() == 1)
    out.request.pod_sets.front().min_count = static_cast<std::int32_t>(*min);
  return out;
}

std::expected<LoadedJob, Error> leader_worker_set(const json& doc) {
  LoadedJob out;
  out.format = "lws";
  const json& meta = object_at(doc, "metadata");
  out.request.name = str_at(meta, "name");
  const std::string where = "LeaderWorkerSet " + out.request.name;
  auto spec = object_member(doc, "spec", where);
  if (!spec) return std::unexpected(spec.error());
  auto lwt = object_member(*spec, "leaderWorkerTemplate", where + " spec");
  if (!lwt) return std::unexpected(lwt.error());
  const std::string tw = where + " spec.leaderWorkerTemplate";
  auto replicas = bounded_integer(*spec, "replicas", 1, where + " spec", 0, 1000000);
  if (!replicas) return std::unexpected(replicas.error());
  if (*replicas == 0)
    return fail(ErrorCode::kInvalidArgument, where + ": spec.replicas is 0, no group to place");
  // lws pkg/webhooks/leaderworkerset_webhook.go: size >= 1; subGroupSize >= 1, at most size, dividing
  // size or size - 1 (size - 1 for LeaderExcluded).
  auto size = bounded_integer(*lwt, "size", 1, tw, 1);
  if (!size) return std::unexpected(size.error());
  if (*replicas * *size > kMaxPodCount) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": spec.replicas x size is above " + std::to_string(kMaxPodCount) + " pods");
  }
  auto sub_policy = object_member(*lwt, "subGroupPolicy", tw);
  if (!sub_policy) return std::unexpected(sub_policy.error());
  const std::string sw = tw + ".subGroupPolicy";
  auto sub_size = bounded_integer(*sub_policy, "subGroupSize", 0, sw, 1, *size);
  if (!sub_size) return std::unexpected(sub_size.error());
  std::string sub_type = str_at(*sub_policy, "subGroupPolicyType");
  if (sub_type.empty()) sub_type = "LeaderWorker";
  if (sub_type != "LeaderWorker" && sub_type != "LeaderExcluded") {
    return fail(ErrorCode::kInvalidArgument,
                sw + ": subGroupPolicyType must be LeaderWorker or LeaderExcluded, got '" + sub_type + "'");
  }
  if (*sub_size > 0) {
    if (*size % *sub_size != 0 && (*size - 1) % *sub_size != 0)
      return fail(ErrorCode::kInvalidArgument, sw + ": size or size - 1 must be divisible by subGroupSize");
    if (sub_type == "LeaderExcluded" && (*size - 1) % *sub_size != 0)
      return fail(ErrorCode::kInvalidArgument,
                  sw + ": size - 1 must be divisible by subGroupSize when using LeaderExcluded");
  }
  const json& annotations = object_at(meta, "annotations");
  const std::string exclusive = str_at(annotations, kLwsExclusiveTopology);
  const std::string sub_exclusive = str_at(annotations, kLwsSubGroupExclusive);
  if (!sub_exclusive.empty() && *sub_size == 0) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": annotation " + std::string(kLwsSubGroupExclusive) +
                    " needs spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize");
  }
  const bool own_leader = lwt->contains("leaderTemplate") && !(*lwt)["leaderTemplate"].is_null();
  if (!lwt->contains("workerTemplate") || (*lwt)["workerTemplate"].is_null())
    return fail(ErrorCode::kInvalidArgument, tw + ": workerTemplate is required");
  auto worker_tmpl = object_member(*lwt, "workerTemplate", tw);
  if (!worker_tmpl) return std::unexpected(worker_tmpl.error());
  auto worker_pod =
      pod_of_template(json{{"template", *worker_tmpl}}, out.request.name + "-0-1", tw + ".workerTemplate");
  if (!worker_pod) return std::unexpected(worker_pod.error());
  json leader_pod = *worker_pod;
  if (own_leader) {
    auto leader_tmpl = object_member(*lwt, "leaderTemplate", tw);
    if (!leader_tmpl) return std::unexpected(leader_tmpl.error());
    auto pod =
        pod_of_template(json{{"template", *leader_tmpl}}, out.request.name + "-0", tw + ".leaderTemplate");
    if (!pod) return std::unexpected(pod.error());
    leader_pod = std::move(*pod);
  }
  // The sub-group of worker index w (0 = the leader): the webhook's getSubGroupIndex, the leader in
  // sub-group 0 unless LeaderExcluded keeps it out of every sub-group (-1).
  auto sub_group_of = [&](std::int64_t w) -> std::int64_t {
    if (*sub_size == 0) return -1;
    if (w == 0) return sub_type == "LeaderExcluded" ? -1 : 0;
    if ((*size - 1) % *sub_size == 0 && *size % *sub_size != 0) return (w - 1) / *sub_size;
    return w / *sub_size;
  };
  const std::int64_t subs_per_group = *sub_size == 0 ? 0 : sub_group_of(*size - 1) + 1;
  if (*replicas * (1 + subs_per_group) > kMaxLwsSubGroups) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": " + std::to_string(*replicas) + " groups" +
                    (subs_per_group > 0 ? " of " + std::to_string(subs_per_group) + " sub-groups" : "") +
                    " are more than the " + std::to_string(kMaxLwsSubGroups) + " one request places");
  }
  // Each template read once as the extender reads a pod of the group (pod_request.h
  // pod_set_request): what one pod asks for, its node constraints, and the topology its annotations
  // ask for (Kueue's podset-required-topology / podset-preferred-topology, KAI's, Volcano's and ours).
  auto leader_read = pod_set_request(leader_pod, 1, /*gang=*/true);
  if (!leader_read) return std::unexpected(leader_read.error());
  auto worker_read = pod_set_request(*worker_pod, 1, /*gang=*/true);
  if (!worker_read) return std::unexpected(worker_read.error());
  PodSetRequest leader_ps = std::move(*leader_read);
  PodSetRequest worker_ps = std::move(*worker_read);
  // A group is one gang under one constraint: the leader's and the workers' templates must agree.
  if (own_leader && (leader_ps.mode != worker_ps.mode || leader_ps.level != worker_ps.level)) {
    return fail(ErrorCode::kInvalidArgument,
                where +
                    ": the leaderTemplate and workerTemplate ask for different topology; a group is "
                    "placed under one constraint");
  }
  if (worker_ps.partitions) {
    return fail(ErrorCode::kInvalidArgument,
                tw + ".workerTemplate: hypertopo.io/partition-size does not apply to a LeaderWorkerSet; "
                     "use subGroupPolicy.subGroupSize");
  }
  // The group's levels: exclusive-topology is its required level; a template's required topology
  // is the group's when exclusive-topology is not set, and a preferred one is its preferred level.
  std::string group_required = exclusive;
  std::string group_preferred;
  const std::string template_level = worker_ps.level;
  if (worker_ps.mode == TopologyMode::kRequired && !template_level.empty() && template_level != exclusive) {
    if (!exclusive.empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": annotation " + std::string(kLwsExclusiveTopology) + " '" + exclusive +
                      "' and the templates' required topology '" + template_level +
                      "' differ; a group is placed under one required level");
    }
    group_required = template_level;
  } else if (worker_ps.mode == TopologyMode::kPreferred && !template_level.empty()) {
    group_preferred = template_level;
  }
  for (PodSetRequest* ps : {&leader_ps, &worker_ps}) {
    ps->mode = TopologyMode::kNone;
    ps->level.clear();
    ps->slices.clear();
  }
  for (std::int64_t g = 0; g < *replicas; ++g) {
    const std::string group = out.request.name + "-" + std::to_string(g);
    out.request.sub_groups.push_back(SubGroupRequest{.name = group,
                                                     .parent = "",
                                                     .required = group_required,
                                                     .preferred = group_preferred,
                                                     .exclusive = !exclusive.empty()});
    for (std::int64_t s = 0; s < subs_per_group; ++s) {
      out.request.sub_groups.push_back(SubGroupRequest{.name = group + "-subgroup-" + std::to_string(s),
                                                       .parent = group,
                                                       .required = sub_exclusive,
                                                       .exclusive = !sub_exclusive.empty()});
    }
    // Runs of pods of one template and one sub-group, in worker-index order, are one pod set each.
    for (std::int64_t w = 0; w < *size;) {
      const bool leader = w == 0 && own_leader;
      const std::int64_t s = sub_group_of(w);
      std::int64_t end = w + 1;
      while (end < *size && sub_group_of(end) == s && !leader) ++end;
      PodSetRequest ps = leader ? leader_ps : worker_ps;
      ps.count = static_cast<std::int32_t>(end - w);
      ps.name = group;
      if (s >= 0) ps.name += "-subgroup-" + std::to_string(s);
      if (own_leader) ps.name += leader ? "-leader" : "-workers";
      ps.sub_group = s >= 0 ? group + "-subgroup-" + std::to_string(s) : group;
      out.request.pod_sets.push_back(std::move(ps));
      w = end;
    }
  }
  return out;
}

std::expected<std::vector<PriorityRequest>, Error> leader_worker_priorities(const json& doc,
                                                                            const LoadedJob& job) {
  std::vector<PriorityRequest> out;
  const std::string name = str_at(object_at(doc, "metadata"), "name");
  const json& spec = object_at(doc, "spec");
  if (job.format == "mpi") {
    // Each pod has its template's class; the operator's PodGroup has runPolicy.schedulingPolicy's
    // first (mpi-operator pkg/controller/podgroup.go, calculatePriorityClassName), which stands in
    // for a template that names none.
    const json& replicas = object_at(spec, "mpiReplicaSpecs");
    const std::string fallback =
        str_at(object_at(object_at(spec, "runPolicy"), "schedulingPolicy"), "priorityClass");
    for (const auto& ps : job.request.pod_sets) {
      auto p = read_priority(object_at(object_at(object_at(replicas, ps.name.c_str()), "template"), "spec"),
                             "MPIJob " + name + " spec.mpiReplicaSpecs." + ps.name + ".template.spec");
      if (!p) return std::unexpected(p.error());
      if (p->class_name.empty() && !p->value && !fallback.empty()) {
        p->class_name = fallback;
        p->source = "MPIJob " + name + " spec.runPolicy.schedulingPolicy";
      }
      out.push_back(std::move(*p));
    }
  } else if (job.format == "lws") {
    const json& lwt = object_at(spec, "leaderWorkerTemplate");
    const bool own_leader = lwt.contains("leaderTemplate") && !lwt["leaderTemplate"].is_null();
    auto worker = read_priority(object_at(object_at(lwt, "workerTemplate"), "spec"),
                                "LeaderWorkerSet " + name + " spec.leaderWorkerTemplate.workerTemplate.spec");
    if (!worker) return std::unexpected(worker.error());
    PriorityRequest leader = *worker;
    if (own_leader) {
      auto p = read_priority(object_at(object_at(lwt, "leaderTemplate"), "spec"),
                             "LeaderWorkerSet " + name + " spec.leaderWorkerTemplate.leaderTemplate.spec");
      if (!p) return std::unexpected(p.error());
      leader = std::move(*p);
    }
    for (const auto& ps : job.request.pod_sets)
      out.push_back(own_leader && ps.name.ends_with("-leader") ? leader : *worker);
  }
  out.resize(job.request.pod_sets.size(), PriorityRequest{});
  return out;
}

}  // namespace hypertopo::scheduler
