// `hypertopo discover` end to end through the same entry point as the binary.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "tests/support/fixtures.h"

namespace hypertopo::cli {
namespace {

using Run = hypertopo::testing::CapturedRun;

Run run(std::vector<std::string> args) { return hypertopo::testing::run_captured(run_cli, std::move(args)); }

TEST(DiscoverCommand, DemoPrintsTheTreeAndWritesManifests) {
  testing::TempDir dir;
  auto manifests = (dir.path() / "hn.yaml").string();
  auto r = run({"discover", "--source", "demo", "--write-manifests", manifests});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("tier 3  core-demo-core-01  [core]  128 nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unmapped endpoints: 2"), std::string::npos);
  EXPECT_NE(r.err.find("2 unmapped endpoint(s)"), std::string::npos) << r.err;
  auto docs = YAML::LoadAll(testing::read_text(manifests));
  EXPECT_EQ(docs.size(), 7u);
}

TEST(DiscoverCommand, JsonIsAV1ListOfHyperNodes) {
  HT_REQUIRE_FIXTURE(capture, "ibnetdiscover/topograph-example.out");
  auto r = run({"discover", "--source", "ibnetdiscover:" + capture.string(), "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto list = nlohmann::json::parse(r.out);
  EXPECT_EQ(list["kind"], "List");
  EXPECT_EQ(list["items"].size(), 9u);
  EXPECT_NE(r.err.find("69 unmapped endpoint(s)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("40 SHARP aggregation node(s) excluded"), std::string::npos) << r.err;
}

TEST(DiscoverCommand, NodesListExcludesHostsThatAreNotNodes) {
  HT_REQUIRE_FIXTURE(capture, "ibnetdiscover/ibtopotool-3.topo");
  testing::TempDir dir;
  auto nodes = dir.path() / "nodes.json";
  testing::write_text(nodes, R"({"kind":"NodeList","items":[
    {"kind":"Node","metadata":{"name":"r-ufm101"}},
    {"kind":"Node","metadata":{"name":"gpu-7","annotations":{"hypertopo.io/ib-port-guids":"0x0002c9030006ba5b"}}}]})");
  auto r = run(
      {"discover", "--source", "ibnetdiscover:" + capture.string(), "--nodes", nodes.string(), "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto list = nlohmann::json::parse(r.out);
  std::set<std::string> members;
  for (const auto& item : list["items"]) {
    for (const auto& m : item["spec"]["members"]) {
      if (m["type"] == "Node") members.insert(m["selector"]["exactMatch"]["name"]);
    }
  }
  // r-ufm101's second HCA is mapped by GUID to gpu-7; the UFM servers that are not nodes are listed.
  EXPECT_EQ(members, (std::set<std::string>{"gpu-7", "r-ufm101"}));
  EXPECT_NE(r.err.find("host(s) excluded: not in the --nodes list"), std::string::npos) << r.err;
}

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// The real capture names two generic hosts and a UFM appliance: without --nodes none of them is a
// node (not in the tree, not in topology.conf), and one warning names all three; keepHosts keeps them.
TEST(DiscoverCommand, GenericHostsAndAppliancesOfARawCaptureAreSetAsideWithOneWarning) {
  HT_REQUIRE_FIXTURE(capture, "ibnetdiscover/topograph-example.out");
  const std::string source = "ibnetdiscover:" + capture.string();
  const std::vector<std::string> names = {"localhost", "ubuntu", "b11-p1-cufm-02"};
  auto slurm = run({"discover", "--source", source, "-o", "slurm-tree"});
  ASSERT_EQ(slurm.code, 0) << slurm.err;
  for (const auto& name : names) {
    EXPECT_EQ(slurm.out.find(name), std::string::npos) << name << " in\n" << slurm.out;
    EXPECT_EQ(occurrences(slurm.err, name), 1u) << name << " in\n" << slurm.err;
  }
  EXPECT_EQ(occurrences(slurm.err, "set aside"), 1u) << slurm.err;
  EXPECT_NE(slurm.err.find("hypertopo: warning: 3 host(s) set aside, not compute nodes: b11-p1-cufm-02 "
                           "(appliance), localhost (generic host name), ubuntu (generic host name); "),
            std::string::npos)
      << slurm.err;

  auto tree = run({"discover", "--source", source, "-o", "json"});
  ASSERT_EQ(tree.code, 0) << tree.err;
  for (const auto& name : names) EXPECT_EQ(tree.out.find("\"" + name + "\""), std::string::npos) << name;

  testing::TempDir dir;
  const auto config = dir.path() / "keep.yaml";
  testing::write_text(config, "keepHosts: [localhost, ubuntu, 'b11-p1-cufm-.*']\n");
  auto kept = run({"discover", "--source", source, "--config", config.string(), "-o", "slurm-tree"});
  ASSERT_EQ(kept.code, 0) << kept.err;
  for (const auto& name : names)
    EXPECT_NE(kept.out.find(name), std::string::npos) << name << "\n" << kept.out;
  EXPECT_EQ(kept.err.find("set aside"), std::string::npos) << kept.err;

  testing::write_text(config, "keepHosts: ['(']\n");
  auto bad = run({"discover", "--source", source, "--config", config.string()});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find(config.string() + ": keepHosts"), std::string::npos) << bad.err;
}

// kubectl apply drops status (a subresource): -o yaml and -o json say so once when they carry it,
// and -o tree, which kubectl never reads, says nothing.
TEST(DiscoverCommand, ManifestsCarryingStatusWarnOnceThatKubectlDropsIt) {
  HT_REQUIRE_FIXTURE(capture, "ibnetdiscover/topograph-example.out");
  const std::string source = "ibnetdiscover:" + capture.string();
  for (const std::string format : {"yaml", "json"}) {
    auto r = run({"discover", "--source", source, "-o", format});
    ASSERT_EQ(r.code, 0) << r.err;
    ASSERT_NE(r.out.find("FabricDegraded"), std::string::npos) << "the capture has degraded leaves";
    EXPECT_EQ(occurrences(r.err, "`kubectl apply` drops"), 1u) << r.err;
    EXPECT_NE(r.err.find("hypertopo apply"), std::string::npos) << r.err;
  }
  auto text = run({"discover", "--source", source});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.err.find("kubectl apply"), std::string::npos) << text.err;
  // The demo fabric is healthy: no status, no warning.
  auto healthy = run({"discover", "--source", "demo", "-o", "yaml"});
  ASSERT_EQ(healthy.code, 0) << healthy.err;
  EXPECT_EQ(healthy.out.find("status:"), std::string::npos);
  EXPECT_EQ(healthy.err.find("kubectl apply"), std::string::npos) << healthy.err;
}

TEST(DiscoverCommand, BadInputEndsInOneClearLine) {
  testing::TempDir dir;
  auto bad = dir.path() / "bad.out";
  testing::write_text(bad, "Switch 8 \"S-10\" # \"a\"\n[1] \"S-2");
  auto r = run({"discover", "--source", "ibnetdiscover:" + bad.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("hypertopo discover: error: source ibnetdiscover:" + bad.string() + ": " +
                       bad.string() + ":2:"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty());

  auto unknown = run({"discover", "--source", "nosuch:x"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("unknown source kind 'nosuch'"), std::string::npos) << unknown.err;

  auto missing = run({"discover", "--source", "ibnetdiscover:/nonexistent.out"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("/nonexistent.out: cannot open"), std::string::npos) << missing.err;

  auto format = run({"discover", "--source", "demo", "-o", "xml"});
  EXPECT_NE(format.code, 0);

  // A source whose argument does not read is named once, not once per layer that passes the error on.
  auto config = dir.path() / "labels.yaml";
  testing::write_text(config, "networkTopologyTypes:\n  rack: [{nodeLabel: rack, tier: 1}]\n");
  auto labels =
      run({"discover", "--source", "labels:" + config.string(), "--nodes", "examples/simulate/nodes.json"});
  EXPECT_EQ(labels.code, 2);
  const std::string who = "source labels:" + config.string() + ": ";
  const auto first = labels.err.find(who);
  ASSERT_NE(first, std::string::npos) << labels.err;
  EXPECT_EQ(labels.err.find(who, first + who.size()), std::string::npos) << labels.err;
}

// NodeReports whose rails saw their ToR over LLDP build nothing by themselves: the roce source
// does. The empty tree comes with the line that says so, and with it the RoCE tree.
TEST(DiscoverCommand, ReportsWithLldpNeighboursSayWhichSourceBuildsTheirTree) {
  testing::TempDir dir;
  const auto reports = dir.path() / "reports";
  for (int host = 1; host <= 4; ++host) {
    const std::string name = "h" + std::to_string(host);
    const std::string leaf = host <= 2 ? "leaf-1" : "leaf-2";
    testing::write_text(
        reports / (name + ".json"),
        R"({"apiVersion": "hypertopo.io/v1alpha1", "kind": "NodeReport", "metadata": {"name": ")" + name +
            R"("}, "spec": {"nodeName": ")" + name +
            R"(", "probedAt": "2026-01-02T03:04:05Z", "roce": [{"netdev": "rail0", "lldpNeighbor": {"chassisId": "aa:bb:cc:dd:ee:0)" +
            std::to_string(host <= 2 ? 1 : 2) + R"(", "systemName": ")" + leaf + R"(", "portId": "swp)" +
            std::to_string(host) + R"("}}]}})");
  }
  auto alone = run({"discover", "--source", "reports:" + reports.string()});
  ASSERT_EQ(alone.code, 0) << alone.err;
  EXPECT_NE(alone.err.find("4 NodeReport(s) carry LLDP neighbours"), std::string::npos) << alone.err;
  EXPECT_NE(alone.err.find("add --source roce"), std::string::npos) << alone.err;

  auto with_roce = run({"discover", "--source", "reports:" + reports.string(), "--source", "roce"});
  ASSERT_EQ(with_roce.code, 0) << with_roce.err;
  EXPECT_EQ(with_roce.err.find("the tree is empty"), std::string::npos) << with_roce.err;
  EXPECT_NE(with_roce.out.find("leaf-1"), std::string::npos) << with_roce.out;
  EXPECT_NE(with_roce.out.find("leaf-2"), std::string::npos) << with_roce.out;
}

// During a rolling upgrade reports come from newer agents: a key this version does not read is a
// warning naming the key and a report that has it, once per kind of key, and the report still
// counts. A misspelt key (`neighbor` for `lldpNeighbor`) is said the same way instead of losing the
// neighbour in silence.
TEST(DiscoverCommand, UnknownNodeReportKeysAreOneWarningPerKeyAndTheReportsStillCount) {
  testing::TempDir dir;
  const auto reports = dir.path() / "reports";
  for (int host = 1; host <= 4; ++host) {
    const std::string name = "h" + std::to_string(host);
    const std::string leaf = host <= 2 ? "leaf-1" : "leaf-2";
    const std::string neighbor_key = host <= 2 ? "lldpNeighbor" : "neighbor";
    const std::string extra = host == 4 ? R"(, "rdmaHealth": {"errors": 0})" : "";
    testing::write_text(
        reports / (name + ".json"),
        R"({"apiVersion": "hypertopo.io/v1alpha1", "kind": "NodeReport", "metadata": {"name": ")" + name +
            R"("}, "spec": {"nodeName": ")" + name + R"(", "probedAt": "2026-01-02T03:04:05Z")" + extra +
            R"(, "roce": [{"netdev": "rail0", ")" + neighbor_key + R"(": {"chassisId": "aa:bb:cc:dd:ee:0)" +
            std::to_string(host <= 2 ? 1 : 2) + R"(", "systemName": ")" + leaf + R"(", "portId": "swp)" +
            std::to_string(host) + R"("}}]}})");
  }
  auto r = run({"discover", "--source", "reports:" + reports.string(), "--source", "roce"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto lines_with = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto at = r.err.find(needle); at != std::string::npos; at = r.err.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(lines_with("unknown key"), 2u) << r.err;
  EXPECT_EQ(lines_with("unknown key spec.roce[].neighbor"), 1u) << r.err;
  EXPECT_NE(r.err.find("hypertopo: warning: NodeReport h3 (" + (reports / "h3.json").string() +
                       "): unknown key spec.roce[].neighbor ignored (also in 1 other reports)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("NodeReport h4 (" + (reports / "h4.json").string() +
                       "): unknown key spec.rdmaHealth ignored;"),
            std::string::npos)
      << r.err;
  // The known fields still work: h1 and h2 (lldpNeighbor) make leaf-1; h3 and h4 said nothing we read.
  EXPECT_NE(r.out.find("leaf-1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("leaf-2"), std::string::npos) << r.out;
}

TEST(DiscoverCommand, HelpListsSources) {
  auto r = run({"discover", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("ibnetdiscover: a saved ibnetdiscover capture"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("demo: the built-in"), std::string::npos);
}

// Three machines all called node-a (one per leaf), and node-b / Node-B on two leaves: each name
// is several machines, not one host with a rail per leaf (a host's HCAs have different device
// names). They are left out of the tree with a warning naming the switches, not folded into one
// host that would join three leaves into one domain.
TEST(DiscoverCommand, HcasSharingOneDescriptionOnDifferentLeavesAreNotFoldedIntoOneHost) {
  testing::TempDir dir;
  struct Ca {
    const char* guid;
    const char* desc;
    int leaf;
  };
  const std::vector<Ca> cas = {
      {"0000000000000101", "node-a mlx5_0", 1}, {"0000000000000102", "node-a mlx5_0", 2},
      {"0000000000000103", "node-a mlx5_0", 3}, {"0000000000000111", "n1 mlx5_0", 1},
      {"0000000000000112", "n2 mlx5_0", 2},     {"0000000000000113", "n3 mlx5_0", 3},
      {"0000000000000114", "n4 mlx5_0", 1},     {"0000000000000121", "Node-B mlx5_0", 1},
      {"0000000000000122", "node-b mlx5_0", 2}};
  std::string capture;
  for (int leaf = 1; leaf <= 3; ++leaf) {
    capture += "Switch 8 \"S-000000000000001" + std::to_string(leaf) + "\" # \"MF0;Leaf-0" +
               std::to_string(leaf) + ":MQM8700/U1\" enhanced port 0 lid 1" + std::to_string(leaf) +
               " lmc 0\n";
    capture += "[1] \"S-0000000000000021\"[" + std::to_string(leaf) +
               "] # \"MF0;Spine-01:MQM8700/U1\" lid 21 4xNDR\n";
    int port = 2;
    for (const auto& ca : cas) {
      if (ca.leaf != leaf) continue;
      capture +=
          "[" + std::to_string(port++) + "] \"H-" + ca.guid + "\"[1] # \"" + ca.desc + "\" lid 100 4xNDR\n";
    }
    capture += "\n";
  }
  capture += "Switch 8 \"S-0000000000000021\" # \"MF0;Spine-01:MQM8700/U1\" enhanced port 0 lid 21 lmc 0\n";
  for (int leaf = 1; leaf <= 3; ++leaf) {
    capture += "[" + std::to_string(leaf) + "] \"S-000000000000001" + std::to_string(leaf) +
               "\"[1] # \"MF0;Leaf-0" + std::to_string(leaf) + ":MQM8700/U1\" lid 1" + std::to_string(leaf) +
               " 4xNDR\n";
  }
  capture += "\n";
  for (const auto& ca : cas) capture += std::string("Ca 1 \"H-") + ca.guid + "\" # \"" + ca.desc + "\"\n\n";
  const auto path = dir.path() / "capture.out";
  testing::write_text(path, capture);

  auto r = run({"discover", "--source", "ibnetdiscover:" + path.string(), "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("\"node-a\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"node-b\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"n4\""), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("3 HCAs describe themselves as 'node-a mlx5_0'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("on switches leaf-01, leaf-02, leaf-03"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 HCAs describe themselves as 'node-b mlx5_0'"), std::string::npos) << r.err;
  // No domain joins the three leaves at tier 1.
  auto list = nlohmann::json::parse(r.out);
  for (const auto& item : list["items"]) {
    if (item["spec"]["tier"] != 1) continue;
    EXPECT_LE(item["spec"]["members"].size(), 2u) << item.dump();
  }
}

}  // namespace
}  // namespace hypertopo::cli
