// `-o name` and `-o wide` of the commands that print a list, as kubectl users read them: discover and
// status list HyperNodes (`hypernode.topology.volcano.sh/<name>`, a table of tier, parent, members,
// nodes, GPUs and health), place lists the Nodes its gang lands on (`node/<name>`, a table of one
// row per pod). Every expectation is derived from the objects the command was given or from its own
// `-o json` answer, never copied from a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "k8s/client/kube_client.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/fixtures.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;
using Captured = testing::CapturedRun;

const std::string kHyperNodePrefix = "hypernode.topology.volcano.sh/";

Captured run_list(std::vector<std::string> args) { return testing::run_captured(run_cli, std::move(args)); }

std::vector<std::string> output_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A kubectl table: each row by its header, cells split at runs of spaces (no cell holds one).
std::vector<std::map<std::string, std::string>> table_of(const std::string& text) {
  const auto lines = output_lines(text);
  std::vector<std::map<std::string, std::string>> rows;
  if (lines.empty()) return rows;
  auto cells = [](const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string cell; in >> cell;) out.push_back(cell);
    return out;
  };
  const auto headers = cells(lines.front());
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto row = cells(lines[i]);
    EXPECT_EQ(row.size(), headers.size()) << lines[i];
    std::map<std::string, std::string> by_header;
    for (std::size_t c = 0; c < row.size() && c < headers.size(); ++c) by_header[headers[c]] = row[c];
    rows.push_back(std::move(by_header));
  }
  return rows;
}

// The columns start where the header's words start, in every row (kubectl's tabwriter layout).
void expect_aligned(const std::string& text) {
  const auto lines = output_lines(text);
  ASSERT_FALSE(lines.empty());
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < lines.front().size(); ++i) {
    if (lines.front()[i] != ' ' && (i == 0 || lines.front()[i - 1] == ' ')) starts.push_back(i);
  }
  for (const auto& line : lines) {
    for (std::size_t s : starts) {
      ASSERT_LT(s, line.size()) << line;
      EXPECT_NE(line[s], ' ') << "column at " << s << ": " << line;
      if (s > 0) {
        EXPECT_EQ(line[s - 1], ' ') << "column at " << s << ": " << line;
      }
    }
  }
}

// What the HyperNode objects say, the way Volcano reads them: tier, members, the parent naming
// each as a member, the Nodes under each.
struct HyperNodeFacts {
  std::map<std::string, const json*> by_name;
  std::map<std::string, std::string> parent;

  explicit HyperNodeFacts(const std::vector<json>& items) {
    for (const auto& h : items) by_name[h["metadata"]["name"].get<std::string>()] = &h;
    for (const auto& h : items) {
      for (const auto& m : h["spec"]["members"]) {
        if (m["type"] == "HyperNode") parent[m["selector"]["exactMatch"]["name"]] = h["metadata"]["name"];
      }
    }
  }
  std::set<std::string> nodes_under(const std::string& name) const {
    std::set<std::string> nodes;
    for (const auto& m : (*by_name.at(name))["spec"]["members"]) {
      const std::string member = m["selector"]["exactMatch"]["name"];
      if (m["type"] == "Node") {
        nodes.insert(member);
      } else {
        nodes.merge(nodes_under(member));
      }
    }
    return nodes;
  }
  // The FabricDegraded condition's reason while it is True, "Healthy" while False, else "".
  static std::string health(const json& h) {
    for (const auto& c : h.value("/status/conditions"_json_pointer, json::array())) {
      if (c["type"] == "FabricDegraded")
        return c["status"] == "True" ? c["reason"].get<std::string>() : "Healthy";
    }
    return "";
  }
};

