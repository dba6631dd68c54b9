// A Volcano PodGroup with subGroupPolicy (as KubeRay writes one for NVL72 worker groups) through
// `hypertopo place`: each replica's workers inside one NVLink HyperNode, the gang inside one spine.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/conformance/volcano_world.h"

namespace hypertopo::testing {
namespace {

using nlohmann::json;

// Three NVLink domains of four 4-GPU nodes under one spine; nvl-a has a node taken.
VolcanoWorld nvl_world() {
  VolcanoWorld w;
  std::vector<std::string> domains;
  for (const char* d : {"a", "b", "c"}) {
    std::vector<std::string> nodes;
    for (int i = 1; i <= 4; ++i) {
      const std::string n = std::string("gb-") + d + std::to_string(i);
      w.node(n, {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "4"}});
      nodes.push_back(n);
    }
    w.hypernode(std::string("nvl-") + d, 1, "Node", nodes);
    domains.push_back(std::string("nvl-") + d);
  }
  w.hypernode("spine-1", 2, "HyperNode", domains);
  w.bound_pod("other-job", "gb-a1", {{"nvidia.com/gpu", "4"}});
  return w;
}

json ray_pod(const std::string& name, const std::string& type, const std::string& group) {
  json pod = VolcanoWorld::pod(name, {{"nvidia.com/gpu", "4"}});
  pod["metadata"]["annotations"] = {{"scheduling.k8s.io/group-name", "ray-llm"}};
  pod["metadata"]["labels"] = {{"ray.io/node-type", type}};
  if (!group.empty()) pod["metadata"]["labels"]["ray.io/replica"] = group;
  return pod;
}

json pod_group(const json& sub_group_policy, int min_member = 9) {
  return {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "ray-llm"}, {"namespace", "default"}}},
          {"spec",
           {{"minMember", min_member},
            {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 2}}},
            {"subGroupPolicy", sub_group_policy}}}};
}

json workers_policy(int size) {
  return json::array({{{"name", "workers"},
                       {"subGroupSize", size},
                       {"labelSelector", {{"matchLabels", {{"ray.io/node-type", "worker"}}}}},
                       {"matchLabelKeys", {"ray.io/replica"}},
                       {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 1}}}}});
}

TEST(VolcanoSubGroups, EachReplicaLandsInOneNvlinkDomain) {
  VolcanoWorld w = nvl_world();
  std::vector<json> items{pod_group(workers_policy(4)), ray_pod("head", "head", "")};
  for (const char* r : {"0", "1"})
    for (int i = 0; i < 4; ++i)
      items.push_back(ray_pod(std::string("w") + r + "-" + std::to_string(i), "worker", r));
  const CapturedRun run = w.place(VolcanoWorld::list("List", items));
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const json result = json::parse(run.out);
  std::map<std::string, std::set<std::string>> domains;  // pod set -> the NVLink domains its pods use
  std::map<std::string, int> pods;
  for (const auto& ps : result["podSets"]) {
    for (const auto& a : ps["assignment"]) {
      domains[ps["name"]].insert(a["path"].back().get<std::string>());
      pods[ps["name"]] += a["count"].get<int>();
    }
  }
  // nvl-a has three free nodes: each replica takes a whole domain of its own, b and c.
  EXPECT_EQ(pods["workers/0"], 4) << run.out;
  EXPECT_EQ(pods["workers/1"], 4) << run.out;
  ASSERT_EQ(domains["workers/0"].size(), 1u) << run.out;
  ASSERT_EQ(domains["workers/1"].size(), 1u) << run.out;
  EXPECT_NE(*domains["workers/0"].begin(), *domains["workers/1"].begin()) << run.out;
  EXPECT_FALSE(domains["workers/0"].contains("nvl-a")) << run.out;
  EXPECT_FALSE(domains["workers/1"].contains("nvl-a")) << run.out;
  EXPECT_EQ(pods["ray-llm"], 1) << run.out;  // the head: any node of the spine
}

