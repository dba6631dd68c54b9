// A gang whose pods are partly running, through both doors with the same objects: `place` run as
// the CLI with the HyperNodes, Nodes, Pods and the Volcano Job as files, against the extender fed
// the same objects (ExtenderService set_* calls, as its watch feeds it) and asked for each pending
// pod in rank order as kube-scheduler asks (filter over every node, prioritize when more than one
// node is kept, the highest score, the bind seen as a Pod update). Both must give each missing rank
// the same node, or refuse alike with the same sentence.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "scheduler/extender/extender_service.h"
#include "tests/cli/cluster_objects.h"
#include "tests/cli/extender_door.h"
#include "tests/support/fixtures.h"
#include "timing/clock.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;
using scheduler::ExtenderOptions;
using scheduler::ExtenderService;
using testing::cluster_list;
using testing::gpu_node;
using testing::spine_of_two_leaves;

struct Gang {
  std::string mode = "hard";  // hard | soft
  int tier = 1;
  int size = 8;
  std::string gpus = "4";
  std::map<int, std::string> bound;  // rank -> node, Running
};

// A pod of Volcano Job `train` (task worker), as Volcano's job controller makes it: the PodGroup in
// scheduling.k8s.io/group-name, the job in volcano.sh/job-name, the rank in volcano.sh/task-index;
// the gang's size and constraint as pod annotations, which is how the extender reads them.
json gang_pod(const Gang& g, int rank) {
  json pod{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "train-worker-" + std::to_string(rank)},
        {"namespace", "ml"},
        {"uid", "uid-train-" + std::to_string(rank)},
        {"labels", {{"volcano.sh/job-name", "train"}}},
        {"annotations",
         {{"scheduling.k8s.io/group-name", "train"},
          {"volcano.sh/task-index", std::to_string(rank)},
          {"hypertopo.io/gang-size", std::to_string(g.size)},
          {"hypertopo.io/network-topology-mode", g.mode},
          {"hypertopo.io/highest-tier-allowed", std::to_string(g.tier)}}}}},
      {"spec",
       {{"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", g.gpus}}}}}}}}}},
      {"status", {{"phase", "Pending"}}}};
  if (auto it = g.bound.find(rank); it != g.bound.end()) {
    pod["spec"]["nodeName"] = it->second;
    pod["status"]["phase"] = "Running";
  }
  return pod;
}

json busy_pod_on(const std::string& name, const std::string& node, const std::string& gpus) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "other"}, {"uid", "uid-" + name}}},
          {"spec",
           {{"nodeName", node},
            {"containers", {{{"name", "c"}, {"resources", {{"requests", {{"nvidia.com/gpu", gpus}}}}}}}}}},
          {"status", {{"phase", "Running"}}}};
}

json volcano_job(const Gang& g) {
  json spec{
      {"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", g.gpus}}}}}}}}};
  return {{"apiVersion", "batch.volcano.sh/v1alpha1"},
          {"kind", "Job"},
          {"metadata", {{"name", "train"}, {"namespace", "ml"}}},
          {"spec",
           {{"networkTopology", {{"mode", g.mode}, {"highestTierAllowed", g.tier}}},
            {"tasks", {{{"name", "worker"}, {"replicas", g.size}, {"template", {{"spec", spec}}}}}}}}};
}

struct AroundBoundAnswer {
  std::map<int, std::string> rest;  // missing rank -> node
  std::string refusal;              // "" when every missing rank got a node
};

class PlaceAroundBound : public ::testing::Test {
 protected:
  PlaceAroundBound() {
    for (const char* n : {"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"}) nodes_.push_back(gpu_node(n));
  }

  std::vector<json> cluster_pods(const Gang& g, const std::vector<json>& busy) const {
    std::vector<json> pods = busy;
    for (const auto& [rank, node] : g.bound) pods.push_back(gang_pod(g, rank));
    return pods;
  }

