// The cloud providers' own topology labels as presets of the labels source: `hypertopo discover
// --source labels:preset=NAME --nodes nodes.json` and `preset: NAME` in the agent's YAML, over Node
// lists shaped as each provider labels its GPU nodes (label_presets.h cites each provider's page).
#include "discoverers/labels/label_presets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "agent/config/agent_config.h"
#include "cli/commands.h"
#include "discoverers/labels/labels_source.h"
#include "tests/support/fixtures.h"

namespace hypertopo::discoverers {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

struct Host {
  std::string name;
  std::map<std::string, std::string> labels;
};

// Node objects as `kubectl get nodes -o json` lists them.
json node_list(const std::vector<Host>& hosts) {
  json items = json::array();
  for (const Host& h : hosts) {
    json labels = {{"kubernetes.io/hostname", h.name}};
    for (const auto& [k, v] : h.labels) labels[k] = v;
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata", {{"name", h.name}, {"labels", labels}}},
                     {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
  }
  return {{"apiVersion", "v1"}, {"kind", "NodeList"}, {"items", items}};
}

k8s::NodeList nodes_of(const std::vector<Host>& hosts) {
  k8s::NodeList list;
  for (const Host& h : hosts) {
    k8s::NodeInfo n;
    n.name = h.name;
    n.labels = h.labels;
    n.labels["kubernetes.io/hostname"] = h.name;
    list.items.push_back(n);
  }
  return list;
}

// Eight p5 nodes as EKS labels them (values as the EC2 topology API gives them, "nn-" + hex): one
// layer-1 node, two layer-2 nodes, four layer-3 nodes of two hosts each.
std::vector<Host> eks_hosts() {
  std::vector<Host> hosts;
  for (int i = 0; i < 8; ++i) {
    hosts.push_back(
        {"ip-10-0-0-" + std::to_string(10 + i) + ".ec2.internal",
         {{"node.kubernetes.io/instance-type", "p5.48xlarge"},
          {"topology.k8s.aws/network-node-layer-1", "nn-e50490a237cb0f01a"},
          {"topology.k8s.aws/network-node-layer-2", i < 4 ? "nn-3c0b2a1f9d8e7a6b5" : "nn-4d1c3b2a0e9f8b7c6"},
          {"topology.k8s.aws/network-node-layer-3", "nn-5e2d4c3b1f0a9c8d" + std::to_string(i / 2)}}});
  }
  return hosts;
}

// Six A4 nodes as GKE labels them in a reserved block: one block, two sub-blocks, a host per VM.
std::vector<Host> gke_hosts() {
  std::vector<Host> hosts;
  for (int i = 0; i < 6; ++i) {
    hosts.push_back({"gke-a4-pool-8f2c1d0e-" + std::to_string(i),
                     {{"cloud.google.com/gke-accelerator", "nvidia-b200"},
                      {"cloud.google.com/gce-topology-block", "7b1e0cbd3a5f2c8e"},
                      {"cloud.google.com/gce-topology-subblock", i < 3 ? "0d2e4f6a" : "1e3f5a7b"},
                      {"cloud.google.com/gce-topology-host", "c8a1b2d3e4f5a6b" + std::to_string(i)}}});
  }
  return hosts;
}

// Six InfiniBand nodes as CoreWeave labels them: one fabric, two leaf groups.
std::vector<Host> coreweave_hosts() {
  std::vector<Host> hosts;
  for (int i = 0; i < 6; ++i) {
    hosts.push_back({"g" + std::to_string(100 + i) + "c3",
                     {{"backend.coreweave.cloud/flavor", "infiniband"},
                      {"backend.coreweave.cloud/fabric", "us-east-04a-ib"},
                      {"backend.coreweave.cloud/leafgroup", i < 4 ? "lg07" : "lg08"},
                      {"node.coreweave.cloud/rack", std::to_string(40 + i / 2)}}});
  }
  return hosts;
}

// Four nodes labelled by NVIDIA topograph's Kubernetes engine: one core, one spine, two leaves.
std::vector<Host> topograph_hosts() {
  std::vector<Host> hosts;
  for (int i = 0; i < 4; ++i) {
    hosts.push_back({"dgx-" + std::to_string(i),
                     {{"network.topology.nvidia.com/core", "s3"},
                      {"network.topology.nvidia.com/spine", "s2"},
                      {"network.topology.nvidia.com/leaf", i < 2 ? "s1a" : "s1b"}}});
  }
  return hosts;
}

// Per tier: (tier name, number of domains); and the node sets of the tier-1 domains.
struct Shape {
  std::map<int, std::pair<std::string, int>> tiers;
  std::set<std::set<std::string>> tier1_nodes;
};

Shape shape_of(const topology::Tree& tree) {
  Shape s;
  for (const auto& d : tree.domains()) {
    auto& t = s.tiers[d.tier];
    t.first = d.tier_name;
    ++t.second;
    if (d.tier == 1) s.tier1_nodes.insert(std::set<std::string>(d.nodes.begin(), d.nodes.end()));
  }
  return s;
}

const DiscovererRegistry& registry() {
  static const DiscovererRegistry r = [] {
    DiscovererRegistry reg;
    register_builtin_discoverers(reg);
    return reg;
  }();
  return r;
}

std::expected<Discovery, Error> discover(const SourceSpec& spec, const k8s::NodeList& nodes) {
  DiscoveryDeps deps;
  deps.nodes = &nodes;
  auto source = registry().create(spec, deps);
  if (!source) return std::unexpected(source.error());
  return (*source)->discover();
}

TEST(LabelPresets, EksLayersOneToThreeAreTiersThreeToOne) {
  auto found = discover({"labels", "preset=eks", nullptr}, nodes_of(eks_hosts()));
  ASSERT_TRUE(found.has_value()) << found.error().message();
  ASSERT_TRUE(found->tree.has_value());
  const Shape s = shape_of(*found->tree);
  EXPECT_EQ(s.tiers.at(3), std::make_pair(std::string("topology.k8s.aws/network-node-layer-1"), 1));
  EXPECT_EQ(s.tiers.at(2), std::make_pair(std::string("topology.k8s.aws/network-node-layer-2"), 2));
  EXPECT_EQ(s.tiers.at(1), std::make_pair(std::string("topology.k8s.aws/network-node-layer-3"), 4));
  EXPECT_EQ(s.tiers.size(), 3u);
  EXPECT_TRUE(s.tier1_nodes.contains({"ip-10-0-0-10.ec2.internal", "ip-10-0-0-11.ec2.internal"}));
  EXPECT_TRUE(found->warnings.empty()) << found->warnings.front();
  EXPECT_TRUE(topology::check_invariants(*found->tree).has_value());
}

TEST(LabelPresets, EksFourLayerInstancesTakeLayerFourAsTheBottom) {
  std::vector<Host> hosts = eks_hosts();
  for (std::size_t i = 0; i < hosts.size(); ++i)
    hosts[i].labels["topology.k8s.aws/network-node-layer-4"] = "nn-6f3e" + std::to_string(i);
  auto found = discover({"labels", "preset=eks-4-layers", nullptr}, nodes_of(hosts));
  ASSERT_TRUE(found.has_value()) << found.error().message();
  const Shape s = shape_of(*found->tree);
  EXPECT_EQ(s.tiers.size(), 4u);
  EXPECT_EQ(s.tiers.at(1), std::make_pair(std::string("topology.k8s.aws/network-node-layer-4"), 8));
  EXPECT_EQ(s.tiers.at(4), std::make_pair(std::string("topology.k8s.aws/network-node-layer-1"), 1));
}

TEST(LabelPresets, GkeBlockSubblockHost) {
  auto found = discover({"labels", "preset=gke", nullptr}, nodes_of(gke_hosts()));
  ASSERT_TRUE(found.has_value()) << found.error().message();
  const Shape s = shape_of(*found->tree);
  EXPECT_EQ(s.tiers.at(3), std::make_pair(std::string("cloud.google.com/gce-topology-block"), 1));
  EXPECT_EQ(s.tiers.at(2), std::make_pair(std::string("cloud.google.com/gce-topology-subblock"), 2));
  EXPECT_EQ(s.tiers.at(1), std::make_pair(std::string("cloud.google.com/gce-topology-host"), 6));
  EXPECT_TRUE(s.tier1_nodes.contains({"gke-a4-pool-8f2c1d0e-0"}));
}

TEST(LabelPresets, CoreweaveFabricLeafgroup) {
  auto found = discover({"labels", "preset=coreweave", nullptr}, nodes_of(coreweave_hosts()));
  ASSERT_TRUE(found.has_value()) << found.error().message();
  const Shape s = shape_of(*found->tree);
  EXPECT_EQ(s.tiers.size(), 2u);
  EXPECT_EQ(s.tiers.at(2), std::make_pair(std::string("backend.coreweave.cloud/fabric"), 1));
  EXPECT_EQ(s.tiers.at(1), std::make_pair(std::string("backend.coreweave.cloud/leafgroup"), 2));
  EXPECT_TRUE(s.tier1_nodes.contains({"g104c3", "g105c3"}));
}

TEST(LabelPresets, TopographCoreSpineLeaf) {
  auto found = discover({"labels", "preset=topograph", nullptr}, nodes_of(topograph_hosts()));
  ASSERT_TRUE(found.has_value()) << found.error().message();
  const Shape s = shape_of(*found->tree);
  EXPECT_EQ(s.tiers.at(3), std::make_pair(std::string("network.topology.nvidia.com/core"), 1));
  EXPECT_EQ(s.tiers.at(2), std::make_pair(std::string("network.topology.nvidia.com/spine"), 1));
  EXPECT_EQ(s.tiers.at(1), std::make_pair(std::string("network.topology.nvidia.com/leaf"), 2));
  EXPECT_TRUE(s.tier1_nodes.contains({"dgx-0", "dgx-1"}));
}

TEST(LabelPresets, AnUnknownPresetNamesTheKnownOnes) {
  auto found = discover({"labels", "preset=aks", nullptr}, nodes_of(eks_hosts()));
  ASSERT_FALSE(found.has_value());
  EXPECT_THAT(found.error().message(),
              HasSubstr("unknown label preset 'aks' (known: eks, eks-4-layers, gke, coreweave, topograph)"));
  EXPECT_EQ(labels::label_presets().size(), 5u);
}

// The command a user runs: the tree the provider's labels describe, as HyperNodes.
TEST(LabelPresets, DiscoverWithAPresetOnTheCommandLine) {
  testing::TempDir dir;
  for (const auto& [preset, hosts, tiers] :
       std::vector<std::tuple<std::string, std::vector<Host>, int>>{{"eks", eks_hosts(), 3},
                                                                    {"gke", gke_hosts(), 3},
                                                                    {"coreweave", coreweave_hosts(), 2},
                                                                    {"topograph", topograph_hosts(), 3}}) {
    const auto file = dir.path() / (preset + "-nodes.json");
    testing::write_text(file, node_list(hosts).dump());
    auto run = testing::run_captured(cli::run_cli, {"discover", "--source", "labels:preset=" + preset,
                                                    "--nodes", file.string(), "-o", "json"});
    ASSERT_EQ(run.code, 0) << preset << ": " << run.err;
    const json out = json::parse(run.out);
    std::set<int> seen;
    std::set<std::string> tier1_members;
    for (const auto& hn : out["items"]) {
      seen.insert(hn["spec"]["tier"].get<int>());
      if (hn["spec"]["tier"] == 1)
        for (const auto& m : hn["spec"]["members"]) tier1_members.insert(m["selector"]["exactMatch"]["name"]);
    }
    EXPECT_EQ(static_cast<int>(seen.size()), tiers) << preset << "\n" << run.out;
    EXPECT_EQ(tier1_members.size(), hosts.size()) << preset << ": every node sits in a tier-1 HyperNode";
  }
}

// The agent's YAML alone: `preset: eks` under a labels source.
TEST(LabelPresets, TheAgentYamlTakesAPreset) {
  auto config =
      agent::parse_agent_config("sources:\n  - {kind: labels, config: {preset: eks}}\n", "config.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  ASSERT_EQ(config->sources.size(), 1u);
  EXPECT_EQ(config->sources[0].spec(), "labels:preset=eks");
  auto found = discover({"labels", "", config->sources[0].settings}, nodes_of(eks_hosts()));
  ASSERT_TRUE(found.has_value()) << found.error().message();
  EXPECT_EQ(shape_of(*found->tree).tiers.size(), 3u);

  for (const auto& [yaml, message] : std::vector<std::pair<std::string, std::string>>{
           {"sources:\n  - {kind: labels, config: {preset: aks}}\n",
            "config.yaml: sources[0].config.preset: unknown label preset 'aks'"},
           {"sources:\n  - {kind: labels, config: {preset: eks, file: l.yaml}}\n",
            "config.yaml: sources[0].config.preset: give one of file, networkTopologyTypes or preset"}}) {
    auto bad = agent::parse_agent_config(yaml, "config.yaml");
    ASSERT_FALSE(bad.has_value()) << yaml;
    EXPECT_THAT(bad.error().message(), HasSubstr(message)) << yaml;
  }
}

// Volcano's rule drops the last networkTopologyTypes entry as the node level: the three EKS layers
// listed alone give two tiers, and the config says so.
TEST(LabelPresets, ALastEntryThatIsNoHostnameLabelIsAWarning) {
  testing::TempDir dir;
  const auto config = dir.path() / "labels.yaml";
  testing::write_text(config,
                      "networkTopologyTypes:\n"
                      "  eks:\n"
                      "  - nodeLabel: topology.k8s.aws/network-node-layer-1\n"
                      "  - nodeLabel: topology.k8s.aws/network-node-layer-2\n"
                      "  - nodeLabel: topology.k8s.aws/network-node-layer-3\n");
  auto found = discover({"labels", config.string(), nullptr}, nodes_of(eks_hosts()));
  ASSERT_TRUE(found.has_value()) << found.error().message();
  EXPECT_EQ(shape_of(*found->tree).tiers.size(), 2u);
  ASSERT_EQ(found->warnings.size(), 1u);
  EXPECT_THAT(found->warnings[0],
              HasSubstr("networkTopologyTypes.eks: the last entry "
                        "'topology.k8s.aws/network-node-layer-3' is taken as the node level"));
  EXPECT_THAT(found->warnings[0], HasSubstr("list kubernetes.io/hostname last"));
}

}  // namespace
}  // namespace hypertopo::discoverers
