// scheduler/extender/gang_book.h: the extender's gang plans, one of its three parts.
//
// The gang book holds one GangPlan per gang (gang_slot.h: its slots and the state machine they
// follow) made on the cluster view's index (cluster_view.h), and keeps each plan's reservations on
// that index: a slot that is planned or reserved holds its pod's request on its node, so neither
// other gangs nor normal pods are admitted there. Its planner (gang_planner.h) chooses the plans'
// domains and nodes; the book keeps them in its slot ledger (slot_ledger.cpp: each transition with
// its reservation and lookups), answers kube-scheduler's calls for gang pods with plain data (admit
// for filter, preempt, node_of for prioritize), follows pod events (bind, release, done), moves
// slots off nodes that can no longer take them (inside the gang's innermost constraint domain) and
// expires idle plans. Events touch what they change, as kube-scheduler's cache
// does: a pod's slot is found by its uid in one hash lookup, a Node event checks the slots on that
// node (and the slots already waiting for room), and expiry runs at most once per expiry interval
// of the injected clock, not on every call. Its plans are served on /plans and cached in the state
// file, written off the request path by a thread of its own, which takes the book's own lock only
// to copy the plans as text and writes that copy with no lock held. The lock is the book's own:
// every call but load_state() and flush_state() is made holding lock() (those two take it), with
// the view serialized by the owner, since the book reads the view and keeps its reservations on
// the view's index.
//
//   ClusterView view;
//   GangBook book({.binpack = w, .clock = clock}, view);
//   auto lock = book.lock();
//   if (auto ok = book.ensure_index(); ok) {
//     Admission a = book.admit(pod, "ml/train", offered);  // the node of the pod's slot, or why none
//   }
//   book.apply(*view.upsert_pod(bound_pod));                // kReserved -> kBound
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "errors/error.h"
#include "scheduler/extender/cluster_view.h"
#include "scheduler/extender/gang_planner.h"
#include "scheduler/extender/gang_slot.h"
#include "scheduler/placement/fabric_health_mode.h"
#include "scheduler/placement/victim_planner.h"
#include "scheduler/placement/volcano_score.h"
#include "telemetry/log.h"
#include "timing/clock.h"

namespace hypertopo::scheduler {

struct BookOptions {
  BinpackWeights binpack;
  FabricHealthMode fabric_health = FabricHealthMode::kPreferHealthy;
  std::chrono::seconds plan_ttl{600};
  std::filesystem::path state_file;  // empty: plans live in memory only
  std::chrono::milliseconds state_debounce{200};
  std::shared_ptr<timing::Clock> clock;  // null: the system clock
  telemetry::Logger log;                 // empty: logfmt lines on stderr, info and above
};

struct BookCounters {
  std::int64_t plans_made = 0, replans = 0, swaps = 0, plans_expired = 0;
  // Slots whose pod went away and that wait for its replacement; slots grown for pods beyond a
  // gang's minimum; gangs planned around pods already bound.
  std::int64_t slots_released = 0, slots_grown = 0, plans_adopted = 0;
  // Gang plans made with victims, and the victims those plans named.
  std::int64_t victim_plans = 0, victims_planned = 0;
  // Plans that could not be made for a reason other than room, state files not written.
  std::int64_t errors = 0;
  // Slots the plan checks examined (a Node event examines the slots on that node only), and slots
  // read to find a pod's slot by its uid (its own plan's, never every plan's).
  std::int64_t slots_checked = 0, slots_searched = 0;
};

// The annotations a slot suggests to its pod (served on /plans): its rank and domain path.
inline constexpr const char* kRankAnnotation = "hypertopo.io/rank";
inline constexpr const char* kDomainPathAnnotation = "hypertopo.io/domain-path";

// What a gang pod's filter call gets from the book (GangBook::admit): the node of its slot, which
// alone passes, and why the other nodes (or that one, when it waits) do not.
struct Admission {
  std::string node;    // "" when the pod has no slot: every node fails
  std::string reason;  // why the other nodes fail
  bool error = false;  // the plan or slot failed for a reason other than room
};

// What a gang pod's preempt call gets (GangBook::preempt): the node of its slot and the plan's
// victims still running there, to evict.
struct Eviction {
  std::string node;
  std::vector<std::string> uids;
  std::int64_t pdb_violations = 0;
};

class GangBook {
 public:
  GangBook(BookOptions options, ClusterView& view);
  ~GangBook();
  GangBook(const GangBook&) = delete;
  GangBook& operator=(const GangBook&) = delete;

