// scheduler/input/disruption_budget.h: a policy/v1 PodDisruptionBudget as preemption reads it.
//
// The one reader of PodDisruptionBudgets: `place` reads them from its --pods list, the extender from
// its watch. spec.selector (matchLabels, matchExpressions), status.disruptionsAllowed and
// status.disruptedPods become a DisruptionBudget (scheduler/placement/victim_planner.h); a field of
// the wrong type is an error naming the budget and the field.
//
//   auto budget = parse_disruption_budget(object, "pods.json");
//   if (!budget) return std::unexpected(budget.error());
#pragma once

#include <expected>
#include <nlohmann/json.hpp>
#include <string>

#include "errors/error.h"
#include "scheduler/placement/victim_planner.h"

namespace hypertopo::scheduler {

// `where` names the input in errors ("pods.json", "watch").
std::expected<DisruptionBudget, Error> parse_disruption_budget(const nlohmann::json& budget,
                                                               const std::string& where);

}  // namespace hypertopo::scheduler
