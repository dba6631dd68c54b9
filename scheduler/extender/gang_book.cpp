// The gang book (gang_book.h): plans made with the PlacementEngine (or place_sub_groups), the
// slots' transitions as pod events come, and keeping plans valid (slot swaps inside the constraint
// domain, re-plans, expiry).
#include "scheduler/extender/gang_book.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

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

GangBook::GangBook(BookOptions options, ClusterView& view) : options_(std::move(options)), view_(view) {
  if (!options_.clock) options_.clock = std::make_shared<timing::SystemClock>();
  if (!options_.log) options_.log = telemetry::make_stderr_logger(telemetry::LogLevel::kInfo);
  if (!options_.state_file.empty()) saver_ = std::jthread([this](std::stop_token stop) { run_saver(stop); });
}

GangBook::~GangBook() {
  if (saver_.joinable()) {
    saver_.request_stop();
    saver_.join();
  }
  flush_state();
}

std::expected<void, Error> GangBook::ensure_index() {
  auto rebuilt = view_.ensure_index();
  if (!rebuilt) return std::unexpected(rebuilt.error());
  // A fresh index holds the pods' usage only: the plans' reservations go back on it.
  if (*rebuilt) {
    for (const auto& [key, plan] : plans_) reserve(plan, +1);
  }
  return {};
}

void GangBook::apply(const PodEvent& event) {
  switch (event.kind) {
    case PodEvent::Kind::kBound:
      if (event.pod) record_binding(*event.pod);
      break;
    case PodEvent::Kind::kGone:
      release_slot_of(event.uid, false);
      break;
    case PodEvent::Kind::kSucceeded:
      release_slot_of(event.uid, true);
      break;
    case PodEvent::Kind::kNone:
      break;
  }
}

void GangBook::resync() {
  // A relist (start-up after a state file, a watch gap): slots whose pod is no longer bound in the
  // cluster were released while unseen.
  std::vector<std::string> gone;
  for (const auto& [key, plan] : plans_) {
    for (const auto& slot : plan.slots) {
      if (slot.state == SlotState::kBound && !view_.pod(slot.pod_uid)) gone.push_back(slot.pod_uid);
    }
  }
  for (const auto& uid : gone) release_slot_of(uid, false);
  for (const auto& [uid, p] : view_.pods()) record_binding(p);
}

GangPlan* GangBook::find(const std::string& key) {
  auto it = plans_.find(key);
  return it == plans_.end() ? nullptr : &it->second;
}

std::vector<const PlanVictim*> GangBook::pending_victims(const GangPlan& plan,
                                                         const std::string& node) const {
  std::vector<const PlanVictim*> out;
  for (const auto& v : plan.victims) {
    if (v.node == node && !view_.leaving(v.uid, v.node)) out.push_back(&v);
  }
  return out;
}

