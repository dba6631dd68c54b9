// discoverers/netq/netq_topology.h: NVIDIA NetQ's topology graph and NMX compute nodes, read.
//
// NetQ (the management plane of Spectrum-X Ethernet fabrics) answers
// `POST api/netq/telemetry/v1/object/topologygraph/fetch-topology` with a list of graphs, each
// {nodes: [{tier, compounded_nodes: [{id, name, tier, device_type}]}], links: [{id "A-*-B",
// compounded_links: [{interfaces: [{node, interface}, {node, interface}]}]}]}; compounded nodes of
// tier -1 are the hosts NetQ learnt through LLDP, the others switches. Its NVLink management API
// (formerly NMX-M) answers `GET nmx/v1/compute-nodes` with [{ID, Name, DomainUUID, ...}]: the
// NVLink domain of each compute node. The shapes follow NVIDIA topograph's netq provider
// (pkg/providers/netq/netq.go parseNetq, nmx.go parseComputeNodes) and its saved answers
// (tests/output/netq/).
//
// The graph has one switch per NetQ switch (id and description: its name), one endpoint per host
// interface cabled to a switch ("<host>/<interface>", owned by the host), and one link per cable;
// the TreeBuilder then applies the tier rule, as for LLDP-learnt RoCE fabrics.
//
//   auto graphs = parse_netq_topology(text, "topologyGraph.json");   // expected<NetqTopology>
//   auto nvl = parse_nmx_compute_nodes(text2, "computeNodes.json");  // expected<vector<NodeReport>>
#pragma once

#include <cstddef>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "errors/error.h"
#include "topology/fabric_graph.h"
#include "topology/node_report.h"

namespace hypertopo::discoverers::netq {

// At most this many compounded nodes and cables in one answer: a NetQ premises of 100k devices is
// far past any fabric we place on, and the bound keeps a hostile answer from costing more.
inline constexpr std::size_t kMaxNetqNodes = 200000;
inline constexpr std::size_t kMaxNetqCables = 2000000;

struct NetqTopology {
  topology::FabricGraph graph;
  std::size_t switches = 0;
  std::size_t hosts = 0;
  std::size_t cables = 0;
  std::vector<std::string> warnings;  // records skipped, with the reason
};

// Adds the graphs of one fetch-topology answer (a JSON list of graphs) to `out`; several premises'
// answers merge into one graph. `where` names the answer in errors ("topologyGraph.json").
std::expected<void, Error> parse_netq_topology(std::string_view text, const std::string& where,
                                               NetqTopology& out);

// One NodeReport per compute node that names an NVLink domain: node_name = Name, nvlink.clique_id =
// DomainUUID, nvlink.source = "nmx". A node listed twice with different domains joins none.
std::expected<std::vector<topology::NodeReport>, Error> parse_nmx_compute_nodes(
    std::string_view text, const std::string& where, std::vector<std::string>& warnings);

}  // namespace hypertopo::discoverers::netq
