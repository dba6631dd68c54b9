// `hypertopo agent --role node|leader` as the two workloads of deploy/ start it, against the loopback
// API server: the node role publishes its NodeReport and never touches the Lease or a HyperNode; the
// leader role takes the Lease, runs the fabric source and reconciles the HyperNodes, and publishes no
// NodeReport of its own; --check says what each role runs; a role that is not one is refused.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <re2/re2.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "k8s/client/kube_client.h"
#include "k8s/client/kube_config.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/eventually.h"
#include "tests/support/fixtures.h"

extern char** environ;

namespace hypertopo::testing {
namespace {

using namespace std::chrono_literals;

std::uint16_t free_port() {
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

// One HTTP/1.0 GET on 127.0.0.1: the status line and body, "" when nothing answers.
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

std::pair<std::string, int> run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {"", -1};
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

struct Agent {
  pid_t pid = -1;
  std::uint16_t port = 0;
  ~Agent() {
    if (pid > 0) kill(pid, SIGKILL), waitpid(pid, nullptr, 0);
  }
  int stop() {  // SIGTERM, then the exit status (-1: none within 15 s)
    kill(pid, SIGTERM);
    int status = 0;
    const bool exited = eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 15s, 20ms);
    if (!exited) return -1;
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
};

void spawn(Agent& agent, const std::string& role, const std::filesystem::path& config,
           const std::filesystem::path& kubeconfig, const std::string& node,
           const std::filesystem::path& work) {
  agent.port = free_port();
  std::vector<std::string> args = {HT_HYPERTOPO_BINARY,
                                   "agent",
                                   "--role",
                                   role,
                                   "--config",
                                   config.string(),
                                   "--kubeconfig",
                                   kubeconfig.string(),
                                   "--node-name",
                                   node,
                                   "--pod-name",
                                   role + "-" + node,
                                   "--namespace",
                                   "hypertopo-system",
                                   "--work-dir",
                                   work.string(),
                                   "--http-port",
                                   std::to_string(agent.port)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&agent.pid, HT_HYPERTOPO_BINARY, nullptr, nullptr, argv.data(), environ) != 0)
    agent.pid = -1;
}

const std::string kReports = "hypertopo.io/v1alpha1/nodereports";
const std::string kHyperNodes = "topology.volcano.sh/v1alpha1/hypernodes";
const std::string kLeases = "coordination.k8s.io/v1/leases";

class AgentRoleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.set_raw_handler([this](const RawHttpRequest& request) -> std::optional<RawHttpResponse> {
      if (request.target.find("/leases") != std::string::npos) ++lease_requests_;
      return std::nullopt;
    });
    ASSERT_TRUE(server_.start());
    kubeconfig_ = dir_.path() / "kubeconfig";
    write_text(
        kubeconfig_,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: loop\n  cluster:\n    server: " + server_.url() +
            "\nusers:\n- name: me\n  user:\n    token: t0ken\ncontexts:\n- name: loop\n"
            "  context:\n    cluster: loop\n    user: me\ncurrent-context: loop\n");
    // One config for both workloads, as deploy/ mounts it: a node probe and a fabric source.
    config_ = dir_.path() / "config.yaml";
    write_text(config_,
               "hostRoot: " + (dir_.path() / "host").string() +
                   "\nsources:\n  - kind: ib-local\n    interval: 10m\n"
                   "  - kind: demo\n    config: {mode: model}\n    interval: 1h\n"
                   "tierNames: [leaf, spine, core]\n"
                   "leaderElection:\n  leaseDuration: 3s\n  renewDeadline: 2s\n  retryPeriod: 500ms\n"
                   "reconcile:\n  debounce: 100ms\n");
  }
  LoopbackApiServer server_{{.bearer_token = "t0ken"}};
  TempDir dir_;
  std::filesystem::path kubeconfig_, config_;
  std::atomic<int> lease_requests_{0};
};

