// Every case of fixtures/kueue/tas-cases.json through what `hypertopo place` runs: the case becomes
// Kubernetes objects in files (a NodeList, a PodList of the non-TAS pods, a Kueue Topology, a
// ResourceFlavor when the case has flavor labels, and a batch/v1 Job with Kueue's pod-template
// annotations, or a JobSet for several pod sets), run_placement() reads them with the CLI's loaders
// and places them, render_report() writes the JSON the CLI prints, and the exit status is the CLI's
// (place_command.cpp: an Error is 2, no fit 1, a fit 0). Compared with Kueue's answer: one test per
// case (named after it), plus a summary test whose line scripts/test.sh prints.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "scheduler/input/placement_session.h"
#include "tests/support/fixtures.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

constexpr const char* kFixture = "kueue/tas-cases.json";

const json& all_cases() {
  static const json cases = [] {
    auto path = testing::find_fixture(kFixture);
    if (!path) return json::array();
    std::ifstream in(*path);
    return json::parse(in)["cases"];
  }();
  return cases;
}

// The fixture counts cpu in millicores and everything else in whole units.
json quantities(const json& amounts) {
  json out = json::object();
  for (const auto& [k, v] : amounts.items()) {
    out[k] = k == "cpu" ? std::to_string(v.get<std::int64_t>()) + "m" : std::to_string(v.get<std::int64_t>());
  }
  return out;
}

json node_list(const json& c) {
  json items = json::array();
  for (const auto& n : c["nodes"]) {
    json spec = json::object();
    if (n.value("unschedulable", false)) spec["unschedulable"] = true;
    if (n.contains("taints")) spec["taints"] = n["taints"];
    items.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Node"},
         {"metadata", {{"name", n["name"]}, {"labels", n["labels"]}}},
         {"spec", spec},
         {"status",
          {{"allocatable", quantities(n["allocatable"])},
           {"conditions", {{{"type", "Ready"}, {"status", n.value("ready", true) ? "True" : "False"}}}}}}});
  }
  return {{"apiVersion", "v1"}, {"kind", "NodeList"}, {"items", items}};
}

json pod_list(const json& c) {
  json items = json::array();
  if (c.contains("existing_usage_non_tas_pods") && c["existing_usage_non_tas_pods"].is_array()) {
    for (const auto& p : c["existing_usage_non_tas_pods"]) {
      items.push_back(
          {{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata", {{"name", p["name"]}, {"namespace", "default"}}},
           {"spec",
            {{"nodeName", p["nodeName"]},
             {"containers", {{{"name", "main"}, {"resources", {{"requests", quantities(p["requests"])}}}}}}}},
           {"status", {{"phase", p["phase"]}}}});
    }
  }
  return {{"apiVersion", "v1"}, {"kind", "PodList"}, {"items", items}};
}

json topology(const json& c) {
  json levels = json::array();
  for (const auto& l : c["topology_levels"]) levels.push_back({{"nodeLabel", l}});
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "Topology"},
          {"metadata", {{"name", "default"}}},
          {"spec", {{"levels", levels}}}};
}

// Kueue's pod-template annotations for a fixture topology_request (null: none, Kueue's "implied").
json annotations(const json& p) {
  json a = json::object();
  const json& tr = p["topology_request"];
  const std::string prefix = "kueue.x-k8s.io/";
  if (!tr.is_null()) {
    if (tr.contains("required")) a[prefix + "podset-required-topology"] = tr["required"];
    if (tr.contains("preferred")) a[prefix + "podset-preferred-topology"] = tr["preferred"];
    if (tr.value("unconstrained", false)) a[prefix + "podset-unconstrained-topology"] = "true";
    if (tr.contains("sliceRequiredTopology"))
      a[prefix + "podset-slice-required-topology"] = tr["sliceRequiredTopology"];
    if (tr.contains("sliceSize"))
      a[prefix + "podset-slice-size"] = std::to_string(tr["sliceSize"].get<int>());
    if (tr.contains("sliceRequiredTopologyConstraints"))
      a[prefix + "podset-slice-required-topology-constraints"] =
          tr["sliceRequiredTopologyConstraints"].dump();
  }
  if (p.contains("pod_set_group_name")) a[prefix + "podset-group-name"] = p["pod_set_group_name"];
  return a;
}

