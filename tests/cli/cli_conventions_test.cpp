// The conventions a kubectl user expects of the binary, run as a child process as the user runs it:
// the cluster found as kubectl finds it (--kubeconfig, $KUBECONFIG, ~/.kube/config, the service
// account; --context), exit status 2 for every invalid invocation with "unknown subcommand" and the
// closest name, and times and sizes written as durations and Kubernetes quantities in flags and in
// the agent's YAML, refused in one short line naming the flag or key.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/fixtures.h"

namespace hypertopo::testing {
namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr
};

// `env` is put before the binary (e.g. "env -u KUBECONFIG HOME=/x"); the environment is otherwise
// this process's, without any kubeconfig or in-cluster variable unless `env` sets one.
Result hypertopo(const std::string& args, const std::string& env = "") {
  const std::string command = "env -u KUBECONFIG -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT " +
                              env + " " + HT_HYPERTOPO_BINARY + " " + args + " 2>&1";
  Result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string kubeconfig_for(const std::string& current, const std::string& live_url) {
  // Two contexts: "live" reaches the loopback server, "dead" a port nothing listens on.
  return "apiVersion: v1\nkind: Config\ncurrent-context: " + current +
         "\nclusters:\n- name: live\n  cluster:\n    server: " + live_url +
         "\n- name: dead\n  cluster:\n    server: http://127.0.0.1:1\n"
         "contexts:\n- name: live\n  context: {cluster: live, user: me}\n"
         "- name: dead\n  context: {cluster: dead, user: me}\n"
         "users:\n- name: me\n  user: {token: t0ken}\n";
}

class ClusterLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start());
    live_ = dir_.path() / "live.yaml";
    dead_ = dir_.path() / "dead.yaml";
    write_text(live_, kubeconfig_for("live", server_.url()));
    write_text(dead_, kubeconfig_for("dead", server_.url()));
    home_ = dir_.path() / "home";
    std::filesystem::create_directories(home_ / ".kube");
  }
  // `status` reached the server: it listed the HyperNodes there.
  bool reached(const Result& r) const { return r.code == 0 && server_.count("list") > 0; }

  LoopbackApiServer server_{{.bearer_token = "t0ken"}};
  TempDir dir_;
  std::filesystem::path live_, dead_, home_;
};

TEST_F(ClusterLookupTest, KubeconfigEnvironmentVariableIsReadWithoutTheFlag) {
  const Result r =
      hypertopo("status", "HOME=" + home_.string() + " KUBECONFIG=/nonexistent:" + live_.string());
  EXPECT_TRUE(reached(r)) << r.out;
}

// kubectl merges every file of $KUBECONFIG (client-go tools/clientcmd/loader.go,
// ClientConfigLoadingRules.Load): here the first file only picks the context, which the third
// defines under another current-context; the first file's current-context wins.
TEST_F(ClusterLookupTest, KubeconfigListIsMergedAsKubectlMergesIt) {
  const auto pick = dir_.path() / "pick.yaml";
  write_text(pick, "apiVersion: v1\nkind: Config\ncurrent-context: live\n");
  const Result r = hypertopo("status", "HOME=" + home_.string() + " KUBECONFIG=" + pick.string() +
                                           ":/nonexistent:" + dead_.string());
  EXPECT_TRUE(reached(r)) << r.out;

  // A file that does not parse fails the lookup, naming it.
  const auto broken = dir_.path() / "broken.yaml";
  write_text(broken, "clusters: [unclosed");
  server_.reset_counts();
  const Result bad =
      hypertopo("status", "HOME=" + home_.string() + " KUBECONFIG=" + live_.string() + ":" + broken.string());
  EXPECT_NE(bad.code, 0) << bad.out;
  EXPECT_NE(bad.out.find(broken.string()), std::string::npos) << bad.out;
  EXPECT_EQ(server_.count("list"), 0) << bad.out;
}

