// topology/hypernode_status.h: hypertopo's FabricDegraded condition inside a HyperNode's status,
// next to what other writers keep there.
//
// Volcano's CRD carries metav1.Conditions in status.conditions, and Volcano's hyperNode-controller
// writes status.nodeCount. A JSON merge patch replaces a list whole, so the new list is built from
// the one on the server: every other condition as it is, ours replaced. lastTransitionTime moves
// only when our condition's status flips (the metav1.Condition contract,
// k8s.io/apimachinery/pkg/api/meta SetStatusCondition).
//
//   auto conditions = merge_fabric_condition(current, fabric_degraded_condition(health), now_rfc3339);
//   if (conditions) patch["status"]["conditions"] = *conditions;   // else: nothing of ours changed
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace hypertopo::topology {

// The status.conditions to write so that `desired` (a condition without lastTransitionTime) is in
// the object's status; nullopt when the condition there already says the same (status, reason and
// message), which costs no write.
std::optional<nlohmann::json> merge_fabric_condition(const nlohmann::json& current_object,
                                                     const nlohmann::json& desired, std::string_view now);

// The FabricDegraded condition of an object (a HyperNode as the API server returns it), if any.
std::optional<nlohmann::json> find_condition(const nlohmann::json& object, std::string_view type);

// RFC 3339 UTC with seconds, as metav1.Time serialises: "2026-11-24T05:01:35Z".
std::string rfc3339(std::chrono::system_clock::time_point t);

}  // namespace hypertopo::topology