  AroundBoundAnswer through_place(const Gang& g, const std::vector<json>& busy, json* doc_out = nullptr) {
    auto file = [&](const std::string& name, const json& doc) {
      testing::write_text(dir_.path() / name, doc.dump(1));
      return (dir_.path() / name).string();
    };
    const auto run =
        testing::run_captured(run_cli, {"place", "--nodes", file("nodes.json", cluster_list(nodes_)),
                                        "--topology", file("hn.json", spine_of_two_leaves()), "--pods",
                                        file("pods.json", cluster_list(cluster_pods(g, busy))), "--job",
                                        file("job.json", volcano_job(g))});
    AroundBoundAnswer out;
    const json doc = json::parse(run.out, nullptr, false);
    EXPECT_TRUE(doc.is_object()) << run.out << run.err;
    if (!doc.is_object()) return out;
    if (doc_out) *doc_out = doc;
    EXPECT_EQ(run.code, doc["fit"].get<bool>() ? 0 : 1) << run.out;
    if (!doc["fit"].get<bool>()) {
      out.refusal = doc["reason"].get<std::string>();
      return out;
    }
    for (const auto& a : doc["podSets"][0]["assignment"]) {
      if (a["bound"].get<bool>()) {
        // The bound pods are shown where they run, with their own ranks.
        for (int i = 0; i < a["count"].get<int>(); ++i)
          EXPECT_EQ(g.bound.at(a["firstRank"].get<int>() + i), a["node"].get<std::string>()) << run.out;
        continue;
      }
      for (int i = 0; i < a["count"].get<int>(); ++i) out.rest[a["firstRank"].get<int>() + i] = a["node"];
    }
    return out;
  }

  AroundBoundAnswer through_extender(const Gang& g, const std::vector<json>& busy) {
    ExtenderService svc(ExtenderOptions{.clock = std::make_shared<timing::ManualClock>()});
    const json hns = spine_of_two_leaves();
    EXPECT_TRUE(svc.set_hypernodes(hns["items"].get<std::vector<json>>()).has_value());
    EXPECT_TRUE(svc.set_nodes(nodes_.get<std::vector<json>>()).has_value());
    EXPECT_TRUE(svc.set_pods(cluster_pods(g, busy)).has_value());
    json names = json::array();
    for (const auto& n : nodes_) names.push_back(n["metadata"]["name"]);
    AroundBoundAnswer out;
    for (int rank = 0; rank < g.size; ++rank) {
      if (g.bound.contains(rank)) continue;
      json pod = gang_pod(g, rank);
      EXPECT_TRUE(svc.upsert_pod(pod).has_value());
      const testing::ExtenderPick pick = testing::ask_extender(svc, pod, names);
      EXPECT_EQ(pick.error, "");
      if (!pick.error.empty()) return out;
      if (pick.node.empty()) {
        out.refusal = pick.refusal;
        return out;
      }
      const std::string& chosen = pick.node;
      out.rest[rank] = chosen;
      pod["spec"]["nodeName"] = chosen;
      pod["status"]["phase"] = "Running";
      EXPECT_TRUE(svc.upsert_pod(pod).has_value());
    }
    return out;
  }

  json nodes_ = json::array();
  testing::TempDir dir_;
};

// Ranks 0-3 run two to a node on a1 and a2 (4 GPUs each).
Gang half_bound_in_leaf_a(const std::string& mode, int tier, const std::string& gpus) {
  Gang g{.mode = mode, .tier = tier, .gpus = gpus};
  g.bound = gpus == "8" ? std::map<int, std::string>{{0, "a1"}, {1, "a2"}, {2, "a3"}, {3, "a4"}}
                        : std::map<int, std::string>{{0, "a1"}, {1, "a1"}, {2, "a2"}, {3, "a2"}};
  return g;
}

TEST_F(PlaceAroundBound, HardGangWhoseLeafHasRoomJoinsTheLeafAlikeThroughBothDoors) {
  const Gang g = half_bound_in_leaf_a("hard", 1, "4");
  json doc;
  const AroundBoundAnswer place = through_place(g, {}, &doc);
  const AroundBoundAnswer ext = through_extender(g, {});
  ASSERT_EQ(place.refusal, "");
  ASSERT_EQ(ext.refusal, "");
  ASSERT_EQ(place.rest.size(), 4u) << doc.dump();
  EXPECT_EQ(place.rest, ext.rest) << doc.dump();
  for (const auto& [rank, node] : place.rest) EXPECT_EQ(node[0], 'a') << rank << " on " << node;
  EXPECT_EQ(doc["podSets"][0]["bound"], 4);
  EXPECT_EQ(doc["podSets"][0]["domains"], json::array({"leaf-a"}));
}

