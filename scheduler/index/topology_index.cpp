#include "scheduler/index/topology_index.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <utility>

#include "text/user_pattern.h"

namespace hypertopo::scheduler {

bool Toleration::tolerates(const NodeTaint& taint) const {
  // Kubernetes' rule: an empty key with Exists tolerates every taint; Equal (or no operator)
  // compares values.
  if (!effect.empty() && effect != taint.effect) return false;
  if (!key.empty() && key != taint.key) return false;
  if (op == "Exists") return true;
  return value == taint.value;
}

bool MemberSelector::matches_labels(const std::map<std::string, std::string>& labels) const {
  for (const auto& [k, v] : match_labels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  for (const auto& req : match_expressions) {
    auto it = labels.find(req.key);
    bool has = it != labels.end();
    bool in = has && std::find(req.values.begin(), req.values.end(), it->second) != req.values.end();
    if (req.op == "In" && !in) return false;
    if (req.op == "NotIn" && in) return false;
    if (req.op == "Exists" && !has) return false;
    if (req.op == "DoesNotExist" && has) return false;
  }
  return true;
}

namespace {

// How deep HyperNodes may nest through members of type HyperNode (a HyperNode with no parent is
// at depth 1). The engine walks a domain's subtree recursively; real fabrics nest a handful of
// tiers, and without a bound a chain of user objects would set how deep that recursion goes.
constexpr std::size_t kMaxHyperNodeDepth = 64;
// The levels a Topology may list: Kueue's and KAI's Topology CRDs admit at most 16
// (kueue apis/kueue/v1beta1/topology_types.go, kai-scheduler pkg/apis/kai/v1alpha1/topology_types.go:
// TopologySpec.Levels MaxItems=16); each level is one more step of every walk down the tree.
constexpr std::size_t kMaxTopologyLevels = 16;

// The HyperNode that sits deepest (by parent links, which strictly climb in tier, so they hold no
// cycle) when it is deeper than kMaxHyperNodeDepth, and its depth. Each domain's depth is found
// once, from its parent's, so a chain of any length costs one pass and no native stack.
std::pair<int, std::size_t> too_deep(const std::vector<IndexDomain>& domains) {
  std::vector<std::size_t> depth(domains.size(), 0);  // 0: not known yet
  std::vector<int> chain;
  std::pair<int, std::size_t> deepest{-1, 0};
  for (std::size_t d = 0; d < domains.size(); ++d) {
    chain.clear();
    std::size_t base = 0;
    for (int at = static_cast<int>(d); at >= 0 && depth[static_cast<std::size_t>(at)] == 0;
         at = domains[static_cast<std::size_t>(at)].parent) {
      chain.push_back(at);
      const int up = domains[static_cast<std::size_t>(at)].parent;
      base = up >= 0 ? depth[static_cast<std::size_t>(up)] : 0;
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      depth[static_cast<std::size_t>(*it)] = ++base;
      if (base > deepest.second) deepest = {*it, base};
    }
  }
  return deepest.second > kMaxHyperNodeDepth ? deepest : std::pair<int, std::size_t>{-1, 0};
}

void sort_by_name(std::vector<int>& ids, const std::vector<IndexDomain>& domains) {
  std::sort(ids.begin(), ids.end(), [&](int a, int b) {
    return domains[static_cast<std::size_t>(a)].name < domains[static_cast<std::size_t>(b)].name;
  });
}

}  // namespace

void TopologyIndex::finish(std::vector<NodeSpec> nodes) {
  // Node ids follow name order so that "tree order" inside a domain is name order.
  for (auto& d : shape_->domains) {
    sort_by_name(d.children, shape_->domains);
    std::sort(d.nodes.begin(), d.nodes.end());
  }
  std::vector<std::string> names;
  for (const auto& n : nodes) {
    for (const auto& [r, v] : n.allocatable) names.push_back(r);
  }
  names.push_back("pods");
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  shape_->resource_names = names;
  for (std::size_t i = 0; i < names.size(); ++i) shape_->resource_by_name[names[i]] = static_cast<int>(i);
  const std::size_t r = names.size();
  shape_->alloc.assign(shape_->nodes.size() * r, 0);
  used_.assign(shape_->nodes.size() * r, 0);
  shape_->domain_alloc.assign(shape_->domains.size() * r, 0);
  domain_used_.assign(shape_->domains.size() * r, 0);
  for (std::size_t n = 0; n < shape_->nodes.size(); ++n) {
    shape_->nodes[n].spec = std::move(nodes[n]);
    for (const auto& [res, v] : shape_->nodes[n].spec.allocatable) {
      int id = shape_->resource_by_name[res];
      shape_->alloc[slot(static_cast<int>(n), id)] = v;
      for (int d = shape_->nodes[n].domain; d >= 0; d = shape_->domains[static_cast<std::size_t>(d)].parent) {
        shape_->domain_alloc[dslot(d, id)] += v;
      }
    }
  }
  int lowest = shape_->domains[static_cast<std::size_t>(shape_->root)].tier;
  for (const IndexDomain& d : shape_->domains) lowest = std::min(lowest, d.tier);
  shape_->lowest_tier = lowest;
  shape_->tier_span = shape_->domains[static_cast<std::size_t>(shape_->root)].tier - lowest + 1;
  const auto span = static_cast<std::size_t>(shape_->tier_span);
  shape_->tier_domains.assign(shape_->nodes.size() * span, -1);
  for (std::size_t n = 0; n < shape_->nodes.size(); ++n) {
    // Lowest first: of two domains on one tier, the higher one is written last.
    for (int d = shape_->nodes[n].domain; d >= 0; d = shape_->domains[static_cast<std::size_t>(d)].parent) {
      const int tier = shape_->domains[static_cast<std::size_t>(d)].tier;
      shape_->tier_domains[n * span + static_cast<std::size_t>(tier - lowest)] = d;
    }
  }
}

std::expected<void, Error> TopologyIndex::apply_pods(const std::vector<BoundPod>& pods) {
  for (const auto& pod : pods) {
    int node = find_node(pod.node);
    if (node < 0) continue;  // bound to a node outside this topology: it takes nothing from it
    auto ok = add_pods(node, pod.requests, 1);
    if (!ok) return std::unexpected(ok.error().context("while counting pod " + pod.name));
  }
  return {};
}

std::expected<TopologyIndex, Error> TopologyIndex::from_hypernodes(
    const std::vector<HyperNodeSpec>& hypernodes, std::vector<NodeSpec> nodes,
    const std::vector<BoundPod>& pods) {
  std::vector<const HyperNodeSpec*> refs;
  refs.reserve(hypernodes.size());
  for (const auto& hn : hypernodes) refs.push_back(&hn);
  return from_hypernodes(std::span<const HyperNodeSpec* const>(refs), std::move(nodes), pods);
}

std::expected<TopologyIndex, Error> TopologyIndex::from_hypernodes(
    std::span<const HyperNodeSpec* const> hypernodes, std::vector<NodeSpec> nodes,
    const std::vector<BoundPod>& pods) {
  TopologyIndex index;
  std::sort(nodes.begin(), nodes.end(), [](const NodeSpec& a, const NodeSpec& b) { return a.name < b.name; });
  if (auto named = index.name_nodes(nodes); !named) return std::unexpected(named.error());
  index.shape_->domain_by_name.reserve(hypernodes.size());
  index.shape_->nodes.resize(nodes.size());
  index.shape_->domains.reserve(hypernodes.size() + 1);  // and the root: no domain moves as they come
  for (const HyperNodeSpec* spec : hypernodes) {
    const HyperNodeSpec& hn = *spec;
    if (hn.tier < 1) {
      return fail(ErrorCode::kInvalidArgument,
                  "HyperNode " + hn.name + ": spec.tier " + std::to_string(hn.tier) + " must be at least 1");
    }
    // The cluster is the root, one tier above the highest HyperNode: an int tier has no room above
    // INT_MAX, and wrapping would put the root below every domain.
    if (hn.tier == std::numeric_limits<int>::max()) {
      return fail(ErrorCode::kInvalidArgument,
                  "HyperNode " + hn.name + ": spec.tier " + std::to_string(hn.tier) +
                      " leaves no tier above it for the cluster; the highest is " +
                      std::to_string(std::numeric_limits<int>::max() - 1));
    }
    IndexDomain d;
    d.name = hn.name;
    d.tier = hn.tier;
    d.tier_name = hn.tier_name;
    d.health = hn.health;
    int id = static_cast<int>(index.shape_->domains.size());
    if (!index.shape_->domain_by_name.emplace(hn.name, id).second) {
      return fail(ErrorCode::kInvalidArgument, "HyperNode " + hn.name + " is listed twice");
    }
    if (!hn.tier_name.empty()) {
      auto [it, inserted] = index.shape_->tier_by_name.emplace(hn.tier_name, hn.tier);
      if (!inserted && it->second != hn.tier) {
        return fail(ErrorCode::kInvalidArgument, "HyperNode " + hn.name + ": tierName " + hn.tier_name +
                                                     " is used for tiers " + std::to_string(it->second) +
                                                     " and " + std::to_string(hn.tier));
      }
    }
    index.shape_->max_tier = std::max(index.shape_->max_tier, hn.tier);
    index.shape_->domains.push_back(std::move(d));
  }
  auto set_parent = [&](int child, int parent) -> std::expected<void, Error> {
    auto& c = index.shape_->domains[static_cast<std::size_t>(child)];
    const auto& p = index.shape_->domains[static_cast<std::size_t>(parent)];
    if (c.tier >= p.tier) {
      return fail(ErrorCode::kInvalidArgument,
                  "HyperNode " + p.name + " (tier " + std::to_string(p.tier) + ") lists HyperNode " + c.name +
                      " of tier " + std::to_string(c.tier) + "; a member must be of a lower tier");
    }
    if (c.parent >= 0 && c.parent != parent) {
      return fail(ErrorCode::kInvalidArgument,
                  "HyperNode " + c.name + " is a member of both " +
                      index.shape_->domains[static_cast<std::size_t>(c.parent)].name + " and " + p.name);
    }
    c.parent = parent;
    return {};
  };
  auto add_node = [&](int node, int domain) -> std::expected<void, Error> {
    auto& current = index.shape_->nodes[static_cast<std::size_t>(node)].domain;
    if (current == domain) return {};
    if (current >= 0) {
      const auto& a = index.shape_->domains[static_cast<std::size_t>(current)];
      const auto& b = index.shape_->domains[static_cast<std::size_t>(domain)];
      if (a.tier == b.tier) {
        return fail(ErrorCode::kInvalidArgument, "node " + nodes[static_cast<std::size_t>(node)].name +
                                                     " is a member of HyperNodes " + a.name + " and " +
                                                     b.name + " of the same tier " + std::to_string(a.tier));
      }
      if (a.tier < b.tier) return {};  // the lowest tier holding the node wins
    }
    current = domain;
    return {};
  };
  for (std::size_t h = 0; h < hypernodes.size(); ++h) {
    const HyperNodeSpec& hn = *hypernodes[h];
    const int id = static_cast<int>(h);
    for (std::size_t m = 0; m < hn.members.size(); ++m) {
      const auto& member = hn.members[m];
      // Only an error names its place: most HyperNodes have none.
      auto where = [&] { return "HyperNode " + hn.name + " members[" + std::to_string(m) + "]"; };
      const auto& sel = member.selector;
      if (member.type == HyperNodeMember::Type::kHyperNode) {
        if (sel.kind == MemberSelector::Kind::kExact) {
          int child = index.find_domain(sel.exact_name);
          if (child < 0) {
            return fail(ErrorCode::kInvalidArgument,
                        where() + ": HyperNode " + sel.exact_name + " does not exist");
          }
          if (auto ok = set_parent(child, id); !ok) return std::unexpected(ok.error());
        } else if (sel.kind == MemberSelector::Kind::kRegex) {
          // Volcano matches regexMatch with Go's regexp.MatchString: RE2 syntax, unanchored unless
          // the pattern anchors; UserPattern::matches_part is that match.
          auto re = text::UserPattern::compile(sel.regex_pattern);
          if (!re) {
            return fail(ErrorCode::kInvalidArgument,
                        where() + ": invalid regexMatch pattern " + sel.regex_pattern + ": " + re.error());
          }
          for (std::size_t c = 0; c < hypernodes.size(); ++c) {
            if (c != h && re->matches_part(hypernodes[c]->name)) {
              if (auto ok = set_parent(static_cast<int>(c), id); !ok) return std::unexpected(ok.error());
            }
          }
        } else {
          return fail(ErrorCode::kInvalidArgument, where() + ": labelMatch is only valid for Node members");
        }
        continue;
      }
      if (sel.kind == MemberSelector::Kind::kExact) {
        int node = index.find_node(sel.exact_name);
        if (node < 0) continue;  // a member not (yet) in the node list holds nothing
        if (auto ok = add_node(node, id); !ok) return std::unexpected(ok.error());
      } else if (sel.kind == MemberSelector::Kind::kRegex) {
        auto re = text::UserPattern::compile(sel.regex_pattern);
        if (!re) {
          return fail(ErrorCode::kInvalidArgument,
                      where() + ": invalid regexMatch pattern " + sel.regex_pattern + ": " + re.error());
        }
        for (std::size_t n = 0; n < nodes.size(); ++n) {
          if (re->matches_part(nodes[n].name)) {
            if (auto ok = add_node(static_cast<int>(n), id); !ok) return std::unexpected(ok.error());
          }
        }
      } else {
        for (std::size_t n = 0; n < nodes.size(); ++n) {
          if (sel.matches_labels(nodes[n].labels)) {
            if (auto ok = add_node(static_cast<int>(n), id); !ok) return std::unexpected(ok.error());
          }
        }
      }
    }
  }
  if (auto [deep, depth] = too_deep(index.shape_->domains); deep >= 0) {
    return fail(ErrorCode::kInvalidArgument,
                "HyperNode " + index.shape_->domains[static_cast<std::size_t>(deep)].name + " is nested " +
                    std::to_string(depth) +
                    " HyperNodes deep (members of type HyperNode); HyperNodes nest at most " +
                    std::to_string(kMaxHyperNodeDepth) + " deep");
  }
  IndexDomain root;
  root.name = "cluster";
  root.tier = index.shape_->max_tier + 1;
  index.shape_->root = static_cast<int>(index.shape_->domains.size());
  index.shape_->domains.push_back(std::move(root));
  for (int d = 0; d < index.shape_->root; ++d) {
    auto& dom = index.shape_->domains[static_cast<std::size_t>(d)];
    if (dom.parent < 0) dom.parent = index.shape_->root;
    index.shape_->domains[static_cast<std::size_t>(dom.parent)].children.push_back(d);
  }
  for (std::size_t n = 0; n < index.shape_->nodes.size(); ++n) {
    auto& node = index.shape_->nodes[n];
    if (node.domain < 0) node.domain = index.shape_->root;
    index.shape_->domains[static_cast<std::size_t>(node.domain)].nodes.push_back(static_cast<int>(n));
  }
  // A name in degraded-members counts only for a node the HyperNode actually holds.
  for (int d = 0; d < index.shape_->root; ++d) {
    for (const auto& name : index.shape_->domains[static_cast<std::size_t>(d)].health.degraded_members) {
      const int n = index.find_node(name);
      if (n < 0) continue;
      for (int up = index.shape_->nodes[static_cast<std::size_t>(n)].domain; up >= 0;
           up = index.shape_->domains[static_cast<std::size_t>(up)].parent) {
        if (up == d) {
          index.shape_->nodes[static_cast<std::size_t>(n)].link_degraded = true;
          break;
        }
      }
    }
  }
  index.finish(std::move(nodes));
  if (auto ok = index.apply_pods(pods); !ok) return std::unexpected(ok.error());
  return index;
}

std::expected<TopologyIndex, Error> TopologyIndex::from_levels(const LevelTopologySpec& topology,
                                                               std::vector<NodeSpec> nodes,
                                                               const std::vector<BoundPod>& pods) {
  if (topology.levels.empty()) {
    return fail(ErrorCode::kInvalidArgument, "Topology " + topology.name + " has no levels");
  }
  TopologyIndex index;
  if (topology.levels.size() > kMaxTopologyLevels) {
    return fail(ErrorCode::kInvalidArgument, "Topology " + topology.name + " has " +
                                                 std::to_string(topology.levels.size()) +
                                                 " levels; at most " + std::to_string(kMaxTopologyLevels) +
                                                 " are read (the Topology CRD's own limit)");
  }
  const auto& levels = topology.levels;
  const bool host_last = levels.back() == kHostnameLabel;
  const std::size_t domain_levels = host_last ? levels.size() - 1 : levels.size();
  index.shape_->max_tier = static_cast<int>(domain_levels);
  for (std::size_t i = 0; i < levels.size(); ++i) {
    int tier = static_cast<int>(levels.size() - i) - (host_last ? 1 : 0);
    if (!index.shape_->tier_by_name.emplace(levels[i], tier).second) {
      return fail(ErrorCode::kInvalidArgument,
                  "Topology " + topology.name + " lists level " + levels[i] + " twice");
    }
  }
  std::sort(nodes.begin(), nodes.end(), [](const NodeSpec& a, const NodeSpec& b) { return a.name < b.name; });
  if (auto named = index.name_nodes(nodes); !named) return std::unexpected(named.error());
  index.shape_->nodes.resize(nodes.size());
  IndexDomain root;
  root.name = "cluster";
  root.tier = index.shape_->max_tier + 1;
  index.shape_->domains.push_back(std::move(root));
  index.shape_->root = 0;
  std::unordered_map<std::string, int> by_path;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    int parent = index.shape_->root;
    std::string key;
    std::string name;
    bool complete = true;
    for (std::size_t i = 0; i < levels.size(); ++i) {
      if (!nodes[n].labels.contains(levels[i])) complete = false;
    }
    if (complete) {
      for (std::size_t i = 0; i < domain_levels; ++i) {
        const std::string& value = nodes[n].labels.at(levels[i]);
        key += value;
        key += '\x1f';
        name += (i == 0 ? "" : "/") + value;
        auto [it, inserted] = by_path.emplace(key, static_cast<int>(index.shape_->domains.size()));
        if (inserted) {
          IndexDomain d;
          d.name = name;
          d.tier = static_cast<int>(domain_levels - i);
          d.tier_name = levels[i];
          d.parent = parent;
          index.shape_->domains[static_cast<std::size_t>(parent)].children.push_back(it->second);
          index.shape_->domain_by_name.emplace(name, it->second);
          index.shape_->domains.push_back(std::move(d));
        }
        parent = it->second;
      }
    }
    index.shape_->nodes[n].domain = parent;
    index.shape_->domains[static_cast<std::size_t>(parent)].nodes.push_back(static_cast<int>(n));
  }
  index.finish(std::move(nodes));
  if (auto ok = index.apply_pods(pods); !ok) return std::unexpected(ok.error());
  return index;
}

int TopologyIndex::find_domain(std::string_view name) const {
  auto it = shape_->domain_by_name.find(name);
  return it == shape_->domain_by_name.end() ? -1 : it->second;
}

namespace {

std::size_t node_name_hash(std::string_view name) { return std::hash<std::string_view>{}(name); }
// A slot holds the hash's high half above the id + 1 (0: empty).
std::uint64_t node_name_slot(std::size_t hash, int id) {
  return (static_cast<std::uint64_t>(hash) & 0xffffffff00000000ULL) | static_cast<std::uint32_t>(id + 1);
}

}  // namespace

std::expected<void, Error> TopologyIndex::name_nodes(const std::vector<NodeSpec>& nodes) {
  NodeNames& names = shape_->node_names;
  std::size_t size = 16;
  while (size < 2 * nodes.size()) size *= 2;
  names.slots.assign(size, 0);
  names.ends.clear();
  names.ends.reserve(nodes.size());
  names.text.clear();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    // Sorted by name: a name listed twice sits next to itself.
    if (i > 0 && nodes[i].name == nodes[i - 1].name)
      return fail(ErrorCode::kInvalidArgument, "node " + nodes[i].name + " is listed twice");
    names.text += nodes[i].name;
    names.ends.push_back(static_cast<std::uint32_t>(names.text.size()));
    const std::size_t hash = node_name_hash(nodes[i].name);
    std::size_t at = hash & (size - 1);
    while (names.slots[at] != 0) at = (at + 1) & (size - 1);
    names.slots[at] = node_name_slot(hash, static_cast<int>(i));
  }
  return {};
}

