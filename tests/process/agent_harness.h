// tests/process/agent_harness.h: `hypertopo agent` as a child process, for the tests of this folder.
//
// Test code only. Starts the agent the way the DaemonSet does (its YAML config, a kubeconfig, a
// port of its own), reads its /metrics and /readyz over loopback HTTP, and kills it when the test
// ends, whatever happened.
//
//   AgentProcess agent({.config = config, .kubeconfig = kubeconfig, .pod = "agent-a", .work = dir / "a"});
//   ASSERT_TRUE(agent.started());
//   ASSERT_TRUE(eventually_here([&] { return agent.leads(); }));
//   EXPECT_EQ(agent.metric("hypertopo_rebuilds_total"), 1);
//   EXPECT_TRUE(agent.terminate());                 // SIGTERM, exit 0
//
// With .log set, its stderr goes to that file (log() reads it); .args are appended to the command line.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/eventually.h"
#include "tests/support/fixtures.h"

extern char** environ;

namespace hypertopo::testing {

// The agent process is polled less often than an in-process loop.
template <typename F>
bool eventually_here(F done, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  return hypertopo::testing::eventually(done, limit, std::chrono::milliseconds(20));
}

inline std::uint16_t free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// One HTTP/1.0 GET on 127.0.0.1: the status line, headers and body; "" when nothing answers.
inline std::string loopback_get(std::uint16_t port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  if (write(fd, request.data(), request.size()) < 0) {
    close(fd);
    return "";
  }
  std::string response;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) response.append(buf, static_cast<std::size_t>(n));
  close(fd);
  return response;
}

// A kubeconfig for `server_url` with a bearer token given inline or as a tokenFile.
inline std::filesystem::path write_agent_kubeconfig(const std::filesystem::path& path,
                                                    const std::string& server_url, const std::string& token,
                                                    const std::filesystem::path& token_file = {}) {
  const std::string user =
      token_file.empty() ? "    token: " + token : "    tokenFile: " + token_file.string();
  write_text(path, "apiVersion: v1\nkind: Config\nclusters:\n- name: loop\n  cluster:\n    server: " +
                       server_url + "\nusers:\n- name: me\n  user:\n" + user +
                       "\ncontexts:\n- name: loop\n  context:\n    cluster: loop\n    user: me\n"
                       "current-context: loop\n");
  return path;
}

struct AgentProcessOptions {
  std::filesystem::path config;
  std::filesystem::path kubeconfig;
  std::string pod = "agent-a";
  std::string node = "gpu-node-1";
  std::filesystem::path work;     // --work-dir
  std::vector<std::string> args;  // more flags, after the harness's own
  std::filesystem::path log;      // stderr goes here when set
};

class AgentProcess {
 public:
  explicit AgentProcess(const AgentProcessOptions& o) : port_(free_loopback_port()) {
    const char* override_binary = std::getenv("HYPERTOPO_BINARY");
    const std::string binary = override_binary != nullptr ? override_binary : HT_HYPERTOPO_BINARY;
    std::vector<std::string> args = {binary,
                                     "agent",
                                     "--config",
                                     o.config,
                                     "--kubeconfig",
                                     o.kubeconfig,
                                     "--node-name",
                                     o.node,
                                     "--pod-name",
                                     o.pod,
                                     "--namespace",
                                     "hypertopo-system",
                                     "--work-dir",
                                     o.work,
                                     "--http-port",
                                     std::to_string(port_),
                                     "--reload-interval",
                                     "0.2"};
    args.insert(args.end(), o.args.begin(), o.args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (!o.log.empty()) {
      posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, o.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                       0600);
    }
    if (posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    log_ = o.log;
  }
  ~AgentProcess() { kill_now(); }
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  std::uint16_t port() const { return port_; }
  std::string get(const std::string& path) const { return loopback_get(port_, path); }
  std::string metrics() const { return get("/metrics"); }
  bool leads() const { return metrics().find("\nhypertopo_leader 1\n") != std::string::npos; }
  bool follows() const { return metrics().find("\nhypertopo_leader 0\n") != std::string::npos; }
  // The value of one series ("name{labels}" as rendered), -1 when absent.
  double metric(const std::string& series) const {
    const std::string text = metrics();
    const auto at = text.find("\n" + series + " ");
    return at == std::string::npos ? -1 : std::strtod(text.c_str() + at + series.size() + 2, nullptr);
  }
  // What it wrote to stderr so far (with .log set).
  std::string log() const {
    return !log_.empty() && std::filesystem::exists(log_) ? read_text(log_) : std::string();
  }
  // The exit status once it exits within `limit` (128 + signal when killed); -1 if still running.
  int wait_exit(std::chrono::milliseconds limit) {
    if (pid_ <= 0) return -1;
    int status = 0;
    if (!eventually_here([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, limit)) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // SIGTERM, then waits for exit 0.
  bool terminate() {
    if (pid_ <= 0 || kill(pid_, SIGTERM) != 0) return false;
    int status = 0;
    const bool exited = eventually_here([&] { return waitpid(pid_, &status, WNOHANG) == pid_; });
    if (!exited) return false;
    pid_ = -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  void kill_now() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  std::uint16_t port_;
  pid_t pid_ = -1;
  std::filesystem::path log_;
};

}  // namespace hypertopo::testing
