// One pending pod asked of the extender as kube-scheduler asks it, for the tests that hold `place`
// and the extender to one answer (place_around_bound_test, place_pod_groups_test,
// place_extender_differential_test).
//
// kube-scheduler v1.26+ (kubernetes/kubernetes pkg/scheduler/schedule_one.go):
// findNodesThatFitPod runs findNodesThatPassExtenders, which calls each extender's Filter
// (pkg/scheduler/extender.go HTTPExtender.Filter) with the nodes the framework kept; no node left
// is a FitError whose reasons are the extender's failedNodes. prioritizeNodes skips scoring when
// one node is left (schedulePod returns it as is) and otherwise adds each extender's Prioritize
// scores; selectHost takes the highest. The extender is kube-scheduler's only scorer in these
// tests, and the first of equal scores is taken so that a case reads the same on every run.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "scheduler/extender/extender_service.h"

namespace hypertopo::testing {

struct ExtenderPick {
  std::string node;     // the node kube-scheduler would bind; empty when the pod is refused
  std::string refusal;  // the extender's error, else the first failedNodes reason
  std::string error;    // a verb that failed outright (not a refusal)
};

inline ExtenderPick ask_extender(scheduler::ExtenderService& svc, const nlohmann::json& pod,
                                 const nlohmann::json& names) {
  ExtenderPick out;
  auto kept = svc.filter({{"pod", pod}, {"nodenames", names}});
  if (!kept) {
    out.error = kept.error().message();
    return out;
  }
  if (!kept->contains("nodenames") || !(*kept)["nodenames"].is_array() || (*kept)["nodenames"].empty()) {
    out.refusal = kept->value("error", std::string());
    const nlohmann::json failed = kept->value("failedNodes", nlohmann::json::object());
    for (const auto& [node, why] : failed.items())
      if (out.refusal.empty()) out.refusal = why.get<std::string>();
    return out;
  }
  out.node = (*kept)["nodenames"][0].get<std::string>();
  if ((*kept)["nodenames"].size() > 1) {
    auto scores = svc.prioritize({{"pod", pod}, {"nodenames", (*kept)["nodenames"]}});
    if (!scores) {
      out.node.clear();
      out.error = scores.error().message();
      return out;
    }
    std::int64_t best = -1;
    for (const auto& s : *scores) {
      if (s["score"].get<std::int64_t>() > best) {
        best = s["score"].get<std::int64_t>();
        out.node = s["host"].get<std::string>();
      }
    }
  }
  return out;
}

}  // namespace hypertopo::testing
