#include "scheduler/input/pod_request.h"

#include <algorithm>
#include <charconv>

#include "io/json_fields.h"
#include "scheduler/input/job_loader.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

using io::object_at;
using io::str_at;

// A whole decimal integer in [min, max]; nullopt for anything else ("1e3", "8x", "", overflow).
std::optional<std::int64_t> whole_number(const std::string& v, std::int64_t min, std::int64_t max) {
  std::int64_t n = 0;
  const char* end = v.data() + v.size();
  auto [ptr, ec] = std::from_chars(v.data(), end, n);
  if (v.empty() || ec != std::errc() || ptr != end || n < min || n > max) return std::nullopt;
  return n;
}

constexpr std::int64_t kLargestInt32 = 2147483647;

}  // namespace

std::expected<std::int32_t, Error> positive_count(const std::string& value, const std::string& key,
                                                  const std::string& where) {
  auto n = whole_number(value, 1, kLargestInt32);
  if (!n) {
    return fail(ErrorCode::kInvalidArgument, where + ": " + key + " must be an integer from 1 to " +
                                                 std::to_string(kLargestInt32) + ", got '" + value + "'");
  }
  return static_cast<std::int32_t>(*n);
}

const std::vector<std::string>& gang_identity_keys() {
  static const std::vector<std::string> keys{"scheduling.x-k8s.io/pod-group",
                                             "hypertopo.io/gang",
                                             "scheduling.k8s.io/group-name",
                                             "pod-group-name",
                                             kRankKey,
                                             kJobSetJobIndex,
                                             kJobSetReplicas,
                                             kCompletionIndex,
                                             kKubeflowReplicaIndex,
                                             kKubeflowReplicaType,
                                             kLwsWorkerIndex,
                                             kPodIndexKey,
                                             kVolcanoTaskIndex};
  return keys;
}

bool read_by_pod_request(std::string_view annotation_key) {
  for (std::string_view prefix : {"hypertopo.io/", "volcano.sh/", "kai.scheduler/", "kueue.x-k8s.io/"}) {
    if (annotation_key.starts_with(prefix)) return true;
  }
  if (annotation_key == kLwsExclusiveTopology) return true;
  return std::ranges::find(gang_identity_keys(), annotation_key) != gang_identity_keys().end();
}

namespace {

// The literal value of env var `name` in the pod's first container that sets it ("" when none).
std::string env_value(const json& pod, const char* name) {
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return {};
  auto containers = spec->find("containers");
  if (containers == spec->end() || !containers->is_array()) return {};
  for (const auto& c : *containers) {
    auto env = c.is_object() ? c.find("env") : c.end();
    if (!c.is_object() || env == c.end() || !env->is_array()) continue;
    for (const auto& e : *env) {
      if (e.is_object() && str_at(e, "name") == name) return str_at(e, "value");
    }
  }
  return {};
}

}  // namespace