  // The view's index, built when due, with every plan's reservations on it.
  std::expected<void, Error> ensure_index();

  // The entries of kube-scheduler's calls for a gang pod. Each runs the checks that are due, plans
  // the gang when it has no plan, and gives the pod its slot.
  // filter: the pod's slot, moved to an offered node inside its constraint domain when kube-scheduler
  // did not offer its own (unless preempted pods still leave it).
  Admission admit(const nlohmann::json& pod, const std::string& key,
                  std::span<const std::string_view> offered);
  // preemptVerb: the gang planned with victims when it fits nowhere; the pod takes its rank's slot,
  // else a free one whose node still has victims to evict, else any free one. Nothing when the slot's
  // node has no victim left running; an error when no plan can be made.
  std::expected<std::optional<Eviction>, Error> preempt(const nlohmann::json& pod, const std::string& key,
                                                        const PreemptionOptions& options);
  // prioritize: the node of the pod's slot in gang `key` ("" when none).
  std::string node_of(const std::string& key, const std::string& uid);
  // Whether a slot holds a reservation on `node` (a normal pod's preemption leaves such nodes alone).
  bool holds_reservation_on(const std::string& node) const { return by_node_.contains(node); }

  // Pod events as the view reports them (gang_slot.h: bind, release, complete).
  void apply(const PodEvent& event);
  // After a relist of the pods: slots whose pod is no longer bound are released, bound gang pods
  // take their slots.
  void resync();

  // The gang's plan, made now when it has none: its size and constraint from the pod (and its
  // PodGroup), around its bound pods. `preempting`: when it fits nowhere, plan it with victims.
  std::expected<GangPlan*, Error> plan_for(const nlohmann::json& pod, const std::string& key,
                                           const PreemptionOptions* preempting = nullptr);
  GangPlan* find(const std::string& key);
  const std::map<std::string, GangPlan>& plans() const { return plans_; }
  // The slot a gang pod takes (its own again, its rank's, its sub-group's, else the first free one
  // among `offered`; a new one for a pod beyond an elastic gang's minimum), or why none.
  std::expected<PlanSlot*, Error> take_slot(GangPlan& plan, const nlohmann::json& pod,
                                            std::span<const std::string_view> offered);
  // Moves a slot that holds a reservation to a node with room inside its constraint domain,
  // nearest first, among the nodes `allowed` admits (all when empty); false when none has room.
  bool relocate(GangPlan& plan, PlanSlot& slot, const std::function<bool(int)>& allowed);
  // The innermost constraint domain of a slot: its sub-group's or partition's domain, else the job
  // domain of a required gang, else the root; -1 when that domain is gone.
  int constraint_domain(const GangPlan& plan, const PlanSlot& slot) const {
    return planner_.constraint_domain(plan, slot);
  }
  // Expires idle plans; moves (or makes wait, or re-plans) slots whose node can no longer take them.
  // Every slot that holds a reservation is checked.
  void check_plans();
  // What a verb runs before it plans: expiry when an expiry interval has passed since the last, and
  // the slots that may have become unusable since the last check: those on nodes noted since (a
  // Node event whose check could not run, a slot that took a reservation again), those waiting for
  // room, and every slot after recheck_all().
  void check_due();
  // A Node changed in a way the view reads (not a heartbeat) or went away: the slots on it, and
  // those waiting for room, are checked now. A node no slot holds costs one lookup.
  void node_changed(const std::string& node);
  // The Nodes were listed again: the next check_due() checks every slot.
  void recheck_all() { all_due_ = true; }
  // Victims of `plan` on `node` still running (not deleted, not terminating).
  std::vector<const PlanVictim*> pending_victims(const GangPlan& plan, const std::string& node) const;

  // {"gangs": [{"key", "jobDomain", "fabricHealth", "subGroups", "slots": [...], "victims"...}]}
  nlohmann::json plans_json() const;
  // Loads plans from the state file (a missing file is no error; one that does not parse is set
  // aside). Takes lock(); the owner holds the view.
  std::expected<void, Error> load_state();
  // Writes the state file now when the plans changed since it was last written. Takes lock() while it
  // copies the plans as text, none while it writes.
  void flush_state();