TEST_F(PlaceAroundBound, HardTierTwoGangWhoseLeafIsFullTakesTheSpinesOtherLeafAlike) {
  const Gang g = half_bound_in_leaf_a("hard", 2, "8");
  json doc;
  const AroundBoundAnswer place = through_place(g, {}, &doc);
  const AroundBoundAnswer ext = through_extender(g, {});
  ASSERT_EQ(place.refusal, "");
  ASSERT_EQ(ext.refusal, "");
  ASSERT_EQ(place.rest.size(), 4u) << doc.dump();
  EXPECT_EQ(place.rest, ext.rest) << doc.dump();
  for (const auto& [rank, node] : place.rest) EXPECT_EQ(node[0], 'b') << rank << " on " << node;
  EXPECT_EQ(doc["podSets"][0]["domains"], json::array({"spine"}));
}

TEST_F(PlaceAroundBound, HardTierOneGangWhoseLeafIsFullWaitsWithTheSameSentenceThroughBothDoors) {
  const Gang g = half_bound_in_leaf_a("hard", 1, "8");
  const AroundBoundAnswer place = through_place(g, {});
  const AroundBoundAnswer ext = through_extender(g, {});
  const std::string expected =
      "4 pods are bound in leaf-a and the other 4 do not fit inside leaf-a, the widest "
      "domain the gang's constraint allows: ";
  EXPECT_EQ(place.refusal.rfind(expected, 0), 0u) << place.refusal;
  EXPECT_NE(ext.refusal.find(expected), std::string::npos) << ext.refusal;
  EXPECT_TRUE(ext.rest.empty());
}

TEST_F(PlaceAroundBound, SoftGangWhoseLeafIsTakenGoesWhereTheExtenderSendsIt) {
  const Gang g = half_bound_in_leaf_a("soft", 1, "4");
  const std::vector<json> busy{busy_pod_on("x3", "a3", "8"), busy_pod_on("x4", "a4", "8")};
  json doc;
  const AroundBoundAnswer place = through_place(g, busy, &doc);
  const AroundBoundAnswer ext = through_extender(g, busy);
  ASSERT_EQ(place.refusal, "");
  ASSERT_EQ(ext.refusal, "");
  ASSERT_EQ(place.rest.size(), 4u) << doc.dump();
  EXPECT_EQ(place.rest, ext.rest) << doc.dump();
  for (const auto& [rank, node] : place.rest) EXPECT_EQ(node[0], 'b') << rank << " on " << node;
}