TEST(VolcanoSubGroups, AReplicaNoDomainHoldsLeavesTheGangPending) {
  VolcanoWorld w = nvl_world();
  std::vector<json> items{pod_group(workers_policy(5), 5)};
  for (int i = 0; i < 5; ++i) items.push_back(ray_pod("w0-" + std::to_string(i), "worker", "0"));
  const CapturedRun run = w.place(VolcanoWorld::list("List", items));
  EXPECT_EQ(run.code, 1) << run.err << run.out;
  EXPECT_NE(run.out.find("workers/0"), std::string::npos) << run.out;
}

TEST(VolcanoSubGroups, ASubGroupOfTheWrongSizeIsRefused) {
  VolcanoWorld w = nvl_world();
  std::vector<json> items{pod_group(workers_policy(4))};
  for (int i = 0; i < 3; ++i) items.push_back(ray_pod("w0-" + std::to_string(i), "worker", "0"));
  const CapturedRun run = w.place(VolcanoWorld::list("List", items));
  EXPECT_EQ(run.code, 2) << run.out;
  EXPECT_NE(run.err.find("sub-group workers/0 has 3 pods, its subGroupSize is 4"), std::string::npos)
      << run.err;
}

// The workers policy with minSubGroups (any JSON value), replicas of four 4-GPU workers.
json quorum_policy(const json& min_sub_groups) {
  json policy = workers_policy(4);
  policy[0]["minSubGroups"] = min_sub_groups;
  return policy;
}

std::vector<json> replicas(const json& group, const std::vector<std::string>& names) {
  std::vector<json> items{group};
  for (const auto& r : names)
    for (int i = 0; i < 4; ++i) items.push_back(ray_pod("w" + r + "-" + std::to_string(i), "worker", r));
  return items;
}

std::map<std::string, int> pods_per_set(const json& result) {
  std::map<std::string, int> out;
  for (const auto& ps : result["podSets"]) {
    out[ps["name"]] += 0;
    for (const auto& a : ps["assignment"]) out[ps["name"]] += a["count"].get<int>();
  }
  return out;
}

// Volcano's gang plugin (pkg/scheduler/plugins/gang/gang.go JobReady, api/job_info.go
// CheckSubJobReady): the job starts once minSubGroups sub-groups of the policy and minMember pods
// are allocated. Three replicas, two NVLink domains with four free nodes: two replicas start.
TEST(VolcanoSubGroups, TheGangStartsWhenMinSubGroupsFit) {
  VolcanoWorld w = nvl_world();
  const CapturedRun run =
      w.place(VolcanoWorld::list("List", replicas(pod_group(quorum_policy(2), 8), {"0", "1", "2"})));
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const json result = json::parse(run.out);
  const auto pods = pods_per_set(result);
  EXPECT_EQ(pods.at("workers/0"), 4) << run.out;
  EXPECT_EQ(pods.at("workers/1"), 4) << run.out;
  EXPECT_EQ(pods.at("workers/2"), 0) << run.out;
  EXPECT_NE(result["reason"].get<std::string>().find("placed 8 of 12 pods"), std::string::npos) << run.out;
  for (const auto& ps : result["podSets"]) {
    if (ps["name"] != "workers/2") continue;
    EXPECT_NE(ps["reason"].get<std::string>().find("sub-group workers/2 does not fit now"), std::string::npos)
        << run.out;
  }
}

TEST(VolcanoSubGroups, FewerSubGroupsThanMinSubGroupsFitSaysHowMany) {
  VolcanoWorld w = nvl_world();
  const CapturedRun run =
      w.place(VolcanoWorld::list("List", replicas(pod_group(quorum_policy(3), 12), {"0", "1", "2"})));
  EXPECT_EQ(run.code, 1) << run.err << run.out;
  EXPECT_NE(
      run.out.find("subGroupPolicy workers: 2 sub-groups fit with the rest of the gang, minSubGroups is 3"),
      std::string::npos)
      << run.out;
}

// minMember counts as well as minSubGroups (Volcano's JobReady needs both).
TEST(VolcanoSubGroups, MinMemberAboveWhatFitsKeepsTheGangPending) {
  VolcanoWorld w = nvl_world();
  const CapturedRun run =
      w.place(VolcanoWorld::list("List", replicas(pod_group(quorum_policy(1), 12), {"0", "1", "2"})));
  EXPECT_EQ(run.code, 1) << run.err << run.out;
  EXPECT_NE(run.out.find("8 pods fit, minMember is 12"), std::string::npos) << run.out;
}