// Checks a HyperNode table against the objects; `gpus` gives each node's allocatable and used GPUs
// (empty: not measured). Returns the rows by name.
std::map<std::string, std::map<std::string, std::string>> expect_hypernode_table(
    const std::string& text, const std::vector<json>& items,
    const std::map<std::string, std::pair<int, int>>& gpus) {
  expect_aligned(text);
  const HyperNodeFacts facts(items);
  std::map<std::string, std::map<std::string, std::string>> by_name;
  std::vector<std::string> order;
  for (auto& row : table_of(text)) {
    order.push_back(row["NAME"]);
    by_name[row["NAME"]] = row;
  }
  EXPECT_TRUE(std::ranges::is_sorted(order)) << text;
  EXPECT_EQ(by_name.size(), items.size()) << text;
  for (const auto& [name, h] : facts.by_name) {
    if (!by_name.contains(name)) {
      ADD_FAILURE() << name << " missing from\n" << text;
      continue;
    }
    auto& row = by_name[name];
    EXPECT_EQ(row["TIER"], std::to_string((*h)["spec"]["tier"].get<int>())) << name;
    EXPECT_EQ(row["TIER-NAME"], (*h)["spec"].value("tierName", std::string("<none>"))) << name;
    EXPECT_EQ(row["PARENT"], facts.parent.contains(name) ? facts.parent.at(name) : "<none>") << name;
    EXPECT_EQ(row["MEMBERS"], std::to_string((*h)["spec"]["members"].size())) << name;
    const auto nodes = facts.nodes_under(name);
    EXPECT_EQ(row["NODES"], std::to_string(nodes.size())) << name;
    if (gpus.empty()) {
      EXPECT_EQ(row["GPUS"], "<unknown>") << name;
      EXPECT_EQ(row["FREE"], "<unknown>") << name;
    } else {
      int total = 0, used = 0;
      for (const auto& n : nodes) {
        total += gpus.at(n).first;
        used += gpus.at(n).second;
      }
      EXPECT_EQ(row["GPUS"], std::to_string(total)) << name;
      EXPECT_EQ(row["FREE"], std::to_string(total - used)) << name;
    }
  }
  return by_name;
}

std::vector<json> discovered_items(const std::vector<std::string>& source_args) {
  std::vector<std::string> args{"discover"};
  args.insert(args.end(), source_args.begin(), source_args.end());
  args.insert(args.end(), {"-o", "json"});
  auto r = run_list(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out)["items"].get<std::vector<json>>();
}

// ---- discover ----

