// topology/domain_health.h: what the fabric health pass found for one domain of the tree.
//
// A domain's links are its uplinks (from its own switches towards the tier above) and its internal
// links (between its members: host links of a leaf, leaf-spine links of a spine domain). A link is
// bad when it trained narrower or slower than both its ends allow or than its siblings (the other
// links between the same switch levels), when it is down, or when it is missing (a switch with
// fewer uplinks than the other switches of its level). The reason of the domain is its worst one.
//
//   const DomainHealth& h = tree.domain(id).health;
//   if (h.degraded()) std::cout << reason_name(h.reason()) << " " << h.uplink_healthy;
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hypertopo::topology {

// Ordered from the least to the most severe: a domain reports its most severe reason.
enum class HealthReason {
  kDegradedLinkSpeed,
  kDegradedLinkWidth,
  kLinkFlapping,
  kMissingUplinks,
  kLinkDown,
};

// "DegradedLinkWidth", ...: the reason of the FabricDegraded condition.
std::string_view reason_name(HealthReason reason);
std::optional<HealthReason> parse_reason(std::string_view name);

struct BadLink {
  HealthReason reason = HealthReason::kDegradedLinkWidth;
  std::string end_a;     // "<switch or host>[<port>]"; the lower end of an uplink
  std::string end_b;     // the other end; for a missing link, the switches the siblings reach instead
  std::string expected;  // "4x", "2 uplinks", ...
  std::string seen;      // "1x", "1 uplink", ...
  bool uplink = false;   // an uplink of the domain (else one of its internal links)
  std::string host;      // a host's own link (host to leaf): that host's node name; else empty
};

struct DomainHealth {
  bool assessed = false;          // the health pass ran on this domain's tree
  double uplink_healthy = 1.0;    // share of the expected uplink bandwidth that is there
  double internal_healthy = 1.0;  // share of the expected internal bandwidth that is there
  std::vector<BadLink> bad_links;

  bool degraded() const { return !bad_links.empty(); }
  HealthReason reason() const;  // the most severe reason; only meaningful when degraded()
  // "leaf-a/3 - spine-b/1: 1x, expected 4x; ..." (at most `max_links` named, then a count).
  std::string message(std::size_t max_links = 8) const;
};

}  // namespace hypertopo::topology
