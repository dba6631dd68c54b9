// NVLink probe tests. No real NVML exists on the test machines (no NVIDIA driver), so every case
// loads a fake libnvidia-ml.so.1 built from fake_nvml.c for one node kind; the fake keeps NVML's ABI
// (entry point names, return codes, struct layouts and version words), so the probe runs the same
// code path it runs against the driver. Expected values are read from the real nvidia-smi captures
// in shared/fixtures/nvidia-smi/ where one exists.
#include "discoverers/nvlink/nvlink_probe.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <sstream>

#include "tests/support/fixtures.h"

namespace hypertopo::discoverers::nvlink {
namespace {

using hypertopo::testing::read_text;

std::string fake_library(const std::string& scenario) {
  return std::string(HT_FAKE_NVML_ROOT) + "/" + scenario + "/libnvidia-ml.so.1";
}

// Keeps the fake loaded across the probe's own dlopen/dlclose so the test can read its counters.
class LoadedFake {
 public:
  explicit LoadedFake(const std::string& scenario)
      : path_(fake_library(scenario)), handle_(dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~LoadedFake() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  LoadedFake(const LoadedFake&) = delete;
  LoadedFake& operator=(const LoadedFake&) = delete;

  bool ok() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }
  // nvmlInit_v2 calls not yet matched by nvmlShutdown.
  int open_sessions() const {
    auto fn = reinterpret_cast<int (*)()>(dlsym(handle_, "fake_nvml_open_sessions"));
    return fn != nullptr ? fn() : -1;
  }

 private:
  std::string path_;
  void* handle_;
};

// "        ClusterUUID      : dc6e..." -> "dc6e..."; the first line whose key is `key`.
std::string capture_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("#")) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (name != key) continue;
    auto value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    value.erase(value.find_last_not_of(" \r") + 1);
    return value;
  }
  return "";
}

struct Probed {
  NvmlProbeResult result;
  std::vector<std::string> log;
  int open_sessions_after = -1;
};

Probed probe_scenario(const std::string& scenario) {
  LoadedFake fake(scenario);
  EXPECT_TRUE(fake.ok()) << "fake NVML not built: " << fake.path() << ": " << dlerror();
  Probed out;
  NvmlProbeOptions options;
  options.library = fake.path();
  options.log = [&](const std::string& line) { out.log.push_back(line); };
  auto result = probe_nvml(options);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message());
  if (result) out.result = std::move(*result);
  out.open_sessions_after = fake.open_sessions();
  return out;
}

TEST(NvlinkProbe, Gb200CompletedGivesTheCliqueOfTheCapture) {
  HT_REQUIRE_FIXTURE(capture_path, "nvidia-smi/nvidia-smi-q-fabric-gb200-completed.txt");
  const std::string capture = read_text(capture_path);
  const std::string expected =
      capture_value(capture, "ClusterUUID") + "." + capture_value(capture, "CliqueId");
  ASSERT_EQ(expected, "dc6e40c4-d722-4357-9ba6-5291dd461278.2");  // the capture is what we think it is

  auto probed = probe_scenario("gb200_completed");
  ASSERT_TRUE(probed.result.facts.has_value());
  const auto& facts = *probed.result.facts;
  EXPECT_EQ(facts.source, "nvml");
  EXPECT_EQ(facts.clique_id, expected);
  EXPECT_TRUE(facts.conflicts.empty());
  ASSERT_EQ(facts.gpus.size(), 4u);
  for (const auto& gpu : facts.gpus) {
    EXPECT_TRUE(gpu.in_domain);
    EXPECT_EQ(gpu.state, capture_value(capture, "State"));
    EXPECT_EQ(gpu.status, capture_value(capture, "Status"));
    EXPECT_EQ(gpu.health_summary, capture_value(capture, "Summary"));  // Unhealthy, yet in the domain
    EXPECT_EQ(gpu.health_mask, std::optional<std::uint32_t>(2u));
  }
  EXPECT_EQ(facts.gpus[3].index, 3);
  EXPECT_TRUE(probed.result.warnings.empty());
  EXPECT_EQ(probed.open_sessions_after, 0) << "nvmlShutdown must balance nvmlInit_v2";
}

