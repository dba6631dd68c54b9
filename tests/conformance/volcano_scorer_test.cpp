// Volcano's network-topology-aware scorer as a user meets it: Kubernetes objects and the
// volcano-scheduler ConfigMap through `hypertopo place` and the extender's prioritize. Each number
// is worked out in the comments with Volcano's formulas (volcano-sh/volcano
// pkg/scheduler/plugins/network-topology-aware/network_topology_aware.go).
#include <gtest/gtest.h>

#include "tests/conformance/volcano_world.h"

namespace hypertopo::testing {
namespace {

using nlohmann::json;

// Four 64-core, 512Gi, 8-GPU nodes in two leaves; leaf-a's a1 runs a 48-core CPU job, leaf-b's b1
// an 8-GPU job (1 core). GPUs are weighted 2.
VolcanoWorld cpu_busy_and_gpu_busy(int leaf_tier) {
  VolcanoWorld w;
  for (const char* n : {"a1", "a2", "b1", "b2"})
    w.node(n, {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}});
  w.hypernode("leaf-a", leaf_tier, "Node", {"a1", "a2"});
  w.hypernode("leaf-b", leaf_tier, "Node", {"b1", "b2"});
  w.bound_pod("cpu-job", "a1", {{"cpu", "48"}, {"memory", "1Gi"}});
  w.bound_pod("gpu-job", "b1", {{"cpu", "1"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "8"}});
  return w;
}

const std::string kGpuWeighted =
    "      hypernode.binpack.resources: nvidia.com/gpu\n"
    "      hypernode.binpack.resources.nvidia.com/gpu: 2\n";

// getPodHyperNodeBinPackingScore loops over the pod's own requests: a CPU-only pod never sees the
// GPU weight. Tiers 1 (leaves) and 2 (the cluster top), fading 0.8:
//   leaf-a: cpu (48+4)/128 = 0.40625, memory (1+1)/1024Gi = 0.001953 -> 0.204102
//   leaf-b: cpu (1+4)/128 = 0.039063, memory 0.001953               -> 0.020508
//   top:    cpu 53/256 = 0.207031,    memory 3/2048 = 0.001465      -> 0.104248
//   a*: (0.204102 + 0.8 * 0.104248) / 1.8 = 0.15972 (Volcano 15.97); b*: 0.05773 (5.77)
// Extender priorities 0..10, the best 10: a* 10, b* round(5.773 / 15.972 * 10) = 4. Counting the
// GPU (weight 2, the pod asks for none) would put b* first: leaf-b (0.0410 + 2 * 0.5) / 4.
TEST(VolcanoScorer, ACpuOnlyPodIgnoresTheGpuWeightAndPrefersTheCpuBusyLeaf) {
  VolcanoWorld w = cpu_busy_and_gpu_busy(1);
  const std::string cm = volcano_configmap(kGpuWeighted);
  const json pending = VolcanoWorld::pod("web-0", {{"cpu", "4"}, {"memory", "1Gi"}});
  auto scores = w.prioritize(pending, {"a1", "a2", "b1", "b2"}, cm);
  EXPECT_EQ(scores["a1"], 10);
  EXPECT_EQ(scores["a2"], 10);
  EXPECT_EQ(scores["b1"], 4);
  EXPECT_EQ(scores["b2"], 4);

  auto run = w.place(VolcanoWorld::volcano_job("web", 1, {{"cpu", "4"}, {"memory", "1Gi"}}), cm);
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const json ps = json::parse(run.out)["podSets"][0];
  ASSERT_EQ(ps["assignment"].size(), 1u) << ps.dump();
  EXPECT_EQ(ps["assignment"][0]["node"].get<std::string>().substr(0, 1), "a") << ps.dump();
}

// getSubJobHyperNodeBinPackingScore alike: a gang of two CPU-only pods inside one leaf takes the
// CPU-busy leaf-a (cpu 56/128, memory 3/1024 -> 0.2202) over leaf-b (0.0393); with the GPU weight
// counted, leaf-b's idle-GPU-free half (8/16 GPUs used) would win.
TEST(VolcanoScorer, ACpuOnlyGangIgnoresTheGpuWeight) {
  VolcanoWorld w = cpu_busy_and_gpu_busy(1);
  const json hard{{"mode", "hard"}, {"highestTierAllowed", 1}};
  auto run = w.place(VolcanoWorld::volcano_job("gang", 2, {{"cpu", "4"}, {"memory", "1Gi"}}, hard),
                     volcano_configmap(kGpuWeighted));
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const json ps = json::parse(run.out)["podSets"][0];
  EXPECT_EQ(ps["domains"], json::array({"leaf-a"})) << ps.dump();
  EXPECT_EQ(ps["tier"], 1) << ps.dump();
}

// Leaves at tier 2 and no tier-1 HyperNode: Volcano's tiers run from the lowest one present
// (parseHyperNodesTiers), 2 and the cluster top 3, weighing 0.8 and 0.64; no empty tier 1 scoring
// 1.0. Default weights (cpu, memory); a1 runs 32 cores; the pod asks 4 cores and 1Gi:
//   leaf-a: cpu 36/128 = 0.28125, memory 2/1024 = 0.001953 -> 0.141602
//   leaf-b: cpu 4/128 = 0.03125,  memory 1/1024 = 0.000977 -> 0.016113
//   top:    cpu 36/256 = 0.140625, memory 2/2048           -> 0.070801
//   a*: (0.8 * 0.141602 + 0.64 * 0.070801) / 1.44 = 0.110135; b*: 0.040424
// Extender: a* 10, b* round(10 * 0.040424 / 0.110135) = 4. An empty tier 1 scoring 1.0 would give
// a* 0.4748, b* 0.4337: b* 9.
TEST(VolcanoScorer, TiersStartAtTheLowestHyperNodeTierPresent) {
  VolcanoWorld w;
  for (const char* n : {"a1", "a2", "b1", "b2"}) w.node(n, {{"cpu", "64"}, {"memory", "512Gi"}});
  w.hypernode("leaf-a", 2, "Node", {"a1", "a2"});
  w.hypernode("leaf-b", 2, "Node", {"b1", "b2"});
  w.bound_pod("cpu-job", "a1", {{"cpu", "32"}, {"memory", "1Gi"}});
  const json pending = VolcanoWorld::pod("web-0", {{"cpu", "4"}, {"memory", "1Gi"}});
  auto scores = w.prioritize(pending, {"a1", "a2", "b1", "b2"}, volcano_configmap(""));
  EXPECT_EQ(scores["a1"], 10);
  EXPECT_EQ(scores["a2"], 10);
  EXPECT_EQ(scores["b1"], 4);
  EXPECT_EQ(scores["b2"], 4);
}

// framework.Arguments as Volcano reads them: what it would take, it takes; what it would not, keeps
// the default, and here each such key is a warning on stderr, never an exit 2.
TEST(VolcanoScorer, ArgumentsVolcanoWouldLoadLoadWithAWarningPerKeyItIgnores) {
  VolcanoWorld w = cpu_busy_and_gpu_busy(1);
  const std::string cm = volcano_configmap(
      "      weight: \"5\"\n"
      "      hypernode.binpack.cpu: 2.5\n"
      "      hypernode.binpack.memory: -3\n"
      "      hypernode.binpack.normal-pod.enable: a\n"
      "      hypernode.binpack.normal-pod.fading: -1\n"
      "      hypernode.binpack.resources: nvidia.com/gpu\n"
      "      hypernode.binpack.resources.nvidia.com/gpuxxx: 5\n",
      "unknownTopLevel: 1\n");
  auto run = w.place(VolcanoWorld::volcano_job("web", 1, {{"cpu", "4"}, {"memory", "1Gi"}}), cm);
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  for (const char* key : {"arguments.weight:", "arguments.hypernode.binpack.cpu:",
                          "arguments.hypernode.binpack.normal-pod.enable:",
                          "arguments.hypernode.binpack.resources.nvidia.com/gpuxxx:", "unknownTopLevel:"})
    EXPECT_NE(run.err.find(key), std::string::npos) << key << "\n" << run.err;
  // -3 and -1 are Volcano's to correct silently (to 1 and 0.8): no warning for them.
  EXPECT_EQ(run.err.find("binpack.memory"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("fading"), std::string::npos) << run.err;

  auto cfg = scheduler::parse_scheduler_config(cm, "cm.yaml");
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message();
  EXPECT_EQ(cfg->binpack.weight, 1);
  EXPECT_EQ(cfg->binpack.resources.at("cpu"), 1);
  EXPECT_EQ(cfg->binpack.resources.at("memory"), 1);
  EXPECT_EQ(cfg->binpack.resources.at("nvidia.com/gpu"), 1);
  EXPECT_TRUE(cfg->binpack.normal_pod_enable);
  EXPECT_DOUBLE_EQ(cfg->binpack.fading, 0.8);
}

// cpu and memory keep their own keys' weights even when listed with the extra resources
// (getBinPackWeight never looks them up there); a resource listed twice is read once.
TEST(VolcanoScorer, CpuAndMemoryAreWeightedByTheirOwnKeysOnly) {
  auto cfg = scheduler::parse_scheduler_config(
      volcano_configmap("      hypernode.binpack.cpu: 3\n"
                        "      hypernode.binpack.resources: cpu, nvidia.com/gpu, nvidia.com/gpu\n"
                        "      hypernode.binpack.resources.cpu: 9\n"
                        "      hypernode.binpack.resources.nvidia.com/gpu: \"2\"\n"),
      "cm.yaml");
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message();
  EXPECT_EQ(cfg->binpack.resources.at("cpu"), 3);
  EXPECT_EQ(cfg->binpack.resources.at("nvidia.com/gpu"), 1);
  ASSERT_EQ(cfg->warnings.size(), 3u);
  EXPECT_NE(cfg->warnings[0].find(
                "arguments.hypernode.binpack.resources: cpu is weighted by hypernode.binpack.cpu"),
            std::string::npos)
      << cfg->warnings[0];
  EXPECT_NE(cfg->warnings[1].find(
                "arguments.hypernode.binpack.resources.nvidia.com/gpu: Volcano takes integers only"),
            std::string::npos)
      << cfg->warnings[1];
  EXPECT_NE(cfg->warnings[2].find(
                "arguments.hypernode.binpack.resources.cpu: ignored, as Volcano ignores it: cpu is "
                "weighted by hypernode.binpack.cpu"),
            std::string::npos)
      << cfg->warnings[2];
}

// GetBool takes a YAML bool (yaml.v2: true/yes/on/y... and their false forms) or a string
// strconv.ParseBool accepts; an int 1 is neither and keeps the default.
TEST(VolcanoScorer, NormalPodEnableReadsAsGetBoolDoes) {
  struct Case {
    std::string value;
    bool enabled;
    bool warned;
  };
  const std::vector<Case> cases = {
      {"\"1\"", true, false},    {"\"0\"", false, false}, {"\"t\"", true, false}, {"\"F\"", false, false},
      {"\"TRUE\"", true, false}, {"False", false, false}, {"off", false, false},  {"yes", true, false},
      {"no", false, false},      {"\"no\"", true, true},  {"1", true, true},      {"0", true, true},
      {"a", true, true},         {"2.5", true, true},     {"\"\"", true, true}};
  for (const auto& c : cases) {
    auto cfg = scheduler::parse_scheduler_config(
        volcano_configmap("      hypernode.binpack.normal-pod.enable: " + c.value + "\n"), "cm.yaml");
    ASSERT_TRUE(cfg.has_value()) << c.value << ": " << cfg.error().message();
    EXPECT_EQ(cfg->binpack.normal_pod_enable, c.enabled) << c.value;
    EXPECT_EQ(cfg->warnings.size(), c.warned ? 1u : 0u) << c.value;
  }
  // "0" turns normal-pod binpacking off: the extender then scores every node 0.
  VolcanoWorld w = cpu_busy_and_gpu_busy(1);
  auto scores = w.prioritize(VolcanoWorld::pod("web-0", {{"cpu", "4"}}), {"a1", "b1"},
                             volcano_configmap("      hypernode.binpack.normal-pod.enable: \"0\"\n"));
  EXPECT_EQ(scores["a1"], 0);
  EXPECT_EQ(scores["b1"], 0);
}

// GetInt takes Go ints only (yaml.v2: decimal, 0x, 0o, 0b, 0-prefixed octal, '_' dropped); a float
// or a string keeps the default; a negative weight becomes 1. GetFloat64 takes a float or an int.
TEST(VolcanoScorer, WeightsAreIntegersOnlyAndFadingAnyNumber) {
  struct Case {
    std::string value;
    std::int64_t weight;
    bool warned;
  };
  const std::vector<Case> cases = {{"7", 7, false},
                                   {"0x10", 16, false},
                                   {"010", 8, false},
                                   {"1_000", 1000, false},
                                   {"0", 0, false},
                                   {"-4", 1, false},
                                   {"\"5\"", 1, true},
                                   {"2.5", 1, true},
                                   {"true", 1, true},
                                   {"9223372036854775808", 1, true},
                                   {"2024-01-02", 1, true},
                                   // A long scalar is read without recursing per character.
                                   {std::string(200000, '7'), 1, true},
                                   {"1." + std::string(200000, '5'), 1, true}};
  for (const auto& c : cases) {
    auto cfg = scheduler::parse_scheduler_config(
        volcano_configmap("      weight: " + c.value +
                          "\n      hypernode.binpack.resources.nvidia.com/gpu: " + c.value +
                          "\n      hypernode.binpack.resources: nvidia.com/gpu\n"),
        "cm.yaml");
    ASSERT_TRUE(cfg.has_value()) << c.value << ": " << cfg.error().message();
    EXPECT_EQ(cfg->binpack.weight, c.weight) << c.value;
    EXPECT_EQ(cfg->binpack.resources.at("nvidia.com/gpu"), c.weight) << c.value;
    EXPECT_EQ(cfg->warnings.size(), c.warned ? 2u : 0u) << c.value;
  }
  for (const auto& [value, fading, warned] :
       std::vector<std::tuple<std::string, double, bool>>{{"0.5", 0.5, false},
                                                          {"1", 1.0, false},
                                                          {"0", 0.0, false},
                                                          {"-0.1", 0.8, false},
                                                          {"\"0.5\"", 0.8, true},
                                                          {"high", 0.8, true}}) {
    auto cfg = scheduler::parse_scheduler_config(
        volcano_configmap("      hypernode.binpack.normal-pod.fading: " + value + "\n"), "cm.yaml");
    ASSERT_TRUE(cfg.has_value()) << value << ": " << cfg.error().message();
    EXPECT_DOUBLE_EQ(cfg->binpack.fading, fading) << value;
    EXPECT_EQ(cfg->warnings.size(), warned ? 1u : 0u) << value;
  }
}

}  // namespace
}  // namespace hypertopo::testing
