// `hypertopo status` end to end. No real API server here: the in-tree loopback API server
// (tests/support/apiserver) holds the HyperNodes, Nodes and Pods the command reads over HTTP.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "k8s/client/kube_client.h"
#include "tests/cli/cluster_objects.h"
#include "tests/cli/headless_browser.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/fixtures.h"
#include "topology/hypernode.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;

const k8s::Resource kNodes{"", "v1", "nodes", false};
const k8s::Resource kPods{"", "v1", "pods", true};
const k8s::Resource kHyperNodes{"topology.volcano.sh", "v1alpha1", "hypernodes", false};

json hypernode(const std::string& name, int tier, const std::string& tier_name,
               const std::string& member_type, const std::vector<std::string>& members,
               const std::string& owner = "hypertopo") {
  json m = json::array();
  for (const auto& x : members)
    m.push_back({{"type", member_type}, {"selector", {{"exactMatch", {{"name", x}}}}}});
  json h = {{"apiVersion", "topology.volcano.sh/v1alpha1"},
            {"kind", "HyperNode"},
            {"metadata", {{"name", name}}},
            {"spec", {{"tier", tier}, {"tierName", tier_name}, {"members", m}}}};
  if (!owner.empty()) h["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", owner}};
  return h;
}

class StatusCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start().has_value());
    k8s::ClusterConfig config;
    config.server = server_.url();
    auto c = k8s::KubeClient::create(config, {.qps = 0});
    ASSERT_TRUE(c.has_value());
    client_ = std::move(*c);
    // 2 leaves of 4 nodes with 8 GPUs each under one spine.
    for (int i = 1; i <= 8; ++i) {
      const std::string name = "n" + std::to_string(i);
      json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}};
      auto made = client_->create(kNodes, "", node);
      ASSERT_TRUE(made.has_value());
      json with_status = *made;
      with_status["status"] = {{"allocatable", {{"nvidia.com/gpu", "8"}, {"cpu", "64"}, {"pods", "110"}}},
                               {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
      ASSERT_TRUE(client_->update_status(kNodes, "", with_status).has_value());
    }
    create(hypernode("leaf-a", 1, "leaf", "Node", {"n1", "n2", "n3", "n4"}));
    create(hypernode("leaf-b", 1, "leaf", "Node", {"n5", "n6", "n7", "n8"}));
    create(hypernode("spine", 2, "spine", "HyperNode", {"leaf-a", "leaf-b"}));
    // leaf-a runs 3 full nodes; leaf-b one half-used node.
    for (const auto& [node, gpus] :
         std::vector<std::pair<std::string, int>>{{"n1", 8}, {"n2", 8}, {"n3", 8}, {"n5", 4}}) {
      json pod = {
          {"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "train-" + node}, {"namespace", "ml"}}},
          {"spec",
           {{"nodeName", node},
            {"containers", {{{"name", "c"}, {"resources", {{"requests", {{"nvidia.com/gpu", gpus}}}}}}}}}},
          {"status", {{"phase", "Running"}}}};
      ASSERT_TRUE(client_->create(kPods, "ml", pod).has_value());
    }
    testing::write_text(
        dir_.path() / "config",
        "apiVersion: v1\nkind: Config\ncurrent-context: loop\nclusters:\n- name: loop\n  cluster:\n"
        "    server: " +
            server_.url() +
            "\ncontexts:\n- name: loop\n  context: {cluster: loop, user: me}\nusers:\n- name: me\n"
            "  user: {token: t}\n");
  }

  void create(const json& h) { ASSERT_TRUE(client_->create(kHyperNodes, "", h).has_value()); }

  testing::CapturedRun status(const std::string& format) {
    return testing::run_captured(run_cli,
                                 {"status", "--kubeconfig", (dir_.path() / "config").string(), "-o", format});
  }

  testing::LoopbackApiServer server_;
  std::unique_ptr<k8s::KubeClient> client_;
  testing::TempDir dir_;
};

