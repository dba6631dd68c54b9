// `hypertopo simulate` end to end through the same entry point as the binary, on files written to a
// temporary directory: kubectl-shaped nodes, HyperNodes and a JSON Lines trace.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "tests/support/fixtures.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;
using ::testing::ContainsRegex;

testing::CapturedRun run_simulate(std::vector<std::string> args) {
  return testing::run_captured(run_cli, std::move(args));
}

json simulated_hypernode(const std::string& name, int tier, const std::string& tier_name,
                         const std::string& type, const std::vector<std::string>& members) {
  json m = json::array();
  for (const auto& x : members) m.push_back({{"type", type}, {"selector", {{"exactMatch", {{"name", x}}}}}});
  return {{"apiVersion", "topology.volcano.sh/v1alpha1"},
          {"kind", "HyperNode"},
          {"metadata", {{"name", name}}},
          {"spec", {{"tier", tier}, {"tierName", tier_name}, {"members", m}}}};
}

std::string event(int time, const std::string& id, int duration, int pods, int gpus) {
  json job = {{"kind", "PlacementRequest"},
              {"podSets",
               {{{"name", "w"},
                 {"count", pods},
                 {"requests", {{"nvidia.com/gpu", std::to_string(gpus)}}},
                 {"topology", {{"mode", "required"}, {"level", "leaf"}}}}}}};
  return json{{"time", time}, {"job", id}, {"duration", duration}, {"arrive", job}}.dump() + "\n";
}

class SimulateCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // spine = {leaf-a = {n1, n2}, leaf-b = {n3, n4}}, 8 GPUs per node.
    json nodes = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", json::array()}};
    for (int i = 1; i <= 4; ++i) {
      nodes["items"].push_back({{"metadata", {{"name", "n" + std::to_string(i)}}},
                                {"status",
                                 {{"allocatable", {{"nvidia.com/gpu", "8"}, {"cpu", "64"}, {"pods", "110"}}},
                                  {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
    }
    json hns = {{"apiVersion", "v1"},
                {"kind", "List"},
                {"items",
                 {simulated_hypernode("leaf-a", 1, "leaf", "Node", {"n1", "n2"}),
                  simulated_hypernode("leaf-b", 1, "leaf", "Node", {"n3", "n4"}),
                  simulated_hypernode("spine", 2, "spine", "HyperNode", {"leaf-a", "leaf-b"})}}};
    testing::write_text(path("nodes.json"), nodes.dump());
    testing::write_text(path("hn.json"), hns.dump());
    // The hand-computed scenario of trace_simulator_test: first fit splits j2 over both leaves.
    testing::write_text(path("jobs.jsonl"), event(0, "j1", 100, 1, 4) + event(0, "j2", 100, 2, 8) +
                                                event(0, "j3", 50, 1, 4) + event(10, "j4", 100, 2, 8));
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }
  std::vector<std::string> args(const std::string& trace) const {
    return {"simulate", "--nodes", path("nodes.json"), "--topology", path("hn.json"), "--trace", path(trace)};
  }
  testing::TempDir dir_;
};

TEST_F(SimulateCommandTest, JsonReportsBothPoliciesSideBySide) {
  auto a = args("jobs.jsonl");
  a.insert(a.end(), {"-o", "json"});
  auto r = run_simulate(a);
  ASSERT_EQ(r.code, 0) << r.err;
  auto out = json::parse(r.out);
  EXPECT_EQ(out["cluster"]["gpus"], 32);
  EXPECT_EQ(out["cluster"]["tiers"][1]["name"], "leaf");
  ASSERT_EQ(out["policies"].size(), 2u);
  const json& engine = out["policies"][0];
  const json& ff = out["policies"][1];
  EXPECT_EQ(engine["policy"], "topology-aware");
  EXPECT_EQ(ff["policy"], "first-fit");
  EXPECT_EQ(engine["admitted"], 4);
  EXPECT_EQ(engine["tierSpanMax"], 1);
  EXPECT_EQ(ff["tierSpanMax"], 2);
  EXPECT_DOUBLE_EQ(engine["tierSpanMean"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(ff["tierSpanMean"].get<double>(), 0.75);
  EXPECT_EQ(engine["waitMaxSeconds"], 90);
  EXPECT_DOUBLE_EQ(engine["fragmentation"][1]["largestFreeBlockMean"].get<double>(), 12.0);
  EXPECT_DOUBLE_EQ(ff["fragmentation"][1]["largestFreeBlockMean"].get<double>(), 11.2);
  EXPECT_TRUE(r.err.empty()) << r.err;  // 8 events: below the progress interval
}

TEST_F(SimulateCommandTest, TextIsATableWithOneColumnPerPolicy) {
  auto r = run_simulate(args("jobs.jsonl"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("4 jobs on 4 nodes, 32 nvidia.com/gpu; tiers 1=leaf 2=spine (span 3 = whole cluster)"),
            std::string::npos)
      << r.out;
  // Columns are padded to the widest cell; the figures, not the exact padding, are the contract.
  EXPECT_THAT(r.out, ContainsRegex("\n +topology-aware +first-fit\n"));
  EXPECT_THAT(r.out, ContainsRegex("\ntier span per job mean / max +0\\.50 / 1 +0\\.75 / 2\n"));
  EXPECT_THAT(r.out,
              ContainsRegex("\nlargest free block, tier 1 leaf \\(mean/min\\) +12\\.0 / 8 +11\\.2 / 8\n"));
}

TEST_F(SimulateCommandTest, ProgressGoesToStderr) {
  auto a = args("jobs.jsonl");
  a.insert(a.end(), {"--progress-every", "4"});
  auto r = run_simulate(a);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("simulate [topology-aware]: 4 events"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("simulate [first-fit]: 8 events, t=200s"), std::string::npos) << r.err;
}

TEST_F(SimulateCommandTest, TraceErrorNamesTheLineAndExitsTwo) {
  testing::write_text(path("bad.jsonl"),
                      event(0, "j1", 100, 1, 4) + R"({"time": 3, "job": "j2", "arrive": {}})" + "\n");
  auto r = run_simulate(args("bad.jsonl"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("hypertopo simulate: error: " + path("bad.jsonl") + ":2: duration: is required"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty());
}

// A time or duration near 2^63 would wrap the simulated clock (time + duration overflows int64):
// refused on its line, naming the key.
TEST_F(SimulateCommandTest, ATimeOrDurationThatWouldOverflowTheClockIsRefused) {
  const std::string big = "9223372036854775000";
  testing::write_text(path("late.jsonl"), event(0, "j0", 100, 1, 4) + R"({"time": )" + big +
                                              R"(, "job": "j1", "duration": 1000, "arrive": {}})" + "\n");
  auto late = run_simulate(args("late.jsonl"));
  EXPECT_EQ(late.code, 2);
  EXPECT_NE(late.err.find(path("late.jsonl") + ":2: time: must be at most 1000000000000 seconds"),
            std::string::npos)
      << late.err;
  testing::write_text(path("long.jsonl"),
                      R"({"time": 5, "job": "j1", "duration": )" + big + R"(, "arrive": {}})" + "\n");
  auto long_job = run_simulate(args("long.jsonl"));
  EXPECT_EQ(long_job.code, 2);
  EXPECT_NE(long_job.err.find(path("long.jsonl") + ":1: duration: must be at most"), std::string::npos)
      << long_job.err;
}

TEST_F(SimulateCommandTest, HelpNamesTheFlags) {
  auto r = run_simulate({"simulate", "--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--nodes", "--topology", "--trace", "--pods", "--scheduler-config", "--resource",
                           "--progress-every", "--output"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag << "\n" << r.out;
  }
}

}  // namespace
}  // namespace hypertopo::cli

namespace hypertopo::cli {
namespace {

TEST(SimulatePreemption, TheShippedTraceWithPrioritiesReportsVictimsPerPreemptionBesideFirstFit) {
  // examples/simulate/jobs-priorities.jsonl: the shipped 30-job trace, half of its gangs of 4 pods or
  // more at priority 1000 (generate_cluster.py --priorities).
  const std::vector<std::string> base = {"simulate",
                                         "--nodes",
                                         "examples/simulate/nodes.json",
                                         "--topology",
                                         "examples/simulate/hypernodes.json",
                                         "--trace",
                                         "examples/simulate/jobs-priorities.jsonl"};
  auto json_args = base;
  json_args.insert(json_args.end(), {"-o", "json"});
  auto r = run_simulate(json_args);
  ASSERT_EQ(r.code, 0) << r.err;
  const json out = json::parse(r.out);
  ASSERT_EQ(out["policies"].size(), 2u);
  for (const json& p : out["policies"]) {
    EXPECT_EQ(p["admitted"], 30) << p["policy"];
    EXPECT_GT(p["preemptions"].get<int>(), 0) << p["policy"];
    EXPECT_GE(p["victimPods"].get<int>(), p["preemptions"].get<int>()) << p["policy"];
    EXPECT_GT(p["preemptionGpuHoursLost"].get<double>(), 0.0) << p["policy"];
    // The topology-aware policy's victims of one preemption come from the fewest lowest-tier domains
    // its gang's constraint allows; first fit takes them wherever each pod finds the cheapest.
    EXPECT_GE(p["victimDomainsPerPreemption"].get<double>(), 1.0) << p["policy"];
  }
  auto text = run_simulate(base);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out,
              ContainsRegex("\npreemptions / victim pods / jobs broken +[0-9]+ / [0-9]+ / [0-9]+ +"));
  EXPECT_THAT(text.out, ContainsRegex("\nvictims per preemption / lowest domains +[0-9.]+ / [0-9.]+ +"));
  // The trace without priorities has no preemption rows.
  auto plain = run_simulate({"simulate", "--nodes", "examples/simulate/nodes.json", "--topology",
                             "examples/simulate/hypernodes.json", "--trace", "examples/simulate/jobs.jsonl"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("preemptions"), std::string::npos);
}

}  // namespace
}  // namespace hypertopo::cli

namespace hypertopo::cli {
namespace {

// docs/simulate.md shows what simulate prints on the shipped example: the command runs as written and
// prints exactly that table; the preemption rows quoted for the trace with priorities are rows of its
// table.
TEST(SimulateDoc, TheExamplesShowWhatSimulatePrints) {
  const std::filesystem::path root(HYPERTOPO_SOURCE_DIR);
  const std::string doc = testing::read_text(root / "docs" / "simulate.md");
  const std::string prompt = "$ hypertopo simulate ";
  const std::size_t at = doc.find(prompt);
  ASSERT_NE(at, std::string::npos);
  // The command, its continuation lines joined.
  std::size_t eol = doc.find('\n', at);
  std::string command = doc.substr(at + 2, eol - at - 2);
  while (!command.empty() && command.back() == '\\') {
    command.pop_back();
    const std::size_t next = doc.find('\n', eol + 1);
    command += doc.substr(eol + 1, next - eol - 1);
    eol = next;
  }
  std::istringstream words(command);
  std::vector<std::string> args;
  std::string word;
  words >> word;  // hypertopo
  while (words >> word) args.push_back(word);
  const std::string shown = doc.substr(eol + 1, doc.find("```", eol) - eol - 1);
  auto r = run_simulate(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, shown);

  auto prio = run_simulate({"simulate", "--nodes", "examples/simulate/nodes.json", "--topology",
                            "examples/simulate/hypernodes.json", "--trace",
                            "examples/simulate/jobs-priorities.jsonl"});
  ASSERT_EQ(prio.code, 0) << prio.err;
  const std::string quoted_from = "`generate_cluster.py --priorities`):\n\n```\n";
  const std::size_t q = doc.find(quoted_from);
  ASSERT_NE(q, std::string::npos);
  std::istringstream rows(
      doc.substr(q + quoted_from.size(), doc.find("```", q + quoted_from.size()) - q - quoted_from.size()));
  std::size_t checked = 0;
  for (std::string line; std::getline(rows, line);) {
    EXPECT_NE(prio.out.find(line + "\n"), std::string::npos) << "not printed: " << line << "\n" << prio.out;
    ++checked;
  }
  EXPECT_GE(checked, 4u);
}

}  // namespace
}  // namespace hypertopo::cli