std::expected<std::optional<PodIndex>, Error> pod_index(const json& pod) {
  const json& meta = object_at(pod, "metadata");
  const json& annotations = object_at(meta, "annotations");
  const json& labels = object_at(meta, "labels");
  const std::string who = "Pod " + str_at(meta, "namespace") + "/" + str_at(meta, "name");
  // The value of `key` (label first, then annotation) as an index, or why it is none.
  auto read = [&](const char* key) -> std::expected<std::optional<std::int32_t>, Error> {
    for (const json* where : {&labels, &annotations}) {
      const std::string v = str_at(*where, key);
      if (v.empty()) continue;
      auto n = whole_number(v, 0, kLargestInt32 - 1);
      if (!n) {
        return fail(ErrorCode::kInvalidArgument,
                    who + ": " + (where == &annotations ? "annotation " : "label ") + key +
                        " must be a pod index (an integer from 0), got '" + v + "'");
      }
      return std::optional<std::int32_t>(static_cast<std::int32_t>(*n));
    }
    return std::optional<std::int32_t>();
  };
  // Our explicit rank first: it overrides whatever the workload controller numbered.
  auto explicit_rank = read(kRankKey);
  if (!explicit_rank) return std::unexpected(explicit_rank.error());
  if (*explicit_rank) return std::optional<PodIndex>(PodIndex{**explicit_rank, kRankKey});
  auto completion = read(kCompletionIndex);
  if (!completion) return std::unexpected(completion.error());
  // JobSet (sigs.k8s.io/jobset pkg/controllers/jobset_controller.go labels every pod with its
  // child Job's index): rank = job index x pods per Job + completion index; the pods per Job are
  // the gang's size over the replicated Job's replicas, which the plan knows (PodIndex::group).
  auto job_index = read(kJobSetJobIndex);
  if (!job_index) return std::unexpected(job_index.error());
  if (*job_index && *completion) {
    auto replicas = read(kJobSetReplicas);
    if (!replicas) return std::unexpected(replicas.error());
    static const std::string kJobSetRankKeys =
        std::string(kJobSetJobIndex).append(" + ").append(kCompletionIndex);
    PodIndex out{**completion, kJobSetRankKeys};
    out.group = **job_index;
    out.groups = replicas->value_or(0);
    return std::optional<PodIndex>(out);
  }
  if (*completion) return std::optional<PodIndex>(PodIndex{**completion, kCompletionIndex});
  // Kubeflow's training operator (kubeflow/training-operator pkg/controller.v1/pytorch/envvar.go,
  // setPodEnv) writes each pod's global rank as the literal env var RANK: the master is rank 0 and
  // worker i is rank i + 1 when the job has a master. Without RANK the replica index is the rank.
  auto replica = read(kKubeflowReplicaIndex);
  if (!replica) return std::unexpected(replica.error());
  if (*replica) {
    if (const std::string rank = env_value(pod, "RANK"); !rank.empty()) {
      auto n = whole_number(rank, 0, kLargestInt32 - 1);
      if (!n) {
        return fail(
            ErrorCode::kInvalidArgument,
            who + ": env RANK must be an integer from 0 (training.kubeflow.org pods), got '" + rank + "'");
      }
      return std::optional<PodIndex>(
          PodIndex{static_cast<std::int32_t>(*n), "env RANK (training.kubeflow.org)"});
    }
    return std::optional<PodIndex>(PodIndex{**replica, kKubeflowReplicaIndex});
  }
  // LeaderWorkerSet: the worker index is the rank inside its group (0 = the leader); its pods also
  // carry apps.kubernetes.io/pod-index, which for the leader is the group's index, not a rank.
  for (const char* key : {kLwsWorkerIndex, kPodIndexKey, kVolcanoTaskIndex}) {
    auto v = read(key);
    if (!v) return std::unexpected(v.error());
    if (*v) return std::optional<PodIndex>(PodIndex{**v, key});
  }
  return std::optional<PodIndex>();
}

