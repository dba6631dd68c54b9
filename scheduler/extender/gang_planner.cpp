// Gangs: which gang a pod belongs to, the plan the PlacementEngine makes for it, and keeping that
// plan valid (slot swaps inside the constraint domain, re-plans, expiry).
#include <algorithm>
#include <functional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "scheduler/extender/extender_service.h"
#include "scheduler/extender/object_fields.h"
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
  if (name.empty()) return std::optional<std::string>();
  return std::optional<std::string>(str_at(meta, "namespace") + "/" + name);
}

namespace {

constexpr const char* kGangSize = "hypertopo.io/gang-size";
constexpr const char* kKueueGroupCount = "kueue.x-k8s.io/pod-group-total-count";
constexpr const char* kCoschedulingLabel = "scheduling.x-k8s.io/pod-group";

// What a plan keeps of its first pod to read the request again after a restart.
json request_source(const json& pod) {
  const json& meta = member(pod, "metadata");
  return json{{"metadata",
               {{"name", str_at(meta, "name")},
                {"namespace", str_at(meta, "namespace")},
                {"annotations", member(meta, "annotations")}}},
              {"spec", member(pod, "spec")}};
}

}  // namespace

std::expected<std::int32_t, Error> ExtenderService::gang_size(const json& pod, const std::string& key) const {
  const json& meta = member(pod, "metadata");
  const json& annotations = member(meta, "annotations");
  for (const char* k : {kGangSize, kKueueGroupCount}) {
    const std::string v = str_at(annotations, k);
    if (!v.empty()) return positive_count(v, std::string("annotation ") + k, "Pod " + pod_label(pod));
  }
  // sigs.k8s.io/scheduler-plugins pkg/coscheduling: the pod-group label names a PodGroup in the
  // pod's namespace whose spec.minMember is the gang's quorum.
  if (!str_at(member(meta, "labels"), kCoschedulingLabel).empty()) {
    auto it = pod_group_min_member_.find(key);
    if (it == pod_group_min_member_.end()) {
      return fail(ErrorCode::kUnavailable, "Pod " + pod_label(pod) + ": PodGroup " + key + " (label " +
                                               kCoschedulingLabel + ") not found");
    }
    return it->second;
  }
  return 1;
}

