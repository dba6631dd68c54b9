// The agent with UFM configured from its YAML alone: the in-tree HTTPS UFM stand-in, credentials
// from a mounted directory or from the Secret named by credentials.secretRef (read through the
// Kubernetes API on every run), the CA verified, a rotated password picked up by the next run, and a
// wrong one costing one refused request per run, never a retry storm. Credentials never reach the
// log. A source's warning (TLS verification off) is logged once and counted once, however many runs
// raise it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "agent/config/agent_config.h"
#include "agent/runtime/agent_daemon.h"
#include "k8s/client/kube_config.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/eventually.h"
#include "tests/support/fixtures.h"
#include "tests/support/ufm/fake_ufm_server.h"
#include "tests/support/ufm/ufm_generator.h"

namespace hypertopo::agent {
namespace {

using hypertopo::testing::eventually;

using namespace std::chrono_literals;

double metric(const std::string& text, const std::string& series) {
  const auto at = text.find(series + " ");
  return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size() + 1));
}

TEST(AgentUfm, FromTheYamlAloneWithAMountedSecretAVerifiedCaAndARotatedPassword) {
  testing::TempDir dir;
  testing::FakeUfmServer ufm;
  ufm.set_basic_auth("ufm-admin", "first-Passw0rd");
  auto fabric = testing::generate_ufm_fabric({.pods = 1, .leaves_per_pod = 2, .hosts_per_leaf = 4});
  ufm.set_records("ports", fabric.ports);
  ufm.set_records("links", fabric.links);
  ASSERT_TRUE(ufm.start().has_value());
  testing::write_text(dir.path() / "ufm" / "username", "ufm-admin\n");
  testing::write_text(dir.path() / "ufm" / "password", "first-Passw0rd\n");
  testing::write_text(dir.path() / "ufm-ca" / "ca.crt", ufm.ca_pem());

  testing::LoopbackApiServer api;
  ASSERT_TRUE(api.start().has_value());
  auto cluster = k8s::parse_kubeconfig(
      "apiVersion: v1\nkind: Config\nclusters:\n- name: l\n  cluster:\n    server: " + api.url() +
          "\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: l\n  context:\n"
          "    cluster: l\n    user: u\ncurrent-context: l\n",
      dir.path(), "", "kubeconfig");
  ASSERT_TRUE(cluster) << cluster.error().message();
  auto client = k8s::KubeClient::create(*cluster, {.qps = 0});
  auto election =
      k8s::KubeClient::create(*cluster, {.connect_timeout = 400ms, .request_timeout = 500ms, .qps = 0});
  ASSERT_TRUE(client && election);

  // The config a user writes: no flags, no fragments.
  auto config = parse_agent_config(
      "sources:\n"
      "  - kind: ufm\n"
      "    interval: 2s\n"
      "    config:\n"
      "      endpoint: " +
          ufm.url() +
          "\n"
          "      credentialsDir: " +
          (dir.path() / "ufm").string() +
          "\n"
          "      caFile: " +
          (dir.path() / "ufm-ca" / "ca.crt").string() +
          "\n"
          "reconcile: {debounce: 100ms, resync: 1h}\n"
          "leaderElection: {leaseDuration: 1500ms, renewDeadline: 1000ms, retryPeriod: 200ms}\n",
      "config.yaml");
  ASSERT_TRUE(config) << config.error().message();
  std::mutex mutex;
  std::vector<std::string> lines;
  telemetry::MetricsRegistry metrics;
  AgentDaemon daemon(*config, {"gpu-node-1", "agent-a", "hypertopo-system"},
                     {.client = client->get(),
                      .election_client = election->get(),
                      .metrics = &metrics,
                      .log = [&](telemetry::LogLevel, const std::string& line) {
                        std::lock_guard lock(mutex);
                        lines.push_back(line);
                      }});
  daemon.start();
  ASSERT_TRUE(eventually([&] {
    const auto s = daemon.counters().last_summary;
    return s.starts_with("created=") && !s.starts_with("created=0 ");
  })) << daemon.counters().last_summary;
  const std::string ok = "hypertopo_discovery_runs_total{source=\"ufm\",outcome=\"ok\"}";
  const std::string error = "hypertopo_discovery_runs_total{source=\"ufm\",outcome=\"error\"}";

  // UFM's password is rotated before the mounted Secret follows: each run is refused once (401 is
  // never retried), and the tree stays as it was.
  ufm.set_basic_auth("ufm-admin", "second-Passw0rd");
  ASSERT_TRUE(eventually([&] { return metric(metrics.render(), error) >= 2; }, 10s));
  const int refused_requests = ufm.requests();
  const double refused_runs = metric(metrics.render(), error);
  // The Secret follows: the next run reads the new password from the directory and succeeds.
  const double ok_before = metric(metrics.render(), ok);
  testing::write_text(dir.path() / "ufm" / "password", "second-Passw0rd\n");
  ASSERT_TRUE(eventually([&] { return metric(metrics.render(), ok) > ok_before; }, 10s));
  daemon.stop();

  std::printf(
      "[agent-numbers] UFM from YAML: %g refused run(s), %d UFM request(s) in all; rotation picked up\n",
      refused_runs, refused_requests);
  // One request per refused run at most: no retry storm (each run fetches ports, then links).
  int unauthorized_runs = 0;
  std::lock_guard lock(mutex);
  for (const auto& line : lines) {
    EXPECT_EQ(line.find("Passw0rd"), std::string::npos) << line;
    if (line.find("401") != std::string::npos && line.find("source ufm") != std::string::npos)
      ++unauthorized_runs;
  }
  EXPECT_GE(unauthorized_runs, 2);
  EXPECT_LE(unauthorized_runs, static_cast<int>(refused_runs) + 1);
}

