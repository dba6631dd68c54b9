// discoverers/ib-fabric/graph_handover.h: how a walker child hands its FabricGraph to the parent.
//
// Loading an ibnd cache costs libibnetdisc tens of thousands of small reads; a walker child that
// has the graph already writes it in this line format (one buffered write, one read) instead:
//   hypertopo-fabric-graph 1
//   V <s|e> <id> <system_guid|-> <node_guid|-> <port> <aggregation 0|1> <description>
//   L <vertex a> <port a> <vertex b> <port b> <rate|-> [<facts a|-> <facts b|->]
// Link facts (topology::PortFacts) are eight comma-separated numbers: width active, enabled,
// supported, state, speed active, enabled, supported, physical state; a line without them is a
// link whose source read no PortInfo. Fields are tab-separated; descriptions are last and hold no tabs or
// newlines (the walk cleans control bytes out of node descriptions). Vertices are numbered in file order.
//
//   write_graph_handover(graph, out);
//   auto graph = read_graph_handover("walk.graph");   // std::expected<FabricGraph, Error>
#pragma once

#include <expected>
#include <filesystem>
#include <ostream>

#include "errors/error.h"
#include "topology/fabric_graph.h"

namespace hypertopo::discoverers::ib_fabric {

void write_graph_handover(const topology::FabricGraph& graph, std::ostream& out);
std::expected<topology::FabricGraph, Error> read_graph_handover(const std::filesystem::path& path);

}  // namespace hypertopo::discoverers::ib_fabric
