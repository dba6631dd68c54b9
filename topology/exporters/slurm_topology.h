// topology/exporters/slurm_topology.h: the tree as Slurm reads it (topology.conf and topology.yaml).
//
// Slurm's topology/tree plugin wants one SwitchName line per switch with either the switches or the
// nodes below it; the topology/block plugin wants the nodes of each block (NVLink domains, or the
// lowest domains when there are none) in order of proximity and the BlockSizes it may combine.
// Host lists are compacted the way Slurm writes them: dgx[001-004,007].
//
//   std::cout << render_slurm_tree_conf(tree);    // topology.conf for TopologyPlugin=topology/tree
//   std::cout << render_slurm_block_conf(tree);   // topology.conf for TopologyPlugin=topology/block
//   std::cout << render_slurm_topology_yaml(tree); // topology.yaml (Slurm 24.11+), both topologies
//   auto names = expand_hostlist("dgx[001-003],cpu7");  // {"dgx001","dgx002","dgx003","cpu7"}
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "errors/error.h"
#include "topology/tree.h"

namespace hypertopo::topology::exporters {

// Names -> Slurm host list. Names sharing a prefix and a numeric suffix of the same zero-padded
// width are folded into one bracket; others are listed as they are. Output order is sorted.
std::string compact_hostlist(std::vector<std::string> names);
// The reverse; an error names the malformed part.
std::expected<std::vector<std::string>, Error> expand_hostlist(std::string_view hostlist);

struct SlurmOptions {
  std::string nvlink_tier_name = "nvlink";  // domains of this tierName become blocks when present
  bool comments = true;                     // "# name: tier N (tierName)" above each line
};

std::string render_slurm_tree_conf(const Tree& tree, const SlurmOptions& options = {});

// The domains used as blocks, in proximity order (a depth-first walk from the roots, so blocks that
// share a parent are adjacent).
std::vector<DomainId> slurm_blocks(const Tree& tree, const SlurmOptions& options = {});
// BlockSizes: the smallest block's node count, then its power-of-two multiples up to the blocks
// under the largest root.
std::vector<std::size_t> slurm_block_sizes(const Tree& tree, const SlurmOptions& options = {});
std::string render_slurm_block_conf(const Tree& tree, const SlurmOptions& options = {});

// topology.yaml: a "fabric" tree topology (cluster default) and a "blocks" block topology.
std::string render_slurm_topology_yaml(const Tree& tree, const SlurmOptions& options = {});

}  // namespace hypertopo::topology::exporters