TEST_F(AgentRoleTest, TheNodeRolePublishesItsReportAndNeverTouchesTheLeaseOrHyperNodes) {
  Agent node;
  spawn(node, "node", config_, kubeconfig_, "gpu-node-1", dir_.path() / "work-node");
  ASSERT_GT(node.pid, 0);
  ASSERT_TRUE(eventually(
      [&] {
        return server_.store()
            .object("hypertopo.io/v1alpha1/nodereports", "hypertopo-system", "gpu-node-1")
            .has_value();
      },
      30s, 20ms));
  ASSERT_TRUE(eventually([&] { return http_get(node.port, "/readyz").find(" 200 ") != std::string::npos; },
                         30s, 20ms));
  const std::string metrics = http_get(node.port, "/metrics");
  EXPECT_EQ(metrics.find("\nhypertopo_leader 1"), std::string::npos) << metrics;
  EXPECT_EQ(node.stop(), 0);
  EXPECT_EQ(lease_requests_.load(), 0) << "the node role asked for the Lease";
  EXPECT_EQ(server_.store().object_count(kLeases), 0u);
  EXPECT_EQ(server_.store().object_count(kHyperNodes), 0u);
  EXPECT_EQ(server_.store().object_count(kReports), 1u);
}

TEST_F(AgentRoleTest, TheLeaderRoleLeadsAndReconcilesAndProbesNoNode) {
  Agent leader;
  spawn(leader, "leader", config_, kubeconfig_, "cpu-node-1", dir_.path() / "work-leader");
  ASSERT_GT(leader.pid, 0);
  // Ready at once: it publishes nothing, so nothing to wait for.
  ASSERT_TRUE(eventually([&] { return http_get(leader.port, "/readyz").find(" 200 ") != std::string::npos; },
                         30s, 20ms));
  ASSERT_TRUE(eventually([&] { return server_.store().object_count(kHyperNodes) == 7; }, 30s, 20ms))
      << http_get(leader.port, "/metrics");
  const std::string metrics = http_get(leader.port, "/metrics");
  EXPECT_NE(metrics.find("\nhypertopo_leader 1"), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("source=\"ib-local\""), std::string::npos) << "the leader ran a node probe:\n"
                                                                    << metrics;
  EXPECT_EQ(server_.store().object_count(kReports), 0u) << "the leader published a NodeReport";

  // Every metric the Grafana dashboard queries is a family the leader exports (a histogram's
  // _bucket, _sum and _count series are its family's).
  std::set<std::string> families;
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("# TYPE ")) families.insert(line.substr(7, line.find(' ', 7) - 7));
  }
  std::ifstream in(std::filesystem::path(HYPERTOPO_SOURCE_DIR) / "deploy" / "components" / "monitoring" /
                   "grafana-dashboard.json");
  ASSERT_TRUE(in);
  const auto dashboard = nlohmann::json::parse(in);
  std::size_t queried = 0;
  for (const auto& panel : dashboard.at("panels")) {
    for (const auto& target : panel.at("targets")) {
      const std::string expr = target.at("expr").get<std::string>();
      static const std::regex kMetric("hypertopo_[a-z0-9_]+");
      for (std::sregex_iterator it(expr.begin(), expr.end(), kMetric), end; it != end; ++it) {
        std::string name = it->str();
        for (const char* suffix : {"_bucket", "_sum", "_count"}) {
          if (!families.contains(name) && name.ends_with(suffix))
            name.resize(name.size() - std::strlen(suffix));
        }
        EXPECT_TRUE(families.contains(name))
            << panel.value("title", "") << ": " << it->str() << " is not exported";
        ++queried;
      }
    }
  }
  EXPECT_GE(queried, 10u);
  EXPECT_EQ(leader.stop(), 0);
  EXPECT_GT(lease_requests_.load(), 0) << "the requests for the Lease are seen";
  auto lease = server_.store().object(kLeases, "hypertopo-system", "hypertopo-agent");
  ASSERT_TRUE(lease);
  EXPECT_EQ((*lease)["spec"].value("holderIdentity", std::string("?")), "") << "released on SIGTERM";
}

