#include "topology/tree_text.h"

#include <algorithm>
#include <sstream>

#include "text/terminal_safe.h"

namespace hypertopo::topology {
namespace {

// Names and messages come from the fabric (LLDP system names, node descriptions) and the cluster:
// what a terminal would obey in them is spelled out.
std::string safe(std::string_view s) { return text::terminal_safe(s); }

void render_domain(const Tree& tree, DomainId id, const std::string& prefix, bool last, bool root,
                   const TreeTextOptions& opts, std::ostringstream& out) {
  const Domain& d = tree.domain(id);
  const std::string branch = root ? "" : (last ? "└── " : "├── ");
  const auto count = tree.nodes_under(id).size();
  out << prefix << branch << "tier " << d.tier << "  " << safe(d.name) << "  [" << safe(d.tier_name) << "]  "
      << count << (count == 1 ? " node" : " nodes");
  if (!d.children.empty())
    out << ", " << d.children.size() << (d.children.size() == 1 ? " member" : " members");
  if (d.health.degraded()) {
    out << "  DEGRADED " << reason_name(d.health.reason()) << " (uplinks "
        << static_cast<int>(d.health.uplink_healthy * 100 + 0.5) << "% healthy, internal "
        << static_cast<int>(d.health.internal_healthy * 100 + 0.5) << "%)";
  }
  out << "\n";
  const std::string child_prefix = root ? "" : prefix + (last ? "    " : "│   ");
  if (d.health.degraded()) out << child_prefix << "!   " << safe(d.health.message(4)) << "\n";
  std::vector<DomainId> children = d.children;
  std::sort(children.begin(), children.end(),
            [&](DomainId a, DomainId b) { return tree.domain(a).name < tree.domain(b).name; });
  const bool has_nodes = !d.nodes.empty() && opts.max_nodes_listed > 0;
  for (std::size_t i = 0; i < children.size(); ++i) {
    render_domain(tree, children[i], child_prefix, i + 1 == children.size() && !has_nodes, false, opts, out);
  }
  if (has_nodes) {
    std::string line;
    const std::size_t shown = std::min(opts.max_nodes_listed, d.nodes.size());
    for (std::size_t i = 0; i < shown; ++i) line += (i ? ", " : "") + d.nodes[i];
    if (shown < d.nodes.size()) line += ", … (" + std::to_string(d.nodes.size() - shown) + " more)";
    out << child_prefix << "└── nodes: " << safe(line) << "\n";
  }
}

}  // namespace

std::string render_build_report(const BuildReport& r) {
  std::ostringstream out;
  if (!r.unmapped_endpoints.empty()) {
    out << "unmapped endpoints: " << r.unmapped_endpoints.size()
        << " (no host in the node description and no GUID mapping)\n";
    for (const auto& u : r.unmapped_endpoints)
      out << "  " << safe(u.guid) << "  \"" << safe(u.description) << "\"\n";
  }
  if (!r.excluded_hosts.empty()) {
    out << "excluded hosts (not Kubernetes nodes): " << r.excluded_hosts.size() << "\n";
    for (const auto& h : r.excluded_hosts) out << "  " << safe(h) << "\n";
  }
  if (r.aggregation_nodes) out << "SHARP aggregation nodes excluded: " << r.aggregation_nodes << "\n";
  if (!r.excluded_endpoints.empty()) {
    out << "endpoints excluded by device pattern (storage/management): " << r.excluded_endpoints.size()
        << "\n";
  }
  if (!r.excluded_switches.empty()) {
    out << "switches excluded by name pattern: " << r.excluded_switches.size() << "\n";
    for (const auto& s : r.excluded_switches) out << "  " << safe(s) << "\n";
  }
  if (!r.unattached_hosts.empty()) {
    out << "hosts with no link to a switch (in no domain): " << r.unattached_hosts.size() << "\n";
    for (const auto& h : r.unattached_hosts) out << "  " << safe(h) << "\n";
  }
  for (const auto& w : r.warnings) out << "warning: " << safe(w) << "\n";
  return out.str();
}

std::string render_tree_text(const Tree& tree, const TreeTextOptions& opts) {
  std::ostringstream out;
  // "1 HyperNode", "2 HyperNodes".
  auto counted = [](std::size_t n, const char* noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  };
  out << "HyperNode tree (source " << (tree.source.empty() ? "-" : safe(tree.source))
      << "): " << counted(tree.size(), "HyperNode") << ", " << counted(tree.node_count(), "node") << ", "
      << counted(static_cast<std::size_t>(tree.max_tier()), "tier") << "\n";
  auto roots = tree.roots();
  std::sort(roots.begin(), roots.end(), [&](DomainId a, DomainId b) {
    const auto& x = tree.domain(a);
    const auto& y = tree.domain(b);
    return x.tier != y.tier ? x.tier > y.tier : x.name < y.name;
  });
  for (DomainId r : roots) render_domain(tree, r, "", true, true, opts, out);
  if (opts.summary) {
    auto summary = render_build_report(tree.report);
    if (!summary.empty()) out << "\n" << summary;
  }
  return out.str();
}

std::string render_tree_dot(const Tree& tree, const TreeDotOptions& opts) {
  std::ostringstream out;
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"') q.push_back('\\');
      q.push_back(c);
    }
    return q + "\"";
  };
  out << "digraph hypertopo {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  const bool draw_nodes = opts.show_nodes && tree.node_count() <= opts.max_nodes_drawn;
  static const char* kColors[] = {"#dbe9f6", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6"};
  for (DomainId i = 0; i < tree.size(); ++i) {
    const Domain& d = tree.domain(i);
    const auto count = tree.nodes_under(i).size();
    // A degraded domain is drawn in a warning colour with its reason.
    const bool degraded = d.health.degraded();
    out << "  " << quote("hn:" + d.name) << " [shape=box, style=filled, fillcolor=\""
        << (degraded ? "#fdae61"
                     : kColors[std::min<std::size_t>(static_cast<std::size_t>(std::max(d.tier - 1, 0)), 4)])
        << "\", label="
        << quote(d.name + "\\ntier " + std::to_string(d.tier) + " " + d.tier_name + "\\n" +
                 std::to_string(count) + " nodes" +
                 (degraded ? "\\n" + std::string(reason_name(d.health.reason())) : std::string()))
        << "];\n";
    for (DomainId c : d.children)
      out << "  " << quote("hn:" + d.name) << " -> " << quote("hn:" + tree.domain(c).name) << ";\n";
    if (draw_nodes) {
      for (const auto& n : d.nodes) {
        out << "  " << quote("node:" + n) << " [shape=ellipse, label=" << quote(n) << "];\n";
        out << "  " << quote("hn:" + d.name) << " -> " << quote("node:" + n) << ";\n";
      }
    }
  }
  out << "}\n";
  return out.str();
}

}  // namespace hypertopo::topology