TEST(NvlinkProbe, HgxZeroUuidIsNoDomain) {
  HT_REQUIRE_FIXTURE(capture_path, "nvidia-smi/nvidia-smi-q-fabric-hgx-single-node.txt");
  const std::string capture = read_text(capture_path);
  auto probed = probe_scenario("hgx_zero_uuid");
  ASSERT_TRUE(probed.result.facts.has_value());
  const auto& facts = *probed.result.facts;
  EXPECT_EQ(facts.clique_id, "");
  EXPECT_TRUE(facts.conflicts.empty());
  ASSERT_EQ(facts.gpus.size(), 8u);
  for (const auto& gpu : facts.gpus) {
    EXPECT_EQ(gpu.state, capture_value(capture, "State"));    // Completed ...
    EXPECT_EQ(gpu.status, capture_value(capture, "Status"));  // ... and Success ...
    EXPECT_EQ(gpu.cluster_uuid, "00000000-0000-0000-0000-000000000000");
    EXPECT_FALSE(gpu.in_domain);  // ... but a zero UUID: a single-node NVSwitch board
  }
  EXPECT_TRUE(probed.result.warnings.empty());
  EXPECT_EQ(probed.open_sessions_after, 0);
}

TEST(NvlinkProbe, InProgressIsNoDomainYet) {
  auto probed = probe_scenario("in_progress");
  ASSERT_TRUE(probed.result.facts.has_value());
  EXPECT_EQ(probed.result.facts->clique_id, "");
  for (const auto& gpu : probed.result.facts->gpus) {
    EXPECT_EQ(gpu.state, "InProgress");
    EXPECT_EQ(gpu.cluster_uuid, "dc6e40c4-d722-4357-9ba6-5291dd461278");
    EXPECT_FALSE(gpu.in_domain);
  }
}

TEST(NvlinkProbe, NotSupportedGpusAreNoDomainAndNoWarning) {
  auto probed = probe_scenario("not_supported");
  ASSERT_TRUE(probed.result.facts.has_value());
  EXPECT_EQ(probed.result.facts->clique_id, "");
  ASSERT_EQ(probed.result.facts->gpus.size(), 2u);
  for (const auto& gpu : probed.result.facts->gpus) {
    EXPECT_EQ(gpu.state, "NotSupported");
    EXPECT_EQ(gpu.status, "Not Supported");
    EXPECT_FALSE(gpu.in_domain);
  }
  EXPECT_TRUE(probed.result.warnings.empty());
  EXPECT_EQ(probed.open_sessions_after, 0);
}

TEST(NvlinkProbe, TwoCliquesOnOneNodeAreAConflict) {
  auto probed = probe_scenario("two_cliques");
  ASSERT_TRUE(probed.result.facts.has_value());
  const auto& facts = *probed.result.facts;
  EXPECT_EQ(facts.clique_id, "") << "a node whose GPUs disagree claims no clique";
  ASSERT_EQ(facts.conflicts.size(), 1u);
  EXPECT_NE(facts.conflicts[0].find("50000000-0000-0000-0000-000000000004.4000000005 (GPUs 0,1,2,3)"),
            std::string::npos)
      << facts.conflicts[0];
  EXPECT_NE(facts.conflicts[0].find("50000000-0000-0000-0000-000000000005.4000000004 (GPUs 4,5,6,7)"),
            std::string::npos)
      << facts.conflicts[0];
  for (const auto& gpu : facts.gpus) EXPECT_TRUE(gpu.in_domain);
}

