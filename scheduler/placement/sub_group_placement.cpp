#include "scheduler/placement/sub_group_placement.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace hypertopo::scheduler {
namespace {

// What a request over free resources is when the domain has none of a requested resource: larger
// than any real ratio, so such a domain sorts last and never holds the group.
constexpr double kResourceMissingRatio = 1e9;

struct Group {
  std::string name;  // "" = the job
  int parent = -1;
  int required = -1;   // tier, -1 = none
  int preferred = -1;  // tier, -1 = none
  std::string required_name;
  std::int32_t min_member = 0;
  std::string policy;      // Volcano subGroupPolicy, "" = none
  bool exclusive = false;  // one per domain of its required level among its siblings
  std::vector<int> children;
  std::vector<int> pod_sets;
};

// One placement of (part of) a pod set, as committed to the index.
struct Piece {
  int pod_set = -1;
  JobRequest request;  // one pod set: what release() takes back
  JobPlacement placed;
};

class SubGroupPlacer {
 public:
  SubGroupPlacer(PlacementEngine& engine, TopologyIndex& index, const JobRequest& job)
      : engine_(engine), index_(index), job_(job) {}

  std::expected<JobPlacement, Error> run() {
    if (auto ok = build_groups(); !ok) return std::unexpected(ok.error());
    anchor_.assign(groups_.size(), -1);
    node_of_.assign(groups_.size(), -1);
    std::vector<std::int64_t> total(job_.pod_sets.size());
    for (std::size_t i = 0; i < job_.pod_sets.size(); ++i) total[i] = job_.pod_sets[i].count;
    // Elastic sub-groups: their minimum first, the rest after every minimum is placed.
    std::vector<std::int64_t> first = total;
    bool elastic = false;
    for (const auto& g : groups_) {
      std::int64_t own = 0;
      for (int p : g.pod_sets) own += total[static_cast<std::size_t>(p)];
      if (g.min_member <= 0 || g.min_member >= own) continue;
      elastic = true;
      std::int64_t left = g.min_member;
      for (int p : g.pod_sets) {
        const std::int64_t take = std::min(left, total[static_cast<std::size_t>(p)]);
        first[static_cast<std::size_t>(p)] = take;
        left -= take;
      }
    }
    counts_ = first;
    reason_.clear();
    if (auto short_of = quorum_unreachable(total); !short_of.empty()) {
      reason_ = short_of;
      return failed();
    }
    quorum_ = !job_.min_sub_groups.empty();
    auto ok = place_group(0, index_.root(), {});
    quorum_ = false;
    if (!ok) return rollback_error(ok.error());
    if (!*ok) {
      if (!quorum_reason_.empty()) reason_ = quorum_reason_;
      return failed();
    }
    std::string partial;
    if (!left_out_.empty()) {
      std::int64_t placed = 0, asked = 0;
      for (std::size_t i = 0; i < total.size(); ++i) asked += total[i];
      for (const auto& piece : pieces_)
        for (const auto& set : piece.placed.pod_sets)
          for (const auto& a : set.assignment) placed += a.count;
      partial = "placed " + std::to_string(placed) + " of " + std::to_string(asked) +
                " pods: the gang starts with " + std::to_string(groups_.size() - 1 - left_out_.size()) +
                " of its " + std::to_string(groups_.size() - 1) +
                " sub-groups (minSubGroups met); not fitting now:";
      constexpr std::size_t kNamed = 5;
      for (std::size_t i = 0; i < left_out_.size() && i < kNamed; ++i)
        partial += (i == 0 ? " " : ", ") + groups_[static_cast<std::size_t>(left_out_[i])].name;
      if (left_out_.size() > kNamed) partial += " and " + std::to_string(left_out_.size() - kNamed) + " more";
    }
    if (elastic) {
      for (std::size_t i = 0; i < total.size(); ++i) counts_[i] = total[i] - first[i];
      const std::size_t mark = pieces_.size();
      auto rest = place_group(0, index_.root(), {});
      if (!rest) return rollback_error(rest.error());
      if (!*rest) {
        rollback(mark);
        std::int64_t placed = 0, asked = 0;
        for (std::size_t i = 0; i < total.size(); ++i) {
          placed += first[i];
          asked += total[i];
        }
        partial = "placed " + std::to_string(placed) + " of " + std::to_string(asked) +
                  " pods (the sub-groups' minMember); the others do not fit now: " + reason_;
      }
    }
    return result(partial);
  }