TEST_F(PlaceAroundBound, AGangEntirelyBoundSaysSoInEveryFormat) {
  Gang g = half_bound_in_leaf_a("hard", 1, "4");
  g.size = 4;
  json doc;
  const AroundBoundAnswer place = through_place(g, {}, &doc);
  EXPECT_TRUE(place.rest.empty());
  EXPECT_EQ(doc["reason"], "all 4 pods of the gang are bound already, in leaf-a");
  EXPECT_EQ(doc["podSets"][0]["bound"], 4);
  const auto text = testing::run_captured(
      run_cli, {"place", "--nodes", (dir_.path() / "nodes.json").string(), "--topology",
                (dir_.path() / "hn.json").string(), "--pods", (dir_.path() / "pods.json").string(), "--job",
                (dir_.path() / "job.json").string(), "-o", "text"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find(", 4 bound"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ranks 0-1  bound"), std::string::npos) << text.out;
}

// A Volcano Job's PodGroup with subGroupPolicy (two replicas of four pods, each replica inside one
// leaf, the gang inside the spine) whose first pod of each replica runs: replica 0's on a1, replica
// 1's on b1. The other three of each replica join their replica's leaf, the running pods keep their
// nodes, and nothing moves. Planned whole, neither leaf holds a replica of four (12 GPUs free in
// each), so the gang would be refused though its rest fits.
TEST(PlaceAroundBoundSubGroups, EachReplicasRestJoinsTheLeafItsBoundPodRunsIn) {
  json nodes = json::array();
  for (const char* n : {"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"}) nodes.push_back(gpu_node(n));
  const std::map<int, std::string> bound{{0, "a1"}, {4, "b1"}};
  std::vector<json> pods{busy_pod_on("x-a3", "a3", "8"), busy_pod_on("x-a4", "a4", "8"),
                         busy_pod_on("x-b3", "b3", "8"), busy_pod_on("x-b4", "b4", "8")};
  const json pod_group{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                       {"kind", "PodGroup"},
                       {"metadata", {{"name", "train"}, {"namespace", "ml"}, {"uid", "uid-pg-train"}}},
                       {"spec",
                        {{"minMember", 8},
                         {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 2}}},
                         {"subGroupPolicy",
                          {{{"name", "replica"},
                            {"subGroupSize", 4},
                            {"labelSelector", {{"matchLabels", {{"volcano.sh/task-spec", "worker"}}}}},
                            {"matchLabelKeys", {"example.com/replica"}},
                            {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 1}}}}}}}},
                       {"status", {{"phase", "Inqueue"}}}};
  json items = json::array({pod_group});
  for (int rank = 0; rank < 8; ++rank) {
    json pod{
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata",
         {{"name", "train-worker-" + std::to_string(rank)},
          {"namespace", "ml"},
          {"uid", "uid-train-" + std::to_string(rank)},
          {"labels",
           {{"volcano.sh/job-name", "train"},
            {"volcano.sh/task-spec", "worker"},
            {"example.com/replica", std::to_string(rank / 4)}}},
          {"annotations",
           {{"scheduling.k8s.io/group-name", "train"},
            {"volcano.sh/job-name", "train"},
            {"volcano.sh/task-spec", "worker"},
            {"volcano.sh/task-index", std::to_string(rank)}}}}},
        {"spec",
         {{"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "4"}}}}}}}}}},
        {"status", {{"phase", "Pending"}}}};
    if (auto it = bound.find(rank); it != bound.end()) {
      pod["spec"]["nodeName"] = it->second;
      pod["status"]["phase"] = "Running";
    }
    items.push_back(pod);
    pods.push_back(pod);
  }
  testing::TempDir dir;
  auto file = [&](const std::string& name, const json& doc) {
    testing::write_text(dir.path() / name, doc.dump(1));
    return (dir.path() / name).string();
  };
  const auto run = testing::run_captured(
      run_cli, {"place", "--nodes", file("nodes.json", cluster_list(nodes)), "--topology",
                file("hn.json", spine_of_two_leaves()), "--pods", file("pods.json", cluster_list(pods)),
                "--job", file("job.json", cluster_list(items))});
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["reason"], "2 pods are bound in spine; the other 6 are placed around them");
  // pod set -> rank -> (node, bound)
  std::map<std::string, std::map<int, std::pair<std::string, bool>>> got;
  for (const auto& ps : doc["podSets"]) {
    for (const auto& a : ps["assignment"]) {
      for (int i = 0; i < a["count"].get<int>(); ++i)
        got[ps["name"]][a["firstRank"].get<int>() + i] = {a["node"], a["bound"].get<bool>()};
    }
  }
  using Slot = std::pair<std::string, bool>;
  const std::map<std::string, std::map<int, Slot>> expected{
      {"replica/0", {{0, {"a1", true}}, {1, {"a1", false}}, {2, {"a2", false}}, {3, {"a2", false}}}},
      {"replica/1", {{0, {"b1", true}}, {1, {"b1", false}}, {2, {"b2", false}}, {3, {"b2", false}}}}};
  EXPECT_EQ(got, expected) << doc.dump(1);
  for (const auto& ps : doc["podSets"]) {
    const std::string leaf = ps["name"] == "replica/0" ? "leaf-a" : "leaf-b";
    EXPECT_EQ(ps["domains"], json::array({leaf})) << ps.dump();
  }
}

}  // namespace
}  // namespace hypertopo::cli
