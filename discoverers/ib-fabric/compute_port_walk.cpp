#include "discoverers/ib-fabric/compute_port_walk.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "topology/tree_builder.h"

namespace hypertopo::discoverers::ib_fabric {

std::expected<std::vector<LocalPort>, Error> select_compute_ports(
    const std::vector<topology::HcaDevice>& hcas, const std::vector<std::string>& excluded_device_patterns) {
  auto patterns = topology::compile_patterns(excluded_device_patterns, "excluded device pattern");
  if (!patterns) return std::unexpected(patterns.error());
  std::vector<LocalPort> out;
  for (const auto& hca : hcas) {
    if (std::any_of(patterns->begin(), patterns->end(),
                    [&](const text::UserPattern& r) { return r.matches_whole(hca.name); })) {
      continue;
    }
    for (const auto& port : hca.ports) {
      // Directed-route SMPs need only a trained link: a port in INIT (no subnet manager yet) walks
      // as well as an ACTIVE one, as ibnetdiscover does.
      const bool up = port.state == "ACTIVE" || port.state == "ARMED" || port.state == "INIT";
      if (port.link_layer != topology::LinkLayer::kInfiniBand || !up) continue;
      out.push_back({hca.name, port.number, port.port_guid});
    }
  }
  return out;
}

void merge_fabric_graph(topology::FabricGraph& into, const topology::FabricGraph& from) {
  std::vector<topology::VertexId> mapped(from.vertex_count());
  for (topology::VertexId v = 0; v < from.vertex_count(); ++v) {
    const topology::Vertex& src = from.vertex(v);
    mapped[v] = src.kind == topology::VertexKind::kSwitch ? into.add_switch(src.id, src.description)
                                                          : into.add_endpoint(src.id, src.description);
    topology::Vertex& dst = into.vertex(mapped[v]);
    if (dst.host.empty()) dst.host = src.host;
    if (dst.device.empty()) dst.device = src.device;
    if (dst.system_guid.empty()) dst.system_guid = src.system_guid;
    if (dst.node_guid.empty()) dst.node_guid = src.node_guid;
    if (dst.port == 0) dst.port = src.port;
    dst.aggregation_node = dst.aggregation_node || src.aggregation_node;
  }
  // A cable is (vertex, port, vertex, port) with the ends in a canonical order.
  using Key = std::tuple<std::string, int, std::string, int>;
  auto key_of = [&](topology::VertexId a, int pa, topology::VertexId b, int pb) {
    Key x{into.vertex(a).id, pa, into.vertex(b).id, pb};
    Key y{into.vertex(b).id, pb, into.vertex(a).id, pa};
    return std::min(x, y);
  };
  std::set<Key> have;
  for (const auto& l : into.links()) have.insert(key_of(l.a, l.port_a, l.b, l.port_b));
  for (const auto& l : from.links()) {
    if (have.insert(key_of(mapped[l.a], l.port_a, mapped[l.b], l.port_b)).second) {
      into.add_link(mapped[l.a], l.port_a, mapped[l.b], l.port_b, l.rate);
    }
  }
}

std::expected<topology::FabricGraph, Error> walk_compute_ports(const std::vector<LocalPort>& ports,
                                                               const PortWalk& walk,
                                                               std::vector<std::string>* notes) {
  if (ports.empty()) return fail(ErrorCode::kNotFound, "no local compute port to walk from");
  topology::FabricGraph merged;
  std::vector<std::string> failures;
  std::size_t walked = 0;
  for (const auto& port : ports) {
    auto graph = walk(port);
    const std::string where = port.ca + ":" + std::to_string(port.port);
    if (!graph) {
      failures.push_back(where + ": " + graph.error().message());
      continue;
    }
    ++walked;
    merge_fabric_graph(merged, *graph);
  }
  if (walked == 0) {
    std::string all;
    for (const auto& f : failures) all += (all.empty() ? "" : "; ") + f;
    return fail(ErrorCode::kUnavailable, "every walk failed: " + all);
  }
  if (notes) {
    for (const auto& f : failures)
      notes->push_back("walk from " + f + " failed; the other ports' walks are used");
    notes->push_back("walked from " + std::to_string(walked) +
                     " local port(s), merged by GUID: " + std::to_string(merged.switch_count()) +
                     " switches, " + std::to_string(merged.endpoint_count()) + " CA ports");
  }
  return merged;
}

}  // namespace hypertopo::discoverers::ib_fabric
