#include "scheduler/extender/gang_slot.h"

#include <algorithm>

namespace hypertopo::scheduler {

const char* to_string(SlotState state) {
  switch (state) {
    case SlotState::kPlanned:
      return "planned";
    case SlotState::kReserved:
      return "reserved";
    case SlotState::kBound:
      return "bound";
    case SlotState::kDone:
      return "done";
  }
  return "planned";
}

std::optional<SlotState> slot_state_from(std::string_view text) {
  for (SlotState s : {SlotState::kPlanned, SlotState::kReserved, SlotState::kBound, SlotState::kDone}) {
    if (text == to_string(s)) return s;
  }
  return std::nullopt;
}

const char* to_string(SlotClaim claim) {
  switch (claim) {
    case SlotClaim::kNone:
      return "";
    case SlotClaim::kPodIndex:
      return "podIndex";
    case SlotClaim::kArrivalOrder:
      return "arrivalOrder";
  }
  return "";
}

bool GangPlan::any_bound() const {
  return std::any_of(slots.begin(), slots.end(),
                     [](const PlanSlot& s) { return s.state == SlotState::kBound; });
}

bool GangPlan::abandoned() const {
  return std::none_of(slots.begin(), slots.end(), [](const PlanSlot& s) {
    return s.state == SlotState::kReserved || s.state == SlotState::kBound;
  });
}

bool reserve(PlanSlot& slot, const std::string& pod_uid, SlotClaim claim) {
  if (slot.state != SlotState::kPlanned) return false;
  slot.state = SlotState::kReserved;
  slot.pod_uid = pod_uid;
  slot.claim = claim;
  return true;
}

bool bind(PlanSlot& slot, const std::string& pod_uid, const std::string& node, SlotClaim claim) {
  if (slot.state != SlotState::kReserved && slot.state != SlotState::kPlanned) return false;
  if (slot.state == SlotState::kReserved && slot.pod_uid != pod_uid) return false;
  if (slot.state == SlotState::kPlanned) slot.claim = claim;
  slot.state = SlotState::kBound;
  slot.pod_uid = pod_uid;
  slot.node = node;
  slot.waiting.clear();
  return true;
}

bool release(PlanSlot& slot) {
  if (slot.state != SlotState::kReserved && slot.state != SlotState::kBound) return false;
  if (slot.state == SlotState::kBound) ++slot.releases;
  slot.state = SlotState::kPlanned;
  slot.pod_uid.clear();
  slot.claim = SlotClaim::kNone;
  return true;
}

bool complete(PlanSlot& slot) {
  if (slot.state != SlotState::kBound) return false;
  slot.state = SlotState::kDone;
  return true;
}

bool reopen(PlanSlot& slot) {
  if (slot.state != SlotState::kDone) return false;
  slot.state = SlotState::kPlanned;
  slot.pod_uid.clear();
  slot.claim = SlotClaim::kNone;
  return true;
}

bool move(PlanSlot& slot, const std::string& node, std::vector<std::string> domain_path) {
  if (!slot.holds_reservation()) return false;
  slot.node = node;
  slot.domain_path = std::move(domain_path);
  slot.waiting.clear();
  return true;
}

bool wait(PlanSlot& slot, std::string why) {
  if (!slot.holds_reservation()) return false;
  slot.waiting = std::move(why);
  return true;
}

bool restore(PlanSlot& slot, SlotState state, const std::string& pod_uid, SlotClaim claim) {
  switch (state) {
    case SlotState::kPlanned:
      return true;
    case SlotState::kReserved:
      return !pod_uid.empty() && reserve(slot, pod_uid, claim);
    case SlotState::kBound:
      return !pod_uid.empty() && scheduler::bind(slot, pod_uid, slot.node, claim);
    case SlotState::kDone:
      return scheduler::bind(slot, pod_uid, slot.node, claim) && complete(slot);
  }
  return false;
}

}  // namespace hypertopo::scheduler
