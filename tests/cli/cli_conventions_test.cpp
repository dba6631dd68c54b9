// The conventions a kubectl user expects of the binary, run as a child process as the user runs it:
// the cluster found as kubectl finds it (--kubeconfig, $KUBECONFIG, ~/.kube/config, the service
// account; --context), one contract of exit statuses and error lines over every subcommand
// (cli/command_errors.h: 0 done, 1 no answer, 2 invalid invocation or input, 3 a cluster or fabric
// failed; "hypertopo <command>: error: <what>: <why>"; an unknown flag or subcommand named with the
// closest known one), and times and sizes written as durations and Kubernetes quantities in flags and
// in the agent's YAML, refused in one short line naming the flag or key.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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
  EXPECT_EQ(r.code, 2) << r.out;
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

// `hypertopo version`: the client's version alone where no cluster is found or --client is given;
// with a cluster, the HyperNode API versions its CRD serves (the storage one named) and each Volcano
// API group whose CRDs are installed, read from the API server's CustomResourceDefinitions.
TEST_F(ClusterLookupTest, VersionNamesTheHyperNodeAndVolcanoApisTheClusterServes) {
  auto crd = [](const std::string& group, const std::string& plural, const nlohmann::json& versions) {
    return nlohmann::json{
        {"apiVersion", "apiextensions.k8s.io/v1"},
        {"kind", "CustomResourceDefinition"},
        {"metadata", {{"name", plural + "." + group}}},
        {"spec", {{"group", group}, {"names", {{"plural", plural}}}, {"versions", versions}}}}
        .dump();
  };
  const std::string crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  Result r = hypertopo("version --kubeconfig " + live_.string(), "HOME=" + home_.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("HyperNode API: not installed (no CustomResourceDefinition "
                       "hypernodes.topology.volcano.sh)\nVolcano APIs: none"),
            std::string::npos)
      << r.out;
  for (const auto& body :
       {crd("topology.volcano.sh", "hypernodes",
            {{{"name", "v1alpha1"}, {"served", true}, {"storage", true}},
             {{"name", "v1alpha0"}, {"served", false}}}),
        crd("scheduling.volcano.sh", "podgroups",
            {{{"name", "v1beta1"}, {"served", true}, {"storage", true}}}),
        crd("batch.volcano.sh", "jobs", {{{"name", "v1alpha1"}, {"served", true}, {"storage", true}}}),
        crd("kueue.x-k8s.io", "topologies", {{{"name", "v1beta1"}, {"served", true}, {"storage", true}}})}) {
    ASSERT_EQ(server_.store().handle({.method = "POST", .path = crds, .body = body}).status, 201) << body;
  }
  r = hypertopo("version --kubeconfig " + live_.string(), "HOME=" + home_.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(r.out.starts_with("Client Version: hypertopo ")) << r.out;
  EXPECT_NE(r.out.find("\nHyperNode API: topology.volcano.sh v1alpha1 (storage v1alpha1)\n"
                       "Volcano APIs: batch.volcano.sh v1alpha1, scheduling.volcano.sh v1beta1\n"),
            std::string::npos)
      << r.out;
  const auto json = nlohmann::json::parse(
      hypertopo("version -o json --kubeconfig " + live_.string(), "HOME=" + home_.string()).out, nullptr,
      false);
  ASSERT_FALSE(json.is_discarded());
  EXPECT_EQ(json["server"]["hyperNode"]["served"], nlohmann::json::array({"v1alpha1"}));
  EXPECT_EQ(json["server"]["volcano"]["scheduling.volcano.sh"], nlohmann::json::array({"v1beta1"}));
  EXPECT_FALSE(json["clientVersion"]["version"].get<std::string>().empty());

  // Found as kubectl finds it; --client reads nothing; none found: the client alone, exit 0.
  server_.reset_counts();
  r = hypertopo("version --client", "HOME=" + home_.string() + " KUBECONFIG=" + live_.string());
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.find("HyperNode API"), std::string::npos) << r.out;
  EXPECT_EQ(server_.count("list"), 0);
  r = hypertopo("version", "HOME=" + home_.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "only the client's line: " << r.out;
  // A named cluster that cannot be read ends with the contract's status.
  EXPECT_EQ(hypertopo("version --kubeconfig " + dead_.string()).code, 3);
  EXPECT_EQ(hypertopo("version --kubeconfig /nonexistent/kubeconfig").code, 2);
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
  EXPECT_EQ(r.out, "hypertopo: error: plcae: unknown subcommand (did you mean place?)\n");
  r = hypertopo("stauts");
  EXPECT_NE(r.out.find("stauts: unknown subcommand (did you mean status?)"), std::string::npos) << r.out;
  r = hypertopo("extendr");
  EXPECT_NE(r.out.find("(did you mean extender?)"), std::string::npos) << r.out;
  // Nothing close: no guess.
  r = hypertopo("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "hypertopo: error: frobnicate: unknown subcommand\n");
}

// --- One contract for every subcommand (cli/command_errors.h; docs/commands.md, "Exit status and
// errors") ---------------------------------------------------------------------------------------

// The last line a failed run writes: "hypertopo <command>: error: <what>: <why>", naming `names`.
// Empty when the output has no such line.
std::string error_line(const std::string& out, const std::string& command) {
  std::istringstream lines(out);
  std::string last;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) last = line;
  }
  return last.starts_with("hypertopo " + command + ": error: ") ? last : "";
}

