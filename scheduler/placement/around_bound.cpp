// The rest of a gang around its bound pods (around_bound.h).
#include "scheduler/placement/around_bound.h"

#include <algorithm>
#include <map>
#include <optional>
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

namespace {

// The highest of `from` and its ancestors whose tier is within `tier`, never past `stop` (an
// ancestor of `from`; -1: up to the root). No tier: `stop` itself (the root when -1).
int widen_within(const TopologyIndex& index, int from, std::optional<int> tier, int stop) {
  if (!tier) return stop >= 0 ? stop : index.root();
  int out = from;
  for (int d = from; d >= 0 && index.domain(d).tier <= *tier; d = index.domain(d).parent) {
    out = d;
    if (d == stop) break;
  }
  return out;
}

std::optional<int> tighter(std::optional<int> a, const TopologyIndex& index, const std::string& level) {
  if (level.empty()) return a;
  auto t = index.resolve_tier(level);
  if (!t) return a;  // a level the index does not name limits nothing, as in place_around_bound
  return a ? std::min(*a, *t) : *t;
}

// The tier a sub-group's required level and its parents' allow (none: no limit).
std::optional<int> sub_group_tier(const TopologyIndex& index, const JobRequest& job,
                                  const std::string& name) {
  std::optional<int> out;
  std::string at = name;
  for (std::size_t depth = 0; !at.empty() && depth <= kMaxSubGroupDepth; ++depth) {
    auto it = std::find_if(job.sub_groups.begin(), job.sub_groups.end(),
                           [&](const SubGroupRequest& g) { return g.name == at; });
    if (it == job.sub_groups.end()) break;
    out = tighter(out, index, it->required);
    at = it->parent;
  }
  return out;
}

}  // namespace

bool plans_around_bound_by_groups(const JobRequest& job) {
  if (job.pod_sets.size() < 2 && job.sub_groups.empty()) return false;
  for (const auto& [policy, least] : job.min_sub_groups) {
    if (least > 0) return false;
  }
  std::int64_t total = 0;
  std::map<std::string, std::int64_t> of_group;
  for (const auto& ps : job.pod_sets) {
    if (ps.min_count > 0 && ps.min_count < ps.count) return false;
    if (ps.partitions || !ps.slices.empty()) return false;
    total += ps.count;
    of_group[ps.sub_group] += ps.count;
  }
  if (job.min_pods && *job.min_pods > 0 && *job.min_pods < total) return false;
  for (const auto& g : job.sub_groups) {
    if (g.min_member > 0 && g.min_member < of_group[g.name]) return false;
  }
  return true;
}