// The agent against a loopback API server, from a YAML config, its log kept for the test.
struct AgentUnderTest {
  testing::TempDir dir;
  testing::LoopbackApiServer api;
  std::unique_ptr<k8s::KubeClient> client, election, admin;
  telemetry::MetricsRegistry metrics;
  std::mutex mutex;
  std::vector<std::string> lines;
  std::unique_ptr<AgentDaemon> daemon;
  std::atomic<int> secret_reads{0};

  std::expected<void, Error> connect() {
    // Counts the agent's reads of the UFM Secret (answers nothing itself).
    api.set_raw_handler([this](const testing::RawHttpRequest& r) -> std::optional<testing::RawHttpResponse> {
      if (r.method == "GET" &&
          r.target.starts_with("/api/v1/namespaces/hypertopo-system/secrets/hypertopo-ufm-credentials"))
        ++secret_reads;
      return std::nullopt;
    });
    if (auto started = api.start(); !started) return started;
    auto cluster = k8s::parse_kubeconfig(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: l\n  cluster:\n    server: " + api.url() +
            "\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: l\n  context:\n"
            "    cluster: l\n    user: u\ncurrent-context: l\n",
        dir.path(), "", "kubeconfig");
    if (!cluster) return std::unexpected(cluster.error());
    auto c = k8s::KubeClient::create(*cluster, {.qps = 0});
    auto e =
        k8s::KubeClient::create(*cluster, {.connect_timeout = 400ms, .request_timeout = 500ms, .qps = 0});
    auto a = k8s::KubeClient::create(*cluster, {.qps = 0});
    if (!c || !e || !a) return fail(ErrorCode::kInternal, "no client");
    client = std::move(*c);
    election = std::move(*e);
    admin = std::move(*a);
    return {};
  }
  std::expected<void, Error> start(const std::string& yaml) {
    auto config = parse_agent_config(yaml, "config.yaml");
    if (!config) return std::unexpected(config.error());
    daemon =
        std::make_unique<AgentDaemon>(*config, AgentIdentity{"gpu-node-1", "agent-a", "hypertopo-system"},
                                      AgentDeps{.client = client.get(),
                                                .election_client = election.get(),
                                                .metrics = &metrics,
                                                .log = [this](telemetry::LogLevel, const std::string& line) {
                                                  std::lock_guard lock(mutex);
                                                  lines.push_back(line);
                                                }});
    daemon->start();
    return {};
  }
  double series(const std::string& name) { return metric(metrics.render(), name); }
  std::vector<std::string> lines_with(const std::string& text) {
    std::lock_guard lock(mutex);
    std::vector<std::string> out;
    for (const auto& l : lines) {
      if (l.find(text) != std::string::npos) out.push_back(l);
    }
    return out;
  }
  ~AgentUnderTest() {
    if (daemon) daemon->stop();
  }
};

