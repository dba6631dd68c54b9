// The gang book's slot ledger (gang_book.h): every slot transition with its reservation on the
// index and its lookups (a pod's slot by its uid, the slots on a node, the plans waiting for room),
// kept in step as plans come into the book and leave it.
#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "scheduler/extender/gang_book.h"

namespace hypertopo::scheduler {

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
