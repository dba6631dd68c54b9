// topology/tree_text.h: a Tree as an admin reads it in a terminal, and as a Graphviz picture.
//
//   std::cout << render_tree_text(tree, {.max_nodes_listed = 4});
//   std::cout << render_tree_dot(tree);   // dot -Tsvg > fabric.svg
//
// The text form shows tier, name, tierName and node counts per domain, then a summary of what
// was left out (unmapped endpoints by GUID, excluded hosts, aggregation nodes, warnings).
#pragma once

#include <cstddef>
#include <string>

#include "topology/tree.h"

namespace hypertopo::topology {

struct TreeTextOptions {
  std::size_t max_nodes_listed = 6;  // node names shown per lowest-tier domain (0: counts only)
  bool summary = true;               // the "left out" section at the end
};

std::string render_tree_text(const Tree& tree, const TreeTextOptions& options = {});

// The "left out" section on its own (what went to stderr as warnings, in full).
std::string render_build_report(const BuildReport& report);

struct TreeDotOptions {
  bool show_nodes = true;              // draw nodes as leaves of the picture
  std::size_t max_nodes_drawn = 2000;  // above this, nodes are summarised per domain
};

std::string render_tree_dot(const Tree& tree, const TreeDotOptions& options = {});

}  // namespace hypertopo::topology
