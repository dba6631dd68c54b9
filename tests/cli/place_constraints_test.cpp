// `hypertopo place` with what kube-scheduler checks before the extender (node affinity, taints,
// cordoned nodes) and with elastic Volcano Jobs (minAvailable), on kubectl-shaped files. The cluster:
// a spine over leaf-a {a1..a4} and leaf-b {b1..b4}, eight GPUs a node; a pod on a1 makes leaf-a the
// fuller leaf, so Volcano's binpack prefers it: a gang that lands in leaf-b was moved there by its
// constraints, not by a tie-break.
#include <gtest/gtest.h>

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

// A Volcano Job (batch.volcano.sh/v1alpha1): one task of `replicas` pods of `gpus` GPUs, hard tier 1.
json constrained_volcano_job(int replicas, const std::string& gpus, json pod_spec_extra = json::object(),
                             int min_available = 0) {
  json spec{{"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", gpus}}}}}}}}};
  for (const auto& [k, v] : pod_spec_extra.items()) spec[k] = v;
  json job{{"apiVersion", "batch.volcano.sh/v1alpha1"},
           {"kind", "Job"},
           {"metadata", {{"name", "train"}}},
           {"spec",
            {{"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 1}}},
             {"tasks", {{{"name", "worker"}, {"replicas", replicas}, {"template", {{"spec", spec}}}}}}}}};
  if (min_available > 0) job["spec"]["minAvailable"] = min_available;
  return job;
}

