// bench/agent/real_node.h: Nodes as the API server returns them, for the leader's benchmarks.
//
// A GPU node of a kubeadm cluster running GPU feature discovery and node-feature-discovery, as
// `kubectl get node -o json` shows it: kubelet's, GFD's and NFD's labels, 9 annotations,
// managedFields of five managers, conditions, addresses, nodeInfo and 14 images (11.0 KB of JSON).
// Hosts are named as the demo fabric names them, kHostsPerLeaf to a leaf.
//
//   nlohmann::json node = bench::make_node(7);            // demo-su01-node008
//   auto labelled = bench::make_node(7, {{"hypertopo.io/tier-1", "leaf-a"}});
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace hypertopo::bench {

inline constexpr int kHostsPerLeaf = 40;

std::string host_name(int i);
int host_index(const std::string& name);
// Node `i`, with `extra` labels added (a patch's answer, or labels a benchmark's source reads).
nlohmann::json make_node(int i, const std::map<std::string, std::string>& extra = {});

}  // namespace hypertopo::bench