std::string base64(const std::string& in) {
  static const char* const kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                       (static_cast<unsigned char>(in[i + 1]) << 8) | static_cast<unsigned char>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    const unsigned v = static_cast<unsigned char>(in[i]) << 16;
    out += std::string{kAlphabet[(v >> 18) & 63], kAlphabet[(v >> 12) & 63]} + "==";
  } else if (i + 2 == in.size()) {
    const unsigned v =
        (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += std::string{kAlphabet[(v >> 18) & 63], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63]} + "=";
  }
  return out;
}

nlohmann::json ufm_secret(const std::string& password) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", {{"name", "hypertopo-ufm-credentials"}, {"namespace", "hypertopo-system"}}},
          {"type", "Opaque"},
          {"data", {{"username", base64("ufm-admin")}, {"password", base64(password)}}}};
}

// Volcano's credentials.secretRef: the Secret lives in the cluster, the agent reads it through the API
// on every run (base RBAC: `get` on that one name), so rotating it there is picked up by the next run.
TEST(AgentUfm, CredentialsFromTheSecretRefReadThroughTheApiOnEveryRunWithARotatedPassword) {
  AgentUnderTest agent;
  ASSERT_TRUE(agent.connect().has_value());
  testing::FakeUfmServer ufm;
  ufm.set_basic_auth("ufm-admin", "first-Secr3t");
  auto fabric = testing::generate_ufm_fabric({.pods = 1, .leaves_per_pod = 2, .hosts_per_leaf = 4});
  ufm.set_records("ports", fabric.ports);
  ufm.set_records("links", fabric.links);
  ASSERT_TRUE(ufm.start().has_value());
  testing::write_text(agent.dir.path() / "ufm-ca" / "ca.crt", ufm.ca_pem());
  auto stored = agent.admin->create(k8s::kSecretsResource, "hypertopo-system", ufm_secret("first-Secr3t"));
  ASSERT_TRUE(stored) << stored.error().error.message();

  auto started = agent.start(
      "sources:\n"
      "  - kind: ufm\n"
      "    interval: 1s\n"
      "    config:\n"
      "      endpoint: " +
      ufm.url() +
      "\n"
      "      credentials: {secretRef: {name: hypertopo-ufm-credentials}}\n"
      "      caFile: " +
      (agent.dir.path() / "ufm-ca" / "ca.crt").string() +
      "\n"
      "reconcile: {debounce: 100ms, resync: 1h}\n"
      "leaderElection: {leaseDuration: 1500ms, renewDeadline: 1000ms, retryPeriod: 200ms}\n");
  ASSERT_TRUE(started) << started.error().message();
  const std::string ok = "hypertopo_discovery_runs_total{source=\"ufm\",outcome=\"ok\"}";
  const std::string error = "hypertopo_discovery_runs_total{source=\"ufm\",outcome=\"error\"}";
  ASSERT_TRUE(eventually([&] {
    const auto s = agent.daemon->counters().last_summary;
    return s.starts_with("created=") && !s.starts_with("created=0 ");
  })) << agent.daemon->counters().last_summary;
  // Every fresh run reads the Secret again.
  ASSERT_TRUE(eventually([&] { return agent.series(ok) >= 2; }, 10s));
  EXPECT_GE(agent.secret_reads.load(), 2);

  // UFM's password changes before the Secret does: each run is refused, the tree stays.
  ufm.set_basic_auth("ufm-admin", "second-Secr3t");
  ASSERT_TRUE(eventually([&] { return agent.series(error) >= 2; }, 10s));
  const double refused_runs = agent.series(error);
  // The admin updates the Secret in the cluster: the next run reads it and succeeds.
  const double ok_before = agent.series(ok);
  const int reads_before = agent.secret_reads.load();
  auto rotated = agent.admin->update_with_retry(k8s::kSecretsResource, "hypertopo-system",
                                                "hypertopo-ufm-credentials", [](nlohmann::json& o) {
                                                  o["data"] = ufm_secret("second-Secr3t")["data"];
                                                  return true;
                                                });
  ASSERT_TRUE(rotated) << rotated.error().error.message();
  ASSERT_TRUE(eventually([&] { return agent.series(ok) > ok_before; }, 10s));
  EXPECT_GT(agent.secret_reads.load(), reads_before);
  agent.daemon->stop();
  std::printf(
      "[agent-numbers] UFM secretRef: %d Secret read(s) through the API, %g refused run(s) before the "
      "rotation reached the Secret, picked up by the next run\n",
      agent.secret_reads.load(), refused_runs);

  // Neither password, nor its base64 form, in any line the agent logged.
  std::lock_guard lock(agent.mutex);
  ASSERT_FALSE(agent.lines.empty());
  const std::vector<std::string> secrets = {"first-Secr3t", "second-Secr3t", base64("first-Secr3t"),
                                            base64("second-Secr3t")};
  for (const auto& line : agent.lines) {
    for (const auto& secret : secrets) EXPECT_EQ(line.find(secret), std::string::npos) << line;
  }
}