// One row: a subcommand run with one class of bad input, the status it must end with and what its
// error line must name (the flag, file, key or object at fault).
struct ContractCase {
  std::string input_class;
  std::string args;  // begins with the subcommand
  int code;
  std::string names;
};

class ContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start());
    const auto d = dir_.path();
    write_text(d / "bad.json", "{\"kind\": \"List\", \"items\": [");
    write_text(d / "bad.yaml", "sources: [unclosed\n");
    write_text(d / "bad.txt", "Switch 8 \"S-10\" # \"a\"\n[1] \"S-2");  // cut inside a port line
    write_text(d / "live.yaml", kubeconfig_for("live", server_.url()));
    write_text(d / "dead.yaml", kubeconfig_for("dead", server_.url()));
    write_text(d / "agent.yaml", "sources:\n  - kind: demo\n");
    write_text(d / "ufm" / "username", "admin");
    write_text(d / "ufm" / "password", "secret");
    // An extender whose listener is already taken (by the API server stand-in): it fails to bind.
    const std::string port = server_.url().substr(server_.url().rfind(':') + 1);
    write_text(d / "extender.yaml",
               "listen: 127.0.0.1:" + port + "\nstateFile: " + (d / "state.json").string() + "\n");
    write_text(d / "extender-ok.yaml",
               "listen: 127.0.0.1:0\nstateFile: " + (d / "state.json").string() + "\n");
  }
  std::string at(const std::string& name) const { return (dir_.path() / name).string(); }

  LoopbackApiServer server_{{.bearer_token = "t0ken"}};
  TempDir dir_;
};

