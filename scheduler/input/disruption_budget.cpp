#include "scheduler/input/disruption_budget.h"

#include <algorithm>
#include <limits>

#include "io/json_fields.h"

namespace hypertopo::scheduler {

using nlohmann::json;

namespace {
using io::str_at;
using io::value_or_null;
}  // namespace

// policy/v1 PodDisruptionBudget: spec.selector (metav1.LabelSelector), status.disruptionsAllowed,
// status.disruptedPods (pod name -> when its eviction was admitted).
std::expected<DisruptionBudget, Error> parse_disruption_budget(const json& budget, const std::string& where) {
  DisruptionBudget out;
  const json& meta = value_or_null(budget, "metadata");
  out.ns = str_at(meta, "namespace");
  out.name = str_at(meta, "name");
  const std::string who = where + ": PodDisruptionBudget " + out.ns + "/" + out.name;
  const json& selector = value_or_null(value_or_null(budget, "spec"), "selector");
  if (!selector.is_null() && !selector.is_object())
    return fail(ErrorCode::kInvalidArgument, who + ": spec.selector must be an object");
  out.selector.kind = MemberSelector::Kind::kLabel;
  const json& labels = value_or_null(selector, "matchLabels");
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.items()) {
      if (!v.is_string())
        return fail(ErrorCode::kInvalidArgument,
                    who + ": spec.selector.matchLabels." + k + " must be a string");
      out.selector.match_labels[k] = v.get<std::string>();
    }
  }
  const json& expressions = value_or_null(selector, "matchExpressions");
  if (expressions.is_array()) {
    for (const auto& e : expressions) {
      LabelRequirement r{.key = str_at(e, "key"), .op = str_at(e, "operator"), .values = {}};
      if (r.op != "In" && r.op != "NotIn" && r.op != "Exists" && r.op != "DoesNotExist")
        return fail(
            ErrorCode::kInvalidArgument,
            who +
                ": spec.selector.matchExpressions operator must be In, NotIn, Exists or DoesNotExist, "
                "got '" +
                r.op + "'");
      const json& values = value_or_null(e, "values");
      if (values.is_array()) {
        for (const auto& v : values) {
          if (v.is_string()) r.values.push_back(v.get<std::string>());
        }
      }
      out.selector.match_expressions.push_back(std::move(r));
    }
  }
  out.selector_set = !out.selector.match_labels.empty() || !out.selector.match_expressions.empty();
  const json& status = value_or_null(budget, "status");
  const json& allowed = value_or_null(status, "disruptionsAllowed");
  if (!allowed.is_null() && !allowed.is_number_integer())
    return fail(ErrorCode::kInvalidArgument, who + ": status.disruptionsAllowed must be an integer");
  if (allowed.is_number_integer())
    out.disruptions_allowed = static_cast<std::int32_t>(
        std::clamp<std::int64_t>(allowed.get<std::int64_t>(), std::numeric_limits<std::int32_t>::min(),
                                 std::numeric_limits<std::int32_t>::max()));
  const json& disrupted = value_or_null(status, "disruptedPods");
  if (disrupted.is_object()) {
    for (const auto& [name, when] : disrupted.items()) out.disrupted_pods.insert(name);
  }
  return out;
}

}  // namespace hypertopo::scheduler
