// discoverers/roce-lldp/roce_lldp.h: RoCE netdevs, their LLDP neighbours, and the RoCE fabric tree.
//
// Node side: which switch port each RDMA-capable Ethernet netdev is cabled to, read from the local
// lldpd through liblldpctl (or replayed from saved `lldpcli -f json|json0` output), plus the
// netdev's oper state (libnl-route-3) and speed (sysfs). Neighbours that are the host itself (VFs
// and representors looped back through the eswitch) and management NICs are dropped.
//
// Leader side: build_roce_fabric() turns every node's NodeReport into a FabricGraph: one switch per
// ToR (by chassis id, named by its system name), one endpoint per host netdev. The TreeBuilder then
// groups hosts by ToR and lets hosts with rails on several ToRs bridge them, exactly as for
// InfiniBand. A host cannot see past its ToR, so the switches above it come from a RoceHierarchy:
// explicit child -> parent names and/or name rules, loaded from the admin's YAML:
//
//   # hierarchy.yaml
//   parents:                      # explicit: switch -> its parent switch
//     leaf-1: spine-1
//     spine-1: superspine-1
//   rules:                        # tried in order when a switch has no explicit parent
//     - {pattern: '^leaf-(\d+)-\d+$', parent: 'spine-pod-$1'}   # RE2 regex, $N = group N
//
//   roce_lldp::RoceLldpOptions o;
//   o.lldpd_socket = "/run/lldpd.socket";
//   roce_lldp::probe_into(report, o);                                     // fills report.roce
//   auto hierarchy = roce_lldp::load_roce_hierarchy("hierarchy.yaml");   // expected<RoceHierarchy>
//   auto graph = roce_lldp::build_roce_fabric(reports, *hierarchy);       // expected<FabricGraph>
#pragma once

#include <chrono>
#include <expected>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "discoverers/registry/discoverer.h"
#include "errors/error.h"
#include "text/user_pattern.h"
#include "topology/fabric_graph.h"
#include "topology/node_report.h"

namespace hypertopo::discoverers::roce_lldp {

// What the local lldpd knows: our own chassis and each interface's neighbours.
struct LldpSnapshot {
  std::vector<std::string> local_chassis_ids;  // lower-case; several when lldpd runs per-port chassis
  std::string local_system_name;
  struct Entry {
    std::string interface;
    topology::LldpNeighbor neighbor;
  };
  std::vector<Entry> neighbors;  // in lldpd's order; an interface may have several
};

// How long one read of lldpd may take, connection included: liblldpctl's own I/O blocks without
// a limit, so a wedged lldpd (or anything silent on its socket) would hang the probe for good.
inline constexpr std::chrono::milliseconds kLldpdTimeout{5000};

// Reads the local lldpd through liblldpctl, with liblldpctl's I/O done here on a socket of ours
// that waits at most `timeout` in all. `socket` empty = lldpd's default control socket.
std::expected<LldpSnapshot, Error> read_lldpd(const std::string& socket,
                                              std::chrono::milliseconds timeout = kLldpdTimeout);

// `lldpcli show neighbors -f json` (shape changes with the neighbour count) or `-f json0` (always
// lists). `name` is used in error messages (the file name).
std::expected<LldpSnapshot, Error> parse_lldpcli_json(const nlohmann::json& doc, const std::string& name);
std::expected<LldpSnapshot, Error> read_lldpcli_json_file(const std::filesystem::path& path);

struct RoceLldpOptions {
  std::filesystem::path root = "/";                         // sysfs is read under <root>/sys/class/net
  std::string lldpd_socket;                                 // empty = lldpd's default
  std::chrono::milliseconds lldpd_timeout = kLldpdTimeout;  // the whole read of lldpd
  std::filesystem::path lldp_json;  // when set, replay this lldpcli JSON instead of asking lldpd
  // Which netdevs are RoCE rails. Empty: the RoCE netdevs already in the report (ib-local), or,
  // when there are none, every interface with an LLDP neighbour.
  std::string netdev_pattern;
  // Management NICs (matched against the netdev name), never rails.
  std::string management_pattern = R"(^(lo|eno\d+|enx[0-9a-f]+|mgmt.*|docker.*|cni.*|flannel.*|cali.*)$)";
  // Extra chassis ids / system names that are this host (added to what lldpd says about itself).
  std::vector<std::string> self_chassis_ids;
  std::vector<std::string> self_system_names;
  bool read_link_state = true;  // libnl oper state + sysfs speed
  std::function<void(const std::string&)> log;
};

// Pure part of the probe: merges a snapshot into report.roce per the options (no I/O).
// Fails only on an invalid pattern.
std::expected<void, Error> apply_snapshot(topology::NodeReport& report, const LldpSnapshot& snapshot,
                                          const RoceLldpOptions& options);

// Oper state (libnl-route-3 link cache, this network namespace) and speed (sysfs, then none).
struct LinkState {
  std::string oper_state;  // "up", "down", "unknown", ...; empty when the link is not found
  std::optional<std::uint64_t> speed_mbps;
};
std::map<std::string, LinkState> read_link_states(const std::vector<std::string>& netdevs,
                                                  const std::filesystem::path& root);

// read_lldpd (or the replay file) + apply_snapshot + read_link_states.
std::expected<void, Error> probe_into(topology::NodeReport& report, const RoceLldpOptions& options);

// ------------------------------------------------------------------------------------------------
// Leader side.

struct RoceHierarchy {
  std::map<std::string, std::string> parents;  // switch system name -> parent switch name
  struct Rule {
    std::string pattern;
    std::string parent;  // $1..$9 = capture groups
    std::optional<text::UserPattern> compiled;
  };
  std::vector<Rule> rules;
  std::string origin;  // file name, for messages

