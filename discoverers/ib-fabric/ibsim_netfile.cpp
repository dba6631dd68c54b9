#include "discoverers/ib-fabric/ibsim_netfile.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <unordered_map>

namespace hypertopo::discoverers::ib_fabric {
namespace {

using topology::VertexId;
using topology::VertexKind;

struct PortEnd {
  VertexId peer = 0;
  int peer_port = 0;
  std::string options;  // " w=2 s=4" or ""
};

struct SimNode {
  bool present = false;
  std::uint64_t node_guid = 0;
  std::string node_id;  // "S-..." / "H-..."
  std::map<int, PortEnd> ports;
};

std::optional<std::uint64_t> parse_guid(const std::string& id) {
  auto normal = topology::normalize_guid(id);
  if (!normal) return std::nullopt;
  std::uint64_t value = 0;
  auto digits = std::string_view(*normal).substr(2);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (ec != std::errc{}) return std::nullopt;
  return value;
}

std::string hex16(std::uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// ibsim ends a description at the next '"' and stores 63 bytes of it.
std::string simulator_description(std::string_view text, bool& cut) {
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    out.push_back(c == '"' ? '\'' : (std::iscntrl(u) ? ' ' : c));
  }
  cut = out.size() > kIbsimMaxDescriptionBytes;
  if (cut) out.resize(kIbsimMaxDescriptionBytes);
  return out;
}

// "4xNDR" -> " w=3 s=7": ibsim's enabled-width and enabled-speed masks (it knows SDR/DDR/QDR only).
// The masks include every slower setting, as real ports do: ibsim links two ports at the best
// width and speed both enable, and aborts when they share none (a spare port linked later).
std::string rate_options(const std::string& rate) {
  std::string_view text(rate);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  int width = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), width);
  if (ec != std::errc{} || ptr == text.data() + text.size() || (*ptr != 'x' && *ptr != 'X')) return "";
  int width_mask = 0;
  switch (width) {
    case 1:
      width_mask = 1;
      break;
    case 4:
      width_mask = 1 | 2;
      break;
    case 8:
      width_mask = 1 | 2 | 4;
      break;
    case 12:
      width_mask = 1 | 2 | 8;
      break;
    default:
      return "";
  }
  std::string speed(ptr + 1, text.data() + text.size());
  if (speed.empty()) return "";
  std::transform(speed.begin(), speed.end(), speed.begin(), [](unsigned char c) { return std::toupper(c); });
  int speed_mask = speed == "SDR" ? 1 : speed == "DDR" ? 1 | 2 : 1 | 2 | 4;
  return " w=" + std::to_string(width_mask) + " s=" + std::to_string(speed_mask);
}

}  // namespace

