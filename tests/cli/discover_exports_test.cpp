// `hypertopo discover -o <export>`: every export format through the same entry point as the binary.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "tests/support/fixtures.h"
#include "topology/exporters/slurm_topology.h"

namespace hypertopo::cli {
namespace {

testing::CapturedRun run_exports(std::vector<std::string> args) {
  return testing::run_captured(run_cli, std::move(args));
}

TEST(DiscoverExports, LabelsAndTopologyObjectsAgree) {
  auto labels = run_exports({"discover", "--source", "demo", "-o", "labels", "--topograph-labels"});
  ASSERT_EQ(labels.code, 0) << labels.err;
  YAML::Node doc = YAML::Load(labels.out);
  ASSERT_EQ(doc.size(), 128u);
  const YAML::Node first = doc["demo-su01-node001"];
  EXPECT_EQ(first["hypertopo.io/tier-3"].as<std::string>(), "core-demo-core-01");
  // topograph numbers fabric tiers from 0 at the leaf: the core of three tiers is tier-2.
  EXPECT_EQ(first["fabric.topograph.run/tier-2"].as<std::string>(), "core-demo-core-01");
  EXPECT_FALSE(first["fabric.topograph.run/tier-3"]);

  auto kueue = run_exports(
      {"discover", "--source", "demo", "-o", "kueue-topology", "--label-prefix", "example.com/t"});
  ASSERT_EQ(kueue.code, 0) << kueue.err;
  auto k = nlohmann::json::parse(kueue.out);
  EXPECT_EQ(k["spec"]["levels"][0]["nodeLabel"], "example.com/t3");
  EXPECT_EQ(k["spec"]["levels"].back()["nodeLabel"], "kubernetes.io/hostname");
  auto kai = run_exports({"discover", "--source", "demo", "-o", "kai-topology"});
  ASSERT_EQ(kai.code, 0) << kai.err;
  EXPECT_EQ(nlohmann::json::parse(kai.out)["kind"], "Topology");
}

TEST(DiscoverExports, KueueTopologyApiVersionIsChosenByFlag) {
  auto by_default = run_exports({"discover", "--source", "demo", "-o", "kueue-topology"});
  ASSERT_EQ(by_default.code, 0) << by_default.err;
  const auto plain = nlohmann::json::parse(by_default.out);
  EXPECT_EQ(plain["apiVersion"], "kueue.x-k8s.io/v1beta2");
  for (const std::string version : {"v1beta1", "v1beta2"}) {
    auto chosen =
        run_exports({"discover", "--source", "demo", "-o", "kueue-topology", "--kueue-api-version", version});
    ASSERT_EQ(chosen.code, 0) << version << ": " << chosen.err;
    const auto topology = nlohmann::json::parse(chosen.out);
    EXPECT_EQ(topology["apiVersion"], "kueue.x-k8s.io/" + version);
    EXPECT_EQ(topology["kind"], "Topology");
    // Both versions carry the same levels: only the apiVersion differs.
    EXPECT_EQ(topology["spec"], plain["spec"]) << version;
  }
  auto bad = run_exports(
      {"discover", "--source", "demo", "-o", "kueue-topology", "--kueue-api-version", "v1alpha1"});
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_TRUE(bad.out.empty()) << bad.out;
  EXPECT_NE(bad.err.find("--kueue-api-version"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("v1alpha1"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("v1beta1, v1beta2"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;

  auto help = run_exports({"discover", "--help"});
  EXPECT_NE(help.out.find("--kueue-api-version"), std::string::npos) << help.out;
}

TEST(DiscoverExports, SlurmFormatsListEveryHostOnce) {
  for (const char* format : {"slurm-tree", "slurm-block"}) {
    auto r = run_exports({"discover", "--source", "demo", "-o", format});
    ASSERT_EQ(r.code, 0) << r.err;
    std::set<std::string> hosts;
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
      const auto at = line.find(" Nodes=");
      if (line.starts_with("#") || at == std::string::npos) continue;
      auto names = topology::exporters::expand_hostlist(line.substr(at + 7));
      ASSERT_TRUE(names.has_value()) << line;
      for (const auto& n : *names) EXPECT_TRUE(hosts.insert(n).second) << format << " " << n;
    }
    EXPECT_EQ(hosts.size(), 128u) << format;
  }
  auto yaml = run_exports({"discover", "--source", "demo", "-o", "slurm-yaml"});
  ASSERT_EQ(yaml.code, 0) << yaml.err;
  EXPECT_EQ(YAML::Load(yaml.out).size(), 2u);
}

TEST(DiscoverExports, DotIsColouredByCapacityWhenGpusAreKnown) {
  auto plain = run_exports({"discover", "--source", "demo", "-o", "dot"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("cluster_legend"), std::string::npos);
  auto coloured = run_exports({"discover", "--source", "demo", "-o", "dot", "--assume-gpus-per-node", "8"});
  ASSERT_EQ(coloured.code, 0) << coloured.err;
  EXPECT_NE(coloured.out.find("cluster_legend"), std::string::npos);
  EXPECT_NE(coloured.out.find("GPUs 0/1024 used"), std::string::npos) << "the core holds 128 nodes x 8 GPUs";
}

// The capacity picture counts a pod's GPUs by placement's rule: its requests (what kube-scheduler
// reads; limits alone count nothing), finished pods not at all; a fraction of a GPU is an error
// naming the pod, in `discover -o dot` and in `place` alike.
TEST(DiscoverExports, DotCountsGpusByPlacementsRule) {
  testing::TempDir dir;
  auto pod = [](const std::string& name, const std::string& kind, const std::string& gpus,
                const std::string& phase) {
    return nlohmann::json{
        {"metadata", {{"name", name}, {"namespace", "ml"}}},
        {"spec",
         {{"nodeName", "demo-su01-node001"},
          {"containers", {{{"name", "main"}, {"resources", {{kind, {{"nvidia.com/gpu", gpus}}}}}}}}}},
        {"status", {{"phase", phase}}}};
  };
  const auto write = [&](const std::string& file, const nlohmann::json& items) {
    testing::write_text(dir.path() / file, nlohmann::json{{"kind", "PodList"}, {"items", items}}.dump());
    return (dir.path() / file).string();
  };
  const std::string counted = write(
      "pods.json", {pod("running", "requests", "4", "Running"), pod("limits-only", "limits", "2", "Running"),
                    pod("done", "requests", "8", "Succeeded")});
  auto dot = run_exports(
      {"discover", "--source", "demo", "-o", "dot", "--assume-gpus-per-node", "8", "--pods", counted});
  ASSERT_EQ(dot.code, 0) << dot.err;
  EXPECT_NE(dot.out.find("GPUs 4/1024 used"), std::string::npos) << "only the running pod's requests count";

  const std::string half =
      write("half.json", nlohmann::json::array({pod("half-gpu", "requests", "500m", "Running")}));
  auto bad_dot = run_exports(
      {"discover", "--source", "demo", "-o", "dot", "--assume-gpus-per-node", "8", "--pods", half});
  EXPECT_NE(bad_dot.code, 0);
  EXPECT_TRUE(bad_dot.out.empty()) << bad_dot.out;
  EXPECT_NE(bad_dot.err.find("pod ml/half-gpu"), std::string::npos) << bad_dot.err;
  EXPECT_NE(bad_dot.err.find("'500m' is a fraction"), std::string::npos) << bad_dot.err;

  const std::filesystem::path examples = std::filesystem::path(HYPERTOPO_SOURCE_DIR) / "examples" / "place";
  auto place = run_exports({"place", "--nodes", (examples / "nodes.json").string(), "--pods", half,
                            "--topology", (examples / "kueue-topology.yaml").string(), "--job",
                            (examples / "kueue-job.yaml").string()});
  EXPECT_EQ(place.code, 2) << place.out;
  EXPECT_NE(place.err.find("pod ml/half-gpu"), std::string::npos) << place.err;
  EXPECT_NE(place.err.find("'500m' is a fraction"), std::string::npos) << place.err;
}

}  // namespace
}  // namespace hypertopo::cli
