// A KAI PodGroup whose spec.subGroups form one chain of parents, 20,000 and 100,000 deep, through
// the `hypertopo` binary as a user runs it (a child process, so a crash is seen as the signal that
// ended it, not as this test dying): `place --job` and `simulate --trace` answer exit 2 and one line
// that names the PodGroup and the depth. The 20,000-deep chain (about 1 MB) once ended both commands
// with SIGSEGV in the placer's recursion. Both documents are far below the data file limit
// (io::kDataFileLimit), so the depth bound, not the size bound, is what answers.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/bounded_file.h"
#include "scheduler/placement/job_request.h"
#include "tests/support/fixtures.h"

extern char** environ;

namespace hypertopo::testing {
namespace {

using nlohmann::json;

struct ProcessRun {
  int code = -1;    // exit status, -1 when a signal ended it
  int signal = 0;   // the signal that ended it, 0 when it exited
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the built binary with `args`, its stdout and stderr in files of `dir`.
ProcessRun run_binary(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  const std::string out_path = (dir / "stdout").string(), err_path = (dir / "stderr").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<std::string> all{HT_HYPERTOPO_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  ProcessRun run;
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, HT_HYPERTOPO_BINARY, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    run.err = "posix_spawn failed";
    return run;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) run.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  run.out = read_text(out_path);
  run.err = read_text(err_path);
  return run;
}

// The List `place --job` reads: PodGroup serve/deep with sub-groups g1 .. g<depth>, each the child of
// the one before, and one 1-GPU pod of the deepest. Written as text: a document this size is built
// faster as a string than as a JSON tree.
std::string deep_job(std::size_t depth) {
  std::string groups;
  groups.reserve(depth * 40);
  for (std::size_t i = 1; i <= depth; ++i) {
    groups += i == 1 ? "" : ",";
    groups += "{\"name\":\"g" + std::to_string(i) + "\"";
    if (i > 1) groups += ",\"parent\":\"g" + std::to_string(i - 1) + "\"";
    groups += "}";
  }
  const json pod{
      {"kind", "Pod"},
      {"apiVersion", "v1"},
      {"metadata",
       {{"name", "p0"},
        {"namespace", "serve"},
        {"annotations", {{"pod-group-name", "deep"}}},
        {"labels", {{"kai.scheduler/subgroup-name", "g" + std::to_string(depth)}}}}},
      {"spec",
       {{"containers",
         json::array({{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "1"}}}}}}})}}}};
  return "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"scheduling.run.ai/v2alpha2\","
         "\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"deep\",\"namespace\":\"serve\"},\"spec\":{"
         "\"minMember\":1,"
         "\"subGroups\":[" +
         groups + "]}}," + pod.dump() + "]}";
}

class DeepSubGroupsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    json nodes = json::array();
    for (const char* name : {"n1", "n2"}) {
      nodes.push_back(
          {{"apiVersion", "v1"},
           {"kind", "Node"},
           {"metadata",
            {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}, {"topo/rack", "r1"}}}}},
           {"spec", json::object()},
           {"status",
            {{"allocatable", {{"nvidia.com/gpu", "8"}, {"pods", "110"}}},
             {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
    }
    write_text(path("nodes.json"), json{{"kind", "NodeList"}, {"items", nodes}}.dump());
    write_text(path("topology.json"), json{{"apiVersion", "kai.scheduler/v1alpha1"},
                                           {"kind", "Topology"},
                                           {"metadata", {{"name", "dc"}}},
                                           {"spec", {{"levels", {{{"nodeLabel", "topo/rack"}}}}}}}
                                          .dump());
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }

  ProcessRun place(std::size_t depth) {
    const std::string job = deep_job(depth);
    EXPECT_LT(job.size(), io::kDataFileLimit);
    write_text(path("job.json"), job);
    return run_binary(dir_.path(), {"place", "--nodes", path("nodes.json"), "--topology",
                                    path("topology.json"), "--job", path("job.json")});
  }

  ProcessRun simulate(std::size_t depth) {
    write_text(path("trace.jsonl"),
               "{\"time\":0,\"job\":\"deep\",\"duration\":60,\"arrive\":" + deep_job(depth) + "}\n");
    return run_binary(dir_.path(), {"simulate", "--nodes", path("nodes.json"), "--topology",
                                    path("topology.json"), "--trace", path("trace.jsonl"), "-o", "json"});
  }

  // Exit 2, one line naming the PodGroup and how deep its deepest sub-group sits.
  static void expect_named_depth_error(const ProcessRun& run, std::size_t depth) {
    EXPECT_EQ(run.signal, 0) << "ended by signal " << run.signal << "\n" << run.err.substr(0, 2000);
    EXPECT_EQ(run.code, 2) << run.err.substr(0, 2000);
    EXPECT_NE(run.err.find("PodGroup serve/deep: spec.subGroups nest deeper than " +
                           std::to_string(scheduler::kMaxSubGroupDepth) + " levels: sub-group g" +
                           std::to_string(depth) + " is " + std::to_string(depth) + " levels deep"),
              std::string::npos)
        << run.err.substr(0, 2000);
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err.substr(0, 2000);
    EXPECT_EQ(run.err.find("Sanitizer"), std::string::npos) << run.err.substr(0, 2000);
    EXPECT_TRUE(run.out.empty()) << run.out.substr(0, 2000);
  }

  TempDir dir_;
};