json pod_template(const json& p) {
  json spec = {
      {"containers", {{{"name", "main"}, {"resources", {{"requests", quantities(p["per_pod_requests"])}}}}}}};
  if (p.contains("node_selector")) spec["nodeSelector"] = p["node_selector"];
  if (p.contains("tolerations")) spec["tolerations"] = p["tolerations"];
  return {{"metadata", {{"annotations", annotations(p)}}}, {"spec", spec}};
}

std::string pod_set_name(const json& p, std::size_t i) {
  const std::string name = p["name"];
  return name.empty() ? "ps" + std::to_string(i) : name;
}

json job(const json& c) {
  const json& sets = c["pod_sets"];
  if (sets.size() == 1) {
    return {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"metadata", {{"name", "job"}, {"namespace", "default"}}},
            {"spec", {{"parallelism", sets[0]["count"]}, {"template", pod_template(sets[0])}}}};
  }
  json jobs = json::array();
  for (std::size_t i = 0; i < sets.size(); ++i) {
    jobs.push_back(
        {{"name", pod_set_name(sets[i], i)},
         {"replicas", 1},
         {"template", {{"spec", {{"parallelism", sets[i]["count"]}, {"template", pod_template(sets[i])}}}}}});
  }
  return {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
          {"kind", "JobSet"},
          {"metadata", {{"name", "jobset"}, {"namespace", "default"}}},
          {"spec", {{"replicatedJobs", jobs}}}};
}

// Runs one case through the CLI; returns "" when every pod set matches Kueue, else what differed.
std::string run_case(const json& c) {
  testing::TempDir dir;
  auto file = [&](const std::string& name, const json& doc) {
    testing::write_text(dir.path() / name, doc.dump(1));
    return (dir.path() / name).string();
  };
  PlaceInputs in{.nodes = file("nodes.json", node_list(c)),
                 .topology = file("topology.json", topology(c)),
                 .job = file("job.json", job(c)),
                 .pods = file("pods.json", pod_list(c))};
  if (!c["flavor_node_labels"].empty()) {
    in.resource_flavor = file(
        "flavor.json", {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                        {"kind", "ResourceFlavor"},
                        {"metadata", {{"name", "tas-flavor"}}},
                        {"spec", {{"nodeLabels", c["flavor_node_labels"]}, {"topologyName", "default"}}}});
  }
  for (const auto& [gate, on] : c["feature_gates_set_by_case"].items()) {
    in.kueue_feature_gates +=
        (in.kueue_feature_gates.empty() ? "" : ",") + gate + "=" + (on.get<bool>() ? "true" : "false");
  }
  testing::CapturedRun run;
  if (auto report = run_placement(in); !report) {
    run.code = 2;
    run.err = "hypertopo place: error: " + report.error().message() + "\n";
  } else {
    run.code = report->result["fit"].get<bool>() ? 0 : 1;
    run.out = render_report(*report, "json");
  }
  const json& sets = c["pod_sets"];
  bool all_fit = true;
  for (const auto& p : sets) all_fit = all_fit && p["expected"]["fit"].get<bool>();
  if (run.code == 2) {
    // An invalid request: one stderr line that must carry Kueue's reason for the first failure.
    for (const auto& p : sets) {
      if (p["expected"]["fit"].get<bool>()) continue;
      const std::string reason = p["expected"].value("reason", "");
      if (reason.empty() || run.err.find(reason) == std::string::npos)
        return "exit 2 with \"" + run.err + "\", want Kueue's reason \"" + reason + "\"\n";
      if (std::count(run.err.begin(), run.err.end(), '\n') != 1) return "stderr is not one line: " + run.err;
      return "";
    }
    return "exit 2 (" + run.err + ") for a request Kueue places\n";
  }
  if (run.code != (all_fit ? 0 : 1)) {
    return "exit " + std::to_string(run.code) + ", want " + (all_fit ? "0" : "1") + "; stderr: " + run.err +
           "\n";
  }
  const json out = json::parse(run.out, nullptr, false);
  if (out.is_discarded()) return "output is not JSON: " + run.out;
  std::string diff;
  const bool by_host = c["topology_levels"].back() == "kubernetes.io/hostname";
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const json& want = sets[i]["expected"];
    const std::string label = "pod set '" + sets[i]["name"].get<std::string>() + "': ";
    const json* got = i < out["podSets"].size() ? &out["podSets"][i] : nullptr;
    if (!want["fit"].get<bool>()) {
      if (want.contains("reason")) {
        const std::string reason = want["reason"];
        if (got == nullptr || got->value("reason", "") != reason)
          diff +=
              label + "want failure \"" + reason + "\", got " + (got ? got->dump() : "<no result>") + "\n";
      } else if (got != nullptr && !got->contains("reason")) {
        diff += label + "want no fit, got a fit\n";
      }
      continue;
    }
    if (got == nullptr || got->contains("reason") || !got->contains("topologyAssignment")) {
      diff += label + "want a fit, got " + (got ? got->dump() : "<no result>") + "\n";
      continue;
    }
    if ((*got)["topologyAssignment"] != want["assignment"]) {
      diff += label + "want " + want["assignment"].dump() + "\n   got " +
              (*got)["topologyAssignment"].dump() + "\n";
    }
    // What the user reads: a node only where the lowest level is the host; a domain path otherwise.
    for (const auto& a : (*got)["assignment"]) {
      if (by_host != a.contains("node")) diff += label + "assignment entry " + a.dump() + "\n";
      if (!by_host && (!a.contains("domain") || a["domain"].size() != c["topology_levels"].size()))
        diff += label + "assignment entry without the full domain path: " + a.dump() + "\n";
    }
  }
  return diff;
}

