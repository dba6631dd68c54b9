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

json pod_group(const json& sub_group_policy) {
  return {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "ray-llm"}, {"namespace", "default"}}},
          {"spec",
           {{"minMember", 9},
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
  std::vector<json> items{pod_group(workers_policy(5))};
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

}  // namespace
}  // namespace hypertopo::testing
