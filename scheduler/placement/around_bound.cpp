// The rest of a gang around its bound pods (around_bound.h).
#include "scheduler/placement/around_bound.h"

#include <algorithm>
#include <set>

namespace hypertopo::scheduler {
namespace {

// The domain every slot's path shares, deepest first.
int common_domain(const TopologyIndex& index, const std::vector<AroundBoundSlot>& slots) {
  std::vector<const std::vector<std::string>*> paths;
  paths.reserve(slots.size());
  for (const auto& slot : slots) paths.push_back(&slot.domain_path);
  return deepest_common_domain(index, paths);
}

std::set<std::int32_t> taken_ranks(const AroundBound& around) {
  std::set<std::int32_t> ranks;
  for (const auto& s : around.slots) ranks.insert(s.rank);
  return ranks;
}

}  // namespace

std::expected<AroundBound, Error> place_around_bound(const TopologyIndex& index, PlacementEngine& engine,
                                                     const PodSetRequest& request,
                                                     std::span<const BoundGangPod> bound,
                                                     std::int32_t missing) {
  AroundBound out;
  out.bound = static_cast<std::int32_t>(bound.size());
  out.missing = std::max<std::int32_t>(missing, 0);
  std::set<std::int32_t> ranks;
  std::vector<int> unranked;
  for (std::size_t i = 0; i < bound.size(); ++i) {
    const int node = index.find_node(bound[i].node);
    if (node < 0) {
      return fail(ErrorCode::kInvalidArgument,
                  "a bound pod's node " + bound[i].node + " is not among the topology's nodes");
    }
    const std::int32_t rank = bound[i].rank;
    if (rank < 0 || ranks.contains(rank)) {
      unranked.push_back(static_cast<int>(i));
      continue;
    }
    ranks.insert(rank);
    out.slots.push_back({.rank = rank,
                         .node = bound[i].node,
                         .domain_path = index.domain_path(index.node(node).domain),
                         .bound = static_cast<int>(i),
                         .by_index = true});
  }
  std::int32_t next = 0;
  for (const int i : unranked) {
    while (ranks.contains(next)) ++next;
    ranks.insert(next);
    const auto& pod = bound[static_cast<std::size_t>(i)];
    out.slots.push_back({.rank = next,
                         .node = pod.node,
                         .domain_path = index.domain_path(index.node(index.find_node(pod.node)).domain),
                         .bound = i});
  }
  out.common = common_domain(index, out.slots);
  out.widest = index.root();
  out.rest = request;
  out.rest.count = out.missing;
  out.rest.partitions.reset();  // the bound pods fixed the partitions' domains; the rest fill in around them
  if (out.rest.mode == TopologyMode::kRequired && !out.rest.level.empty()) {
    if (auto tier = index.resolve_tier(out.rest.level)) {
      out.widest = out.common;
      for (int d = out.common; d >= 0 && index.domain(d).tier <= *tier; d = index.domain(d).parent)
        out.widest = d;
    }
  }
  if (out.rest.mode == TopologyMode::kRequired)
    out.rest.level = std::to_string(index.domain(out.widest).tier);
  if (out.missing == 0) {
    out.fit = true;
    std::sort(out.slots.begin(), out.slots.end(),
              [](const AroundBoundSlot& a, const AroundBoundSlot& b) { return a.rank < b.rank; });
    return out;
  }
  for (int d = out.common; d >= 0; d = index.domain(d).parent) {
    JobRequest job{.name = request.name, .pod_sets = {out.rest}};
    auto r = engine.place_within(job, d);
    if (!r) return std::unexpected(r.error());
    if (r->fit) {
      add_rest(out, r->pod_sets.front());
      break;
    }
    if (out.why.empty()) out.why = r->reason;
    if (d == out.widest) break;
  }
  if (!out.fit) {
    std::sort(out.slots.begin(), out.slots.end(),
              [](const AroundBoundSlot& a, const AroundBoundSlot& b) { return a.rank < b.rank; });
  }
  return out;
}

void add_rest(AroundBound& around, const PodSetPlacement& placed) {
  std::set<std::int32_t> ranks = taken_ranks(around);
  std::int32_t rank = 0;
  for (const auto& a : placed.assignment) {
    for (std::int32_t i = 0; i < a.count; ++i) {
      while (ranks.contains(rank)) ++rank;
      ranks.insert(rank);
      around.slots.push_back({.rank = rank, .node = a.node_name, .domain_path = a.domain_path});
    }
  }
  std::sort(around.slots.begin(), around.slots.end(),
            [](const AroundBoundSlot& a, const AroundBoundSlot& b) { return a.rank < b.rank; });
  around.placed = placed;
  around.fit = true;
}

std::string around_bound_refusal(const TopologyIndex& index, const AroundBound& around,
                                 const std::string& why) {
  return std::to_string(around.bound) + " pods are bound in " +
         (around.common == index.root() ? std::string("the cluster") : index.domain(around.common).name) +
         " and the other " + std::to_string(around.missing) + " do not fit inside " +
         index.domain(around.widest).name + ", the widest domain the gang's constraint allows: " + why;
}

int deepest_common_domain(const TopologyIndex& index,
                          std::span<const std::vector<std::string>* const> paths) {
  std::vector<std::string> common;
  bool first = true;
  for (const auto* path : paths) {
    if (path->empty()) continue;
    if (first) {
      common = *path;
      first = false;
      continue;
    }
    std::size_t n = 0;
    while (n < common.size() && n < path->size() && common[n] == (*path)[n]) ++n;
    common.resize(n);
  }
  for (auto it = common.rbegin(); it != common.rend(); ++it) {
    if (const int d = index.find_domain(*it); d >= 0) return d;
  }
  return index.root();
}

}  // namespace hypertopo::scheduler
