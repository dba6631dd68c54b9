// discoverers/netq/netq_source.h: the `netq-file` source (and the `netq` REST source beside it).
//
// `netq-file:DIR` reads a saved NetQ answer: DIR/topologyGraph.json (NetQ's fetch-topology answer:
// the switches, the hosts NetQ learnt by LLDP, and the cables between them) and, when present,
// DIR/computeNodes.json (NMX's compute-nodes answer: each node's NVLink domain). The switch tree
// comes from the cables through the TreeBuilder's tier rule; the NVLink domains reach the pipeline
// as NodeReports whose nvlink facts come from NMX (source "nmx"), merged like NVML's cliques.
//
// Agent YAML, a `kind: netq-file` entry: `config: {dir: /var/lib/netq-capture, maxBytes: 256Mi}`.
// A saved answer only changes when it is replaced, so the agent reads it once per interval.
//
//   registry.add(netq_file_source_entry());
//   // hypertopo discover --source netq-file:fixtures/netq
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "discoverers/registry/discoverer.h"
#include "io/bounded_file.h"

namespace hypertopo::discoverers::netq {

inline constexpr const char* kTopologyGraphFile = "topologyGraph.json";
inline constexpr const char* kComputeNodesFile = "computeNodes.json";

struct NetqFileConfig : SourceSettings {
  std::string dir;
  std::uint64_t max_bytes = io::kDataFileLimit;  // per file
  std::string describe() const override { return dir; }
};

// Reads DIR's answers into a graph (and NMX's NVLink facts as reports).
std::expected<Discovery, Error> discover_netq_dir(const NetqFileConfig& config);

SourceEntry netq_file_source_entry();

}  // namespace hypertopo::discoverers::netq