TEST_F(ContractTest, EverySubcommandEndsEachClassOfBadInputWithItsStatusAndOneErrorLine) {
  const std::string src = HYPERTOPO_SOURCE_DIR;
  const std::string place_files = " --nodes " + src + "/examples/place/nodes.json --topology " + src +
                                  "/examples/place/hypernodes.yaml --job " + src +
                                  "/examples/place/volcano-job.yaml";
  const std::string place_job = " --job " + src + "/examples/place/volcano-job.yaml";
  const std::string sim_files = " --nodes " + src + "/examples/simulate/nodes.json --topology " + src +
                                "/examples/simulate/hypernodes.json";
  const std::string sim_trace = " --trace " + src + "/examples/simulate/jobs.jsonl";
  const std::string missing = "/nonexistent/input.json";
  const std::string no_kubeconfig = "/nonexistent/kubeconfig";
  const std::vector<ContractCase> table = {
      {"unknown flag", "discover --source demo:model --no-such-flag", 2, "--no-such-flag"},
      {"value out of its set", "discover --source demo:model -o table", 2, "--output"},
      {"unknown value", "discover --source nosuch", 2, "source nosuch"},
      {"missing file", "discover --source demo:model --nodes " + missing, 2, missing},
      {"malformed file", "discover --source ibnetdiscover:" + at("bad.txt"), 2, at("bad.txt") + ":2"},
      {"fabric fails",
       "discover --source ufm:http://127.0.0.1:1 --ufm-insecure --ufm-timeout 1s --ufm-credentials " +
           at("ufm"),
       3, "127.0.0.1:1"},

      {"unknown flag", "probe --source ib-local --no-such-flag", 2, "--no-such-flag"},
      {"value out of its set", "probe --source ib-local -o table", 2, "--output"},
      {"missing file", "probe --source lldp --node-name n1 --lldp-json " + missing, 2, missing},
      {"malformed file", "probe --source lldp --node-name n1 --lldp-json " + at("bad.json"), 2,
       at("bad.json")},

      {"unknown flag", "place --no-such-flag" + place_files, 2, "--no-such-flag"},
      {"value out of its set", "place -o table" + place_files, 2, "--output"},
      {"missing file", "place --nodes " + missing + " --topology x --job y", 2, missing},
      {"malformed file",
       "place --nodes " + at("bad.json") + " --topology " + src + "/examples/place/hypernodes.yaml" +
           place_job,
       2, at("bad.json")},
      {"no kubeconfig file", "place --kubeconfig " + no_kubeconfig + place_job, 2,
       "--kubeconfig " + no_kubeconfig},
      {"malformed kubeconfig", "place --kubeconfig " + at("bad.yaml") + place_job, 2, at("bad.yaml")},
      {"cluster fails", "place --kubeconfig " + at("dead.yaml") + place_job, 3,
       "--kubeconfig " + at("dead.yaml")},

      {"unknown flag", "simulate --no-such-flag" + sim_files + sim_trace, 2, "--no-such-flag"},
      {"value out of its set", "simulate -o table" + sim_files + sim_trace, 2, "--output"},
      {"missing file", "simulate --trace " + missing + sim_files, 2, missing},
      {"malformed file", "simulate --trace " + at("bad.json") + sim_files, 2, at("bad.json")},
      {"no kubeconfig file", "simulate --kubeconfig " + no_kubeconfig + sim_trace, 2,
       "--kubeconfig " + no_kubeconfig},
      {"cluster fails", "simulate --kubeconfig " + at("dead.yaml") + sim_trace, 3,
       "--kubeconfig " + at("dead.yaml")},

      {"unknown flag", "status --no-such-flag", 2, "--no-such-flag"},
      {"value out of its set", "status -o table", 2, "--output"},
      {"no kubeconfig file", "status --kubeconfig " + no_kubeconfig, 2, "--kubeconfig " + no_kubeconfig},
      {"malformed kubeconfig", "status --kubeconfig " + at("bad.yaml"), 2, at("bad.yaml")},
      {"no cluster anywhere", "status", 2, "no Kubernetes cluster to talk to"},
      {"cluster fails", "status --kubeconfig " + at("dead.yaml"), 3, "listing nodes"},

      {"unknown flag", "apply --source demo:model --no-such-flag", 2, "--no-such-flag"},
      {"value out of its set", "apply --source demo:model -o table", 2, "--output"},
      {"missing file", "apply --source demo:model --nodes " + missing, 2, missing},
      {"malformed file",
       "apply --source demo:model --kubeconfig " + at("dead.yaml") + " --nodes " + at("bad.json"), 2,
       at("bad.json")},
      {"no kubeconfig file", "apply --source demo:model --kubeconfig " + no_kubeconfig, 2,
       "--kubeconfig " + no_kubeconfig},
      {"cluster fails", "apply --source demo:model --dry-run --kubeconfig " + at("dead.yaml"), 3,
       "listing Nodes"},

      {"unknown flag", "extender --config " + at("extender-ok.yaml") + " --no-such-flag", 2,
       "--no-such-flag"},
      {"value out of its set", "extender --config " + at("extender-ok.yaml") + " --wait soon", 2, "--wait"},
      {"missing file", "extender --config " + missing, 2, missing},
      {"malformed file", "extender --config " + at("bad.yaml"), 2, at("bad.yaml")},
      {"no kubeconfig file", "extender --config " + at("extender-ok.yaml") + " --kubeconfig " + no_kubeconfig,
       2, "--kubeconfig " + no_kubeconfig},
      {"listener fails", "extender --config " + at("extender.yaml") + " --kubeconfig " + at("live.yaml"), 3,
       "127.0.0.1"},

      {"unknown flag", "agent --config " + at("agent.yaml") + " --no-such-flag", 2, "--no-such-flag"},
      {"value out of its set", "agent --config " + at("agent.yaml") + " --role master", 2, "--role"},
      {"missing file", "agent --config " + missing, 2, missing},
      {"malformed file", "agent --config " + at("bad.yaml") + " --check", 2, at("bad.yaml")},
      {"no kubeconfig file",
       "agent --role leader --dry-run --config " + at("agent.yaml") + " --kubeconfig " + no_kubeconfig, 2,
       no_kubeconfig},
      {"cluster fails",
       "agent --role leader --dry-run --config " + at("agent.yaml") + " --kubeconfig " + at("dead.yaml"), 3,
       "127.0.0.1:1"},

      {"unknown flag", "ib-walk --no-such-flag", 2, "--no-such-flag"},
      {"value out of its set", "ib-walk --cache " + at("walk.cache") + " --port 999", 2, "--port"},
      {"nothing to do", "ib-walk", 2, "--cache"},
      {"fabric fails", "ib-walk --cache " + at("walk.cache") + " --ca no_such_hca", 3, "no_such_hca"},

      {"unknown flag", "version --no-such-flag", 2, "--no-such-flag"},
      {"value out of its set", "version -o table", 2, "--output"},
      {"no kubeconfig file", "version --kubeconfig " + no_kubeconfig, 2, no_kubeconfig},
      {"malformed kubeconfig", "version --kubeconfig " + at("bad.yaml"), 2, at("bad.yaml")},
      {"cluster fails", "version --kubeconfig " + at("dead.yaml"), 3, "listing CustomResourceDefinitions"},

      {"unknown flag", "completion bash --no-such-flag", 2, "--no-such-flag"},
      {"value out of its set", "completion fish", 2, "fish"},
      {"missing argument", "completion", 2, "shell"},
  };
  std::set<std::string> covered;
  for (const auto& c : table) {
    const std::string command = c.args.substr(0, c.args.find(' '));
    covered.insert(command);
    const Result r = hypertopo(c.args, "HOME=" + at("home"));
    const std::string line = error_line(r.out, command);
    EXPECT_EQ(r.code, c.code) << command << ", " << c.input_class << ": hypertopo " << c.args << "\n"
                              << r.out;
    EXPECT_NE(line, "") << command << ", " << c.input_class << ": no 'hypertopo " << command
                        << ": error: ' line last\n"
                        << r.out;
    const std::string what_why =
        line.substr(std::min(line.size(), ("hypertopo " + command + ": error: ").size()));
    EXPECT_NE(what_why.find(": "), std::string::npos)
        << command << ", " << c.input_class << ": not <what>: <why>\n"
        << line;
    EXPECT_NE(what_why.find(c.names), std::string::npos)
        << command << ", " << c.input_class << ": does not name " << c.names << "\n"
        << line;
  }
  // Every subcommand --help lists has its rows: a new one cannot skip the contract.
  const Result help = hypertopo("--help");
  const std::string listed = help.out.substr(help.out.find("Subcommands:"));
  std::istringstream lines(listed);
  std::string line;
  std::getline(lines, line);
  std::set<std::string> subcommands;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name;
    if (words >> name) subcommands.insert(name);
  }
  EXPECT_GE(subcommands.size(), 10u) << help.out;
  EXPECT_EQ(covered, subcommands);
}

