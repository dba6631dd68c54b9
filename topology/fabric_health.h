// topology/fabric_health.h: the fabric health pass, from link facts to DomainHealth on the tree.
//
// A gang spread over a leaf whose uplink trained at 1x, or that lost one of its uplinks, runs every
// collective at the speed of that leaf; no peer topology model sees it. The pass judges every link
// of the built tree by what both ends report (PortFacts, or the rate text where a source gives only
// that) against what both ends enable and support and against its siblings (the other links
// between the same two switch levels, whose most common width and speed is the expectation), and
// every switch by its uplink count against the other switches of its level. Bad links land in the
// domains they belong to (domain_health.h): the uplinks of the lower end's domain, the internal
// links of the lowest domain holding both ends.
//
// TreeBuilder::build runs it (TreeBuilderOptions::assess_health); it needs what only the builder
// knows (switch levels, the domain each switch first belongs to), handed over as a BuiltFabric.
//
//   assess_fabric_health(BuiltFabric{...}, tree);
//   for (const auto& d : tree.domains()) if (d.health.degraded()) std::cout << d.health.message();
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "topology/fabric_graph.h"
#include "topology/tree.h"

namespace hypertopo::topology {

struct BuiltFabric {
  const FabricGraph* graph = nullptr;
  std::span<const int> switch_level;            // per vertex: leaf = 1; 0 for endpoints and cut switches
  std::span<const std::int64_t> switch_home;    // per vertex: lowest domain holding the switch, or -1
  std::span<const std::int64_t> endpoint_host;  // per vertex: index into host_names, -1 if not compute
  std::span<const std::string> switch_names;    // per vertex: switches' display names
  std::span<const std::string> host_names;
};

void assess_fabric_health(const BuiltFabric& fabric, Tree& tree);

// Active width (lanes) and per-lane speed (Mb/s) of an ibnetdiscover rate ("4xNDR", "1xSDR");
// nullopt when the text is not one. Sources that give only the rate are judged from it.
struct LinkRate {
  unsigned lanes = 0;
  std::uint32_t lane_mbps = 0;
};
std::optional<LinkRate> parse_link_rate(std::string_view rate);
// Per-lane Mb/s of an InfiniBand speed name ("SDR" ... "XDR", "FDR10"); nullopt for any other text.
std::optional<std::uint32_t> lane_speed_of(std::string_view name);
// The rate the kernel prints in /sys/class/infiniband/<ca>/ports/<n>/rate, "100 Gb/sec (4X EDR)"
// (drivers/infiniband/core/sysfs.c, rate_show); nullopt for any other text.
std::optional<LinkRate> parse_sysfs_rate(std::string_view text);
// IB PortState (1 Down, 2 Initialize, 3 Armed, 4 Active) of a state as sysfs ("4: ACTIVE", "ACTIVE")
// or UFM ("Active", "Initialize") writes it; 0 for anything else.
std::uint8_t port_state_code(std::string_view text);
// IB PortPhysicalState (1 Sleep, 2 Polling, 3 Disabled, 4 Training, 5 LinkUp, 6 LinkErrorRecovery,
// 7 PhyTest) as sysfs ("5: LinkUp", "LinkUp") or UFM ("Link Up") writes it; 0 for anything else.
std::uint8_t phys_state_code(std::string_view text);

// "4x", "NDR" (or "<n> Mb/s" for a rate without a name), as the messages print them.
std::string width_text(unsigned lanes);
std::string speed_text(std::uint32_t lane_mbps);

}  // namespace hypertopo::topology
