// tests/cli/cluster_objects.h: kubectl-shaped Nodes, HyperNodes and Lists for the CLI's tests.
//
// An 8-GPU Node (64 cores, 256Gi, 110 pods, Ready) with its hostname label and any other labels and
// spec fields a test gives; a Volcano HyperNode whose members are named exactly; a v1 List.
//
//   json nodes = cluster_list({gpu_node("a1"), gpu_node("a2", {{"pool", "reserved"}})});
//   json leaf = exact_hypernode("leaf-a", 1, "Node", {"a1", "a2"});
//   json hns = spine_of_two_leaves();   // leaf-a {a1..a4}, leaf-b {b1..b4} under one spine
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hypertopo::testing {

inline nlohmann::json gpu_node(const std::string& name, nlohmann::json labels = nlohmann::json::object(),
                               nlohmann::json spec = nlohmann::json::object()) {
  labels["kubernetes.io/hostname"] = name;
  nlohmann::json node{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", name}, {"labels", labels}}},
      {"status",
       {{"allocatable", {{"cpu", "64"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}},
        {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  if (!spec.empty()) node["spec"] = std::move(spec);
  return node;
}

inline nlohmann::json exact_hypernode(const std::string& name, int tier, const std::string& type,
                                      const std::vector<std::string>& members) {
  nlohmann::json m = nlohmann::json::array();
  for (const auto& x : members) m.push_back({{"type", type}, {"selector", {{"exactMatch", {{"name", x}}}}}});
  return {{"apiVersion", "topology.volcano.sh/v1alpha1"},
          {"kind", "HyperNode"},
          {"metadata", {{"name", name}}},
          {"spec", {{"tier", tier}, {"members", m}}}};
}

inline nlohmann::json cluster_list(const nlohmann::json& items) {
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
}

// A spine over leaf-a {a1..a4} and leaf-b {b1..b4}, as a List of HyperNodes.
inline nlohmann::json spine_of_two_leaves() {
  return cluster_list(
      nlohmann::json::array({exact_hypernode("leaf-a", 1, "Node", {"a1", "a2", "a3", "a4"}),
                             exact_hypernode("leaf-b", 1, "Node", {"b1", "b2", "b3", "b4"}),
                             exact_hypernode("spine", 2, "HyperNode", {"leaf-a", "leaf-b"})}));
}

}  // namespace hypertopo::testing