TEST(Contract, AMisspeltFlagIsNamedWithItsNearestKnownFlag) {
  Result r = hypertopo("discover --sourc demo");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "hypertopo discover: error: --sourc: unknown flag (did you mean --source?)\n");
  // A flag cut short is the one it begins; one given with its value after '=' is still named alone.
  r = hypertopo("discover --source demo --ufm-ti 2s");
  EXPECT_EQ(r.out, "hypertopo discover: error: --ufm-ti: unknown flag (did you mean --ufm-timeout?)\n");
  r = hypertopo("place --job x.yaml --nods=nodes.json");
  EXPECT_EQ(r.out, "hypertopo place: error: --nods: unknown flag (did you mean --nodes?)\n");
  // A short flag; and a value that begins with '-' is the flag's value, not a flag.
  r = hypertopo("status -x");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("hypertopo status: error: -x: unknown flag (did you mean --"), std::string::npos)
      << r.out;
  r = hypertopo("discover --source ibnetdiscover:- --label-prefix -x- --no-such-flag < /dev/null");
  EXPECT_TRUE(r.out.starts_with("hypertopo discover: error: --no-such-flag: unknown flag (did you mean --"))
      << r.out;
  // CLI11's own complaints come in the same shape.
  r = hypertopo("discover");
  EXPECT_EQ(r.out, "hypertopo discover: error: --source: is required\n");
  r = hypertopo("discover --source demo --max-nodes-listed many");
  EXPECT_EQ(r.out, "hypertopo discover: error: --max-nodes-listed: 'many' is not a value it takes\n");
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
  // one reaches the fetch (nothing listens on port 1, so the fabric fails: 3, not 2).
  write_text(dir.path() / "ufm" / "username", "admin");
  write_text(dir.path() / "ufm" / "password", "secret");
  const std::string ufm = "discover --source ufm:http://127.0.0.1:1 --ufm-insecure --ufm-credentials " +
                          (dir.path() / "ufm").string() + " ";
  r = hypertopo(ufm + "--ufm-timeout 2s --ufm-max-bytes 512Mi");
  EXPECT_EQ(r.code, 3) << r.out;
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
