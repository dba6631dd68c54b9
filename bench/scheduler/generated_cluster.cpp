#include "bench/scheduler/generated_cluster.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

std::string uid(const char* kind, int v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%08x-%04x-4%03x-8%03x-%012x", static_cast<unsigned>(v * 2654435761u),
                static_cast<unsigned>(v & 0xffff), static_cast<unsigned>(std::strlen(kind)), 0x1a2,
                static_cast<unsigned>(v));
  return buf;
}

json node(int n) {
  const std::string host = padded_name("gpu-", n, 4);
  json status = {
      {"allocatable",
       {{"cpu", "224"}, {"memory", "2063731Mi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}, {"rdma/ib", "8"}}},
      {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}},
      {"addresses",
       {{{"type", "InternalIP"},
         {"address", "10.1." + std::to_string(n / 250) + "." + std::to_string(n % 250)}}}}};
  json spec = json::object();
  if (n % 97 == 0)
    spec["taints"] = {{{"key", "nvidia.com/gpu-maintenance"}, {"value", "true"}, {"effect", "NoSchedule"}}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", host},
            {"resourceVersion", std::to_string(100000 + n)},
            {"labels",
             {{"kubernetes.io/hostname", host},
              {"kubernetes.io/arch", "amd64"},
              {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
              {"node.kubernetes.io/instance-type", "dgx-h100"}}}}},
          {"spec", spec},
          {"status", status}};
}

json hypernode(const std::string& n, int tier, const char* tier_name, const char* type,
               const std::vector<std::string>& members) {
  json h = exact_hypernode(n, tier, type, members);
  h["spec"]["tierName"] = tier_name;
  h["status"] = {{"nodeCount", members.size()}};
  return h;
}

json pod(int p, int on_node, bool gpu = true) {
  const json requests = gpu ? json{{"cpu", "32"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "4"}}
                            : json{{"cpu", "2"}, {"memory", "4Gi"}};
  const json limits = gpu ? json{{"nvidia.com/gpu", "4"}} : json{{"memory", "4Gi"}};
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", padded_name("train-", p, 4)},
        {"namespace", "ml-team"},
        {"uid", uid("Pod", p)},
        {"labels", {{"app", "train"}, {"volcano.sh/job-name", padded_name("job-", p / 60, 2)}}}}},
      {"spec",
       {{"nodeName", padded_name("gpu-", on_node, 4)},
        {"schedulerName", "volcano"},
        {"containers",
         {{{"name", "main"},
           {"image", "nvcr.io/nvidia/pytorch:24.08-py3"},
           {"resources", {{"requests", requests}, {"limits", limits}}}}}}}},
      {"status",
       {{"phase", "Running"}, {"podIP", "10.2." + std::to_string(p / 250) + "." + std::to_string(p % 250)}}}};
}

}  // namespace

// Built with append: GCC 12 warns falsely (-Wrestrict) on some "literal" + string forms.
std::string padded_name(const char* prefix, int v, int width) {
  std::string digits = std::to_string(v);
  if (static_cast<int>(digits.size()) < width)
    digits.insert(0, static_cast<std::size_t>(width) - digits.size(), '0');
  std::string out(prefix);
  out.append(digits);
  return out;
}

GeneratedCluster generate_cluster(int node_count, int pod_count) {
  GeneratedCluster out;
  auto& nodes = out.nodes;
  auto& hns = out.hypernodes;
  auto& pods = out.pods;
  for (int n = 0; n < node_count; ++n) {
    nodes.push_back(node(n));
    hns.push_back(hypernode(padded_name("nvl-", n, 4), 1, "nvlink", "Node", {padded_name("gpu-", n, 4)}));
  }
  const int pair_count = (node_count + 1) / 2;
  for (int p = 0; p < pair_count; ++p) {
    std::vector<std::string> members{padded_name("nvl-", 2 * p, 4)};
    if (2 * p + 1 < node_count) members.push_back(padded_name("nvl-", 2 * p + 1, 4));
    hns.push_back(hypernode(padded_name("pair-", p, 4), 2, "pair", "HyperNode", members));
  }
  const int leaf_count = (pair_count + 5) / 6;
  for (int l = 0; l < leaf_count; ++l) {
    std::vector<std::string> pairs;
    for (int k = 0; k < 6 && 6 * l + k < pair_count; ++k) pairs.push_back(padded_name("pair-", 6 * l + k, 4));
    hns.push_back(hypernode(padded_name("leaf-", l, 3), 3, "leaf", "HyperNode", pairs));
  }
  for (int s = 0; 50 * s < leaf_count; ++s) {
    std::vector<std::string> leaves;
    for (int k = 0; k < 50 && 50 * s + k < leaf_count; ++k)
      leaves.push_back(padded_name("leaf-", 50 * s + k, 3));
    hns.push_back(hypernode(padded_name("spine-", s, 2), 4, "spine", "HyperNode", leaves));
  }
  // Running pods of 4 GPUs, one on each of three nodes of every ten; CPU pods beyond them.
  const int gpu_pods = std::min(pod_count, node_count / 10 * 3);
  for (int p = 0; p < gpu_pods; ++p) pods.push_back(pod(p, (p / 3) * 10 + p % 3));
  for (int p = gpu_pods; p < pod_count; ++p) pods.push_back(pod(p, p % node_count, false));
  return out;
}

GeneratedCluster generate_cluster() { return generate_cluster(6000, 1800); }

json exact_hypernode(const std::string& name, int tier, const char* type,
                     const std::vector<std::string>& members) {
  json list = json::array();
  for (const auto& m : members)
    list.push_back({{"type", type}, {"selector", {{"exactMatch", {{"name", m}}}}}});
  return {{"apiVersion", "topology.volcano.sh/v1alpha1"},
          {"kind", "HyperNode"},
          {"metadata", {{"name", name}}},
          {"spec", {{"tier", tier}, {"members", list}}}};
}

}  // namespace hypertopo::scheduler