TEST_F(AgentRoleTest, CheckSaysWhatEachRoleRunsAndAnUnknownRoleIsRefused) {
  const std::string base = std::string(HT_HYPERTOPO_BINARY) + " agent --config " + config_.string();
  auto [node_out, node_rc] = run(base + " --role node --check 2>&1");
  EXPECT_EQ(node_rc, 0) << node_out;
  EXPECT_NE(node_out.find("role node: node probes: ib-local; leader sources: none\n"), std::string::npos)
      << node_out;
  auto [leader_out, leader_rc] = run(base + " --role leader --check 2>&1");
  EXPECT_EQ(leader_rc, 0) << leader_out;
  EXPECT_NE(leader_out.find("role leader: node probes: none; leader sources: demo\n"), std::string::npos)
      << leader_out;
  auto [all_out, all_rc] = run(base + " --check 2>&1");
  EXPECT_EQ(all_rc, 0) << all_out;
  EXPECT_NE(all_out.find("role all: node probes: ib-local; leader sources: demo\n"), std::string::npos)
      << all_out;
  auto [bad_out, bad_rc] = run(base + " --role master --check 2>&1");
  EXPECT_NE(bad_rc, 0) << bad_out;
  EXPECT_NE(bad_out.find("--role"), std::string::npos) << bad_out;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What the leader would write, from the agent's YAML alone: the HyperNode whose member the fabric
// renamed, field by field, and the tier labels the Nodes lack, printed and not written.
TEST_F(AgentRoleTest, TheLeaderDryRunPrintsEveryWriteItWouldMakeAndMakesNone) {
  HT_REQUIRE_FIXTURE(capture, "ibnetdiscover/topograph-example.out");
  const std::string bin = HT_HYPERTOPO_BINARY;
  // The cluster as the capture made it (an apply with no Nodes listed: no host is filtered).
  auto [applied, applied_rc] = run(bin + " apply --kubeconfig " + kubeconfig_.string() +
                                   " --source ibnetdiscover:" + capture.string() + " 2>&1");
  ASSERT_EQ(applied_rc, 0) << applied;
  ASSERT_EQ(server_.store().object_count(kHyperNodes), 9u);
  // One Node per host of the tree, and the renamed one.
  auto cluster = k8s::load_kubeconfig(kubeconfig_.string(), "");
  ASSERT_TRUE(cluster) << cluster.error().message();
  auto client = k8s::KubeClient::create(*cluster, {.qps = 0});
  ASSERT_TRUE(client);
  std::set<std::string> hosts = {"a08-p1-dgx-04-c17b"};
  for (const auto& hn : server_.store().objects(kHyperNodes)) {
    for (const auto& m : hn["spec"]["members"]) {
      if (m["type"] == "Node") hosts.insert(m["selector"]["exactMatch"]["name"].get<std::string>());
    }
  }
  for (const auto& host : hosts) {
    ASSERT_TRUE((*client)->create(k8s::kNodesResource, "",
                                  {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", host}}}}));
  }
  std::string text = read_file(capture);
  for (std::string::size_type at = 0; (at = text.find("a08-p1-dgx-04-c17 ", at)) != std::string::npos;)
    text.replace(at, 18, "a08-p1-dgx-04-c17b ");
  const auto changed = dir_.path() / "renamed.out";
  write_text(changed, text);
  const auto config = dir_.path() / "leader.yaml";
  write_text(config, "sources:\n  - kind: ibnetdiscover\n    config: {file: " + changed.string() +
                         "}\nexports:\n  nodeLabels: {enabled: true}\n");

  server_.reset_counts();
  const std::size_t log_before = server_.request_log().size();
  const std::string base = bin + " agent --role leader --dry-run --config " + config.string() +
                           " --kubeconfig " + kubeconfig_.string() +
                           " --node-name cpu-node-1 --namespace "
                           "hypertopo-system --work-dir " +
                           (dir_.path() / "work").string();
  const auto err = dir_.path() / "err.txt";
  auto [out, rc] = run(base + " 2>" + err.string());
  ASSERT_EQ(rc, 0) << out << read_file(err);
  EXPECT_NE(read_file(err).find("nothing was written"), std::string::npos) << read_file(err);
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("update HyperNode leaf-", 0), 0u) << out;
  const RE2 member(
      R"(^  spec\.members\[\d+\]\.selector\.exactMatch\.name: "a08-p1-dgx-04-c17" -> "a08-p1-dgx-04-c17b"$)");
  EXPECT_EQ(std::ranges::count_if(lines, [&](const std::string& l) { return RE2::FullMatch(l, member); }), 1)
      << out;
  EXPECT_NE(std::ranges::find(lines, "created=0 updated=1 deleted=0 unchanged=8 held=0"), lines.end()) << out;
  // Every host of the tree lacks its tier labels; the renamed one's are shown with the value it gets.
  const auto node_updates =
      std::ranges::count_if(lines, [](const std::string& l) { return l.starts_with("update Node "); });
  EXPECT_EQ(static_cast<std::size_t>(node_updates), hosts.size() - 1) << out;  // c17 left the fabric
  const auto renamed = std::ranges::find(lines, "update Node a08-p1-dgx-04-c17b");
  ASSERT_NE(renamed, lines.end()) << out;
  ASSERT_NE(renamed + 1, lines.end());
  EXPECT_EQ((renamed + 1)->rfind("  metadata.labels[\"hypertopo.io/tier-1\"]: absent -> \"", 0), 0u)
      << *(renamed + 1);
  EXPECT_NE(std::find_if(renamed, lines.end(),
                         [](const std::string& l) {
                           return l.starts_with(
                               "  metadata.annotations[\"hypertopo.io/exported-labels\"]: absent -> ");
                         }),
            lines.end())
      << out;
  EXPECT_NE(std::ranges::find(
                lines, "node labels: patched=" + std::to_string(hosts.size() - 1) + " unchanged=1 held=0"),
            lines.end())
      << out;

  auto [json_out, json_rc] = run(base + " -o json 2>/dev/null");
  ASSERT_EQ(json_rc, 0) << json_out;
  const auto plan = nlohmann::json::parse(json_out);
  ASSERT_EQ(plan.size(), hosts.size());  // one HyperNode, every Node but c17
  EXPECT_EQ(plan[0]["kind"], "HyperNode");
  EXPECT_EQ(plan[0]["changes"][0]["old"], "a08-p1-dgx-04-c17");
  EXPECT_EQ(plan[1]["kind"], "Node");
  EXPECT_FALSE(plan[1]["changes"][0].contains("old")) << plan[1].dump();

  // Reads only: no create, update, patch or delete; no Lease.
  EXPECT_EQ(server_.writes(), 0);
  const auto log = server_.request_log();
  ASSERT_GT(log.size(), log_before);
  for (std::size_t i = log_before; i < log.size(); ++i)
    EXPECT_TRUE(log[i].verb == "get" || log[i].verb == "list") << log[i].verb << " " << log[i].path;
  EXPECT_EQ(server_.store().object_count(kLeases), 0u);

  // The node role has nothing to plan: refused, as is -o json without --dry-run.
  auto [node_out, node_rc] = run(bin + " agent --role node --dry-run --config " + config.string() + " 2>&1");
  EXPECT_NE(node_rc, 0);
  EXPECT_NE(node_out.find("--dry-run: only with --role leader"), std::string::npos) << node_out;
}

}  // namespace
}  // namespace hypertopo::testing
