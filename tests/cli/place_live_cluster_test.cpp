// `place` and `simulate` reading the live cluster as kubectl does: the same objects give the same
// answer whether they are listed from the API server (the loopback one) or exported to files first,
// a file beside --kubeconfig overrides that kind, and an API server that cannot be reached is an
// error that says so (exit 3).
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
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

// 6,000 Nodes in leaves of 8 to 16 under spines of 10 leaves, and 12,000 bound Pods of 2 GPUs
// spread over all but the last 600 nodes (so a 16-node gang fits only there). The counts are those
// of a large training cluster; they stay the same in the ASan build.
constexpr int kNodes = 6000;
constexpr int kPods = 12000;
constexpr int kBusyNodes = 5400;

std::string node_name(int i) {
  std::string digits = std::to_string(i);
  return "n-" + std::string(5 - digits.size(), '0') + digits;
}

json bound_pod(int i) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "p-" + std::to_string(i)}, {"namespace", i % 2 ? "ml" : "batch"}}},
          {"spec",
           {{"nodeName", node_name(i % kBusyNodes)},
            {"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "2"}}}}}}}}}},
          {"status", {{"phase", "Running"}}}};
}

json gang_job(int replicas) {
  json spec{{"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "8"}}}}}}}}};
  return {{"apiVersion", "batch.volcano.sh/v1alpha1"},
          {"kind", "Job"},
          {"metadata", {{"name", "train"}, {"namespace", "ml"}}},
          {"spec",
           {{"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 2}}},
            {"tasks", {{{"name", "worker"}, {"replicas", replicas}, {"template", {{"spec", spec}}}}}}}}};
}

class PlaceLiveCluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new testing::LoopbackApiServer(testing::LoopbackApiServerOptions{.bearer_token = "t0ken"});
    auto started = server_->start();
    ASSERT_TRUE(started) << started.error().message();
    // Seeded through the store's own request handler: the same create path as an HTTP POST, without
    // 18,000 round trips under ASan.
    auto create = [](const std::string& path, const json& object) {
      auto r = server_->store().handle({.method = "POST", .path = path, .body = object.dump()});
      ASSERT_EQ(r.status, 201) << r.body;
    };
    std::vector<std::string> leaves;
    std::vector<std::string> members;
    int leaf_size = 8;
    for (int i = 0; i < kNodes; ++i) {
      // Status is written through /status, as the kubelet writes it: a create drops it.
      const json node = testing::gpu_node(node_name(i));
      create("/api/v1/nodes", node);
      auto r = server_->store().handle(
          {.method = "PUT", .path = "/api/v1/nodes/" + node_name(i) + "/status", .body = node.dump()});
      ASSERT_EQ(r.status, 200) << r.body;
      members.push_back(node_name(i));
      if (static_cast<int>(members.size()) == leaf_size || i == kNodes - 1) {
        leaves.push_back("leaf-" + std::to_string(leaves.size()));
        create("/apis/topology.volcano.sh/v1alpha1/hypernodes",
               testing::exact_hypernode(leaves.back(), 1, "Node", members));
        members.clear();
        leaf_size = leaf_size == 16 ? 8 : leaf_size + 4;  // 8, 12, 16, 8, ...
      }
    }
    for (std::size_t s = 0; s * 10 < leaves.size(); ++s) {
      std::vector<std::string> under(
          leaves.begin() + static_cast<std::ptrdiff_t>(s * 10),
          leaves.begin() + static_cast<std::ptrdiff_t>(std::min(leaves.size(), s * 10 + 10)));
      create("/apis/topology.volcano.sh/v1alpha1/hypernodes",
             testing::exact_hypernode("spine-" + std::to_string(s), 2, "HyperNode", under));
    }
    for (int i = 0; i < kPods; ++i) {
      const json pod = bound_pod(i);
      create("/api/v1/namespaces/" + pod["metadata"]["namespace"].get<std::string>() + "/pods", pod);
    }
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    kubeconfig_ = write("kubeconfig", kubeconfig_for(server_->url()));
    job_ = write("job.json", gang_job(16).dump());
  }

  static std::string kubeconfig_for(const std::string& url) {
    return "apiVersion: v1\nkind: Config\n"
           "clusters:\n- name: loop\n  cluster:\n    server: " +
           url +
           "\n"
           "users:\n- name: me\n  user:\n    token: t0ken\n"
           "contexts:\n- name: loop\n  context:\n    cluster: loop\n    user: me\n"
           "current-context: loop\n";
  }

  std::string write(const std::string& name, const std::string& text) {
    testing::write_text(dir_.path() / name, text);
    return (dir_.path() / name).string();
  }

  // `kubectl get <collection> -o json` of what the server holds, in the order it lists them.
  std::string exported(const std::string& name, const std::string& collection) {
    return write(name, testing::cluster_list(server_->store().objects(collection)).dump());
  }

  static testing::CapturedRun run(std::vector<std::string> args) {
    return testing::run_captured(cli::run_cli, args);
  }

  static std::set<std::string> placed_nodes(const std::string& out) {
    std::set<std::string> nodes;
    const json result = json::parse(out);
    for (const auto& ps : result["podSets"])
      for (const auto& a : ps["assignment"]) nodes.insert(a["node"].get<std::string>());
    return nodes;
  }

  static testing::LoopbackApiServer* server_;
  testing::TempDir dir_;
  std::string kubeconfig_;
  std::string job_;
};

testing::LoopbackApiServer* PlaceLiveCluster::server_ = nullptr;

TEST_F(PlaceLiveCluster, TheClusterGivesTheAnswerItsExportedFilesGive) {
  const std::size_t lists_before = server_->request_log().size();
  auto live = run({"place", "--kubeconfig", kubeconfig_, "--job", job_});
  ASSERT_EQ(live.code, 0) << live.out << live.err;
  // 6,000 Nodes and 12,000 Pods at 500 a page: paged, not one response each.
  std::size_t pod_pages = 0;
  const auto log = server_->request_log();
  for (std::size_t i = lists_before; i < log.size(); ++i) pod_pages += log[i].path == "/api/v1/pods";
  EXPECT_EQ(pod_pages, static_cast<std::size_t>(kPods / 500));

  auto files = run({"place", "--nodes", exported("nodes.json", "/v1/nodes"), "--pods",
                    exported("pods.json", "/v1/pods"), "--topology",
                    exported("hn.json", "topology.volcano.sh/v1alpha1/hypernodes"), "--job", job_});
  ASSERT_EQ(files.code, 0) << files.err;
  EXPECT_EQ(live.out, files.out);
  EXPECT_EQ(live.err, files.err);

  // The bound pods were counted: all 16 pods land on the nodes no pod uses.
  const auto nodes = placed_nodes(live.out);
  ASSERT_EQ(nodes.size(), 16u) << live.out;
  for (const auto& n : nodes) EXPECT_GE(n, node_name(kBusyNodes)) << live.out;
}

TEST_F(PlaceLiveCluster, ATopologyFileBesideTheClusterOverridesItsHyperNodes) {
  // One leaf (under one spine) of the 16 nodes n-00000..n-00015, which the cluster's pods half fill:
  // the gang of 16 cannot fit there, though it fits on the cluster's own HyperNodes.
  std::vector<std::string> members;
  for (int i = 0; i < 16; ++i) members.push_back(node_name(i));
  const std::string hn = write(
      "one-leaf.json", testing::cluster_list({testing::exact_hypernode("only", 1, "Node", members),
                                              testing::exact_hypernode("top", 2, "HyperNode", {"only"})})
                           .dump());
  auto live = run({"place", "--kubeconfig", kubeconfig_, "--topology", hn, "--job", job_});
  auto files = run({"place", "--nodes", exported("nodes.json", "/v1/nodes"), "--pods",
                    exported("pods.json", "/v1/pods"), "--topology", hn, "--job", job_});
  EXPECT_EQ(live.code, 1) << live.out << live.err;
  EXPECT_EQ(live.code, files.code);
  EXPECT_EQ(live.out, files.out);
  EXPECT_EQ(json::parse(live.out)["fit"], false);
}

TEST_F(PlaceLiveCluster, SimulateStartsFromTheCluster) {
  const std::string trace =
      write("trace.jsonl",
            json{{"time", 0}, {"job", "j"}, {"duration", 10}, {"arrive", gang_job(16)}}.dump() + "\n");
  auto live = run({"simulate", "--kubeconfig", kubeconfig_, "--trace", trace, "-o", "json"});
  ASSERT_EQ(live.code, 0) << live.out << live.err;
  auto files =
      run({"simulate", "--nodes", exported("nodes.json", "/v1/nodes"), "--pods",
           exported("pods.json", "/v1/pods"), "--topology",
           exported("hn.json", "topology.volcano.sh/v1alpha1/hypernodes"), "--trace", trace, "-o", "json"});
  ASSERT_EQ(files.code, 0) << files.err;
  EXPECT_EQ(live.out, files.out);
}

// Pods of the job already running in the cluster: `place` plans the rest around them, as it does
// with the same pods in a --pods file (and as the extender plans such a gang).
TEST_F(PlaceLiveCluster, AJobPartlyRunningInTheClusterIsPlannedAroundItsPods) {
  std::vector<std::string> paths;
  for (int rank = 0; rank < 4; ++rank) {
    json pod = bound_pod(0);
    pod["metadata"]["name"] = "train-worker-" + std::to_string(rank);
    pod["metadata"]["namespace"] = "ml";
    pod["metadata"]["labels"] = {{"volcano.sh/job-name", "train"}};
    pod["metadata"]["annotations"] = {{"scheduling.k8s.io/group-name", "train"},
                                      {"volcano.sh/task-index", std::to_string(rank)}};
    pod["spec"]["nodeName"] = node_name(kNodes - 10 + rank);
    pod["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "8";
    auto r =
        server_->store().handle({.method = "POST", .path = "/api/v1/namespaces/ml/pods", .body = pod.dump()});
    ASSERT_EQ(r.status, 201) << r.body;
    paths.push_back("/api/v1/namespaces/ml/pods/train-worker-" + std::to_string(rank));
  }
  const std::string job = write("job8.json", gang_job(8).dump());
  auto live = run({"place", "--kubeconfig", kubeconfig_, "--job", job});
  auto files = run({"place", "--nodes", exported("nodes.json", "/v1/nodes"), "--pods",
                    exported("pods.json", "/v1/pods"), "--topology",
                    exported("hn.json", "topology.volcano.sh/v1alpha1/hypernodes"), "--job", job});
  for (const auto& path : paths) server_->store().handle({.method = "DELETE", .path = path, .body = ""});
  ASSERT_EQ(live.code, 0) << live.out << live.err;
  EXPECT_EQ(live.out, files.out);
  const json result = json::parse(live.out);
  EXPECT_EQ(result["podSets"][0]["bound"], 4) << live.out;
  EXPECT_NE(result["reason"].get<std::string>().find("4 pods are bound in"), std::string::npos) << live.out;
  for (const auto& a : result["podSets"][0]["assignment"]) {
    if (a["bound"].get<bool>()) {
      EXPECT_GE(a["node"].get<std::string>(), node_name(kNodes - 10)) << live.out;
    }
  }
}

TEST(PlaceLiveClusterErrors, AnUnreachableServerIsNamedAndExits3) {
  testing::TempDir dir;
  testing::LoopbackApiServer server(testing::LoopbackApiServerOptions{.bearer_token = "t0ken"});
  ASSERT_TRUE(server.start());
  const std::string url = server.url();
  server.go_down();  // nothing listens on its port now
  const auto kubeconfig = dir.path() / "kubeconfig";
  testing::write_text(
      kubeconfig, "apiVersion: v1\nkind: Config\nclusters:\n- name: gone\n  cluster:\n    server: " + url +
                      "\nusers:\n- name: me\n  user:\n    token: t0ken\n"
                      "contexts:\n- name: gone\n  context:\n    cluster: gone\n    user: me\n"
                      "current-context: gone\n");
  const auto job = dir.path() / "job.json";
  testing::write_text(job, gang_job(2).dump());
  auto r = testing::run_captured(cli::run_cli,
                                 {"place", "--kubeconfig", kubeconfig.string(), "--job", job.string()});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("hypertopo place: error: reading the cluster of --kubeconfig " + kubeconfig.string()),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("listing nodes"), std::string::npos) << r.err;
}

TEST(PlaceLiveClusterErrors, NoNodesFileAndANamedKubeconfigThatIsAbsentIsInvalid) {
  testing::TempDir dir;
  const auto job = dir.path() / "job.json";
  testing::write_text(job, gang_job(2).dump());
  const std::string absent = (dir.path() / "absent").string();
  auto r = testing::run_captured(cli::run_cli, {"place", "--kubeconfig", absent, "--job", job.string()});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--kubeconfig " + absent + ": no such file"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hypertopo