int TopologyIndex::NodeNames::find(std::string_view name) const {
  if (slots.empty()) return -1;
  const std::size_t hash = node_name_hash(name);
  const std::uint64_t high = static_cast<std::uint64_t>(hash) & 0xffffffff00000000ULL;
  const std::size_t mask = slots.size() - 1;
  for (std::size_t at = hash & mask;; at = (at + 1) & mask) {
    const std::uint64_t slot = slots[at];
    if (slot == 0) return -1;
    if ((slot & 0xffffffff00000000ULL) != high) continue;
    const auto id = static_cast<std::size_t>(static_cast<std::uint32_t>(slot) - 1);
    const std::uint32_t begin = id == 0 ? 0 : ends[id - 1];
    if (std::string_view(text).substr(begin, ends[id] - begin) == name) return static_cast<int>(id);
  }
}

std::vector<std::string> TopologyIndex::domain_path(int id) const {
  std::vector<std::string> path;
  for (int d = id; d >= 0 && d != shape_->root; d = shape_->domains[static_cast<std::size_t>(d)].parent) {
    path.push_back(shape_->domains[static_cast<std::size_t>(d)].name);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::expected<int, Error> TopologyIndex::resolve_tier(std::string_view level) const {
  // 64 bits: the cluster's tier is shape_->max_tier + 1, and "99999999999" is a number out of range, not a
  // level name.
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(level.data(), level.data() + level.size(), value);
  if ((ec == std::errc() || ec == std::errc::result_out_of_range) && ptr == level.data() + level.size()) {
    const std::int64_t highest = static_cast<std::int64_t>(shape_->max_tier) + 1;
    if (ec != std::errc() || value < 0 || value > highest) {
      return fail(ErrorCode::kInvalidArgument, "tier " + std::string(level) + " is outside 0.." +
                                                   std::to_string(highest) + " of this topology");
    }
    return static_cast<int>(value);
  }
  auto it = shape_->tier_by_name.find(level);
  if (it != shape_->tier_by_name.end()) return it->second;
  std::vector<std::string> known;
  for (const auto& [k, v] : shape_->tier_by_name) known.push_back(k);
  std::sort(known.begin(), known.end());
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  return fail(ErrorCode::kInvalidArgument, "unknown tier or level '" + std::string(level) + "' (known: " +
                                               (list.empty() ? "tier numbers only" : list) + ")");
}

std::optional<int> TopologyIndex::tier_of_label(std::string_view key) const {
  const std::string k(key);
  // Per domain: the one value its nodes carry, "" when they disagree or one lacks the label.
  std::vector<std::optional<std::string>> value(shape_->domains.size());
  std::vector<bool> uniform(shape_->domains.size(), true);
  for (const auto& node : shape_->nodes) {
    auto it = node.spec.labels.find(k);
    for (int d = node.domain; d >= 0; d = shape_->domains[static_cast<std::size_t>(d)].parent) {
      const auto i = static_cast<std::size_t>(d);
      if (!uniform[i]) continue;
      if (it == node.spec.labels.end()) {
        uniform[i] = false;
      } else if (!value[i]) {
        value[i] = it->second;
      } else if (*value[i] != it->second) {
        uniform[i] = false;
      }
    }
  }
  std::optional<int> widest;
  for (int t = 1; t <= shape_->max_tier; ++t) {
    bool all = true, any = false;
    for (std::size_t d = 0; d < shape_->domains.size(); ++d) {
      if (shape_->domains[d].tier != t) continue;
      any = true;
      all = all && uniform[d] && value[d].has_value();
    }
    if (!any || !all) break;
    widest = t;
  }
  return widest;
}

std::string TopologyIndex::tier_name(int tier) const {
  for (const auto& [k, v] : shape_->tier_by_name) {
    if (v == tier) return k;
  }
  return "";
}

int TopologyIndex::resource_id(std::string_view name) const {
  auto it = shape_->resource_by_name.find(name);
  return it == shape_->resource_by_name.end() ? -1 : it->second;
}

std::int64_t TopologyIndex::domain_allocatable(int domain, std::string_view resource) const {
  int r = resource_id(resource);
  return r < 0 ? 0 : domain_allocatable(domain, r);
}

std::int64_t TopologyIndex::domain_used(int domain, std::string_view resource) const {
  int r = resource_id(resource);
  return r < 0 ? 0 : domain_used(domain, r);
}

std::expected<void, Error> TopologyIndex::add_pods(int node, const ResourceAmounts& requests,
                                                   std::int64_t count) {
  if (node < 0 || static_cast<std::size_t>(node) >= shape_->nodes.size()) {
    return fail(ErrorCode::kInvalidArgument, "node id " + std::to_string(node) + " is not in the index");
  }
  auto apply = [&](int r, std::int64_t delta) {
    used_[slot(node, r)] += delta;
    for (int d = shape_->nodes[static_cast<std::size_t>(node)].domain; d >= 0;
         d = shape_->domains[static_cast<std::size_t>(d)].parent) {
      domain_used_[dslot(d, r)] += delta;
    }
  };
  for (const auto& [name, amount] : requests) {
    if (name == "pods") continue;
    int r = resource_id(name);
    if (r >= 0) apply(r, amount * count);
  }
  apply(resource_id("pods"), count);
  return {};
}

std::size_t TopologyIndex::approximate_bytes() const {
  std::size_t bytes = sizeof(*this);
  bytes += (shape_->alloc.capacity() + used_.capacity() + shape_->domain_alloc.capacity() +
            domain_used_.capacity()) *
           sizeof(std::int64_t);
  bytes += shape_->node_names.bytes() + shape_->tier_domains.capacity() * sizeof(int);
  for (const auto& d : shape_->domains) {
    bytes += sizeof(d) + d.name.capacity() + d.tier_name.capacity() + d.health.reason.capacity() +
             d.health.message.capacity() + (d.children.capacity() + d.nodes.capacity()) * sizeof(int);
  }
  for (const auto& n : shape_->nodes) {
    bytes += sizeof(n) + n.spec.name.capacity();
    for (const auto& [k, v] : n.spec.labels) bytes += 64 + k.capacity() + v.capacity();
    bytes += n.spec.allocatable.size() * 64;
  }
  return bytes;
}

}  // namespace hypertopo::scheduler
