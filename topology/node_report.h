// topology/node_report.h: what one node knows about its own network attachments.
//
// Every agent pod probes its node (HCAs from sysfs, RoCE netdevs and their LLDP neighbours, the NVLink
// clique from NVML) and publishes the result as a NodeReport custom object; the leader reads them all
// to map fabric GUIDs and switch ports to Kubernetes node names. The JSON form is a complete custom
// object body (apiVersion hypertopo.io/v1alpha1, kind NodeReport, metadata.name = the node name,
// spec = the facts), so the agent can write it as is; parsing it back names the field at fault.
//
//   NodeReport report;
//   report.node_name = "dgx-001";
//   report.probed_at = std::chrono::floor<std::chrono::seconds>(clock.now());
//   ib_local::probe_into(report, options);              // fills report.hcas and report.roce
//   std::cout << io::json_text(render_node_report(report), 2);   // or render_node_report_yaml(report)
//   auto back = parse_node_report(doc, &unknown_keys);  // std::expected<NodeReport, Error>
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "errors/error.h"

namespace hypertopo::topology {

inline constexpr const char* kNodeReportApiVersion = "hypertopo.io/v1alpha1";
inline constexpr const char* kNodeReportKind = "NodeReport";

enum class LinkLayer { kInfiniBand, kEthernet, kUnknown };

// "InfiniBand", "Ethernet", "Unknown" (the sysfs link_layer spelling).
const char* to_string(LinkLayer layer);
std::optional<LinkLayer> parse_link_layer(std::string_view text);

struct HcaPort {
  int number = 1;
  std::string port_guid;   // "0x" + 16 hex digits; empty when unknown (RoCE ports have none)
  std::string state;       // "ACTIVE", "DOWN", "INIT", ... (sysfs text without the number)
  std::string phys_state;  // "LinkUp", "Disabled", "Polling", ...
  LinkLayer link_layer = LinkLayer::kUnknown;
  std::string rate;       // as the kernel prints it: "400 Gb/sec (4X NDR)"
  std::uint32_t lid = 0;  // 0 = not assigned (RoCE, or a port that never came up)
  std::string netdev;     // "ib0", "enp12s0np0"; empty when none
  bool operator==(const HcaPort&) const = default;
};

struct HcaDevice {
  std::string name;              // "mlx5_0"
  std::string node_guid;         // "0x" + 16 hex digits
  std::string sys_image_guid;    // same form; equal across the HCAs of one adapter card
  std::string node_description;  // "dgx-001 mlx5_0" with rdma-ndd's default pattern
  std::vector<HcaPort> ports;
  bool operator==(const HcaDevice&) const = default;
};

// The switch port a RoCE netdev is cabled to, as its LLDP neighbour announces it.
struct LldpNeighbor {
  std::string chassis_id;
  std::string chassis_id_subtype;  // "mac", "local", "ifname", ...
  std::string system_name;         // "leaf-1"
  std::string port_id;             // "swp1"
  std::string port_id_subtype;     // "ifname", "mac", "local", ...
  std::string port_description;
  bool operator==(const LldpNeighbor&) const = default;
};

struct RoceNetdev {
  std::string netdev;       // "enp12s0np0"
  std::string rdma_device;  // the HCA behind it ("mlx5_4"); empty when matched by name pattern
  int rdma_port = 0;        // 0 when unknown
  std::string oper_state;   // "up", "down", ... (empty until a link probe fills it)
  std::optional<std::uint64_t> speed_mbps;
  std::optional<LldpNeighbor> neighbor;
  bool operator==(const RoceNetdev&) const = default;
};

// One GPU's view of the multi-node NVLink fabric (NVML's nvmlGpuFabricInfo).
struct GpuFabric {
  int index = 0;
  std::string cluster_uuid;  // 8-4-4-4-12 lower-case hex; may be all zero
  std::uint64_t clique_id = 0;
  std::string state;   // "NotSupported", "NotStarted", "InProgress", "Completed", "Unknown(n)"
  std::string status;  // NVML return text of the fabric registration ("Success", ...)
  std::optional<std::uint32_t> health_mask;  // absent with drivers that only know the v1 struct
  std::string health_summary;                // "Healthy", "Unhealthy", "LimitedCapacity", ""=not reported
  bool in_domain = false;                    // COMPLETED, status success and a non-zero cluster UUID
  bool operator==(const GpuFabric&) const = default;
};

struct NvlinkFacts {
  std::string source;     // "nvml" or "label" (GPU Feature Discovery's nvidia.com/gpu.clique)
  std::string clique_id;  // "<clusterUUID>.<cliqueId>"; empty when the node is in no domain
  std::vector<GpuFabric> gpus;
  std::vector<std::string> conflicts;  // GPUs of this node that disagree; clique_id is then empty
  bool operator==(const NvlinkFacts&) const = default;
};

struct NodeReport {
  std::string node_name;
  std::chrono::sys_seconds probed_at{};
  std::vector<HcaDevice> hcas;
  std::vector<RoceNetdev> roce;
  std::optional<NvlinkFacts> nvlink;
  std::vector<std::string> warnings;  // degraded probes: missing files, unreadable devices
  bool operator==(const NodeReport&) const = default;
};

// RFC 3339 UTC with seconds ("2026-11-22T04:30:45Z"), the form Kubernetes uses for times.
std::string format_rfc3339(std::chrono::sys_seconds t);
std::expected<std::chrono::sys_seconds, Error> parse_rfc3339(std::string_view text);

// The custom object body.
nlohmann::json render_node_report(const NodeReport& report);
std::string render_node_report_yaml(const NodeReport& report);

// The reverse; the error names the field ("spec.hcas[1].ports[0].lid: expected an unsigned integer").
// Keys this version does not read are no error: during a rolling upgrade reports come from newer
// (and older) agents, and the leader must not drop a node for a field it does not know. They are
// listed in `unknown_keys` when given, as paths without list indices ("spec.roce[].neighbor"), at
// most kMaxUnknownKeys of them, so a caller can warn once per kind of key (a misspelt key loses its
// data silently otherwise). metadata is the API server's and is not checked.
inline constexpr std::size_t kMaxUnknownKeys = 32;
std::expected<NodeReport, Error> parse_node_report(const nlohmann::json& doc,
                                                   std::vector<std::string>* unknown_keys = nullptr);
// JSON or YAML text (a JSON document is valid YAML, so one reader takes both).
std::expected<NodeReport, Error> parse_node_report_text(std::string_view text,
                                                        std::vector<std::string>* unknown_keys = nullptr);
std::expected<NodeReport, Error> read_node_report_file(const std::filesystem::path& path,
                                                       std::vector<std::string>* unknown_keys = nullptr);

}  // namespace hypertopo::topology
