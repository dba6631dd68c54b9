// scheduler/extender/gang_planner.h: what the gang book plans, apart from the slots it keeps.
//
// The planner chooses the domains and nodes of a gang's slots on the cluster view's index: a new
// plan from the pod that asks (its size and constraint, its PodGroup and the pods of it the view
// holds, read as `place` reads them), with the PlacementEngine for one pod set, place_sub_groups for
// a PodGroup with sub-groups, around the gang's bound pods when it has some (around_bound.h), with
// victims when asked to preempt (victim_planner.h); a plan made again keeping its bound slots; a
// sub-group placed after the gang started; room for a pod beyond the planned ones; and the node a
// slot may move to inside its innermost constraint domain, nearest first. It returns plain plans and
// node ids: the gang book (gang_book.h) keeps them, gives their slots to pods and holds their
// reservations. A placement leaves its pods' requests on the index, as the engine does: those are
// the new slots' reservations. Called under the book's lock, with the view held by the book's owner.
//
//   GangPlanner planner(options, view, counters);
//   auto plan = planner.plan(pod, "ml/train", nullptr);     // GangPlan, or why it does not fit
//   int node = planner.find_room(*plan, plan->request, start, limit, -1, {});
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "errors/error.h"
#include "scheduler/extender/cluster_view.h"
#include "scheduler/extender/gang_slot.h"
#include "scheduler/placement/victim_planner.h"

namespace hypertopo::scheduler {

struct BookOptions;
struct BookCounters;

// "the cluster" for the root, else the domain's name.
std::string domain_label(const TopologyIndex& index, int d);

class GangPlanner {
 public:
  // Reads the options (binpack weights, fabric health, clock) and counts what it plans in `counters`
  // (plans adopted, victim plans and victims, slots of a sub-group placed late).
  GangPlanner(const BookOptions& options, ClusterView& view, BookCounters& counters);

  // A new plan for gang `key` from the pod asking: its size and constraint from the pod (and its
  // PodGroup), around its bound pods. `preempting`: when it fits nowhere, planned with victims.
  std::expected<GangPlan, Error> plan(const nlohmann::json& pod, const std::string& key,
                                      const PreemptionOptions* preempting = nullptr);
  // `count` pods of the plan's request placed anew beside the slots it keeps (a re-plan keeps its
  // bound ones), slots sorted by rank.
  std::expected<void, Error> make_plan(GangPlan& plan, std::int32_t count,
                                       const PreemptionOptions* preempting = nullptr);
  // Places a sub-group that has no slot yet (one the gang started without), all its pods at once:
  // its slots are appended, planned.
  std::expected<void, Error> place_group(GangPlan& plan, std::int32_t group);
  // The node for a new slot of `rank` beyond the planned ones (of sub-group `group`, -1: the gang's
  // request), its request not on the index; or why none has room.
  std::expected<int, Error> room_to_grow(const GangPlan& plan, std::int32_t rank, std::int32_t group);
  // A node with room for `request` inside domain `limit`, nearest to `start` first, other than
  // `exclude`, among the nodes `allowed` admits (all when empty); -1 when none.
  int find_room(const GangPlan& plan, const PodSetRequest& request, int start, int limit, int exclude,
                const std::function<bool(int)>& allowed) const;
  // The innermost constraint domain of a slot: its sub-group's or partition's domain, else the job
  // domain of a required gang, else the root; -1 when that domain is gone.
  int constraint_domain(const GangPlan& plan, const PlanSlot& slot) const;
  // The plan's sub-group a pod belongs to (an index into plan.groups), or why none.
  std::expected<int, Error> group_of(const GangPlan& plan, const nlohmann::json& pod) const;

 private:
  std::expected<void, Error> make_grouped_plan(GangPlan& plan, const GroupedGang& gang, std::int32_t count);
  std::expected<void, Error> adopt_bound(GangPlan& plan, std::int32_t count,
                                         const PreemptionOptions* preempting = nullptr);
  void record_victims(GangPlan& plan, const std::vector<PreemptionCandidate>& running,
                      const PreemptionPlan& victims);
  // The lowest domain holding every placed slot of the plan, or of one sub-group (the root when none).
  int common_domain(const GangPlan& plan, std::int32_t group = -1) const;
  // The highest ancestor of `domain` (itself included, the root excluded) whose tier is within
  // `level` (a tier number, tierName or level key); `domain` when the level does not resolve.
  int widest_allowed_domain(int domain, const std::string& level) const;

  const BookOptions& options_;
  ClusterView& view_;
  BookCounters& counters_;
};

}  // namespace hypertopo::scheduler
