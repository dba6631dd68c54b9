// topology/exporters/capacity_html.h: the tree as one self-contained, interactive HTML page.
//
// The picture for fabrics too large for Graphviz. The page opens on an overview: one panel per
// top-tier domain with one block per member domain, sized by node count and coloured by the share
// of idle nodes (whole free nodes), the largest free block per tier, and a gang box (P pods x G
// GPUs inside one domain of tier <= T) that marks the domains where the gang fits, worked out in
// the page as `hypertopo place` works out a required topology for a pod set that asks for GPUs.
// Below it, the tree as a list collapsed to the tiers the window holds, every domain expanding on
// a click: boxes filled by GPU use (the colours of render_capacity_dot), degraded domains in the
// warning frame with their bad links, nodes whose own link is bad marked, and a search box that
// finds a node or a domain and opens the path to it. Nothing is fetched: the styles, the script
// and the data are inline, and the page's Content-Security-Policy forbids any request, so it works
// on an offline cluster and from a file.
//
// The data travels as JSON inside <script type="application/json">, with '<', '>' and '&' written
// as \u escapes, and the script builds the page with textContent only: a node name holding
// "</script>" or quotes is shown as text, never run.
//
//   GpuUsage usage = {{"node-1", {.allocatable = 8, .used = 6}}};
//   std::ofstream("fabric.html") << render_capacity_html(tree, usage, {.title = "fabric"});
//
// The page's URL fragment opens it in a given state: #expand=all, #expand=<tiers from the top>,
// #search=<node or domain name>, #gang=<P>x<G>[@<T>][;...] (each gang put into the box in turn,
// its answer kept in the #gang-log list). <body> carries data-open-ms, the milliseconds from
// navigation to the overview laid out.
#pragma once

#include <map>
#include <set>
#include <string>

#include "topology/exporters/capacity_dot.h"
#include "topology/tree.h"

namespace hypertopo::topology::exporters {

// A degraded domain as the cluster reports it (the FabricDegraded condition of a HyperNode), for
// trees whose domains carry no health of their own (`hypertopo status`).
struct DegradedNote {
  std::string reason;
  std::string message;  // "<end> - <end>: <reason>, ...; ..." as the condition's message has it
};

struct CapacityHtmlOptions {
  std::string title = "hypertopo";
  std::string subtitle;                          // where the tree came from, when
  std::map<std::string, DegradedNote> degraded;  // by domain name; used where health is not assessed
  std::set<std::string> unavailable_nodes;       // cordoned or NotReady: marked, counted as not free
  std::size_t max_links_listed = 64;             // bad links listed per domain, then a count
};

// `usage` may be empty: the boxes are then plain (no GPU figures, no colour legend).
std::string render_capacity_html(const Tree& tree, const GpuUsage& usage,
                                 const CapacityHtmlOptions& options = {});

}  // namespace hypertopo::topology::exporters
