// `hypertopo agent` as a process, the way the DaemonSet runs it, against the loopback API server
// (no Kubernetes API server here): it serves /readyz and /metrics, leads, reconciles, reloads its
// config when the file changes, and on SIGTERM releases the Lease and exits 0. Also measures the
// resident memory of the idle agent. HYPERTOPO_BINARY overrides the binary (e.g. a release build).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "discoverers/ib-fabric/simulated_fabric.h"
#include "tests/process/loopback_port.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/eventually.h"
#include "tests/support/fixtures.h"
#include "tests/support/ibsim/ibsim_fabrics.h"

extern char** environ;

namespace hypertopo::testing {
namespace {

// The agent process is polled less often than an in-process loop.
template <typename F>
bool eventually_polled(F done, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  return hypertopo::testing::eventually(done, limit, std::chrono::milliseconds(20));
}

using namespace std::chrono_literals;

// One HTTP/1.0 GET on 127.0.0.1; "" when nothing answers. Returns the status line and body.
std::string http_get(std::uint16_t port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
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

std::string agent_binary() {
  const char* override_binary = std::getenv("HYPERTOPO_BINARY");
  return override_binary != nullptr ? override_binary : HT_HYPERTOPO_BINARY;
}

// A kubeconfig for the loopback server, with a bearer token.
std::filesystem::path write_kubeconfig(const TempDir& dir, LoopbackApiServer& server) {
  const auto kubeconfig = dir.path() / "kubeconfig";
  write_text(
      kubeconfig,
      "apiVersion: v1\nkind: Config\nclusters:\n- name: loop\n  cluster:\n    server: " + server.url() +
          "\nusers:\n- name: me\n  user:\n    token: t0ken\ncontexts:\n- name: loop\n  context:\n"
          "    cluster: loop\n    user: me\ncurrent-context: loop\n");
  return kubeconfig;
}

// `hypertopo agent` as the DaemonSet starts it; the pid, or -1.
pid_t spawn_agent(const std::filesystem::path& config, const std::filesystem::path& kubeconfig,
                  const std::string& node, const std::string& pod, const std::filesystem::path& work_dir,
                  std::uint16_t port) {
  const std::string binary = agent_binary();
  std::vector<std::string> args = {binary,
                                   "agent",
                                   "--config",
                                   config.string(),
                                   "--kubeconfig",
                                   kubeconfig.string(),
                                   "--node-name",
                                   node,
                                   "--pod-name",
                                   pod,
                                   "--namespace",
                                   "hypertopo-system",
                                   "--work-dir",
                                   work_dir.string(),
                                   "--http-port",
                                   std::to_string(port),
                                   "--reload-interval",
                                   "0.2"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, binary.c_str(), nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

long rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

TEST(AgentProcess, ServesLeadsReloadsAndStopsCleanlyOnSigterm) {
  LoopbackApiServer server({.bearer_token = "t0ken"});
  ASSERT_TRUE(server.start());
  TempDir dir;
  const auto kubeconfig = write_kubeconfig(dir, server);
  const auto config = dir.path() / "config.yaml";
  const std::string base = "hostRoot: " + (dir.path() / "host").string() +
                           "\nsources:\n  - kind: ib-local\n    interval: 10m\n  - kind: demo\n    config: "
                           "{mode: model}\n    interval: 1h\n"
                           "leaderElection:\n  leaseDuration: 3s\n  renewDeadline: 2s\n  retryPeriod: 500ms\n"
                           "reconcile:\n  debounce: 200ms\n";
  write_text(config, base + "tierNames: [leaf, spine, core]\n");

  const std::uint16_t port = free_port();
  pid_t pid = spawn_agent(config, kubeconfig, "gpu-node-1", "agent-a", dir.path() / "work", port);
  ASSERT_GT(pid, 0) << agent_binary();
  auto kill_on_failure = [&] {
    if (pid > 0) kill(pid, SIGKILL);
  };

  const bool ready =
      eventually_polled([&] { return http_get(port, "/readyz").find(" 200 ") != std::string::npos; });
  if (!ready) kill_on_failure();
  ASSERT_TRUE(ready);
  EXPECT_NE(http_get(port, "/healthz").find(" 200 "), std::string::npos);
  ASSERT_TRUE(eventually_polled(
      [&] { return server.store().object_count("topology.volcano.sh/v1alpha1/hypernodes") == 7; }));
  ASSERT_TRUE(eventually_polled(
      [&] { return http_get(port, "/metrics").find("hypertopo_leader 1") != std::string::npos; }));
  const std::string metrics = http_get(port, "/metrics");
  EXPECT_NE(metrics.find("hypertopo_api_writes_total{verb=\"create\",outcome=\"ok\"}"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("hypertopo_last_reconcile_success_timestamp_seconds"), std::string::npos);

  // Idle: reconciled, nothing due for minutes. Its resident memory, for the numbers the deployment
  // sizes from.
  const long rss = rss_kib(pid);
  std::printf("[agent-numbers] idle agent (leader, 7 HyperNodes, %s): VmRSS %.1f MiB\n",
              std::getenv("HYPERTOPO_BINARY") != nullptr ? "HYPERTOPO_BINARY" : "sanitizer build",
              static_cast<double>(rss) / 1024.0);
  EXPECT_GT(rss, 0);

  // The ConfigMap changes: new tier names reach the cluster without a restart. Names come from the
  // tier names, so all 7 HyperNodes are new, and the mass-deletion guard holds the 7 old ones.
  write_text(config, base + "tierNames: [rack, row, hall]\n");
  const bool renamed = eventually_polled([&] {
    return server.store().object_count("topology.volcano.sh/v1alpha1/hypernodes") == 14 &&
           http_get(port, "/metrics").find("\nhypertopo_held_deletions 7\n") != std::string::npos;
  });
  EXPECT_TRUE(renamed) << http_get(port, "/metrics");
  EXPECT_TRUE(server.store().object("topology.volcano.sh/v1alpha1/hypernodes", "", "rack-demo-su01-leaf-r1"));
  EXPECT_TRUE(server.store().object("topology.volcano.sh/v1alpha1/hypernodes", "", "leaf-demo-su01-leaf-r1"));

  // The admin confirms by lifting the guard in the same file: the old ones go.
  write_text(config, base + "tierNames: [rack, row, hall]\nguard:\n  maxDeleteFraction: 1\n");
  const bool cleaned = eventually_polled([&] {
    return server.store().object_count("topology.volcano.sh/v1alpha1/hypernodes") == 7 &&
           http_get(port, "/metrics").find("hypertopo_api_writes_total{verb=\"delete\",outcome=\"ok\"} 7") !=
               std::string::npos;
  });
  EXPECT_TRUE(cleaned) << http_get(port, "/metrics");
  EXPECT_FALSE(
      server.store().object("topology.volcano.sh/v1alpha1/hypernodes", "", "leaf-demo-su01-leaf-r1"));

  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  const bool exited = eventually_polled([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 15s);
  if (!exited) kill_on_failure();
  ASSERT_TRUE(exited) << "no exit within 15 s of SIGTERM";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto lease = server.store().object("coordination.k8s.io/v1/leases", "hypertopo-system", "hypertopo-agent");
  ASSERT_TRUE(lease);
  EXPECT_EQ((*lease)["spec"].value("holderIdentity", std::string("?")), "");
}

TEST(AgentProcess, TwoProcessesOneLeaderAndAKilledLeaderIsReplacedWithinTheLease) {
  LoopbackApiServer server({.bearer_token = "t0ken"});
  ASSERT_TRUE(server.start());
  TempDir dir;
  const auto kubeconfig = write_kubeconfig(dir, server);
  const auto config = dir.path() / "config.yaml";
  write_text(config, "hostRoot: " + (dir.path() / "host").string() +
                         "\nsources:\n  - kind: demo\n    config: {mode: model}\n    interval: 1h\n"
                         "leaderElection:\n  leaseDuration: 3s\n  renewDeadline: 2s\n  retryPeriod: 250ms\n"
                         "reconcile:\n  debounce: 100ms\n");
  const std::uint16_t ports[2] = {free_port(), free_port()};
  pid_t pids[2] = {spawn_agent(config, kubeconfig, "gpu-node-1", "agent-a", dir.path() / "work-a", ports[0]),
                   spawn_agent(config, kubeconfig, "gpu-node-2", "agent-b", dir.path() / "work-b", ports[1])};
  auto kill_all = [&] {
    for (pid_t p : pids) {
      if (p > 0) kill(p, SIGKILL), waitpid(p, nullptr, 0);
    }
  };
  ASSERT_TRUE(pids[0] > 0 && pids[1] > 0);
  auto leads = [&](int i) {
    return http_get(ports[i], "/metrics").find("\nhypertopo_leader 1\n") != std::string::npos;
  };
  const std::string hypernodes = "topology.volcano.sh/v1alpha1/hypernodes";
  const bool synced = eventually_polled(
      [&] { return server.store().object_count(hypernodes) == 7 && (leads(0) || leads(1)); });
  if (!synced) kill_all();
  ASSERT_TRUE(synced);
  // Over several renewals (Lease updates reaching the server) exactly one leads.
  for (int round = 0; round < 5; ++round) {
    EXPECT_NE(leads(0), leads(1)) << "round " << round;
    const int updates = server.count("update");
    ASSERT_TRUE(eventually_polled([&] { return server.count("update") > updates; })) << "round " << round;
  }
  const int leader = leads(0) ? 0 : 1;
  const int other = 1 - leader;
  std::map<std::string, std::string> versions;
  auto snapshot = [&] {
    std::map<std::string, std::string> out;
    for (const auto& o : server.store().objects(hypernodes)) {
      out[o["metadata"]["name"].get<std::string>()] = o["metadata"]["resourceVersion"].get<std::string>();
    }
    return out;
  };
  versions = snapshot();

  // The leader dies without a word (no Lease release): the other takes over once the Lease runs out.
  const auto killed_at = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(pids[leader], SIGKILL), 0);
  waitpid(pids[leader], nullptr, 0);
  pids[leader] = -1;
  const bool took_over = eventually_polled([&] { return leads(other); }, 10s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  std::printf("[agent-numbers] leader SIGKILLed -> the other agent leads after %.2f s (leaseDuration 3 s)\n",
              seconds);
  if (!took_over) kill_all();
  ASSERT_TRUE(took_over);
  EXPECT_LT(seconds, 3.0 + 1.0);  // the lease duration, plus one retry period and polling slack
  // Its first reconcile finds everything in place: nothing written, nothing lost.
  const bool reconciled = eventually_polled([&] {
    return http_get(ports[other], "/metrics").find("hypertopo_last_reconcile_success_timestamp_seconds ") !=
           std::string::npos;
  });
  const std::string metrics = http_get(ports[other], "/metrics");
  EXPECT_TRUE(reconciled) << metrics;
  EXPECT_EQ(metrics.find("verb=\"update\""), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("verb=\"delete\""), std::string::npos) << metrics;
  EXPECT_EQ(snapshot(), versions);
  EXPECT_EQ(server.store().object_count(hypernodes), 7u);

  ASSERT_EQ(kill(pids[other], SIGTERM), 0);
  int status = 0;
  const bool exited =
      eventually_polled([&] { return waitpid(pids[other], &status, WNOHANG) == pids[other]; }, 15s);
  if (!exited) kill_all();
  ASSERT_TRUE(exited);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// Three leaves with two hosts each, each leaf cabled to both spines. Degraded: node-11's own link
// trains at one lane and leaf-3's cable to spine-2 is pulled.
std::string three_leaf_netfile(bool degraded) {
  HealthFabricSpec spec;
  if (degraded) {
    spec.narrow_host_links = {{1, 1}};
    spec.pulled_uplinks = {{3, 2}};
  }
  return health_fabric_netfile(spec);
}

// What `command` printed on stdout, and its exit status.
std::pair<std::string, int> run_output(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {"", -1};
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  return {out, pclose(pipe)};
}

// Fabric health through the agent's YAML alone, on live walks: the agent's ibsim source simulates
// the net file and walks it on every run (interval 1 s). A host link that trained at 1x and a pulled
// uplink show as FabricDegraded on their leaves (the host named in hypertopo.io/degraded-members),
// in /metrics and in the picture; healing the fabric clears each condition with one /status write,
// and runs that find nothing new write nothing.
TEST(AgentProcess, LiveWalksMarkDegradedLeavesAndHealingClearsEachWithOneWrite) {
  namespace ibf = hypertopo::discoverers::ib_fabric;
  HT_REQUIRE(ibf::simulator_missing().empty(), "ibsim: " + ibf::simulator_missing());
  LoopbackApiServer server({.bearer_token = "t0ken"});
  ASSERT_TRUE(server.start());
  TempDir dir;
  const auto kubeconfig = write_kubeconfig(dir, server);
  const auto net = dir.path() / "fabric.net";
  write_text(net, three_leaf_netfile(false));
  const auto config = dir.path() / "config.yaml";
  write_text(config, "hostRoot: " + (dir.path() / "host").string() +
                         "\nsources:\n  - kind: ibsim\n    config: {netFile: " + net.string() +
                         "}\n    interval: 1s\n"
                         "leaderElection:\n  leaseDuration: 3s\n  renewDeadline: 2s\n  retryPeriod: 500ms\n"
                         "reconcile:\n  debounce: 100ms\n");
  const std::uint16_t port = free_port();
  pid_t pid = spawn_agent(config, kubeconfig, "gpu-node-1", "agent-a", dir.path() / "work", port);
  ASSERT_GT(pid, 0) << agent_binary();
  struct Reaper {
    pid_t& pid;
    ~Reaper() {
      if (pid > 0) kill(pid, SIGKILL), waitpid(pid, nullptr, 0);
    }
  } reaper{pid};

  const std::string hypernodes = "topology.volcano.sh/v1alpha1/hypernodes";
  auto object = [&](const std::string& name) {
    auto o = server.store().object(hypernodes, "", name);
    return o ? *o : nlohmann::json();
  };
  auto condition = [&](const std::string& name) {
    const auto o = object(name);
    if (o.contains("status") && o["status"].contains("conditions")) {
      for (const auto& c : o["status"]["conditions"]) {
        if (c.value("type", "") == "FabricDegraded") return c;
      }
    }
    return nlohmann::json();
  };
  auto degraded = [&] {
    std::vector<std::string> out;
    for (const auto& o : server.store().objects(hypernodes)) {
      const std::string name = o["metadata"]["name"];
      if (condition(name).value("status", "") == "True") out.push_back(name);
    }
    return out;
  };
  auto ibsim_runs = [&] {
    const std::string metrics = http_get(port, "/metrics");
    const std::string key = "hypertopo_discovery_runs_total{source=\"ibsim\",outcome=\"ok\"} ";
    const auto at = metrics.find(key);
    return at == std::string::npos ? 0L : std::strtol(metrics.c_str() + at + key.size(), nullptr, 10);
  };
  auto versions = [&] {
    std::map<std::string, std::string> out;
    for (const auto& o : server.store().objects(hypernodes))
      out[o["metadata"]["name"].get<std::string>()] = o["metadata"]["resourceVersion"].get<std::string>();
    return out;
  };

  // A healthy fabric: three leaves and the spine domain, nothing degraded.
  ASSERT_TRUE(eventually_polled([&] {
    return server.store().object_count(hypernodes) == 4 && ibsim_runs() >= 1;
  })) << http_get(port, "/metrics");
  EXPECT_TRUE(degraded().empty());

  // Degraded: the leaves say why, the host is named, the metrics count the links.
  write_text(net, three_leaf_netfile(true));
  ASSERT_TRUE(eventually_polled([&] {
    return condition("leaf-leaf-1").value("reason", "") == "DegradedLinkWidth" &&
           condition("leaf-leaf-3").value("reason", "") == "MissingUplinks";
  })) << object("leaf-leaf-1").dump()
      << object("leaf-leaf-3").dump();
  EXPECT_NE(condition("leaf-leaf-1").value("message", "").find("node-11[1]"), std::string::npos)
      << condition("leaf-leaf-1").dump();
  EXPECT_NE(condition("leaf-leaf-1").value("message", "").find("1x, expected 4x"), std::string::npos)
      << condition("leaf-leaf-1").dump();
  EXPECT_EQ(object("leaf-leaf-1")["metadata"]["annotations"].value("hypertopo.io/degraded-members", ""),
            "node-11");
  EXPECT_EQ(condition("leaf-leaf-2").value("status", "False"), "False");
  ASSERT_TRUE(eventually_polled([&] {
    const std::string m = http_get(port, "/metrics");
    return m.find("hypertopo_domain_degraded{hypernode=\"leaf-leaf-1\"} 1") != std::string::npos &&
           m.find("hypertopo_domain_degraded{hypernode=\"leaf-leaf-3\"} 1") != std::string::npos &&
           m.find("hypertopo_fabric_links{state=\"degraded\"} 1") != std::string::npos &&
           m.find("hypertopo_fabric_links{state=\"missing\"} 1") != std::string::npos;
  })) << http_get(port, "/metrics");
  // The picture of the same fabric draws the degraded leaves in the warning colour.
  const auto [dot, dot_status] =
      run_output(agent_binary() + " discover --source ibsim:" + net.string() + " -o dot 2>/dev/null");
  EXPECT_EQ(dot_status, 0);
  EXPECT_NE(dot.find("leaf-leaf-1"), std::string::npos) << dot;
  EXPECT_NE(dot.find("DegradedLinkWidth"), std::string::npos) << dot;
  EXPECT_NE(dot.find("MissingUplinks"), std::string::npos) << dot;
  EXPECT_NE(dot.find("fillcolor=\"#fdae61\""), std::string::npos) << dot;

  // Healed: each degraded HyperNode's condition flips with one /status write; the host's
  // annotation goes; runs that find the same fabric write nothing.
  const std::vector<std::string> were_degraded = degraded();
  const int patches = server.count("patch");
  write_text(net, three_leaf_netfile(false));
  ASSERT_TRUE(eventually_polled([&] { return degraded().empty(); })) << object("leaf-leaf-1").dump();
  const long runs = ibsim_runs();
  ASSERT_TRUE(eventually_polled([&] { return ibsim_runs() >= runs + 1; }));
  const auto settled = versions();
  const int settled_patches = server.count("patch");
  std::printf("[agent-numbers] healing %zu degraded HyperNode(s) on a live walk: %d /status write(s)\n",
              were_degraded.size(), settled_patches - patches);
  EXPECT_EQ(settled_patches - patches, static_cast<int>(were_degraded.size()));
  EXPECT_EQ(condition("leaf-leaf-1").value("status", ""), "False");
  EXPECT_FALSE(object("leaf-leaf-1")["metadata"]
                   .value("annotations", nlohmann::json::object())
                   .contains("hypertopo.io/degraded-members"));
  ASSERT_TRUE(eventually_polled([&] { return ibsim_runs() >= runs + 3; }));
  EXPECT_EQ(versions(), settled);
  EXPECT_EQ(server.count("patch"), settled_patches);

  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_TRUE(eventually_polled([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 15s));
  pid = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// Without --work-dir the agent's scratch space (where a fabric walk is recorded) is a private
// directory made for the run (mkdtemp, mode 0700) under $TMPDIR: never a fixed name that another
// local user could make first or point elsewhere, as a directory or a symlink at the old names.
// It is gone when the agent stops.
TEST(AgentProcess, WithoutAWorkDirTheScratchSpaceIsPrivateAndRemovedOnExit) {
  namespace fs = std::filesystem;
  LoopbackApiServer server({.bearer_token = "t0ken"});
  ASSERT_TRUE(server.start());
  TempDir dir;
  const auto kubeconfig = write_kubeconfig(dir, server);
  const auto config = dir.path() / "config.yaml";
  write_text(config, "sources:\n  - kind: demo\n    config: {mode: model}\n    interval: 1h\n");
  const fs::path tmp = dir.path() / "tmp";
  fs::create_directories(tmp / "ibnetdisc.ibnd");
  fs::create_directories(dir.path() / "elsewhere");
  fs::create_symlink(dir.path() / "elsewhere", tmp / "hypertopo");

  const std::uint16_t port = free_port();
  const std::string binary = agent_binary();
  std::vector<std::string> args = {binary,         "agent",
                                   "--config",     config.string(),
                                   "--kubeconfig", kubeconfig.string(),
                                   "--node-name",  "gpu-node-1",
                                   "--pod-name",   "agent-a",
                                   "--namespace",  "hypertopo-system",
                                   "--http-port",  std::to_string(port)};
  std::vector<std::string> env = {"TMPDIR=" + tmp.string()};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("TMPDIR=", 0) != 0) env.emplace_back(*e);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, binary.c_str(), nullptr, nullptr, argv.data(), envp.data()), 0) << binary;

  const bool serving = eventually_polled([&] { return !http_get(port, "/healthz").empty(); });
  if (!serving) kill(pid, SIGKILL);
  ASSERT_TRUE(serving);
  std::vector<fs::path> made;
  for (const auto& entry : fs::directory_iterator(tmp)) {
    if (entry.path().filename().string().rfind("hypertopo-agent-", 0) == 0) made.push_back(entry.path());
  }
  ASSERT_EQ(made.size(), 1u);
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(made[0])));
  EXPECT_EQ(fs::status(made[0]).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_TRUE(fs::is_empty(dir.path() / "elsewhere"));

  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  const bool exited = eventually_polled([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 15s);
  if (!exited) kill(pid, SIGKILL);
  ASSERT_TRUE(exited) << "no exit within 15 s of SIGTERM";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_FALSE(fs::exists(fs::symlink_status(made[0])));
  // What was there before is left as it was.
  EXPECT_TRUE(fs::is_directory(tmp / "ibnetdisc.ibnd"));
  EXPECT_TRUE(fs::is_symlink(tmp / "hypertopo"));
}

TEST(AgentProcess, ABadConfigIsOneErrorNamingTheKey) {
  TempDir dir;
  const auto config = dir.path() / "config.yaml";
  write_text(config, "sources:\n  - kind: demo\nguard:\n  maxDeleteFraction: 3\n");
  const std::string binary = HT_HYPERTOPO_BINARY;
  auto run = [&](std::vector<std::string> args) {
    const std::string out = (dir.path() / "err.txt").string();
    std::string command = binary;
    for (const auto& a : args) command += " '" + a + "'";
    command += " 2>" + out;
    const int rc = std::system(command.c_str());
    return std::make_pair(rc, read_text(out));
  };
  auto [rc, err] = run({"agent", "--config", config.string(), "--check"});
  EXPECT_NE(rc, 0);
  EXPECT_NE(err.find("guard.maxDeleteFraction"), std::string::npos) << err;
  EXPECT_NE(err.find("config.yaml"), std::string::npos) << err;

  auto [ok_rc, ok_err] =
      run({"agent", "--config", HYPERTOPO_SOURCE_DIR "/deploy/base/config.yaml", "--check"});
  EXPECT_EQ(ok_rc, 0) << ok_err;
}

}  // namespace
}  // namespace hypertopo::testing
