// The gang book (gang_book.h): the plans the planner makes (gang_planner.h) kept with their
// reservations, the slots' transitions as pod events come through the ledger, and keeping plans
// valid (slot swaps inside the constraint domain, re-plans, expiry).
#include "scheduler/extender/gang_book.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "scheduler/extender/object_fields.h"
#include "scheduler/input/pod_request.h"

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
  const int found = planner_.find_room(plan, plan.request_of(slot), start, limit, old_node, allowed);
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

std::expected<GangPlan*, Error> GangBook::plan_for(const json& pod, const std::string& key,
                                                   const PreemptionOptions* preempting) {
  if (auto it = plans_.find(key); it != plans_.end()) return &it->second;
  auto made = planner_.plan(pod, key, preempting);
  if (!made) return std::unexpected(made.error());
  ++counters_.plans_made;
  auto [it, inserted] = plans_.emplace(key, std::move(*made));
  enter(it->second);
  mark_changed();
  return &it->second;
}

// A pod beyond the planned ones (an elastic gang, a sub-group's pod beyond its slots) gets a new
// slot where the planner finds room; it is born planned, holding its reservation.
std::expected<PlanSlot*, Error> GangBook::grow(GangPlan& plan, std::int32_t rank, std::int32_t group) {
  auto found = planner_.room_to_grow(plan, rank, group);
  if (!found) return std::unexpected(found.error());
  PlanSlot slot{.rank = rank,
                .node = view_.index().node(*found).spec.name,
                .domain_path = view_.index().domain_path(view_.index().node(*found).domain)};
  slot.group = group;
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

// A pod of a gang planned by sub-groups takes a free slot of its own sub-group (the first offered
// node that has one, in kube-scheduler's order); ranks do not cross sub-groups. A pod beyond its
// sub-group's planned slots joins its domain as room appears.
std::expected<PlanSlot*, Error> GangBook::take_group_slot(GangPlan& plan, const json& pod,
                                                          std::span<const std::string_view> offered) {
  auto group = planner_.group_of(plan, pod);
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
    const std::size_t had = plan.slots.size();
    if (auto ok = planner_.place_group(plan, *group); !ok) return std::unexpected(ok.error());
    // Its slots are born planned: the engine put their requests on their nodes.
    for (std::size_t i = had; i < plan.slots.size(); ++i) note(plan.key, plan.slots[i], true);
    mark_changed();
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
    if (planner_.make_plan(fresh, count)) {
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

Admission GangBook::admit(const json& pod, const std::string& key, std::span<const std::string_view> names) {
  // The pod itself may reach the filter before the watch delivers it: its sub-group's plan reads it.
  if (view_.grouped(key)) view_.note_pending(pod, key, /*replace=*/false);
  check_due();
  auto plan = plan_for(pod, key);
  if (!plan)
    return {.reason = plan.error().message(), .error = plan.error().code() != ErrorCode::kUnavailable};
  GangPlan& p = **plan;
  p.last_activity = options_.clock->now();
  auto taken = take_slot(p, pod, names);
  if (!taken)
    return {.reason = taken.error().message(), .error = taken.error().code() != ErrorCode::kUnavailable};
  PlanSlot& mine = **taken;
  auto offered_at = [&](const std::string& node) {
    return std::find(names.begin(), names.end(), node) != names.end();
  };
  // Pods preempted for this slot still on its node (running, or terminating): the slot waits for
  // them there; moving it would evict for nothing.
  std::size_t leaving = 0;
  for (const auto& v : p.victims) {
    if (v.node == mine.node && view_.pod(v.uid)) ++leaving;
  }
  if (mine.holds_reservation() && !offered_at(mine.node) && leaving == 0) {
    // kube-scheduler found the planned node infeasible for this pod (its own filters: a pod bound
    // there meanwhile by another profile, ports, volumes, a taint we have not seen yet): the slot
    // moves to an offered node inside its constraint domain, nearest first.
    std::unordered_set<int> offered_ids;
    for (const auto& n : names) {
      if (const int id = view_.index().find_node(n); id >= 0) offered_ids.insert(id);
    }
    relocate(p, mine, [&](int n) { return offered_ids.contains(n); });
  }
  Admission out{.node = mine.node};
  if (!mine.waiting.empty()) {
    out.reason = mine.waiting;
  } else if (leaving > 0) {
    // kube-scheduler's preemption (our preemptVerb) evicts them; the pod binds once they are gone.
    out.reason = "gang " + p.key + ": rank " + std::to_string(mine.rank) + " waits on node " + mine.node +
                 " for " + std::to_string(leaving) + " pod(s) preempted for the gang to leave";
  } else {
    // kube-scheduler offers the nodes it found feasible, and stops looking after
    // percentageOfNodesToScore of them (pkg/scheduler/schedule_one.go, numFeasibleNodesToFind: 5% at
    // 6,000 nodes by default): a planned node it did not reach is never admitted.
    const int limit = constraint_domain(p, mine);
    out.reason = "gang " + p.key + ": rank " + std::to_string(mine.rank) + " is planned on " + mine.node +
                 (offered_at(mine.node)
                      ? std::string()
                      : ", which was not among the " + std::to_string(names.size()) +
                            " nodes offered, and no offered node of " +
                            (limit < 0 ? std::string("its domain") : domain_label(view_.index(), limit)) +
                            " has room for it (kube-scheduler offers every feasible node only with "
                            "percentageOfNodesToScore: 100, as the profile hypertopo-gang-scheduler in "
                            "deploy/overlays/extender does)");
  }
  return out;
}

std::expected<std::optional<Eviction>, Error> GangBook::preempt(const json& pod, const std::string& key,
                                                                const PreemptionOptions& options) {
  check_due();
  auto plan = plan_for(pod, key, &options);
  if (!plan) return std::unexpected(plan.error());  // no domain holds the gang even with victims
  GangPlan& p = **plan;
  p.last_activity = options_.clock->now();
  // The pod's slot: its rank's, else the first free one whose node still has victims to evict.
  std::vector<std::string> order;
  for (const auto& s : p.slots) {
    if (s.free() && !pending_victims(p, s.node).empty()) order.push_back(s.node);
  }
  for (const auto& s : p.slots) {
    if (s.free()) order.push_back(s.node);
  }
  const std::vector<std::string_view> names(order.begin(), order.end());
  auto taken = take_slot(p, pod, names);
  if (!taken) return std::nullopt;
  const PlanSlot& slot = **taken;
  const auto pending = pending_victims(p, slot.node);
  if (pending.empty()) return std::nullopt;  // its node is free, or its victims are leaving
  Eviction out{.node = slot.node};
  for (const PlanVictim* v : pending) {
    out.uids.push_back(v->uid);
    out.pdb_violations += v->violates_budget ? 1 : 0;
  }
  return out;
}

std::string GangBook::node_of(const std::string& key, const std::string& uid) {
  GangPlan* plan = nullptr;
  const PlanSlot* slot = uid.empty() ? nullptr : slot_of(uid, &plan);
  return slot && plan->key == key ? slot->node : std::string();
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

}  // namespace hypertopo::scheduler