TEST(ListOutput, DiscoverNamePrintsOneResourceLinePerHyperNodeSortedByName) {
  const auto items = discovered_items({"--source", "demo:model"});
  ASSERT_FALSE(items.empty());
  std::vector<std::string> expected;
  for (const auto& h : items) expected.push_back(kHyperNodePrefix + h["metadata"]["name"].get<std::string>());
  std::ranges::sort(expected);
  auto r = run_list({"discover", "--source", "demo:model", "-o", "name"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(output_lines(r.out), expected) << r.out;
}

TEST(ListOutput, DiscoverWideIsATableOfTheHyperNodesWithGpusWhereTheyAreGiven) {
  const auto items = discovered_items({"--source", "demo:model"});
  auto plain = run_list({"discover", "--source", "demo:model", "-o", "wide"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  expect_hypernode_table(plain.out, items, {});

  // Every node assumed to hold 8 GPUs, none used.
  std::map<std::string, std::pair<int, int>> gpus;
  for (const auto& h : items) {
    for (const auto& m : h["spec"]["members"])
      if (m["type"] == "Node") gpus[m["selector"]["exactMatch"]["name"]] = {8, 0};
  }
  auto wide = run_list({"discover", "--source", "demo:model", "--assume-gpus-per-node", "8", "-o", "wide"});
  ASSERT_EQ(wide.code, 0) << wide.err;
  const auto rows = expect_hypernode_table(wide.out, items, gpus);
  for (const auto& [name, row] : rows) EXPECT_NE(row.at("HEALTH"), "<none>") << name;
}

TEST(ListOutput, DiscoverWideNamesTheFabricDegradedReasonOfEachDegradedHyperNode) {
  HT_REQUIRE_FIXTURE(capture, "ibnetdiscover/topograph-example.out");
  const std::string source = "ibnetdiscover:" + capture.string();
  const auto items = discovered_items({"--source", source});
  auto wide = run_list({"discover", "--source", source, "-o", "wide"});
  ASSERT_EQ(wide.code, 0) << wide.err;
  const auto rows = expect_hypernode_table(wide.out, items, {});
  std::size_t degraded = 0;
  for (const auto& h : items) {
    const std::string health = HyperNodeFacts::health(h);
    const std::string shown = rows.at(h["metadata"]["name"]).at("HEALTH");
    if (health.empty()) {
      // No condition in the manifest: a healthy domain (discover writes status only when degraded).
      EXPECT_TRUE(shown == "Healthy" || shown == "<unknown>") << h["metadata"]["name"] << ": " << shown;
    } else {
      ++degraded;
      EXPECT_EQ(shown, health) << h["metadata"]["name"];
    }
  }
  EXPECT_GT(degraded, 0u) << "the capture has degraded leaves";
}

// ---- status ----

const k8s::Resource kNodesResource{"", "v1", "nodes", false};
const k8s::Resource kPodsResource{"", "v1", "pods", true};
const k8s::Resource kHyperNodesResource{"topology.volcano.sh", "v1alpha1", "hypernodes", false};

class StatusListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start().has_value());
    k8s::ClusterConfig config;
    config.server = server_.url();
    auto c = k8s::KubeClient::create(config, {.qps = 0});
    ASSERT_TRUE(c.has_value());
    client_ = std::move(*c);
    // Two leaves of three 8-GPU nodes under a spine; a fourth node in no HyperNode.
    for (int i = 1; i <= 7; ++i) {
      const std::string name = "gpu-" + std::to_string(i);
      auto made = client_->create(kNodesResource, "",
                                  {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}});
      ASSERT_TRUE(made.has_value());
      json node = *made;
      node["status"] = {{"allocatable", {{"nvidia.com/gpu", "8"}}},
                        {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
      ASSERT_TRUE(client_->update_status(kNodesResource, "", node).has_value());
      gpus_[name] = {8, 0};
    }
    add(hypernode("leaf-west", 1, "leaf", "Node", {"gpu-1", "gpu-2", "gpu-3"}),
        {{"type", "FabricDegraded"}, {"status", "True"}, {"reason", "DegradedLinkWidth"}, {"message", "1x"}});
    add(hypernode("leaf-east", 1, "leaf", "Node", {"gpu-4", "gpu-5", "gpu-6"}),
        {{"type", "FabricDegraded"}, {"status", "False"}, {"reason", "FabricHealthy"}, {"message", "ok"}});
    add(hypernode("spine-1", 2, "spine", "HyperNode", {"leaf-west", "leaf-east"}), json());
    // gpu-2 runs a 6-GPU pod, gpu-5 a 2-GPU one.
    for (const auto& [node, count] : std::vector<std::pair<std::string, int>>{{"gpu-2", 6}, {"gpu-5", 2}}) {
      json pod = {
          {"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "train-" + node}, {"namespace", "ml"}}},
          {"spec",
           {{"nodeName", node},
            {"containers", {{{"name", "c"}, {"resources", {{"requests", {{"nvidia.com/gpu", count}}}}}}}}}},
          {"status", {{"phase", "Running"}}}};
      ASSERT_TRUE(client_->create(kPodsResource, "ml", pod).has_value());
      gpus_[node].second = count;
    }
    testing::write_text(dir_.path() / "config",
                        "apiVersion: v1\nkind: Config\ncurrent-context: loop\nclusters:\n- name: loop\n  "
                        "cluster:\n    server: " +
                            server_.url() +
                            "\ncontexts:\n- name: loop\n  context: {cluster: loop, user: me}\nusers:\n- "
                            "name: me\n  user: {token: t}\n");
  }

  static json hypernode(const std::string& name, int tier, const std::string& tier_name,
                        const std::string& type, const std::vector<std::string>& members) {
    json m = json::array();
    for (const auto& x : members)
      m.push_back({{"type", type}, {"selector", {{"exactMatch", {{"name", x}}}}}});
    return {{"apiVersion", "topology.volcano.sh/v1alpha1"},
            {"kind", "HyperNode"},
            {"metadata", {{"name", name}, {"labels", {{"app.kubernetes.io/managed-by", "hypertopo"}}}}},
            {"spec", {{"tier", tier}, {"tierName", tier_name}, {"members", m}}}};
  }
  // Created, then its condition written through /status as the agent writes it.
  void add(json h, const json& condition) {
    auto made = client_->create(kHyperNodesResource, "", h);
    ASSERT_TRUE(made.has_value());
    if (!condition.is_null()) {
      json with_status = *made;
      with_status["status"] = {{"conditions", {condition}}};
      ASSERT_TRUE(client_->update_status(kHyperNodesResource, "", with_status).has_value());
      h["status"] = with_status["status"];
    }
    items_.push_back(std::move(h));
  }

  Captured status(const std::string& format) {
    return run_list({"status", "--kubeconfig", (dir_.path() / "config").string(), "-o", format});
  }

  testing::LoopbackApiServer server_;
  std::unique_ptr<k8s::KubeClient> client_;
  testing::TempDir dir_;
  std::vector<json> items_;                          // the HyperNodes as created
  std::map<std::string, std::pair<int, int>> gpus_;  // node -> allocatable, used
};

TEST_F(StatusListTest, NamePrintsEveryHyperNodeOfTheClusterAsKubectlGetDoes) {
  std::vector<std::string> expected;
  for (const auto& h : items_)
    expected.push_back(kHyperNodePrefix + h["metadata"]["name"].get<std::string>());
  std::ranges::sort(expected);
  auto r = status("name");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(output_lines(r.out), expected) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(StatusListTest, WideIsATableOfTheLiveHyperNodesWithGpuUseAndFabricHealth) {
  auto r = status("wide");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = expect_hypernode_table(r.out, items_, gpus_);
  for (const auto& h : items_) {
    const std::string health = HyperNodeFacts::health(h);
    // No FabricDegraded condition at all: nobody assessed the HyperNode.
    EXPECT_EQ(rows.at(h["metadata"]["name"]).at("HEALTH"), health.empty() ? "<unknown>" : health)
        << h["metadata"]["name"];
  }
}

TEST_F(StatusListTest, AHyperNodeThatBreaksTheRulesIsListedByNameAndNamedOnStderr) {
  add(hypernode("leaf-lost", 1, "leaf", "HyperNode", {"no-such-hypernode"}), json());
  auto name = status("name");
  ASSERT_EQ(name.code, 0) << name.err;
  const auto lines = output_lines(name.out);
  EXPECT_NE(std::ranges::find(lines, kHyperNodePrefix + "leaf-lost"), lines.end()) << name.out;
  EXPECT_NE(name.err.find("hypertopo status: warning: leaf-lost: member HyperNode no-such-hypernode"),
            std::string::npos)
      << name.err;
  auto wide = status("wide");
  ASSERT_EQ(wide.code, 0) << wide.err;
  EXPECT_NE(wide.err.find("no-such-hypernode"), std::string::npos) << wide.err;
  EXPECT_EQ(wide.out.find("no-such-hypernode"), std::string::npos) << wide.out;
}

// ---- place ----

class PlaceListTest : public ::testing::Test {
 protected:
  Captured place(const std::string& job, const std::string& format) {
    const std::string src = HYPERTOPO_SOURCE_DIR;
    return run_list({"place", "--nodes", src + "/examples/place/nodes.json", "--topology",
                     src + "/examples/place/hypernodes.yaml", "--job", job, "-o", format});
  }
  std::string job(const std::string& name, int replicas, int highest_tier) {
    const std::string text =
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
        "}\nspec:\n  networkTopology: {mode: hard, highestTierAllowed: " + std::to_string(highest_tier) +
        "}\n  tasks:\n  - name: worker\n    replicas: " + std::to_string(replicas) +
        "\n    template:\n      spec:\n        containers:\n        - name: main\n          resources: "
        "{requests: {cpu: \"2\", nvidia.com/gpu: \"4\"}}\n";
    testing::write_text(dir_.path() / (name + ".yaml"), text);
    return (dir_.path() / (name + ".yaml")).string();
  }
  testing::TempDir dir_;
};

TEST_F(PlaceListTest, NamePrintsEachNodeTheGangLandsOnOnceInRankOrder) {
  const std::string spread = job("spread", 6, 2);  // three 8-GPU nodes' worth, two pods a node
  auto answer = place(spread, "json");
  ASSERT_EQ(answer.code, 0) << answer.err;
  std::vector<std::pair<std::int64_t, std::string>> by_rank;
  const json parsed = json::parse(answer.out);
  for (const auto& ps : parsed["podSets"])
    for (const auto& a : ps["assignment"]) by_rank.emplace_back(a["firstRank"], a["node"]);
  std::ranges::sort(by_rank);
  std::vector<std::string> expected;
  for (const auto& [rank, node] : by_rank) {
    if (std::ranges::find(expected, "node/" + node) == expected.end()) expected.push_back("node/" + node);
  }
  ASSERT_GT(expected.size(), 1u) << answer.out;
  auto r = place(spread, "name");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(output_lines(r.out), expected) << r.out;
}

TEST_F(PlaceListTest, WideIsOneRowPerPodWithItsNodeAndDomainsFromTheTop) {
  const std::string spread = job("spread", 6, 2);
  auto answer = place(spread, "json");
  ASSERT_EQ(answer.code, 0) << answer.err;
  auto r = place(spread, "wide");
  ASSERT_EQ(r.code, 0) << r.err;
  expect_aligned(r.out);
  const auto rows = table_of(r.out);
  std::size_t at = 0;
  const json parsed = json::parse(answer.out);
  for (const auto& ps : parsed["podSets"]) {
    for (const auto& a : ps["assignment"]) {
      for (int k = 0; k < a["count"].get<int>(); ++k, ++at) {
        ASSERT_LT(at, rows.size()) << r.out;
        const auto& row = rows[at];
        EXPECT_EQ(row.at("POD-SET"), ps["name"]);
        EXPECT_EQ(row.at("RANK"), std::to_string(a["firstRank"].get<int>() + k));
        EXPECT_EQ(row.at("NODE"), a["node"]);
        EXPECT_EQ(row.at("BOUND"), "false");
        const auto& path = a["path"];
        for (std::size_t d = 0; d < path.size(); ++d)
          EXPECT_EQ(row.at("DOMAIN-" + std::to_string(d + 1)), path[d]) << r.out;
      }
    }
  }
  EXPECT_EQ(at, rows.size()) << r.out;
  EXPECT_EQ(rows.size(), 6u);
}

TEST_F(PlaceListTest, NoFitPrintsNoNodeAndSaysWhyOnStderr) {
  const std::string huge = job("huge", 1000, 1);
  auto answer = place(huge, "json");
  ASSERT_EQ(answer.code, 1) << answer.err;
  const std::string reason = json::parse(answer.out)["reason"];
  for (const std::string format : {"name", "wide"}) {
    auto r = place(huge, format);
    EXPECT_EQ(r.code, 1) << format << ": " << r.err;
    EXPECT_EQ(r.out.find("node/"), std::string::npos) << format << ": " << r.out;
    EXPECT_NE(r.err.find("hypertopo place: no fit: " + reason), std::string::npos) << format << ": " << r.err;
  }
  EXPECT_EQ(place(huge, "name").out, "");
}

// Kueue's levels above the hostname: an assignment names a domain and no node; -o name prints none
// for it and says so, -o wide shows the level values as its domains.
TEST_F(PlaceListTest, KueueDomainsWithoutANodeAreNamedOnStderrAndShownInTheTable) {
  const std::string src = HYPERTOPO_SOURCE_DIR;
  const std::vector<std::string> args{"place",
                                      "--nodes",
                                      src + "/examples/place/nodes.json",
                                      "--topology",
                                      src + "/examples/place/kueue-topology-racks.yaml",
                                      "--job",
                                      src + "/examples/place/kueue-job.yaml"};
  auto with = [&](const std::string& format) {
    auto a = args;
    a.insert(a.end(), {"-o", format});
    return run_list(a);
  };
  auto answer = with("json");
  ASSERT_EQ(answer.code, 0) << answer.err;
  std::size_t domains = 0, pods = 0;
  const json parsed = json::parse(answer.out);
  for (const auto& ps : parsed["podSets"]) {
    for (const auto& a : ps["assignment"]) {
      pods += a["count"].get<std::size_t>();
      domains += a.contains("node") ? 0 : 1;
    }
  }
  ASSERT_GT(domains, 0u) << "the racks Topology stops above the hostname: " << answer.out;
  auto name = with("name");
  EXPECT_EQ(name.code, 0) << name.err;
  EXPECT_EQ(name.out, "");
  EXPECT_NE(name.err.find(std::to_string(domains) + " assignment(s) name a domain, not a node"),
            std::string::npos)
      << name.err;
  auto wide = with("wide");
  ASSERT_EQ(wide.code, 0) << wide.err;
  const auto rows = table_of(wide.out);
  EXPECT_EQ(rows.size(), pods) << wide.out;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("NODE"), "<none>");
    EXPECT_NE(row.at("DOMAIN-1"), "<none>");
  }
}

// The contract: a value out of -o's set exits 2 naming the set, name and wide in it.
TEST(ListOutput, ABadOutputValueNamesTheSetWithNameAndWide) {
  const std::string src = HYPERTOPO_SOURCE_DIR;
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"discover", "--source", "demo:model", "-o", "table"},
           {"status", "--kubeconfig", "/nonexistent", "-o", "table"},
           {"place", "--job", src + "/examples/place/volcano-job.yaml", "-o", "table"}}) {
    auto r = run_list(args);
    EXPECT_EQ(r.code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("hypertopo " + args[0] + ": error: --output: table not in {"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(",name,wide"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace hypertopo::cli