std::expected<PodSetRequest, Error> pod_set_request(const json& pod, std::int32_t count, bool gang) {
  const json& meta = object_at(pod, "metadata");
  const json& annotations = object_at(meta, "annotations");
  const std::string where = "Pod " + str_at(meta, "namespace") + "/" + str_at(meta, "name");
  PodSetRequest ps;
  ps.name = "gang";
  ps.count = count;
  if (auto ok = read_pod_spec(object_at(pod, "spec"), ps, where); !ok) return std::unexpected(ok.error());
  if (!gang) return ps;
  bool foreign = false;  // Kueue or KAI keys: their meaning is the job loader's, read the same way
  for (const auto& [k, v] : annotations.items()) {
    if (k.starts_with("kueue.x-k8s.io/podset-") || k.starts_with("kai.scheduler/")) foreign = true;
  }
  if (foreign) {
    std::string format;
    if (auto ok = topology_annotations(annotations, ps, format, where + " annotations"); !ok)
      return std::unexpected(ok.error());
    return ps;
  }
  // Our keys first; Volcano's pod-level keys say the same thing for a user coming from Volcano.
  auto first = [&](std::initializer_list<const char*> keys) -> std::pair<std::string, std::string> {
    for (const char* k : keys) {
      if (std::string v = str_at(annotations, k); !v.empty()) return {k, v};
    }
    return {};
  };
  auto tier_number = [&](const std::pair<std::string, std::string>& kv) -> std::expected<std::string, Error> {
    auto n = whole_number(kv.second, 0, kLargestInt32);
    if (!n) {
      return fail(ErrorCode::kInvalidArgument, where + ": annotation " + kv.first +
                                                   " must be a tier number (an integer from 0), got '" +
                                                   kv.second + "'");
    }
    return std::to_string(*n);
  };
  const auto mode = first({"hypertopo.io/network-topology-mode", "volcano.sh/network-topology-mode"});
  const auto allowed =
      first({"hypertopo.io/highest-tier-allowed", "volcano.sh/network-topology-highest-tier"});
  const auto tier_name = first({"hypertopo.io/highest-tier-name"});
  if (!mode.second.empty() && mode.second != "hard" && mode.second != "soft") {
    return fail(ErrorCode::kInvalidArgument,
                where + ": annotation " + mode.first + " must be hard or soft, got '" + mode.second + "'");
  }
  if (!allowed.second.empty() && !tier_name.second.empty()) {
    return fail(ErrorCode::kInvalidArgument, where + ": annotations " + allowed.first + " and " +
                                                 tier_name.first + " are mutually exclusive");
  }
  const std::string lws_key = str_at(annotations, kLwsExclusiveTopology);
  if (mode.second.empty() && allowed.second.empty() && tier_name.second.empty() && !lws_key.empty()) {
    // A LeaderWorkerSet group (its gang) sits in one domain of the node label: its leader's pod
    // affinity keeps it there and its workers get a nodeSelector for the leader's value
    // (kubernetes-sigs/lws pkg/webhooks/pod_webhook.go SetExclusiveAffinities,
    // pkg/controllers/pod_controller.go setNodeSelectorForWorkerPods), so a plan across domains
    // would be one kube-scheduler cannot bind. `place` reads the same annotation of the object
    // (leader_worker_jobs.h).
    ps.mode = TopologyMode::kRequired;
    ps.level = lws_key;
  }
  if (!mode.second.empty() || !allowed.second.empty() || !tier_name.second.empty()) {
    // Volcano's networkTopology defaults mode to hard.
    ps.mode = mode.second == "soft" ? TopologyMode::kPreferred : TopologyMode::kRequired;
    if (!allowed.second.empty()) {
      auto tier = tier_number(allowed);
      if (!tier) return std::unexpected(tier.error());
      ps.level = *tier;
    } else {
      ps.level = tier_name.second;
    }
  }
  const auto psize = first({"hypertopo.io/partition-size"});
  if (psize.second.empty()) return ps;
  auto size = positive_count(psize.second, "annotation " + psize.first, where);
  if (!size) return std::unexpected(size.error());
  if (count % *size != 0) {
    return fail(ErrorCode::kInvalidArgument, where + ": gang size " + std::to_string(count) +
                                                 " is not a multiple of hypertopo.io/partition-size " +
                                                 std::to_string(*size));
  }
  PartitionRequest part{.total = count / *size, .size = *size, .min = count / *size, .level = {}};
  if (const auto min = first({"hypertopo.io/min-partitions"}); !min.second.empty()) {
    auto n = positive_count(min.second, "annotation " + min.first, where);
    if (!n) return std::unexpected(n.error());
    if (*n > part.total) {
      return fail(ErrorCode::kInvalidArgument, where + ": annotation hypertopo.io/min-partitions " +
                                                   min.second + " is above the " +
                                                   std::to_string(part.total) + " partitions of the gang");
    }
    part.min = *n;
  }
  const auto p_allowed = first({"hypertopo.io/partition-highest-tier-allowed"});
  const auto p_name = first({"hypertopo.io/partition-highest-tier-name"});
  if (!p_allowed.second.empty() && !p_name.second.empty()) {
    return fail(ErrorCode::kInvalidArgument, where + ": annotations " + p_allowed.first + " and " +
                                                 p_name.first + " are mutually exclusive");
  }
  if (!p_allowed.second.empty()) {
    auto tier = tier_number(p_allowed);
    if (!tier) return std::unexpected(tier.error());
    part.level = *tier;
  } else {
    part.level = p_name.second;
  }
  ps.partitions = part;
  if (ps.mode == TopologyMode::kNone) ps.mode = TopologyMode::kUnconstrained;
  return ps;
}

}  // namespace hypertopo::scheduler
