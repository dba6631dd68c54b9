// topology/tree.h: the tree of network domains that hypertopo publishes.
//
// A Domain is one HyperNode: a tier (1 = closest), a tier name, the nodes it holds directly (only at
// the lowest tier of its branch) and its child domains. Every source's result ends up as a Tree, and
// check_invariants() is run on each tree before anything renders or writes it.
//
//   Tree t;
//   auto su = t.add_domain("t1-a09-p1-ibleaf-01-01", 1, "leaf");
//   t.domain(su).nodes = {"dgx-001", "dgx-002"};
//   auto top = t.add_domain("t2-a10-p1-ibspine-01", 2, "spine");
//   t.attach(top, su);
//   if (auto ok = check_invariants(t); !ok) std::cerr << ok.error().message();
#pragma once

#include <cstddef>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "errors/error.h"
#include "topology/domain_health.h"

namespace hypertopo::topology {

using DomainId = std::size_t;

struct Domain {
  std::string name;                // DNS-1123 subdomain, derived from what the domain is
  int tier = 1;                    // 1 = closest
  std::string tier_name;           // e.g. "leaf", "spine", "core", "nvlink", or a label key
  std::string anchor;              // what the domain is: its anchor switch, clique or label value
  std::vector<std::string> nodes;  // Node members (sorted)
  std::vector<DomainId> children;  // HyperNode members
  std::optional<DomainId> parent;
  std::map<std::string, std::string> labels;  // extra labels a source wants on the object
  DomainHealth health;                        // filled by the fabric health pass (fabric_health.h)
};

// What a build saw but could not place; reported, never silently dropped.
struct BuildReport {
  struct Unmapped {
    std::string guid;
    std::string description;
  };
  std::vector<Unmapped> unmapped_endpoints;     // no node name could be derived
  std::vector<std::string> excluded_hosts;      // not Kubernetes nodes (with --nodes), sorted
  std::vector<std::string> excluded_endpoints;  // storage / management by pattern (guid)
  std::vector<std::string> excluded_switches;   // by switch-name pattern (names)
  std::size_t aggregation_nodes = 0;            // SHARP aggregation nodes skipped
  std::vector<std::string> unattached_hosts;    // hosts with no link to any switch
  std::vector<std::string> warnings;            // anything suspicious, one line each
};

class Tree {
 public:
  DomainId add_domain(std::string name, int tier, std::string tier_name);
  // Makes `child` a member of `parent`.
  void attach(DomainId parent, DomainId child);

  Domain& domain(DomainId id) { return domains_[id]; }
  const Domain& domain(DomainId id) const { return domains_[id]; }
  const std::vector<Domain>& domains() const { return domains_; }
  std::size_t size() const { return domains_.size(); }
  bool empty() const { return domains_.empty(); }

  std::optional<DomainId> find(std::string_view name) const;
  std::vector<DomainId> roots() const;
  int max_tier() const;

  // Every node under a domain (its own nodes and those of its descendants), sorted.
  std::vector<std::string> nodes_under(DomainId id) const;
  // Number of distinct nodes in the tree.
  std::size_t node_count() const;

  // Moves every domain of `other` into this tree (names must not collide; check_invariants says).
  void merge(Tree other);

  std::string source;  // value of volcano.sh/network-topology-source
  BuildReport report;

 private:
  std::vector<Domain> domains_;
};

// The rules Volcano's scheduler needs (it marks the whole topology not ready otherwise): one parent
// per domain, parent tier > child tier, no cycles, every node in at most one lowest-tier domain,
// unique names that are DNS-1123 subdomains, at least one member each.
std::expected<void, Error> check_invariants(const Tree& tree);

// Volcano's admission policy requires HyperNode names used as members to be qualified names: at
// most 63 characters. Longer names are cut and given a stable hash suffix.
inline constexpr std::size_t kMaxMemberNameLength = 63;
std::string fit_member_name(const std::string& name);

// DNS-1123 subdomain: at most 253 chars of [a-z0-9.-], starting and ending alphanumeric.
bool is_dns1123_subdomain(std::string_view name);

// Turns any text into a DNS-1123 label-ish fragment: lower case, runs of other characters become
// '-', trimmed. Returns "" when nothing usable is left.
std::string sanitize_name(std::string_view text);

}  // namespace hypertopo::topology
