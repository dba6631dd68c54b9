// scheduler/extender/gang_slot.h: the life of a gang's planned pod position, as one state machine.
//
// A gang plan holds one slot per rank. Each slot is in one of four states, and only the transitions
// below change it (every one is a function of this file; nothing else writes `state`):
//
//   state      the slot's node holds          meaning
//   kPlanned   a reservation (plan.per_pod)   a position with no pod yet, or whose pod went away
//   kReserved  a reservation (plan.per_pod)   a pending pod (uid) was admitted to the slot's node
//   kBound     nothing (the pod counts)       the pod (uid) is bound to the slot's node
//   kDone      nothing                        the pod succeeded; the position is not needed again
//
//   from        event                                                    to          function
//   kPlanned    a pod of the slot's rank (or, without a rank, the first  kReserved   reserve()
//               pod offered the slot's node) filters
//   kReserved   the pod is seen bound (watch: spec.nodeName set)         kBound      bind()
//   kPlanned    a bound pod of the gang is seen with no plan entry       kBound      bind()
//               (extender restarted without its state, another replica)
//   kReserved   the pod is deleted or fails before it binds              kPlanned    release()
//   kBound      the pod is deleted, fails, is evicted or starts          kPlanned    release()
//               terminating: the slot waits on its node for the pod
//               that replaces it (same rank; Job, JobSet, PyTorchJob and
//               LeaderWorkerSet restarts keep the index)
//   kBound      the pod succeeded                                        kDone       complete()
//   kDone       a pod of the slot's rank filters again (a Job whose      kPlanned    reopen()
//               success policy restarted the rank)
//   kPlanned,   the slot's node is gone, NotReady, unschedulable,       same state  move()
//   kReserved   tainted against the pod or no longer selected: the slot  (new node)
//               moves to a node with room inside the innermost
//               constraint domain (partition domain, else job domain),
//               nearest first (Kueue's TASFailedNodeReplacement)
//   kPlanned,   as above but no node of that domain has room: the slot   same state  wait()
//   kReserved   stays and says why (`waiting`), shown by /plans and in
//               the filter's reason; it never leaves its domain
//
// A bound slot whose node fails keeps its state: the pod is still there until the node lifecycle
// controller (or a person) deletes it, and then release() and move() take over.
// Each transition's effect on the TopologyIndex follows from the states and nodes before and after it
// (holds_reservation): a slot in kPlanned or kReserved holds a reservation of the plan's per-pod
// request on its node, kBound and kDone hold none. The GangBook's ledger (gang_book.h) runs every
// transition through one function that applies that delta and its lookups with the state change.
// A slot read back from the state file reaches its saved state through the same table (restore()).
//
//   PlanSlot slot{.rank = 3, .node = "n-1"};
//   reserve(slot, "uid-7", SlotClaim::kPodIndex);     // kPlanned -> kReserved
//   bind(slot, "uid-7", "n-1");                       // kReserved -> kBound
//   release(slot);                                    // kBound -> kPlanned (on n-1, reservation back)
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/placement/job_request.h"
#include "timing/clock.h"

namespace hypertopo::scheduler {

enum class SlotState { kPlanned, kReserved, kBound, kDone };
const char* to_string(SlotState state);
std::optional<SlotState> slot_state_from(std::string_view text);

// How a pod came to its slot: its own rank, or kube-scheduler's order for pods without one.
enum class SlotClaim { kNone, kPodIndex, kArrivalOrder };
const char* to_string(SlotClaim claim);  // "", "podIndex", "arrivalOrder"

// One planned pod position.
struct PlanSlot {
  std::int32_t rank = 0;
  std::string node;
  std::vector<std::string> domain_path;
  SlotState state = SlotState::kPlanned;
  std::string pod_uid;  // kReserved, kBound: the pod holding it
  SlotClaim claim = SlotClaim::kNone;
  std::string waiting;        // why the slot cannot move off a node it cannot use ("" when it need not)
  std::int32_t releases = 0;  // pods that held it and went away (restarts)
  std::int32_t group = -1;    // its sub-group (GangPlan::groups), -1: the gang's own request