TEST_F(StatusCommandTest, LiveTreeWithCapacityAndLargestFreeBlocks) {
  auto r = status("json");
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out["hyperNodes"], 3);
  EXPECT_EQ(out["gpus"]["allocatable"], 64);
  EXPECT_EQ(out["gpus"]["used"], 28);
  std::map<std::string, json> domains;
  for (const auto& d : out["domains"]) domains[d["name"]] = d;
  EXPECT_EQ(domains["leaf-a"]["gpus"]["used"], 24);
  EXPECT_EQ(domains["leaf-b"]["gpus"]["free"], 28);
  EXPECT_EQ(domains["leaf-a"]["parent"], "spine");
  EXPECT_EQ(domains["spine"]["gpus"]["free"], 36);
  ASSERT_EQ(out["largestFreeBlocks"].size(), 2u);
  EXPECT_EQ(out["largestFreeBlocks"][0]["tier"], 2);
  EXPECT_EQ(out["largestFreeBlocks"][1]["domain"], "leaf-b");
  EXPECT_EQ(out["largestFreeBlocks"][1]["freeGpus"], 28);
  EXPECT_EQ(out["largestFreeBlocks"][1]["idleNodes"], 3);
  EXPECT_TRUE(out["notOurs"].empty());
  EXPECT_TRUE(out["problems"].empty()) << out["problems"].dump();

  auto text = status("text");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("  leaf-b (leaf, tier 1): 4 nodes, GPUs 4/32 used, 28 free"), std::string::npos)
      << text.out;
}

// A cordoned or NotReady node's GPUs are free but take no new pod: the free blocks leave them out.
TEST_F(StatusCommandTest, CordonedAndNotReadyNodesAreNotCountedAsFreeBlocks) {
  auto cordon = client_->update_with_retry(kNodes, "", "n6", [](json& n) {
    n["spec"]["unschedulable"] = true;
    return true;
  });
  ASSERT_TRUE(cordon.has_value());
  auto not_ready = client_->update_with_retry(
      kNodes, "", "n7",
      [](json& n) {
        n["status"]["conditions"] = json::array({{{"type", "Ready"}, {"status", "False"}}});
        return true;
      },
      10, /*status=*/true);
  ASSERT_TRUE(not_ready.has_value());
  auto r = status("json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["unschedulableNodes"], json::array({"n6", "n7"}));
  EXPECT_EQ(out["largestFreeBlocks"][1]["domain"], "leaf-b");
  EXPECT_EQ(out["largestFreeBlocks"][1]["freeGpus"], 12);  // n5's 4 and n8's 8
  EXPECT_EQ(out["largestFreeBlocks"][1]["idleNodes"], 1);
  std::map<std::string, json> domains;
  for (const auto& d : out["domains"]) domains[d["name"]] = d;
  EXPECT_EQ(domains["leaf-b"]["gpus"]["free"], 28);  // the tree still says what the nodes hold
  auto text = status("text");
  EXPECT_EQ(out["unschedulableReasons"], json({{"n6", "cordoned"}, {"n7", "NotReady"}}));
  EXPECT_NE(
      text.out.find("Largest free block per tier (leaving out 2 nodes that take no new pod: 1 NotReady, "
                    "1 cordoned):"),
      std::string::npos)
      << text.out;
}

// The FabricDegraded condition as the agent's reconciler writes it through /status (True for leaf-b,
// False for leaf-a), next to Volcano's nodeCount: status marks leaf-b alone, with reason and links.
TEST_F(StatusCommandTest, DegradedDomainsAreMarkedWithTheirReason) {
  topology::DomainHealth degraded;
  degraded.assessed = true;
  degraded.bad_links.push_back({.reason = topology::HealthReason::kMissingUplinks,
                                .end_a = "leaf-b",
                                .end_b = "spine-2",
                                .expected = "2 uplinks",
                                .seen = "1 uplink",
                                .uplink = true});
  degraded.bad_links.push_back({.reason = topology::HealthReason::kDegradedLinkWidth,
                                .end_a = "leaf-b[3]",
                                .end_b = "spine-1[2]",
                                .expected = "4x",
                                .seen = "1x",
                                .uplink = true});
  topology::DomainHealth healthy;
  healthy.assessed = true;
  for (const auto& [name, health] : std::vector<std::pair<std::string, topology::DomainHealth>>{
           {"leaf-a", healthy}, {"leaf-b", degraded}}) {
    auto stored = client_->get(kHyperNodes, "", name);
    ASSERT_TRUE(stored.has_value());
    json object = *stored;
    object["status"] = {
        {"nodeCount", 4},
        {"conditions", json::array({topology::fabric_degraded_condition(health, "2026-11-24T08:00:00Z")})}};
    ASSERT_TRUE(client_->update_status(kHyperNodes, "", object).has_value());
  }

  auto text = status("text");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("HyperNodes: 3 (0 not ours, 1 degraded)"), std::string::npos) << text.out;
  EXPECT_NE(
      text.out.find("  leaf-b (leaf, tier 1): 4 nodes, GPUs 4/32 used, 28 free  DEGRADED MissingUplinks\n"
                    "      leaf-b - spine-2: MissingUplinks, 1 uplink, expected 2 uplinks; "
                    "leaf-b[3] - spine-1[2]: DegradedLinkWidth, 1x, expected 4x\n"),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  leaf-a (leaf, tier 1): 4 nodes, GPUs 24/32 used, 8 free\n"), std::string::npos)
      << text.out;

  auto r = status("json");
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out["degraded"], 1);
  std::map<std::string, json> domains;
  for (const auto& d : out["domains"]) domains[d["name"]] = d;
  EXPECT_EQ(domains["leaf-b"]["fabricDegraded"]["reason"], "MissingUplinks");
  EXPECT_EQ(domains["leaf-b"]["fabricDegraded"]["message"].get<std::string>().find("leaf-b - spine-2"), 0u);
  EXPECT_FALSE(domains["leaf-a"].contains("fabricDegraded"));
  EXPECT_FALSE(domains["spine"].contains("fabricDegraded"));
}