TEST(NvlinkProbe, OldDriverFallsBackToTheUnversionedCall) {
  auto probed = probe_scenario("old_driver");
  ASSERT_TRUE(probed.result.facts.has_value());
  const auto& facts = *probed.result.facts;
  EXPECT_EQ(facts.clique_id, "dc6e40c4-d722-4357-9ba6-5291dd461278.2");
  for (const auto& gpu : facts.gpus) {
    EXPECT_TRUE(gpu.in_domain);
    EXPECT_FALSE(gpu.health_mask.has_value()) << "nvmlGpuFabricInfo_t has no health mask";
    EXPECT_EQ(gpu.health_summary, "");
  }
  bool logged = false;
  for (const auto& line : probed.log) logged |= line.find("nvmlDeviceGetGpuFabricInfo") != std::string::npos;
  EXPECT_TRUE(logged);
  EXPECT_EQ(probed.open_sessions_after, 0);
}

TEST(NvlinkProbe, DriverWithoutV3FallsBackToV2) {
  auto probed = probe_scenario("v2_driver");
  ASSERT_TRUE(probed.result.facts.has_value());
  EXPECT_EQ(probed.result.facts->clique_id, "dc6e40c4-d722-4357-9ba6-5291dd461278.2");
  for (const auto& gpu : probed.result.facts->gpus) {
    EXPECT_EQ(gpu.health_mask, std::optional<std::uint32_t>(2u));
    EXPECT_EQ(gpu.health_summary, "") << "v2 has no health summary";
  }
}

TEST(NvlinkProbe, FailedRegistrationIsNoDomain) {
  HT_REQUIRE_FIXTURE(capture_path, "nvidia-smi/nvidia-smi-q-fabric-insufficient-resources.txt");
  const std::string capture = read_text(capture_path);
  auto probed = probe_scenario("insufficient_resources");
  ASSERT_TRUE(probed.result.facts.has_value());
  EXPECT_EQ(probed.result.facts->clique_id, "");
  for (const auto& gpu : probed.result.facts->gpus) {
    EXPECT_EQ(gpu.state, capture_value(capture, "State"));
    EXPECT_EQ(gpu.status, capture_value(capture, "Status"));  // "Insufficient Resources"
    EXPECT_EQ(format_clique_id(gpu.cluster_uuid, gpu.clique_id),
              capture_value(capture, "ClusterUUID") + "." + capture_value(capture, "CliqueId"));
    EXPECT_FALSE(gpu.in_domain);
  }
}

TEST(NvlinkProbe, OneLaggingGpuKeepsTheCliqueAndWarns) {
  auto probed = probe_scenario("one_gpu_lagging");
  ASSERT_TRUE(probed.result.facts.has_value());
  EXPECT_EQ(probed.result.facts->clique_id, "dc6e40c4-d722-4357-9ba6-5291dd461278.2");
  EXPECT_FALSE(probed.result.facts->gpus[3].in_domain);
  ASSERT_EQ(probed.result.warnings.size(), 1u);
  EXPECT_NE(probed.result.warnings[0].find("GPU 3"), std::string::npos) << probed.result.warnings[0];
}

TEST(NvlinkProbe, InitFailureIsAnErrorAndLeavesNothingOpen) {
  LoadedFake fake("init_fails");
  ASSERT_TRUE(fake.ok());
  NvmlProbeOptions options;
  options.library = fake.path();
  auto result = probe_nvml(options);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(result.error().message().find("nvmlInit_v2: Driver Not Loaded"), std::string::npos)
      << result.error().message();
  EXPECT_EQ(fake.open_sessions(), 0);
}

TEST(NvlinkProbe, NoLibraryMeansNoNvlinkFacts) {
  hypertopo::testing::TempDir dir;
  std::vector<std::string> log;
  NvmlProbeOptions options;
  options.library = (dir.path() / "libnvidia-ml.so.1").string();  // absent
  options.log = [&](const std::string& line) { log.push_back(line); };
  auto result = probe_nvml(options);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_FALSE(result->facts.has_value());
  EXPECT_TRUE(result->warnings.empty());
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.back().find("no NVLink facts"), std::string::npos) << log.back();
}

