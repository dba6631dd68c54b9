// KAI-Scheduler's topology cases (fixtures/kai/topology-cases.json, transcribed from
// kai-scheduler/KAI-Scheduler pkg/scheduler/actions/allocate/allocateTopology_test.go and the
// topology plugin's tests) run as a user runs them: each allocate case becomes Kubernetes objects
// (a NodeList, a KAI Topology, the running Pods, and a List with the pending job's
// scheduling.run.ai/v2alpha2 PodGroup, its sub-group tree and its Pods) handed to `hypertopo place`.
//
// A case passes when the job fits exactly when KAI allocated it and, for every sub-group, as many
// of its pods land in each domain as in KAI's answer, counted at the lowest level that a constraint
// on the way from the job to that sub-group names (required or preferred): that is what the
// topology plugin decides. Below it KAI orders nodes with its node-ordering plugins (gpupack,
// nodeplacement), which are not topology, so nodes are not compared. The cases of kind calcTreeAllocatable,
// calculateNodeScores and subSetNodesFn call KAI-internal functions with KAI's own structures and
// have no Kubernetes input; they are listed as such.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "tests/support/fixtures.h"

namespace hypertopo::testing {
namespace {

using nlohmann::json;

constexpr const char* kFixture = "kai/topology-cases.json";
// The Go test's tasks_fake.NodeAffinityKey: a node label the pods' required node affinity names.
constexpr const char* kAffinityPlaceholder = "<tasks_fake.NodeAffinityKey>";
constexpr const char* kAffinityLabel = "conformance.hypertopo.io/affinity";

json node_object(const json& n) {
  json labels = json::object();
  labels["kubernetes.io/hostname"] = n["name"];
  const json given = n.value("labels", json::object());
  for (const auto& [k, v] : given.items()) labels[k == kAffinityPlaceholder ? kAffinityLabel : k] = v;
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", n["name"]}, {"labels", labels}}},
          {"spec", json::object()},
          {"status",
           {{"allocatable", {{"nvidia.com/gpu", std::to_string(n.value("gpus", 0))}, {"pods", "110"}}},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

json pod_object(const std::string& name, int gpus) {
  json container = {{"name", "main"},
                    {"resources",
                     {{"requests", {{"nvidia.com/gpu", std::to_string(gpus)}}},
                      {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
          {"spec", {{"containers", json::array({container})}}},
          {"status", {{"phase", "Pending"}}}};
}

json constraint_object(const json& tc) {
  json out = json::object();
  if (!tc.is_object()) return out;
  if (!tc.value("Topology", "").empty()) out["topology"] = tc["Topology"];
  if (!tc.value("RequiredLevel", "").empty()) out["requiredTopologyLevel"] = tc["RequiredLevel"];
  if (!tc.value("PreferredLevel", "").empty()) out["preferredTopologyLevel"] = tc["PreferredLevel"];
  return out;
}

// The transcription's sub-group tree -> PodGroup spec.subGroups (parents before children); the
// leaf pod sets are sub-groups too, as KAI's PodGroup declares them.
void flatten(const json& tree, const std::string& parent, json& out) {
  for (const auto& ps : tree.value("podSets", json::array())) {
    json sg = {{"name", ps["name"]}, {"minMember", ps.value("minAvailable", 1)}};
    if (!parent.empty()) sg["parent"] = parent;
    json tc = constraint_object(ps.value("topologyConstraint", json()));
    if (!tc.empty()) sg["topologyConstraint"] = tc;
    out.push_back(sg);
  }
  for (const auto& child : tree.value("subGroups", json::array())) {
    json sg = {{"name", child["name"]}};
    if (!parent.empty()) sg["parent"] = parent;
    json tc = constraint_object(child.value("topologyConstraint", json()));
    if (!tc.empty()) sg["topologyConstraint"] = tc;
    out.push_back(sg);
    flatten(child, child["name"].get<std::string>(), out);
  }
}

struct CaseRun {
  bool counted = false;  // an allocate case (not a KAI-internal function)
  std::string failure;   // "" = pass; for internal cases, why they are not run
};

CaseRun run_case(const json& c, const std::filesystem::path& dir) {
  CaseRun out;
  if (c.value("kind", "") != "allocate_action") {
    out.failure = "calls KAI's internal " + c.value("kind", std::string("?")) + " on KAI's own structures";
    return out;
  }
  out.counted = true;
  const json topologies = c.value("topologies", json::array());
  json levels = json::array();
  for (const auto& l : topologies.at(0)["levels"]) levels.push_back({{"nodeLabel", l}});
  const json topology = {{"apiVersion", "kai.scheduler/v1alpha1"},
                         {"kind", "Topology"},
                         {"metadata", {{"name", topologies.at(0)["name"]}}},
                         {"spec", {{"levels", levels}}}};
  json nodes = {{"apiVersion", "v1"}, {"kind", "NodeList"}, {"items", json::array()}};
  for (const auto& n : c["nodes"]) nodes["items"].push_back(node_object(n));
  json bound = {{"apiVersion", "v1"}, {"kind", "PodList"}, {"items", json::array()}};
  const json* pending = nullptr;
  for (const auto& j : c["jobs"]) {
    bool has_pending = false;
    for (const auto& t : j["tasks"]) {
      if (t.value("state", "") == "Pending") {
        has_pending = true;
        continue;
      }
      json pod = pod_object(t["task_name"], j.value("gpus_per_task", 0));
      pod["spec"]["nodeName"] = t["node"];
      pod["status"]["phase"] = "Running";
      bound["items"].push_back(pod);
    }
    if (has_pending) {
      if (pending) return {true, "the case has more than one pending job"};
      pending = &j;
    }
  }
  if (!pending) return {true, "the case has no pending job"};
  const json& job = *pending;
  const std::string group_name = job["name"];
  const json tree = job.value("subgroup_tree", json::object());
  json spec = {{"queue", job.value("queue", "default")}, {"minMember", job["tasks"].size()}};
  json root_tc = constraint_object(tree.value("topologyConstraint", json()));
  if (!root_tc.empty()) spec["topologyConstraint"] = root_tc;
  json sub_groups = json::array();
  flatten(tree, "", sub_groups);
  if (!sub_groups.empty()) spec["subGroups"] = sub_groups;
  json items = json::array();
  items.push_back({{"apiVersion", "scheduling.run.ai/v2alpha2"},
                   {"kind", "PodGroup"},
                   {"metadata", {{"name", group_name}, {"namespace", "default"}}},
                   {"spec", spec}});
  for (const auto& t : job["tasks"]) {
    if (t.value("state", "") != "Pending") continue;
    json pod = pod_object(t["task_name"], job.value("gpus_per_task", 0));
    pod["metadata"]["annotations"] = {{"pod-group-name", group_name}};
    if (!t.value("subgroup", "").empty())
      pod["metadata"]["labels"] = {{"kai.scheduler/subgroup-name", t["subgroup"]}};
    if (t.contains("node_affinity_names")) {
      pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
         ["nodeSelectorTerms"] =
             json::array({{{"matchExpressions", json::array({{{"key", kAffinityLabel},
                                                              {"operator", "In"},
                                                              {"values", t["node_affinity_names"]}}})}}});
    }
    items.push_back(pod);
  }
  const json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
  const auto write = [&](const std::string& file, const json& doc) {
    write_text(dir / file, doc.dump(2));
    return (dir / file).string();
  };
  const CapturedRun run =
      run_captured(cli::run_cli, {"place", "--nodes", write("nodes.json", nodes), "--topology",
                                  write("topology.json", topology), "--pods", write("pods.json", bound),
                                  "--job", write("job.json", list)});
  // What KAI did: per sub-group (the pod's label, "" for the job), the pods in each domain at the
  // lowest level that a constraint on the way from the job to that sub-group names.
  std::vector<std::string> level_names;
  for (const auto& l : topologies.at(0)["levels"]) level_names.push_back(l);
  const auto depth = [&](const json& tc) {
    int d = -1;
    if (!tc.is_object()) return d;
    for (const char* key : {"RequiredLevel", "PreferredLevel"})
      for (std::size_t i = 0; i < level_names.size(); ++i)
        if (tc.value(key, "") == level_names[i]) d = std::max(d, static_cast<int>(i));
    return d;
  };
  std::map<std::string, int> deepest;  // sub-group -> index of its compared level, -1 = none
  std::function<void(const json&, int)> walk = [&](const json& t, int above) {
    const int here = std::max(above, depth(t.value("topologyConstraint", json())));
    for (const auto& ps : t.value("podSets", json::array()))
      deepest[ps["name"]] = std::max(here, depth(ps.value("topologyConstraint", json())));
    for (const auto& child : t.value("subGroups", json::array())) walk(child, here);
    deepest[t == tree ? std::string() : t.value("name", std::string())] = here;
  };
  walk(tree, -1);
  const auto domain_of = [&](const std::string& sub, const std::string& node) {
    const int d = deepest.contains(sub) ? deepest[sub] : -1;
    if (d < 0) return std::string("cluster");
    for (const auto& n : c["nodes"])
      if (n["name"] == node)
        return level_names[static_cast<std::size_t>(d)] + "=" +
               n.value("labels", json::object()).value(level_names[static_cast<std::size_t>(d)], "");
    return std::string("?");
  };
  std::map<std::string, std::map<std::string, int>> want;
  bool allocated = false;
  for (const auto& t : job["tasks"]) {
    if (t.value("state", "") != "Pending") continue;
    const json e = c["expected_tasks"].value(t["task_name"].get<std::string>(), json::object());
    if (e.value("status", "") != "Binding") continue;
    allocated = true;
    const std::string sub = t.value("subgroup", "");
    ++want[sub][domain_of(sub, e["node"].get<std::string>())];
  }
  if (!allocated) {
    if (run.code == 1) return out;
    out.failure =
        "KAI leaves the job pending; place exited " + std::to_string(run.code) + ": " + run.err + run.out;
    return out;
  }
  if (run.code != 0) {
    out.failure =
        "KAI allocates the job; place exited " + std::to_string(run.code) + ": " + run.err + run.out;
    return out;
  }
  const json result = json::parse(run.out);
  std::map<std::string, std::map<std::string, int>> got;
  for (const auto& ps : result["podSets"]) {
    // Pod sets are named after their sub-group (a "-N" suffix for a second pod spec in one).
    std::string sub = ps["name"];
    if (!deepest.contains(sub)) {
      for (const auto& [k, unused] : deepest)
        if (!k.empty() && sub.rfind(k + "-", 0) == 0) sub = k;
    }
    if (sub == group_name || sub.rfind(group_name + "-", 0) == 0) sub.clear();
    for (const auto& a : ps["assignment"])
      got[sub][domain_of(sub, a["node"].get<std::string>())] += a["count"].get<int>();
  }
  if (got != want) {
    out.failure =
        "pods per sub-group and domain: expected " + json(want).dump() + ", got " + json(got).dump();
  }
  return out;
}

TEST(KaiConformanceSummary, PrintsPassCount) {
  HT_REQUIRE_FIXTURE(path, kFixture);
  std::ifstream in(path);
  const json cases = json::parse(in)["cases"];
  TempDir dir;
  std::size_t passed = 0, counted = 0;
  std::string failed, internal;
  for (const auto& c : cases) {
    const std::string id = c.value("id", "?");
    const auto case_dir = dir.path() / id;
    std::filesystem::create_directories(case_dir);
    const CaseRun r = run_case(c, case_dir);
    if (!r.counted) {
      internal += "  KAI-internal " + id + ": " + r.failure + "\n";
      continue;
    }
    ++counted;
    if (r.failure.empty()) {
      ++passed;
    } else {
      failed += "  failed " + id + " (" + c.value("name", std::string()) + "): " + r.failure + "\n";
    }
  }
  std::cout << "KAI conformance: " << passed << "/" << counted << " cases pass (" << path.string() << ")\n"
            << failed << internal;
  EXPECT_EQ(counted, 21u);
  EXPECT_EQ(passed, counted) << failed;
}

}  // namespace
}  // namespace hypertopo::testing