TEST_F(ClusterLookupTest, HomeKubeConfigIsReadWhenNothingElseIsGiven) {
  write_text(home_ / ".kube" / "config", kubeconfig_for("live", server_.url()));
  const Result r = hypertopo("status", "HOME=" + home_.string());
  EXPECT_TRUE(reached(r)) << r.out;
}

TEST_F(ClusterLookupTest, TheFlagWinsOverTheVariableAndTheVariableOverHome) {
  write_text(home_ / ".kube" / "config", kubeconfig_for("dead", server_.url()));
  Result r = hypertopo("status --kubeconfig " + live_.string(),
                       "HOME=" + home_.string() + " KUBECONFIG=" + dead_.string());
  EXPECT_TRUE(reached(r)) << r.out;
  server_.reset_counts();
  r = hypertopo("status", "HOME=" + home_.string() + " KUBECONFIG=" + dead_.string());
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_EQ(server_.count("list"), 0) << "$KUBECONFIG names the dead context: " << r.out;
}

TEST_F(ClusterLookupTest, ContextPicksAnotherContextOfTheFoundKubeconfig) {
  const Result r =
      hypertopo("status --context live", "HOME=" + home_.string() + " KUBECONFIG=" + dead_.string());
  EXPECT_TRUE(reached(r)) << r.out;
  const Result apply = hypertopo("apply --source demo:model --dry-run --context live",
                                 "HOME=" + home_.string() + " KUBECONFIG=" + dead_.string());
  EXPECT_EQ(apply.code, 0) << apply.out;
}

TEST_F(ClusterLookupTest, NoClusterAnywhereSaysWhereItLooked) {
  const Result r = hypertopo("status", "HOME=" + home_.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("no Kubernetes cluster to talk to: pass --kubeconfig; looked at " + home_.string() +
                       "/.kube/config (no file), the service account (not in a pod: $KUBERNETES_SERVICE_HOST "
                       "is unset)"),
            std::string::npos)
      << r.out;
  const Result missing = hypertopo("status --kubeconfig /nonexistent/kubeconfig");
  EXPECT_NE(missing.out.find("--kubeconfig /nonexistent/kubeconfig: no such file"), std::string::npos)
      << missing.out;
  // The extender looks the same way before it binds anything.
  TempDir extender_dir;
  const auto config = extender_dir.path() / "extender.yaml";
  write_text(config,
             "listen: 127.0.0.1:0\nstateFile: " + (extender_dir.path() / "state.json").string() + "\n");
  const Result extender = hypertopo("extender --config " + config.string(), "HOME=" + home_.string());
  EXPECT_EQ(extender.code, 2) << extender.out;
  EXPECT_NE(extender.out.find("no Kubernetes cluster to talk to"), std::string::npos) << extender.out;
}

TEST(UsageErrors, EveryInvalidInvocationExitsTwo) {
  TempDir dir;
  for (const std::string& args :
       {std::string("place --nodes /nonexistent/nodes.json --topology /nonexistent/t.json --job x.yaml"),
        std::string("discover --source demo:model -o table"), std::string("discover --no-such-flag"),
        std::string("discover"), std::string(""), std::string("agent --role master --config /dev/null")}) {
    const Result r = hypertopo(args);
    EXPECT_EQ(r.code, 2) << "hypertopo " << args << "\n" << r.out;
  }
  EXPECT_EQ(hypertopo("--help").code, 0);
  EXPECT_EQ(hypertopo("place --help").code, 0);
  EXPECT_EQ(hypertopo("--version").code, 0);
}

