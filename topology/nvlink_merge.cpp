#include "topology/nvlink_merge.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

namespace hypertopo::topology {
namespace {

std::string some_names(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 10;
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i) out += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kShown) out += ", and " + std::to_string(names.size() - kShown) + " more";
  return out;
}

// A Kubernetes label value: at most 63 characters of [A-Za-z0-9_.-], alphanumeric at both ends.
bool is_label_value(const std::string& v) {
  if (v.empty()) return true;
  if (v.size() > 63) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(v.front()) || !alnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// Domains from `d` up to its root, `d` first.
std::vector<DomainId> chain_of(const Tree& tree, DomainId d) {
  std::vector<DomainId> out{d};
  for (auto p = tree.domain(d).parent; p && out.size() <= tree.size(); p = tree.domain(*p).parent)
    out.push_back(*p);
  return out;
}

struct Placement {
  std::string clique;
  std::vector<std::string> nodes;  // sorted
  std::optional<DomainId> parent;  // nullopt: a root (no fabric domain holds any of its nodes)
};

// A copy of `tree` without the domains that have no members left (after their nodes moved into an
// NVLink domain higher up); ids change, names do not.
Tree without_empty_domains(const Tree& tree) {
  std::vector<char> alive(tree.size(), 0);
  // Tiers rise towards the root, so visiting by ascending tier settles children before parents.
  std::vector<DomainId> order(tree.size());
  for (DomainId i = 0; i < tree.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](DomainId a, DomainId b) { return tree.domain(a).tier < tree.domain(b).tier; });
  for (DomainId id : order) {
    const Domain& d = tree.domain(id);
    bool any = !d.nodes.empty();
    for (DomainId c : d.children) any = any || alive[c];
    alive[id] = any ? 1 : 0;
  }
  Tree out;
  out.source = tree.source;
  out.report = tree.report;
  std::vector<std::optional<DomainId>> remap(tree.size());
  for (DomainId i = 0; i < tree.size(); ++i) {
    if (!alive[i]) continue;
    const Domain& d = tree.domain(i);
    auto id = out.add_domain(d.name, d.tier, d.tier_name);
    Domain& copy = out.domain(id);
    copy.anchor = d.anchor;
    copy.nodes = d.nodes;
    copy.labels = d.labels;
    remap[i] = id;
  }
  for (DomainId i = 0; i < tree.size(); ++i) {
    if (!alive[i]) continue;
    for (DomainId c : tree.domain(i).children) {
      if (alive[c]) out.attach(*remap[i], *remap[c]);
    }
  }
  return out;
}

}  // namespace

const char* to_string(NvlinkTierPolicy policy) {
  switch (policy) {
    case NvlinkTierPolicy::kShiftEverywhere:
      return "shift-everywhere";
    case NvlinkTierPolicy::kShiftBranches:
      return "shift-branches";
  }
  return "shift-everywhere";
}

std::expected<NvlinkTierPolicy, Error> parse_nvlink_tier_policy(std::string_view text) {
  if (text == "shift-everywhere") return NvlinkTierPolicy::kShiftEverywhere;
  if (text == "shift-branches") return NvlinkTierPolicy::kShiftBranches;
  return fail(ErrorCode::kInvalidArgument, "unknown NVLink tier policy '" + std::string(text) +
                                               "' (expected shift-everywhere or shift-branches)");
}

std::string nvlink_domain_name(const std::string& clique_id) {
  const std::string part = sanitize_name(clique_id);
  return fit_member_name("nvlink-" + (part.empty() ? std::string("unnamed") : part));
}

