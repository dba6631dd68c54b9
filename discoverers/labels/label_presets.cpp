#include "discoverers/labels/label_presets.h"

namespace hypertopo::discoverers::labels {

const std::vector<LabelPreset>& label_presets() {
  static const std::vector<LabelPreset> presets = {
      {"eks",
       "Amazon EKS (instance types that report EC2 instance topology)",
       "https://docs.aws.amazon.com/eks/latest/userguide/ml-workload-topology.html",
       {"topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2",
        "topology.k8s.aws/network-node-layer-3"}},
      // Instance types whose topology has four layers: layer-4 is then the bottom. A node without it
      // joins no HyperNode of this preset (the walk starts at the bottom level), hence its own preset.
      {"eks-4-layers",
       "Amazon EKS (instance types with four network layers)",
       "https://docs.aws.amazon.com/eks/latest/userguide/ml-workload-topology.html",
       {"topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2",
        "topology.k8s.aws/network-node-layer-3", "topology.k8s.aws/network-node-layer-4"}},
      {"gke",
       "Google GKE (A3 Ultra, A4, A4X reserved blocks)",
       "https://cloud.google.com/ai-hypercomputer/docs/workloads/schedule-gke-workloads-tas",
       {"cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock",
        "cloud.google.com/gce-topology-host"}},
      {"coreweave",
       "CoreWeave CKS (InfiniBand and RoCE backend fabrics)",
       "https://docs.coreweave.com/products/networking/hpc-interconnect/infiniband-roce-labels",
       {"backend.coreweave.cloud/fabric", "backend.coreweave.cloud/leafgroup"}},
      {"topograph",
       "NVIDIA topograph's Kubernetes engine",
       "https://github.com/NVIDIA/topograph/blob/main/docs/engines/k8s.md",
       {"network.topology.nvidia.com/core", "network.topology.nvidia.com/spine",
        "network.topology.nvidia.com/leaf"}},
  };
  return presets;
}

std::expected<LabelConfig, Error> preset_label_config(const std::string& name) {
  std::string known;
  for (const LabelPreset& p : label_presets()) {
    if (p.name == name) {
      LabelTopologyType type;
      type.name = p.name;
      type.levels = p.levels;
      type.tier_names.assign(p.levels.size(), "");
      type.node_label = kHostnameLabel;
      LabelConfig config;
      config.types.push_back(std::move(type));
      return config;
    }
    known += (known.empty() ? "" : ", ") + p.name;
  }
  return fail(ErrorCode::kInvalidArgument, "unknown label preset '" + name + "' (known: " + known + ")");
}

}  // namespace hypertopo::discoverers::labels