std::expected<IbsimNetfileSummary, Error> write_ibsim_netfile(const topology::FabricGraph& graph,
                                                              std::ostream& out,
                                                              const IbsimNetfileOptions& options) {
  IbsimNetfileSummary summary;
  const auto& vertices = graph.vertices();
  std::vector<SimNode> nodes(vertices.size());
  std::size_t self_loops = 0;
  std::size_t port_conflicts = 0;
  std::size_t cut_descriptions = 0;
  std::size_t multi_port_endpoints = 0;

  for (VertexId v = 0; v < vertices.size(); ++v) {
    const auto& vx = vertices[v];
    nodes[v].present =
        !(vx.kind == VertexKind::kEndpoint && vx.aggregation_node && !options.include_aggregation_nodes);
    if (!nodes[v].present) ++summary.omitted_aggregation_nodes;
  }

  // Ports: numbered links first, then links without port numbers (LLDP-like sources) on free ports.
  auto next_free = [&](VertexId v) {
    int p = 1;
    while (nodes[v].ports.contains(p)) ++p;
    return p;
  };
  std::vector<std::size_t> unnumbered;
  const auto& links = graph.links();
  auto place = [&](const topology::Link& l, int pa, int pb) {
    if (nodes[l.a].ports.contains(pa) || nodes[l.b].ports.contains(pb)) {
      ++port_conflicts;
      return;
    }
    std::string opts = rate_options(l.rate);
    nodes[l.a].ports[pa] = {l.b, pb, opts};
    nodes[l.b].ports[pb] = {l.a, pa, opts};
    ++summary.links;
  };
  for (std::size_t i = 0; i < links.size(); ++i) {
    const auto& l = links[i];
    if (!nodes[l.a].present || !nodes[l.b].present) continue;
    if (l.a == l.b) {
      ++self_loops;
      continue;
    }
    if (l.port_a <= 0 || l.port_b <= 0) {
      unnumbered.push_back(i);
      continue;
    }
    place(l, l.port_a, l.port_b);
  }
  for (std::size_t i : unnumbered) {
    const auto& l = links[i];
    place(l, l.port_a > 0 ? l.port_a : next_free(l.a), l.port_b > 0 ? l.port_b : next_free(l.b));
  }

  // GUIDs: switches keep theirs; a CA's node GUID is its endpoint (port) GUID minus the port number.
  std::unordered_map<std::uint64_t, VertexId> owner;
  std::uint64_t synthetic = 0xfe00000000000000ull;
  auto claim = [&](VertexId v, std::optional<std::uint64_t> wanted) -> std::expected<std::uint64_t, Error> {
    if (!wanted) {
      while (owner.contains(synthetic)) synthetic += 0x100;
      wanted = synthetic;
      synthetic += 0x100;
      summary.notes.push_back("'" + vertices[v].id + "' is not a GUID; simulated as " + hex16(*wanted));
    }
    if (auto it = owner.find(*wanted); it != owner.end()) {
      return fail(ErrorCode::kInvalidArgument, "ibsim net file: '" + vertices[v].id + "' and '" +
                                                   vertices[it->second].id + "' would share node GUID 0x" +
                                                   hex16(*wanted) +
                                                   " (ibsim numbers CA ports node GUID + port number)");
    }
    owner.emplace(*wanted, v);
    return *wanted;
  };
  for (VertexId v = 0; v < vertices.size(); ++v) {
    auto& node = nodes[v];
    if (!node.present) continue;
    const auto& vx = vertices[v];
    int max_port = node.ports.empty() ? 1 : node.ports.rbegin()->first;
    if (vx.kind == VertexKind::kSwitch) max_port = std::max(max_port, options.min_switch_ports);
    if (max_port > kIbsimMaxPortsPerNode) {
      return fail(ErrorCode::kInvalidArgument, "ibsim net file: '" + vx.id + "' uses port " +
                                                   std::to_string(max_port) + "; ibsim allows " +
                                                   std::to_string(kIbsimMaxPortsPerNode) + " ports per node");
    }
    std::optional<std::uint64_t> guid = parse_guid(vx.id);
    if (vx.kind == VertexKind::kSwitch) {
      auto got = claim(v, guid);
      if (!got) return std::unexpected(got.error());
      node.node_guid = *got;
      node.node_id = "S-" + hex16(*got);
      ++summary.switches;
      summary.ports += static_cast<std::size_t>(max_port) + 1;
    } else {
      int first_port = node.ports.empty() ? 1 : node.ports.begin()->first;
      if (node.ports.size() > 1) ++multi_port_endpoints;
      if (guid && *guid >= static_cast<std::uint64_t>(first_port))
        *guid -= static_cast<std::uint64_t>(first_port);
      auto got = claim(v, guid);
      if (!got) return std::unexpected(got.error());
      node.node_guid = *got;
      node.node_id = "H-" + hex16(*got);
      ++summary.cas;
      summary.ports += static_cast<std::size_t>(max_port);
      if (summary.first_ca.empty() && !vx.aggregation_node) summary.first_ca = node.node_id;
    }
    summary.node_ids.emplace(vx.id, node.node_id);
  }

  out << "# ibsim net file written by hypertopo: " << summary.switches << " switches, " << summary.cas
      << " CAs, " << summary.links << " links\n"
      << "# ports without a rate (and spare ports) enable 1x/4x/12x and SDR/DDR/QDR\n"
      << "width=11\nspeed=7\n\n";
  auto write_block = [&](VertexId v) {
    const auto& node = nodes[v];
    const auto& vx = vertices[v];
    bool is_switch = vx.kind == VertexKind::kSwitch;
    int nports = node.ports.empty() ? 1 : node.ports.rbegin()->first;
    if (is_switch) nports = std::max(nports, options.min_switch_ports);
    bool cut = false;
    std::string description = simulator_description(vx.description, cut);
    if (cut) ++cut_descriptions;
    out << (is_switch ? "switchguid=0x" : "caguid=0x") << hex16(node.node_guid) << "\n"
        << (is_switch ? "Switch\t" : "Hca\t") << nports << " \"" << node.node_id << "\"\t# \"" << description
        << "\"\n";
    for (const auto& [port, end] : node.ports) {
      out << "[" << port << "]\t\"" << nodes[end.peer].node_id << "\"[" << end.peer_port << "]" << end.options
          << "\n";
    }
    out << "\n";
  };
  for (VertexId v = 0; v < vertices.size(); ++v) {
    if (nodes[v].present && vertices[v].kind == VertexKind::kSwitch) write_block(v);
  }
  for (VertexId v = 0; v < vertices.size(); ++v) {
    if (nodes[v].present && vertices[v].kind == VertexKind::kEndpoint) write_block(v);
  }
  if (!out) return fail(ErrorCode::kInternal, "ibsim net file: the output stream failed while writing");

  if (self_loops > 0) summary.notes.push_back(std::to_string(self_loops) + " self-loop link(s) left out");
  if (port_conflicts > 0) {
    summary.notes.push_back(std::to_string(port_conflicts) + " link(s) on an already used port left out");
  }
  if (cut_descriptions > 0) {
    summary.notes.push_back(std::to_string(cut_descriptions) + " node description(s) cut to " +
                            std::to_string(kIbsimMaxDescriptionBytes) + " bytes");
  }
  if (multi_port_endpoints > 0) {
    summary.notes.push_back(std::to_string(multi_port_endpoints) +
                            " endpoint(s) linked on several ports; only the first port keeps its GUID");
  }
  if (summary.omitted_aggregation_nodes > 0) {
    summary.notes.push_back(std::to_string(summary.omitted_aggregation_nodes) +
                            " SHARP aggregation node(s) left out of the simulation");
  }
  return summary;
}

}  // namespace hypertopo::discoverers::ib_fabric
