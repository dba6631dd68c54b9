// A KAI PodGroup whose spec.subGroups form one chain of parents far deeper than kMaxSubGroupDepth,
// met by the extender as kube-scheduler meets it: the PodGroup from the watch, then a filter call
// (the HTTP body kube-scheduler posts) for one of its pods. The 20,000-deep chain once ended the
// extender with SIGSEGV on that first call, and again on every call after each restart while the
// pod stayed pending; now each call answers an error naming the PodGroup and its depth, and the
// extender goes on placing other gangs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scheduler/extender/extender_service.h"
#include "scheduler/placement/job_request.h"
#include "tests/scheduler/extender/extender_cluster.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;
using testing::args_by_name;
using testing::pod_object;

// PodGroup ml/deep (as a List item: no kind) with sub-groups g1 .. g<depth>, each the child of the
// one before.
json deep_pod_group(std::size_t depth) {
  json groups = json::array();
  for (std::size_t i = 1; i <= depth; ++i) {
    json g{{"name", "g" + std::to_string(i)}};
    if (i > 1) g["parent"] = "g" + std::to_string(i - 1);
    groups.push_back(std::move(g));
  }
  return {{"metadata", {{"name", "deep"}, {"namespace", "ml"}}},
          {"spec", {{"minMember", 1}, {"subGroups", std::move(groups)}}}};
}

json deep_pod(std::size_t depth) {
  return pod_object("p-0", "u-p0", "8", {{"pod-group-name", "deep"}},
                    {{"kai.scheduler/subgroup-name", "g" + std::to_string(depth)}});
}

class DeepSubGroupsExtenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(service_.set_hypernodes(cluster_.hypernodes).has_value());
    ASSERT_TRUE(service_.set_nodes(cluster_.nodes).has_value());
  }

  // The filter call over HTTP's body; the reply's error, or every failed node's reason, joined.
  std::string refusal(std::size_t depth) {
    auto body = service_.filter_body(args_by_name(deep_pod(depth), cluster_.node_names).dump());
    if (!body) return "filter failed: " + body.error().message();
    const json reply = json::parse(*body);
    EXPECT_TRUE(!reply.contains("nodenames") || reply["nodenames"].is_null() || reply["nodenames"].empty())
        << reply.dump().substr(0, 2000);
    std::string out = reply.value("error", std::string());
    if (reply.contains("failedNodes") && reply["failedNodes"].is_object())
      for (const auto& [node, why] : reply["failedNodes"].items())
        out += "\n" + node + ": " + why.get<std::string>();
    return out;
  }

  static void expect_named(const std::string& refusal, std::size_t depth) {
    EXPECT_NE(refusal.find("PodGroup ml/deep: spec.subGroups nest deeper than " +
                           std::to_string(kMaxSubGroupDepth) + " levels: sub-group g" +
                           std::to_string(depth) + " is " + std::to_string(depth) + " levels deep"),
              std::string::npos)
        << refusal.substr(0, 2000);
  }

  // A plain gang of one after the deep one: the extender still plans.
  void expect_still_placing() {
    auto pod = pod_object("other-0", "u-o0", "1",
                          {{"hypertopo.io/gang-size", "1"},
                           {"hypertopo.io/network-topology-mode", "hard"},
                           {"hypertopo.io/highest-tier-allowed", "1"},
                           {"scheduling.k8s.io/group-name", "other"}});
    auto r = service_.filter(args_by_name(pod, cluster_.node_names));
    ASSERT_TRUE(r.has_value()) << r.error().message();
    ASSERT_TRUE((*r)["nodenames"].is_array()) << r->dump();
    EXPECT_EQ((*r)["nodenames"].size(), 1u) << r->dump();
  }

  testing::ExtenderCluster cluster_ = testing::make_cluster(1, 2, 2);
  ExtenderService service_{ExtenderOptions{}};
};

TEST_F(DeepSubGroupsExtenderTest, EveryFilterCallForAPodOfATwentyThousandDeepChainNamesThePodGroup) {
  service_.set_pod_groups({deep_pod_group(20'000)}, PodGroupKind::kKai);
  // kube-scheduler retries a pending pod: each call answers the same, none ends the process.
  for (int call = 0; call < 2; ++call) expect_named(refusal(20'000), 20'000);
  expect_still_placing();
}

TEST_F(DeepSubGroupsExtenderTest, AHundredThousandDeepChainNamesThePodGroup) {
  service_.set_pod_groups({deep_pod_group(100'000)}, PodGroupKind::kKai);
  expect_named(refusal(100'000), 100'000);
  expect_still_placing();
}

TEST_F(DeepSubGroupsExtenderTest, AChainAtTheBoundIsPlaced) {
  service_.set_pod_groups({deep_pod_group(kMaxSubGroupDepth)}, PodGroupKind::kKai);
  auto r = service_.filter(args_by_name(deep_pod(kMaxSubGroupDepth), cluster_.node_names));
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_TRUE((*r)["nodenames"].is_array()) << r->dump();
  EXPECT_EQ((*r)["nodenames"].size(), 1u) << r->dump();
}

}  // namespace
}  // namespace hypertopo::scheduler
