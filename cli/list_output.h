// cli/list_output.h: `-o name` and `-o wide` as kubectl prints them, for the commands that print a
// list: discover and status list HyperNodes, place lists where the gang's pods land.
//
// `-o name` is one `<resource>/<name>` line per object, sorted as kubectl sorts a list (by name), so
// it pipes into `xargs kubectl ...`: HyperNodes as `hypernode.topology.volcano.sh/<name>` (the form
// `kubectl get hypernodes -o name` prints), and for place the Nodes the gang lands on, one
// `node/<name>` each, in the order of their first rank (the pods do not exist yet; the Nodes do).
// `-o wide` is a table with kubectl's layout (upper-case headers, columns 3 spaces apart and at
// least 10 wide, `<none>` for an empty field, `<unknown>` for one that was not measured).
//
//   std::cout << hypernode_names(tree);
//   std::cout << hypernode_table(tree, usage, health_of);
//   std::cout << placement_table(report.result);
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "topology/exporters/capacity_dot.h"
#include "topology/tree.h"

namespace hypertopo::cli {

inline constexpr std::string_view kHyperNodeResource = "hypernode.topology.volcano.sh";

// Rows of cells, the first the headers, aligned as kubectl's tabwriter aligns them.
std::string render_table(const std::vector<std::vector<std::string>>& rows);

// "hypernode.topology.volcano.sh/<name>" per name, sorted.
std::string hypernode_names(std::vector<std::string> names);
std::string hypernode_names(const topology::Tree& tree);

// One row per HyperNode, by name: NAME TIER TIER-NAME PARENT MEMBERS NODES GPUS FREE HEALTH.
// MEMBERS counts what Volcano counts (the HyperNode's own members: child HyperNodes or Nodes), NODES
// every Node under it. GPUS (allocatable) and FREE are `<unknown>` where `usage` is null. HEALTH is
// what `health` says of a domain: "Healthy", a FabricDegraded reason, or "<unknown>".
std::string hypernode_table(const topology::Tree& tree, const topology::exporters::GpuUsage* usage,
                            const std::function<std::string(const topology::Domain&)>& health);

// The Nodes of a place result (its podSets' assignments), "node/<name>" once each, in rank order.
// An assignment that names a domain and no node (Kueue levels above kubernetes.io/hostname) gives
// no line; `domain_only` counts them.
std::string placement_names(const nlohmann::json& result, std::size_t* domain_only);

// One row per pod of a place result: POD-SET RANK NODE BOUND, then one DOMAIN-<k> column per level
// of the domain path, DOMAIN-1 the top (as `-o text` indents it), `<none>` where a path is shorter.
std::string placement_table(const nlohmann::json& result);

}  // namespace hypertopo::cli