  // The parent of a switch: explicit first, then the first matching rule; nullopt at the top.
  std::optional<std::string> parent_of(const std::string& switch_name) const;
};

std::expected<RoceHierarchy, Error> load_roce_hierarchy(const std::filesystem::path& path);
std::expected<RoceHierarchy, Error> parse_roce_hierarchy(const std::string& yaml_text,
                                                         const std::string& name);

// Hosts -> their ToRs -> the switches above (from the hierarchy). Endpoint ids are
// "<node>/<netdev>" with the host set, so the TreeBuilder needs no name mapping. Fails on a cycle in
// the hierarchy. Reports whose netdevs have no neighbour contribute nothing (noted in `notes`).
std::expected<topology::FabricGraph, Error> build_roce_fabric(
    const std::vector<topology::NodeReport>& reports, const RoceHierarchy& hierarchy,
    std::vector<std::string>* notes = nullptr);

// The "roce[:HIERARCHY.yaml]" source: builds from DiscoveryDeps.reports. Agent config:
// `config: {hierarchy: FILE}` (optional). It reads the NodeReports, so it runs on every rebuild.
struct RoceConfig : SourceSettings {
  std::string hierarchy;  // the switches above the ToRs; "" : ToRs only
  std::string describe() const override { return hierarchy; }
};
std::expected<std::unique_ptr<Discoverer>, Error> make_roce_source(const SourceSpec& spec,
                                                                   const DiscoveryDeps& deps);
SourceEntry roce_source_entry();

// The "lldp" node probe: this node's RoCE rails and their LLDP neighbours. Agent config:
// `config: {netdevPattern, lldpdSocket, lldpJson}`; `hypertopo probe` fills the same struct from
// --roce-netdevs, --lldpd-socket and --lldp-json.
struct LldpProbeConfig : SourceSettings {
  std::string netdev_pattern;  // see RoceLldpOptions::netdev_pattern
  std::string lldpd_socket;
  std::string lldp_json;
  std::string describe() const override { return ""; }
};
SourceEntry lldp_probe_entry();

}  // namespace hypertopo::discoverers::roce_lldp