TEST_F(DeepSubGroupsTest, PlaceRefusesATwentyThousandDeepChainByName) {
  expect_named_depth_error(place(20'000), 20'000);
}

TEST_F(DeepSubGroupsTest, PlaceRefusesAHundredThousandDeepChainByName) {
  expect_named_depth_error(place(100'000), 100'000);
}

TEST_F(DeepSubGroupsTest, SimulateRefusesAHundredThousandDeepChainByName) {
  const ProcessRun run = simulate(100'000);
  expect_named_depth_error(run, 100'000);
  EXPECT_NE(run.err.find("trace.jsonl:1"), std::string::npos) << run.err.substr(0, 2000);
}

// HyperNodes nest the same way through members of type HyperNode: h1 (holding n1 and n2) inside h2,
// ... inside h100000, as --topology.
TEST_F(DeepSubGroupsTest, PlaceRefusesAHundredThousandDeepHyperNodeChainByName) {
  constexpr int kDepth = 100'000;
  std::string items;
  for (int i = 1; i <= kDepth; ++i) {
    items += i == 1 ? "" : ",";
    items +=
        "{\"apiVersion\":\"topology.volcano.sh/v1alpha1\",\"kind\":\"HyperNode\",\"metadata\":{\"name\":\"h" +
        std::to_string(i) + "\"},\"spec\":{\"tier\":" + std::to_string(i) + ",\"members\":[";
    items += i == 1 ? "{\"type\":\"Node\",\"selector\":{\"exactMatch\":{\"name\":\"n1\"}}},"
                      "{\"type\":\"Node\",\"selector\":{\"exactMatch\":{\"name\":\"n2\"}}}"
                    : "{\"type\":\"HyperNode\",\"selector\":{\"exactMatch\":{\"name\":\"h" +
                          std::to_string(i - 1) + "\"}}}";
    items += "]}}";
  }
  write_text(path("hypernodes.json"), "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[" + items + "]}");
  write_text(path("job.json"), deep_job(1));
  const ProcessRun run = run_binary(dir_.path(), {"place", "--nodes", path("nodes.json"), "--topology",
                                                  path("hypernodes.json"), "--job", path("job.json")});
  EXPECT_EQ(run.signal, 0) << "ended by signal " << run.signal << "\n" << run.err.substr(0, 2000);
  EXPECT_EQ(run.code, 2) << run.err.substr(0, 2000);
  EXPECT_NE(run.err.find("HyperNode h1 is nested 100000 HyperNodes deep"), std::string::npos)
      << run.err.substr(0, 2000);
  EXPECT_EQ(run.err.find("Sanitizer"), std::string::npos) << run.err.substr(0, 2000);
}

TEST_F(DeepSubGroupsTest, AChainAtTheBoundIsPlaced) {
  const ProcessRun run = place(scheduler::kMaxSubGroupDepth);
  EXPECT_EQ(run.signal, 0);
  ASSERT_EQ(run.code, 0) << run.err;
  const json result = json::parse(run.out);
  EXPECT_TRUE(result["fit"].get<bool>()) << run.out;
}

}  // namespace
}  // namespace hypertopo::testing