std::expected<void, Error> ExtenderService::make_plan(GangPlan& plan, std::int32_t count) {
  PodSetRequest ps = plan.request;
  ps.count = count;
  if (ps.partitions && ps.partitions->size > 0) {
    ps.partitions->total = count / ps.partitions->size;
    ps.partitions->min = std::min(ps.partitions->min, ps.partitions->total);
  }
  JobRequest job{.name = plan.key, .pod_sets = {ps}};
  PlacementEngine engine(*index_, options_.binpack, options_.fabric_health);
  auto placed = engine.place(job);
  if (!placed) return std::unexpected(placed.error().context("gang " + plan.key));
  if (!placed->fit) {
    return fail(ErrorCode::kUnavailable,
                "gang " + plan.key + " (" + std::to_string(count) + " pods) does not fit: " + placed->reason);
  }
  const PodSetPlacement& p = placed->pod_sets.front();
  std::set<std::int32_t> taken;
  for (const auto& s : plan.slots) taken.insert(s.rank);
  std::int32_t next_rank = 0;
  for (const auto& a : p.assignment) {
    for (std::int32_t i = 0; i < a.count; ++i) {
      while (taken.contains(next_rank)) ++next_rank;
      plan.slots.push_back({next_rank++, a.node_name, a.domain_path, "", false});
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

std::expected<GangPlan*, Error> ExtenderService::plan_for(const json& pod, const std::string& key) {
  if (auto it = plans_.find(key); it != plans_.end()) return &it->second;
  auto count = gang_size(pod, key);
  if (!count) return std::unexpected(count.error());
  GangPlan plan;
  plan.key = key;
  plan.pod_doc = request_source(pod);
  auto request = pod_set_request(plan.pod_doc, *count, true);
  if (!request) return std::unexpected(request.error());
  plan.request = *request;
  if (auto ok = make_plan(plan, *count); !ok) return std::unexpected(ok.error());
  ++counters_.plans_made;
  auto [it, inserted] = plans_.emplace(key, std::move(plan));
  save_state();
  return &it->second;
}

std::expected<PlanSlot*, Error> ExtenderService::take_slot(GangPlan& plan, const json& pod,
                                                           std::span<const std::string_view> offered) {
  const std::string uid = str_at(member(pod, "metadata"), "uid");
  for (auto& slot : plan.slots) {
    if (!uid.empty() && slot.pod_uid == uid) return &slot;
  }
  auto index = pod_index(pod);
  if (!index) return std::unexpected(index.error());
  PlanSlot* mine = nullptr;
  if (*index) {
    // Rank = pod index: the pod takes the slot the plan made for its rank, so partition
    // index / partitionSize lands in its partition's domain whatever the arrival order.
    const std::int32_t rank = (*index)->value;
    for (auto& slot : plan.slots) {
      if (slot.rank == rank) mine = &slot;
    }
    if (!mine) {
      return fail(ErrorCode::kInvalidArgument, "Pod " + pod_label(pod) + ": " + (*index)->key + " " +
                                                   std::to_string(rank) + " is outside gang " + plan.key +
                                                   " of " + std::to_string(plan.slots.size()) + " pods");
    }
    if (mine->bound || (!mine->pod_uid.empty() && mine->pod_uid != uid)) {
      return fail(ErrorCode::kUnavailable, "gang " + plan.key + ": the slot of rank " + std::to_string(rank) +
                                               " is already taken by pod " + mine->pod_uid);
    }
    mine->taken_by = "podIndex";
  } else {
    // No index: the first offered node (kube-scheduler's order) that still has a free planned slot.
    std::unordered_map<std::string_view, PlanSlot*> free_slots;
    for (auto& slot : plan.slots) {
      if (slot.pod_uid.empty() && !slot.bound) free_slots.emplace(slot.node, &slot);
    }
    for (std::size_t i = 0; i < offered.size() && !mine && !free_slots.empty(); ++i) {
      if (auto it = free_slots.find(offered[i]); it != free_slots.end()) mine = it->second;
    }
    if (!mine)
      return fail(ErrorCode::kUnavailable,
                  "gang " + plan.key + ": no free planned slot among the offered nodes");
    mine->taken_by = "arrivalOrder";
  }
  mine->pod_uid = uid;
  save_state();
  return mine;
}

bool ExtenderService::swap_slot(GangPlan& plan, PlanSlot& slot) {
  // The innermost constraint domain: the partition's domain, else the job domain, else the root.
  int limit = index_->root();
  if (plan.partition_tier > 0) {
    limit = -1;
    for (const auto& name : slot.domain_path) {
      const int d = index_->find_domain(name);
      if (d >= 0 && index_->domain(d).tier == plan.partition_tier) limit = d;
    }
  } else if (!plan.job_domain.empty()) {
    limit = index_->find_domain(plan.job_domain);
  }
  if (limit < 0) return false;  // the constraint domain itself is gone
  int start = limit;
  for (auto it = slot.domain_path.rbegin(); it != slot.domain_path.rend(); ++it) {
    const int d = index_->find_domain(*it);
    if (d >= 0) {
      start = d;
      break;
    }
  }
  const int old_node = index_->find_node(slot.node);
  const ResolvedRequest request = resolve(plan.request.per_pod);
  for (int d = start; d >= 0; d = index_->domain(d).parent) {
    // Nodes of d's subtree in tree order.
    int found = -1;
    std::function<void(int)> scan = [&](int dom) {
      for (int n : index_->domain(dom).nodes) {
        if (found >= 0) return;
        if (n == old_node || !node_usable(index_->node(n).spec.name)) continue;
        if (fits(n, request, &plan.request)) found = n;
      }
      for (int c : index_->domain(dom).children) {
        if (found < 0) scan(c);
      }
    };
    scan(d);
    if (found >= 0) {
      if (old_node >= 0) (void)index_->add_pods(old_node, plan.request.per_pod, -1);
      (void)index_->add_pods(found, plan.request.per_pod, +1);
      slot.node = index_->node(found).spec.name;
      slot.domain_path = index_->domain_path(index_->node(found).domain);
      ++plan.swaps;
      ++counters_.swaps;
      return true;
    }
    if (d == limit) break;
  }
  return false;
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
  if (changed) save_state();
}

void ExtenderService::check_plans() {
  std::lock_guard lock(mu_);
  check_plans_locked();
}

void ExtenderService::check_plans_locked() {
  if (!ensure_index()) return;
  expire_plans();
  bool changed = false;
  for (auto& [key, plan] : plans_) {
    bool replan = false;
    for (auto& slot : plan.slots) {
      if (slot.bound || node_usable(slot.node)) continue;
      changed = true;
      if (!swap_slot(plan, slot)) {
        replan = true;
        break;
      }
    }
    if (!replan) continue;
    // No room left inside the constraint domain: plan the pods that are not bound yet again.
    reserve(plan, -1);
    GangPlan fresh = plan;
    std::erase_if(fresh.slots, [](const PlanSlot& s) { return !s.bound; });
    const auto count = static_cast<std::int32_t>(plan.slots.size() - fresh.slots.size());
    if (make_plan(fresh, count)) {
      fresh.replans = plan.replans + 1;
      ++counters_.replans;
      plan = std::move(fresh);
    } else {
      reserve(plan, +1);  // keep the old plan; filter reports that its pods do not fit
    }
  }
  if (changed) save_state();
}

}  // namespace hypertopo::scheduler