 private:
  std::expected<void, Error> build_groups() {
    const std::string where = "job " + job_.name;
    groups_.push_back(Group{});
    auto tier_of = [&](const std::string& level, const std::string& what) -> std::expected<int, Error> {
      if (level.empty()) return -1;
      auto t = index_.resolve_tier(level);
      if (!t) return std::unexpected(t.error().context(where + ": " + what));
      return *t;
    };
    auto root_req = tier_of(job_.job_required, "required topology level");
    if (!root_req) return std::unexpected(root_req.error());
    auto root_pref = tier_of(job_.job_preferred, "preferred topology level");
    if (!root_pref) return std::unexpected(root_pref.error());
    groups_[0].required = *root_req;
    groups_[0].preferred = *root_pref;
    groups_[0].required_name = job_.job_required;
    std::map<std::string, int> by_name;
    for (const auto& sg : job_.sub_groups) {
      const std::string what = "sub-group " + sg.name;
      if (sg.name.empty()) return fail(ErrorCode::kInvalidArgument, where + ": a sub-group has no name");
      if (by_name.contains(sg.name))
        return fail(ErrorCode::kInvalidArgument, where + ": two sub-groups named " + sg.name);
      if (sg.min_member < 0)
        return fail(ErrorCode::kInvalidArgument, where + ": " + what + ": minMember must not be negative");
      Group g;
      g.name = sg.name;
      g.min_member = sg.min_member;
      g.policy = sg.policy;
      g.exclusive = sg.exclusive;
      auto req = tier_of(sg.required, what + " required topology level");
      if (!req) return std::unexpected(req.error());
      auto pref = tier_of(sg.preferred, what + " preferred topology level");
      if (!pref) return std::unexpected(pref.error());
      g.required = *req;
      g.preferred = *pref;
      g.required_name = sg.required_as_written.empty() ? sg.required : sg.required_as_written;
      by_name[sg.name] = static_cast<int>(groups_.size());
      groups_.push_back(std::move(g));
    }
    for (std::size_t i = 0; i < job_.sub_groups.size(); ++i) {
      const auto& sg = job_.sub_groups[i];
      int parent = 0;
      if (!sg.parent.empty()) {
        auto it = by_name.find(sg.parent);
        if (it == by_name.end()) {
          return fail(ErrorCode::kInvalidArgument, where + ": sub-group " + sg.name + " names parent " +
                                                       sg.parent + ", which is no sub-group");
        }
        parent = it->second;
      }
      groups_[i + 1].parent = parent;
      groups_[static_cast<std::size_t>(parent)].children.push_back(static_cast<int>(i + 1));
    }
    // Every sub-group must reach the job (a cycle of parents never does) within kMaxSubGroupDepth
    // steps: place_group recurses once per level. A walk that passes the bound goes on only to tell
    // a cycle from a deep chain, once, before the error.
    for (std::size_t i = 1; i < groups_.size(); ++i) {
      int g = static_cast<int>(i);
      std::size_t depth = 0;
      while (g > 0 && depth < kMaxSubGroupDepth) {
        g = groups_[static_cast<std::size_t>(g)].parent;
        ++depth;
      }
      if (g == 0) continue;
      while (g > 0 && depth <= groups_.size()) {
        g = groups_[static_cast<std::size_t>(g)].parent;
        ++depth;
      }
      if (g != 0) {
        return fail(ErrorCode::kInvalidArgument,
                    where + ": sub-group " + groups_[i].name + " is its own ancestor (a cycle of parents)");
      }
      return fail(ErrorCode::kInvalidArgument, where + ": sub-group " + groups_[i].name + " is nested " +
                                                   std::to_string(depth) +
                                                   " levels deep; sub-groups nest at most " +
                                                   std::to_string(kMaxSubGroupDepth) + " levels");
    }
    for (std::size_t p = 0; p < job_.pod_sets.size(); ++p) {
      const auto& ps = job_.pod_sets[p];
      int g = 0;
      if (!ps.sub_group.empty()) {
        auto it = by_name.find(ps.sub_group);
        if (it == by_name.end()) {
          return fail(ErrorCode::kInvalidArgument, where + ": pod set " + ps.name + " names sub-group " +
                                                       ps.sub_group + ", which the job does not declare");
        }
        g = it->second;
      }
      groups_[static_cast<std::size_t>(g)].pod_sets.push_back(static_cast<int>(p));
    }
    return {};
  }

