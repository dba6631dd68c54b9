// discoverers/labels/label_presets.h: the topology labels cloud providers already put on GPU nodes.
//
// A cluster in EKS or GKE carries its network position in node labels the provider sets; a preset
// names those labels, top level first, so `labels:preset=eks` (command line) or `preset: eks` (the
// agent's labels source) needs no config file. Each preset is one topology type named after it, with
// kubernetes.io/hostname as the node level (Volcano's label source drops the last level as the node's
// own) and the label keys as tier names (Volcano's default). Where the keys come from:
//   eks, eks-4-layers  https://docs.aws.amazon.com/eks/latest/userguide/ml-workload-topology.html
//                      topology.k8s.aws/network-node-layer-1 (the top, broadest) .. -3 (the bottom
//                      for most instance types); -4 exists only on instance types with four layers
//                      and is then the bottom.
//   gke                https://cloud.google.com/ai-hypercomputer/docs/workloads/schedule-gke-workloads-tas
//                      cloud.google.com/gce-topology-block > -subblock > -host.
//   coreweave          https://docs.coreweave.com/products/networking/hpc-interconnect/infiniband-roce-labels
//                      backend.coreweave.cloud/fabric > backend.coreweave.cloud/leafgroup (the
//                      fabric-agnostic backend labels CKS puts on InfiniBand and RoCE nodes).
//   topograph          https://github.com/NVIDIA/topograph/blob/main/docs/engines/k8s.md
//                      network.topology.nvidia.com/core > spine > leaf (NVIDIA topograph's labels).
//
//   auto config = preset_label_config("eks");   // std::expected<LabelConfig, Error>
//   for (const auto& p : label_presets()) std::cout << p.name << ": " << p.provider << "\n";
#pragma once

#include <expected>
#include <string>
#include <vector>

#include "discoverers/labels/label_config.h"
#include "errors/error.h"

namespace hypertopo::discoverers::labels {

struct LabelPreset {
  std::string name;                 // preset=NAME
  std::string provider;             // who sets the labels
  std::string doc;                  // the provider's page that documents them
  std::vector<std::string> levels;  // label keys, top level first, the node level not included
};

const std::vector<LabelPreset>& label_presets();

// The preset's LabelConfig; an unknown name is an error listing the known ones.
std::expected<LabelConfig, Error> preset_label_config(const std::string& name);

}  // namespace hypertopo::discoverers::labels