std::string test_name(const json& c) {
  std::string out = c["id"].get<std::string>() + "_" + c["name"].get<std::string>();
  std::string clean;
  for (char ch : out) clean += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return clean;
}

std::vector<std::size_t> case_indices() {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < all_cases().size(); ++i) out.push_back(i);
  return out;
}

class KueueConformance : public ::testing::TestWithParam<std::size_t> {};

TEST_P(KueueConformance, PlaceGivesKueuesAnswer) {
  const json& c = all_cases()[GetParam()];
  EXPECT_EQ(run_case(c), "") << c["id"].get<std::string>() << " " << c["name"].get<std::string>();
}

INSTANTIATE_TEST_SUITE_P(TasCases, KueueConformance, ::testing::ValuesIn(case_indices()),
                         [](const ::testing::TestParamInfo<std::size_t>& param_info) {
                           return test_name(all_cases()[param_info.param]);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KueueConformance);

TEST(KueueConformanceSummary, PrintsPassCount) {
  HT_REQUIRE_FIXTURE(path, kFixture);
  std::size_t single = 0, single_pass = 0, multi = 0, multi_pass = 0;
  for (const auto& c : all_cases()) {
    const bool ok = run_case(c).empty();
    if (c["pod_sets"].size() == 1) {
      ++single;
      single_pass += ok ? 1 : 0;
    } else {
      ++multi;
      multi_pass += ok ? 1 : 0;
    }
  }
  std::cout << "Kueue conformance through `hypertopo place` (Kubernetes objects in, JSON out): "
            << single_pass << "/" << single << " single-pod-set cases, " << multi_pass << "/" << multi
            << " multi-pod-set cases (" << path.string() << ")\n";
  EXPECT_EQ(all_cases().size(), 112u) << "the fixture should hold 112 cases";
  EXPECT_EQ(single_pass, single);
  EXPECT_EQ(multi_pass, multi);
}

}  // namespace
}  // namespace hypertopo::scheduler
