// topology/exporters/capacity_dot.h: the Graphviz picture of the tree coloured by GPU capacity and use.
//
// The picture an admin looks at first: every domain box says how many GPUs it holds and how many
// are in use, and is filled from green (free) through yellow to red (full). Without capacity data
// (no node list) the boxes are plain. A legend explains the colours.
//
// The usage map is what the scheduler counts (scheduler::gpu_usage_per_node: allocatable GPUs of
// each Node, requests of the bound pods), so the picture and placement never disagree.
//
//   GpuUsage usage = {{"node-1", {.allocatable = 8, .used = 6}}};
//   std::cout << render_capacity_dot(tree, usage);      // | dot -Tsvg > fabric.svg
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "topology/tree.h"

namespace hypertopo::topology::exporters {

inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";

struct NodeGpuUsage {
  std::int64_t allocatable = 0;
  std::int64_t used = 0;
};
using GpuUsage = std::map<std::string, NodeGpuUsage>;  // node name -> GPUs

struct DomainGpuTotals {
  std::int64_t allocatable = 0;
  std::int64_t used = 0;
  std::size_t nodes_known = 0;  // nodes of the domain present in the usage map
  std::int64_t free() const { return allocatable > used ? allocatable - used : 0; }
};
// Totals over every node under the domain.
DomainGpuTotals domain_gpu_totals(const Tree& tree, DomainId id, const GpuUsage& usage);

struct CapacityDotOptions {
  bool show_nodes = true;            // draw nodes as leaves
  std::size_t max_nodes_drawn = 64;  // above this, only domains (with node counts): stays readable
};

// `usage` may be empty: the picture is then plain (no colours, no legend of colours).
std::string render_capacity_dot(const Tree& tree, const GpuUsage& usage,
                                const CapacityDotOptions& options = {});

}  // namespace hypertopo::topology::exporters
