#include "discoverers/labels/label_tree.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace hypertopo::discoverers::labels {
namespace {

// FNV-1a, 64 bits, folded to 32: stable across runs, platforms and releases (std::hash is not).
std::string short_hash(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  const auto folded = static_cast<std::uint32_t>(h ^ (h >> 32));
  static const char* digits = "0123456789abcdef";
  std::string out(8, '0');
  for (int i = 7; i >= 0; --i) out[static_cast<std::size_t>(7 - i)] = digits[(folded >> (i * 4)) & 0xF];
  return out;
}

std::string trim_dashes(std::string s) {
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s;
}

// A short, readable list of node names for a warning line.
std::string some_names(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 10;
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i) out += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kShown) out += ", and " + std::to_string(names.size() - kShown) + " more";
  return out;
}

std::string count_nodes(std::size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

// What one label value at one tier gathers while the nodes are walked.
struct ValueSeen {
  std::set<std::string> nodes;                     // tier 1 only
  std::set<std::string> children;                  // values of the tier below
  std::map<std::string, std::string> parent_seen;  // value of the tier above -> first node naming it
};

}  // namespace

std::string label_domain_name(const std::string& type, int tier, const std::string& value) {
  const std::string type_part = topology::sanitize_name(type);
  const std::string value_part = topology::sanitize_name(value);
  std::string name = (type_part.empty() ? std::string("labels") : type_part) + "-tier" + std::to_string(tier);
  if (!value_part.empty()) name += "-" + value_part;
  // The type was checked against the other types' sanitized names by the caller; the value's
  // information loss is what needs the hash.
  const bool exact = !type_part.empty() && !value_part.empty() && value_part == value;
  if (exact && name.size() <= kMaxDomainNameLength) return name;
  const std::string hash = short_hash(type + '\0' + value);
  const std::size_t budget = kMaxDomainNameLength - 1 - hash.size();
  if (name.size() > budget) name = trim_dashes(name.substr(0, budget));
  return name + "-" + hash;
}