  // The group's request for the pods of this phase, its sub-groups' included. A stack, not
  // recursion: the walk costs no native stack whatever the tree's shape.
  void add_request(int top, ResourceAmounts& out) const {
    std::vector<int> stack{top};
    while (!stack.empty()) {
      const Group& group = groups_[static_cast<std::size_t>(stack.back())];
      stack.pop_back();
      for (int p : group.pod_sets) {
        const std::int64_t n = counts_[static_cast<std::size_t>(p)];
        for (const auto& [r, v] : job_.pod_sets[static_cast<std::size_t>(p)].per_pod) out[r] += v * n;
        out["pods"] += n;
      }
      stack.insert(stack.end(), group.children.begin(), group.children.end());
    }
  }

  // KAI's getJobRatioToFreeResources: the largest share of the domain's free resources the request
  // takes (pods not counted); above 1 the domain cannot hold it.
  double ratio(const ResourceAmounts& request, int domain) const {
    double worst = 0.0;
    for (const auto& [r, amount] : request) {
      if (r == "pods" || amount <= 0) continue;
      const std::int64_t free = index_.domain_allocatable(domain, r) - index_.domain_used(domain, r);
      worst = std::max(
          worst, free <= 0 ? kResourceMissingRatio : static_cast<double>(amount) / static_cast<double>(free));
    }
    return worst;
  }

  bool inside(int domain, int scope) const {
    for (int d = domain; d >= 0; d = index_.domain(d).parent)
      if (d == scope) return true;
    return false;
  }

