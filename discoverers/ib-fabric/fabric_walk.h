// discoverers/ib-fabric/fabric_walk.h: a live InfiniBand subnet walk with libibnetdisc, and its replay.
//
// walk_fabric() runs ibnd_discover_fabric from a local CA port (directed-route SMPs, no SM needed)
// and turns what it found into a FabricGraph: switches by node GUID, one endpoint per CA port (id =
// port GUID, description = the CA's node description, system_guid = its sysimgguid), links with
// port numbers and the active rate ("4xNDR"). SHARP aggregation nodes are marked so the
// TreeBuilder never takes them for compute. With `cache_path` set the walk is also recorded with
// ibnd_cache_fabric; load_fabric_cache() replays such a file with no fabric (or simulator) at all.
//
//   WalkOptions opts;
//   opts.ca_name = "mlx5_0";               // empty: the first CA libibumad lists
//   opts.cache_path = "/var/lib/hypertopo/fabric.ibnd";
//   auto graph = walk_fabric(opts);         // std::expected<FabricGraph, Error>
//   auto again = load_fabric_cache("/var/lib/hypertopo/fabric.ibnd");
#pragma once

#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "errors/error.h"
#include "topology/fabric_graph.h"

namespace hypertopo::discoverers::ib_fabric {

struct WalkOptions {
  std::string ca_name;  // empty: libibumad's default CA
  int ca_port = 0;      // 0: the CA's first active port
  // libibnetdisc's own defaults apply where these are 0.
  unsigned timeout_ms = 0;
  unsigned retries = 0;
  unsigned max_hops = 0;
  unsigned max_smps = 0;
  // Record: where to write the ibnd cache of this walk (overwritten when it exists). A recording
  // that fails never costs the walk: the failure goes to `notes` (when given) and the graph stands.
  std::optional<std::filesystem::path> cache_path;
  std::vector<std::string>* notes = nullptr;
};

// Walks the subnet reachable from the options' CA port.
std::expected<topology::FabricGraph, Error> walk_fabric(const WalkOptions& options);

// Walks and writes only the ibnd cache to `options.cache_path` (what a walker child process does).
std::expected<void, Error> record_fabric_cache(const WalkOptions& options);

// Replays a cache written by walk_fabric, record_fabric_cache or `ibnetdiscover --cache`.
std::expected<topology::FabricGraph, Error> load_fabric_cache(const std::filesystem::path& path);

// Rate text as ibnetdiscover prints it ("4xQDR", "4xNDR") from PortInfo's active width, active
// speed and active extended speed (0 when the port has no extended speeds). "" when unknown.
std::string rate_text(unsigned width_active, unsigned speed_active, unsigned ext_speed_active);

// PortInfo link width / speed masks in the units of topology::PortFacts: the widest lane count of a
// LinkWidth mask (1x=1, 4x=2, 8x=4, 12x=8, 2x=16), and the fastest per-lane rate in Mb/s of a
// LinkSpeed mask (SDR=1, DDR=2, QDR=4) and a LinkSpeedExt mask (FDR=1, EDR=2, HDR=4, NDR=8, XDR=16;
// 0 when the port has no extended speeds, which then do not count). 0 when the mask names none.
unsigned width_lanes(unsigned width_mask);
unsigned lane_speed_mbps(unsigned speed_mask, unsigned ext_speed_mask);

// True when a CA's node description names a SHARP aggregation node.
bool is_aggregation_node_description(std::string_view description);

}  // namespace hypertopo::discoverers::ib_fabric
