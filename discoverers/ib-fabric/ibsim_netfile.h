// discoverers/ib-fabric/ibsim_netfile.h: writes a FabricGraph as an ibsim net file.
//
// ibsim (ibsim-utils) simulates a subnet described in a text file close to ibnetdiscover's output;
// libibnetdisc and ibnetdiscover then walk it through the umad2sim preload. This writer lets any
// FabricGraph (a generated test fabric, the built-in demo fabric, a parsed capture) be simulated:
//   - switches keep their GUID ("switchguid=" before each block); each endpoint becomes a CA whose
//     port carries the endpoint's GUID (ibsim numbers CA ports node GUID + port number);
//   - node descriptions are quoted after '#', cut to 63 bytes (the IB NodeDescription), with '"'
//     replaced (ibsim ends the description at the next quote);
//   - rates: ibsim models widths 1x/4x/8x/12x and speeds SDR/DDR/QDR only, so a 4xNDR link is
//     simulated as 4xQDR (the walk reports what the simulator says);
//   - a node has at most 255 ports; self-loops and a second link on a used port are left out and
//     reported in the summary's notes.
//
//   std::ofstream out(dir / "fabric.net");
//   auto summary = write_ibsim_netfile(graph, out);   // std::expected<IbsimNetfileSummary, Error>
//   // summary->node_ids["0x2c5eab0300b87b40"] == "S-2c5eab0300b87b40": the name console commands use
#pragma once

#include <cstddef>
#include <expected>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "errors/error.h"
#include "topology/fabric_graph.h"

namespace hypertopo::discoverers::ib_fabric {

struct IbsimNetfileOptions {
  // SHARP aggregation nodes are plain CAs to ibsim; leave them out to simulate a fabric without.
  bool include_aggregation_nodes = true;
  // Switches get at least this many ports, so that free ports exist for console `Link` commands
  // (by default a switch has as many ports as its highest cabled port number).
  int min_switch_ports = 0;
};

struct IbsimNetfileSummary {
  std::size_t switches = 0;
  std::size_t cas = 0;
  std::size_t links = 0;
  std::size_t ports = 0;  // port records ibsim allocates (switch port 0 included), for its -P limit
  std::size_t omitted_aggregation_nodes = 0;
  // Vertex id (FabricGraph) -> ibsim node id ("S-<guid>", "H-<guid>"), as used by Link/Unlink.
  std::map<std::string, std::string> node_ids;
  // The first compute CA written: a natural place to attach clients (ibsim's SIM_HOST).
  std::string first_ca;
  std::vector<std::string> notes;  // what could not be simulated exactly
};

std::expected<IbsimNetfileSummary, Error> write_ibsim_netfile(const topology::FabricGraph& graph,
                                                              std::ostream& out,
                                                              const IbsimNetfileOptions& options = {});

// ibsim's limits (per node; the -N/-S/-P totals are raised by SimulatedFabric).
inline constexpr int kIbsimMaxPortsPerNode = 255;
inline constexpr std::size_t kIbsimMaxDescriptionBytes = 63;

}  // namespace hypertopo::discoverers::ib_fabric
