#include "topology/tree.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace hypertopo::topology {

DomainId Tree::add_domain(std::string name, int tier, std::string tier_name) {
  Domain d;
  d.name = std::move(name);
  d.tier = tier;
  d.tier_name = std::move(tier_name);
  domains_.push_back(std::move(d));
  return domains_.size() - 1;
}

void Tree::attach(DomainId parent, DomainId child) {
  domains_[parent].children.push_back(child);
  domains_[child].parent = parent;
}

std::optional<DomainId> Tree::find(std::string_view name) const {
  for (DomainId i = 0; i < domains_.size(); ++i) {
    if (domains_[i].name == name) return i;
  }
  return std::nullopt;
}

std::vector<DomainId> Tree::roots() const {
  std::vector<DomainId> out;
  for (DomainId i = 0; i < domains_.size(); ++i) {
    if (!domains_[i].parent) out.push_back(i);
  }
  return out;
}

int Tree::max_tier() const {
  int m = 0;
  for (const auto& d : domains_) m = std::max(m, d.tier);
  return m;
}

std::vector<std::string> Tree::nodes_under(DomainId id) const {
  std::vector<std::string> out;
  std::vector<DomainId> stack{id};
  std::size_t guard = 0;
  while (!stack.empty() && guard++ <= domains_.size()) {
    DomainId d = stack.back();
    stack.pop_back();
    out.insert(out.end(), domains_[d].nodes.begin(), domains_[d].nodes.end());
    stack.insert(stack.end(), domains_[d].children.begin(), domains_[d].children.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::size_t Tree::node_count() const {
  std::unordered_set<std::string_view> seen;
  for (const auto& d : domains_) {
    for (const auto& n : d.nodes) seen.insert(n);
  }
  return seen.size();
}

void Tree::merge(Tree other) {
  const DomainId offset = domains_.size();
  for (auto& d : other.domains_) {
    for (auto& c : d.children) c += offset;
    if (d.parent) *d.parent += offset;
    domains_.push_back(std::move(d));
  }
  auto append = [](auto& into, auto& from) { into.insert(into.end(), from.begin(), from.end()); };
  append(report.unmapped_endpoints, other.report.unmapped_endpoints);
  append(report.excluded_hosts, other.report.excluded_hosts);
  append(report.excluded_endpoints, other.report.excluded_endpoints);
  append(report.excluded_switches, other.report.excluded_switches);
  append(report.unattached_hosts, other.report.unattached_hosts);
  append(report.warnings, other.report.warnings);
  report.aggregation_nodes += other.report.aggregation_nodes;
  if (source.empty()) source = other.source;
}

std::string fit_member_name(const std::string& name) {
  if (name.size() <= kMaxMemberNameLength) return name;
  // FNV-1a of the full name keeps shortened names distinct and stable.
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  char suffix[10];
  std::snprintf(suffix, sizeof suffix, "-%08x", static_cast<unsigned>(h & 0xffffffffu));
  std::string out = name.substr(0, kMaxMemberNameLength - 9);
  while (!out.empty() && (out.back() == '-' || out.back() == '.')) out.pop_back();
  return out + suffix;
}

bool is_dns1123_subdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  // Each dot-separated label must start and end alphanumeric as well.
  char prev = '.';
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '.') return false;
    if (c == '.' && !alnum(prev)) return false;
    if (prev == '.' && !alnum(c)) return false;
    prev = c;
  }
  return true;
}

std::string sanitize_name(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool dash = false;
  for (char c : text) {
    char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) {
      if (dash && !out.empty()) out.push_back('-');
      dash = false;
      out.push_back(l);
    } else {
      dash = true;
    }
  }
  return out;
}

std::expected<void, Error> check_invariants(const Tree& tree) {
  const auto& ds = tree.domains();
  auto bad = [](const std::string& msg) { return fail(ErrorCode::kInvariant, msg); };
  std::unordered_map<std::string_view, DomainId> names;
  for (DomainId i = 0; i < ds.size(); ++i) {
    const Domain& d = ds[i];
    if (!is_dns1123_subdomain(d.name))
      return bad("HyperNode name '" + d.name + "' is not a DNS-1123 subdomain");
    if (!names.emplace(d.name, i).second) return bad("two domains are named '" + d.name + "'");
    if (d.name.size() > kMaxMemberNameLength) {
      return bad("HyperNode name '" + d.name + "' is longer than " + std::to_string(kMaxMemberNameLength) +
                 " characters (Volcano's admission policy rejects it as a member)");
    }
    if (d.tier < 1) return bad("HyperNode " + d.name + " has tier " + std::to_string(d.tier) + " (< 1)");
    if (d.tier_name.size() > 253) return bad("HyperNode " + d.name + " has a tierName longer than 253");
    if (d.nodes.empty() && d.children.empty()) return bad("HyperNode " + d.name + " has no members");
  }
  // One parent each, consistent both ways, and parent tier above child tier.
  std::vector<int> parent_count(ds.size(), 0);
  for (DomainId i = 0; i < ds.size(); ++i) {
    for (DomainId c : ds[i].children) {
      if (c >= ds.size()) return bad("HyperNode " + ds[i].name + " has a member outside the tree");
      if (++parent_count[c] > 1) return bad("HyperNode " + ds[c].name + " has more than one parent");
      if (!ds[c].parent || *ds[c].parent != i) {
        return bad("HyperNode " + ds[c].name + " is a member of " + ds[i].name + " but names another parent");
      }
      if (ds[i].tier <= ds[c].tier) {
        return bad("HyperNode " + ds[i].name + " (tier " + std::to_string(ds[i].tier) + ") holds " +
                   ds[c].name + " (tier " + std::to_string(ds[c].tier) + "): a parent's tier must be higher");
      }
    }
  }
  for (DomainId i = 0; i < ds.size(); ++i) {
    if (ds[i].parent && parent_count[i] == 0) {
      return bad("HyperNode " + ds[i].name + " names a parent that does not hold it");
    }
  }
  // Tiers strictly rise towards the root, so a cycle is impossible once the above holds; walk anyway
  // so a corrupted parent chain is caught rather than looped on.
  for (DomainId i = 0; i < ds.size(); ++i) {
    std::size_t steps = 0;
    for (auto p = ds[i].parent; p; p = ds[*p].parent) {
      if (++steps > ds.size()) return bad("HyperNode " + ds[i].name + " is on a cycle");
    }
  }
  // Every node in at most one lowest-tier domain (a domain that holds nodes directly).
  std::unordered_map<std::string_view, DomainId> holder;
  for (DomainId i = 0; i < ds.size(); ++i) {
    for (const auto& n : ds[i].nodes) {
      auto [it, inserted] = holder.emplace(n, i);
      if (!inserted) {
        return bad("node " + n + " is a member of both " + ds[it->second].name + " and " + ds[i].name);
      }
    }
  }
  return {};
}

}  // namespace hypertopo::topology
