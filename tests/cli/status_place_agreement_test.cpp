// `status` and `place` read one cluster one way: on seeded clusters in the loopback API server, with
// cordoned, NotReady and tainted nodes, and pods running, pending, bound, unbound, succeeded, failed,
// terminating, with init containers, the largest free block `status -o json` states for each tier is
// exactly what `place` finds there: a gang of that many one-GPU pods, hard-constrained to the tier,
// fits, and a gang of one more does not. The nodes status names as taking no new pod are those the
// generator made so.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "tests/cli/cluster_objects.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/fixtures.h"

namespace hypertopo {
namespace {

using nlohmann::json;

constexpr int kSeeds = 16;

// A seeded cluster: the objects to create, in order, and what the generator made of them.
struct SeededCluster {
  struct Object {
    std::string collection;  // "/api/v1/nodes"
    json object;             // its status, if any, is written through /status after the create
  };
  std::vector<Object> objects;
  std::set<std::string> refusing;    // nodes a pod without tolerations cannot go to
  std::map<std::string, int> kinds;  // "cordoned", "Succeeded", "terminating", ... -> how many
};

json gpu_pod(const std::string& name, const std::string& node, int gpus) {
  json spec{{"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", gpus}}}}}}}}};
  if (!node.empty()) spec["nodeName"] = node;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "batch"}}},
          {"spec", spec}};
}

json probe_job(int replicas, int tier) {
  json spec{{"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "1"}}}}}}}}};
  return {{"apiVersion", "batch.volcano.sh/v1alpha1"},
          {"kind", "Job"},
          {"metadata", {{"name", "probe"}, {"namespace", "ml"}}},
          {"spec",
           {{"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", tier}}},
            {"tasks", {{{"name", "worker"}, {"replicas", replicas}, {"template", {{"spec", spec}}}}}}}}};
}

// 2 or 3 tiers; leaves of 2 to 4 nodes of 4 or 8 GPUs.
SeededCluster generate(int seed) {
  std::mt19937 rng(static_cast<std::mt19937::result_type>(seed));
  SeededCluster out;
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const int tiers = 2 + pick(2);
  const int spines = 1 + pick(3);
  std::vector<std::string> spine_names;
  int node_count = 0, pod_count = 0;
  for (int s = 0; s < spines; ++s) {
    std::vector<std::string> leaves;
    for (int l = 0, nl = 2 + pick(3); l < nl; ++l) {
      std::vector<std::string> members;
      for (int n = 0, nn = 2 + pick(3); n < nn; ++n) {
        const std::string name = "node-" + std::to_string(node_count++);
        json spec = json::object();
        json node = testing::gpu_node(name);
        node["status"]["allocatable"]["nvidia.com/gpu"] = pick(3) == 0 ? "4" : "8";
        std::string kind;
        switch (pick(10)) {
          case 0:
            kind = "cordoned";
            spec["unschedulable"] = true;
            break;
          case 1:
            kind = "NotReady";
            node["status"]["conditions"] = json::array({{{"type", "Ready"}, {"status", "False"}}});
            break;
          case 2:
            kind = "NoSchedule";
            spec["taints"] = json::array({{{"key", "gpu-maintenance"}, {"effect", "NoSchedule"}}});
            break;
          case 3:
            kind = "NoExecute";
            spec["taints"] = json::array({{{"key", "fabric"}, {"value", "down"}, {"effect", "NoExecute"}}});
            break;
          case 4:
            kind = "PreferNoSchedule";  // still takes pods
            spec["taints"] = json::array({{{"key", "spare"}, {"effect", "PreferNoSchedule"}}});
            break;
          default:
            break;
        }
        if (!kind.empty()) ++out.kinds[kind];
        if (!kind.empty() && kind != "PreferNoSchedule") out.refusing.insert(name);
        if (!spec.empty()) node["spec"] = spec;
        out.objects.push_back({"/api/v1/nodes", node});
        members.push_back(name);
        // Up to 3 pods each: their GPUs count while bound and unfinished, terminating or not.
        for (int p = 0, np = pick(4); p < np; ++p) {
          const std::string pod_name = "p-" + std::to_string(pod_count++);
          json pod = gpu_pod(pod_name, name, 1 + pick(4));
          std::string phase = "Running";
          switch (pick(8)) {
            case 0:
              phase = "Succeeded";
              break;
            case 1:
              phase = "Failed";
              break;
            case 2:
              phase = "Pending";  // bound, its containers not started yet
              break;
            case 3:
              pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
              ++out.kinds["terminating"];
              break;
            case 4:
              // An init container asking more than the containers: the pod holds the larger.
              pod["spec"]["initContainers"] =
                  json::array({{{"name", "warm"}, {"resources", {{"requests", {{"nvidia.com/gpu", 5}}}}}}});
              ++out.kinds["init"];
              break;
            default:
              break;
          }
          ++out.kinds[phase];
          pod["status"] = {{"phase", phase}};
          out.objects.push_back({"/api/v1/namespaces/batch/pods", pod});
        }
      }
      leaves.push_back("leaf-" + std::to_string(s) + "-" + std::to_string(l));
      out.objects.push_back({"/apis/topology.volcano.sh/v1alpha1/hypernodes",
                             testing::exact_hypernode(leaves.back(), 1, "Node", members)});
    }
    spine_names.push_back("spine-" + std::to_string(s));
    out.objects.push_back({"/apis/topology.volcano.sh/v1alpha1/hypernodes",
                           testing::exact_hypernode(spine_names.back(), 2, "HyperNode", leaves)});
  }
  if (tiers == 3) {
    out.objects.push_back({"/apis/topology.volcano.sh/v1alpha1/hypernodes",
                           testing::exact_hypernode("top", 3, "HyperNode", spine_names)});
  }
  // Pods no node holds yet ask for GPUs but use none.
  for (int p = 0; p < 3; ++p) {
    json pod = gpu_pod("pending-" + std::to_string(p), "", 8);
    pod["status"] = {{"phase", "Pending"}};
    out.objects.push_back({"/api/v1/namespaces/batch/pods", pod});
    ++out.kinds["unbound"];
  }
  return out;
}

