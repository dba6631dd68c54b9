#include "discoverers/nvlink/nvlink_probe.h"

#include <dlfcn.h>

#include <cctype>
#include <cstdio>
#include <map>

#include "discoverers/nvlink/nvml_abi.h"
#include "discoverers/registry/source_config.h"

namespace hypertopo::discoverers::nvlink {

using topology::GpuFabric;
using topology::NvlinkFacts;

// The version words must match nvml.h's NVML_STRUCT_VERSION values, or the driver rejects the call.
static_assert(HT_NVML_GPU_FABRIC_INFO_V2 == 0x02000024u, "nvmlGpuFabricInfo_v2 layout");
static_assert(HT_NVML_GPU_FABRIC_INFO_V3 == 0x03000028u, "nvmlGpuFabricInfo_v3 layout");

namespace {

constexpr const char* kZeroUuid = "00000000-0000-0000-0000-000000000000";

class Library {
 public:
  explicit Library(const std::string& name) : handle_(dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ == nullptr) {
      const char* why = dlerror();
      error_ = why != nullptr ? why : "unknown dlopen error";
    }
  }
  ~Library() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }

  template <typename Fn>
  Fn symbol(const char* name) const {
    return reinterpret_cast<Fn>(dlsym(handle_, name));
  }

 private:
  void* handle_;
  std::string error_;
};

std::string gpu_list(const std::vector<int>& indices) {
  std::string out;
  for (int i : indices) {
    if (!out.empty()) out += ",";
    out += std::to_string(i);
  }
  return out;
}

std::string health_summary_text(unsigned char summary) {
  switch (summary) {
    case HT_NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY:
      return "Healthy";
    case HT_NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY:
      return "Unhealthy";
    case HT_NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY:
      return "LimitedCapacity";
    default:
      return "";  // NOT_SUPPORTED or a value this build does not know: not reported
  }
}

template <typename Info>
void fill_common(GpuFabric& gpu, const Info& info) {
  gpu.cluster_uuid = format_cluster_uuid(info.clusterUuid);
  gpu.clique_id = info.cliqueId;
  gpu.state = fabric_state_text(info.state);
  gpu.status = nvml_return_text(info.status);
}

struct FabricCalls {
  ht_nvmlDeviceGetGpuFabricInfoV_fn versioned = nullptr;
  ht_nvmlDeviceGetGpuFabricInfo_fn legacy = nullptr;
};

// One GPU's fabric info; returns the NVML code of the query itself.
int query_gpu(const FabricCalls& calls, ht_nvmlDevice device, GpuFabric& gpu) {
  if (calls.versioned != nullptr) {
    ht_nvmlGpuFabricInfoV3 v3{};
    v3.version = HT_NVML_GPU_FABRIC_INFO_V3;
    int rc = calls.versioned(device, &v3);
    if (rc == HT_NVML_SUCCESS) {
      fill_common(gpu, v3);
      gpu.health_mask = v3.healthMask;
      gpu.health_summary = health_summary_text(v3.healthSummary);
      return rc;
    }
    if (rc != HT_NVML_ERROR_ARGUMENT_VERSION_MISMATCH) return rc;
    // A driver that knows the versioned call but not v3 (healthSummary) still takes v2.
    ht_nvmlGpuFabricInfoV2 v2{};
    v2.version = HT_NVML_GPU_FABRIC_INFO_V2;
    rc = calls.versioned(device, &v2);
    if (rc == HT_NVML_SUCCESS) {
      fill_common(gpu, v2);
      gpu.health_mask = v2.healthMask;
    }
    return rc;
  }
  ht_nvmlGpuFabricInfoV1 v1{};
  int rc = calls.legacy(device, &v1);
  if (rc == HT_NVML_SUCCESS) fill_common(gpu, v1);
  return rc;
}

}  // namespace

std::string nvml_return_text(int code) {
  switch (code) {
    case HT_NVML_SUCCESS:
      return "Success";
    case HT_NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case HT_NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case HT_NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case HT_NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case HT_NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case HT_NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case HT_NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case HT_NVML_ERROR_TIMEOUT:
      return "Timeout";
    case HT_NVML_ERROR_FUNCTION_NOT_FOUND:
      return "Function Not Found";
    case HT_NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case HT_NVML_ERROR_INSUFFICIENT_RESOURCES:
      return "Insufficient Resources";
    case HT_NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "Argument Version Mismatch";
    case HT_NVML_ERROR_UNKNOWN:
      return "Unknown Error";
    default:
      return "NVML error " + std::to_string(code);
  }
}