TEST(UsageErrors, AnUnknownSubcommandNamesTheClosestOne) {
  Result r = hypertopo("plcae --nodes n.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("hypertopo: unknown subcommand 'plcae' (did you mean 'place'?)"), std::string::npos)
      << r.out;
  r = hypertopo("stauts");
  EXPECT_NE(r.out.find("unknown subcommand 'stauts' (did you mean 'status'?)"), std::string::npos) << r.out;
  r = hypertopo("extendr");
  EXPECT_NE(r.out.find("(did you mean 'extender'?)"), std::string::npos) << r.out;
  // Nothing close: no guess.
  r = hypertopo("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("unknown subcommand 'frobnicate'\n"), std::string::npos) << r.out;
}

TEST(DurationsAndSizes, FlagsTakeDurationsAndQuantitiesAndRefuseGarbageNamingTheFlag) {
  TempDir dir;
  const auto config = dir.path() / "agent.yaml";
  write_text(config, "sources:\n  - kind: demo\n");
  Result r = hypertopo("agent --config " + config.string() + " --reload-interval 250ms --check");
  EXPECT_EQ(r.code, 0) << r.out;
  r = hypertopo("agent --config " + config.string() + " --reload-interval 1m30s --check");
  EXPECT_EQ(r.code, 0) << r.out;
  r = hypertopo("agent --config " + config.string() + " --reload-interval soon --check");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--reload-interval: 'soon' is not a duration"), std::string::npos) << r.out;

  // The UFM flags parse before anything connects: a bad value is a usage error naming the flag, a good
  // one reaches the fetch (nothing listens on port 1, so that fails with 1, not 2).
  const std::string ufm = "discover --source ufm:http://127.0.0.1:1 --ufm-insecure ";
  r = hypertopo(ufm + "--ufm-timeout 2s --ufm-max-bytes 512Mi");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.find("--ufm-timeout:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--ufm-max-bytes:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("127.0.0.1:1"), std::string::npos) << r.out;
  r = hypertopo(ufm + "--ufm-timeout 30x");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(
      r.out.find("--ufm-timeout: '30x' is not a duration (Go style: 90s, 5m, 1h30m, 500ms; or a number of "
                 "seconds)"),
      std::string::npos)
      << r.out;
  r = hypertopo(ufm + "--ufm-timeout 2h");
  EXPECT_NE(r.out.find("--ufm-timeout: '2h' is not from 1ms to 1h"), std::string::npos) << r.out;
  r = hypertopo(ufm + "--ufm-max-bytes 100Gi");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--ufm-max-bytes: '100Gi' is not from 1 to 64Gi"), std::string::npos) << r.out;
  // 300 digits: refused in one short line, never a 300-digit range.
  r = hypertopo(ufm + "--ufm-max-bytes " + std::string(300, '9'));
  EXPECT_EQ(r.code, 2);
  EXPECT_LT(r.out.size(), 200u) << r.out;
  r = hypertopo(ufm + "--ufm-timeout " + std::string(300, '9'));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--ufm-timeout"), std::string::npos) << r.out;
}

TEST(DurationsAndSizes, TheAgentYamlTakesDurationsAndQuantitiesForUfmTimeoutAndMaxBytes) {
  TempDir dir;
  auto with = [&](const std::string& keys) {
    const auto config = dir.path() / "agent.yaml";
    write_text(config,
               "sources:\n  - kind: ufm\n    config: {endpoint: https://ufm.example, " + keys + "}\n");
    return hypertopo("agent --role leader --config " + config.string() + " --check");
  };
  Result r = with("timeout: 30s, maxBytes: 512Mi");
  EXPECT_EQ(r.code, 0) << r.out;
  r = with("timeout: 2.5, maxBytes: 1000");  // plain seconds and bytes, as before
  EXPECT_EQ(r.code, 0) << r.out;
  r = with("maxBytes: 12XB");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(
      r.out.find("sources[0].config.maxBytes: '12XB' is not a size (bytes, or a quantity: 512Mi, 2Gi, 1G)"),
      std::string::npos)
      << r.out;
  r = with("timeout: 2h");
  EXPECT_NE(r.out.find("sources[0].config.timeout: must be from 1ms to 1h"), std::string::npos) << r.out;
  r = with("timeout: soon");
  EXPECT_NE(r.out.find("sources[0].config.timeout: 'soon' is not a duration"), std::string::npos) << r.out;
  r = with("maxBytes: 100Gi");
  EXPECT_NE(r.out.find("sources[0].config.maxBytes: must be from 1 to 64Gi"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace hypertopo::testing