json required(const json& terms) {
  return {{"affinity",
           {{"nodeAffinity",
             {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", terms}}}}}}}};
}

class PlaceConstraintsTest : public ::testing::Test {
 protected:
  PlaceConstraintsTest() {
    for (int i = 1; i <= 4; ++i) {
      nodes_.push_back(gpu_node("a" + std::to_string(i), {{"pool", "reserved"}, {"gpu-gen", "8"}}));
      nodes_.push_back(
          gpu_node("b" + std::to_string(i), {{"pool", "shared"}, {"gpu-gen", std::to_string(8 + i % 2)}}));
    }
  }

  std::string file(const std::string& name, const json& doc) {
    testing::write_text(dir_.path() / name, doc.dump(1));
    return (dir_.path() / name).string();
  }

  testing::CapturedRun place(const json& job) {
    const json hns = spine_of_two_leaves();
    const json busy{
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", "busy"}, {"namespace", "ml"}}},
        {"spec",
         {{"nodeName", "a1"},
          {"containers", {{{"name", "c"}, {"resources", {{"requests", {{"nvidia.com/gpu", "4"}}}}}}}}}},
        {"status", {{"phase", "Running"}}}};
    return testing::run_captured(
        run_cli,
        {"place", "--nodes", file("nodes.json", cluster_list(nodes_)), "--topology", file("hn.json", hns),
         "--pods", file("pods.json", cluster_list(json::array({busy}))), "--job", file("job.json", job)});
  }

  // The nodes the job's pods landed on.
  static std::set<std::string> nodes_of(const testing::CapturedRun& run) {
    std::set<std::string> out;
    const json doc = json::parse(run.out, nullptr, false);
    if (!doc.is_object()) return out;
    for (const auto& a : doc["podSets"][0]["assignment"]) out.insert(a["node"].get<std::string>());
    return out;
  }
  static bool all_in(const std::set<std::string>& nodes, char leaf) {
    for (const auto& n : nodes) {
      if (n[0] != leaf) return false;
    }
    return !nodes.empty();
  }

  json nodes_ = json::array();
  testing::TempDir dir_;
};

TEST_F(PlaceConstraintsTest, RequiredAffinityExcludingTheBinpackFavouritePlacesTheGangInTheOtherLeaf) {
  auto plain = place(constrained_volcano_job(4, "4"));
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_TRUE(all_in(nodes_of(plain), 'a')) << plain.out;  // the favourite
  const json not_reserved =
      json::array({{{"matchExpressions",
                     json::array({{{"key", "pool"}, {"operator", "NotIn"}, {"values", {"reserved"}}}})}}});
  auto moved = place(constrained_volcano_job(4, "4", required(not_reserved)));
  ASSERT_EQ(moved.code, 0) << moved.err;
  EXPECT_TRUE(all_in(nodes_of(moved), 'b')) << moved.out;
}

TEST_F(PlaceConstraintsTest, EveryOperatorAndMatchFieldsAsKubeSchedulerReadsThem) {
  auto lands_on = [&](const json& terms) {
    return nodes_of(place(constrained_volcano_job(1, "8", required(terms))));
  };
  auto expr = [](const std::string& key, const std::string& op, json values) {
    json e{{"key", key}, {"operator", op}};
    if (!values.is_null()) e["values"] = values;
    return json::array({{{"matchExpressions", json::array({e})}}});
  };
  // In / NotIn / Exists / DoesNotExist / Gt / Lt on labels (b1 and b3 carry gpu-gen 9).
  EXPECT_TRUE(all_in(lands_on(expr("pool", "In", {"shared"})), 'b'));
  EXPECT_TRUE(all_in(lands_on(expr("pool", "NotIn", {"shared"})), 'a'));
  EXPECT_TRUE(all_in(lands_on(expr("gpu-gen", "Exists", nullptr)), 'a'));  // every node: the favourite
  EXPECT_TRUE(
      nodes_of(place(constrained_volcano_job(1, "8", required(expr("pool", "DoesNotExist", nullptr)))))
          .empty());
  const auto newer = lands_on(expr("gpu-gen", "Gt", {"8"}));
  EXPECT_TRUE(newer == std::set<std::string>{"b1"} || newer == std::set<std::string>{"b3"});
  const auto older = lands_on(expr("gpu-gen", "Lt", {"9"}));
  ASSERT_EQ(older.size(), 1u);
  EXPECT_FALSE(older.contains("b1") || older.contains("b3")) << *older.begin();  // gpu-gen 9
  // matchFields on metadata.name, one value.
  EXPECT_EQ(lands_on(json::array(
                {{{"matchFields",
                   json::array({{{"key", "metadata.name"}, {"operator", "In"}, {"values", {"b4"}}}})}}})),
            std::set<std::string>{"b4"});
  // Terms are ORed; inside a term, requirements are ANDed.
  const json two_terms = json::array(
      {{{"matchFields", json::array({{{"key", "metadata.name"}, {"operator", "In"}, {"values", {"b2"}}}})}},
       {{"matchExpressions",
         json::array({{{"key", "pool"}, {"operator", "In"}, {"values", {"nowhere"}}}})}}});
  EXPECT_EQ(lands_on(two_terms), std::set<std::string>{"b2"});
  const json and_term = json::array(
      {{{"matchExpressions", json::array({{{"key", "pool"}, {"operator", "In"}, {"values", {"shared"}}},
                                          {{"key", "gpu-gen"}, {"operator", "Lt"}, {"values", {"9"}}}})}}});
  const auto both = lands_on(and_term);
  EXPECT_TRUE(both == std::set<std::string>{"b2"} || both == std::set<std::string>{"b4"});
  // An empty term matches nothing (component-helpers nodeaffinity), an unknown operator is refused.
  auto none = place(constrained_volcano_job(1, "8", required(json::array({json::object()}))));
  EXPECT_EQ(none.code, 1) << none.out << none.err;
  auto bad = place(constrained_volcano_job(1, "8", required(expr("pool", "Near", {"x"}))));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("operator must be In, NotIn, Exists, DoesNotExist, Gt or Lt, got 'Near'"),
            std::string::npos)
      << bad.err;
}

TEST_F(PlaceConstraintsTest, TaintsTolerationsAndCordonedNodes) {
  for (auto& n : nodes_) {
    if (n["metadata"]["name"].get<std::string>()[0] == 'a')
      n["spec"]["taints"] =
          json::array({{{"key", "maintenance"}, {"value", "yes"}, {"effect", "NoSchedule"}}});
  }
  auto tainted = place(constrained_volcano_job(4, "4"));
  ASSERT_EQ(tainted.code, 0) << tainted.err;
  EXPECT_TRUE(all_in(nodes_of(tainted), 'b')) << tainted.out;
  const json tolerate{
      {"tolerations",
       json::array(
           {{{"key", "maintenance"}, {"operator", "Equal"}, {"value", "yes"}, {"effect", "NoSchedule"}}})}};
  auto tolerated = place(constrained_volcano_job(4, "4", tolerate));
  ASSERT_EQ(tolerated.code, 0) << tolerated.err;
  EXPECT_TRUE(all_in(nodes_of(tolerated), 'a')) << tolerated.out;
  // leaf-b cordoned too: nothing fits, and the reason counts what kube-scheduler's filters exclude.
  for (auto& n : nodes_) {
    if (n["metadata"]["name"].get<std::string>()[0] == 'b') n["spec"]["unschedulable"] = true;
  }
  auto none = place(constrained_volcano_job(4, "4"));
  EXPECT_EQ(none.code, 1) << none.out;
  const std::string reason = json::parse(none.out)["reason"];
  EXPECT_NE(
      reason.find("8 of 8 nodes are excluded by the pod's node constraints (4 node(s) had untolerated taint "
                  "{maintenance: yes}, 4 node(s) were unschedulable)"),
      std::string::npos)
      << reason;
}

TEST_F(PlaceConstraintsTest, AVolcanoJobWithMinAvailableStartsWithWhatFitsInOneLeaf) {
  // Eight 8-GPU pods do not fit in a leaf of four nodes; with minAvailable 4 the job starts with 4.
  auto whole = place(constrained_volcano_job(8, "8"));
  EXPECT_EQ(whole.code, 1) << whole.out;
  auto elastic = place(constrained_volcano_job(8, "8", json::object(), 4));
  ASSERT_EQ(elastic.code, 0) << elastic.out << elastic.err;
  const json ps = json::parse(elastic.out)["podSets"][0];
  EXPECT_EQ(ps["placed"], 4) << elastic.out;
  EXPECT_TRUE(all_in(nodes_of(elastic), 'b')) << elastic.out;  // leaf-a's a1 holds only half a pod more
  EXPECT_NE(ps["reason"].get<std::string>().find("placed 4 of 8 pods (minAvailable 4)"), std::string::npos)
      << elastic.out;
  // A task's own minAvailable is read the same; one above the replicas is refused. Three pods fit in
  // leaf-a's three free nodes, which the binpack score prefers: Volcano picks the gang's HyperNode for
  // its minimum alone (allocate.go: the tasks stop at JobReady) and the others wait for room there.
  json per_task = constrained_volcano_job(8, "8");
  per_task["spec"]["tasks"][0]["minAvailable"] = 3;
  auto task_min = place(per_task);
  ASSERT_EQ(task_min.code, 0) << task_min.out << task_min.err;
  EXPECT_EQ(json::parse(task_min.out)["podSets"][0]["placed"], 3) << task_min.out;
  EXPECT_TRUE(all_in(nodes_of(task_min), 'a')) << task_min.out;
  per_task["spec"]["tasks"][0]["minAvailable"] = 9;
  EXPECT_EQ(place(per_task).code, 2);
}

// A Job whose minAvailable is above its replicas never exists to be scheduled: Volcano's admission
// webhook refuses it ("job 'minAvailable' should not be greater than total replicas in tasks",
// volcano-sh/volcano pkg/webhooks/admission/jobs/validate/admit_job.go validateJobCreate). `place`
// refuses it as input (exit 2) naming the field, never "fit".
TEST_F(PlaceConstraintsTest, AJobMinAvailableAboveItsReplicasIsRefusedAsInput) {
  const auto run = place(constrained_volcano_job(4, "8", json::object(), 6));
  EXPECT_EQ(run.code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("minAvailable must be from 0 to 4, got 6"), std::string::npos) << run.err;
}

// simulate's two policies keep the same node rules: a job whose required affinity matches no node is
// never admitted, by the engine nor by the first-fit baseline.
TEST_F(PlaceConstraintsTest, SimulateKeepsNodeAffinityInBothPolicies) {
  const json nowhere =
      json::array({{{"matchExpressions",
                     json::array({{{"key", "pool"}, {"operator", "In"}, {"values", {"nowhere"}}}})}}});
  const std::string trace = (dir_.path() / "jobs.jsonl").string();
  testing::write_text(
      trace, json{{"time", 0}, {"job", "fits"}, {"duration", 10}, {"arrive", constrained_volcano_job(2, "8")}}
                     .dump() +
                 "\n" +
                 json{{"time", 0},
                      {"job", "pinned"},
                      {"duration", 10},
                      {"arrive", constrained_volcano_job(1, "8", required(nowhere))}}
                     .dump() +
                 "\n");
  const json hns = spine_of_two_leaves();
  auto r =
      testing::run_captured(run_cli, {"simulate", "--nodes", file("nodes.json", cluster_list(nodes_)),
                                      "--topology", file("hn.json", hns), "--trace", trace, "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json out = json::parse(r.out);
  ASSERT_EQ(out["policies"].size(), 2u);
  for (const auto& policy : out["policies"]) EXPECT_EQ(policy["admitted"], 1) << policy["policy"] << r.out;
}

// A node failure in a trace, as a user writes it: simulate reports what it cost each policy.
TEST_F(PlaceConstraintsTest, SimulateReplaysANodeFailureFromTheTrace) {
  const std::string trace = (dir_.path() / "failures.jsonl").string();
  testing::write_text(
      trace,
      json{{"time", 0}, {"job", "train"}, {"duration", 100}, {"arrive", constrained_volcano_job(4, "8")}}
              .dump() +
          "\n" + R"({"time": 10, "node": "a1", "event": "fail"})" + "\n" +
          R"({"time": 20, "node": "zz", "event": "recover"})" + "\n");
  const json hns = spine_of_two_leaves();
  const std::vector<std::string> args{
      "simulate", "--nodes", file("nodes.json", cluster_list(nodes_)), "--topology", file("hn.json", hns),
      "--trace",  trace};
  auto unknown = testing::run_captured(run_cli, args);
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("failures.jsonl:3: node zz is not in --nodes"), std::string::npos)
      << unknown.err;
  testing::write_text(
      trace,
      json{{"time", 0}, {"job", "train"}, {"duration", 100}, {"arrive", constrained_volcano_job(4, "8")}}
              .dump() +
          "\n" + R"({"time": 10, "node": "a1", "event": "fail"})" + "\n");
  auto r = testing::run_captured(run_cli, args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("node failures / pods lost / pods replaced"), std::string::npos) << r.out;
  std::vector<std::string> with_json = args;
  with_json.insert(with_json.end(), {"-o", "json"});
  auto j = testing::run_captured(run_cli, with_json);
  ASSERT_EQ(j.code, 0) << j.err;
  const json out = json::parse(j.out);
  // The job's four pods fill leaf-a, one a node; a1 fails. The engine's job stays inside one leaf,
  // and leaf-a has no other node: it restarts in leaf-b. First fit moves the pod to b1.
  const json& engine = out["policies"][0];
  const json& ff = out["policies"][1];
  for (const json* p : {&engine, &ff}) {
    EXPECT_EQ((*p)["nodeFailures"], 1) << *p;
    EXPECT_EQ((*p)["podsLost"], 1) << *p;
  }
  EXPECT_EQ(engine["jobsInterrupted"], 1) << engine;
  EXPECT_EQ(engine["podsReplaced"], 0) << engine;
  EXPECT_EQ(ff["jobsInterrupted"], 0) << ff;
  EXPECT_EQ(ff["podsReplaced"], 1) << ff;
}

}  // namespace
}  // namespace hypertopo::cli