  const BookCounters& counters() const { return counters_; }
  // The book's own lock, held around every call but load_state() and flush_state().
  [[nodiscard]] std::unique_lock<std::mutex> lock() const { return std::unique_lock(mu_); }

 private:
  void record_binding(const ViewPod& pod);
  void bind_to(GangPlan& plan, PlanSlot& slot, const ViewPod& pod, SlotClaim claim);
  void release_slot_of(const std::string& uid, bool succeeded);
  // Checks the slots of plan `key` that hold a reservation and that `pick` chooses (all when empty).
  void check_plan(const std::string& key, const std::function<bool(const PlanSlot&)>& pick);
  void expire_when_due();
  // The slot ledger. Every transition of a slot of a held plan goes through step(): it runs the
  // transition (gang_slot.h) and, only when it succeeds, applies what it changes beside the slot in
  // the same place: the reservation (off the node when the slot stops holding one or moves, on the
  // node when it starts or moves) and the lookups below (the pod uid's entry, the node's slots, the
  // plan's waiting slots; a node where the slot newly holds a reservation is due for a check).
  bool step(GangPlan& plan, PlanSlot& slot, const std::function<bool(PlanSlot&)>& transition);
  // A plan comes into the book (made, made again, read back) or leaves it (expired, abandoned,
  // dropped for a re-plan): its slots' entries go in or out; enter() also sorts its slots by rank and
  // marks the nodes where they hold reservations due. note() enters one new slot of a held plan.
  void enter(GangPlan& plan);
  void leave(const GangPlan& plan);
  void note(const std::string& key, const PlanSlot& slot, bool due);
  void forget(const std::string& key, const PlanSlot& slot);
  // Every plan entered again (the state file read back): every slot is due.
  void reindex();
  // The slot a pod holds (reserved, bound or done) and its plan, from the pod's uid and the slot's
  // rank: one hash lookup and a binary search in its plan's slots; null when none.
  PlanSlot* slot_of(const std::string& uid, GangPlan** plan);
  // The slot of `rank` in a plan (its slots are kept sorted by rank); null when none.
  static PlanSlot* slot_at(GangPlan& plan, std::int32_t rank);
  // A new slot for a pod beyond the planned ones (of sub-group `group`, -1: the gang's request).
  std::expected<PlanSlot*, Error> grow(GangPlan& plan, std::int32_t rank, std::int32_t group = -1);
  std::expected<PlanSlot*, Error> take_group_slot(GangPlan& plan, const nlohmann::json& pod,
                                                  std::span<const std::string_view> offered);
  void set_reservation(const GangPlan& plan, std::int32_t group, const std::string& node, int sign);
  void reserve(const GangPlan& plan, int sign);
  void expire_plans();
  void mark_changed();
  std::string state_text() const;
  void write_state(const std::string& text);
  void run_saver(std::stop_token stop);

  BookOptions options_;
  ClusterView& view_;
  mutable std::mutex mu_;  // before every member the state writer reads
  std::map<std::string, GangPlan> plans_;
  BookCounters counters_;
  GangPlanner planner_{options_, view_, counters_};  // what the book plans (gang_planner.h)
  // The ledger's lookups (step, enter, leave).
  std::unordered_map<std::string, std::pair<std::string, std::int32_t>> by_uid_;  // pod uid -> (plan, rank)
  // node -> plan key -> the plan's slots there that hold a reservation.
  std::unordered_map<std::string, std::map<std::string, int>> by_node_;
  std::map<std::string, int>
      waiting_plans_;  // plan key -> its slots (holding a reservation) waiting for room
  // Nodes whose slots the next check_due() checks; every slot when all_due_.
  std::set<std::string> nodes_due_;
  bool all_due_ = false;
  std::optional<timing::Clock::TimePoint> last_expiry_;
  // The state file's writer: a version bumped on every change and the thread that writes it.
  std::mutex save_mu_;
  std::condition_variable_any save_cv_;
  std::uint64_t state_version_ = 0, saved_version_ = 0;
  std::mutex write_mu_;  // one writer of the file at a time
  std::jthread saver_;   // last: stopped and joined before the members it reads go
};

}  // namespace hypertopo::scheduler