std::string fabric_state_text(unsigned state) {
  switch (state) {
    case HT_NVML_GPU_FABRIC_STATE_NOT_SUPPORTED:
      return "NotSupported";
    case HT_NVML_GPU_FABRIC_STATE_NOT_STARTED:
      return "NotStarted";
    case HT_NVML_GPU_FABRIC_STATE_IN_PROGRESS:
      return "InProgress";
    case HT_NVML_GPU_FABRIC_STATE_COMPLETED:
      return "Completed";
    default:
      return "Unknown(" + std::to_string(state) + ")";
  }
}

std::string format_cluster_uuid(const unsigned char (&bytes)[16]) {
  char out[37];
  std::snprintf(out, sizeof out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]);
  return out;
}

std::string format_clique_id(std::string_view cluster_uuid, std::uint64_t clique_id) {
  return std::string(cluster_uuid) + "." + std::to_string(clique_id);
}

bool is_clique_id(std::string_view text) {
  auto dot = text.find('.');
  if (dot != 36 || dot + 1 >= text.size()) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  for (std::size_t i = dot + 1; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return text.size() - dot - 1 <= 20;
}

std::vector<std::string> decide_clique(NvlinkFacts& facts) {
  std::map<std::string, std::vector<int>> members;  // clique id -> GPU indices
  for (auto& gpu : facts.gpus) {
    gpu.in_domain = gpu.state == "Completed" && gpu.status == "Success" && !gpu.cluster_uuid.empty() &&
                    gpu.cluster_uuid != kZeroUuid;
    if (gpu.in_domain) members[format_clique_id(gpu.cluster_uuid, gpu.clique_id)].push_back(gpu.index);
  }
  facts.clique_id.clear();
  facts.conflicts.clear();
  std::vector<std::string> warnings;
  if (members.size() > 1) {
    std::string text = "GPUs of this node name different NVLink cliques:";
    for (const auto& [clique, gpus] : members) text += " " + clique + " (GPUs " + gpu_list(gpus) + ")";
    facts.conflicts.push_back(std::move(text));
    return warnings;
  }
  if (members.empty()) return warnings;
  facts.clique_id = members.begin()->first;
  for (const auto& gpu : facts.gpus) {
    if (!gpu.in_domain) {
      warnings.push_back("GPU " + std::to_string(gpu.index) + " is not in NVLink domain " + facts.clique_id +
                         " (state " + gpu.state + ", status " + gpu.status + ")");
    }
  }
  return warnings;
}

std::expected<NvmlProbeResult, Error> probe_nvml(const NvmlProbeOptions& options) {
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  NvmlProbeResult result;
  Library lib(options.library);
  if (!lib.loaded()) {
    log("nvlink: no NVML (" + lib.error() + "): no NVLink facts");
    return result;
  }
  auto unusable = [&](const std::string& why) {
    return fail(ErrorCode::kUnavailable, options.library + ": " + why);
  };
  auto init = lib.symbol<ht_nvmlInit_v2_fn>("nvmlInit_v2");
  auto shutdown = lib.symbol<ht_nvmlShutdown_fn>("nvmlShutdown");
  auto count_fn = lib.symbol<ht_nvmlDeviceGetCount_v2_fn>("nvmlDeviceGetCount_v2");
  auto handle_fn = lib.symbol<ht_nvmlDeviceGetHandleByIndex_v2_fn>("nvmlDeviceGetHandleByIndex_v2");
  for (auto [fn, name] : {std::pair<bool, const char*>{init != nullptr, "nvmlInit_v2"},
                          {shutdown != nullptr, "nvmlShutdown"},
                          {count_fn != nullptr, "nvmlDeviceGetCount_v2"},
                          {handle_fn != nullptr, "nvmlDeviceGetHandleByIndex_v2"}}) {
    if (!fn) return unusable(std::string("symbol ") + name + " is missing");
  }
  FabricCalls calls;
  calls.versioned = lib.symbol<ht_nvmlDeviceGetGpuFabricInfoV_fn>("nvmlDeviceGetGpuFabricInfoV");
  calls.legacy = lib.symbol<ht_nvmlDeviceGetGpuFabricInfo_fn>("nvmlDeviceGetGpuFabricInfo");
  if (calls.versioned == nullptr && calls.legacy == nullptr) {
    log("nvlink: the driver has no GPU fabric query: no NVLink facts");
    result.warnings.push_back(options.library + ": neither nvmlDeviceGetGpuFabricInfoV nor " +
                              "nvmlDeviceGetGpuFabricInfo exists (driver too old for NVLink domains)");
    return result;
  }
  if (calls.versioned == nullptr)
    log("nvlink: old driver: using nvmlDeviceGetGpuFabricInfo (no health mask)");

  if (int rc = init(); rc != HT_NVML_SUCCESS) return unusable("nvmlInit_v2: " + nvml_return_text(rc));
  struct Shutdown {
    ht_nvmlShutdown_fn fn;
    ~Shutdown() { fn(); }
  } shutdown_at_exit{shutdown};

  unsigned int count = 0;
  if (int rc = count_fn(&count); rc != HT_NVML_SUCCESS) {
    return unusable("nvmlDeviceGetCount_v2: " + nvml_return_text(rc));
  }
  NvlinkFacts facts;
  facts.source = "nvml";
  for (unsigned int i = 0; i < count; ++i) {
    GpuFabric gpu;
    gpu.index = static_cast<int>(i);
    ht_nvmlDevice device = nullptr;
    int rc = handle_fn(i, &device);
    if (rc == HT_NVML_SUCCESS) rc = query_gpu(calls, device, gpu);
    if (rc == HT_NVML_ERROR_NOT_SUPPORTED) {
      // GPUs without NVSwitch fabric (PCIe cards, single-node boards on old drivers): not an error.
      gpu.state = "NotSupported";
      gpu.status = nvml_return_text(rc);
    } else if (rc != HT_NVML_SUCCESS) {
      gpu.state = "Unknown";
      gpu.status = nvml_return_text(rc);
      result.warnings.push_back("GPU " + std::to_string(i) + ": fabric info: " + nvml_return_text(rc));
    }
    facts.gpus.push_back(std::move(gpu));
  }
  auto decided = decide_clique(facts);
  result.warnings.insert(result.warnings.end(), decided.begin(), decided.end());
  log("nvlink: " + std::to_string(count) + " GPUs, clique " +
      (facts.clique_id.empty() ? std::string("none") : facts.clique_id) +
      (facts.conflicts.empty() ? "" : " (conflict)"));
  result.facts = std::move(facts);
  return result;
}

std::expected<void, Error> probe_into(topology::NodeReport& report, const NvmlProbeOptions& options) {
  auto probed = probe_nvml(options);
  if (!probed) return std::unexpected(probed.error().context("while probing NVLink with NVML"));
  if (probed->facts) report.nvlink = std::move(probed->facts);
  report.warnings.insert(report.warnings.end(), probed->warnings.begin(), probed->warnings.end());
  return {};
}

std::expected<std::optional<NvlinkFacts>, Error> nvlink_facts_from_node(const k8s::NodeInfo& node) {
  auto it = node.labels.find(kCliqueLabel);
  if (it == node.labels.end()) return std::optional<NvlinkFacts>{};
  if (!is_clique_id(it->second)) {
    return fail(ErrorCode::kParse, "node " + node.name + ": label " + kCliqueLabel + "='" + it->second +
                                       "' is not <clusterUUID>.<cliqueId>");
  }
  NvlinkFacts facts;
  facts.source = "label";
  facts.clique_id = it->second;
  return std::optional<NvlinkFacts>(std::move(facts));
}

SourceEntry nvlink_probe_entry() {
  const std::vector<ConfigKey> keys = {{"library", "NVML library name or path (default libnvidia-ml.so.1)"}};
  return {
      .kind = "nvlink",
      .summary = "the NVLink clique (<clusterUUID>.<cliqueId>) from libnvidia-ml; none without the driver",
      .role = SourceRole::kNodeProbe,
      .cache = CachePolicy::kInterval,
      .keys = keys,
      .parse_config = [keys](const YAML::Node& node,
                             const ConfigAt& at) -> std::expected<SettingsPtr, Error> {
        ConfigBlock block(node, at);
        if (auto ok = block.only(keys); !ok) return std::unexpected(ok.error());
        auto c = std::make_shared<NvlinkConfig>();
        auto library = block.text("library");
        if (!library) return std::unexpected(library.error());
        if (*library) c->library = **library;
        return c;
      },
      .parse_arg = [](const std::string& arg) -> std::expected<SettingsPtr, Error> {
        auto c = std::make_shared<NvlinkConfig>();
        if (!arg.empty()) c->library = arg;
        return c;
      },
      .factory = nullptr,
      .probe = [](const SourceSettings& settings, const NodeProbeDeps& deps,
                  topology::NodeReport& report) -> std::expected<void, Error> {
        NvmlProbeOptions o;
        o.library = static_cast<const NvlinkConfig&>(settings).library;
        o.log = deps.log;
        return probe_into(report, o);
      }};
}

}  // namespace hypertopo::discoverers::nvlink