std::expected<std::size_t, Error> merge_nvlink_domains(Tree& tree, const NvlinkMembership& membership,
                                                       const NvlinkMergeOptions& options) {
  if (!options.enabled) return std::size_t{0};
  auto& warnings = tree.report.warnings;
  warnings.insert(warnings.end(), membership.warnings.begin(), membership.warnings.end());

  std::map<std::string, std::vector<std::string>> nodes_by_clique;
  for (const auto& [node, clique] : membership.clique_by_node) {
    if (!clique.empty()) nodes_by_clique[clique].push_back(node);
  }
  if (nodes_by_clique.empty()) return std::size_t{0};

  std::unordered_map<std::string, DomainId> holder;  // node -> the domain holding it directly
  for (DomainId i = 0; i < tree.size(); ++i) {
    for (const auto& n : tree.domain(i).nodes) holder.emplace(n, i);
  }

  std::vector<Placement> placements;
  for (auto& [clique, nodes] : nodes_by_clique) {
    std::sort(nodes.begin(), nodes.end());
    std::set<DomainId> holders;
    std::vector<std::string> absent;
    for (const auto& n : nodes) {
      if (auto it = holder.find(n); it != holder.end()) {
        holders.insert(it->second);
      } else {
        absent.push_back(n);
      }
    }
    Placement p{clique, nodes, std::nullopt};
    if (!holders.empty()) {
      // The lowest common domain: the first domain on one holder's chain that every chain contains.
      const auto first = chain_of(tree, *holders.begin());
      std::vector<std::set<DomainId>> others;
      for (auto it = std::next(holders.begin()); it != holders.end(); ++it) {
        auto c = chain_of(tree, *it);
        others.emplace_back(c.begin(), c.end());
      }
      for (DomainId d : first) {
        if (std::all_of(others.begin(), others.end(), [&](const auto& s) { return s.contains(d); })) {
          p.parent = d;
          break;
        }
      }
      std::vector<std::string> holder_names;
      for (DomainId h : holders) holder_names.push_back(tree.domain(h).name);
      if (!p.parent) {
        std::set<std::string> roots;
        for (DomainId h : holders) roots.insert(tree.domain(chain_of(tree, h).back()).name);
        warnings.push_back("NVLink domain " + clique + " (" + std::to_string(nodes.size()) +
                           " nodes: " + some_names(nodes) + ") spans fabric domains that share no parent (" +
                           some_names({roots.begin(), roots.end()}) +
                           "); no NVLink HyperNode made, its nodes stay in their fabric domains (" +
                           some_names(holder_names) + ")");
        continue;
      }
      if (holders.size() > 1) {
        const Domain& at = tree.domain(*p.parent);
        warnings.push_back("NVLink domain " + clique + " spans several fabric domains (" +
                           some_names(holder_names) + "); placed under their lowest common domain " +
                           at.name + " (" + at.tier_name + ")");
      }
    }
    if (!absent.empty() && !holders.empty()) {
      warnings.push_back(
          "NVLink domain " + clique + ": " + std::to_string(absent.size()) +
          " of its nodes are in no fabric domain and join the tree through it only: " + some_names(absent));
    }
    placements.push_back(std::move(p));
  }
  if (placements.empty()) return std::size_t{0};

  std::set<std::string> moving;
  for (const auto& p : placements) moving.insert(p.nodes.begin(), p.nodes.end());
  for (DomainId i = 0; i < tree.size(); ++i) {
    auto& nodes = tree.domain(i).nodes;
    std::erase_if(nodes, [&](const std::string& n) { return moving.contains(n); });
  }

  const std::size_t fabric_domains = tree.size();
  for (const auto& p : placements) {
    const std::string name = nvlink_domain_name(p.clique);
    if (tree.find(name)) {
      return fail(ErrorCode::kInvariant, "NVLink domain " + p.clique + " would be named " + name +
                                             ", which the fabric tree already uses");
    }
    auto id = tree.add_domain(name, 1, options.tier_name);
    Domain& d = tree.domain(id);
    d.anchor = p.clique;
    d.nodes = p.nodes;
    if (is_label_value(p.clique)) d.labels[kNvlinkCliqueLabel] = p.clique;
    if (p.parent) tree.attach(*p.parent, id);
  }

  // Fabric domains sit above tier 1 now: everywhere, or only where an NVLink domain lies below.
  std::vector<char> shift(fabric_domains, options.policy == NvlinkTierPolicy::kShiftEverywhere ? 1 : 0);
  if (options.policy == NvlinkTierPolicy::kShiftBranches) {
    for (DomainId i = fabric_domains; i < tree.size(); ++i) {
      for (auto p = tree.domain(i).parent; p; p = tree.domain(*p).parent) shift[*p] = 1;
    }
  }
  for (DomainId i = 0; i < fabric_domains; ++i) tree.domain(i).tier += shift[i];

  tree = without_empty_domains(tree);
  return placements.size();
}

}  // namespace hypertopo::topology
