#include "scheduler/extender/gang_quorum.h"

#include <utility>

#include "scheduler/input/coscheduling_pod_group.h"
#include "scheduler/input/kai_pod_group.h"

namespace hypertopo::scheduler {

std::expected<void, Error> gang_quorum(ClusterView& view, const nlohmann::json& pod, const std::string& key,
                                       std::optional<PodGroupKind> sized_by, std::int32_t count) {
  const bool counts_pods = sized_by == PodGroupKind::kVolcano || sized_by == PodGroupKind::kCoscheduling;
  if (counts_pods && !view.grouped(key)) {
    view.note_pending(pod, key, /*replace=*/false);
    if (const std::size_t seen = view.gang_members_seen(key); std::cmp_less(seen, count))
      return fail(ErrorCode::kUnavailable, gang_waits_for_pods(key, seen, count, /*sub_groups=*/false));
  }
  const MinResourcesCheck* wanted =
      sized_by == PodGroupKind::kCoscheduling ? view.group_min_resources(key) : nullptr;
  if (!wanted || !view.index_current()) return {};
  // getNodeResource takes the group's own pods off their Nodes before it sums what is left.
  MinResourcesCheck check = *wanted;
  for (const auto& [id, p] : view.pods()) {
    if (p.gang != key || p.terminating || view.index().find_node(p.node) < 0) continue;
    for (const auto& [name, amount] : p.requests) check.held[name] += amount;
    check.held["pods"] += 1;
  }
  if (std::string gap = min_resources_gap(check, view.index()); !gap.empty())
    return fail(ErrorCode::kUnavailable, std::move(gap));
  return {};
}

}  // namespace hypertopo::scheduler
