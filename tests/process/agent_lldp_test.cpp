// `hypertopo agent` with its lldp probe pointed at a socket that never answers (a wedged lldpd):
// the probe ends within its timeout with one logged error, the NodeReport is published with that
// error among its warnings (so the agent becomes ready and says what is missing), and SIGTERM
// releases the Lease (holderIdentity "") and exits 0 promptly, instead of waiting on liblldpctl.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

TEST(AgentLldp, ASilentLldpdNeverHoldsUpTheAgentAndSigtermReleasesTheLease) {
  LoopbackApiServer api({.bearer_token = "t0ken"});
  ASSERT_TRUE(api.start());
  TempDir dir;
  // Accepts into its backlog and never answers.
  const std::string socket_path = (dir.path() / "lldpd.socket").string();
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 16), 0);

  write_text(dir.path() / "kubeconfig",
             "apiVersion: v1\nkind: Config\nclusters:\n- name: loop\n  cluster:\n    server: " + api.url() +
                 "\nusers:\n- name: me\n  user:\n    token: t0ken\ncontexts:\n- name: loop\n"
                 "  context:\n    cluster: loop\n    user: me\ncurrent-context: loop\n");
  write_text(dir.path() / "config.yaml",
             "sources:\n  - kind: lldp\n    config: {lldpdSocket: " + socket_path +
                 "}\n    interval: 1h\n  - kind: demo\n    config: {mode: model}\n    interval: 1h\n"
                 "leaderElection:\n  leaseDuration: 15s\n  renewDeadline: 10s\n  retryPeriod: 500ms\n");
  const fs::path log = dir.path() / "agent.log";
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
                                "--http-port",
                                std::to_string(port)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  auto holder = [&] {
    auto lease = api.store().object("coordination.k8s.io/v1/leases", "hypertopo-system", "hypertopo-agent");
    return lease ? (*lease)["spec"].value("holderIdentity", std::string("?")) : std::string("(none)");
  };
  const bool leading = eventually([&] { return holder() == "agent-a"; }, 60s, 20ms);
  // The probe has asked the silent socket and given up with one error.
  const bool probe_failed = eventually(
      [&] { return read_text(log).find("no answer within 5000 ms") != std::string::npos; }, 30s, 20ms);

  // The node's report is published without the wedged source, and says what is missing.
  const bool reported = eventually(
      [&] {
        auto report =
            api.store().object("hypertopo.io/v1alpha1/nodereports", "hypertopo-system", "gpu-node-1");
        return report && (*report)["spec"].contains("warnings") &&
               (*report)["spec"]["warnings"].dump().find("no answer within 5000 ms") != std::string::npos;
      },
      30s, 20ms);
  const auto signalled = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  int status = 0;
  const bool exited = eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 20s, 10ms);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  ::close(listener);
  std::printf("[agent-lldp] SIGTERM to exit with a silent lldpd: %.2f s\n", seconds);
  const std::string text = read_text(log);
  ASSERT_TRUE(leading) << text;
  EXPECT_TRUE(probe_failed) << text;
  EXPECT_TRUE(reported) << "the NodeReport does not say that lldp failed";
  EXPECT_TRUE(exited && WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_EQ(holder(), "") << "the Lease was not released on SIGTERM";
  EXPECT_LT(seconds, 10.0) << "SIGTERM waited on the lldp probe";
}

}  // namespace
}  // namespace hypertopo::testing
