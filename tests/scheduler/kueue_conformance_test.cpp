// Every case of fixtures/kueue/tas-cases.json through the `kueue` compatibility mode: one test per
// case (named after it), plus a summary test that prints the pass count.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "scheduler/placement/kueue_compat.h"
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

ResourceAmounts amounts(const json& obj) {
  ResourceAmounts out;
  if (!obj.is_object()) return out;
  for (const auto& [k, v] : obj.items()) out[k] = v.get<std::int64_t>();
  return out;
}

std::map<std::string, std::string> strings(const json& obj) {
  std::map<std::string, std::string> out;
  if (!obj.is_object()) return out;
  for (const auto& [k, v] : obj.items()) out[k] = v.get<std::string>();
  return out;
}

std::string opt_string(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Runs one case; returns "" when every pod set matches, else what differed.
std::string run_case(const json& c) {
  std::vector<NodeSpec> nodes;
  for (const auto& n : c["nodes"]) {
    NodeSpec node;
    node.name = n["name"];
    node.labels = strings(n["labels"]);
    node.allocatable = amounts(n["allocatable"]);
    node.ready = n.value("ready", true);
    node.unschedulable = n.value("unschedulable", false);
    if (n.contains("taints") && n["taints"].is_array()) {
      for (const auto& t : n["taints"])
        node.taints.push_back({opt_string(t, "key"), opt_string(t, "value"), opt_string(t, "effect")});
    }
    nodes.push_back(std::move(node));
  }
  std::vector<BoundPod> pods;
  if (c.contains("existing_usage_non_tas_pods") && c["existing_usage_non_tas_pods"].is_array()) {
    for (const auto& p : c["existing_usage_non_tas_pods"]) {
      std::string phase = opt_string(p, "phase");
      std::string node = opt_string(p, "nodeName");
      if (node.empty() || phase == "Succeeded" || phase == "Failed") continue;
      pods.push_back(BoundPod{opt_string(p, "name"), node, amounts(p["requests"])});
    }
  }
  KueueFeatureGates gates;
  for (const auto& [gate, on] : c["feature_gates_set_by_case"].items()) {
    if (gate == "TASBalancedPlacement") gates.balanced_placement = on.get<bool>();
    if (gate == "TASProfileMixed") gates.profile_mixed = on.get<bool>();
    if (gate == "TASMultiLayerTopology") gates.multi_layer_topology = on.get<bool>();
  }
  std::vector<KueuePodSet> sets;
  for (const auto& p : c["pod_sets"]) {
    KueuePodSet ps;
    ps.name = p["name"];
    ps.count = p["count"];
    ps.per_pod = amounts(p["per_pod_requests"]);
    const json& tr = p["topology_request"];
    if (tr.is_null()) {
      ps.implied = true;
    } else {
      if (tr.contains("required")) ps.required = tr["required"].get<std::string>();
      if (tr.contains("preferred")) ps.preferred = tr["preferred"].get<std::string>();
      if (tr.contains("unconstrained")) ps.unconstrained = tr["unconstrained"].get<bool>();
      if (tr.contains("sliceRequiredTopology"))
        ps.slice_required_topology = tr["sliceRequiredTopology"].get<std::string>();
      if (tr.contains("sliceSize")) ps.slice_size = tr["sliceSize"].get<std::int32_t>();
      if (tr.contains("sliceRequiredTopologyConstraints")) {
        for (const auto& l : tr["sliceRequiredTopologyConstraints"]) {
          ps.slice_constraints.push_back({l["topology"].get<std::string>(), l["size"].get<std::int32_t>()});
        }
      }
    }
    if (p.contains("node_selector")) ps.node_selector = strings(p["node_selector"]);
    if (p.contains("tolerations")) {
      for (const auto& t : p["tolerations"]) {
        Toleration tol;
        tol.key = opt_string(t, "key");
        tol.value = opt_string(t, "value");
        tol.effect = opt_string(t, "effect");
        std::string op = opt_string(t, "operator");
        if (!op.empty()) tol.op = op;
        ps.tolerations.push_back(tol);
      }
    }
    if (p.contains("pod_set_group_name")) ps.group = p["pod_set_group_name"].get<std::string>();
    sets.push_back(std::move(ps));
  }
  std::vector<std::string> levels = c["topology_levels"];
  KueueTopologySnapshot snapshot(levels, nodes, pods, strings(c["flavor_node_labels"]));
  auto results = snapshot.find_assignments(sets, gates);
  std::string diff;
  const auto& expected_sets = c["pod_sets"];
  for (std::size_t i = 0; i < expected_sets.size(); ++i) {
    const json& want = expected_sets[i]["expected"];
    const std::string label = "pod set '" + expected_sets[i]["name"].get<std::string>() + "': ";
    const KueuePodSetResult* got = i < results.size() ? &results[i] : nullptr;
    if (!want["fit"].get<bool>()) {
      if (want.contains("reason")) {
        std::string reason = want["reason"];
        if (got == nullptr || got->failure != reason) {
          diff += label + "want failure \"" + reason + "\", got \"" + (got ? got->failure : "<no result>") +
                  "\"\n";
        }
      } else if (got != nullptr && got->failure.empty()) {
        diff += label + "want no fit, got a fit\n";
      }
      continue;
    }
    if (got == nullptr || !got->failure.empty() || !got->assignment) {
      diff += label + "want a fit, got \"" + (got ? got->failure : "<no result>") + "\"\n";
      continue;
    }
    json have;
    have["levels"] = got->assignment->levels;
    have["domains"] = json::array();
    for (const auto& d : got->assignment->domains)
      have["domains"].push_back({{"values", d.values}, {"count", d.count}});
    if (have != want["assignment"]) {
      diff += label + "want " + want["assignment"].dump() + "\n   got " + have.dump() + "\n";
    }
  }
  return diff;
}

std::string test_name(const json& c) {
  std::string out = c["id"].get<std::string>() + "_" + c["name"].get<std::string>();
  std::string clean;
  for (char ch : out) {
    clean += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  }
  return clean;
}

std::vector<std::size_t> case_indices() {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < all_cases().size(); ++i) out.push_back(i);
  return out;
}

class KueueConformance : public ::testing::TestWithParam<std::size_t> {};

TEST_P(KueueConformance, MatchesKueue) {
  const json& c = all_cases()[GetParam()];
  std::string diff = run_case(c);
  EXPECT_EQ(diff, "") << c["id"].get<std::string>() << " " << c["name"].get<std::string>();
}

INSTANTIATE_TEST_SUITE_P(TasCases, KueueConformance, ::testing::ValuesIn(case_indices()),
                         [](const ::testing::TestParamInfo<std::size_t>& param_info) {
                           return test_name(all_cases()[param_info.param]);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KueueConformance);

TEST(KueueConformanceSummary, PrintsPassCount) {
  HT_REQUIRE_FIXTURE(path, kFixture);
  std::size_t passed = 0;
  for (const auto& c : all_cases()) passed += run_case(c).empty() ? 1 : 0;
  std::cout << "Kueue conformance: " << passed << "/" << all_cases().size() << " cases pass ("
            << path.string() << ")\n";
  EXPECT_EQ(all_cases().size(), 112u) << "the fixture should hold 112 cases";
  EXPECT_GT(passed, 0u);
}

}  // namespace
}  // namespace hypertopo::scheduler