std::expected<GangAroundBound, Error> place_gang_around_bound(TopologyIndex& index, PlacementEngine& engine,
                                                              JobRequest job,
                                                              std::span<const GangBoundPod> bound,
                                                              bool counted) {
  GangAroundBound out;
  out.job = std::move(job);
  auto& sets = out.job.pod_sets;
  // Each bound pod's pod set: its sub-group's that asks what it asks, else its sub-group's first;
  // where the counts hold the bound pods, one with a pod not yet claimed comes first.
  std::vector<int> set_of(bound.size(), -1);
  std::vector<std::int32_t> claimed(sets.size(), 0);
  for (std::size_t i = 0; i < bound.size(); ++i) {
    if (index.find_node(bound[i].node) < 0) {
      return fail(ErrorCode::kInvalidArgument,
                  "a bound pod's node " + bound[i].node + " is not among the topology's nodes");
    }
    int match = -1, first = -1;
    for (const bool any_room : {false, true}) {
      for (std::size_t p = 0; p < sets.size() && match < 0; ++p) {
        if (sets[p].sub_group != bound[i].sub_group) continue;
        const bool room = !counted || claimed[p] < sets[p].count;
        if (!room && !any_room) continue;
        if (first < 0) first = static_cast<int>(p);
        if (sets[p].per_pod == bound[i].requests) match = static_cast<int>(p);
      }
      if (match >= 0 || first >= 0) break;
    }
    if (match < 0 && counted) match = first;
    bool added = !counted;
    if (match < 0) {
      // A spec none of the pods still to place has: a pod set of its bound pods alone.
      PodSetRequest own = first >= 0 ? sets[static_cast<std::size_t>(first)] : PodSetRequest{};
      own.name = bound[i].sub_group.empty() ? out.job.name : bound[i].sub_group;
      own.sub_group = bound[i].sub_group;
      own.per_pod = bound[i].requests;
      own.count = 0;
      sets.push_back(std::move(own));
      match = static_cast<int>(sets.size()) - 1;
      added = true;
    }
    if (added) ++sets[static_cast<std::size_t>(match)].count;
    claimed.resize(sets.size(), 0);
    ++claimed[static_cast<std::size_t>(match)];
    set_of[i] = match;
  }
  // The bound pods of each pod set take its lowest ranks, in the order given.
  out.pod_sets.resize(sets.size());
  std::vector<const std::vector<std::string>*> all;
  for (std::size_t i = 0; i < bound.size(); ++i) {
    AroundBound& a = out.pod_sets[static_cast<std::size_t>(set_of[i])];
    const int node = index.find_node(bound[i].node);
    a.slots.push_back({.rank = a.bound++,
                       .node = bound[i].node,
                       .domain_path = index.domain_path(index.node(node).domain),
                       .bound = static_cast<int>(i)});
  }
  for (std::size_t p = 0; p < sets.size(); ++p) {
    AroundBound& a = out.pod_sets[p];
    if (sets[p].count < a.bound) sets[p].count = a.bound;
    a.missing = sets[p].count - a.bound;
    out.bound += a.bound;
    out.missing += a.missing;
    for (const auto& s : a.slots) all.push_back(&s.domain_path);
  }
  out.common = deepest_common_domain(index, all);
  const std::string& gang_level = !out.job.job_required.empty()             ? out.job.job_required
                                  : out.job.mode == TopologyMode::kRequired ? out.job.level
                                                                            : std::string();
  out.widest = widen_within(index, out.common, tighter(std::nullopt, index, gang_level), -1);

  // Sub-groups with bound pods first, then the others, each in the order the PodGroup's reader gives
  // its sub-groups (KAI's as declared, Volcano's sub-job order), the gang's own pods before them: the
  // pods' order differs between the doors (a List's order, the watch's), the PodGroup's does not.
  auto order_of = [&](const std::string& g) {
    if (g.empty()) return -1;
    for (std::size_t k = 0; k < out.job.sub_groups.size(); ++k)
      if (out.job.sub_groups[k].name == g) return static_cast<int>(k);
    return static_cast<int>(out.job.sub_groups.size());
  };
  std::map<std::pair<int, std::string>, std::vector<int>> with_bound, without;
  for (std::size_t p = 0; p < sets.size(); ++p) {
    const std::string& g = sets[p].sub_group;
    bool any = false;
    for (std::size_t q = 0; q < sets.size(); ++q)
      any = any || (sets[q].sub_group == g && out.pod_sets[q].bound > 0);
    (any ? with_bound : without)[{order_of(g), g}].push_back(static_cast<int>(p));
  }
  // What the engine placed, to take back when a later sub-group does not fit.
  std::vector<std::pair<JobRequest, JobPlacement>> placed;
  auto undo = [&] {
    for (auto it = placed.rbegin(); it != placed.rend(); ++it) engine.release(it->first, it->second);
  };
  auto unit_name = [&](const std::string& g) { return g.empty() ? "the gang's own pods" : "sub-group " + g; };
  // Places a sub-group's rest inside `from` or an ancestor up to `widest`, nearest first.
  auto place_unit = [&](const std::string& g, const std::vector<int>& members, int from, int widest,
                        std::optional<int> limit) -> std::expected<bool, Error> {
    JobRequest rest{.name = out.job.name};
    std::vector<int> which;
    for (const int p : members) {
      AroundBound& a = out.pod_sets[static_cast<std::size_t>(p)];
      a.common = from;
      a.widest = widest;
      a.rest = sets[static_cast<std::size_t>(p)];
      a.rest.count = a.missing;
      a.rest.min_count = 0;
      a.rest.partitions.reset();
      if (a.bound > 0 && a.rest.mode == TopologyMode::kRequired) {
        // Around bound pods the rest may spread over the widest domain the constraint allows.
        a.rest.level = std::to_string(index.domain(widest).tier);
      } else if (limit) {
        a.rest.mode = TopologyMode::kRequired;
        a.rest.level = std::to_string(*limit);
      }
      if (a.missing == 0) {
        a.fit = true;
        continue;
      }
      rest.pod_sets.push_back(a.rest);
      which.push_back(p);
    }
    if (which.empty()) return true;
    std::string why;
    for (int d = from; d >= 0; d = index.domain(d).parent) {
      auto r = engine.place_within(rest, d);
      if (!r) return std::unexpected(r.error());
      if (r->fit) {
        for (std::size_t k = 0; k < which.size(); ++k)
          add_rest(out.pod_sets[static_cast<std::size_t>(which[k])], r->pod_sets[k]);
        placed.emplace_back(std::move(rest), std::move(*r));
        return true;
      }
      if (why.empty()) why = r->reason;
      if (d == widest) break;
    }
    out.why = unit_name(g) + ": " + why;
    for (const int p : which) out.pod_sets[static_cast<std::size_t>(p)].why = why;
    return false;
  };
  for (const auto& [key, members] : with_bound) {
    const std::string& g = key.second;
    std::vector<const std::vector<std::string>*> paths;
    std::optional<int> limit = sub_group_tier(index, out.job, g);
    for (const int p : members) {
      for (const auto& s : out.pod_sets[static_cast<std::size_t>(p)].slots) paths.push_back(&s.domain_path);
      const auto& ps = sets[static_cast<std::size_t>(p)];
      if (ps.mode == TopologyMode::kRequired) limit = tighter(limit, index, ps.level);
    }
    const int from = deepest_common_domain(index, paths);
    auto ok = place_unit(g, members, from, widen_within(index, from, limit, out.widest), std::nullopt);
    if (!ok || !*ok) {
      undo();
      if (!ok) return std::unexpected(ok.error());
      return out;
    }
  }
  for (const auto& [key, members] : without) {
    const std::string& g = key.second;
    std::optional<int> limit = sub_group_tier(index, out.job, g);
    for (const int p : members) {
      const auto& ps = sets[static_cast<std::size_t>(p)];
      if (ps.mode == TopologyMode::kRequired) limit = tighter(limit, index, ps.level);
    }
    auto ok = place_unit(g, members, out.common, out.widest, limit);
    if (!ok || !*ok) {
      undo();
      if (!ok) return std::unexpected(ok.error());
      return out;
    }
  }
  for (auto& a : out.pod_sets) {
    std::sort(a.slots.begin(), a.slots.end(),
              [](const AroundBoundSlot& x, const AroundBoundSlot& y) { return x.rank < y.rank; });
  }
  out.fit = true;
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
