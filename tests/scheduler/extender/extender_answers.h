// tests/scheduler/extender/extender_answers.h: what kube-scheduler gets back from an extender, as
// one text, to compare two views of the same cluster.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scheduler/extender/extender_service.h"
#include "tests/scheduler/extender/extender_cluster.h"

namespace hypertopo::testing {

// filter and prioritize for pods of several sizes over `names`, as the HTTP routes answer them.
inline std::string extender_answers(scheduler::ExtenderService& service,
                                    const std::vector<std::string>& names) {
  std::string out;
  for (const auto& gpus : {"1", "3", "7", "8"}) {
    const std::string body = args_by_name(pod_object("p" + std::string(gpus), "p", gpus), names).dump();
    auto filtered = service.filter_body(body);
    auto prioritized = service.prioritize_body(body);
    EXPECT_TRUE(filtered.has_value() && prioritized.has_value());
    out += (filtered ? *filtered : filtered.error().message()) + "\n";
    out += (prioritized ? *prioritized : prioritized.error().message()) + "\n";
  }
  return out;
}

}  // namespace hypertopo::testing