  // Domains inside `scope` with a tier in [lo, hi], in KAI's order: lower tier first, then the path
  // from `scope` compared level by level (fullest first, then name).
  std::vector<int> packing_order(int scope, int lo, int hi, const ResourceAmounts& request) const {
    struct Keyed {
      int domain;
      int tier;
      std::vector<std::pair<double, std::string>> path;
    };
    std::vector<Keyed> keyed;
    std::vector<int> stack{scope};
    while (!stack.empty()) {
      const int d = stack.back();
      stack.pop_back();
      const IndexDomain& dom = index_.domain(d);
      if (dom.tier >= lo && dom.tier <= hi) {
        Keyed k{d, dom.tier, {}};
        for (int a = d; a >= 0 && a != scope; a = index_.domain(a).parent)
          k.path.emplace_back(ratio(request, a), index_.domain(a).name);
        std::reverse(k.path.begin(), k.path.end());
        keyed.push_back(std::move(k));
      }
      for (int c : dom.children) stack.push_back(c);
    }
    std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
      if (a.tier != b.tier) return a.tier < b.tier;
      const std::size_t n = std::min(a.path.size(), b.path.size());
      for (std::size_t i = 0; i < n; ++i) {
        if (a.path[i].first != b.path[i].first) return a.path[i].first > b.path[i].first;
        if (a.path[i].second != b.path[i].second) return a.path[i].second < b.path[i].second;
      }
      return a.path.size() < b.path.size();
    });
    std::vector<int> out;
    out.reserve(keyed.size());
    for (const auto& k : keyed) out.push_back(k.domain);
    return out;
  }

  // Volcano's minSubGroups (JobRequest::min_sub_groups): a sub-group of a policy with a minimum may
  // be left out once the gang holds its minimums.
  bool optional(int g) const {
    const Group& group = groups_[static_cast<std::size_t>(g)];
    return quorum_ && group.parent == 0 && !group.policy.empty() &&
           job_.min_sub_groups.contains(group.policy);
  }

  std::int64_t pods_of(int g) const {
    ResourceAmounts r;
    add_request(g, r);
    return r["pods"];
  }

  // A minimum the job's own pods can never meet: Volcano's gang plugin (volcano-sh/volcano
  // pkg/scheduler/plugins/gang/gang.go, validJobFn with api/job_info.go CheckSubJobValid and
  // ValidTaskNum) keeps such a job pending; "" when every minimum can be met.
  std::string quorum_unreachable(const std::vector<std::int64_t>& total) const {
    if (job_.min_sub_groups.empty()) return {};
    std::map<std::string, std::int64_t> formed;
    for (std::size_t i = 1; i < groups_.size(); ++i)
      if (groups_[i].parent == 0) ++formed[groups_[i].policy];
    for (const auto& [policy, min] : job_.min_sub_groups) {
      if (min > formed[policy]) {
        return "job " + job_.name + ": subGroupPolicy " + policy + " has minSubGroups " +
               std::to_string(min) + ", its pods form " + std::to_string(formed[policy]) +
               (formed[policy] == 1 ? " sub-group" : " sub-groups") + " (not enough valid sub-groups)";
      }
    }
    std::int64_t pods = 0;
    for (auto n : total) pods += n;
    if (job_.min_pods && *job_.min_pods > pods) {
      return "job " + job_.name + ": minMember is " + std::to_string(*job_.min_pods) + ", the job has " +
             std::to_string(pods) + (pods == 1 ? " pod" : " pods") + " (not enough valid pods)";
    }
    return {};
  }

  // The job's children in the order Volcano's allocate action tries its sub-jobs
  // (pkg/scheduler/actions/allocate/allocate.go, organizeJobWorksheet): those the gang cannot do
  // without, then the first minSubGroups of each policy, then the rest; each part in the order given.
  std::vector<int> child_order(const Group& group) const {
    std::vector<int> out;
    std::vector<bool> taken(group.children.size(), false);
    for (std::size_t i = 0; i < group.children.size(); ++i) {
      if (!optional(group.children[i])) {
        out.push_back(group.children[i]);
        taken[i] = true;
      }
    }
    std::map<std::string, std::int32_t> first;
    for (std::size_t i = 0; i < group.children.size(); ++i) {
      const std::string& policy = groups_[static_cast<std::size_t>(group.children[i])].policy;
      if (taken[i] || first[policy] >= job_.min_sub_groups.at(policy)) continue;
      ++first[policy];
      out.push_back(group.children[i]);
      taken[i] = true;
    }
    for (std::size_t i = 0; i < group.children.size(); ++i)
      if (!taken[i]) out.push_back(group.children[i]);
    return out;
  }

  // Volcano's gang readiness (gang.go JobReady: api/job_info.go CheckSubJobReady and IsReady): each
  // policy holds its minSubGroups and the job its minMember pods (at least one). "" when it does.
  std::string quorum_short(const std::map<std::string, std::int32_t>& fits, std::int64_t pods) const {
    std::string out;
    for (const auto& [policy, min] : job_.min_sub_groups) {
      const std::int32_t n = fits.contains(policy) ? fits.at(policy) : 0;
      if (n >= min) continue;
      out += (out.empty() ? "" : "; ") + std::string("subGroupPolicy ") + policy + ": " + std::to_string(n) +
             (n == 1 ? " sub-group fits" : " sub-groups fit") +
             " with the rest of the gang, minSubGroups is " + std::to_string(min);
    }
    std::int64_t all = 0;
    for (auto n : counts_) all += n;
    const std::int64_t need =
        std::max<std::int64_t>(1, job_.min_pods.value_or(static_cast<std::int32_t>(all)));
    if (pods < need) {
      out += (out.empty() ? "" : "; ") + std::to_string(pods) + (pods == 1 ? " pod fits" : " pods fit") +
             ", minMember is " + std::to_string(need);
    }
    return out;
  }

  // The domain of the required level that holds `d` (d itself when it is at that level or above).
  int required_domain(int d, int required) const {
    while (index_.domain(d).parent >= 0 && index_.domain(index_.domain(d).parent).tier <= required)
      d = index_.domain(d).parent;
    return d;
  }

  // Whether an exclusive group's candidate `d` lies in the required-level domain an exclusive
  // sibling already holds.
  bool held_by_sibling(int g, int d) const {
    const Group& group = groups_[static_cast<std::size_t>(g)];
    if (!group.exclusive || group.required < 0) return false;
    const int mine = required_domain(d, group.required);
    for (int s : groups_[static_cast<std::size_t>(group.parent)].children) {
      const Group& sibling = groups_[static_cast<std::size_t>(s)];
      const int at = anchor_[static_cast<std::size_t>(s)];
      if (s == g || !sibling.exclusive || at < 0 || sibling.required != group.required) continue;
      if (required_domain(at, group.required) == mine) return true;
    }
    return false;
  }

  std::string group_label(int g) const {
    return g == 0 ? "job " + job_.name : "sub-group " + groups_[static_cast<std::size_t>(g)].name;
  }

  // Whether node `n` already holds an exclusive sibling of node-level group g.
  bool node_held_by_sibling(int g, int n) const {
    const Group& group = groups_[static_cast<std::size_t>(g)];
    if (!group.exclusive) return false;
    for (int s : groups_[static_cast<std::size_t>(group.parent)].children) {
      const Group& sibling = groups_[static_cast<std::size_t>(s)];
      if (s != g && sibling.exclusive && sibling.required == 0 && node_of_[static_cast<std::size_t>(s)] == n)
        return true;
    }
    return false;
  }

  bool node_has_room(const ResourceAmounts& request, int n) const {
    for (const auto& [r, amount] : request) {
      if (amount <= 0) continue;
      const int id = index_.resource_id(r);
      if (id < 0 || index_.node_allocatable(n, id) - index_.node_used(n, id) < amount) return false;
    }
    return true;
  }

  // A group whose required level is the node itself (tier 0: a per-node label such as
  // kubernetes.io/hostname, label_levels.h): all its pods and sub-groups on one node, tried in the
  // packing order of the domains that hold the nodes, then by name; an exclusive group takes a node
  // no exclusive sibling holds.
  std::expected<bool, Error> place_group_on_node(int g, int scope, const ResourceAmounts& request) {
    const Group& group = groups_[static_cast<std::size_t>(g)];
    std::vector<int> nodes;
    const int own = node_of_[static_cast<std::size_t>(g)];
    if (pin_ >= 0) {
      if (!node_held_by_sibling(g, pin_)) nodes.push_back(pin_);  // an ancestor holds one node already
    } else if (own >= 0) {
      if (inside(index_.node(own).domain, scope)) nodes.push_back(own);
    } else {
      for (int d : packing_order(scope, 0, index_.domain(index_.root()).tier, request))
        for (int n : index_.domain(d).nodes)
          if (!node_held_by_sibling(g, n) && node_has_room(request, n)) nodes.push_back(n);
    }
    const std::vector<int> order = child_order(group);
    for (int n : nodes) {
      const std::size_t mark = pieces_.size();
      const std::vector<int> anchors = anchor_;
      const std::vector<int> node_anchors = node_of_;
      const int outer_pin = pin_;
      pin_ = n;
      const int d = index_.node(n).domain;
      bool ok = true;
      for (std::size_t i = 0; ok && i < group.pod_sets.size(); ++i) {
        auto placed = place_pod_set(group.pod_sets[i], d, {});
        if (!placed) {
          pin_ = outer_pin;
          return std::unexpected(placed.error());
        }
        ok = *placed;
      }
      for (std::size_t i = 0; ok && i < order.size(); ++i) {
        auto placed = place_group(order[i], d, {});
        if (!placed) {
          pin_ = outer_pin;
          return std::unexpected(placed.error());
        }
        ok = *placed;
      }
      pin_ = outer_pin;
      if (ok) {
        if (anchor_[static_cast<std::size_t>(g)] < 0) anchor_[static_cast<std::size_t>(g)] = d;
        node_of_[static_cast<std::size_t>(g)] = n;
        return true;
      }
      rollback(mark);
      anchor_ = anchors;
      node_of_ = node_anchors;
    }
    bool siblings_hold = false;
    for (int s : groups_[static_cast<std::size_t>(std::max(group.parent, 0))].children) {
      siblings_hold |= group.exclusive && s != g && groups_[static_cast<std::size_t>(s)].exclusive &&
                       node_of_[static_cast<std::size_t>(s)] >= 0;
    }
    reason_ = group_label(g) + ": no node (level " + group.required_name + ") holds its " +
              std::to_string(request.at("pods")) + (request.at("pods") == 1 ? " pod" : " pods");
    if (siblings_hold) reason_ += " apart from those its exclusive siblings hold (one group per node)";
    return false;
  }

  std::expected<bool, Error> place_group(int g, int scope, const std::vector<int>& inherited_fill) {
    const Group& group = groups_[static_cast<std::size_t>(g)];
    ResourceAmounts request;
    add_request(g, request);
    if (request["pods"] == 0) return true;
    if (group.required == 0) return place_group_on_node(g, scope, request);
    std::vector<int> candidates;
    const bool constrained = group.required >= 0 || group.preferred >= 0;
    int search = scope;
    if (anchor_[static_cast<std::size_t>(g)] >= 0 && group.required >= 0) {
      // Pods of this group already placed: the rest stays in the same required-level domain.
      int a = anchor_[static_cast<std::size_t>(g)];
      while (index_.domain(a).parent >= 0 && index_.domain(index_.domain(a).parent).tier <= group.required)
        a = index_.domain(a).parent;
      if (inside(a, scope)) search = a;
    }
    if (!constrained) {
      candidates.push_back(search);
    } else {
      const int lo = group.preferred >= 0 ? group.preferred : group.required;
      const int hi = group.required >= 0 ? group.required : index_.domain(index_.root()).tier;
      if (index_.domain(search).tier < lo) {
        candidates.push_back(search);  // the parent's domain is already tighter than this group asks
      } else {
        // With sub-groups that may be left out, a domain is skipped only when what the gang cannot do
        // without is more than its free resources.
        ResourceAmounts needed;
        for (int p : group.pod_sets) {
          const std::int64_t n = counts_[static_cast<std::size_t>(p)];
          for (const auto& [r, v] : job_.pod_sets[static_cast<std::size_t>(p)].per_pod) needed[r] += v * n;
        }
        for (int c : group.children)
          if (!optional(c)) add_request(c, needed);
        for (int d : packing_order(search, lo, hi, request))
          if (ratio(needed, d) <= 1.0 && !held_by_sibling(g, d)) candidates.push_back(d);
      }
    }
    const std::vector<int> order = child_order(group);
    for (int d : candidates) {
      const std::size_t mark = pieces_.size();
      const std::vector<int> anchors = anchor_;
      std::vector<int> fill;
      if (group.preferred >= 0 && index_.domain(d).tier > group.preferred) {
        fill = packing_order(d, group.preferred, group.preferred, request);
        std::reverse(fill.begin(), fill.end());
      } else if (!constrained) {
        for (int f : inherited_fill)
          if (inside(f, d)) fill.push_back(f);
      }
      bool ok = true;
      for (int p : group.pod_sets) {
        auto placed = place_pod_set(p, d, fill);
        if (!placed) return std::unexpected(placed.error());
        if (!*placed) {
          ok = false;
          break;
        }
      }
      std::vector<int> left_out;
      std::map<std::string, std::int32_t> fits;
      std::int64_t pods = 0;
      for (int p : group.pod_sets) pods += counts_[static_cast<std::size_t>(p)];
      for (std::size_t i = 0; ok && i < order.size(); ++i) {
        const int c = order[i];
        auto placed = place_group(c, d, fill);
        if (!placed) return std::unexpected(placed.error());
        if (*placed) {
          pods += pods_of(c);
          if (optional(c)) ++fits[groups_[static_cast<std::size_t>(c)].policy];
        } else if (optional(c)) {
          left_out.push_back(c);
        } else {
          ok = false;
        }
      }
      if (ok && quorum_ && g == 0) {
        if (std::string short_of = quorum_short(fits, pods); !short_of.empty()) {
          ok = false;
          std::int32_t total_fits = 0;
          for (const auto& [unused, n] : fits) total_fits += n;
          if (quorum_reason_.empty() || total_fits > quorum_best_) {
            quorum_best_ = total_fits;
            quorum_reason_ = group_label(g) + ": " + short_of;
            if (!left_out.empty()) quorum_reason_ += " (" + reason_ + ")";
          }
        }
      }
      if (ok && !left_out.empty()) {
        // The gang has started: the rest goes where it fits under the job's own constraint, as Volcano
        // places a ready job's remaining sub-jobs in later rounds inside its allowed tier.
        int wide = index_.root();
        if (group.required >= 0) {
          wide = d;
          while (index_.domain(wide).parent >= 0 &&
                 index_.domain(index_.domain(wide).parent).tier <= group.required)
            wide = index_.domain(wide).parent;
        }
        std::vector<int> still;
        for (int c : left_out) {
          bool placed_wide = false;
          if (wide != d) {
            auto placed = place_group(c, wide, {});
            if (!placed) return std::unexpected(placed.error());
            placed_wide = *placed;
          }
          if (!placed_wide) {
            still.push_back(c);
            left_reason_[c] = reason_;
          }
        }
        left_out_ = std::move(still);
      }
      if (ok) {
        if (anchor_[static_cast<std::size_t>(g)] < 0) anchor_[static_cast<std::size_t>(g)] = d;
        return true;
      }
      rollback(mark);
      anchor_ = anchors;
    }
    if (reason_.empty() || candidates.empty()) {
      std::string level = group.required_name.empty() ? std::string("the cluster") : group.required_name;
      reason_ = group_label(g) + ": no domain at " + level + " holds its " + std::to_string(request["pods"]) +
                (request["pods"] == 1 ? " pod" : " pods");
      bool siblings_hold = false;
      for (int s : groups_[static_cast<std::size_t>(std::max(group.parent, 0))].children) {
        siblings_hold |= group.exclusive && s != g && groups_[static_cast<std::size_t>(s)].exclusive &&
                         anchor_[static_cast<std::size_t>(s)] >= 0;
      }
      if (siblings_hold) reason_ += " apart from those its exclusive siblings hold (one group per domain)";
      if (candidates.empty())
        reason_ += siblings_hold ? " (no other domain has the free resources)"
                                 : " (no domain has the free resources)";
    }
    return false;
  }

  // Places `n` pods of pod set p inside `domain`, packed by the engine.
  std::expected<bool, Error> try_place(int p, std::int64_t n, int domain) {
    PodSetRequest ps = job_.pod_sets[static_cast<std::size_t>(p)];
    ps.count = static_cast<std::int32_t>(n);
    ps.min_count = 0;
    ps.mode = TopologyMode::kUnconstrained;
    ps.level.clear();
    ps.group.reset();
    ps.sub_group.clear();
    if (pin_ >= 0) {
      // Only the node the enclosing node-level group holds: metadata.name In [it], with every
      // required term of the pod's own node affinity.
      const NodeSelectorRequirement only{"metadata.name", "In", {index_.node(pin_).spec.name}};
      if (!ps.affinity.has_required) {
        ps.affinity.has_required = true;
        ps.affinity.required = {NodeSelectorTerm{.match_expressions = {}, .match_fields = {only}}};
      } else {
        for (auto& term : ps.affinity.required) term.match_fields.push_back(only);
      }
    }
    JobRequest one;
    one.name = job_.name;
    one.pod_sets.push_back(std::move(ps));
    auto placed = engine_.place_within(one, domain);
    if (!placed) return std::unexpected(placed.error());
    if (!placed->fit) {
      last_pod_set_reason_ = placed->reason;
      return false;
    }
    pieces_.push_back({p, std::move(one), std::move(*placed)});
    return true;
  }

  std::expected<bool, Error> place_pod_set(int p, int domain, const std::vector<int>& fill) {
    std::int64_t remaining = counts_[static_cast<std::size_t>(p)];
    if (remaining == 0) return true;
    const std::size_t mark = pieces_.size();
    for (int f : fill) {
      if (remaining == 0) break;
      // The most pods of the rest that this domain holds (a binary search over tries).
      std::int64_t lo = 0, hi = remaining;
      while (lo < hi) {
        const std::int64_t mid = (lo + hi + 1) / 2;
        auto ok = try_place(p, mid, f);
        if (!ok) return std::unexpected(ok.error());
        if (*ok) {
          rollback(pieces_.size() - 1);
          lo = mid;
        } else {
          hi = mid - 1;
        }
      }
      if (lo == 0) continue;
      auto ok = try_place(p, lo, f);
      if (!ok) return std::unexpected(ok.error());
      if (!*ok) break;
      remaining -= lo;
    }
    if (remaining > 0) {
      auto ok = try_place(p, remaining, domain);
      if (!ok) return std::unexpected(ok.error());
      if (!*ok) {
        rollback(mark);
        const auto& ps = job_.pod_sets[static_cast<std::size_t>(p)];
        reason_ = "pod set " + ps.name + ": " + last_pod_set_reason_;
        return false;
      }
    }
    return true;
  }

  void rollback(std::size_t mark) {
    while (pieces_.size() > mark) {
      engine_.release(pieces_.back().request, pieces_.back().placed);
      pieces_.pop_back();
    }
  }

  std::expected<JobPlacement, Error> rollback_error(const Error& e) {
    rollback(0);
    return std::unexpected(e);
  }

  JobPlacement failed() {
    rollback(0);
    JobPlacement out;
    out.reason = reason_.empty() ? "job " + job_.name + " does not fit" : reason_;
    for (const auto& ps : job_.pod_sets) {
      PodSetPlacement p;
      p.name = ps.name;
      p.reason = out.reason;
      out.pod_sets.push_back(std::move(p));
    }
    return out;
  }

  JobPlacement result(const std::string& partial) const {
    JobPlacement out;
    out.fit = true;
    out.reason = partial;
    for (std::size_t p = 0; p < job_.pod_sets.size(); ++p) {
      PodSetPlacement ps;
      ps.name = job_.pod_sets[p].name;
      ps.fit = true;
      ps.reason = partial;
      int g = 0;
      for (std::size_t i = 0; i < groups_.size(); ++i) {
        const auto& sets = groups_[i].pod_sets;
        if (std::find(sets.begin(), sets.end(), static_cast<int>(p)) != sets.end()) g = static_cast<int>(i);
      }
      // The domain of the nearest group with a level of its own.
      int holder = g;
      while (holder > 0 && groups_[static_cast<std::size_t>(holder)].required < 0 &&
             groups_[static_cast<std::size_t>(holder)].preferred < 0)
        holder = groups_[static_cast<std::size_t>(holder)].parent;
      if (auto it = std::find(left_out_.begin(), left_out_.end(), g); it != left_out_.end()) {
        ps.reason = group_label(g) + " does not fit now: " + left_reason_.at(g);
      }
      const int d = anchor_[static_cast<std::size_t>(holder)];
      if (const int n = node_of_[static_cast<std::size_t>(holder)]; n >= 0) {
        ps.tier = 0;
        ps.domains = {index_.node(n).spec.name};
      } else if (d >= 0) {
        ps.tier = index_.domain(d).tier;
        ps.domains = {index_.domain(d).name};
      }
      std::int32_t rank = 0;
      for (const auto& piece : pieces_) {
        if (piece.pod_set != static_cast<int>(p)) continue;
        for (const auto& set : piece.placed.pod_sets) {
          for (auto a : set.assignment) {
            a.first_rank = rank;
            rank += a.count;
            ps.assignment.push_back(std::move(a));
          }
        }
      }
      ps.placed = rank;
      out.pod_sets.push_back(std::move(ps));
    }
    return out;
  }

  PlacementEngine& engine_;
  TopologyIndex& index_;
  const JobRequest& job_;
  std::vector<Group> groups_;
  std::vector<std::int64_t> counts_;  // pods of each pod set to place in this phase
  std::vector<int> anchor_;           // each group's domain once chosen
  std::vector<int> node_of_;          // a node-level group's node once chosen, else -1
  int pin_ = -1;                      // while placing inside a node-level group: its node
  std::vector<Piece> pieces_;
  std::string reason_;
  std::string last_pod_set_reason_;
  // Volcano's minSubGroups (phase one only): whether sub-groups may be left out, the closest miss
  // (most sub-groups fitting) for the no-fit message, and what the chosen domain left out.
  bool quorum_ = false;
  std::string quorum_reason_;
  std::int32_t quorum_best_ = 0;
  std::vector<int> left_out_;
  std::map<int, std::string> left_reason_;
};

}  // namespace

std::expected<JobPlacement, Error> place_sub_groups(PlacementEngine& engine, TopologyIndex& index,
                                                    const JobRequest& job) {
  for (const auto& ps : job.pod_sets) {
    if (ps.count <= 0)
      return fail(ErrorCode::kInvalidArgument,
                  "job " + job.name + ": pod set " + ps.name + ": count must be positive");
  }
  SubGroupPlacer placer(engine, index, job);
  return placer.run();
}

}  // namespace hypertopo::scheduler
