// scheduler/extender/extender_service.h: the kube-scheduler extender's logic, free of HTTP.
//
// Holds a cluster view (HyperNodes, Nodes, Pods) fed by ClusterWatcher or directly by tests, keeps
// a TopologyIndex of it (rebuilt lazily after a change), and answers the extender verbs with the
// JSON shapes of k8s.io/kube-scheduler/extender/v1 (ExtenderArgs in; ExtenderFilterResult or
// HostPriorityList out; both nodeCacheCapable modes: `nodenames` only, or full `nodes` objects).
//
// Gangs. A pod belongs to a gang when it carries the coscheduling label
// `scheduling.x-k8s.io/pod-group`, Volcano's annotation `scheduling.k8s.io/group-name`, or our
// `hypertopo.io/gang` (label or annotation); the gang key is namespace/name. Its size comes from
// `hypertopo.io/gang-size` (annotation), else Kueue's `kueue.x-k8s.io/pod-group-total-count`, else 1.
// Its constraint comes from the pod's annotations through the job loaders (scheduler/input), so the
// mappings are the loaders' own:
//   - Kueue TAS podset annotations (kueue.x-k8s.io/podset-*) and KAI `kai.scheduler/topology-*`
//     annotations: read as the pod template of a batch/v1 Job with parallelism = gang size;
//   - otherwise the Volcano networkTopology / partitionPolicy fields given as our annotations:
//       hypertopo.io/network-topology-mode        hard | soft
//       hypertopo.io/highest-tier-allowed         N          (or hypertopo.io/highest-tier-name)
//       hypertopo.io/partition-size               pods per partition (totalPartitions = size / this)
//       hypertopo.io/min-partitions               Volcano minPartitions (default: all)
//       hypertopo.io/partition-highest-tier-allowed   N      (or ...partition-highest-tier-name)
//     read as a one-task Volcano Job.
// The first pod of a gang plans the whole gang with the PlacementEngine; the plan's slots are
// reserved in the index, cached with a TTL measured on the injected Clock (renewed by activity) and
// persisted (JSON, temp file + rename) when a state file is set. filter() gives each pod one slot
// (tracked by pod uid) and admits only that slot's node. A slot whose node goes NotReady,
// unschedulable or away before its pod binds is moved to another node inside the innermost
// constraint domain (partition domain, else the job domain); only when no such node has room is
// the gang re-planned. Each slot carries a rank hint (its position in the plan) and the domain path,
// served by plans() and as suggested annotations hypertopo.io/rank and hypertopo.io/domain-path.
// Normal pods: filter keeps the nodes the pod fits on; prioritize gives Volcano's fading-tier
// binpack score scaled to 0..MaxExtenderPriority (10), the best candidate getting 10.
//
//   ExtenderService svc({.binpack = cfg.binpack, .clock = clock, .state_file = "/var/lib/x.json"});
//   svc.set_hypernodes(hypernode_json_items); svc.upsert_node(node_json); svc.upsert_pod(pod_json);
//   auto reply = svc.filter(nlohmann::json::parse(body));   // ExtenderFilterResult JSON
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "errors/error.h"
#include "k8s/client/clock.h"
#include "scheduler/index/topology_index.h"
#include "scheduler/placement/job_request.h"
#include "scheduler/placement/volcano_score.h"