std::expected<topology::Tree, Error> build_label_tree(const LabelConfig& config, const k8s::NodeList& nodes) {
  topology::Tree tree;
  tree.source = "hypertopo";

  // Two types whose names lower-case to the same text would give their domains one prefix.
  std::map<std::string, std::string> type_by_prefix;
  for (const auto& type : config.types) {
    auto [it, inserted] = type_by_prefix.emplace(topology::sanitize_name(type.name), type.name);
    if (!inserted) {
      return fail(ErrorCode::kInvalidArgument, "topology types '" + it->second + "' and '" + type.name +
                                                   "' give the same HyperNode name prefix; rename one");
    }
  }

  std::vector<const k8s::NodeInfo*> sorted;
  for (const auto& n : nodes.items) sorted.push_back(&n);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->name < b->name; });

  std::set<std::string> placed;    // nodes in any tier-1 domain
  std::set<std::string> in_scope;  // nodes some type's nodeSelector takes
  std::set<std::string> names;
  for (const auto& type : config.types) {
    const std::size_t depth = type.levels.size();
    auto key_of = [&](std::size_t tier) -> const std::string& { return type.levels[depth - tier]; };
    auto tier_name_of = [&](std::size_t tier) -> const std::string& {
      const std::string& named =
          type.tier_names.size() == depth ? type.tier_names[depth - tier] : key_of(tier);
      return named.empty() ? key_of(tier) : named;
    };
    auto selected = [&](const k8s::NodeInfo& n) {
      for (const auto& [k, v] : type.node_selector) {
        auto it = n.labels.find(k);
        if (it == n.labels.end() || it->second != v) return false;
      }
      return true;
    };
    // by_tier[t][value]; index 0 unused so tiers read as themselves.
    std::vector<std::map<std::string, ValueSeen>> by_tier(depth + 1);
    std::vector<std::string> without_tier1;                   // carry a label of this type, but not tier 1's
    std::map<std::size_t, std::vector<std::string>> stopped;  // tier whose label is missing -> nodes

    for (const auto* node : sorted) {
      if (!selected(*node)) continue;
      in_scope.insert(node->name);
      auto label = [&](std::size_t tier) -> const std::string* {
        auto it = node->labels.find(key_of(tier));
        return it == node->labels.end() ? nullptr : &it->second;
      };
      const std::string* below = label(1);
      if (below == nullptr) {
        for (std::size_t t = 2; t <= depth; ++t) {
          if (label(t) != nullptr) {
            without_tier1.push_back(node->name);
            break;
          }
        }
        continue;
      }
      by_tier[1][*below].nodes.insert(node->name);
      placed.insert(node->name);
      for (std::size_t t = 2; t <= depth; ++t) {
        const std::string* value = label(t);
        if (value == nullptr) {
          stopped[t].push_back(node->name);
          break;
        }
        by_tier[t][*value].children.insert(*below);
        by_tier[t - 1][*below].parent_seen.emplace(*value, node->name);
        below = value;
      }
    }

    // One parent per domain: a tier-k value under two tier-(k+1) values cannot be published.
    for (std::size_t t = 1; t < depth; ++t) {
      for (const auto& [value, seen] : by_tier[t]) {
        if (seen.parent_seen.size() < 2) continue;
        std::string parents;
        for (const auto& [parent, node] : seen.parent_seen) {
          parents += (parents.empty() ? "" : ", ") + key_of(t + 1) + "=" + parent + " (node " + node + ")";
        }
        return fail(ErrorCode::kInvariant, "topology type " + type.name + ": " + key_of(t) + "=" + value +
                                               " lies under several " + key_of(t + 1) + " values: " +
                                               parents + "; a HyperNode has one parent, fix the node labels");
      }
    }

    std::vector<std::map<std::string, topology::DomainId>> ids(depth + 1);
    for (std::size_t t = 1; t <= depth; ++t) {
      for (const auto& [value, seen] : by_tier[t]) {
        auto name = label_domain_name(type.name, static_cast<int>(t), value);
        if (!names.insert(name).second) {
          return fail(ErrorCode::kInvariant, "topology type " + type.name + ": " + key_of(t) + "=" + value +
                                                 " would be named " + name +
                                                 ", which another domain already has");
        }
        auto id = tree.add_domain(name, static_cast<int>(t), tier_name_of(t));
        auto& d = tree.domain(id);
        d.anchor = value;
        d.labels[key_of(t)] = value;
        if (type.profile_label) d.labels[kProfileLabel] = type.name;
        d.nodes.assign(seen.nodes.begin(), seen.nodes.end());
        ids[t][value] = id;
        for (const auto& child : seen.children) tree.attach(id, ids[t - 1].at(child));
      }
    }

    if (!without_tier1.empty()) {
      tree.report.warnings.push_back("labels: topology " + type.name + ": " +
                                     count_nodes(without_tier1.size()) +
                                     " carry a higher level's label but not the tier-1 label " + key_of(1) +
                                     ", so they join none of its HyperNodes: " + some_names(without_tier1));
    }
    for (const auto& [tier, who] : stopped) {
      tree.report.warnings.push_back("labels: topology " + type.name + ": " + count_nodes(who.size()) +
                                     " lack the tier-" + std::to_string(tier) + " label " + key_of(tier) +
                                     " and stop at tier " + std::to_string(tier - 1) + ": " +
                                     some_names(who));
    }
  }

  std::vector<std::string> unplaced;
  for (const auto* node : sorted) {
    if (in_scope.contains(node->name) && !placed.contains(node->name)) unplaced.push_back(node->name);
  }
  if (!unplaced.empty()) {
    std::string keys;
    for (const auto& type : config.types) keys += (keys.empty() ? "" : ", ") + type.levels.back();
    tree.report.warnings.push_back("labels: " + count_nodes(unplaced.size()) + " of " +
                                   std::to_string(sorted.size()) + " have no tier-1 label (" + keys +
                                   ") and join no HyperNode: " + some_names(unplaced));
  }
  return tree;
}

}  // namespace hypertopo::discoverers::labels
