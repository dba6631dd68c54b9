// `hypertopo extender` and its plan state file, as a process: a state file that does not read is set
// aside (renamed "<file>.corrupt-<time>", logged) and the extender serves without it, instead of
// exiting; the plans are a cache of what the cluster holds. The cluster view comes from the loopback
// API server.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/eventually.h"
#include "tests/support/fixtures.h"

extern char** environ;

namespace hypertopo::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST(ExtenderState, AStateFileThatDoesNotParseIsSetAsideAndTheExtenderServes) {
  LoopbackApiServer api({.bearer_token = "t0ken"});
  ASSERT_TRUE(api.start());
  TempDir dir;
  const fs::path state = dir.path() / "state.json";
  // What a full disk left behind under the old writer: a cut-off file.
  write_text(state,
             "{\"apiVersion\":\"hypertopo.io/v1alpha1\",\"kind\":\"ExtenderState\",\"plans\":[{\"key\":");
  write_text(dir.path() / "kubeconfig",
             "apiVersion: v1\nkind: Config\nclusters:\n- name: loop\n  cluster:\n    server: " + api.url() +
                 "\nusers:\n- name: me\n  user:\n    token: t0ken\ncontexts:\n- name: loop\n"
                 "  context:\n    cluster: loop\n    user: me\ncurrent-context: loop\n");
  write_text(dir.path() / "extender.yaml",
             "apiVersion: hypertopo.io/v1alpha1\nkind: ExtenderConfig\nstateFile: " + state.string() + "\n");
  const char* override_binary = std::getenv("HYPERTOPO_BINARY");
  std::vector<std::string> args{override_binary != nullptr ? override_binary : HT_HYPERTOPO_BINARY,
                                "extender",
                                "--config",
                                (dir.path() / "extender.yaml").string(),
                                "--kubeconfig",
                                (dir.path() / "kubeconfig").string(),
                                "--listen",
                                "127.0.0.1:0"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const fs::path log = dir.path() / "extender.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  bool exited = false;
  const bool serving = eventually(
      [&] {
        if (waitpid(pid, &status, WNOHANG) == pid) exited = true;
        return exited || read_text(log).find(" serving ") != std::string::npos;
      },
      60s, 20ms);
  if (!exited) {
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
  }
  const std::string text = read_text(log);
  EXPECT_TRUE(serving && !exited) << "the extender exited on a state file it could not read:\n" << text;
  EXPECT_NE(text.find("set aside as " + state.string() + ".corrupt-"), std::string::npos) << text;
  std::vector<std::string> kept;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    if (entry.path().filename().string().rfind("state.json.corrupt-", 0) == 0) kept.push_back(entry.path());
  }
  ASSERT_EQ(kept.size(), 1u) << text;
  EXPECT_NE(read_text(kept.front()).find("ExtenderState"), std::string::npos);
}

}  // namespace
}  // namespace hypertopo::testing
