// discoverers/nvlink/nvlink_probe.h: the node's multi-node NVLink domain (NVL72 rack) from NVML.
//
// Loads libnvidia-ml.so.1 with dlopen (never linked: nodes without the driver must still run the
// agent), asks every GPU for its fabric info (nvmlDeviceGetGpuFabricInfoV with the v3 struct, v2 when
// the driver rejects v3's version word, nvmlDeviceGetGpuFabricInfo on drivers without the versioned
// call) and derives the node's clique id "<clusterUUID>.<cliqueId>": the same text GPU Feature
// Discovery writes to the nvidia.com/gpu.clique node label. A GPU counts only when its state is
// COMPLETED, its status is NVML_SUCCESS and its cluster UUID is not all zero (HGX H100 reports
// COMPLETED with a zero UUID). GPUs that name different cliques are a conflict: reported, and the
// node then claims no clique. No library means "no NVLink facts", not an error.
//
//   nvlink::NvmlProbeOptions options;                 // options.library = "/path/libnvidia-ml.so.1"
//   auto probe = nvlink::probe_nvml(options);         // std::expected<NvmlProbeResult, Error>
//   if (probe && probe->facts) std::cout << probe->facts->clique_id << "\n";
//   auto from_label = nvlink::nvlink_facts_from_node(node);   // the label alternative
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "discoverers/registry/discoverer.h"
#include "errors/error.h"
#include "k8s/objects/node_list.h"
#include "topology/node_report.h"

namespace hypertopo::discoverers::nvlink {

inline constexpr const char* kDefaultNvmlLibrary = "libnvidia-ml.so.1";
inline constexpr const char* kCliqueLabel = "nvidia.com/gpu.clique";

struct NvmlProbeOptions {
  std::string library = kDefaultNvmlLibrary;    // a name (searched like any dlopen) or a path
  std::function<void(const std::string&)> log;  // one line per event; may be empty
};

// The "nvlink" node probe's config (agent `config: {library}`, `hypertopo probe --nvml-library`).
struct NvlinkConfig : SourceSettings {
  std::string library = kDefaultNvmlLibrary;
  std::string describe() const override { return ""; }
};
SourceEntry nvlink_probe_entry();

struct NvmlProbeResult {
  std::optional<topology::NvlinkFacts> facts;  // nullopt: no NVML on this node
  std::vector<std::string> warnings;           // per-GPU failures, GPUs outside the domain, ...
};

// Fails only when the library loads but is unusable: a required symbol is missing, nvmlInit_v2 or
// the device count fails. Per-GPU failures are warnings and leave that GPU out of the domain.
std::expected<NvmlProbeResult, Error> probe_nvml(const NvmlProbeOptions& options);

// Runs probe_nvml and stores the facts (when there are any) and warnings into `report`.
std::expected<void, Error> probe_into(topology::NodeReport& report, const NvmlProbeOptions& options);

// Decides the node's clique from its GPUs: sets in_domain on each and fills clique_id / conflicts.
// Returns warnings (GPUs of a node in a domain that are not part of it).
std::vector<std::string> decide_clique(topology::NvlinkFacts& facts);

// 16 bytes -> "dc6e40c4-d722-4357-9ba6-5291dd461278" (byte order as given, lower-case).
std::string format_cluster_uuid(const unsigned char (&bytes)[16]);
// "<clusterUUID>.<cliqueId>"
std::string format_clique_id(std::string_view cluster_uuid, std::uint64_t clique_id);
// Checks the "<8-4-4-4-12 hex>.<decimal>" form of a clique id (a label value, a report field).
bool is_clique_id(std::string_view text);

// The alternative source: GPU Feature Discovery's nvidia.com/gpu.clique label on the Node.
// nullopt when the node has no such label; an error when the value is not a clique id.
std::expected<std::optional<topology::NvlinkFacts>, Error> nvlink_facts_from_node(const k8s::NodeInfo& node);

// NVML return codes and fabric states as text ("Success", "Insufficient Resources", "Completed").
std::string nvml_return_text(int code);
std::string fabric_state_text(unsigned state);

}  // namespace hypertopo::discoverers::nvlink
