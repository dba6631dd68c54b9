// tests/support/ibsim/ibsim_fabrics.h: generated InfiniBand fabrics with known tier structure, for live
// ibsim scenarios and benchmarks.
//
// Each generator builds the FabricGraph of a classic topology (GUIDs, "MF0;<name>:MQM9700/U1" switch
// descriptions, rdma-ndd "<host> mlx5_<n>" CA descriptions, numbered ports) and records, from the
// construction alone, what the TreeBuilder must find: the hosts of every domain of every tier.
// write_ibsim_netfile() turns the graph into a net file for ibsim.
//
//   auto fabric = rail_optimised_superpod({.scalable_units = 2, .hosts_per_su = 4});
//   std::ostringstream net;
//   write_ibsim_netfile(fabric.graph, net);
//   // fabric.tiers[0] holds one host list per SU, fabric.tiers[1] one list with every host
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "topology/fabric_graph.h"
#include "topology/tree_builder.h"

namespace hypertopo::testing {

// One domain of the expected tree: its hosts, sorted.
using ExpectedDomain = std::vector<std::string>;

struct GeneratedFabric {
  std::string name;
  topology::FabricGraph graph;
  std::size_t switches = 0;   // counted while generating
  std::size_t endpoints = 0;  // CA ports
  std::size_t links = 0;
  // tiers[k] lists the domains of tier k + 1, each as its sorted hosts; domains sorted.
  std::vector<std::vector<ExpectedDomain>> tiers;
  // Options the TreeBuilder needs for this fabric (storage patterns).
  topology::TreeBuilderOptions builder;
  // Storage endpoints/servers the builder must leave out of every domain.
  std::vector<std::string> storage_hosts;
};

struct FatTreeSpec {
  int leaves = 4;
  int hosts_per_leaf = 4;
  int spines = 2;
};
// Hosts with one HCA under leaves; every leaf links once to every spine.
GeneratedFabric two_level_fat_tree(const FatTreeSpec& spec);

struct PodFatTreeSpec {
  int pods = 2;
  int leaves_per_pod = 2;
  int hosts_per_leaf = 3;
  int spines_per_pod = 2;
  int cores = 2;
};
// Leaves and spines per pod (full mesh inside the pod); every pod spine links to every core.
GeneratedFabric three_level_fat_tree(const PodFatTreeSpec& spec);

struct SuperPodSpec {
  int scalable_units = 2;
  int hosts_per_su = 4;
  int rails = 8;
  int spines = 4;
  int uplinks_per_leaf = 4;  // spread round robin over the spines
};
// One HCA per rail per host; one leaf per rail per SU; leaves link to the spines.
GeneratedFabric rail_optimised_superpod(const SuperPodSpec& spec);

struct StorageFabricSpec {
  FatTreeSpec compute;
  int storage_servers = 2;
};
// A two-level compute fabric plus a storage leaf (linked to the spines, so one subnet): every host
// has a storage HCA (mlx5_8) on it, and storage servers hang off it. The builder options cut the
// storage leaf and the storage HCAs out, so the tiers are the compute fabric's.
GeneratedFabric storage_leaf_fabric(const StorageFabricSpec& spec);

// A small two-tier fabric written straight as an ibsim net file, for the fabric health scenarios:
// leaf l ("S-leaf-<l>", "MF0;leaf-<l>:MQM8700/U1") has host h on its port h ("node-<l><h> mlx5_0")
// and reaches spine s on its port hosts_per_leaf + s; spine s reaches leaf l on its port l. `w=1` on
// both ends of a link makes ibsim train it at one lane; a pulled uplink is not cabled at all.
struct HealthFabricSpec {
  int leaves = 3;
  int hosts_per_leaf = 2;
  int spines = 2;
  std::vector<std::pair<int, int>> narrow_uplinks;     // (leaf, spine) at 1x
  std::vector<std::pair<int, int>> pulled_uplinks;     // (leaf, spine) not cabled
  std::vector<std::pair<int, int>> narrow_host_links;  // (leaf, host) at 1x
};
std::string health_fabric_netfile(const HealthFabricSpec& spec);

// The tree a TreeBuilder built, in the same shape as GeneratedFabric::tiers.
std::vector<std::vector<ExpectedDomain>> tier_structure(const topology::Tree& tree);

// Links as sorted "idA[pA]-idB[pB]" strings, so two graphs can be compared whatever their order.
std::vector<std::string> canonical_links(const topology::FabricGraph& graph);

}  // namespace hypertopo::testing