std::expected<void, Error> GangBook::make_plan(GangPlan& plan, std::int32_t count,
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

void GangBook::record_victims(GangPlan& plan, const std::vector<PreemptionCandidate>& running,
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

std::expected<GangPlan*, Error> GangBook::plan_for(const json& pod, const std::string& key,
                                                   const PreemptionOptions* preempting) {
  if (auto it = plans_.find(key); it != plans_.end()) return &it->second;
  std::optional<PodGroupKind> sized_by;
  auto count = view_.gang_size(pod, key, &sized_by);
  if (!count) return std::unexpected(count.error());
  // A Volcano PodGroup with fewer pods than its minMember is not a valid job to Volcano's gang
  // plugin (volcano-sh/volcano pkg/scheduler/plugins/gang/gang.go, OnSessionOpen's validJobFn:
  // JobInfo.ValidTaskNum() below MinAvailable, api/job_info.go), and framework/session.go
  // openSession drops it from the session: none of its pods is placed until they all exist. The
  // pods the view has seen stand for those (the pod asking is one of them); `place` waits alike
  // (volcano_pod_group.h). A PodGroup with sub-groups waits in make_grouped_plan.
  if (sized_by == PodGroupKind::kVolcano && !view_.grouped(key)) {
    view_.note_pending(pod, key, /*replace=*/false);
    if (const std::size_t seen = view_.gang_members_seen(key); std::cmp_less(seen, *count))
      return fail(ErrorCode::kUnavailable, gang_waits_for_pods(key, seen, *count, /*sub_groups=*/false));
  }
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
  bool any_bound = false;
  for (const auto& [id, p] : view_.pods()) any_bound = any_bound || p.gang == key;
  std::int32_t size = *count;
  bool by_groups = false;
  if (view_.grouped(key)) {
    // A gang read from its PodGroup with its pods (a KAI or scheduling.k8s.io PodGroup, a Volcano one
    // with subGroupPolicy) is planned from what `place` reads of the same objects, not from the pod
    // asking: the PodGroup and every pod of it seen so far, read by the same reader (parse_job).
    view_.note_pending(pod, key, /*replace=*/false);
    const GroupedGang gang = *view_.grouped_gang(key);
    if (divides(gang)) {
      // Each sub-group's pods get their own slots in the domain its constraint allows. With pods
      // bound and no plan (a restart without the state file), the rest are planned around them as
      // one pod set (adopt_bound).
      by_groups = !any_bound;
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
        // `place` places them; a slot goes to a pod of its spec. Planning around bound pods knows
        // one pod set, at both doors: with some bound, the rest are planned as the pod asking.
        by_groups = !any_bound;
      }
    }
  }
  if (by_groups) {
    auto ok = make_grouped_plan(plan, *view_.grouped_gang(key), size);
    if (!ok) return std::unexpected(ok.error());
  } else if (auto ok = adopt_bound(plan, size, preempting); !ok) {
    return std::unexpected(ok.error());
  }
  ++counters_.plans_made;
  auto [it, inserted] = plans_.emplace(key, std::move(plan));
  enter(it->second);
  mark_changed();
  return &it->second;
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
std::expected<void, Error> GangBook::make_grouped_plan(GangPlan& plan, const GroupedGang& gang,
                                                       std::int32_t count) {
  // The controller makes the pods together, but the watch delivers them one by one: a plan made
  // from fewer pods than the gang's minimum would leave the others without slots.
  if (static_cast<std::int64_t>(gang.pending.size()) < count) {
    return fail(ErrorCode::kUnavailable,
                gang_waits_for_pods(plan.key, gang.pending.size(), count, divides(gang)));
  }
  auto whole = read_whole(view_, plan.key, gang, count);
  if (!whole) return std::unexpected(whole.error());
  JobRequest& job = *whole;
  resolve_label_levels(view_.index(), job);
  PlacementEngine engine(view_.index(), options_.binpack, options_.fabric_health);
  auto placed = engine.place(job);  // a grouped job goes to place_sub_groups
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
    group.pod_doc = k < docs.size() ? *docs[k] : docs.empty() ? *gang.pending.front() : *docs.back();
    group.spec_text = member(group.pod_doc, "spec").dump();
    const PodSetPlacement& where = placed->pod_sets[i];
    // Its slots stay in its domain when its sub-group requires one (a preferred level may move).
    const auto sg = std::find_if(job.sub_groups.begin(), job.sub_groups.end(),
                                 [&](const SubGroupRequest& r) { return r.name == ps.sub_group; });
    if (sg != job.sub_groups.end() && !sg->required.empty()) {
      group.level = sg->required;
      if (where.domains.size() == 1 && !where.assignment.empty()) group.domain = where.domains.front();
    }
    for (const auto& a : where.assignment) {
      for (std::int32_t n = 0; n < a.count; ++n) {
        PlanSlot slot{.rank = rank++, .node = a.node_name, .domain_path = a.domain_path};
        slot.group = static_cast<std::int32_t>(i);
        plan.slots.push_back(std::move(slot));
      }
    }
    plan.groups.push_back(std::move(group));
  }
  plan.request.count = rank;
  const int common = common_domain(plan);
  plan.job_domain = common != view_.index().root() ? view_.index().domain(common).name : std::string();
  plan.last_activity = options_.clock->now();
  return {};
}

std::expected<int, Error> GangBook::group_of(const GangPlan& plan, const json& pod) const {
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
std::expected<void, Error> GangBook::adopt_bound(GangPlan& plan, std::int32_t count,
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

int GangBook::common_domain(const GangPlan& plan, std::int32_t group) const {
  std::vector<const std::vector<std::string>*> paths;
  for (const auto& slot : plan.slots) {
    if (slot.state == SlotState::kDone) continue;
    if (group >= 0 && slot.group != group) continue;
    paths.push_back(&slot.domain_path);
  }
  return deepest_common_domain(view_.index(), paths);
}

int GangBook::constraint_domain(const GangPlan& plan, const PlanSlot& slot) const {
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

int GangBook::find_room(const GangPlan& plan, const PodSetRequest& ps, int start, int limit, int exclude,
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

namespace {

std::string domain_label(const TopologyIndex& index, int d) {
  return d == index.root() ? std::string("the cluster") : index.domain(d).name;
}

}  // namespace

bool GangBook::relocate(GangPlan& plan, PlanSlot& slot, const std::function<bool(int)>& allowed) {
  const int limit = constraint_domain(plan, slot);
  const int old_node = view_.index().find_node(slot.node);
  if (limit < 0) return false;  // the constraint domain itself is gone
  int start = limit;
  for (auto it = slot.domain_path.rbegin(); it != slot.domain_path.rend(); ++it) {
    const int d = view_.index().find_domain(*it);
    if (d >= 0) {
      start = d;
      break;
    }
  }
  const int found = find_room(plan, plan.request_of(slot), start, limit, old_node, allowed);
  if (found < 0) return false;
  step(plan, slot, [&](PlanSlot& s) {
    return scheduler::move(s, view_.index().node(found).spec.name,
                           view_.index().domain_path(view_.index().node(found).domain));
  });
  ++plan.swaps;
  ++counters_.swaps;
  mark_changed();
  return true;
}

int GangBook::widest_allowed_domain(int domain, const std::string& level) const {
  const TopologyIndex& index = view_.index();
  auto highest = index.resolve_tier(level);
  if (!highest) return domain;  // no readable limit: the domain the gang was planned in
  int widest = domain;
  for (int d = index.domain(domain).parent; d >= 0 && d != index.root() && index.domain(d).tier <= *highest;
       d = index.domain(d).parent)
    widest = d;
  return widest;
}

std::expected<PlanSlot*, Error> GangBook::grow(GangPlan& plan, std::int32_t rank, std::int32_t group) {
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
      // grow_elastic put the pod's request on the node; the slot's reservation below holds it.
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
  PlanSlot slot{.rank = rank,
                .node = view_.index().node(found).spec.name,
                .domain_path = view_.index().domain_path(view_.index().node(found).domain)};
  slot.group = group;
  // A new slot is born planned, holding its reservation, and enters the ledger so.
  set_reservation(plan, slot.group, slot.node, +1);
  plan.slots.push_back(std::move(slot));
  std::sort(plan.slots.begin(), plan.slots.end(),
            [](const PlanSlot& a, const PlanSlot& b) { return a.rank < b.rank; });
  ++plan.grown;
  ++counters_.slots_grown;
  PlanSlot* grown = slot_at(plan, rank);
  if (!grown) return fail(ErrorCode::kInternal, "gang " + plan.key + ": grown slot lost");
  note(plan.key, *grown, true);
  return grown;
}

std::expected<PlanSlot*, Error> GangBook::take_slot(GangPlan& plan, const json& pod,
                                                    std::span<const std::string_view> offered) {
  const std::string uid = str_at(member(pod, "metadata"), "uid");
  GangPlan* held_in = nullptr;
  if (PlanSlot* own = uid.empty() ? nullptr : slot_of(uid, &held_in);
      own && held_in == &plan && (own->state == SlotState::kReserved || own->state == SlotState::kBound))
    return own;
  if (!plan.groups.empty()) return take_group_slot(plan, pod, offered);
  auto index = pod_index(pod);
  if (!index) return std::unexpected(index.error());
  PlanSlot* mine = nullptr;
  SlotClaim claim = SlotClaim::kPodIndex;
  if (*index) {
    // Rank = pod index: the pod takes the slot the plan made for its rank, so partition
    // index / partitionSize lands in its partition's domain whatever the arrival order, and a
    // pod recreated with the same index takes its predecessor's slot back.
    const std::int32_t rank = (*index)->rank_in(plan.request.count);
    mine = slot_at(plan, rank);
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
    // The rank runs again after it succeeded (a Job whose success policy restarted it).
    if (mine->state == SlotState::kDone) step(plan, *mine, [](PlanSlot& s) { return scheduler::reopen(s); });
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
  step(plan, *mine, [&](PlanSlot& s) { return scheduler::reserve(s, uid, claim); });
  mark_changed();
  return mine;
}

std::expected<void, Error> GangBook::place_group(GangPlan& plan, std::int32_t g) {
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
      note(plan.key, plan.slots.back(), true);  // born planned: the engine put its request on the node
      ++plan.grown;
      ++counters_.slots_grown;
    }
  }
  if (!group.level.empty() && where.domains.size() == 1) group.domain = where.domains.front();
  mark_changed();
  return {};
}

// A pod of a gang planned by sub-groups takes a free slot of its own sub-group (the first offered
// node that has one, in kube-scheduler's order); ranks do not cross sub-groups. A pod beyond its
// sub-group's planned slots joins its domain as room appears.
std::expected<PlanSlot*, Error> GangBook::take_group_slot(GangPlan& plan, const json& pod,
                                                          std::span<const std::string_view> offered) {
  auto group = group_of(plan, pod);
  if (!group) return std::unexpected(group.error());
  const PlanGroup& g = plan.groups[static_cast<std::size_t>(*group)];
  const std::string label = g.name.empty() ? std::string("the gang's own pods") : "sub-group " + g.name;
  const std::string uid = str_at(member(pod, "metadata"), "uid");
  std::unordered_map<std::string_view, PlanSlot*> free_slots;
  for (auto& slot : plan.slots) {
    if (slot.group == *group && slot.free()) free_slots.emplace(slot.node, &slot);
  }
  PlanSlot* mine = nullptr;
  for (std::size_t i = 0; i < offered.size() && !mine && !free_slots.empty(); ++i) {
    if (auto it = free_slots.find(offered[i]); it != free_slots.end()) mine = it->second;
  }
  const bool placed =
      std::any_of(plan.slots.begin(), plan.slots.end(), [&](const PlanSlot& s) { return s.group == *group; });
  if (!placed) {
    // A sub-group the gang started without (Volcano's minSubGroups): all its pods at once, in one
    // domain of its level inside the gang's, once one has room.
    if (auto ok = place_group(plan, *group); !ok) return std::unexpected(ok.error());
    for (auto& slot : plan.slots) {
      if (slot.group == *group && slot.free()) free_slots.emplace(slot.node, &slot);
    }
    for (std::size_t i = 0; i < offered.size() && !mine; ++i) {
      if (auto it = free_slots.find(offered[i]); it != free_slots.end()) mine = it->second;
    }
  } else if (!mine && free_slots.empty()) {
    std::int32_t rank = 0;
    for (const auto& s : plan.slots) rank = std::max(rank, s.rank + 1);
    auto grown = grow(plan, rank, *group);
    if (!grown) return std::unexpected(grown.error().context(label));
    mine = *grown;
  }
  if (!mine) {
    // None of its free slots is on an offered node: the pod takes one anyway, and the filter moves
    // it to an offered node inside the sub-group's domain, or says why it waits (as for a rank).
    for (auto& slot : plan.slots) {
      if (!mine && slot.group == *group && slot.free()) mine = &slot;
    }
  }
  if (!mine)
    return fail(ErrorCode::kUnavailable, "gang " + plan.key + ": every slot of " + label + " is held");
  step(plan, *mine, [&](PlanSlot& s) { return scheduler::reserve(s, uid, SlotClaim::kArrivalOrder); });
  mark_changed();
  return mine;
}

void GangBook::expire_plans() {
  const auto now = options_.clock->now();
  bool changed = false;
  for (auto it = plans_.begin(); it != plans_.end();) {
    if (now - it->second.last_activity > options_.plan_ttl) {
      reserve(it->second, -1);
      leave(it->second);
      it = plans_.erase(it);
      ++counters_.plans_expired;
      changed = true;
    } else {
      ++it;
    }
  }
  if (changed) mark_changed();
}

void GangBook::check_plans() {
  if (!ensure_index()) return;
  expire_plans();
  last_expiry_ = options_.clock->now();
  all_due_ = false;
  nodes_due_.clear();
  std::vector<std::string> keys;
  keys.reserve(plans_.size());
  for (const auto& [key, plan] : plans_) keys.push_back(key);
  for (const auto& key : keys) check_plan(key, {});
}

void GangBook::expire_when_due() {
  // Expiry looks at every plan: once per interval (a tenth of the TTL, at most a second) is enough
  // for a TTL counted in minutes, and a verb call never pays for it again right after.
  const auto now = options_.clock->now();
  const auto interval = std::min<timing::Clock::Duration>(
      std::chrono::duration_cast<timing::Clock::Duration>(options_.plan_ttl) / 10, std::chrono::seconds(1));
  if (last_expiry_ && now - *last_expiry_ < interval) return;
  last_expiry_ = now;
  expire_plans();
}

void GangBook::check_due() {
  if (!ensure_index()) return;  // nodes_due_ and all_due_ stay for the next call
  expire_when_due();
  if (all_due_) {
    all_due_ = false;
    nodes_due_.clear();
    std::vector<std::string> keys;
    for (const auto& [key, plan] : plans_) keys.push_back(key);
    for (const auto& key : keys) check_plan(key, {});
    return;
  }
  std::set<std::string> due;
  due.swap(nodes_due_);  // a check that moves a slot notes its new node for the next call
  std::set<std::string> keys;
  for (const auto& [key, n] : waiting_plans_) keys.insert(key);
  for (const auto& node : due) {
    if (auto it = by_node_.find(node); it != by_node_.end()) {
      for (const auto& [key, n] : it->second) keys.insert(key);
    }
  }
  for (const auto& key : keys) {
    check_plan(key, [&](const PlanSlot& s) { return !s.waiting.empty() || due.contains(s.node); });
  }
}

void GangBook::node_changed(const std::string& node) {
  auto it = by_node_.find(node);
  if ((it == by_node_.end() || it->second.empty()) && waiting_plans_.empty()) return;
  if (!ensure_index()) {
    nodes_due_.insert(node);
    return;
  }
  nodes_due_.erase(node);
  std::set<std::string> keys;
  for (const auto& [key, n] : waiting_plans_) keys.insert(key);
  if (it != by_node_.end()) {
    for (const auto& [key, n] : it->second) keys.insert(key);
  }
  // Slots waiting for room may find it on a node that just became usable.
  for (const auto& key : keys) {
    check_plan(key, [&](const PlanSlot& s) { return s.node == node || !s.waiting.empty(); });
  }
}

void GangBook::check_plan(const std::string& key, const std::function<bool(const PlanSlot&)>& pick) {
  auto found = plans_.find(key);
  if (found == plans_.end()) return;
  GangPlan& plan = found->second;
  bool replan = false;
  for (auto& slot : plan.slots) {
    if (!slot.holds_reservation() || (pick && !pick(slot))) continue;
    ++counters_.slots_checked;
    if (view_.node_usable_for(plan.request_of(slot), slot.node)) {
      if (!slot.waiting.empty()) {
        step(plan, slot, [](PlanSlot& s) { return scheduler::wait(s, std::string()); });
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
    std::string why = "gang " + plan.key + ": rank " + std::to_string(slot.rank) + " waits for room in " +
                      (limit < 0 ? std::string("its partition's domain, which is gone")
                                 : domain_label(view_.index(), limit)) +
                      ": its planned node " + slot.node + " ";
    why += view_.why_unusable(plan.request_of(slot), slot.node);
    why +=
        ", and no other node there that passes the pod's node constraints has room; the gang's pods stay "
        "inside its domain";
    if (slot.waiting != why) {
      step(plan, slot, [&](PlanSlot& s) { return scheduler::wait(s, why); });
      mark_changed();
    }
  }
  if (replan) {
    // No room left inside the constraint domain and no pod bound: plan the gang again.
    reserve(plan, -1);
    if (!plan.groups.empty()) {
      // Sub-groups are planned from their PodGroup and pods: the gang's next pod plans it afresh.
      leave(plan);
      plans_.erase(found);
      ++counters_.replans;
      mark_changed();
      return;
    }
    GangPlan fresh = plan;
    std::erase_if(fresh.slots, [](const PlanSlot& s) { return s.state != SlotState::kBound; });
    const auto count = static_cast<std::int32_t>(plan.slots.size());
    if (make_plan(fresh, count)) {
      fresh.replans = plan.replans + 1;
      ++counters_.replans;
      // The new plan's slots are due on the nodes where they hold a reservation the old ones did not.
      std::set<std::pair<std::int32_t, std::string>> held;
      for (const auto& slot : plan.slots) {
        if (slot.holds_reservation()) held.emplace(slot.rank, slot.node);
      }
      const std::set<std::string> due_before = nodes_due_;
      leave(plan);
      plan = std::move(fresh);
      enter(plan);
      nodes_due_ = due_before;
      for (const auto& slot : plan.slots) {
        if (slot.holds_reservation() && !held.contains({slot.rank, slot.node})) nodes_due_.insert(slot.node);
      }
      mark_changed();
    } else {
      reserve(plan, +1);  // keep the old plan; filter reports that its pods do not fit
    }
  }
}

// A gang pod seen bound: its slot goes kBound and stops being a reservation (the pod itself counts).
void GangBook::record_binding(const ViewPod& pod) {
  if (pod.uid.empty() || pod.node.empty()) return;
  // A pod of a planned gang that another scheduler replica bound (or that bound before this
  // replica's plan knew it) takes its rank's free slot: the slot's reservation goes, the pod counts.
  PlanSlot* by_rank = nullptr;
  GangPlan* by_rank_plan = nullptr;
  if (!pod.gang.empty() && pod.index) {
    if (auto it = plans_.find(pod.gang); it != plans_.end() && it->second.groups.empty()) {
      PlanSlot* slot = slot_at(it->second, pod.index->rank_in(it->second.request.count));
      if (slot && slot->state == SlotState::kPlanned) {
        by_rank = slot;
        by_rank_plan = &it->second;
      }
    }
  }
  GangPlan* held_in = nullptr;
  if (PlanSlot* slot = slot_of(pod.uid, &held_in)) {
    if (slot->state == SlotState::kReserved) {
      bind_to(*held_in, *slot, pod, SlotClaim::kNone);
      return;
    }
    if (held_in == by_rank_plan) return;  // already bound (a status update)
  }
  if (by_rank) bind_to(*by_rank_plan, *by_rank, pod, SlotClaim::kPodIndex);
}

// The slot goes kBound on the pod's node (its domain path that node's when the index knows it).
void GangBook::bind_to(GangPlan& plan, PlanSlot& slot, const ViewPod& pod, SlotClaim claim) {
  step(plan, slot, [&](PlanSlot& s) {
    if (!scheduler::bind(s, pod.uid, pod.node, claim)) return false;
    if (view_.index_current()) {
      if (const int n = view_.index().find_node(pod.node); n >= 0)
        s.domain_path = view_.index().domain_path(view_.index().node(n).domain);
    }
    return true;
  });
  plan.last_activity = options_.clock->now();
  mark_changed();
}

// The pod `uid` went away (deleted, failed, evicted, terminating) or succeeded: its slot is free
// for the pod that replaces it, on the same node (gang_slot.h: release, complete).
void GangBook::release_slot_of(const std::string& uid, bool succeeded) {
  if (uid.empty()) return;
  GangPlan* held_in = nullptr;
  PlanSlot* slot = slot_of(uid, &held_in);
  if (!slot) return;
  GangPlan& plan = *held_in;
  const std::string key = plan.key;
  if (succeeded && step(plan, *slot, [](PlanSlot& s) { return scheduler::complete(s); })) {
    mark_changed();
    return;
  }
  const bool was_bound = slot->state == SlotState::kBound;
  // A bound slot holds a reservation again, and is checked on its node next time.
  if (!step(plan, *slot, [](PlanSlot& s) { return scheduler::release(s); })) return;
  if (was_bound) ++counters_.slots_released;
  if (was_bound && plan.abandoned()) {
    // Every pod of the gang went away (the whole gang restarts, or it was deleted): nothing is
    // left to keep together, and its reservations would hold a whole domain for nobody. The
    // next pod plans the gang afresh.
    reserve(plan, -1);
    leave(plan);
    plans_.erase(key);
  }
  mark_changed();
}

// The ledger: each slot's entries follow its transitions (step), and a plan's come in and go out
// with it (enter, leave), so that finding a pod's slot, or the slots on a node, never walks every plan.
bool GangBook::step(GangPlan& plan, PlanSlot& slot, const std::function<bool(PlanSlot&)>& transition) {
  const PlanSlot before = slot;
  if (!transition(slot)) return false;
  forget(plan.key, before);
  const bool held = before.holds_reservation(), holds = slot.holds_reservation();
  const bool moved = slot.node != before.node;
  if (held && (!holds || moved)) set_reservation(plan, before.group, before.node, -1);
  if (holds && (!held || moved)) set_reservation(plan, slot.group, slot.node, +1);
  // A slot that holds a reservation on a node it did not hold one on before (a bound pod went away
  // from a node that may have failed meanwhile, a done rank running again, a slot moved) was never
  // checked there: the next check looks.
  note(plan.key, slot, holds && (!held || moved));
  return true;
}

void GangBook::note(const std::string& key, const PlanSlot& slot, bool due) {
  if (!slot.pod_uid.empty()) by_uid_.insert_or_assign(slot.pod_uid, std::make_pair(key, slot.rank));
  if (!slot.holds_reservation()) return;
  ++by_node_[slot.node][key];
  if (!slot.waiting.empty()) ++waiting_plans_[key];
  if (due) nodes_due_.insert(slot.node);
}

void GangBook::forget(const std::string& key, const PlanSlot& slot) {
  if (!slot.pod_uid.empty()) {
    auto it = by_uid_.find(slot.pod_uid);
    if (it != by_uid_.end() && it->second.first == key && it->second.second == slot.rank) by_uid_.erase(it);
  }
  if (!slot.holds_reservation()) return;
  if (auto it = by_node_.find(slot.node); it != by_node_.end()) {
    auto n = it->second.find(key);
    if (n != it->second.end() && --n->second <= 0) it->second.erase(n);
    if (it->second.empty()) by_node_.erase(it);
  }
  if (slot.waiting.empty()) return;
  if (auto it = waiting_plans_.find(key); it != waiting_plans_.end() && --it->second <= 0)
    waiting_plans_.erase(it);
}

void GangBook::enter(GangPlan& plan) {
  if (!std::is_sorted(plan.slots.begin(), plan.slots.end(),
                      [](const PlanSlot& a, const PlanSlot& b) { return a.rank < b.rank; }))
    std::stable_sort(plan.slots.begin(), plan.slots.end(),
                     [](const PlanSlot& a, const PlanSlot& b) { return a.rank < b.rank; });
  for (const auto& slot : plan.slots) note(plan.key, slot, true);
}

void GangBook::leave(const GangPlan& plan) {
  for (const auto& slot : plan.slots) forget(plan.key, slot);
}

void GangBook::reindex() {
  by_uid_.clear();
  by_node_.clear();
  waiting_plans_.clear();
  for (auto& [key, plan] : plans_) enter(plan);
  all_due_ = true;  // plans read back from the state file were checked against no node yet
}

PlanSlot* GangBook::slot_at(GangPlan& plan, std::int32_t rank) {
  auto it = std::lower_bound(plan.slots.begin(), plan.slots.end(), rank,
                             [](const PlanSlot& s, std::int32_t r) { return s.rank < r; });
  return it != plan.slots.end() && it->rank == rank ? &*it : nullptr;
}

PlanSlot* GangBook::slot_of(const std::string& uid, GangPlan** plan) {
  auto ref = by_uid_.find(uid);
  if (ref == by_uid_.end()) return nullptr;
  auto found = plans_.find(ref->second.first);
  if (found == plans_.end()) return nullptr;
  ++counters_.slots_searched;
  PlanSlot* slot = slot_at(found->second, ref->second.second);
  if (!slot || slot->pod_uid != uid) return nullptr;
  *plan = &found->second;
  return slot;
}

void GangBook::set_reservation(const GangPlan& plan, std::int32_t group, const std::string& node, int sign) {
  if (!view_.index_current()) return;  // the rebuild reserves every slot that holds a reservation
  const int id = view_.index().find_node(node);
  const PodSetRequest& request = group >= 0 && static_cast<std::size_t>(group) < plan.groups.size()
                                     ? plan.groups[static_cast<std::size_t>(group)].request
                                     : plan.request;
  if (id >= 0) (void)view_.index().add_pods(id, request.per_pod, sign);
}

void GangBook::reserve(const GangPlan& plan, int sign) {
  if (!view_.index_current()) return;
  for (const auto& slot : plan.slots) {
    if (slot.holds_reservation()) set_reservation(plan, slot.group, slot.node, sign);
  }
}

}  // namespace hypertopo::scheduler
