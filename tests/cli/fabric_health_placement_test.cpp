// Fabric health in placement, as a user reaches it: `hypertopo place` and `hypertopo simulate` on
// kubectl-shaped files, the HyperNodes carrying the FabricDegraded condition (status.conditions)
// and the hypertopo.io/degraded-members annotation exactly as `kubectl get hn -o json` prints what
// hypertopo's agent wrote. The cluster is built so that, without health, the degraded leaf wins on
// Volcano's binpack score: the healthy choice is the preference at work, not a tie-break.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "tests/support/fixtures.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;

json node(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
          {"status",
           {{"allocatable", {{"cpu", "64"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

json health_hypernode(const std::string& name, int tier, const std::string& type,
                      const std::vector<std::string>& members) {
  json m = json::array();
  for (const auto& x : members) m.push_back({{"type", type}, {"selector", {{"exactMatch", {{"name", x}}}}}});
  return {{"apiVersion", "topology.volcano.sh/v1alpha1"},
          {"kind", "HyperNode"},
          {"metadata",
           {{"name", name},
            {"labels",
             {{"volcano.sh/network-topology-source", "hypertopo"},
              {"app.kubernetes.io/managed-by", "hypertopo"}}}}},
          {"spec", {{"tier", tier}, {"tierName", tier == 1 ? "leaf" : "spine"}, {"members", m}}}};
}

// The condition as the reconciler writes it through /status.
json degraded(json hn, const std::string& reason, const std::string& message) {
  hn["status"] = {{"nodeCount", hn["spec"]["members"].size()},
                  {"conditions",
                   {{{"type", "FabricDegraded"},
                     {"status", "True"},
                     {"reason", reason},
                     {"message", message},
                     {"lastTransitionTime", "2026-11-24T05:40:12Z"}}}}};
  return hn;
}

json list(const json& items) { return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}; }

json bound_pod(const std::string& name, const std::string& node, const std::string& cpu,
               const std::string& gpus) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"spec",
           {{"nodeName", node},
            {"containers",
             {{{"name", "main"}, {"resources", {{"requests", {{"cpu", cpu}, {"nvidia.com/gpu", gpus}}}}}}}}}},
          {"status", {{"phase", "Running"}}}};
}

json gang(int count, const std::string& cpu = "16") {
  return {{"apiVersion", "hypertopo.io/v1alpha1"},
          {"kind", "PlacementRequest"},
          {"name", "train"},
          {"podSets",
           {{{"name", "trainer"},
             {"count", count},
             {"requests", {{"cpu", cpu}, {"nvidia.com/gpu", "8"}}},
             {"topology", {{"mode", "required"}, {"level", "leaf"}}}}}}};
}

constexpr const char* kUplinkMessage = "leaf-b[17] - spine[3]: DegradedLinkWidth, 1x, expected 4x";

class FabricHealthPlacementTest : public ::testing::Test {
 protected:
  std::string file(const std::string& name, const json& doc) {
    testing::write_text(dir_.path() / name, doc.dump(1));
    return (dir_.path() / name).string();
  }
  std::string text_file(const std::string& name, const std::string& text) {
    testing::write_text(dir_.path() / name, text);
    return (dir_.path() / name).string();
  }

  // spine = {leaf-a = {h1, h2}, leaf-b = {h3, h4}}; leaf-b's uplink trained at 1x, so leaf-b and the
  // spine (whose internal link it is) are FabricDegraded. `pods` are bound already.
  testing::CapturedRun place(const json& job, const json& pods, std::vector<std::string> extra = {}) {
    json nodes = list(json::array({node("h1"), node("h2"), node("h3"), node("h4")}));
    json hns = list(json::array(
        {health_hypernode("leaf-a", 1, "Node", {"h1", "h2"}),
         degraded(health_hypernode("leaf-b", 1, "Node", {"h3", "h4"}), "DegradedLinkWidth", kUplinkMessage),
         degraded(health_hypernode("spine", 2, "HyperNode", {"leaf-a", "leaf-b"}), "DegradedLinkWidth",
                  kUplinkMessage)}));
    std::vector<std::string> args{"place",
                                  "--nodes",
                                  file("nodes.json", nodes),
                                  "--topology",
                                  file("hn.json", hns),
                                  "--pods",
                                  file("pods.json", list(pods)),
                                  "--job",
                                  file("job.json", job)};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::run_captured(run_cli, args);
  }

  testing::TempDir dir_;
};

std::vector<std::string> nodes_of(const json& pod_set) {
  std::vector<std::string> out;
  for (const auto& a : pod_set["assignment"]) out.push_back(a["node"].get<std::string>());
  return out;
}

TEST_F(FabricHealthPlacementTest, TwoLeavesFitAndTheGangLandsInTheHealthyOne) {
  // A pod using half of h3's cores makes leaf-b the fuller leaf: Volcano's binpack prefers it.
  const json pods = json::array({bound_pod("busy", "h3", "32", "0")});
  auto ignored = place(gang(2), pods, {"--fabric-health", "ignore"});
  ASSERT_EQ(ignored.code, 0) << ignored.err;
  const json by_binpack = json::parse(ignored.out)["podSets"][0];
  EXPECT_EQ(by_binpack["domains"], json::array({"leaf-b"})) << ignored.out;
  EXPECT_FALSE(by_binpack.contains("fabricHealth")) << ignored.out;

  auto preferred = place(gang(2), pods);  // prefer-healthy is the default
  ASSERT_EQ(preferred.code, 0) << preferred.err;
  const json ps = json::parse(preferred.out)["podSets"][0];
  EXPECT_EQ(ps["domains"], json::array({"leaf-a"})) << preferred.out;
  EXPECT_EQ(nodes_of(ps), (std::vector<std::string>{"h1", "h2"}));
  ASSERT_EQ(ps["fabricHealth"].size(), 1u) << preferred.out;
  EXPECT_EQ(ps["fabricHealth"][0],
            std::string("avoided degraded HyperNode leaf-b (FabricDegraded DegradedLinkWidth: ") +
                kUplinkMessage + "), which also holds it");

  auto text = place(gang(2), pods, {"-o", "text"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(
      text.out.find("pod set trainer: 2 pods, tier 1, domain leaf-a\n"
                    "  fabric health: avoided degraded HyperNode leaf-b (FabricDegraded DegradedLinkWidth: "),
      std::string::npos)
      << text.out;

  // The same mode from the scheduler config's hypertopo block; the flag overrides it.
  const std::string conf = text_file("volcano-scheduler.conf",
                                     "actions: \"enqueue, allocate\"\n"
                                     "tiers:\n- plugins:\n  - name: network-topology-aware\n"
                                     "hypertopo:\n  fabricHealth: ignore\n");
  auto from_config = place(gang(2), pods, {"--scheduler-config", conf});
  ASSERT_EQ(from_config.code, 0) << from_config.err;
  EXPECT_EQ(json::parse(from_config.out)["podSets"][0]["domains"], json::array({"leaf-b"}));
  auto flag_wins = place(gang(2), pods, {"--scheduler-config", conf, "--fabric-health", "prefer-healthy"});
  ASSERT_EQ(flag_wins.code, 0) << flag_wins.err;
  EXPECT_EQ(json::parse(flag_wins.out)["podSets"][0]["domains"], json::array({"leaf-a"}));
}

TEST_F(FabricHealthPlacementTest, WithExcludeAGangThatFitsOnlyInTheDegradedLeafDoesNotFitAndSaysWhy) {
  // h1's GPUs are taken: leaf-a holds one 8-GPU pod, only leaf-b holds two.
  const json pods = json::array({bound_pod("full", "h1", "1", "8")});
  auto preferred = place(gang(2), pods);
  ASSERT_EQ(preferred.code, 0) << preferred.err;
  const json ps = json::parse(preferred.out)["podSets"][0];
  EXPECT_EQ(ps["domains"], json::array({"leaf-b"}));
  ASSERT_EQ(ps["fabricHealth"].size(), 1u) << preferred.out;
  EXPECT_EQ(ps["fabricHealth"][0],
            std::string("chose degraded HyperNode leaf-b (FabricDegraded DegradedLinkWidth: ") +
                kUplinkMessage + "): no healthy domain at tier 1 holds the pod set");

  auto excluded = place(gang(2), pods, {"--fabric-health", "exclude", "-o", "text"});
  EXPECT_EQ(excluded.code, 1) << excluded.out << excluded.err;
  EXPECT_NE(
      excluded.out.find("no fit: pod set trainer: no domain at tier <= 1 holds 2 pods; the largest, leaf-a, "
                        "holds 1; leaf-b would hold it, but HyperNode leaf-b is FabricDegraded "
                        "DegradedLinkWidth: " +
                        std::string(kUplinkMessage) + " (fabric health mode exclude)"),
      std::string::npos)
      << excluded.out;
  // One pod still fits the healthy leaf.
  auto one = place(gang(1), pods, {"--fabric-health", "exclude"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(json::parse(one.out)["podSets"][0]["domains"], json::array({"leaf-a"}));
}

TEST_F(FabricHealthPlacementTest, ANodeWhoseOwnLinkIsDegradedIsGivenLast) {
  // One leaf of three nodes; h1's HCA link trained at 1x: the agent names it in the leaf's
  // degraded-members annotation and the leaf is FabricDegraded for that internal link.
  json leaf = degraded(health_hypernode("leaf-a", 1, "Node", {"h1", "h2", "h3"}), "DegradedLinkWidth",
                       "h1 mlx5_0[1] - leaf-a[1]: DegradedLinkWidth, 1x, expected 4x");
  leaf["metadata"]["annotations"] = {{"hypertopo.io/degraded-members", "h1"}};
  const std::vector<std::string> common{
      "place", "--nodes", file("nodes.json", list(json::array({node("h1"), node("h2"), node("h3")}))),
      "--topology", file("hn.json", list(json::array({leaf})))};
  auto run = [&](int count, std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--job", file("job.json", gang(count))});
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::run_captured(run_cli, args);
  };
  auto ignored = run(2, {"--fabric-health", "ignore"});
  ASSERT_EQ(ignored.code, 0) << ignored.err;
  EXPECT_EQ(nodes_of(json::parse(ignored.out)["podSets"][0]), (std::vector<std::string>{"h1", "h2"}));

  auto two = run(2, {});
  ASSERT_EQ(two.code, 0) << two.err;
  const json ps = json::parse(two.out)["podSets"][0];
  EXPECT_EQ(nodes_of(ps), (std::vector<std::string>{"h2", "h3"})) << two.out;

  auto three = run(3, {"-o", "text"});
  ASSERT_EQ(three.code, 0) << three.err;
  EXPECT_NE(three.out.find("fabric health: 1 pod on node h1, whose own link is degraded: given pods last\n"),
            std::string::npos)
      << three.out;
  EXPECT_NE(three.out.find("chose degraded HyperNode leaf-a (FabricDegraded DegradedLinkWidth: h1 mlx5_0[1]"),
            std::string::npos)
      << three.out;
  // Under exclude h1 takes nothing: three pods do not fit, and the reason names it.
  auto excluded = run(3, {"--fabric-health", "exclude"});
  EXPECT_EQ(excluded.code, 1) << excluded.out;
  EXPECT_NE(
      excluded.out.find("leaf-a would hold it, but HyperNode leaf-a is FabricDegraded DegradedLinkWidth"),
      std::string::npos)
      << excluded.out;
}

TEST_F(FabricHealthPlacementTest, ABadModeIsAnInputErrorNamingTheFlagOrTheKey) {
  auto bad_flag = place(gang(1), json::array(), {"--fabric-health", "sometimes"});
  EXPECT_EQ(bad_flag.code, 2);
  EXPECT_NE(bad_flag.err.find("--fabric-health must be prefer-healthy, exclude or ignore, got 'sometimes'"),
            std::string::npos)
      << bad_flag.err;
  const std::string conf = text_file("bad.conf", "tiers: []\nhypertopo:\n  fabricHealth: avoid\n");
  auto bad_key = place(gang(1), json::array(), {"--scheduler-config", conf});
  EXPECT_EQ(bad_key.code, 2);
  EXPECT_NE(bad_key.err.find(
                "bad.conf: hypertopo.fabricHealth: must be prefer-healthy, exclude or ignore, got 'avoid'"),
            std::string::npos)
      << bad_key.err;
  // A condition of the wrong shape names the HyperNode and the field.
  json hn = health_hypernode("leaf-a", 1, "Node", {"h1"});
  hn["status"] = {{"conditions", {{{"type", "FabricDegraded"}, {"status", true}}}}};
  auto bad_condition = testing::run_captured(
      run_cli, {"place", "--nodes", file("n1.json", list(json::array({node("h1")}))), "--topology",
                file("bad-hn.json", list(json::array({hn}))), "--job", file("g.json", gang(1))});
  EXPECT_EQ(bad_condition.code, 2);
  EXPECT_NE(bad_condition.err.find("HyperNode leaf-a status.conditions[0]: status must be a string"),
            std::string::npos)
      << bad_condition.err;
}

// `hypertopo simulate` replays the same rule: a job that only the degraded leaf holds runs there by
// default and is never admitted under exclude, with the reason.
TEST_F(FabricHealthPlacementTest, SimulateExcludesTheDegradedLeafAndSaysWhy) {
  json nodes = list(json::array({node("h1"), node("h2"), node("h3"), node("h4"), node("h5")}));
  json hns =
      list(json::array({health_hypernode("leaf-a", 1, "Node", {"h1", "h2"}),
                        degraded(health_hypernode("leaf-b", 1, "Node", {"h3", "h4", "h5"}), "MissingUplinks",
                                 "leaf-b - spine: MissingUplinks, 1 uplink, expected 2 uplinks"),
                        health_hypernode("spine", 2, "HyperNode", {"leaf-a", "leaf-b"})}));
  auto event = [](int time, const std::string& id, int pods) {
    return json{{"time", time}, {"job", id}, {"duration", 100}, {"arrive", gang(pods)}}.dump() + "\n";
  };
  const std::vector<std::string> args{"simulate",
                                      "--nodes",
                                      file("nodes.json", nodes),
                                      "--topology",
                                      file("hn.json", hns),
                                      "--trace",
                                      text_file("jobs.jsonl", event(0, "wide", 3) + event(0, "pair", 2)),
                                      "-o",
                                      "json"};
  auto preferred = testing::run_captured(run_cli, args);
  ASSERT_EQ(preferred.code, 0) << preferred.err;
  const json engine = json::parse(preferred.out)["policies"][0];
  EXPECT_EQ(engine["policy"], "topology-aware");
  EXPECT_EQ(engine["admitted"], 2);
  EXPECT_EQ(engine["waitMaxSeconds"], 0);

  auto with_exclude = args;
  with_exclude.insert(with_exclude.end(), {"--fabric-health", "exclude"});
  auto excluded = testing::run_captured(run_cli, with_exclude);
  ASSERT_EQ(excluded.code, 0) << excluded.err;
  const json report = json::parse(excluded.out)["policies"][0];
  EXPECT_EQ(report["admitted"], 1);
  ASSERT_EQ(report["neverAdmittedJobs"].size(), 1u) << excluded.out;
  EXPECT_EQ(report["neverAdmittedJobs"][0]["job"], "wide");
  const std::string reason = report["neverAdmittedJobs"][0]["reason"].get<std::string>();
  EXPECT_NE(reason.find("leaf-b would hold it, but HyperNode leaf-b is FabricDegraded MissingUplinks"),
            std::string::npos)
      << reason;

  auto bad = args;
  bad.insert(bad.end(), {"--fabric-health", "never"});
  auto refused = testing::run_captured(run_cli, bad);
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("--fabric-health"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace hypertopo::cli
