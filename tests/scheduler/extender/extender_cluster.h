// tests/scheduler/extender/extender_cluster.h: a synthetic GPU cluster as Kubernetes JSON for extender tests.
//
// Two spines (tier 2) of four leaves (tier 1) of eight 8-GPU nodes: node names n-<leaf>-<i>,
// leaves leaf-<s><l>, spines spine-<s>. Pods are built with gang annotations as a real
// kube-scheduler would send them in ExtenderArgs.
//
//   auto cluster = make_cluster();
//   service.set_hypernodes(cluster.hypernodes); service.set_nodes(cluster.nodes);
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hypertopo::testing {

struct ExtenderCluster {
  std::vector<nlohmann::json> hypernodes;
  std::vector<nlohmann::json> nodes;
  std::vector<std::string> node_names;
  std::map<std::string, std::string> leaf_of;  // node -> leaf HyperNode
};

inline nlohmann::json node_object(const std::string& name, int gpus, bool ready = true) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
          {"spec", nlohmann::json::object()},
          {"status",
           {{"allocatable",
             {{"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
            {"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
}

inline nlohmann::json hypernode_object(const std::string& name, int tier, const std::string& member_type,
                                       const std::vector<std::string>& members) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : members)
    list.push_back({{"type", member_type}, {"selector", {{"exactMatch", {{"name", m}}}}}});
  return {{"apiVersion", "topology.volcano.sh/v1alpha1"},
          {"kind", "HyperNode"},
          {"metadata", {{"name", name}}},
          {"spec", {{"tier", tier}, {"members", list}}}};
}

inline ExtenderCluster make_cluster(int spines = 2, int leaves_per_spine = 4, int nodes_per_leaf = 8) {
  ExtenderCluster c;
  for (int s = 0; s < spines; ++s) {
    std::vector<std::string> leaves;
    for (int l = 0; l < leaves_per_spine; ++l) {
      const std::string leaf = "leaf-" + std::to_string(s) + std::to_string(l);
      std::vector<std::string> members;
      for (int i = 0; i < nodes_per_leaf; ++i) {
        const std::string n = "n-" + std::to_string(s) + std::to_string(l) + "-" + std::to_string(i);
        c.nodes.push_back(node_object(n, 8));
        c.node_names.push_back(n);
        c.leaf_of[n] = leaf;
        members.push_back(n);
      }
      c.hypernodes.push_back(hypernode_object(leaf, 1, "Node", members));
      leaves.push_back(leaf);
    }
    c.hypernodes.push_back(hypernode_object("spine-" + std::to_string(s), 2, "HyperNode", leaves));
  }
  return c;
}

inline nlohmann::json pod_object(const std::string& name, const std::string& uid, const std::string& gpus,
                                 const std::map<std::string, std::string>& annotations = {},
                                 const std::map<std::string, std::string>& labels = {},
                                 const std::string& cpu = "1") {
  nlohmann::json requests{{"cpu", cpu}, {"memory", "1Gi"}};
  if (gpus != "0") requests["nvidia.com/gpu"] = gpus;
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", "ml"}, {"uid", uid}, {"annotations", annotations}, {"labels", labels}}},
      {"spec", {{"containers", {{{"name", "main"}, {"resources", {{"requests", requests}}}}}}}},
      {"status", {{"phase", "Pending"}}}};
}

inline nlohmann::json bound(nlohmann::json pod, const std::string& node) {
  pod["spec"]["nodeName"] = node;
  pod["status"]["phase"] = "Running";
  return pod;
}

inline nlohmann::json args_by_name(const nlohmann::json& pod, const std::vector<std::string>& names) {
  return {{"pod", pod}, {"nodenames", names}};
}

}  // namespace hypertopo::testing
