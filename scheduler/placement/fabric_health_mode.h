// scheduler/placement/fabric_health_mode.h: how placement treats degraded fabric.
//
// A domain whose HyperNode carries FabricDegraded=True, or a node whose own link is degraded
// (hypertopo.io/degraded-members), runs a gang's collectives at the speed of its slowest link:
//   prefer-healthy (default): among the domains of the lowest tier that hold a gang, healthy ones
//                             first, then the degraded ones; inside the chosen domain, healthy child
//                             domains and healthy nodes are given before degraded ones;
//   exclude:                  degraded domains and nodes take no gang pods at all; a gang that fits
//                             only there does not fit, and the reason names the domain and why;
//   ignore:                   health plays no part (Volcano's own placement).
// Pods without a topology (normal pods) keep Volcano's fading-tier score in every mode.
//
//   auto mode = parse_fabric_health_mode("exclude");   // std::optional<FabricHealthMode>
//   PlacementEngine engine(index, weights, *mode);
#pragma once

#include <optional>
#include <string_view>

namespace hypertopo::scheduler {

enum class FabricHealthMode { kPreferHealthy, kExclude, kIgnore };

// "prefer-healthy", "exclude", "ignore"
const char* to_string(FabricHealthMode mode);
std::optional<FabricHealthMode> parse_fabric_health_mode(std::string_view text);
inline constexpr const char* kFabricHealthModes = "prefer-healthy, exclude or ignore";

}  // namespace hypertopo::scheduler