namespace hypertopo::scheduler {

inline constexpr std::int64_t kMaxExtenderPriority = 10;  // extender/v1 MaxExtenderPriority
inline constexpr const char* kRankAnnotation = "hypertopo.io/rank";
inline constexpr const char* kDomainPathAnnotation = "hypertopo.io/domain-path";

struct ExtenderOptions {
  BinpackWeights binpack;
  std::chrono::seconds plan_ttl{600};
  std::vector<std::string> gang_label_keys{"scheduling.x-k8s.io/pod-group", "hypertopo.io/gang"};
  std::vector<std::string> gang_annotation_keys{"scheduling.k8s.io/group-name", "hypertopo.io/gang"};
  std::filesystem::path state_file;   // empty: plans live in memory only
  std::shared_ptr<k8s::Clock> clock;  // null: the system clock
};

// One planned pod position.
struct PlanSlot {
  std::int32_t rank = 0;
  std::string node;
  std::vector<std::string> domain_path;
  std::string pod_uid;  // empty: not yet taken
  bool bound = false;
};

struct GangPlan {
  std::string key;         // namespace/name
  nlohmann::json job_doc;  // the synthetic job the request was read from (persisted; re-read on load)
  PodSetRequest request;
  std::string job_domain;   // the domain the engine chose (empty when spread)
  int partition_tier = -1;  // tier of a partition's domain, -1 without partitions
  std::int32_t partition_size = 0;
  std::vector<PlanSlot> slots;
  k8s::Clock::TimePoint last_activity{};
  int replans = 0;
  int swaps = 0;
};

struct ExtenderCounters {
  std::int64_t filter_calls = 0, prioritize_calls = 0, plans_made = 0, replans = 0, swaps = 0,
               plans_expired = 0, errors = 0, index_rebuilds = 0;
};

class ExtenderService {
 public:
  explicit ExtenderService(ExtenderOptions options);

  // Cluster view, as Kubernetes JSON objects. Each marks the index for a rebuild.
  std::expected<void, Error> set_hypernodes(const std::vector<nlohmann::json>& hypernodes);
  std::expected<void, Error> upsert_hypernode(const nlohmann::json& hypernode);
  void remove_hypernode(const std::string& name);
  std::expected<void, Error> set_nodes(const std::vector<nlohmann::json>& nodes);
  std::expected<void, Error> upsert_node(const nlohmann::json& node);
  void remove_node(const std::string& name);
  std::expected<void, Error> set_pods(const std::vector<nlohmann::json>& pods);
  std::expected<void, Error> upsert_pod(const nlohmann::json& pod);
  void remove_pod(const nlohmann::json& pod);

  // Extender verbs. An error means the request itself is malformed (answer 400 with its message).
  std::expected<nlohmann::json, Error> filter(const nlohmann::json& args);
  std::expected<nlohmann::json, Error> prioritize(const nlohmann::json& args);

  // {"gangs": [{"key", "jobDomain", "slots": [{"rank", "node", "domainPath", "podUID", "bound",
  //   "annotations": {...}}]}]}
  nlohmann::json plans();
  // Loads plans from the state file (a missing file is no error).
  std::expected<void, Error> load_state();
  // Checks planned nodes and swaps or re-plans; filter() calls it too.
  void check_plans();
  ExtenderCounters counters() const;
  std::size_t node_count() const;

 private:
  struct PodInfo {
    std::string uid, name, ns, node;
    ResourceAmounts requests;
  };
  std::expected<void, Error> ensure_index();
  std::expected<std::optional<std::string>, Error> gang_key(const nlohmann::json& pod) const;
  // The synthetic job document for a pod (gang or not), and the pod set read from it.
  std::expected<nlohmann::json, Error> job_document(const nlohmann::json& pod, std::int32_t count,
                                                    bool gang) const;
  std::expected<PodSetRequest, Error> read_request(const nlohmann::json& job_doc) const;
  std::expected<GangPlan*, Error> plan_for(const nlohmann::json& pod, const std::string& key);
  std::expected<void, Error> make_plan(GangPlan& plan, std::int32_t count);
  bool node_usable(const std::string& name) const;
  bool swap_slot(GangPlan& plan, PlanSlot& slot);
  void expire_plans();
  void check_plans_locked();
  void reserve(const GangPlan& plan, int sign);
  void save_state();
  std::expected<std::vector<std::string>, Error> candidates(const nlohmann::json& args) const;
  bool fits(int node, const ResourceAmounts& request, const PodSetRequest* ps) const;
  void record_binding(const PodInfo& pod);

  ExtenderOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, HyperNodeSpec> hypernodes_;
  std::map<std::string, NodeSpec> nodes_;
  std::map<std::string, PodInfo> pods_;  // by uid
  std::optional<TopologyIndex> index_;
  bool dirty_ = true;
  std::map<std::string, GangPlan> plans_;
  ExtenderCounters counters_;
};

}  // namespace hypertopo::scheduler
