// The rest of a gang around its bound pods (around_bound.h).
#include "scheduler/placement/around_bound.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "scheduler/placement/nearest_room.h"

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

std::vector<std::int32_t> grow_elastic(TopologyIndex& index, AroundBound& around,
                                       const PodSetRequest& request, int job_domain,
                                       std::span<const std::int32_t> ranks) {
  std::vector<std::int32_t> left;
  int limit = index.root();
  if (request.mode == TopologyMode::kRequired && job_domain >= 0) {
    limit = job_domain;
    if (auto highest = index.resolve_tier(request.level)) {
      for (int d = index.domain(job_domain).parent;
           d >= 0 && d != index.root() && index.domain(d).tier <= *highest; d = index.domain(d).parent)
        limit = d;
    }
  }
  // The request as kube-scheduler's NodeResourcesFit counts it: each resource asked for, and one
  // pod slot when the request names none.
  std::vector<std::pair<int, std::int64_t>> amounts;
  bool unknown = false;
  for (const auto& [name, amount] : request.per_pod) {
    if (amount <= 0) continue;
    const int r = index.resource_id(name);
    if (r < 0)
      unknown = true;
    else
      amounts.emplace_back(r, amount);
  }
  const int pods = request.per_pod.contains("pods") ? -1 : index.resource_id("pods");
  auto usable = [&](int n) {
    if (unknown) return false;
    const NodeSpec& spec = index.node(n).spec;
    if (!spec.ready || spec.unschedulable) return false;
    if (!check_node_constraints(spec, request.node_selector, request.affinity, request.tolerations).passed())
      return false;
    for (const auto& [r, amount] : amounts) {
      if (index.node_allocatable(n, r) - index.node_used(n, r) < amount) return false;
    }
    return pods < 0 || index.node_allocatable(n, pods) - index.node_used(n, pods) >= 1;
  };
  for (const std::int32_t rank : ranks) {
    // Volcano's scoreWithTaskNum: among nodes the tier leaves equal, the HyperNode holding more of
    // the gang's pods.
    std::unordered_map<int, int> mates;
    for (const auto& s : around.slots) {
      if (const int n = index.find_node(s.node); n >= 0) ++mates[index.node(n).domain];
    }
    const int start = common_domain(index, around.slots);
    const int found =
        nearest_room(index, request, {.start = start, .limit = limit, .usable = usable, .mates = &mates});
    if (found < 0) {
      left.push_back(rank);
      continue;
    }
    (void)index.add_pods(found, request.per_pod, 1);
    around.slots.push_back({.rank = rank,
                            .node = index.node(found).spec.name,
                            .domain_path = index.domain_path(index.node(found).domain)});
  }
  std::sort(around.slots.begin(), around.slots.end(),
            [](const AroundBoundSlot& a, const AroundBoundSlot& b) { return a.rank < b.rank; });
  return left;
}

std::expected<ElasticPlan, Error> place_elastic(TopologyIndex& index, PlacementEngine& engine,
                                                const PodSetRequest& request,
                                                std::span<const BoundGangPod> bound) {
  PodSetRequest minimum = request;
  minimum.count = request.min_count;
  minimum.min_count = 0;
  ElasticPlan out;
  int job_domain = -1;
  if (bound.empty()) {
    out.around.missing = minimum.count;
    out.around.common = out.around.widest = index.root();
    out.around.rest = minimum;
    auto placed = engine.place(JobRequest{.name = request.name, .pod_sets = {minimum}});
    if (!placed) return std::unexpected(placed.error());
    if (!placed->fit) {
      out.around.why = placed->reason;
      return out;
    }
    add_rest(out.around, placed->pod_sets.front());
    // The domain the engine chose for the minimum (the extender's gang book keeps it as the plan's).
    if (const auto& domains = placed->pod_sets.front().domains; domains.size() == 1) {
      if (const int d = index.find_domain(domains.front()); d >= 0 && d != index.root()) job_domain = d;
    }
  } else {
    const std::int32_t missing = minimum.count - static_cast<std::int32_t>(bound.size());
    auto around = place_around_bound(index, engine, minimum, bound, missing);
    if (!around) return std::unexpected(around.error());
    out.around = std::move(*around);
    if (!out.around.fit) return out;
    if (const int all = common_domain(index, out.around.slots); all != index.root()) job_domain = all;
  }
  const std::set<std::int32_t> taken = taken_ranks(out.around);
  std::vector<std::int32_t> ranks;
  for (std::int32_t r = 0; r < request.count; ++r) {
    if (!taken.contains(r)) ranks.push_back(r);
  }
  out.left = grow_elastic(index, out.around, request, job_domain, ranks);
  out.around.missing = request.count - out.around.bound;
  out.around.common = common_domain(index, out.around.slots);
  return out;
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
