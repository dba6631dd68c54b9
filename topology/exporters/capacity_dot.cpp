#include "topology/exporters/capacity_dot.h"

#include <cstdio>

namespace hypertopo::topology::exporters {
namespace {

// A degraded domain (FabricDegraded): a warning frame, and a warning fill where no GPU use fills it.
constexpr const char* kDegradedFrame = "#d94801";
constexpr const char* kDegradedFill = "#fdae61";

// Labels carry Graphviz's own "\\n" line breaks, so only quotes are escaped (names are DNS-1123).
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Free fraction -> fill: green when mostly free, yellow half used, red when full.
std::string fill_for(const DomainGpuTotals& t) {
  if (t.allocatable <= 0) return "#d9d9d9";
  const double used =
      static_cast<double>(std::min(t.used, t.allocatable)) / static_cast<double>(t.allocatable);
  if (used >= 1.0) return "#e06666";
  if (used >= 0.75) return "#f6b26b";
  if (used >= 0.25) return "#ffd966";
  return "#93c47d";
}

}  // namespace

DomainGpuTotals domain_gpu_totals(const Tree& tree, DomainId id, const GpuUsage& usage) {
  DomainGpuTotals t;
  for (const auto& node : tree.nodes_under(id)) {
    auto it = usage.find(node);
    if (it == usage.end()) continue;
    t.allocatable += it->second.allocatable;
    t.used += it->second.used;
    ++t.nodes_known;
  }
  return t;
}

std::string render_capacity_dot(const Tree& tree, const GpuUsage& usage, const CapacityDotOptions& options) {
  const bool coloured = !usage.empty();
  std::string out =
      "digraph hypertopo {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", "
      "fillcolor=\"#ffffff\", fontname=\"Helvetica\"];\n";
  bool any_degraded = false;
  for (DomainId id = 0; id < tree.size(); ++id) {
    const Domain& d = tree.domain(id);
    std::string label = d.name + "\\n" + d.tier_name + " (tier " + std::to_string(d.tier) + ")\\n" +
                        std::to_string(tree.nodes_under(id).size()) + " nodes";
    std::string attrs;
    if (coloured) {
      const auto t = domain_gpu_totals(tree, id, usage);
      label += ", GPUs " + std::to_string(t.used) + "/" + std::to_string(t.allocatable) + " used";
      attrs = ", fillcolor=" + quote(fill_for(t));
    }
    if (d.health.degraded()) {
      // The fill stays the GPU use where there is one; the warning is the frame and the reason.
      label += "\\nDEGRADED " + std::string(reason_name(d.health.reason()));
      attrs += std::string(", color=") + quote(kDegradedFrame) + ", penwidth=3";
      if (!coloured) attrs += ", fillcolor=" + quote(kDegradedFill);
      any_degraded = true;
    }
    out += "  " + quote("d:" + d.name) + " [label=" + quote(label) + attrs + "];\n";
  }
  for (DomainId id = 0; id < tree.size(); ++id) {
    for (DomainId c : tree.domain(id).children) {
      out += "  " + quote("d:" + tree.domain(id).name) + " -> " + quote("d:" + tree.domain(c).name) + ";\n";
    }
  }
  if (options.show_nodes && tree.node_count() <= options.max_nodes_drawn) {
    for (DomainId id = 0; id < tree.size(); ++id) {
      for (const auto& n : tree.domain(id).nodes) {
        std::string attrs = "shape=ellipse";
        std::string label = n;
        if (coloured) {
          if (auto it = usage.find(n); it != usage.end()) {
            DomainGpuTotals t{it->second.allocatable, it->second.used, 1};
            label += "\\n" + std::to_string(t.used) + "/" + std::to_string(t.allocatable);
            attrs += ", fillcolor=" + quote(fill_for(t));
          }
        }
        out += "  " + quote("n:" + n) + " [label=" + quote(label) + ", " + attrs + "];\n";
        out += "  " + quote("d:" + tree.domain(id).name) + " -> " + quote("n:" + n) + ";\n";
      }
    }
  }
  if (coloured) {
    out +=
        "  subgraph cluster_legend {\n    label=\"GPUs in use\";\n    fontname=\"Helvetica\";\n"
        "    node [shape=box, style=filled];\n";
    const std::pair<const char*, const char*> keys[] = {{"under 25%", "#93c47d"},
                                                        {"25% to 75%", "#ffd966"},
                                                        {"75% to 99%", "#f6b26b"},
                                                        {"full", "#e06666"},
                                                        {"no GPUs / unknown", "#d9d9d9"}};
    std::string prev;
    for (const auto& [text, colour] : keys) {
      const std::string id = std::string("legend:") + text;
      out += "    " + quote(id) + " [label=" + quote(text) + ", fillcolor=" + quote(colour) + "];\n";
      if (!prev.empty()) out += "    " + quote(prev) + " -> " + quote(id) + " [style=invis];\n";
      prev = id;
    }
    out += "  }\n";
  }
  if (any_degraded) {
    // The swatch is drawn as the degraded boxes are: the same frame, and the warning fill only where
    // the boxes have it (no GPU data); with GPU data their fill is the use, so the swatch's is blank
    // rather than a colour the use legend gives another meaning.
    out += "  subgraph cluster_health {\n    label=\"Fabric health\";\n    fontname=\"Helvetica\";\n    " +
           quote("legend:degraded") + " [label=" +
           quote(coloured ? "degraded links or uplinks\\n(FabricDegraded; the fill stays GPU use)"
                          : "degraded links or uplinks\\n(FabricDegraded)") +
           ", color=" + quote(kDegradedFrame) +
           ", penwidth=3, fillcolor=" + quote(coloured ? "#ffffff" : kDegradedFill) + "];\n  }\n";
  }
  out += "}\n";
  return out;
}

}  // namespace hypertopo::topology::exporters
