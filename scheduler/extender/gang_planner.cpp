// What the gang book plans (gang_planner.h): a gang's plan made with the PlacementEngine (or
// place_sub_groups, or around its bound pods), a sub-group placed late, room for a pod beyond the
// planned ones, and the nodes a slot may move to inside its constraint domain.
#include "scheduler/extender/gang_planner.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "scheduler/extender/gang_book.h"
#include "scheduler/extender/gang_quorum.h"
#include "scheduler/extender/object_fields.h"
#include "scheduler/index/node_affinity.h"
#include "scheduler/input/job_loader.h"
#include "scheduler/input/kai_pod_group.h"
#include "scheduler/input/pod_request.h"
#include "scheduler/input/volcano_pod_group.h"
#include "scheduler/placement/around_bound.h"
#include "scheduler/placement/label_levels.h"
#include "scheduler/placement/nearest_room.h"
#include "scheduler/placement/placement_engine.h"
#include "scheduler/placement/sub_group_placement.h"

namespace hypertopo::scheduler {

using nlohmann::json;
using namespace fields;

std::string domain_label(const TopologyIndex& index, int d) {
  return d == index.root() ? std::string("the cluster") : index.domain(d).name;
}

GangPlanner::GangPlanner(const BookOptions& options, ClusterView& view, BookCounters& counters)
    : options_(options), view_(view), counters_(counters) {}

std::expected<void, Error> GangPlanner::make_plan(GangPlan& plan, std::int32_t count,
                                                  const PreemptionOptions* preempting) {
  PodSetRequest ps = plan.request;
  ps.count = count;
  resolve_label_level(view_.index(), ps.level);  // a plan read back from the state file
  if (ps.partitions && ps.partitions->size > 0) {
    ps.partitions->total = count / ps.partitions->size;
    ps.partitions->min = std::min(ps.partitions->min, ps.partitions->total);
  }
  JobRequest job{.name = plan.key, .pod_sets = {ps}};
  PlacementEngine engine(view_.index(), options_.binpack, options_.fabric_health);
  // KAI-Scheduler's topology (the pods' kai.scheduler/topology-* annotations, or their PodGroup's
  // topologyConstraint): KAI places the gang in its own domain order, fullest first and ancestors
  // first, as `place` does for the same PodGroup or Job (sub_group_placement.h).
  const json& annotations = member(member(plan.pod_doc, "metadata"), "annotations");
  job.job_required = str_at(annotations, "kai.scheduler/topology-required-placement");
  job.job_preferred = str_at(annotations, "kai.scheduler/topology-preferred-placement");
  resolve_label_level(view_.index(), job.job_required);
  resolve_label_level(view_.index(), job.job_preferred);
  auto placed = engine.place(job);  // a grouped job goes to place_sub_groups
  if (!placed) return std::unexpected(placed.error().context("gang " + plan.key));
  std::optional<PreemptionPlan> with_victims;
  if (!placed->fit && preempting) {
    // It fits nowhere as the cluster is: the domain where evicting lower-priority pods makes room.
    const std::vector<PreemptionCandidate> running = view_.preemption_candidates();
    const std::vector<DisruptionBudget> budgets = view_.disruption_budgets();
    auto victims = plan_with_victims(view_.index(), ps, running, budgets, *preempting, options_.binpack,
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
  plan.job_domain =
      p.domains.size() == 1 && view_.index().find_domain(p.domains.front()) != view_.index().root()
          ? p.domains.front()
          : std::string();
  plan.partition_tier = -1;
  plan.partition_size = 0;
  if (ps.partitions && !ps.partitions->level.empty()) {
    if (auto tier = view_.index().resolve_tier(ps.partitions->level)) plan.partition_tier = *tier;
    plan.partition_size = ps.partitions->size;
  }
  plan.last_activity = options_.clock->now();
  return {};
}

void GangPlanner::record_victims(GangPlan& plan, const std::vector<PreemptionCandidate>& running,
                                 const PreemptionPlan& victims) {
  plan.victims.clear();
  for (std::size_t i = 0; i < victims.victims.size(); ++i) {
    const PreemptionCandidate& v = running[victims.victims[i]];
    plan.victims.push_back({.uid = v.uid,
                            .ns = v.ns,
                            .name = v.name,
                            .node = view_.index().node(v.node).spec.name,
                            .priority = v.priority,
                            .violates_budget = victims.violates_budget[i]});
  }
  plan.broken_gangs = victims.broken_gangs;
  ++counters_.victim_plans;
  counters_.victims_planned += static_cast<std::int64_t>(plan.victims.size());
}

namespace {

// Whether the gang's PodGroup divides it into sub-groups (KAI's spec.subGroups, Volcano's
// spec.subGroupPolicy).
bool divides(const GroupedGang& gang) {
  const json& spec = member(*gang.pod_group, "spec");
  const char* key = gang.kind == PodGroupKind::kKai       ? "subGroups"
                    : gang.kind == PodGroupKind::kVolcano ? "subGroupPolicy"
                                                          : nullptr;
  return key && spec.contains(key) && spec[key].is_array() && !spec[key].empty();
}

// The PodGroup and its pending pods' request documents as one List, read by the reader `place`
// reads such a List with (job_loader.h parse_job: kai_pod_group.h, volcano_pod_group.h, an
// upstream PodGroup's pod_group_list). A gang of one spec without sub-groups counts its bound pods
// too, as `place` counts every pod of the List: they are of the same gang and, bound, no longer
// have a request document here.
std::expected<JobRequest, Error> read_whole(const ClusterView& view, const std::string& key,
                                            const GroupedGang& gang, std::int32_t count) {
  const std::size_t seen = view.gang_members_seen(key);
  if (std::cmp_less(seen, count))
    return fail(ErrorCode::kUnavailable, gang_waits_for_pods(key, seen, count, divides(gang)));
  json items = json::array({*gang.pod_group});
  const std::string group = str_at(member(*gang.pod_group, "metadata"), "name");
  for (const json* doc : gang.pending) {
    json pod = *doc;
    pod["kind"] = "Pod";
    // request_source keeps what the requests read; the upstream reader checks the group it names.
    if (gang.kind == PodGroupKind::kUpstream) pod["spec"]["schedulingGroup"] = {{"podGroupName", group}};
    items.push_back(std::move(pod));
  }
  auto loaded = parse_job(json{{"kind", "List"}, {"items", std::move(items)}}, {});
  if (!loaded) {
    return fail(ErrorCode::kUnavailable, "gang " + key + ": it cannot be planned from the " +
                                             std::to_string(gang.pending.size()) +
                                             " pending pods seen so far: " + loaded.error().message());
  }
  JobRequest job = std::move(loaded->request);
  job.name = key;
  if (!divides(gang) && job.pod_sets.size() == 1 && gang.kind == PodGroupKind::kKai) {
    std::int32_t bound = 0;
    for (const auto& [id, p] : view.pods()) bound += p.gang == key && !p.terminating;
    job.pod_sets.front().count += bound;
  }
  return job;
}

}  // namespace

std::expected<GangPlan, Error> GangPlanner::plan(const json& pod, const std::string& key,
                                                 const PreemptionOptions* preempting) {
  std::optional<PodGroupKind> sized_by;
  auto count = view_.gang_size(pod, key, &sized_by);
  if (!count) return std::unexpected(count.error());
  // The gang's scheduler tries it only once its pods (and, for a coscheduling PodGroup, the
  // cluster's free resources) make its minimum, as `place` finds (gang_quorum.h).
  if (auto ready = gang_quorum(view_, pod, key, sized_by, *count); !ready)
    return std::unexpected(ready.error());
  GangPlan plan;
  plan.key = key;
  plan.pod_doc = request_source(pod);
  // Pods of a Volcano Job, a KAI workload or an upstream PodGroup carry no topology: their PodGroup
  // does (group_topology_of). Read there, it is kept as the pod-level keys say it, unless the pod
  // states its own.
  bool has_own = false;
  for (const auto& [k, v] : member(member(plan.pod_doc, "metadata"), "annotations").items()) {
    has_own = has_own || k == "volcano.sh/network-topology-mode" ||
              k == "hypertopo.io/network-topology-mode" || k.starts_with("kai.scheduler/topology") ||
              k.starts_with("kueue.x-k8s.io/podset-");
  }
  if (const auto* topology = view_.group_topology(key)) {
    json& annotations = plan.pod_doc["metadata"]["annotations"];
    if (!annotations.is_object()) annotations = json::object();
    if (!has_own) {
      for (const auto& [k, v] : *topology) annotations[k] = v;
    }
  }
  auto request = pod_set_request(plan.pod_doc, *count, true);
  if (!request) return std::unexpected(request.error());
  // A level named by a node label (an upstream PodGroup's topology key, KAI's levels), as `place`
  // reads it (label_levels.h).
  resolve_label_level(view_.index(), request->level);
  plan.request = *request;
  std::int32_t size = *count;
  bool by_groups = false;
  if (view_.grouped(key)) {
    // A gang read from its PodGroup with its pods (a KAI or scheduling.k8s.io PodGroup, a Volcano one
    // with subGroupPolicy) is planned from what `place` reads of the same objects, not from the pod
    // asking: the PodGroup and every pod of it seen so far, read by the same reader (parse_job).
    view_.note_pending(pod, key, /*replace=*/false);
    const GroupedGang gang = *view_.grouped_gang(key);
    if (divides(gang)) {
      // Each sub-group's pods get their own slots in the domain its constraint allows; with pods
      // bound and no plan (a restart without the state file), around them (make_grouped_plan).
      by_groups = true;
    } else {
      auto whole = read_whole(view_, plan.key, gang, *count);
      if (!whole) return std::unexpected(whole.error());
      if (whole->pod_sets.size() == 1) {
        // One spec: the gang's pod set as `place` reads it, its ranks kept, planned around its bound
        // pods when it has some, as `place` plans it. A pod stating its own topology keeps it (it
        // wins over its group's); the gang's size is still the PodGroup's with its pods.
        if (!has_own) {
          plan.request = whole->pod_sets.front();
          resolve_label_level(view_.index(), plan.request.level);
        }
        size = plan.request.count = whole->pod_sets.front().count;
      } else {
        // Pods of several specs (a leader and its workers): one pod set each, placed together as
        // `place` places them, around the bound ones when some run; a slot goes to a pod of its spec.
        by_groups = true;
      }
    }
  }
  if (by_groups) {
    auto ok = make_grouped_plan(plan, *view_.grouped_gang(key), size);
    if (!ok) return std::unexpected(ok.error());
  } else if (auto ok = adopt_bound(plan, size, preempting); !ok) {
    return std::unexpected(ok.error());
  }
  return plan;
}

namespace {

// The sub-group a pod document belongs to under its PodGroup: KAI names it in a label, Volcano
// selects it by its subGroupPolicy (scheduler/input/volcano_pod_group.h); an upstream PodGroup has
// none.
std::expected<std::string, Error> sub_group_of(const GroupedGang& gang, const json& pod) {
  const json& labels = member(member(pod, "metadata"), "labels");
  if (gang.kind == PodGroupKind::kKai) return str_at(labels, kKaiSubGroupLabel);
  if (gang.kind == PodGroupKind::kUpstream) return std::string();
  std::map<std::string, std::string> values;
  for (const auto& [k, v] : labels.items()) {
    if (v.is_string()) values[k] = v.get<std::string>();
  }
  return volcano_sub_group_of(*gang.pod_group, values);
}

}  // namespace

// The gang as its PodGroup divides it (sub-groups, or pods of several specs): the PodGroup and the
// pods' request documents read as the `place` command reads such a List (read_whole), placed as
// the engine places such a job (sub_group_placement.h for a grouped one); each pod set becomes a
// PlanGroup whose slots stay in its domain.
std::expected<void, Error> GangPlanner::make_grouped_plan(GangPlan& plan, const GroupedGang& gang,
                                                          std::int32_t count) {
  // The gang's pods already bound keep their nodes; the rest is planned around them by the rule
  // `place` follows for the same objects (around_bound.h place_gang_around_bound).
  std::vector<const ViewPod*> bound;
  for (const auto& [id, p] : view_.pods()) {
    if (p.gang == plan.key && !p.terminating && view_.index().find_node(p.node) >= 0) bound.push_back(&p);
  }
  // The controller makes the pods together, but the watch delivers them one by one: a plan made
  // from fewer pods than the gang's minimum would leave the others without slots.
  if (static_cast<std::int64_t>(gang.pending.size() + bound.size()) < count) {
    return fail(ErrorCode::kUnavailable,
                gang_waits_for_pods(plan.key, gang.pending.size() + bound.size(), count, divides(gang)));
  }
  // The reader checks a Volcano sub-group's subGroupSize on the pods it is given: with some bound,
  // the pending ones are fewer, and the bound ones are counted around_bound's way instead.
  GroupedGang to_read = gang;
  json relaxed;
  if (!bound.empty() && gang.kind == PodGroupKind::kVolcano) {
    relaxed = *gang.pod_group;
    json& spec = relaxed["spec"];
    if (spec.is_object() && spec.contains("subGroupPolicy") && spec["subGroupPolicy"].is_array()) {
      for (json& policy : spec["subGroupPolicy"])
        if (policy.is_object()) policy.erase("subGroupSize");
    }
    to_read.pod_group = &relaxed;
  }
  auto whole = read_whole(view_, plan.key, to_read, count);
  if (!whole) return std::unexpected(whole.error());
  JobRequest& job = *whole;
  resolve_label_levels(view_.index(), job);
  if (!bound.empty() && !plans_around_bound_by_groups(job)) return adopt_bound(plan, count);
  PlacementEngine engine(view_.index(), options_.binpack, options_.fabric_health);
  std::expected<GangAroundBound, Error> around = GangAroundBound{};
  std::vector<GangBoundPod> bound_pods;
  for (const ViewPod* p : bound) {
    auto sub = sub_group_of(gang, json{{"metadata", {{"labels", p->labels}}}});
    if (!sub) return std::unexpected(sub.error().context("gang " + plan.key));
    bound_pods.push_back({.node = p->node, .sub_group = *sub, .requests = p->requests});
  }
  if (!bound.empty()) {
    around = place_gang_around_bound(view_.index(), engine, job, bound_pods, /*counted=*/false);
    if (!around) return std::unexpected(around.error().context("gang " + plan.key));
    if (!around->fit) {
      AroundBound whole_gang{.bound = around->bound, .missing = around->missing};
      whole_gang.common = around->common;
      whole_gang.widest = around->widest;
      return fail(ErrorCode::kUnavailable,
                  "gang " + plan.key + ": " + around_bound_refusal(view_.index(), whole_gang, around->why));
    }
    job = around->job;
  }
  auto placed = bound.empty() ? engine.place(job)  // a grouped job goes to place_sub_groups
                              : std::expected<JobPlacement, Error>(JobPlacement{.fit = true});
  if (!placed) return std::unexpected(placed.error().context("gang " + plan.key));
  std::int32_t pods = 0;
  for (const auto& ps : job.pod_sets) pods += ps.count;
  if (!placed->fit) {
    const std::string parts = job.sub_groups.empty() ? std::to_string(job.pod_sets.size()) + " pod sets"
                                                     : std::to_string(job.sub_groups.size()) + " sub-groups";
    return fail(ErrorCode::kUnavailable, "gang " + plan.key + " (" + std::to_string(pods) + " pods in " +
                                             parts + ") does not fit: " + placed->reason);
  }
  // Each pod set's request document: the k-th distinct spec among its sub-group's pods is the
  // sub-group's k-th pod set (the readers make pod sets in the order specs first appear).
  std::map<std::string, std::vector<const json*>> specs_of;  // sub-group -> distinct specs' pods
  for (const json* doc : gang.pending) {
    auto sub = sub_group_of(gang, *doc);
    if (!sub) return std::unexpected(sub.error().context("gang " + plan.key));
    auto& seen = specs_of[*sub];
    const json& spec = member(*doc, "spec");
    if (std::none_of(seen.begin(), seen.end(), [&](const json* d) { return member(*d, "spec") == spec; }))
      seen.push_back(doc);
  }
  std::map<std::string, std::size_t> taken_of;
  std::int32_t rank = 0;
  for (std::size_t i = 0; i < job.pod_sets.size(); ++i) {
    const PodSetRequest& ps = job.pod_sets[i];
    PlanGroup group{.name = ps.sub_group, .request = ps};
    auto& docs = specs_of[ps.sub_group];
    const std::size_t k = taken_of[ps.sub_group]++;
    group.pod_doc = k < docs.size()        ? *docs[k]
                    : !docs.empty()        ? *docs.back()
                    : gang.pending.empty() ? json::object()
                                           : *gang.pending.front();
    group.spec_text = member(group.pod_doc, "spec").dump();
    // Its slots, the engine's or those around the bound pods (a bound one holds its pod).
    std::vector<AroundBoundSlot> slots;
    std::string domain;
    if (bound.empty()) {
      const PodSetPlacement& where = placed->pod_sets[i];
      for (const auto& a : where.assignment) {
        for (std::int32_t n = 0; n < a.count; ++n)
          slots.push_back({.node = a.node_name, .domain_path = a.domain_path});
      }
      if (where.domains.size() == 1 && !where.assignment.empty()) domain = where.domains.front();
    } else {
      slots = around->pod_sets[i].slots;
      std::vector<const std::vector<std::string>*> paths;
      for (const auto& s : slots) paths.push_back(&s.domain_path);
      if (const int d = deepest_common_domain(view_.index(), paths);
          !slots.empty() && d != view_.index().root())
        domain = view_.index().domain(d).name;
    }
    // Its slots stay in its domain when its sub-group requires one (a preferred level may move).
    const auto sg = std::find_if(job.sub_groups.begin(), job.sub_groups.end(),
                                 [&](const SubGroupRequest& r) { return r.name == ps.sub_group; });
    if (sg != job.sub_groups.end() && !sg->required.empty()) {
      group.level = sg->required;
      group.domain = domain;
    }
    for (const auto& s : slots) {
      PlanSlot slot{.rank = rank++, .node = s.node, .domain_path = s.domain_path};
      slot.group = static_cast<std::int32_t>(i);
      if (s.bound >= 0) {
        const ViewPod* p = bound[static_cast<std::size_t>(s.bound)];
        scheduler::bind(slot, p->uid, p->node, SlotClaim::kArrivalOrder);
      }
      plan.slots.push_back(std::move(slot));
    }
    plan.groups.push_back(std::move(group));
  }
  plan.request.count = rank;
  if (!bound.empty()) ++counters_.plans_adopted;
  const int common = common_domain(plan);
  plan.job_domain = common != view_.index().root() ? view_.index().domain(common).name : std::string();
  plan.last_activity = options_.clock->now();
  return {};
}

std::expected<int, Error> GangPlanner::group_of(const GangPlan& plan, const json& pod) const {
  auto gang = view_.grouped_gang(plan.key, /*with_pending=*/false);
  std::string sub;
  if (gang) {
    auto found = sub_group_of(*gang, pod);
    if (!found) return std::unexpected(found.error());
    sub = *found;
  } else {
    // The PodGroup went away after the plan was made: KAI's label still names the sub-group.
    sub = str_at(member(member(pod, "metadata"), "labels"), kKaiSubGroupLabel);
  }
  const std::string spec = member(request_source(pod), "spec").dump();
  int first = -1;
  for (std::size_t i = 0; i < plan.groups.size(); ++i) {
    if (plan.groups[i].name != sub) continue;
    if (plan.groups[i].spec_text == spec) return static_cast<int>(i);
    if (first < 0) first = static_cast<int>(i);
  }
  if (first >= 0) return first;
  return fail(ErrorCode::kUnavailable, "gang " + plan.key + ": pod " + pod_label(pod) + " belongs to " +
                                           (sub.empty() ? std::string("no sub-group") : "sub-group " + sub) +
                                           ", which the gang's plan has no slot for");
}

// The cluster is the source of truth: pods of the gang already bound (before a restart without
// the state file, by another replica, or before the gang grew) keep their nodes, and the rest of
// the gang is planned around them (scheduler/placement/around_bound.h), as `place` plans a job
// whose pods are partly running.
std::expected<void, Error> GangPlanner::adopt_bound(GangPlan& plan, std::int32_t count,
                                                    const PreemptionOptions* preempting) {
  std::vector<const ViewPod*> bound;
  for (const auto& [id, p] : view_.pods()) {
    if (p.gang == plan.key && view_.index().find_node(p.node) >= 0) bound.push_back(&p);
  }
  if (bound.empty()) return make_plan(plan, count, preempting);
  std::vector<BoundGangPod> pods;
  pods.reserve(bound.size());
  for (const ViewPod* p : bound)
    pods.push_back({.node = p->node, .rank = p->index ? p->index->rank_in(count) : -1});
  const std::int32_t missing = count - static_cast<std::int32_t>(bound.size());
  PlacementEngine engine(view_.index(), options_.binpack, options_.fabric_health);
  auto around = place_around_bound(view_.index(), engine, plan.request, pods, missing);
  if (!around) return std::unexpected(around.error().context("gang " + plan.key));
  if (!around->fit && preempting && around->widest >= 0) {
    // The bound pods fix the domain: the rest may make room there by evicting lower-priority pods.
    PreemptionOptions scoped = *preempting;
    scoped.scope = around->widest;
    const std::vector<PreemptionCandidate> running = view_.preemption_candidates();
    auto victims = plan_with_victims(view_.index(), around->rest, running, view_.disruption_budgets(), scoped,
                                     options_.binpack, options_.fabric_health);
    if (!victims) return std::unexpected(victims.error().context("gang " + plan.key));
    if (victims->fit) {
      record_victims(plan, running, *victims);
      add_rest(*around, victims->placement);
    } else {
      around->why += "; and with preemption: " + victims->reason;
    }
  }
  if (!around->fit) {
    // Leave the index as it was: the plan is not kept.
    return fail(ErrorCode::kUnavailable,
                "gang " + plan.key + ": " + around_bound_refusal(view_.index(), *around, around->why));
  }
  for (const auto& s : around->slots) {
    PlanSlot slot{.rank = s.rank, .node = s.node, .domain_path = s.domain_path};
    if (s.bound >= 0) {
      const ViewPod* p = bound[static_cast<std::size_t>(s.bound)];
      scheduler::bind(slot, p->uid, p->node, s.by_index ? SlotClaim::kPodIndex : SlotClaim::kArrivalOrder);
    }
    plan.slots.push_back(std::move(slot));
  }
  if (around->placed) plan.fabric_health = around->placed->fabric_health;
  const int all = common_domain(plan);
  plan.job_domain = all != view_.index().root() ? view_.index().domain(all).name : std::string();
  plan.last_activity = options_.clock->now();
  if (plan.request.partitions && !plan.request.partitions->level.empty()) {
    if (auto tier = view_.index().resolve_tier(plan.request.partitions->level)) plan.partition_tier = *tier;
    plan.partition_size = plan.request.partitions->size;
  }
  ++counters_.plans_adopted;  // kept: an attempt whose rest did not fit counts nothing
  return {};
}

int GangPlanner::common_domain(const GangPlan& plan, std::int32_t group) const {
  std::vector<const std::vector<std::string>*> paths;
  for (const auto& slot : plan.slots) {
    if (slot.state == SlotState::kDone) continue;
    if (group >= 0 && slot.group != group) continue;
    paths.push_back(&slot.domain_path);
  }
  return deepest_common_domain(view_.index(), paths);
}

int GangPlanner::constraint_domain(const GangPlan& plan, const PlanSlot& slot) const {
  if (slot.group >= 0 && static_cast<std::size_t>(slot.group) < plan.groups.size()) {
    const std::string& domain = plan.groups[static_cast<std::size_t>(slot.group)].domain;
    if (!domain.empty()) return view_.index().find_domain(domain);
  }
  // A gang planned by sub-groups stays in the domain it was planned in.
  if (!plan.groups.empty() && !plan.job_domain.empty()) return view_.index().find_domain(plan.job_domain);
  if (plan.partition_tier > 0) {
    for (const auto& name : slot.domain_path) {
      const int d = view_.index().find_domain(name);
      if (d >= 0 && view_.index().domain(d).tier == plan.partition_tier) return d;
    }
    return -1;
  }
  // A required gang stays in its job domain; preferred and unconstrained gangs are kept close by
  // searching nearest first, but may go anywhere.
  if (plan.request.mode == TopologyMode::kRequired && !plan.job_domain.empty())
    return view_.index().find_domain(plan.job_domain);
  return view_.index().root();
}

int GangPlanner::find_room(const GangPlan& plan, const PodSetRequest& ps, int start, int limit, int exclude,
                           const std::function<bool(int)>& allowed) const {
  const ClusterView::ResolvedRequest request = view_.resolve(ps.per_pod);
  // The gang's pods per lowest domain: Volcano's scoreWithTaskNum prefers the HyperNode that
  // already holds more of the gang's tasks among those the tier leaves equal.
  std::unordered_map<int, int> gang_pods_in;
  for (const auto& slot : plan.slots) {
    if (slot.state == SlotState::kDone) continue;
    if (const int n = view_.index().find_node(slot.node); n >= 0)
      ++gang_pods_in[view_.index().node(n).domain];
  }
  return nearest_room(view_.index(), ps,
                      {.start = start,
                       .limit = limit,
                       .exclude = exclude,
                       .usable =
                           [&](int n) {
                             return (!allowed || allowed(n)) &&
                                    view_.node_usable_for(ps, view_.index().node(n).spec.name) &&
                                    view_.fits(n, request, &ps);
                           },
                       .mates = &gang_pods_in});
}

int GangPlanner::widest_allowed_domain(int domain, const std::string& level) const {
  const TopologyIndex& index = view_.index();
  auto highest = index.resolve_tier(level);
  if (!highest) return domain;  // no readable limit: the domain the gang was planned in
  int widest = domain;
  for (int d = index.domain(domain).parent; d >= 0 && d != index.root() && index.domain(d).tier <= *highest;
       d = index.domain(d).parent)
    widest = d;
  return widest;
}

std::expected<void, Error> GangPlanner::place_group(GangPlan& plan, std::int32_t g) {
  PlanGroup& group = plan.groups[static_cast<std::size_t>(g)];
  PodSetRequest ps = group.request;
  ps.count = std::max<std::int32_t>(ps.count, 1);
  if (!group.level.empty()) {
    ps.mode = TopologyMode::kRequired;
    ps.level = group.level;
  }
  int limit = view_.index().root();
  if (!plan.job_domain.empty()) {
    if (const int d = view_.index().find_domain(plan.job_domain); d >= 0) limit = d;
  }
  const std::string label = group.name.empty() ? std::string("its own pods") : "sub-group " + group.name;
  PlacementEngine engine(view_.index(), options_.binpack, options_.fabric_health);
  auto placed = engine.place_within(JobRequest{.name = plan.key + "/" + group.name, .pod_sets = {ps}}, limit);
  if (!placed) return std::unexpected(placed.error().context("gang " + plan.key + " " + label));
  if (!placed->fit) {
    return fail(ErrorCode::kUnavailable, "gang " + plan.key + ": " + label + " (" + std::to_string(ps.count) +
                                             " pods) waits for room in " +
                                             domain_label(view_.index(), limit) + ": " + placed->reason);
  }
  const PodSetPlacement& where = placed->pod_sets.front();
  std::int32_t rank = 0;
  for (const auto& s : plan.slots) rank = std::max(rank, s.rank + 1);
  for (const auto& a : where.assignment) {
    for (std::int32_t n = 0; n < a.count; ++n) {
      PlanSlot slot{.rank = rank++, .node = a.node_name, .domain_path = a.domain_path};
      slot.group = g;
      plan.slots.push_back(std::move(slot));
      ++plan.grown;
      ++counters_.slots_grown;
    }
  }
  if (!group.level.empty() && where.domains.size() == 1) group.domain = where.domains.front();
  return {};
}

std::expected<int, Error> GangPlanner::room_to_grow(const GangPlan& plan, std::int32_t rank,
                                                    std::int32_t group) {
  // An elastic gang (minMember / minAvailable below its replicas): a pod beyond the planned ones
  // joins the gang's domain, nearest to the pods it has (Volcano networkTopologyAwareScore: the
  // tier of the lowest HyperNode common to the node and the gang's allocated ones, lowest first).
  // A pod of a sub-group joins its sub-group's domain, nearest to that sub-group's pods.
  const int common = common_domain(plan, group);
  int limit = view_.index().root();
  if (group >= 0 && !plan.groups[static_cast<std::size_t>(group)].domain.empty()) {
    limit = view_.index().find_domain(plan.groups[static_cast<std::size_t>(group)].domain);
    if (limit < 0) limit = common;
  } else if ((plan.request.mode == TopologyMode::kRequired || !plan.groups.empty()) &&
             !plan.job_domain.empty()) {
    limit = view_.index().find_domain(plan.job_domain);
    if (limit < 0) {
      limit = common;
    } else if (plan.groups.empty() && plan.partition_tier <= 0) {
      // Volcano's hard gradient for a job already running (network_topology_aware.go
      // hyperNodeGradientFn -> getSearchRoot -> getHighestAllowedHyperNode): the search root is the
      // highest ancestor of the job's allocated HyperNode whose tier is within highestTierAllowed,
      // so pods beyond minMember may go anywhere inside it, nearest first (find_room below: the
      // LCA tier of networkTopologyAwareScore, then the task count of scoreWithTaskNum).
      limit = widest_allowed_domain(limit, plan.request.level);
    }
  }
  const PodSetRequest& request =
      group >= 0 ? plan.groups[static_cast<std::size_t>(group)].request : plan.request;
  int found = -1;
  if (group < 0 && plan.groups.empty() && plan.partition_tier <= 0 && view_.index_current()) {
    // The gang's own pods grow as `place` grows an elastic gang: the placement layer's grow_elastic
    // (around_bound.h), from the slots the gang holds and the domain its minimum was planned in.
    AroundBound around;
    for (const auto& s : plan.slots) {
      if (s.state != SlotState::kDone)
        around.slots.push_back({.rank = s.rank, .node = s.node, .domain_path = s.domain_path});
    }
    const int job_domain = plan.job_domain.empty() ? -1 : view_.index().find_domain(plan.job_domain);
    const std::int32_t ranks[] = {rank};
    if (grow_elastic(view_.index(), around, request, job_domain, ranks).empty()) {
      for (const auto& s : around.slots) {
        if (s.rank == rank) found = view_.index().find_node(s.node);
      }
      // grow_elastic put the pod's request on the node; the new slot's reservation holds it.
      if (found >= 0) (void)view_.index().add_pods(found, request.per_pod, -1);
    }
  } else {
    found = find_room(plan, request, common, limit, -1, {});
  }
  if (found < 0) {
    return fail(ErrorCode::kUnavailable,
                "gang " + plan.key + ": rank " + std::to_string(rank) + " joins the " +
                    std::to_string(plan.slots.size()) + " planned pods and waits for room in " +
                    domain_label(view_.index(), limit) +
                    " (no node there that passes the pod's node constraints has room)");
  }
  return found;
}

}  // namespace hypertopo::scheduler
