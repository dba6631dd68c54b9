// `hypertopo place` on a full cluster: a gang of higher priority is planned with victims in one
// domain, as a user sees it from kubectl output files. The cluster: a spine over leaf-a {a1..a4} and
// leaf-b {b1..b4}, eight GPUs a node, every node full with one 8-GPU pod. Priorities come from
// spec.priority, from PriorityClasses in the --pods list or in --priority-classes, and
// PodDisruptionBudgets from the --pods list.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/commands.h"
#include "tests/cli/cluster_objects.h"
#include "tests/support/fixtures.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;
using testing::cluster_list;
using testing::gpu_node;
using testing::spine_of_two_leaves;

// A running pod of `gpus` GPUs on `node`; `spec_extra` adds priority fields, `labels` its labels.
json pod(const std::string& name, const std::string& node_name, json spec_extra = json::object(),
         json labels = json::object(), int gpus = 8) {
  json spec{{"nodeName", node_name},
            {"containers",
             {{{"name", "c"}, {"resources", {{"requests", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}};
  for (const auto& [k, v] : spec_extra.items()) spec[k] = v;
  json meta{{"name", name}, {"namespace", "batch"}, {"uid", "uid-" + name}};
  if (!labels.empty()) meta["labels"] = labels;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", meta},
          {"spec", spec},
          {"status", {{"phase", "Running"}, {"startTime", "2026-11-01T00:00:00Z"}}}};
}

json priority_class(const std::string& name, int value, json extra = json::object()) {
  json pc{{"apiVersion", "scheduling.k8s.io/v1"},
          {"kind", "PriorityClass"},
          {"metadata", {{"name", name}}},
          {"value", value}};
  for (const auto& [k, v] : extra.items()) pc[k] = v;
  return pc;
}

// A Volcano Job of `replicas` 8-GPU pods, hard inside one tier-1 domain; `template_extra` adds to
// the task's pod spec, `job_extra` to the Job's spec.
json preemption_volcano_job(int replicas, json template_extra = json::object(),
                            json job_extra = json::object()) {
  json spec{{"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "8"}}}}}}}}};
  for (const auto& [k, v] : template_extra.items()) spec[k] = v;
  json job_spec{{"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 1}}},
                {"tasks", {{{"name", "worker"}, {"replicas", replicas}, {"template", {{"spec", spec}}}}}}};
  for (const auto& [k, v] : job_extra.items()) job_spec[k] = v;
  return {{"apiVersion", "batch.volcano.sh/v1alpha1"},
          {"kind", "Job"},
          {"metadata", {{"name", "train"}, {"namespace", "ml"}}},
          {"spec", job_spec}};
}

class PlacePreemptionTest : public ::testing::Test {
 protected:
  static std::vector<std::string> node_names() { return {"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"}; }

  std::string file(const std::string& name, const json& doc) {
    testing::write_text(dir_.path() / name, doc.dump(1));
    return (dir_.path() / name).string();
  }

  // Every node full with one 8-GPU pod named after it, `spec_extra` on each.
  static json full_cluster_pods(const json& spec_extra = json::object()) {
    json items = json::array();
    for (const auto& n : node_names()) items.push_back(pod("low-" + n, n, spec_extra));
    return items;
  }

  testing::CapturedRun place(const json& job, const json& pod_items, std::vector<std::string> extra = {}) {
    json nodes = json::array();
    for (const auto& n : node_names()) nodes.push_back(gpu_node(n));
    const json hns = spine_of_two_leaves();
    std::vector<std::string> args{"place",
                                  "--nodes",
                                  file("nodes.json", cluster_list(nodes)),
                                  "--topology",
                                  file("hn.json", hns),
                                  "--pods",
                                  file("pods.json", cluster_list(pod_items)),
                                  "--job",
                                  file("job.json", job)};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::run_captured(run_cli, args);
  }

  static json parsed(const testing::CapturedRun& run) { return json::parse(run.out, nullptr, false); }

  static std::set<std::string> victim_nodes(const json& result) {
    std::set<std::string> out;
    for (const auto& v : result["preemption"]["victims"]) out.insert(v["node"].get<std::string>());
    return out;
  }
  static std::set<std::string> assigned_nodes(const json& result) {
    std::set<std::string> out;
    for (const auto& a : result["podSets"][0]["assignment"]) out.insert(a["node"].get<std::string>());
    return out;
  }

  testing::TempDir dir_;
};

const std::set<std::string> kLeafA{"a1", "a2", "a3", "a4"};
const std::set<std::string> kLeafB{"b1", "b2", "b3", "b4"};

// The measured case of kube-scheduler's pod-by-pod preemption, at a small scale: evicting the four
// pods of one leaf is enough, and nothing outside it is touched.
TEST_F(PlacePreemptionTest, AHighPriorityGangOnAFullClusterEvictsThePodsOfOneLeaf) {
  json items = full_cluster_pods({{"priority", 0}});
  auto run = place(preemption_volcano_job(4, {{"priority", 1000}}), items);
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const json result = parsed(run);
  ASSERT_TRUE(result.contains("preemption")) << run.out;
  EXPECT_TRUE(result["fit"].get<bool>());
  const json& p = result["preemption"];
  EXPECT_EQ(p["priority"], 1000);
  EXPECT_EQ(p["tier"], 1);
  ASSERT_EQ(p["victims"].size(), 4u) << run.out;
  const auto victims = victim_nodes(result);
  EXPECT_TRUE(victims == kLeafA || victims == kLeafB) << run.out;
  EXPECT_EQ(p["domain"], victims == kLeafA ? "leaf-a" : "leaf-b");
  // The gang lands exactly where the victims leave room.
  EXPECT_EQ(assigned_nodes(result), victims) << run.out;
  for (const auto& v : p["victims"]) {
    EXPECT_EQ(v["namespace"], "batch");
    EXPECT_EQ(v["name"], "low-" + v["node"].get<std::string>());
    EXPECT_EQ(v["priority"], 0);
    EXPECT_FALSE(v["violatesBudget"].get<bool>());
  }
  EXPECT_TRUE(p["brokenGangs"].empty());
  EXPECT_EQ(p["gpusEvicted"], 32);
  EXPECT_EQ(p["cost"]["victims"], 4);
  EXPECT_EQ(p["cost"]["highestPriority"], 0);
  EXPECT_NE(p["why"].get<std::string>().find("4 victims of priority <= 0"), std::string::npos) << p["why"];
}

// Every output format shows the victims and why.
TEST_F(PlacePreemptionTest, TextAndYamlShowTheVictimsAndTheCost) {
  json items = full_cluster_pods({{"priority", 0}});
  auto text = place(preemption_volcano_job(4, {{"priority", 1000}}), items, {"-o", "text"});
  ASSERT_EQ(text.code, 0) << text.err << text.out;
  EXPECT_EQ(text.out.rfind("fit after preempting 4 pods\n", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("preemption (priority 1000): evict 4 pods in leaf-"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  batch/low-a1  on a1  priority 0\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  why: leaf-a (tier 1) is the cheapest of"), std::string::npos) << text.out;
  auto yaml = place(preemption_volcano_job(4, {{"priority", 1000}}), items, {"-o", "yaml"});
  ASSERT_EQ(yaml.code, 0) << yaml.err;
  EXPECT_NE(yaml.out.find("preemption:"), std::string::npos) << yaml.out;
  EXPECT_NE(yaml.out.find("name: \"low-a1\""), std::string::npos) << yaml.out;
  EXPECT_NE(yaml.out.find("why: \"leaf-a (tier 1)"), std::string::npos) << yaml.out;
}

// kubectl get pods,priorityclasses -A -o json: one List; the job's class and the pods' classes
// (pods without spec.priority) resolve from the PriorityClasses in it.
TEST_F(PlacePreemptionTest, PriorityClassesInThePodsListResolveTheClassNames) {
  json items = full_cluster_pods({{"priorityClassName", "batch-low"}});
  items.push_back(priority_class("batch-low", 10));
  items.push_back(priority_class("train-high", 100000));
  auto run = place(preemption_volcano_job(4, json::object(), {{"priorityClassName", "train-high"}}), items);
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const json result = parsed(run);
  ASSERT_EQ(result["preemption"]["victims"].size(), 4u) << run.out;
  EXPECT_EQ(result["preemption"]["priority"], 100000);
  EXPECT_EQ(result["preemption"]["victims"][0]["priority"], 10);
}

TEST_F(PlacePreemptionTest, PriorityClassNameResolvedFromAPriorityClassesFile) {
  const std::string yaml_list =
      "apiVersion: v1\nkind: List\nitems:\n"
      "- apiVersion: scheduling.k8s.io/v1\n  kind: PriorityClass\n"
      "  metadata: {name: batch-low}\n  value: 10\n"
      "- apiVersion: scheduling.k8s.io/v1\n  kind: PriorityClass\n"
      "  metadata: {name: train-high}\n  value: 100000\n  description: training\n";
  testing::write_text(dir_.path() / "classes.yaml", yaml_list);
  json items = full_cluster_pods({{"priorityClassName", "batch-low"}});
  // A batch/v1 Job's template names the class.
  json container{{"name", "m"}, {"resources", {{"requests", {{"nvidia.com/gpu", "8"}}}}}};
  json pod_template{
      {"metadata", {{"annotations", {{"kueue.x-k8s.io/podset-required-topology", "1"}}}}},
      {"spec", {{"priorityClassName", "train-high"}, {"containers", json::array({container})}}}};
  json job{{"apiVersion", "batch/v1"},
           {"kind", "Job"},
           {"metadata", {{"name", "train"}}},
           {"spec", {{"parallelism", 2}, {"template", pod_template}}}};
  auto run = place(job, items,
                   {"--priority-classes", (dir_.path() / "classes.yaml").string(), "--semantics", "engine"});
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const json result = parsed(run);
  ASSERT_TRUE(result.contains("preemption")) << run.out;
  EXPECT_EQ(result["preemption"]["priority"], 100000);
  ASSERT_EQ(result["preemption"]["victims"].size(), 2u) << run.out;
  EXPECT_EQ(result["preemption"]["victims"][0]["priority"], 10);
  EXPECT_EQ(result["preemption"]["tier"], 1);
  // Without the file neither the job's class nor the pods' resolve.
  auto without = place(job, items, {"--semantics", "engine"});
  EXPECT_EQ(without.code, 2) << without.out;
  EXPECT_NE(
      without.err.find("Job train template spec: priorityClassName 'train-high' matches no PriorityClass"),
      std::string::npos)
      << without.err;
  job["spec"]["template"]["spec"].erase("priorityClassName");
  job["spec"]["template"]["spec"]["priority"] = 100000;
  without = place(job, items, {"--semantics", "engine"});
  EXPECT_EQ(without.code, 2) << without.out;
  EXPECT_NE(without.err.find("Pod batch/low-a1: priorityClassName 'batch-low' matches no PriorityClass"),
            std::string::npos)
      << without.err;
}

TEST_F(PlacePreemptionTest, AnUnknownPriorityClassIsAnErrorNamingTheClassAndTheJob) {
  auto run = place(preemption_volcano_job(4, json::object(), {{"priorityClassName", "no-such-class"}}),
                   full_cluster_pods({{"priority", 0}}));
  EXPECT_EQ(run.code, 2) << run.out;
  EXPECT_NE(run.err.find("priorityClassName 'no-such-class' matches no PriorityClass"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("Volcano Job train spec"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("job.json"), std::string::npos) << run.err;
  // A --priority-classes file holding something else is refused, naming the item.
  auto bad = place(preemption_volcano_job(4, {{"priority", 1000}}), full_cluster_pods({{"priority", 0}}),
                   {"--priority-classes", file("classes.json", cluster_list(json::array({gpu_node("x")})))});
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.err.find("items[0]: expected kind PriorityClass, got 'Node'"), std::string::npos) << bad.err;
}

TEST_F(PlacePreemptionTest, PreemptionPolicyNeverEvictsNothing) {
  const json items = full_cluster_pods({{"priority", 0}});
  auto run = place(preemption_volcano_job(4, {{"priority", 1000}, {"preemptionPolicy", "Never"}}), items);
  EXPECT_EQ(run.code, 1) << run.err << run.out;
  json result = parsed(run);
  EXPECT_FALSE(result.contains("preemption")) << run.out;
  EXPECT_NE(result["reason"].get<std::string>().find("with preemption: the pod's preemptionPolicy is Never"),
            std::string::npos)
      << run.out;
  // The same from the PriorityClass's preemptionPolicy.
  json with_class = items;
  with_class.push_back(priority_class("no-preempt", 1000, {{"preemptionPolicy", "Never"}}));
  run = place(preemption_volcano_job(4, {{"priorityClassName", "no-preempt"}}), with_class);
  EXPECT_EQ(run.code, 1) << run.err << run.out;
  result = parsed(run);
  EXPECT_FALSE(result.contains("preemption")) << run.out;
  EXPECT_NE(result["reason"].get<std::string>().find("preemptionPolicy is Never"), std::string::npos)
      << run.out;
}

TEST_F(PlacePreemptionTest, EqualPriorityEvictsNothing) {
  auto run = place(preemption_volcano_job(4, {{"priority", 1000}}), full_cluster_pods({{"priority", 1000}}));
  EXPECT_EQ(run.code, 1) << run.err << run.out;
  const json result = parsed(run);
  EXPECT_FALSE(result.contains("preemption")) << run.out;
  EXPECT_NE(result["reason"].get<std::string>().find(
                "with preemption: no running pod has a priority below the job's 1000"),
            std::string::npos)
      << run.out;
}

// With room for the gang nothing changes: no victims, the same answer as without priorities.
TEST_F(PlacePreemptionTest, AGangThatFitsPreemptsNothing) {
  json items = full_cluster_pods({{"priority", 0}});
  items.erase(items.begin() + 4, items.end());  // leaf-b is empty
  auto plain = place(preemption_volcano_job(4), items);
  auto high = place(preemption_volcano_job(4, {{"priority", 1000}}), items);
  ASSERT_EQ(high.code, 0) << high.err;
  EXPECT_FALSE(parsed(high).contains("preemption")) << high.out;
  EXPECT_EQ(high.out, plain.out);
  EXPECT_EQ(assigned_nodes(parsed(high)), kLeafB);
}

// A PodDisruptionBudget in the --pods list that allows no disruption of leaf-a's pods: leaf-b's are
// taken instead (without it leaf-a's are, the first in tree order).
TEST_F(PlacePreemptionTest, APodDisruptionBudgetInThePodsListMovesTheVictimsToTheOtherLeaf) {
  json items = json::array();
  for (const auto& n : node_names())
    items.push_back(pod("low-" + n, n, {{"priority", 0}}, {{"app", n[0] == 'a' ? "serving" : "batch"}}));
  auto unprotected = place(preemption_volcano_job(4, {{"priority", 1000}}), items);
  ASSERT_EQ(unprotected.code, 0) << unprotected.err;
  EXPECT_EQ(victim_nodes(parsed(unprotected)), kLeafA) << unprotected.out;
  items.push_back({{"apiVersion", "policy/v1"},
                   {"kind", "PodDisruptionBudget"},
                   {"metadata", {{"name", "serving"}, {"namespace", "batch"}}},
                   {"spec", {{"minAvailable", 4}, {"selector", {{"matchLabels", {{"app", "serving"}}}}}}},
                   {"status", {{"disruptionsAllowed", 0}}}});
  auto run = place(preemption_volcano_job(4, {{"priority", 1000}}), items);
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const json result = parsed(run);
  EXPECT_EQ(victim_nodes(result), kLeafB) << run.out;
  EXPECT_EQ(result["preemption"]["cost"]["budgetViolations"], 0);
}

// Four gangs of one pod each in leaf-a against one gang of four in leaf-b: losing one gang's work
// is cheaper than breaking four, so leaf-b's gang goes, whole.
TEST_F(PlacePreemptionTest, AWholeLowerPriorityGangIsTakenBeforeSeveralAreBroken) {
  json items = json::array();
  for (const auto& n : node_names()) {
    const std::string gang = n[0] == 'a' ? "small-" + n : "big";
    items.push_back(pod("low-" + n, n, {{"priority", 0}}, {{"scheduling.x-k8s.io/pod-group", gang}}));
  }
  auto run = place(preemption_volcano_job(4, {{"priority", 1000}}), items);
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const json result = parsed(run);
  EXPECT_EQ(victim_nodes(result), kLeafB) << run.out;
  EXPECT_EQ(result["preemption"]["brokenGangs"], json::array({"batch/big"})) << run.out;
  EXPECT_EQ(result["preemption"]["victims"][0]["gang"], "batch/big");
  EXPECT_EQ(result["preemption"]["cost"]["units"], 1);
}

// Five 8-GPU pods never fit in a leaf of four nodes: the no-fit reason adds the planner's.
TEST_F(PlacePreemptionTest, WhenEvenPreemptionDoesNotHelpTheReasonSaysWhy) {
  auto run = place(preemption_volcano_job(5, {{"priority", 1000}}), full_cluster_pods({{"priority", 0}}),
                   {"-o", "text"});
  EXPECT_EQ(run.code, 1) << run.err << run.out;
  EXPECT_EQ(run.out.rfind("no fit: ", 0), 0u) << run.out;
  EXPECT_NE(
      run.out.find("; with preemption: evicting every pod of lower priority than 1000 makes room for at "
                   "most 4 of 5 pods"),
      std::string::npos)
      << run.out;
}

// kubectl get nodes,priorityclasses -o json: the PriorityClasses of the nodes list count too.
TEST_F(PlacePreemptionTest, PriorityClassesInTheNodesListCount) {
  json nodes = json::array();
  for (const auto& n : node_names()) nodes.push_back(gpu_node(n));
  nodes.push_back(priority_class("train-high", 5000));
  const json hns = spine_of_two_leaves();
  auto run = testing::run_captured(
      run_cli,
      {"place", "--nodes", file("nodes.json", cluster_list(nodes)), "--topology", file("hn.json", hns),
       "--pods", file("pods.json", cluster_list(full_cluster_pods({{"priority", 0}}))), "--job",
       file("job.json", preemption_volcano_job(4, json::object(), {{"priorityClassName", "train-high"}}))});
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  EXPECT_EQ(parsed(run)["preemption"]["priority"], 5000);
}

// A YAML pods list (read as a document, not with simdjson) and a --priority-classes file holding
// one PriorityClass; pods without spec.priority take their class's value.
TEST_F(PlacePreemptionTest, AYamlPodsListAndASinglePriorityClassFile) {
  std::string yaml = "apiVersion: v1\nkind: List\nitems:\n";
  for (const auto& n : node_names()) {
    yaml += "- apiVersion: v1\n  kind: Pod\n  metadata: {name: low-" + n + ", namespace: batch}\n" +
            "  spec:\n    nodeName: " + n + "\n    priorityClassName: low\n" +
            "    containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"8\"}}}]\n" +
            "  status: {phase: Running}\n";
  }
  testing::write_text(dir_.path() / "pods.yaml", yaml);
  json nodes = json::array();
  for (const auto& n : node_names()) nodes.push_back(gpu_node(n));
  const json hns = spine_of_two_leaves();
  auto run = testing::run_captured(
      run_cli, {"place", "--nodes", file("nodes.json", cluster_list(nodes)), "--topology",
                file("hn.json", hns), "--pods", (dir_.path() / "pods.yaml").string(), "--job",
                file("job.json", preemption_volcano_job(4, {{"priority", 1000}})), "--priority-classes",
                file("low.json", priority_class("low", -5))});
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const json result = parsed(run);
  ASSERT_EQ(result["preemption"]["victims"].size(), 4u) << run.out;
  EXPECT_EQ(result["preemption"]["victims"][0]["priority"], -5);
  EXPECT_EQ(victim_nodes(result), kLeafA) << run.out;
}

// Pods already terminating count as gone: the gang takes the leaf they leave, evicting nobody.
TEST_F(PlacePreemptionTest, PodsAlreadyTerminatingAreNoVictims) {
  json items = full_cluster_pods({{"priority", 0}});
  for (std::size_t i = 4; i < items.size(); ++i)
    items[i]["metadata"]["deletionTimestamp"] = "2026-11-27T00:00:00Z";  // leaf-b's
  auto run = place(preemption_volcano_job(4, {{"priority", 1000}}), items, {"-o", "text"});
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  EXPECT_EQ(run.out.rfind("fit once the terminating pods leave\n", 0), 0u) << run.out;
  run = place(preemption_volcano_job(4, {{"priority", 1000}}), items);
  const json result = parsed(run);
  EXPECT_TRUE(result["preemption"]["victims"].empty()) << run.out;
  EXPECT_EQ(assigned_nodes(result), kLeafB) << run.out;
}

// The neutral request's top-level priority fields (docs/placement.md, "The neutral request").
TEST_F(PlacePreemptionTest, TheNeutralRequestCarriesItsPriority) {
  json request{{"apiVersion", "hypertopo.io/v1alpha1"},
               {"kind", "PlacementRequest"},
               {"name", "n"},
               {"priority", 1000},
               {"podSets",
                {{{"name", "w"},
                  {"count", 4},
                  {"requests", {{"nvidia.com/gpu", "8"}}},
                  {"topology", {{"mode", "required"}, {"level", "1"}}}}}}};
  auto run = place(request, full_cluster_pods({{"priority", 0}}));
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  EXPECT_EQ(parsed(run)["preemption"]["victims"].size(), 4u) << run.out;
  request["preemptionPolicy"] = "Sometimes";
  run = place(request, full_cluster_pods({{"priority", 0}}));
  EXPECT_EQ(run.code, 2) << run.out;
  EXPECT_NE(run.err.find("PlacementRequest n: preemptionPolicy must be Never or PreemptLowerPriority"),
            std::string::npos)
      << run.err;
}

// docs/placement.md's Preemption example, built from the files its prose describes and run as it is
// written there: what it prints must be the text under the command.
// The doc's example runs on the files in examples/place/preemption/ (PlacementDoc runs it and
// compares its text); those files are the cluster these tests build.
TEST_F(PlacePreemptionTest, TheDocExampleFilesAreTheClusterTheseTestsBuild) {
  const std::filesystem::path example =
      std::filesystem::path(HYPERTOPO_SOURCE_DIR) / "examples/place/preemption";
  json nodes = json::array();
  for (const auto& n : node_names()) nodes.push_back(gpu_node(n));
  EXPECT_EQ(json::parse(testing::read_text(example / "nodes.json")), cluster_list(nodes));
  json items = json::array();
  for (const auto& n : node_names()) {
    items.push_back(pod("batch-" + n, n, {{"priorityClassName", "batch"}, {"priority", 0}},
                        {{"scheduling.x-k8s.io/pod-group", std::string("sweep-") + n[0]}}));
    items.back()["metadata"]["namespace"] = "research";
  }
  items.push_back(priority_class("batch", 0));
  items.push_back(priority_class("production", 1000));
  EXPECT_EQ(json::parse(testing::read_text(example / "pods.json")), cluster_list(items));
  const json hns = spine_of_two_leaves();
  EXPECT_EQ(json::parse(testing::read_text(example / "hypernodes.json")), hns);
}

}  // namespace
}  // namespace hypertopo::cli
