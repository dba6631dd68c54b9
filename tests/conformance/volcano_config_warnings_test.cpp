// The volcano-scheduler ConfigMap's warnings (keys Volcano ignores or reads otherwise) as each
// command that takes it prints them: `simulate --scheduler-config` and the extender's
// `schedulerConfig`, as `place` does (volcano_scorer_test.cpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "scheduler/extender/extender_config.h"
#include "tests/conformance/volcano_world.h"
#include "tests/support/fixtures.h"

namespace hypertopo::testing {
namespace {

using nlohmann::json;

const std::string kArguments =
    "      weight: \"5\"\n"
    "      hypernode.binpack.normal-pod.enable: a\n";

TEST(VolcanoConfigWarnings, SimulatePrintsTheKeysVolcanoIgnores) {
  TempDir dir;
  json node = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", "n1"}, {"labels", {{"kubernetes.io/hostname", "n1"}}}}},
      {"status",
       {{"allocatable", {{"cpu", "8"}, {"memory", "32Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}}},
        {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  json hn = {
      {"apiVersion", "topology.volcano.sh/v1alpha1"},
      {"kind", "HyperNode"},
      {"metadata", {{"name", "leaf"}}},
      {"spec",
       {{"tier", 1}, {"members", {{{"type", "Node"}, {"selector", {{"exactMatch", {{"name", "n1"}}}}}}}}}}};
  write_text(dir.path() / "nodes.json", VolcanoWorld::list("NodeList", {node}).dump());
  write_text(dir.path() / "hn.json", VolcanoWorld::list("HyperNodeList", {hn}).dump());
  const json job = VolcanoWorld::volcano_job("train", 2, {{"nvidia.com/gpu", "2"}});
  write_text(dir.path() / "trace.jsonl",
             json{{"time", 0}, {"job", "train"}, {"duration", 60}, {"arrive", job}}.dump() + "\n");
  write_text(dir.path() / "cm.yaml", volcano_configmap(kArguments));
  auto run = run_captured(
      cli::run_cli, {"simulate", "--nodes", (dir.path() / "nodes.json").string(), "--topology",
                     (dir.path() / "hn.json").string(), "--trace", (dir.path() / "trace.jsonl").string(),
                     "--scheduler-config", (dir.path() / "cm.yaml").string(), "-o", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  for (const char* key : {"arguments.weight:", "arguments.hypernode.binpack.normal-pod.enable:"}) {
    EXPECT_NE(run.err.find(std::string("hypertopo simulate: warning: ")), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(key), std::string::npos) << key << "\n" << run.err;
  }
}

TEST(VolcanoConfigWarnings, TheExtenderPrintsTheKeysVolcanoIgnores) {
  TempDir dir;
  write_text(dir.path() / "cm.yaml", volcano_configmap(kArguments));
  const auto config = dir.path() / "extender.yaml";
  write_text(config, "apiVersion: hypertopo.io/v1alpha1\nkind: ExtenderConfig\nschedulerConfig: " +
                         (dir.path() / "cm.yaml").string() + "\n");
  auto cfg = scheduler::load_extender_config(config);
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message();
  ASSERT_EQ(cfg->warnings.size(), 2u);
  EXPECT_NE(cfg->warnings[0].find("arguments.weight:"), std::string::npos) << cfg->warnings[0];
  EXPECT_NE(cfg->warnings[0].find("extender.yaml"), std::string::npos) << cfg->warnings[0];
  // The command prints them before anything else it checks: here the exposed plain listener it
  // then refuses (exit 2), so the test needs no server.
  auto run = run_captured(cli::run_cli, {"extender", "--config", config.string(), "--listen", "0.0.0.0:0"});
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_NE(run.err.find("hypertopo extender: warning: "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("arguments.hypernode.binpack.normal-pod.enable:"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace hypertopo::testing
