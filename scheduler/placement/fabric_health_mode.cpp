#include "scheduler/placement/fabric_health_mode.h"

namespace hypertopo::scheduler {

const char* to_string(FabricHealthMode mode) {
  switch (mode) {
    case FabricHealthMode::kPreferHealthy:
      return "prefer-healthy";
    case FabricHealthMode::kExclude:
      return "exclude";
    case FabricHealthMode::kIgnore:
      return "ignore";
  }
  return "prefer-healthy";
}

std::optional<FabricHealthMode> parse_fabric_health_mode(std::string_view text) {
  if (text == "prefer-healthy") return FabricHealthMode::kPreferHealthy;
  if (text == "exclude") return FabricHealthMode::kExclude;
  if (text == "ignore") return FabricHealthMode::kIgnore;
  return std::nullopt;
}

}  // namespace hypertopo::scheduler
