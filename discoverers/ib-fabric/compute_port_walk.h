// discoverers/ib-fabric/compute_port_walk.h: walking the fabric from every local compute port.
//
// On a rail-optimised fabric each rail is its own subnet, so one walk from one HCA port sees one
// rail. `ibnetdisc` without a CA therefore walks from every local compute port - an InfiniBand
// port that is up (INIT, ARMED or ACTIVE: a directed-route walk needs no subnet manager) of an HCA
// whose name no exclusion pattern matches (storage, management) - and merges the graphs by GUID: a
// switch or CA port seen by several walks is one vertex, a cable seen twice is one link.
//
//   auto cas = list_umad_cas();                                 // umad_ports.h
//   auto ports = select_compute_ports(*cas, {"mlx5_(8|9)"});  // std::expected<..., Error>
//   auto graph = walk_compute_ports(*ports, [](const LocalPort& p) {
//     return walk_fabric({.ca_name = p.ca, .ca_port = p.port});
//   });
#pragma once

#include <expected>
#include <functional>
#include <string>
#include <vector>

#include "errors/error.h"
#include "topology/fabric_graph.h"
#include "topology/node_report.h"

namespace hypertopo::discoverers::ib_fabric {

struct LocalPort {
  std::string ca;  // "mlx5_0"
  int port = 1;
  std::string port_guid;  // may be empty
};

// The compute ports among `hcas`, in HCA order. Fails when a pattern is not a valid regex; an empty
// result is not an error here (the caller says what it looked at).
std::expected<std::vector<LocalPort>, Error> select_compute_ports(
    const std::vector<topology::HcaDevice>& hcas, const std::vector<std::string>& excluded_device_patterns);

// Adds `from` into `into`: vertices by id (fields fill in where `into` has none), links once.
void merge_fabric_graph(topology::FabricGraph& into, const topology::FabricGraph& from);

using PortWalk = std::function<std::expected<topology::FabricGraph, Error>(const LocalPort&)>;

// Walks from each port and merges. Fails when `ports` is empty, or when every walk fails (naming
// each port's error); walks that fail while others succeed are listed in `notes`.
std::expected<topology::FabricGraph, Error> walk_compute_ports(const std::vector<LocalPort>& ports,
                                                               const PortWalk& walk,
                                                               std::vector<std::string>* notes = nullptr);

}  // namespace hypertopo::discoverers::ib_fabric
