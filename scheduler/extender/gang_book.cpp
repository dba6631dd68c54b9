// Gangs: which gang a pod belongs to, the plan the PlacementEngine makes for it, and keeping that
// plan valid (slot swaps inside the constraint domain, re-plans, expiry).
#include <algorithm>
#include <functional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "scheduler/extender/extender_service.h"
#include "scheduler/extender/object_fields.h"
#include "scheduler/index/node_affinity.h"
#include "scheduler/input/pod_request.h"
#include "scheduler/placement/placement_engine.h"

namespace hypertopo::scheduler {

using nlohmann::json;
using namespace fields;

std::expected<std::optional<std::string>, Error> ExtenderService::gang_key(const json& pod) const {
  const json& meta = member(pod, "metadata");
  const json& labels = member(meta, "labels");
  const json& annotations = member(meta, "annotations");
  std::string name;
  for (const auto& k : options_.gang_label_keys) {
    if (name.empty()) name = str_at(labels, k.c_str());
  }
  for (const auto& k : options_.gang_annotation_keys) {
    if (name.empty()) name = str_at(annotations, k.c_str());
  }
  if (!name.empty()) return std::optional<std::string>(str_at(meta, "namespace") + "/" + name);
  // The upstream Workload API (Kubernetes 1.35+): spec.schedulingGroup names a PodGroup, or
  // spec.workloadRef a Workload's pod group (and, with podGroupReplicaKey, one replica of it).
  const json& spec = member(pod, "spec");
  if (const std::string group = str_at(member(spec, "schedulingGroup"), "podGroupName"); !group.empty())
    return std::optional<std::string>(str_at(meta, "namespace") + "/" + group);
  const json& ref = member(spec, "workloadRef");
  if (const std::string workload = str_at(ref, "name"); !workload.empty()) {
    std::string key = str_at(meta, "namespace") + "/" + workload + "/" + str_at(ref, "podGroup");
    if (const std::string replica = str_at(ref, "podGroupReplicaKey"); !replica.empty()) key += "/" + replica;
    return std::optional<std::string>(key);
  }
  return std::optional<std::string>();
}

namespace {

constexpr const char* kGangSize = "hypertopo.io/gang-size";
constexpr const char* kKueueGroupCount = "kueue.x-k8s.io/pod-group-total-count";
constexpr const char* kCoschedulingLabel = "scheduling.x-k8s.io/pod-group";
constexpr const char* kVolcanoGroupAnnotation = "scheduling.k8s.io/group-name";

// What a plan keeps of its first pod to read the request again after a restart.
// Only what placement reads: no env values, no last-applied-configuration, no volumes.
json request_source(const json& pod) {
  const json& meta = member(pod, "metadata");
  const json& spec = member(pod, "spec");
  json kept_spec = json::object();
  for (const char* k : {"nodeSelector", "affinity", "tolerations", "overhead"}) {
    if (spec.contains(k)) kept_spec[k] = spec[k];
  }
  json containers = json::array();
  if (spec.contains("containers") && spec["containers"].is_array()) {
    for (const auto& c : spec["containers"]) {
      json kept = json::object();
      if (c.is_object() && c.contains("name")) kept["name"] = c["name"];
      if (c.is_object() && c.contains("resources")) kept["resources"] = c["resources"];
      containers.push_back(std::move(kept));
    }
  }
  kept_spec["containers"] = std::move(containers);
  return json{{"metadata",
               {{"name", str_at(meta, "name")},
                {"namespace", str_at(meta, "namespace")},
                {"annotations", member(meta, "annotations")}}},
              {"spec", std::move(kept_spec)}};
}

}  // namespace

std::expected<std::int32_t, Error> ExtenderService::gang_size(const json& pod, const std::string& key) const {
  const json& meta = member(pod, "metadata");
  const json& annotations = member(meta, "annotations");
  for (const char* k : {kGangSize, kKueueGroupCount}) {
    const std::string v = str_at(annotations, k);
    if (!v.empty()) return positive_count(v, std::string("annotation ") + k, "Pod " + pod_label(pod));
  }
  auto size_of = [&](PodGroupKind kind, const std::string& group_key) -> std::optional<std::int32_t> {
    auto sizes = group_sizes_.find(kind);
    if (sizes == group_sizes_.end()) return std::nullopt;
    auto it = sizes->second.find(group_key);
    return it == sizes->second.end() ? std::nullopt : std::optional<std::int32_t>(it->second);
  };
  auto sized_by = [&](PodGroupKind kind, const std::string& group_key,
                      const std::string& what) -> std::expected<std::int32_t, Error> {
    if (auto n = size_of(kind, group_key)) return *n;
    return fail(ErrorCode::kUnavailable, "Pod " + pod_label(pod) + ": " + what + " not found");
  };
  const json& spec = member(pod, "spec");
  if (const std::string group = str_at(member(spec, "schedulingGroup"), "podGroupName"); !group.empty())
    return sized_by(PodGroupKind::kUpstream, key,
                    "PodGroup " + key + " (scheduling.k8s.io, spec.schedulingGroup)");
  if (const json& ref = member(spec, "workloadRef"); !str_at(ref, "name").empty()) {
    const std::string group_key =
        str_at(meta, "namespace") + "/" + str_at(ref, "name") + "/" + str_at(ref, "podGroup");
    return sized_by(PodGroupKind::kWorkload, group_key,
                    "pod group " + str_at(ref, "podGroup") + " of Workload " + str_at(ref, "name") +
                        " (scheduling.k8s.io, spec.workloadRef)");
  }
  // sigs.k8s.io/scheduler-plugins pkg/coscheduling: the pod-group label names a PodGroup in the
  // pod's namespace whose spec.minMember is the gang's quorum.
  if (!str_at(member(meta, "labels"), kCoschedulingLabel).empty()) {
    return sized_by(PodGroupKind::kCoscheduling, key,
                    "PodGroup " + key + " (label " + std::string(kCoschedulingLabel) + ")");
  }
  // Volcano: the annotation scheduling.k8s.io/group-name names a scheduling.volcano.sh PodGroup
  // (made by Volcano's job controller, minMember = the Job's minAvailable).
  if (!str_at(annotations, kVolcanoGroupAnnotation).empty()) {
    if (auto n = size_of(PodGroupKind::kVolcano, key)) return *n;
  }
  // KAI-Scheduler: its pod grouper names the scheduling.run.ai PodGroup in pod-group-name
  // (minMember: the workload's gang, e.g. a PyTorchJob's replicas).
  if (!str_at(annotations, "pod-group-name").empty()) {
    if (auto n = size_of(PodGroupKind::kKai, key)) return *n;
  }
  return 1;
}

std::expected<void, Error> ExtenderService::make_plan(GangPlan& plan, std::int32_t count,
                                                      const PreemptionOptions* preempting) {
  PodSetRequest ps = plan.request;
  ps.count = count;
  if (!ps.level.empty() && !index_->resolve_tier(ps.level)) {  // a plan read back from the state file
    if (auto tier = index_->tier_of_label(ps.level)) ps.level = std::to_string(*tier);
  }
  if (ps.partitions && ps.partitions->size > 0) {
    ps.partitions->total = count / ps.partitions->size;
    ps.partitions->min = std::min(ps.partitions->min, ps.partitions->total);
  }
  JobRequest job{.name = plan.key, .pod_sets = {ps}};
  PlacementEngine engine(*index_, options_.binpack, options_.fabric_health);
  auto placed = engine.place(job);
  if (!placed) return std::unexpected(placed.error().context("gang " + plan.key));
  std::optional<PreemptionPlan> with_victims;
  if (!placed->fit && preempting) {
    // It fits nowhere as the cluster is: the domain where evicting lower-priority pods makes room.
    const std::vector<PreemptionCandidate> running = preemption_candidates();
    const std::vector<DisruptionBudget> budgets = disruption_budgets();
    auto victims = plan_with_victims(*index_, ps, running, budgets, *preempting, options_.binpack,
                                     options_.fabric_health);
    if (!victims) return std::unexpected(victims.error().context("gang " + plan.key));
    if (!victims->fit) {
      return fail(ErrorCode::kUnavailable, "gang " + plan.key + " (" + std::to_string(count) +
                                               " pods) does not fit: " + placed->reason +
                                               "; and with preemption: " + victims->reason);
    }
    record_victims(plan, running, *victims);
    with_victims = std::move(victims.value());
  } else if (!placed->fit) {
    return fail(ErrorCode::kUnavailable,
                "gang " + plan.key + " (" + std::to_string(count) + " pods) does not fit: " + placed->reason);
  }
  const PodSetPlacement& p = with_victims ? with_victims->placement : placed->pod_sets.front();
  std::set<std::int32_t> taken;
  for (const auto& s : plan.slots) taken.insert(s.rank);
  std::int32_t next_rank = 0;
  for (const auto& a : p.assignment) {
    for (std::int32_t i = 0; i < a.count; ++i) {
      while (taken.contains(next_rank)) ++next_rank;
      plan.slots.push_back({.rank = next_rank++, .node = a.node_name, .domain_path = a.domain_path});
    }
  }
  std::sort(plan.slots.begin(), plan.slots.end(),
            [](const PlanSlot& a, const PlanSlot& b) { return a.rank < b.rank; });
  plan.fabric_health = p.fabric_health;
  plan.job_domain = p.domains.size() == 1 && index_->find_domain(p.domains.front()) != index_->root()
                        ? p.domains.front()
                        : std::string();
  plan.partition_tier = -1;
  plan.partition_size = 0;
  if (ps.partitions && !ps.partitions->level.empty()) {
    if (auto tier = index_->resolve_tier(ps.partitions->level)) plan.partition_tier = *tier;
    plan.partition_size = ps.partitions->size;
  }
  plan.last_activity = options_.clock->now();
  return {};
}

void ExtenderService::record_victims(GangPlan& plan, const std::vector<PreemptionCandidate>& running,
                                     const PreemptionPlan& victims) {
  plan.victims.clear();
  for (std::size_t i = 0; i < victims.victims.size(); ++i) {
    const PreemptionCandidate& v = running[victims.victims[i]];
    plan.victims.push_back({.uid = v.uid,
                            .ns = v.ns,
                            .name = v.name,
                            .node = index_->node(v.node).spec.name,
                            .priority = v.priority,
                            .violates_budget = victims.violates_budget[i]});
  }
  plan.broken_gangs = victims.broken_gangs;
  ++counters_.victim_plans;
  counters_.victims_planned += static_cast<std::int64_t>(plan.victims.size());
}

std::expected<GangPlan*, Error> ExtenderService::plan_for(const json& pod, const std::string& key,
                                                          const PreemptionOptions* preempting) {
  if (auto it = plans_.find(key); it != plans_.end()) return &it->second;
  auto count = gang_size(pod, key);
  if (!count) return std::unexpected(count.error());
  GangPlan plan;
  plan.key = key;
  plan.pod_doc = request_source(pod);
  // Pods of a Volcano Job, a KAI workload or an upstream PodGroup carry no topology: their PodGroup
  // does (group_topology_of). Read there, it is kept as the pod-level keys say it, unless the pod
  // states its own.
  if (auto it = group_topology_.find(key); it != group_topology_.end()) {
    json& annotations = plan.pod_doc["metadata"]["annotations"];
    if (!annotations.is_object()) annotations = json::object();
    bool has_own = false;
    for (const auto& [k, v] : annotations.items()) {
      has_own = has_own || k == "volcano.sh/network-topology-mode" ||
                k == "hypertopo.io/network-topology-mode" || k.starts_with("kai.scheduler/topology") ||
                k.starts_with("kueue.x-k8s.io/podset-");
    }
    if (!has_own) {
      for (const auto& [k, v] : it->second) annotations[k] = v;
    }
  }
  auto request = pod_set_request(plan.pod_doc, *count, true);
  if (!request) return std::unexpected(request.error());
  // A level named by a node label (an upstream PodGroup's topology key, KAI's levels) over
  // HyperNodes whose tiers are not named by it: the widest tier whose domains share one value.
  if (!request->level.empty() && !index_->resolve_tier(request->level)) {
    if (auto tier = index_->tier_of_label(request->level)) request->level = std::to_string(*tier);
  }
  plan.request = *request;
  if (auto ok = adopt_bound(plan, *count, preempting); !ok) return std::unexpected(ok.error());
  ++counters_.plans_made;
  auto [it, inserted] = plans_.emplace(key, std::move(plan));
  mark_changed();
  return &it->second;
}

// The cluster is the source of truth: pods of the gang already bound (before a restart without
// the state file, by another replica, or before the gang grew) keep their nodes, and the rest of
// the gang is planned inside the innermost domain that holds them, widening only as far as the
// gang's constraint allows.
std::expected<void, Error> ExtenderService::adopt_bound(GangPlan& plan, std::int32_t count,
                                                        const PreemptionOptions* preempting) {
  std::vector<const PodInfo*> bound;
  for (const auto& [id, p] : pods_) {
    if (p.gang == plan.key && index_->find_node(p.node) >= 0) bound.push_back(&p);
  }
  if (bound.empty()) return make_plan(plan, count, preempting);
  std::set<std::int32_t> ranks;
  std::vector<const PodInfo*> unranked;
  for (const PodInfo* p : bound) {
    const std::int32_t rank = p->index ? p->index->rank_in(count) : -1;
    if (rank < 0 || ranks.contains(rank)) {
      unranked.push_back(p);
      continue;
    }
    ranks.insert(rank);
    PlanSlot slot{.rank = rank, .node = p->node};
    scheduler::bind(slot, p->uid, p->node);
    slot.claim = SlotClaim::kPodIndex;
    plan.slots.push_back(std::move(slot));
  }
  std::int32_t next = 0;
  for (const PodInfo* p : unranked) {
    while (ranks.contains(next)) ++next;
    ranks.insert(next);
    PlanSlot slot{.rank = next, .node = p->node};
    scheduler::bind(slot, p->uid, p->node);
    slot.claim = SlotClaim::kArrivalOrder;
    plan.slots.push_back(std::move(slot));
  }
  for (auto& slot : plan.slots) {
    slot.domain_path = index_->domain_path(index_->node(index_->find_node(slot.node)).domain);
  }
  const int common = common_domain(plan);
  const std::int32_t missing = count - static_cast<std::int32_t>(plan.slots.size());
  plan.job_domain = common != index_->root() ? index_->domain(common).name : std::string();
  plan.last_activity = options_.clock->now();
  if (missing > 0) {
    PodSetRequest ps = plan.request;
    ps.count = missing;
    ps.partitions.reset();  // the bound pods fixed the partitions' domains; the rest fill in around them
    // The widest domain the constraint allows around the bound pods: its tier, else the root.
    int widest = index_->root();
    if (ps.mode == TopologyMode::kRequired && !ps.level.empty()) {
      if (auto tier = index_->resolve_tier(ps.level)) {
        widest = common;
        for (int d = common; d >= 0 && index_->domain(d).tier <= *tier; d = index_->domain(d).parent)
          widest = d;
      }
    }
    if (ps.mode == TopologyMode::kRequired) ps.level = std::to_string(index_->domain(widest).tier);
    PlacementEngine engine(*index_, options_.binpack, options_.fabric_health);
    std::optional<PodSetPlacement> placed;
    std::string why;
    for (int d = common; d >= 0; d = index_->domain(d).parent) {
      JobRequest job{.name = plan.key, .pod_sets = {ps}};
      auto r = engine.place_within(job, d);
      if (!r) return std::unexpected(r.error().context("gang " + plan.key));
      if (r->fit) {
        placed = r->pod_sets.front();
        break;
      }
      if (why.empty()) why = r->reason;
      if (d == widest) break;
    }
    if (!placed && preempting && widest >= 0) {
      // The bound pods fix the domain: the rest may make room there by evicting lower-priority pods.
      PreemptionOptions scoped = *preempting;
      scoped.scope = widest;
      const std::vector<PreemptionCandidate> running = preemption_candidates();
      auto victims = plan_with_victims(*index_, ps, running, disruption_budgets(), scoped, options_.binpack,
                                       options_.fabric_health);
      if (!victims) return std::unexpected(victims.error().context("gang " + plan.key));
      if (victims->fit) {
        record_victims(plan, running, *victims);
        placed = victims->placement;
      } else {
        why += "; and with preemption: " + victims->reason;
      }
    }
    if (!placed) {
      // Leave the index as it was: the plan is not kept.
      return fail(ErrorCode::kUnavailable,
                  "gang " + plan.key + ": " + std::to_string(plan.slots.size()) + " pods are bound in " +
                      (common == index_->root() ? std::string("the cluster") : index_->domain(common).name) +
                      " and the other " + std::to_string(missing) + " do not fit inside " +
                      index_->domain(widest).name +
                      ", the widest domain the gang's constraint allows: " + why);
    }
    std::int32_t rank = 0;
    for (const auto& a : placed->assignment) {
      for (std::int32_t i = 0; i < a.count; ++i) {
        while (ranks.contains(rank)) ++rank;
        ranks.insert(rank);
        plan.slots.push_back({.rank = rank, .node = a.node_name, .domain_path = a.domain_path});
      }
    }
    plan.fabric_health = placed->fabric_health;
    const int all = common_domain(plan);
    plan.job_domain = all != index_->root() ? index_->domain(all).name : std::string();
  }
  std::sort(plan.slots.begin(), plan.slots.end(),
            [](const PlanSlot& a, const PlanSlot& b) { return a.rank < b.rank; });
  if (plan.request.partitions && !plan.request.partitions->level.empty()) {
    if (auto tier = index_->resolve_tier(plan.request.partitions->level)) plan.partition_tier = *tier;
    plan.partition_size = plan.request.partitions->size;
  }
  ++counters_.plans_adopted;  // kept: an attempt whose rest did not fit counts nothing
  return {};
}

int ExtenderService::common_domain(const GangPlan& plan) const {
  std::vector<std::string> common;
  bool first = true;
  for (const auto& slot : plan.slots) {
    if (slot.state == SlotState::kDone || slot.domain_path.empty()) continue;
    if (first) {
      common = slot.domain_path;
      first = false;
      continue;
    }
    std::size_t n = 0;
    while (n < common.size() && n < slot.domain_path.size() && common[n] == slot.domain_path[n]) ++n;
    common.resize(n);
  }
  for (auto it = common.rbegin(); it != common.rend(); ++it) {
    if (const int d = index_->find_domain(*it); d >= 0) return d;
  }
  return index_->root();
}

int ExtenderService::constraint_domain(const GangPlan& plan, const PlanSlot& slot) const {
  if (plan.partition_tier > 0) {
    for (const auto& name : slot.domain_path) {
      const int d = index_->find_domain(name);
      if (d >= 0 && index_->domain(d).tier == plan.partition_tier) return d;
    }
    return -1;
  }
  // A required gang stays in its job domain; preferred and unconstrained gangs are kept close by
  // searching nearest first, but may go anywhere.
  if (plan.request.mode == TopologyMode::kRequired && !plan.job_domain.empty())
    return index_->find_domain(plan.job_domain);
  return index_->root();
}

int ExtenderService::find_room(const GangPlan& plan, int start, int limit, int exclude,
                               const std::function<bool(int)>& allowed) const {
  const ResolvedRequest request = resolve(plan.request.per_pod);
  // The gang's pods per lowest domain: Volcano's scoreWithTaskNum prefers the HyperNode that
  // already holds more of the gang's tasks among those the tier leaves equal.
  std::unordered_map<int, int> gang_pods_in;
  for (const auto& slot : plan.slots) {
    if (slot.state == SlotState::kDone) continue;
    if (const int n = index_->find_node(slot.node); n >= 0) ++gang_pods_in[index_->node(n).domain];
  }
  // Nearest first: the start domain's subtree, then its parent's, up to the limit. Inside one
  // level, kube-scheduler's own preferences break the tie: preferred node affinity (higher is
  // better), then untolerated PreferNoSchedule taints (fewer is better); then the domain holding
  // more of the gang's pods, then tree order.
  for (int d = start; d >= 0; d = index_->domain(d).parent) {
    int best = -1;
    std::int64_t best_pref = 0;
    int best_taints = 0;
    int best_mates = 0;
    std::vector<int> stack{d};
    std::vector<int> order;
    while (!stack.empty()) {
      const int dom = stack.back();
      stack.pop_back();
      for (int n : index_->domain(dom).nodes) order.push_back(n);
      const auto& children = index_->domain(dom).children;
      for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(*it);
    }
    for (int n : order) {
      if (n == exclude || (allowed && !allowed(n))) continue;
      const NodeSpec& spec = index_->node(n).spec;
      if (!node_usable_for(plan, spec.name) || !fits(n, request, &plan.request)) continue;
      const std::int64_t pref = plan.request.affinity.preference(spec);
      const int taints = intolerable_prefer_no_schedule(spec, plan.request.tolerations);
      const auto mates_at = gang_pods_in.find(index_->node(n).domain);
      const int mates = mates_at == gang_pods_in.end() ? 0 : mates_at->second;
      if (best < 0 || std::tie(pref, best_taints, mates) > std::tie(best_pref, taints, best_mates)) {
        best = n;
        best_pref = pref;
        best_taints = taints;
        best_mates = mates;
      }
    }
    if (best >= 0) return best;
    if (d == limit) break;
  }
  return -1;
}

namespace {

std::string domain_label(const TopologyIndex& index, int d) {
  return d == index.root() ? std::string("the cluster") : index.domain(d).name;
}

}  // namespace

bool ExtenderService::relocate(GangPlan& plan, PlanSlot& slot, const std::function<bool(int)>& allowed) {
  const int limit = constraint_domain(plan, slot);
  const int old_node = index_->find_node(slot.node);
  if (limit < 0) return false;  // the constraint domain itself is gone
  int start = limit;
  for (auto it = slot.domain_path.rbegin(); it != slot.domain_path.rend(); ++it) {
    const int d = index_->find_domain(*it);
    if (d >= 0) {
      start = d;
      break;
    }
  }
  const int found = find_room(plan, start, limit, old_node, allowed);
  if (found < 0) return false;
  set_reservation(plan, slot, -1);
  scheduler::move(slot, index_->node(found).spec.name, index_->domain_path(index_->node(found).domain));
  set_reservation(plan, slot, +1);
  ++plan.swaps;
  ++counters_.swaps;
  mark_changed();
  return true;
}

std::expected<PlanSlot*, Error> ExtenderService::grow(GangPlan& plan, std::int32_t rank) {
  // An elastic gang (minMember / minAvailable below its replicas): a pod beyond the planned ones
  // joins the gang's domain, nearest to the pods it has (Volcano networkTopologyAwareScore: the
  // tier of the lowest HyperNode common to the node and the gang's allocated ones, lowest first).
  const int common = common_domain(plan);
  int limit = index_->root();
  if (plan.request.mode == TopologyMode::kRequired && !plan.job_domain.empty()) {
    limit = index_->find_domain(plan.job_domain);
    if (limit < 0) limit = common;
  }
  const int found = find_room(plan, common, limit, -1, {});
  if (found < 0) {
    return fail(ErrorCode::kUnavailable,
                "gang " + plan.key + ": rank " + std::to_string(rank) + " joins the " +
                    std::to_string(plan.slots.size()) + " planned pods and waits for room in " +
                    domain_label(*index_, limit) +
                    " (no node there that passes the pod's node constraints has room)");
  }
  PlanSlot slot{.rank = rank,
                .node = index_->node(found).spec.name,
                .domain_path = index_->domain_path(index_->node(found).domain)};
  set_reservation(plan, slot, +1);
  plan.slots.push_back(std::move(slot));
  std::sort(plan.slots.begin(), plan.slots.end(),
            [](const PlanSlot& a, const PlanSlot& b) { return a.rank < b.rank; });
  ++plan.grown;
  ++counters_.slots_grown;
  for (auto& s : plan.slots) {
    if (s.rank == rank) return &s;
  }
  return fail(ErrorCode::kInternal, "gang " + plan.key + ": grown slot lost");
}

std::expected<PlanSlot*, Error> ExtenderService::take_slot(GangPlan& plan, const json& pod,
                                                           std::span<const std::string_view> offered) {
  const std::string uid = str_at(member(pod, "metadata"), "uid");
  for (auto& slot : plan.slots) {
    if (!uid.empty() && slot.pod_uid == uid &&
        (slot.state == SlotState::kReserved || slot.state == SlotState::kBound))
      return &slot;
  }
  auto index = pod_index(pod);
  if (!index) return std::unexpected(index.error());
  PlanSlot* mine = nullptr;
  SlotClaim claim = SlotClaim::kPodIndex;
  if (*index) {
    // Rank = pod index: the pod takes the slot the plan made for its rank, so partition
    // index / partitionSize lands in its partition's domain whatever the arrival order, and a
    // pod recreated with the same index takes its predecessor's slot back.
    const std::int32_t rank = (*index)->rank_in(plan.request.count);
    for (auto& slot : plan.slots) {
      if (slot.rank == rank) mine = &slot;
    }
    if (!mine) {
      auto grown = grow(plan, rank);
      if (!grown) return std::unexpected(grown.error());
      mine = *grown;
    }
    if (mine->state == SlotState::kReserved || mine->state == SlotState::kBound) {
      return fail(ErrorCode::kUnavailable, "gang " + plan.key + ": the slot of rank " + std::to_string(rank) +
                                               " is held by pod " + mine->pod_uid + " (" +
                                               to_string(mine->state) + " on " + mine->node + ")");
    }
    if (mine->state == SlotState::kDone) {
      // The rank runs again after it succeeded (a Job whose success policy restarted it).
      mine->state = SlotState::kPlanned;
      set_reservation(plan, *mine, +1);
    }
  } else {
    claim = SlotClaim::kArrivalOrder;
    // No index: the first offered node (kube-scheduler's order) that still has a free planned slot.
    std::unordered_map<std::string_view, PlanSlot*> free_slots;
    for (auto& slot : plan.slots) {
      if (slot.free()) free_slots.emplace(slot.node, &slot);
    }
    for (std::size_t i = 0; i < offered.size() && !mine && !free_slots.empty(); ++i) {
      if (auto it = free_slots.find(offered[i]); it != free_slots.end()) mine = it->second;
    }
    if (!mine && free_slots.empty()) {
      std::int32_t rank = 0;
      for (const auto& s : plan.slots) rank = std::max(rank, s.rank + 1);
      auto grown = grow(plan, rank);
      if (!grown) return std::unexpected(grown.error());
      mine = *grown;
    }
    if (!mine) {
      return fail(ErrorCode::kUnavailable,
                  "gang " + plan.key + ": no free planned slot among the offered nodes");
    }
  }
  scheduler::reserve(*mine, uid, claim);
  mark_changed();
  return mine;
}

void ExtenderService::expire_plans() {
  const auto now = options_.clock->now();
  bool changed = false;
  for (auto it = plans_.begin(); it != plans_.end();) {
    if (now - it->second.last_activity > options_.plan_ttl) {
      reserve(it->second, -1);
      it = plans_.erase(it);
      ++counters_.plans_expired;
      changed = true;
    } else {
      ++it;
    }
  }
  if (changed) mark_changed();
}

void ExtenderService::check_plans() {
  std::lock_guard lock(mu_);
  check_plans_locked();
}

void ExtenderService::check_plans_locked() {
  if (!ensure_index()) return;
  expire_plans();
  for (auto& [key, plan] : plans_) {
    bool replan = false;
    for (auto& slot : plan.slots) {
      if (!slot.holds_reservation()) continue;
      if (node_usable_for(plan, slot.node)) {
        if (!slot.waiting.empty()) {
          slot.waiting.clear();
          mark_changed();
        }
        continue;
      }
      if (relocate(plan, slot, {})) continue;
      if (!plan.any_bound()) {
        replan = true;  // nothing started yet: the whole gang may go elsewhere
        break;
      }
      // Pods of the gang run inside its domain: the slot waits there and says why.
      const int limit = constraint_domain(plan, slot);
      std::string why =
          "gang " + plan.key + ": rank " + std::to_string(slot.rank) + " waits for room in " +
          (limit < 0 ? std::string("its partition's domain, which is gone") : domain_label(*index_, limit)) +
          ": its planned node " + slot.node + " ";
      auto node = nodes_.find(slot.node);
      if (node == nodes_.end()) {
        why += "left the cluster";
      } else {
        const NodeSpec& spec = node->second;
        const auto check = check_node_constraints(spec, plan.request.node_selector, plan.request.affinity,
                                                  plan.request.tolerations);
        why += !spec.ready          ? "is NotReady"
               : spec.unschedulable ? "is unschedulable (cordoned)"
                                    : check.message();
      }
      why +=
          ", and no other node there that passes the pod's node constraints has room; the gang's pods stay "
          "inside its domain";
      if (slot.waiting != why) {
        scheduler::wait(slot, why);
        mark_changed();
      }
    }
    if (!replan) continue;
    // No room left inside the constraint domain and no pod bound: plan the gang again.
    reserve(plan, -1);
    GangPlan fresh = plan;
    std::erase_if(fresh.slots, [](const PlanSlot& s) { return s.state != SlotState::kBound; });
    const auto count = static_cast<std::int32_t>(plan.slots.size());
    if (make_plan(fresh, count)) {
      fresh.replans = plan.replans + 1;
      ++counters_.replans;
      plan = std::move(fresh);
      mark_changed();
    } else {
      reserve(plan, +1);  // keep the old plan; filter reports that its pods do not fit
    }
  }
}

}  // namespace hypertopo::scheduler