// A warning a source raises on every run (here UFM's TLS verification off) reaches the log once and
// hypertopo_source_warnings_total once, however many runs repeat it.
TEST(AgentUfm, ASourceWarningIsLoggedOnceAndCountedOnceOverManyRuns) {
  AgentUnderTest agent;
  ASSERT_TRUE(agent.connect().has_value());
  testing::FakeUfmServer ufm;
  ufm.set_basic_auth("ufm-admin", "pw-Secr3t");
  auto fabric = testing::generate_ufm_fabric({.pods = 1, .leaves_per_pod = 2, .hosts_per_leaf = 4});
  ufm.set_records("ports", fabric.ports);
  ufm.set_records("links", fabric.links);
  ASSERT_TRUE(ufm.start().has_value());
  testing::write_text(agent.dir.path() / "ufm" / "username", "ufm-admin\n");
  testing::write_text(agent.dir.path() / "ufm" / "password", "pw-Secr3t\n");
  auto started = agent.start(
      "sources:\n"
      "  - kind: ufm\n"
      "    interval: 1s\n"
      "    config:\n"
      "      endpoint: " +
      ufm.url() +
      "\n"
      "      credentialsDir: " +
      (agent.dir.path() / "ufm").string() +
      "\n"
      "      insecureSkipVerify: true\n"
      "reconcile: {debounce: 100ms, resync: 1h}\n"
      "leaderElection: {leaseDuration: 1500ms, renewDeadline: 1000ms, retryPeriod: 200ms}\n");
  ASSERT_TRUE(started) << started.error().message();
  constexpr int kRuns = 3;
  const std::string ok = "hypertopo_discovery_runs_total{source=\"ufm\",outcome=\"ok\"}";
  ASSERT_TRUE(eventually([&] { return agent.series(ok) >= kRuns; }, 15s));
  // The rebuild after the last counted run has ended, and with it its warnings' handling.
  const int rebuilds = agent.daemon->counters().rebuilds;
  ASSERT_TRUE(eventually([&] { return agent.daemon->counters().rebuilds > rebuilds; }, 10s));
  agent.daemon->stop();
  const auto logged = agent.lines_with("TLS certificate verification is off");
  const double counted = agent.series("hypertopo_source_warnings_total{source=\"ufm\"}");
  std::printf("[agent-numbers] a source warning over %g UFM runs: %zu log line(s), counted %g\n",
              agent.series(ok), logged.size(), counted);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_TRUE(logged[0].starts_with("ufm: ")) << logged[0];
  EXPECT_EQ(counted, 1);
  EXPECT_EQ(agent.series("hypertopo_source_warnings{source=\"ufm\"}"), 1);
}

}  // namespace
}  // namespace hypertopo::agent