  bool holds_reservation() const { return state == SlotState::kPlanned || state == SlotState::kReserved; }
  bool free() const { return state == SlotState::kPlanned; }
};

// A pod the plan evicts to make room (preemption): it runs until kube-scheduler deletes it.
struct PlanVictim {
  std::string uid, ns, name, node;
  std::int32_t priority = 0;
  bool violates_budget = false;  // its PodDisruptionBudget has no disruption left
};

// A sub-group of a gang (KAI's PodGroup spec.subGroups, Volcano's spec.subGroupPolicy): one per
// pod set the sub-group readers made (a sub-group's pods with one spec), with the domain the
// sub-group was placed in, which its slots never leave.
struct PlanGroup {
  std::string name;        // the sub-group ("" = pods of the gang outside every sub-group)
  nlohmann::json pod_doc;  // a pod's request document: what its request is read from again
  std::string spec_text;   // pod_doc's spec as JSON text: a pod with the same spec joins this pod set
  PodSetRequest request;
  std::string domain;  // "" = no domain of its own (the job's)
  std::string level;   // its required level (a tier), "" = none: a sub-group placed later keeps it
};

struct GangPlan {
  std::string key;  // namespace/name
  // What the request is read from after a restart: the first pod's annotations, labels and the
  // parts of its spec that placement reads (resources, nodeSelector, affinity, tolerations).
  nlohmann::json pod_doc;
  mutable std::string pod_text;  // pod_doc as JSON text, made once for the state file
  PodSetRequest request;
  std::string job_domain;   // the domain the engine chose (empty when spread)
  int partition_tier = -1;  // tier of a partition's domain, -1 without partitions
  std::int32_t partition_size = 0;
  std::vector<PlanSlot> slots;
  // How fabric health shaped the plan (PodSetPlacement::fabric_health): the degraded HyperNode
  // avoided or used and why, degraded nodes given pods last.
  std::vector<std::string> fabric_health;
  timing::Clock::TimePoint last_activity{};
  int replans = 0;
  int swaps = 0;
  int grown = 0;  // slots added after the plan was made (elastic gangs, pods beyond minMember)
  // Preemption: the pods to evict for this plan, on the slots' nodes (empty for a gang that fit), and
  // the gangs they break.
  std::vector<PlanVictim> victims;
  std::vector<std::string> broken_gangs;
  // Sub-groups: empty for a gang planned as one pod set.
  std::vector<PlanGroup> groups;

  const PodSetRequest& request_of(const PlanSlot& slot) const {
    return slot.group >= 0 && static_cast<std::size_t>(slot.group) < groups.size()
               ? groups[slot.group].request
               : request;
  }

  bool any_bound() const;
  // No slot is held by a pod any more (every pod of the gang went away): nothing to keep together.
  bool abandoned() const;
};

// The transitions. Each returns false (and changes nothing) when the slot is not in a state the
// transition starts from.
bool reserve(PlanSlot& slot, const std::string& pod_uid, SlotClaim claim);
// From kPlanned the slot takes `claim` (how the bound pod came to it); from kReserved it keeps its own.
bool bind(PlanSlot& slot, const std::string& pod_uid, const std::string& node,
          SlotClaim claim = SlotClaim::kNone);
bool release(PlanSlot& slot);
bool complete(PlanSlot& slot);
bool reopen(PlanSlot& slot);
bool move(PlanSlot& slot, const std::string& node, std::vector<std::string> domain_path);
bool wait(PlanSlot& slot, std::string why);
// A new kPlanned slot walked through the table to `state` (a slot read back from the state file):
// kReserved by reserve(), kBound by bind(), kDone by bind() and complete(). False when kReserved or
// kBound is asked with an empty `pod_uid` (the slot stays kPlanned).
bool restore(PlanSlot& slot, SlotState state, const std::string& pod_uid, SlotClaim claim);

}  // namespace hypertopo::scheduler
