#include "topology/domain_health.h"

#include <algorithm>

namespace hypertopo::topology {

std::string_view reason_name(HealthReason reason) {
  switch (reason) {
    case HealthReason::kDegradedLinkSpeed:
      return "DegradedLinkSpeed";
    case HealthReason::kDegradedLinkWidth:
      return "DegradedLinkWidth";
    case HealthReason::kLinkFlapping:
      return "LinkFlapping";
    case HealthReason::kMissingUplinks:
      return "MissingUplinks";
    case HealthReason::kLinkDown:
      return "LinkDown";
  }
  return "DegradedLinkWidth";
}

std::optional<HealthReason> parse_reason(std::string_view name) {
  for (auto r : {HealthReason::kDegradedLinkSpeed, HealthReason::kDegradedLinkWidth,
                 HealthReason::kLinkFlapping, HealthReason::kMissingUplinks, HealthReason::kLinkDown}) {
    if (reason_name(r) == name) return r;
  }
  return std::nullopt;
}

HealthReason DomainHealth::reason() const {
  HealthReason worst = HealthReason::kDegradedLinkSpeed;
  for (const auto& l : bad_links) worst = std::max(worst, l.reason);
  return worst;
}

std::string DomainHealth::message(std::size_t max_links) const {
  std::string text;
  const std::size_t shown = std::min(max_links, bad_links.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const BadLink& l = bad_links[i];
    if (i) text += "; ";
    text += l.end_a;
    if (!l.end_b.empty()) text += " - " + l.end_b;
    text += ": " + std::string(reason_name(l.reason)) + ", " + l.seen;
    if (!l.expected.empty()) text += ", expected " + l.expected;
  }
  if (shown < bad_links.size()) text += "; and " + std::to_string(bad_links.size() - shown) + " more";
  return text;
}

}  // namespace hypertopo::topology
