// `hypertopo agent --work-dir DIR`: the scratch space is a private directory made inside DIR with
// mkdtemp (mode 0700) and removed at exit; DIR itself, or the target of a symlink given as DIR, keeps
// its mode (--work-dir /tmp must never turn the host's /tmp into 0700).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/process/loopback_port.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/eventually.h"
#include "tests/support/fixtures.h"

extern char** environ;

namespace hypertopo::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// True once something accepts a connection on 127.0.0.1:port.
bool listening(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

std::vector<fs::path> made_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("hypertopo-agent-", 0) == 0) out.push_back(entry.path());
  }
  return out;
}

TEST(AgentWorkDir, AnExistingDirectoryOrALinkIsNeverChmodedAndTheScratchIsAPrivateSubdirectory) {
  LoopbackApiServer api({.bearer_token = "t0ken"});
  ASSERT_TRUE(api.start());
  TempDir dir;
  write_text(dir.path() / "kubeconfig",
             "apiVersion: v1\nkind: Config\nclusters:\n- name: loop\n  cluster:\n    server: " + api.url() +
                 "\nusers:\n- name: me\n  user:\n    token: t0ken\ncontexts:\n- name: loop\n"
                 "  context:\n    cluster: loop\n    user: me\ncurrent-context: loop\n");
  write_text(dir.path() / "config.yaml",
             "sources:\n  - kind: demo\n    config: {mode: model}\n    interval: 1h\n");
  // A shared directory (1777, as /tmp), and a link to another one (0755).
  const fs::path shared = dir.path() / "shared";
  const fs::path target = dir.path() / "target";
  const fs::path link = dir.path() / "link";
  fs::create_directories(shared);
  fs::create_directories(target);
  ::chmod(shared.c_str(), 01777);
  ::chmod(target.c_str(), 0755);
  fs::create_symlink(target, link);

  for (const fs::path& given : {shared, link}) {
    SCOPED_TRACE(given.string());
    const fs::path real = fs::canonical(given);
    const mode_t before = mode_of(real);
    const std::uint16_t port = free_port();
    const char* override_binary = std::getenv("HYPERTOPO_BINARY");
    std::vector<std::string> args{override_binary != nullptr ? override_binary : HT_HYPERTOPO_BINARY,
                                  "agent",
                                  "--config",
                                  (dir.path() / "config.yaml").string(),
                                  "--kubeconfig",
                                  (dir.path() / "kubeconfig").string(),
                                  "--node-name",
                                  "gpu-node-1",
                                  "--pod-name",
                                  "agent-a",
                                  "--namespace",
                                  "hypertopo-system",
                                  "--work-dir",
                                  given.string(),
                                  "--http-port",
                                  std::to_string(port)};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
    const bool serving = eventually([&] { return listening(port); }, 60s, 20ms);
    const mode_t during = mode_of(real);
    const auto made = made_in(real);
    const bool made_private =
        made.size() == 1 && fs::is_directory(fs::symlink_status(made[0])) && mode_of(made[0]) == 0700u;
    kill(pid, serving ? SIGTERM : SIGKILL);
    int status = 0;
    const bool exited = eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 15s, 20ms);
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    ASSERT_TRUE(serving);
    EXPECT_EQ(during, before) << "the agent changed the mode of " << real;
    ASSERT_EQ(made.size(), 1u);
    EXPECT_TRUE(made_private) << made[0] << " was not a directory of mode 0700 while the agent ran";
    EXPECT_TRUE(exited && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_FALSE(fs::exists(fs::symlink_status(made[0]))) << "the scratch directory outlived the agent";
    EXPECT_EQ(mode_of(real), before);
    EXPECT_TRUE(fs::is_symlink(link));
  }
}

}  // namespace
}  // namespace hypertopo::testing