// Volcano's gang plugin finds such a job not valid (CheckSubJobValid) and keeps it pending.
TEST(VolcanoSubGroups, MinSubGroupsAboveTheSubGroupsThatExistKeepsTheGangPending) {
  VolcanoWorld w = nvl_world();
  const CapturedRun run =
      w.place(VolcanoWorld::list("List", replicas(pod_group(quorum_policy(4), 8), {"0", "1", "2"})));
  EXPECT_EQ(run.code, 1) << run.err << run.out;
  EXPECT_NE(run.out.find("subGroupPolicy workers has minSubGroups 4, its pods form 3 sub-groups"),
            std::string::npos)
      << run.out;
}

// The CRD's schema (format int32, minimum 0) refuses these; place names the PodGroup and the key.
TEST(VolcanoSubGroups, AMalformedMinSubGroupsIsAnErrorNamingTheKey) {
  for (const json& value : {json(-1), json(1.5), json("2"), json(2147483648LL)}) {
    VolcanoWorld w = nvl_world();
    const CapturedRun run =
        w.place(VolcanoWorld::list("List", replicas(pod_group(quorum_policy(value), 8), {"0", "1"})));
    EXPECT_EQ(run.code, 2) << value << run.out;
    EXPECT_NE(run.err.find("PodGroup ray-llm spec.subGroupPolicy[0].minSubGroups: must be an integer in "
                           "0..2147483647"),
              std::string::npos)
        << value << run.err;
  }
}

// Sub-groups are tried in Volcano's sub-job order (framework/session_plugins.go SubJobOrderFn: the
// first match value as a number), not in the order their pods are listed: replicas 2 and 9 take the
// two free NVLink domains and 10 waits.
TEST(VolcanoSubGroups, SubGroupsAreTriedInVolcanosOrder) {
  VolcanoWorld w = nvl_world();
  const CapturedRun run =
      w.place(VolcanoWorld::list("List", replicas(pod_group(quorum_policy(1), 4), {"10", "9", "2"})));
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const auto pods = pods_per_set(json::parse(run.out));
  EXPECT_EQ(pods.at("workers/2"), 4) << run.out;
  EXPECT_EQ(pods.at("workers/9"), 4) << run.out;
  EXPECT_EQ(pods.at("workers/10"), 0) << run.out;
}

// Volcano forms sub-groups only from pods that carry every matchLabelKeys key
// (pkg/scheduler/api/sub_job_info.go getSubJobMatchValues): the head matches the selector but has no
// replica label, so it joins the gang itself, not a one-pod sub-group "workers/".
TEST(VolcanoSubGroups, APodWithoutTheMatchLabelKeyStaysWithTheGang) {
  VolcanoWorld w = nvl_world();
  json policy = workers_policy(4);
  policy[0].erase("labelSelector");
  std::vector<json> items = replicas(pod_group(policy, 9), {"0", "1"});
  items.push_back(ray_pod("head", "head", ""));
  const CapturedRun run = w.place(VolcanoWorld::list("List", items));
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const auto pods = pods_per_set(json::parse(run.out));
  EXPECT_EQ(pods.at("ray-llm"), 1) << run.out;
  EXPECT_EQ(pods.at("workers/0"), 4) << run.out;
  EXPECT_EQ(pods.at("workers/1"), 4) << run.out;
}

// A policy without matchLabelKeys forms no sub-group in Volcano (getOrCreateSubJob needs match
// values): its five pods are the gang's own, under the gang's spine, not one sub-group that no
// NVLink domain of four nodes holds.
TEST(VolcanoSubGroups, APolicyWithoutMatchLabelKeysFormsNoSubGroup) {
  VolcanoWorld w = nvl_world();
  json policy = workers_policy(5);
  policy[0].erase("matchLabelKeys");
  policy[0].erase("subGroupSize");
  std::vector<json> items{pod_group(policy, 5)};
  for (int i = 0; i < 5; ++i) items.push_back(ray_pod("w0-" + std::to_string(i), "worker", "0"));
  const CapturedRun run = w.place(VolcanoWorld::list("List", items));
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  EXPECT_EQ(pods_per_set(json::parse(run.out)).at("ray-llm"), 5) << run.out;
}

}  // namespace
}  // namespace hypertopo::testing