class StatusPlaceAgreement : public ::testing::TestWithParam<int> {
 protected:
  // Through the store's own request handler, as an HTTP POST; status goes through /status, as the
  // kubelet writes it: a create drops it.
  void create(const SeededCluster& cluster) {
    for (const auto& [collection, object] : cluster.objects) {
      auto r = server_.store().handle({.method = "POST", .path = collection, .body = object.dump()});
      ASSERT_EQ(r.status, 201) << r.body;
      if (!object.contains("status")) continue;
      const std::string path = collection + "/" + object["metadata"]["name"].get<std::string>() + "/status";
      r = server_.store().handle({.method = "PUT", .path = path, .body = object.dump()});
      ASSERT_EQ(r.status, 200) << r.body;
    }
  }

  void SetUp() override {
    ASSERT_TRUE(server_.start().has_value());
    kubeconfig_ = (dir_.path() / "kubeconfig").string();
    testing::write_text(kubeconfig_,
                        "apiVersion: v1\nkind: Config\ncurrent-context: loop\nclusters:\n- name: loop\n"
                        "  cluster:\n    server: " +
                            server_.url() +
                            "\ncontexts:\n- name: loop\n  context: {cluster: loop, user: me}\nusers:\n"
                            "- name: me\n  user: {token: t}\n");
  }

  testing::CapturedRun place(int replicas, int tier) {
    const auto job = dir_.path() / "job.json";
    testing::write_text(job, probe_job(replicas, tier).dump());
    return testing::run_captured(cli::run_cli,
                                 {"place", "--kubeconfig", kubeconfig_, "--job", job.string(), "-o", "json"});
  }

  testing::LoopbackApiServer server_;
  testing::TempDir dir_;
  std::string kubeconfig_;
};

TEST_P(StatusPlaceAgreement, TheLargestFreeBlockPerTierIsWhatPlaceFits) {
  const SeededCluster seeded = generate(GetParam());
  create(seeded);
  if (HasFatalFailure()) return;

  std::size_t terminating = 0;
  for (const auto& pod : server_.store().objects("/v1/pods"))
    terminating += pod["metadata"].contains("deletionTimestamp");
  EXPECT_EQ(terminating,
            static_cast<std::size_t>(seeded.kinds.count("terminating") ? seeded.kinds.at("terminating") : 0));

  auto status = testing::run_captured(cli::run_cli, {"status", "--kubeconfig", kubeconfig_, "-o", "json"});
  ASSERT_EQ(status.code, 0) << status.err;
  const json out = json::parse(status.out);
  EXPECT_EQ(out["unschedulableNodes"].get<std::set<std::string>>(), seeded.refusing) << status.out;
  EXPECT_EQ(out["unschedulableReasons"].size(), seeded.refusing.size());

  ASSERT_FALSE(out["largestFreeBlocks"].empty()) << status.out;
  for (const auto& block : out["largestFreeBlocks"]) {
    const int tier = block["tier"].get<int>();
    const int free = block["freeGpus"].get<int>();
    SCOPED_TRACE("tier " + std::to_string(tier) + ": status says " + block["domain"].get<std::string>() +
                 " has " + std::to_string(free) + " free GPUs");
    if (free > 0) {
      auto fits = place(free, tier);
      EXPECT_EQ(fits.code, 0) << fits.out << fits.err;
    }
    auto one_more = place(free + 1, tier);
    EXPECT_EQ(one_more.code, 1) << one_more.out << one_more.err;
    if (one_more.code == 1) {
      EXPECT_EQ(json::parse(one_more.out)["fit"], false);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, StatusPlaceAgreement, ::testing::Range(0, kSeeds));

// Over the seeds, the clusters hold every state the agreement is about, so that it is tested.
TEST(StatusPlaceAgreementCases, TheSeedsCoverEveryNodeAndPodState) {
  std::map<std::string, int> kinds;
  for (int seed = 0; seed < kSeeds; ++seed) {
    for (const auto& [kind, n] : generate(seed).kinds) kinds[kind] += n;
  }
  for (const char* kind : {"cordoned", "NotReady", "NoSchedule", "NoExecute", "PreferNoSchedule", "Running",
                           "Pending", "Succeeded", "Failed", "terminating", "init", "unbound"})
    EXPECT_GT(kinds[kind], 0) << kind;
}

}  // namespace
}  // namespace hypertopo
