#include "topology/hypernode_status.h"

#include <ctime>

namespace hypertopo::topology {

using nlohmann::json;

std::optional<json> find_condition(const json& object, std::string_view type) {
  if (!object.is_object() || !object.contains("status") || !object["status"].is_object()) return std::nullopt;
  const auto& status = object["status"];
  if (!status.contains("conditions") || !status["conditions"].is_array()) return std::nullopt;
  for (const auto& c : status["conditions"]) {
    if (c.is_object() && c.contains("type") && c["type"].is_string() && c["type"].get<std::string>() == type)
      return c;
  }
  return std::nullopt;
}

std::optional<json> merge_fabric_condition(const json& current_object, const json& desired,
                                           std::string_view now) {
  const std::string type = desired.value("type", "");
  auto have = find_condition(current_object, type);
  auto same = [&](const char* key) { return have && have->contains(key) && (*have)[key] == desired[key]; };
  if (same("status") && same("reason") && same("message")) return std::nullopt;
  json mine = desired;
  mine["lastTransitionTime"] = same("status") && have->contains("lastTransitionTime")
                                   ? (*have)["lastTransitionTime"]
                                   : json(std::string(now));
  json conditions = json::array();
  bool placed = false;
  const auto& status = current_object.contains("status") ? current_object["status"] : json();
  if (status.is_object() && status.contains("conditions") && status["conditions"].is_array()) {
    for (const auto& c : status["conditions"]) {
      const bool ours = c.is_object() && c.contains("type") && c["type"] == type;
      if (!ours) {
        conditions.push_back(c);
      } else if (!placed) {
        conditions.push_back(mine);
        placed = true;
      }
    }
  }
  if (!placed) conditions.push_back(mine);
  return conditions;
}

std::string rfc3339(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

}  // namespace hypertopo::topology