TEST_F(StatusCommandTest, ForeignAndRuleBreakingHyperNodesAreListed) {
  // Another controller's HyperNode that also claims n4, which leaf-a already holds.
  create(hypernode("rack-x", 1, "rack", "Node", {"n4"}, "volcano"));
  auto r = status("json");
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  ASSERT_EQ(out["notOurs"].size(), 1u);
  EXPECT_NE(out["notOurs"][0].get<std::string>().find("rack-x (managed-by: volcano)"), std::string::npos);
  ASSERT_FALSE(out["problems"].empty());
  EXPECT_NE(out["problems"].dump().find("n4"), std::string::npos) << out["problems"].dump();
}

// spec.tier is read by the same reader as place and the extender: a value beyond int32 is not wrapped
// (4294967297 is not tier 1), a negative one or the top int32 is refused, each on a problem line
// naming the HyperNode and the value; a quoted number is the tier it spells.
TEST_F(StatusCommandTest, TiersOutsideTheCrdRangeAreProblemsNeverWrongTiers) {
  const std::vector<std::pair<std::string, json>> odd = {{"rack-big", json(4294967297LL)},
                                                         {"rack-neg", json(-5)},
                                                         {"rack-top", json(2147483647)},
                                                         {"rack-str", json("3")}};
  for (const auto& [name, tier] : odd) {
    json h = hypernode(name, 1, "rack", "Node", {});
    h["spec"]["tier"] = tier;
    create(h);
  }
  auto r = status("json");
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  std::map<std::string, int> tiers;
  for (const auto& d : out["domains"]) tiers[d["name"]] = d["tier"];
  EXPECT_FALSE(tiers.contains("rack-big"));
  EXPECT_FALSE(tiers.contains("rack-neg"));
  EXPECT_FALSE(tiers.contains("rack-top"));
  EXPECT_EQ(tiers["rack-str"], 3);
  const std::vector<std::string> expected = {
      "rack-big: spec.tier must be an integer from 0 to 2147483646, got 4294967297",
      "rack-neg: spec.tier must be an integer from 0 to 2147483646, got -5",
      "rack-top: spec.tier must be an integer from 0 to 2147483646, got 2147483647"};
  const auto problems = out["problems"].get<std::vector<std::string>>();
  for (const auto& line : expected) {
    EXPECT_NE(std::ranges::find(problems, line), problems.end()) << out["problems"].dump();
  }

  auto text = status("text");
  ASSERT_EQ(text.code, 0) << text.err;
  for (const auto& line : expected)
    EXPECT_NE(text.out.find("  " + line + "\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("rack-str (rack, tier 3)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("rack-big ("), std::string::npos) << text.out;
}

// HyperNodes in the cluster that nest deeper than placement allows (64) are refused by name before
// any output walks them: a chain of 200 above the spine, and a tree at the limit still prints.
TEST_F(StatusCommandTest, HyperNodesNestedDeeperThanPlacementAllowsAreRefusedByName) {
  // spine (tier 2) holds the leaves: chain c3..c<N> on top of it makes the leaves N deep.
  auto chain = [&](int from, int to) {
    for (int t = from; t <= to; ++t) {
      create(hypernode("c" + std::to_string(t), t, "chain", "HyperNode",
                       {t == 3 ? std::string("spine") : "c" + std::to_string(t - 1)}));
    }
  };
  chain(3, 64);  // leaves at depth 64: the limit
  auto at_limit = status("text");
  ASSERT_EQ(at_limit.code, 0) << at_limit.err;
  EXPECT_NE(at_limit.out.find("\n" + std::string(63 * 2, ' ') + "leaf-a (leaf, tier 1): 4 nodes"),
            std::string::npos)
      << at_limit.out;
  chain(65, 200);
  for (const char* format : {"text", "json", "html"}) {
    auto r = status(format);
    EXPECT_EQ(r.code, 2) << format << r.out.substr(0, 500);
    EXPECT_NE(r.err.find("the cluster's HyperNodes nest 200 deep (HyperNode leaf-"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("at most 64 deep"), std::string::npos) << r.err;
  }
}

// A condition's reason and message, a tierName and another writer's label are whatever someone wrote:
// `status -o text` spells out the control characters in them (a retitled or cleared terminal would
// otherwise be the output), one field to a line; `-o json` carries them as they are, JSON-escaped.
TEST_F(StatusCommandTest, ControlCharactersInNamesAndMessagesAreSpelledOutInText) {
  auto stored = client_->get(kHyperNodes, "", "leaf-b");
  ASSERT_TRUE(stored.has_value());
  json object = *stored;
  object["status"] = {{"conditions",
                       {{{"type", "FabricDegraded"},
                         {"status", "True"},
                         {"reason", "Missing\x1b[2JUplinks"},
                         {"message", "\x1b]0;evil\x07 leaf-b - spine-2\nsecond line"},
                         {"lastTransitionTime", "2026-11-24T08:00:00Z"}}}}};
  ASSERT_TRUE(client_->update_status(kHyperNodes, "", object).has_value());
  json leaf_a = *client_->get(kHyperNodes, "", "leaf-a");
  leaf_a["spec"]["tierName"] = "leaf\x1b[31m";
  ASSERT_TRUE(client_->update(kHyperNodes, "", leaf_a).has_value());
  create(hypernode("rack-x", 1, "rack", "Node", {}, "other\x1b]0;owned\x07"));

  auto text = status("text");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find('\x07'), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(
                "DEGRADED Missing\\x1b[2JUplinks\n      \\x1b]0;evil\\x07 leaf-b - spine-2\\nsecond line\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("leaf-a (leaf\\x1b[31m, tier 1)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("rack-x (managed-by: other\\x1b]0;owned\\x07)"), std::string::npos) << text.out;

  auto r = status("json");
  ASSERT_EQ(r.code, 0) << r.err;
  std::map<std::string, json> domains;
  const json out = json::parse(r.out);
  for (const auto& d : out["domains"]) domains[d["name"]] = d;
  EXPECT_EQ(domains["leaf-b"]["fabricDegraded"]["message"], "\x1b]0;evil\x07 leaf-b - spine-2\nsecond line");
}

TEST_F(StatusCommandTest, RegexMembersAreResolvedThroughTheSchedulerIndex) {
  json rack = hypernode("leaf-c", 1, "leaf", "Node", {});
  rack["spec"]["members"] = {{{"type", "Node"}, {"selector", {{"regexMatch", {{"pattern", "^n[5-8]$"}}}}}}};
  ASSERT_TRUE(client_->delete_object(kHyperNodes, "", "leaf-b").has_value());
  json spine = *client_->get(kHyperNodes, "", "spine");
  spine["spec"]["members"][1]["selector"]["exactMatch"]["name"] = "leaf-c";
  ASSERT_TRUE(client_->update(kHyperNodes, "", spine).has_value());
  create(rack);
  auto r = status("json");
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_TRUE(out["problems"].empty()) << out["problems"].dump();
  bool found = false;
  for (const auto& d : out["domains"]) {
    if (d["name"] == "leaf-c") {
      found = true;
      EXPECT_EQ(d["nodes"], 4);
      EXPECT_EQ(d["gpus"]["used"], 4);
      EXPECT_EQ(d["parent"], "spine");
    }
  }
  EXPECT_TRUE(found);
}

// A HyperNode member chosen by regexMatch is resolved by the same index place builds: the leaves it
// names are the spine's children in status as in place's answer (they were shown without a parent).
TEST_F(StatusCommandTest, RegexHyperNodeMembersGetTheParentPlaceGivesThem) {
  json spine = *client_->get(kHyperNodes, "", "spine");
  spine["spec"]["members"] = {
      {{"type", "HyperNode"}, {"selector", {{"regexMatch", {{"pattern", "^leaf-[ab]$"}}}}}}};
  ASSERT_TRUE(client_->update(kHyperNodes, "", spine).has_value());
  auto r = status("json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_TRUE(out["problems"].empty()) << out["problems"].dump();
  int children = 0;
  for (const auto& d : out["domains"]) {
    if (d["name"] == "leaf-a" || d["name"] == "leaf-b") {
      EXPECT_EQ(d["parent"], "spine") << d.dump();
      ++children;
    }
    if (d["name"] == "spine") {
      EXPECT_EQ(d["nodes"], 8) << d.dump();
    }
  }
  EXPECT_EQ(children, 2);

  // place on the same cluster: 4 whole nodes are free, 1 in leaf-a and 3 in leaf-b, so a 4-pod gang
  // of 8 GPUs each fits only in the spine, and its path runs through it.
  testing::write_text(dir_.path() / "job.json",
                      json{{"apiVersion", "hypertopo.io/v1alpha1"},
                           {"kind", "PlacementRequest"},
                           {"name", "wide"},
                           {"podSets",
                            {{{"name", "w"},
                              {"count", 4},
                              {"requests", {{"nvidia.com/gpu", "8"}}},
                              {"topology", {{"mode", "required"}, {"level", "2"}}}}}}}
                          .dump());
  auto placed = testing::run_captured(run_cli, {"place", "--kubeconfig", (dir_.path() / "config").string(),
                                                "--job", (dir_.path() / "job.json").string(), "-o", "json"});
  ASSERT_EQ(placed.code, 0) << placed.err << placed.out;
  const json plan = json::parse(placed.out);
  ASSERT_FALSE(plan["podSets"].empty()) << placed.out;
  int pods = 0;
  for (const auto& a : plan["podSets"][0]["assignment"]) {
    EXPECT_EQ(a["path"][0], "spine") << placed.out;
    pods += a["count"].get<int>();
  }
  EXPECT_EQ(pods, 4) << placed.out;
}

// `status -o html`: the live tree as one page, the HyperNode whose FabricDegraded condition is True
// framed with its reason and links, a cordoned node marked, opened in headless Chromium.
TEST_F(StatusCommandTest, HtmlPageMarksDegradedHyperNodesAndCordonedNodes) {
  topology::DomainHealth degraded;
  degraded.assessed = true;
  degraded.bad_links.push_back({.reason = topology::HealthReason::kMissingUplinks,
                                .end_a = "leaf-b",
                                .end_b = "spine-2",
                                .expected = "2 uplinks",
                                .seen = "1 uplink",
                                .uplink = true});
  auto stored = client_->get(kHyperNodes, "", "leaf-b");
  ASSERT_TRUE(stored.has_value());
  json object = *stored;
  object["status"] = {
      {"conditions", json::array({topology::fabric_degraded_condition(degraded, "2026-11-24T08:00:00Z")})}};
  ASSERT_TRUE(client_->update_status(kHyperNodes, "", object).has_value());
  auto cordon = client_->update_with_retry(kNodes, "", "n6", [](json& n) {
    n["spec"]["unschedulable"] = true;
    return true;
  });
  ASSERT_TRUE(cordon.has_value());

  auto r = status("html");
  ASSERT_EQ(r.code, 0) << r.err;
  // The data the page draws from: JSON in the page, read as the page's script reads it.
  const std::string open_tag = "<script type=\"application/json\" id=\"hypertopo-data\">";
  const std::size_t at = r.out.find(open_tag);
  ASSERT_NE(at, std::string::npos);
  const std::size_t from = at + open_tag.size();
  const json data = json::parse(r.out.substr(from, r.out.find("</script>", from) - from));
  std::map<std::string, json> domains;
  for (const auto& d : data["domains"]) domains[d["n"]] = d;
  EXPECT_EQ(domains["leaf-b"]["deg"]["r"], "MissingUplinks");
  EXPECT_EQ(domains["leaf-b"]["deg"]["l"],
            json::array({"leaf-b - spine-2: MissingUplinks, 1 uplink, expected 2 uplinks"}));
  EXPECT_FALSE(domains["leaf-a"].contains("deg"));
  EXPECT_EQ(domains["spine"]["u"], 28);
  EXPECT_EQ(domains["spine"]["a"], 64);
  EXPECT_EQ(data["unavailable"], 1);
  EXPECT_EQ(data["degraded"], 1);

  HT_REQUIRE_CHROMIUM(chromium);
  const auto page = dir_.path() / "status.html";
  testing::write_text(page, r.out);
  auto run = testing::open_in_chromium(chromium, dir_.path(), page, {.fragment = "expand=all"});
  EXPECT_EQ(testing::body_attribute(run.dom, "data-state"), "ready") << run.log;
  EXPECT_TRUE(run.uncaught_errors().empty()) << run.uncaught_errors().front();
  // One degraded box beside the legend's swatch, with its reason and its link listed.
  EXPECT_EQ(testing::count_of(run.dom, "class=\"box degraded\""), 1u) << run.dom;
  EXPECT_NE(run.dom.find("DEGRADED MissingUplinks"), std::string::npos);
  EXPECT_NE(run.dom.find("<li>leaf-b - spine-2: MissingUplinks, 1 uplink, expected 2 uplinks</li>"),
            std::string::npos);
  EXPECT_NE(run.dom.find("class=\"node off\" data-node=\"n6\""), std::string::npos);
  EXPECT_EQ(testing::count_of(run.dom, "data-node=\""), 8u);
}

// --nodes, --pods and --topology stand in for the cluster's objects of their kind, as place's do:
// the cluster's own objects exported to files give the same answer, and a topology file beside
// --kubeconfig replaces the cluster's HyperNodes alone.
TEST_F(StatusCommandTest, FilesStandInForTheClustersObjectsOfTheirKind) {
  auto exported = [&](const std::string& name, const std::string& collection) {
    testing::write_text(dir_.path() / name,
                        testing::cluster_list(server_.store().objects(collection)).dump());
    return (dir_.path() / name).string();
  };
  const auto live = status("json");
  ASSERT_EQ(live.code, 0) << live.err;
  auto files = testing::run_captured(
      run_cli,
      {"status", "--nodes", exported("nodes.json", "/v1/nodes"), "--pods", exported("pods.json", "/v1/pods"),
       "--topology", exported("hn.json", "topology.volcano.sh/v1alpha1/hypernodes"), "-o", "json"});
  ASSERT_EQ(files.code, 0) << files.err;
  EXPECT_EQ(json::parse(files.out), json::parse(live.out));

  testing::write_text(dir_.path() / "leaf-b.json",
                      hypernode("leaf-b", 1, "leaf", "Node", {"n5", "n6", "n7", "n8"}).dump());
  auto beside =
      testing::run_captured(run_cli, {"status", "--kubeconfig", (dir_.path() / "config").string(),
                                      "--topology", (dir_.path() / "leaf-b.json").string(), "-o", "json"});
  ASSERT_EQ(beside.code, 0) << beside.err;
  const json out = json::parse(beside.out);
  EXPECT_EQ(out["hyperNodes"], 1);
  EXPECT_EQ(out["nodes"], 8);  // the cluster's Nodes and Pods still
  ASSERT_EQ(out["largestFreeBlocks"].size(), 1u);
  EXPECT_EQ(out["largestFreeBlocks"][0]["domain"], "leaf-b");
  EXPECT_EQ(out["largestFreeBlocks"][0]["freeGpus"], 28);
}

TEST_F(StatusCommandTest, UnreachableServerIsAnError) {
  testing::write_text(
      dir_.path() / "config",
      "apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters:\n- name: x\n  cluster:\n"
      "    server: http://127.0.0.1:1\ncontexts:\n- name: x\n  context: {cluster: x, user: me}\n"
      "users:\n- name: me\n  user: {token: t}\n");
  auto r = status("text");
  EXPECT_EQ(r.code, 3);
  // Read as place reads the cluster: the first list it asks for is the Nodes'.
  EXPECT_NE(r.err.find("reading the cluster of --kubeconfig " + (dir_.path() / "config").string() +
                       ": listing nodes"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace hypertopo::cli