TEST(NvlinkProbe, ProbeIntoFillsTheReport) {
  LoadedFake fake("gb200_completed");
  ASSERT_TRUE(fake.ok());
  topology::NodeReport report;
  report.node_name = "gb200-rack1-tray3";
  NvmlProbeOptions options;
  options.library = fake.path();
  ASSERT_TRUE(probe_into(report, options).has_value());
  ASSERT_TRUE(report.nvlink.has_value());
  auto json = topology::render_node_report(report);
  EXPECT_EQ(json["spec"]["nvlink"]["cliqueId"], "dc6e40c4-d722-4357-9ba6-5291dd461278.2");
  EXPECT_EQ(json["spec"]["nvlink"]["gpus"].size(), 4u);
  auto back = topology::parse_node_report(json);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(*back, report);
}

TEST(NvlinkClique, FormatsTheUuidLikeGpuFeatureDiscovery) {
  const unsigned char bytes[16] = {0x9c, 0x6f, 0x5a, 0xf3, 0x53, 0xbf, 0x49, 0xb5,
                                   0xa4, 0x36, 0xb6, 0x67, 0x66, 0xc4, 0x13, 0xc3};
  EXPECT_EQ(format_cluster_uuid(bytes), "9c6f5af3-53bf-49b5-a436-b66766c413c3");
  EXPECT_EQ(format_clique_id(format_cluster_uuid(bytes), 4026), "9c6f5af3-53bf-49b5-a436-b66766c413c3.4026");
}

TEST(NvlinkClique, RecognisesCliqueIds) {
  EXPECT_TRUE(is_clique_id("9c6f5af3-53bf-49b5-a436-b66766c413c3.4026"));
  EXPECT_FALSE(is_clique_id("9c6f5af3-53bf-49b5-a436-b66766c413c3"));
  EXPECT_FALSE(is_clique_id("9c6f5af3-53bf-49b5-a436-b66766c413c3."));
  EXPECT_FALSE(is_clique_id("9c6f5af353bf49b5a436b66766c413c3.4026"));
  EXPECT_FALSE(is_clique_id("9c6f5af3-53bf-49b5-a436-b66766c413c3.40x6"));
  EXPECT_FALSE(is_clique_id(""));
}

TEST(NvlinkClique, SyntheticCsvRowsAgreeOnOneClique) {
  HT_REQUIRE_FIXTURE(csv_path, "nvidia-smi/nvidia-smi-query-gpu-fabric-csv.SYNTHETIC.txt");
  topology::NvlinkFacts facts;
  std::istringstream in(read_text(csv_path));
  int index = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.starts_with("#")) continue;
    auto comma = line.find(',');
    ASSERT_NE(comma, std::string::npos) << line;
    topology::GpuFabric gpu;
    gpu.index = index++;
    gpu.cluster_uuid = line.substr(0, comma);
    gpu.clique_id = std::stoull(line.substr(comma + 1));
    gpu.state = "Completed";
    gpu.status = "Success";
    facts.gpus.push_back(gpu);
  }
  ASSERT_EQ(facts.gpus.size(), 4u);
  EXPECT_TRUE(decide_clique(facts).empty());
  EXPECT_EQ(facts.clique_id, "9c6f5af3-53bf-49b5-a436-b66766c413c3.4026");
}

TEST(NvlinkLabel, ReadsGpuFeatureDiscoveryLabel) {
  k8s::NodeInfo node;
  node.name = "gb200-01";
  auto none = nvlink_facts_from_node(node);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());

  node.labels[kCliqueLabel] = "dc6e40c4-d722-4357-9ba6-5291dd461278.2";
  auto found = nvlink_facts_from_node(node);
  ASSERT_TRUE(found.has_value() && found->has_value());
  EXPECT_EQ((*found)->source, "label");
  EXPECT_EQ((*found)->clique_id, "dc6e40c4-d722-4357-9ba6-5291dd461278.2");

  node.labels[kCliqueLabel] = "rack-7";
  auto bad = nvlink_facts_from_node(node);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("gb200-01"), std::string::npos);
  EXPECT_NE(bad.error().message().find("rack-7"), std::string::npos);
}

}  // namespace
}  // namespace hypertopo::discoverers::nvlink
