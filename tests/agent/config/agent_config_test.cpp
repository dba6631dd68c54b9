// The agent's config file: the shipped example, every class of error with the key it names,
// durations, Volcano's discovery list, the environment override, hot-reload diffs, and inline label
// blocks that the registry's labels source really loads.
#include "agent/config/agent_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

#include "discoverers/registry/discoverer.h"
#include "discoverers/ufm/ufm_source.h"
#include "tests/support/fixtures.h"

namespace hypertopo::agent {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;
using namespace std::chrono_literals;

namespace fs = std::filesystem;

constexpr const char* kEnv = "HYPERTOPO_EXPORT_NODE_LABELS";

// Sets (or unsets) an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

AgentConfig parse_ok(const std::string& yaml) {
  auto config = parse_agent_config(yaml, "config.yaml");
  EXPECT_TRUE(config.has_value()) << (config ? "" : config.error().message()) << "\n" << yaml;
  return config ? *config : AgentConfig{};
}

std::string error_of(const std::string& yaml) {
  auto config = parse_agent_config(yaml, "config.yaml");
  EXPECT_FALSE(config.has_value()) << "accepted:\n" << yaml;
  return config ? std::string() : config.error().message();
}

const std::string kOneSource = "sources: [{kind: ib-local}]\n";

TEST(AgentConfig, TheShippedExampleLoads) {
  ScopedEnv env(kEnv, nullptr);
  const fs::path path = fs::path(HYPERTOPO_SOURCE_DIR) / "deploy" / "base" / "config.yaml";
  auto config = load_agent_config(path);
  ASSERT_TRUE(config.has_value()) << config.error().message();
  EXPECT_EQ(config->host_root, "/host");
  ASSERT_EQ(config->sources.size(), 3u);
  EXPECT_EQ(config->sources[0].spec(), "ib-local");
  EXPECT_EQ(config->sources[0].role, SourceRole::kNodeProbe);
  EXPECT_EQ(config->sources[0].interval, 5min);
  EXPECT_EQ(config->sources[1].spec(), "nvlink");
  EXPECT_EQ(config->sources[1].role, SourceRole::kNodeProbe);
  EXPECT_EQ(config->sources[2].spec(), "ibnetdisc");
  EXPECT_EQ(config->sources[2].role, SourceRole::kLeader);
  EXPECT_EQ(config->sources[2].interval, 10min);
  EXPECT_THAT(config->builder.level_names, ElementsAre("leaf", "spine", "core"));
  EXPECT_EQ(config->node_selector, (std::map<std::string, std::string>{{"nvidia.com/gpu.present", "true"}}));
  EXPECT_EQ(config->max_delete_fraction, 0.3);
  EXPECT_EQ(config->min_objects_for_guard, 4);
  EXPECT_EQ(config->lease_name, "hypertopo-agent");
  EXPECT_EQ(config->lease_duration, 15s);
  EXPECT_EQ(config->renew_deadline, 10s);
  EXPECT_EQ(config->retry_period, 2s);
  EXPECT_FALSE(config->export_node_labels);
  EXPECT_EQ(config->node_label_prefix, "hypertopo.io/tier-");
  EXPECT_FALSE(config->topograph_labels);
  EXPECT_EQ(config->http_port, 8080);
  EXPECT_EQ(config->http_address, "127.0.0.1");
  EXPECT_TRUE(check_http_exposure(*config, false, "http.address").has_value());
}

TEST(AgentConfig, DefaultsAndEveryKeySet) {
  const AgentConfig defaults = parse_ok(kOneSource);
  EXPECT_EQ(defaults.host_root, "/");
  EXPECT_EQ(defaults.sources[0].interval, 1h);
  EXPECT_TRUE(defaults.sources[0].enabled);
  EXPECT_EQ(defaults.max_delete_fraction, 0.2);
  EXPECT_EQ(defaults.debounce, 2s);
  EXPECT_EQ(defaults.resync, 10min);
  EXPECT_EQ(defaults.log_level, "info");
  EXPECT_EQ(defaults.builder.source, "hypertopo");
  EXPECT_EQ(defaults.api_qps, 100);
  EXPECT_EQ(defaults.api_burst, 200);
  EXPECT_EQ(defaults.parallel_writes, 8);

  const AgentConfig c = parse_ok(
      "hostRoot: /hostfs\n"
      "sources:\n"
      "  - {kind: lldp, interval: 90}\n"
      "  - {kind: ufm, interval: 1h30m, enabled: false, config: {endpoint: 'https://ufm.example',\n"
      "     insecureSkipVerify: true, credentials: {secretRef: {name: ufm-credentials, namespace: "
      "hypertopo-system}}}}\n"
      "  - {kind: labels, config: {file: /etc/hypertopo/labels.yaml}}\n"
      "source: my-fabric\n"
      "tierNames: [rail, spine]\n"
      "hostDescriptionPattern: '^(\\S+) mlx5_\\d+$'\n"
      "excludedDevicePatterns: ['mlx5_(8|9)']\n"
      "excludedSwitchPatterns: [STORAGE]\n"
      "guidMap: {'0xe09d7303007a4bd8': dgx-001}\n"
      "nodeSelector: {matchLabels: {pool: gpu}}\n"
      "guard: {maxDeleteFraction: 0, minObjectsForGuard: 10}\n"
      "leaderElection: {leaseName: my-lease, leaseDuration: 60s, renewDeadline: 40s, retryPeriod: 500ms}\n"
      "reconcile: {debounce: 0, resync: 1h}\n"
      "exports: {nodeLabels: {enabled: true, keyPrefix: example.com/, topographCompatible: true}}\n"
      "http: {port: 9090}\n"
      "logLevel: debug\n"
      "apiClient: {qps: 30.5, burst: 60, parallelWrites: 2}\n");
  EXPECT_EQ(c.host_root, "/hostfs");
  ASSERT_EQ(c.sources.size(), 3u);
  EXPECT_EQ(c.sources[0].role, SourceRole::kNodeProbe);
  EXPECT_EQ(c.sources[0].interval, 90s);
  const SourceConfig& ufm = c.sources[1];
  EXPECT_EQ(ufm.spec(), "ufm:https://ufm.example");
  EXPECT_EQ(ufm.role, SourceRole::kLeader);
  EXPECT_EQ(ufm.interval, 90min);
  EXPECT_FALSE(ufm.enabled);
  const auto& ufm_settings = static_cast<const discoverers::ufm::UfmSourceConfig&>(*ufm.settings);
  EXPECT_TRUE(ufm_settings.insecure);
  EXPECT_EQ(ufm_settings.secret_name, "ufm-credentials");
  EXPECT_EQ(ufm_settings.secret_namespace, "hypertopo-system");
  EXPECT_EQ(c.sources[2].spec(), "labels:/etc/hypertopo/labels.yaml");
  EXPECT_EQ(c.builder.source, "my-fabric");
  EXPECT_THAT(c.builder.level_names, ElementsAre("rail", "spine"));
  EXPECT_EQ(c.builder.host_description_pattern, "^(\\S+) mlx5_\\d+$");
  EXPECT_THAT(c.builder.excluded_device_patterns, ElementsAre("mlx5_(8|9)"));
  EXPECT_THAT(c.builder.excluded_switch_patterns, ElementsAre("STORAGE"));
  ASSERT_EQ(c.builder.node_by_endpoint.size(), 1u);
  EXPECT_EQ(c.builder.node_by_endpoint.begin()->second, "dgx-001");
  EXPECT_EQ(c.node_selector.at("pool"), "gpu");
  EXPECT_EQ(c.max_delete_fraction, 0);
  EXPECT_EQ(c.min_objects_for_guard, 10);
  EXPECT_EQ(c.lease_name, "my-lease");
  EXPECT_EQ(c.lease_duration, 60s);
  EXPECT_EQ(c.renew_deadline, 40s);
  EXPECT_EQ(c.retry_period, 500ms);
  EXPECT_EQ(c.debounce, 0ms);
  EXPECT_EQ(c.resync, 1h);
  EXPECT_TRUE(c.export_node_labels);
  EXPECT_EQ(c.node_label_prefix, "example.com/");
  EXPECT_TRUE(c.topograph_labels);
  EXPECT_EQ(c.http_port, 9090);
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.api_qps, 30.5);
  EXPECT_EQ(c.api_burst, 60);
  EXPECT_EQ(c.parallel_writes, 2);
}

struct ErrorCase {
  std::string yaml;
  std::string message;  // the whole message
};

TEST(AgentConfig, EveryErrorNamesTheFileAndKey) {
  const std::string kinds =
      "(known: node probes ib-local, lldp, nvlink; leader sources demo, ibnetdisc, ibnetdisc-cache, "
      "ibnetdiscover, ibsim, labels, netq, netq-file, reports, roce, ufm)";
  const std::vector<ErrorCase> cases = {
      // Top level and sources.
      {"- a\n", "config.yaml: expected a mapping at the top level"},
      {"tierNames: [leaf]\n", "config.yaml: sources: is required (or Volcano's networkTopologyDiscovery)"},
      {"sources: {kind: ib-local}\n", "config.yaml: sources: must be a list of sources"},
      {"sources: []\n", "config.yaml: sources: lists no source"},
      {kOneSource + "networkTopologyDiscovery: [{source: roce}]\n",
       "config.yaml: networkTopologyDiscovery: give either sources or networkTopologyDiscovery, not both"},
      {"sources: [{kind: ib-local}, {kind: nvlink}, {kind: ibfabric}]\n",
       "config.yaml: sources[2].kind: unknown source 'ibfabric' " + kinds},
      {"sources: [{interval: 5m}]\n", "config.yaml: sources[0].kind: is required"},
      {"sources: [ib-local]\n", "config.yaml: sources[0]: must be a mapping with kind"},
      {"sources: [{kind: ib-local, intervall: 5m}]\n",
       "config.yaml: sources[0].intervall: unknown key (known: kind, interval, deadline, enabled, config)"},
      {"sources: [{kind: ib-local, interval: 0s}]\n",
       "config.yaml: sources[0].interval: must be greater than 0"},
      {"sources: [{kind: ib-local, interval: 1500ms}]\n",
       "config.yaml: sources[0].interval: must be a whole number of seconds"},
      {"sources: [{kind: ib-local, interval: soon}]\n",
       "config.yaml: sources[0].interval: 'soon' is not a duration (Go style: 90s, 5m, 1h30m, 500ms; or a "
       "number "
       "of seconds)"},
      {"sources: [{kind: ib-local, interval: [5m]}]\n",
       "config.yaml: sources[0].interval: must be a duration (Go style: 90s, 5m, 1h30m, 500ms; or seconds)"},
      {"sources: [{kind: ib-local, enabled: maybe}]\n",
       "config.yaml: sources[0].enabled: must be true or false"},
      {"sources: [{kind: ib-local, config: {arg: x}}]\n",
       "config.yaml: sources[0].config.arg: unknown key (known: none)"},
      {"sources: [{kind: ib-local}, {kind: ib-local}]\n",
       "config.yaml: sources[1]: the same source as sources[0] (ib-local)"},
      {"sources: [{kind: ufm, config: {endpoint: 'https://u', credentials: {secretRef: {namespace: x}}}}]\n",
       "config.yaml: sources[0].config.credentials.secretRef.name: is required"},
      {"sources: [{kind: ufm}]\n", "config.yaml: sources[0].config.endpoint: is required"},
      {"sources: [{kind: ufm, config: {endpoint: 'https://u', caFile: [x]}}]\n",
       "config.yaml: sources[0].config.caFile: must be a string"},
      {"sources: [{kind: labels}]\n",
       "config.yaml: sources[0].config: a labels source needs file (a config file) or networkTopologyTypes "
       "(inline)"},
      {"sources: [{kind: labels, config: {file: l.yaml, networkTopologyTypes: {a: []}}}]\n",
       "config.yaml: sources[0].config.networkTopologyTypes: give either file or networkTopologyTypes, not "
       "both"},
      {"sources: [{kind: labels, config: {types: {}}}]\n",
       "config.yaml: sources[0].config.types: unknown key (known: file, networkTopologyTypes, preset)"},
      {"sources: [{kind: ibsim, config: {netFile: x.net, networkTopologyTypes: {a: []}}}]\n",
       "config.yaml: sources[0].config.networkTopologyTypes: unknown key (known: netFile)"},
      {"sources: [{kind: ibnetdisc, config: {port: 1}}]\n",
       "config.yaml: sources[0].config: port needs a ca"},
      // Builder keys: the builder's own parser and messages.
      {kOneSource + "tierNames: leaf\n", "config.yaml: tierNames: must be a list of strings"},
      {kOneSource + "tierNames: [leaf, [spine]]\n", "config.yaml: tierNames[1]: must be a string"},
      {kOneSource + "guidMap: {nope: dgx-001}\n", "config.yaml: guidMap.nope: not a GUID"},
      {kOneSource + "source: ''\n", "config.yaml: source: must not be empty"},
      // The other sections.
      {kOneSource + "colour: red\n",
       "config.yaml: colour: unknown key (known: apiClient, appliancePatterns, excludedDevicePatterns, "
       "excludedSwitchPatterns, exports, firmwareDescriptionPatterns, guard, guidMap, "
       "hostDescriptionPattern, "
       "hostRoot, http, keepHosts, leaderElection, logLevel, networkTopologyDiscovery, nodeSelector, "
       "reconcile, source, sources, tierNames)"},
      {kOneSource + "hostRoot: ''\n", "config.yaml: hostRoot: must not be empty"},
      {kOneSource + "nodeSelector: {matchExpressions: []}\n",
       "config.yaml: nodeSelector.matchExpressions: unknown key (known: matchLabels)"},
      {kOneSource + "nodeSelector: {matchLabels: {pool: [gpu]}}\n",
       "config.yaml: nodeSelector.matchLabels.pool: must be a string"},
      {kOneSource + "guard: {maxDeleteFraction: 1.5}\n",
       "config.yaml: guard.maxDeleteFraction: must be a number in [0, 1]"},
      {kOneSource + "guard: {maxDeleteFraction: lots}\n",
       "config.yaml: guard.maxDeleteFraction: must be a number in [0, 1]"},
      {kOneSource + "guard: {minObjectsForGuard: 2.5}\n",
       "config.yaml: guard.minObjectsForGuard: must be an integer in [0, 1000000]"},
      {kOneSource + "guard: 0.2\n", "config.yaml: guard: must be a mapping"},
      {kOneSource + "leaderElection: {leaseName: Bad_Name}\n",
       "config.yaml: leaderElection.leaseName: 'Bad_Name' is not a valid object name (DNS-1123 subdomain)"},
      // Each dot-separated label starts and ends with a letter or digit, as the API server checks.
      {kOneSource + "leaderElection: {leaseName: a.-b}\n",
       "config.yaml: leaderElection.leaseName: 'a.-b' is not a valid object name (DNS-1123 subdomain)"},
      {kOneSource + "leaderElection: {leaseName: a..b}\n",
       "config.yaml: leaderElection.leaseName: 'a..b' is not a valid object name (DNS-1123 subdomain)"},
      {kOneSource + "leaderElection: {leaseDuration: -15s}\n",
       "config.yaml: leaderElection.leaseDuration: '-15s' is negative"},
      {kOneSource + "leaderElection: {retryPeriod: 0s}\n",
       "config.yaml: leaderElection.retryPeriod: must be greater than 0"},
      {kOneSource + "leaderElection: {renewDeadline: 15s}\n",
       "config.yaml: leaderElection.renewDeadline: must be shorter than leaseDuration"},
      {kOneSource + "leaderElection: {retryPeriod: 9s}\n",
       "config.yaml: leaderElection.retryPeriod: must be shorter than renewDeadline / 1.2 (client-go's "
       "jitter)"},
      {kOneSource + "reconcile: {resync: 0}\n", "config.yaml: reconcile.resync: must be greater than 0"},
      {kOneSource + "reconcile: {debounce: 2 seconds}\n",
       "config.yaml: reconcile.debounce: '2 seconds' is not a duration (Go style: 90s, 5m, 1h30m, 500ms; or "
       "a "
       "number of seconds)"},
      {kOneSource + "exports: {nodeLabels: {enabled: 3}}\n",
       "config.yaml: exports.nodeLabels.enabled: must be true or false"},
      {kOneSource + "exports: {nodeLabels: {keyPrefix: Example.com/tier-}}\n",
       "config.yaml: exports.nodeLabels.keyPrefix: 'Example.com/tier-' cannot start a label key (e.g. "
       "hypertopo.io/tier-)"},
      {kOneSource + "exports: {nodeLabel: {enabled: true}}\n",
       "config.yaml: exports.nodeLabel: unknown key (known: nodeLabels)"},
      {kOneSource + "http: {port: 70000}\n", "config.yaml: http.port: must be an integer in [1, 65535]"},
      {kOneSource + "http: {port: eighty}\n", "config.yaml: http.port: must be an integer in [1, 65535]"},
      {kOneSource + "http: {address: localhost}\n",
       "config.yaml: http.address: 'localhost' is not an IPv4 or IPv6 address (127.0.0.1, the pod's IP; no "
       "host name, no brackets, no port)"},
      {kOneSource + "http: {address: '[::1]'}\n",
       "config.yaml: http.address: '[::1]' is not an IPv4 or IPv6 address (127.0.0.1, the pod's IP; no "
       "host name, no brackets, no port)"},
      {kOneSource + "http: {address: ''}\n", "config.yaml: http.address: must not be empty"},
      {kOneSource + "http: {adress: 0.0.0.0}\n",
       "config.yaml: http.adress: unknown key (known: address, port, tls)"},
      {kOneSource + "http: {tls: {certFile: /c}}\n",
       "config.yaml: http.tls.keyFile: is required with http.tls.certFile"},
      {kOneSource + "http: {tls: {clientCAFile: /ca}}\n",
       "config.yaml: http.tls.clientCAFile: needs http.tls.certFile and http.tls.keyFile (the server's own "
       "identity)"},
      {kOneSource + "logLevel: verbose\n",
       "config.yaml: logLevel: unknown level 'verbose' (known: trace, debug, info, warn, error)"},
      {kOneSource + "apiClient: {qps: 0}\n", "config.yaml: apiClient.qps: must be greater than 0"},
      {kOneSource + "apiClient: {burst: 0}\n",
       "config.yaml: apiClient.burst: must be an integer in [1, 100000]"},
      {kOneSource + "apiClient: {parallelWrites: 65}\n",
       "config.yaml: apiClient.parallelWrites: must be an integer in [1, 64]"},
      {kOneSource + "apiClient: {qpss: 5}\n",
       "config.yaml: apiClient.qpss: unknown key (known: qps, burst, parallelWrites)"},
      // Volcano's list.
      {"networkTopologyDiscovery: [{source: ufm, config: {endpoint: 'https://u'}}, {source: ibfabric}]\n",
       "config.yaml: networkTopologyDiscovery[1].source: unknown source 'ibfabric' (known: label, roce, "
       "ufm)"},
      {"networkTopologyDiscovery: [{enabled: true}]\n",
       "config.yaml: networkTopologyDiscovery[0].source: is required"},
      {"networkTopologyDiscovery: [{source: ufm, config: {insecureSkipVerify: true}}]\n",
       "config.yaml: networkTopologyDiscovery[0].config.endpoint: is required"},
      {"networkTopologyDiscovery: [{source: ufm, config: {endpoint: 'https://u', port: 1}}]\n",
       "config.yaml: networkTopologyDiscovery[0].config.port: unknown key (known: endpoint, credentials, "
       "credentialsDir, caFile, insecureSkipVerify, timeout, maxBytes, pageSize)"},
      {"networkTopologyDiscovery: [{source: ufm, config: {endpoint: 'https://u', insecureSkipVerify: "
       "sure}}]\n",
       "config.yaml: networkTopologyDiscovery[0].config.insecureSkipVerify: must be true or false"},
      {"networkTopologyDiscovery: [{source: ufm, config: {endpoint: 'https://u'}, credentials: {secretRef: "
       "{namespace: v}}}]\n",
       "config.yaml: networkTopologyDiscovery[0].config.credentials.secretRef.name: is required"},
      {"networkTopologyDiscovery: [{source: ufm, config: {endpoint: 'https://u'}, credentials: {secret: "
       "x}}]\n",
       "config.yaml: networkTopologyDiscovery[0].config.credentials.secret: unknown key (known: secretRef)"},
      {"networkTopologyDiscovery: [{source: label, config: {networkTopologyTypes: {a: [{nodeLabel: r}]}}, "
       "credentials: {secretRef: {name: x}}}]\n",
       "config.yaml: networkTopologyDiscovery[0].credentials: only a ufm source takes credentials"},
      {"networkTopologyDiscovery: [{source: label}]\n",
       "config.yaml: networkTopologyDiscovery[0].config: a labels source needs file (a config file) or "
       "networkTopologyTypes (inline)"},
      {"networkTopologyDiscovery: [{source: label, config: {networkTopologyTypes: []}}]\n",
       "config.yaml: networkTopologyDiscovery[0].config.networkTopologyTypes: must be a mapping of topology "
       "type to its list of levels"},
      {"networkTopologyDiscovery: [{source: roce, interval: 10 minutes}]\n",
       "config.yaml: networkTopologyDiscovery[0].interval: '10 minutes' is not a duration (Go style: 90s, "
       "5m, "
       "1h30m, 500ms; or a number of seconds)"},
      {"networkTopologyDiscovery: [{source: roce, config: {endpoint: 'https://r', user: x}}]\n",
       "config.yaml: networkTopologyDiscovery[0].config.user: unknown key (known: hierarchy, endpoint, "
       "token)"},
      {"networkTopologyDiscovery: [{source: roce, sorce: x}]\n",
       "config.yaml: networkTopologyDiscovery[0].sorce: unknown key (known: source, enabled, interval, "
       "deadline, credentials, config)"},
  };
  for (const auto& c : cases) {
    auto config = parse_agent_config(c.yaml, "config.yaml");
    ASSERT_FALSE(config.has_value()) << "accepted:\n" << c.yaml;
    EXPECT_EQ(config.error().message(), c.message) << c.yaml;
    EXPECT_EQ(config.error().code(), ErrorCode::kInvalidArgument) << c.yaml;
  }
}

TEST(AgentConfig, BadPatternsAndBadYamlAreReportedAgainstTheFile) {
  EXPECT_THAT(error_of(kOneSource + "hostDescriptionPattern: '(unclosed'\n"),
              AllOf(StartsWith("config.yaml: "),
                    HasSubstr("hostDescriptionPattern: '(unclosed': not a valid RE2 regular expression")));
  EXPECT_THAT(error_of(kOneSource + "excludedSwitchPatterns: ['[']\n"), StartsWith("config.yaml: "));
  auto broken = parse_agent_config("sources: [{kind: ib-local}\n", "config.yaml");
  ASSERT_FALSE(broken.has_value());
  EXPECT_EQ(broken.error().code(), ErrorCode::kParse);
  EXPECT_THAT(broken.error().message(), StartsWith("config.yaml:"));
  auto missing = load_agent_config("/nonexistent/config.yaml");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().message(), "/nonexistent/config.yaml: cannot open: no such file");
}

TEST(AgentConfig, Durations) {
  const std::vector<std::pair<std::string, std::chrono::milliseconds>> good = {
      {"1h30m", 90min},     {"90s", 90s},      {"500ms", 500ms},
      {"5m", 5min},         {"90", 90s},       {"1.5", 1500ms},
      {"0", 0ms},           {"1.5h", 90min},   {"2h45m30.5s", 9930500ms},
      {"250ms", 250ms},     {"1500us", 1ms},   {"+10s", 10s},
      {"1m0.25s", 60250ms}, {"3000000ns", 3ms}};
  for (const auto& [text, expected] : good) {
    auto d = parse_duration(text);
    ASSERT_TRUE(d.has_value()) << text << ": " << d.error().message();
    EXPECT_EQ(*d, expected) << text;
  }
  for (const std::string text : {"", "abc", "5x", "h", "1h30", "1..5s", ".", "5 m", "1e3s", "m5"}) {
    auto d = parse_duration(text);
    ASSERT_FALSE(d.has_value()) << text;
    EXPECT_EQ(d.error().message(), "'" + text +
                                       "' is not a duration (Go style: 90s, 5m, 1h30m, 500ms; or a number of "
                                       "seconds)");
  }
  EXPECT_EQ(parse_duration("-5s").error().message(), "'-5s' is negative");
  EXPECT_FALSE(parse_duration("100000000h").has_value());  // beyond any sensible period
}

// sources[].deadline: how long a run may go on before /readyz calls the source wedged; 5 minutes
// unless set, in either list form; a bad value names the key.
TEST(AgentConfig, ASourceDeadlineIsReadInBothListFormsAndDefaultsToFiveMinutes) {
  auto ours = parse_agent_config(
      "sources:\n  - {kind: demo, deadline: 90s}\n  - {kind: ibnetdiscover, config: "
      "{file: x.out}}\n",
      "config.yaml");
  ASSERT_TRUE(ours) << ours.error().message();
  EXPECT_EQ(ours->sources[0].deadline, 90s);
  EXPECT_EQ(ours->sources[1].deadline, 5min);
  auto volcano = parse_agent_config(
      "networkTopologyDiscovery:\n  - {source: label, enabled: true, deadline: 2m, config: "
      "{networkTopologyTypes: {t: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]}}}\n",
      "config.yaml");
  ASSERT_TRUE(volcano) << volcano.error().message();
  EXPECT_EQ(volcano->sources[0].deadline, 2min);
  auto bad = parse_agent_config("sources:\n  - {kind: demo, deadline: soon}\n", "config.yaml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("config.yaml"), std::string::npos) << bad.error().message();
  EXPECT_NE(bad.error().message().find("deadline"), std::string::npos) << bad.error().message();
  // A changed deadline is a changed source (it restarts with the new one).
  auto later = parse_agent_config(
      "sources:\n  - {kind: demo, deadline: 10s}\n  - {kind: ibnetdiscover, config: "
      "{file: x.out}}\n",
      "config.yaml");
  ASSERT_TRUE(later);
  EXPECT_EQ(diff_configs(*ours, *later).restarted_sources.size(), 1u);
}

// Volcano's documented discovery config (ufm + roce + label), as its user guide shows it.
const char* kVolcanoGuide =
    "networkTopologyDiscovery:\n"
    "  - source: ufm\n"
    "    enabled: true\n"
    "    interval: 10m\n"
    "    credentials:\n"
    "      secretRef:\n"
    "        name: ufm-credentials\n"
    "        namespace: volcano-system\n"
    "    config:\n"
    "      endpoint: https://ufm-server:8080\n"
    "      insecureSkipVerify: true\n"
    "  - source: roce\n"
    "    enabled: false\n"
    "    interval: 15m\n"
    "    config:\n"
    "      endpoint: https://roce-server:9090\n"
    "      token: token\n"
    "  - source: label\n"
    "    enabled: true\n"
    "    config:\n"
    "      networkTopologyTypes:\n"
    "        topologyA2:\n"
    "          - nodeLabel: \"volcano.sh/tor\"\n"
    "          - nodeLabel: \"kubernetes.io/hostname\"\n";

TEST(AgentConfig, VolcanoDiscoveryList) {
  const AgentConfig c = parse_ok(kVolcanoGuide);
  ASSERT_EQ(c.sources.size(), 3u);
  const SourceConfig& ufm = c.sources[0];
  EXPECT_EQ(ufm.kind, "ufm");
  EXPECT_EQ(ufm.spec(), "ufm:https://ufm-server:8080");
  EXPECT_TRUE(ufm.enabled);
  EXPECT_EQ(ufm.interval, 10min);
  // Volcano's credentials.secretRef and config block fill the ufm source's own struct.
  const auto& settings = static_cast<const discoverers::ufm::UfmSourceConfig&>(*ufm.settings);
  EXPECT_EQ(settings.endpoint, "https://ufm-server:8080");
  EXPECT_TRUE(settings.insecure);
  EXPECT_EQ(settings.secret_name, "ufm-credentials");
  EXPECT_EQ(settings.secret_namespace, "volcano-system");
  EXPECT_EQ(ufm.role, SourceRole::kLeader);
  EXPECT_EQ(ufm.cache, CachePolicy::kInterval);

  const SourceConfig& roce = c.sources[1];
  EXPECT_EQ(roce.spec(), "roce");
  EXPECT_FALSE(roce.enabled);
  EXPECT_EQ(roce.interval, 15min);
  EXPECT_EQ(roce.config["token"], "token");

  const SourceConfig& label = c.sources[2];
  EXPECT_EQ(label.kind, "labels");
  EXPECT_EQ(label.cache, CachePolicy::kEveryRebuild);
  EXPECT_EQ(label.spec(), "labels:inline");
  EXPECT_EQ(label.interval, 1h);  // Volcano's default when none is given
  EXPECT_TRUE(label.enabled);
  EXPECT_EQ(label.config, nlohmann::json::parse(R"({"networkTopologyTypes": {"topologyA2": [
      {"nodeLabel": "volcano.sh/tor"}, {"nodeLabel": "kubernetes.io/hostname"}]}})"));
}

TEST(AgentConfig, VolcanoExampleFromItsRepository) {
  HT_REQUIRE_FIXTURE(path, "volcano/discovery-configmap-example.yaml");
  ScopedEnv env(kEnv, nullptr);
  auto config = load_agent_config(path);
  ASSERT_TRUE(config.has_value()) << config.error().message();
  ASSERT_EQ(config->sources.size(), 3u);
  EXPECT_EQ(config->sources[0].spec(), "ufm:https://ufm-server:8080");
  EXPECT_EQ(config->sources[1].spec(), "roce");
  EXPECT_EQ(config->sources[2].kind, "labels");
  EXPECT_EQ(config->sources[2].config["networkTopologyTypes"].size(), 2u);
}

TEST(AgentConfig, EnvironmentOverridesNodeLabelExport) {
  testing::TempDir dir;
  const fs::path file = dir.path() / "config.yaml";
  testing::write_text(file, kOneSource + "exports: {nodeLabels: {enabled: false}}\n");
  {
    ScopedEnv env(kEnv, "true");
    auto c = load_agent_config(file);
    ASSERT_TRUE(c.has_value()) << c.error().message();
    EXPECT_TRUE(c->export_node_labels);
    // parse_agent_config reads only the text.
    EXPECT_FALSE(parse_ok(kOneSource).export_node_labels);
  }
  {
    ScopedEnv env(kEnv, "false");
    AgentConfig c = parse_ok(kOneSource + "exports: {nodeLabels: {enabled: true}}\n");
    ASSERT_TRUE(apply_environment_overrides(c).has_value());
    EXPECT_FALSE(c.export_node_labels);
  }
  {
    ScopedEnv env(kEnv, nullptr);
    AgentConfig c = parse_ok(kOneSource + "exports: {nodeLabels: {enabled: true}}\n");
    ASSERT_TRUE(apply_environment_overrides(c).has_value());
    EXPECT_TRUE(c.export_node_labels);  // unset: the file's value stands
  }
  for (const char* wrong : {"yes", "1", "TRUE", ""}) {
    ScopedEnv env(kEnv, wrong);
    auto c = load_agent_config(file);
    ASSERT_FALSE(c.has_value()) << wrong;
    EXPECT_EQ(c.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(c.error().message(),
              std::string("HYPERTOPO_EXPORT_NODE_LABELS: must be true or false, not '") + wrong + "'");
  }
}

TEST(AgentConfig, DiffOfIdenticalConfigsIsEmpty) {
  const AgentConfig a = parse_ok(kVolcanoGuide);
  const ConfigChange change = diff_configs(a, a);
  EXPECT_THAT(change.restarted_sources, IsEmpty());
  EXPECT_FALSE(change.builder_changed);
  EXPECT_FALSE(change.needs_restart);
  EXPECT_THAT(change.notes, IsEmpty());
}

TEST(AgentConfig, DiffRestartsOnlyTheSourcesThatChanged) {
  const AgentConfig before = parse_ok(
      "sources: [{kind: ib-local, interval: 5m}, {kind: nvlink}, {kind: ibnetdisc, interval: 10m},"
      " {kind: reports, config: {dir: /r}}]\n");
  const AgentConfig after = parse_ok(
      "sources: [{kind: ib-local, interval: 5m}, {kind: nvlink, enabled: false}, {kind: ibnetdisc, interval: "
      "5m}, {kind: ufm, config: {endpoint: 'https://u'}}]\n");
  const ConfigChange change = diff_configs(before, after);
  EXPECT_THAT(change.restarted_sources, ElementsAre("ibnetdisc", "nvlink", "reports:/r", "ufm:https://u"));
  EXPECT_FALSE(change.builder_changed);
  EXPECT_FALSE(change.needs_restart);
  EXPECT_THAT(change.notes,
              ::testing::UnorderedElementsAre("sources: changed ibnetdisc", "sources: changed nvlink",
                                              "sources: removed reports:/r", "sources: added ufm:https://u"));
}

// Loopback by default; one named address (the pod's IP) is served as given; every address at once
// only with TLS client authentication or the explicit opt-in. The message names the key it came from.
TEST(AgentConfig, HttpAddressIsLoopbackByDefaultAndEveryAddressNeedsClientCertificatesOrTheOptIn) {
  const AgentConfig defaults = parse_ok(kOneSource);
  EXPECT_EQ(defaults.http_address, "127.0.0.1");
  EXPECT_FALSE(http_is_exposed(defaults));
  for (const char* one : {"10.244.1.17", "fd00::2", "::1", "192.0.2.2"}) {
    const AgentConfig c = parse_ok(kOneSource + "http: {address: '" + one + "'}\n");
    EXPECT_EQ(c.http_address, one);
    EXPECT_TRUE(check_http_exposure(c, false, "http.address").has_value()) << one;
  }
  for (const char* every : {"0.0.0.0", "::", "::ffff:0.0.0.0", "0:0:0:0:0:0:0:0"}) {
    const AgentConfig c = parse_ok(kOneSource + "http: {address: '" + every + "', port: 9000}\n");
    EXPECT_TRUE(is_wildcard_address(every)) << every;
    EXPECT_TRUE(http_is_exposed(c)) << every;
    auto refused = check_http_exposure(c, false, "http.address");
    ASSERT_FALSE(refused.has_value()) << every;
    EXPECT_THAT(
        refused.error().message(),
        AllOf(StartsWith("refusing to listen on " + host_port(every, 9000) + " without TLS (http.address)"),
              HasSubstr("--insecure-listen"), HasSubstr("--http-address=$(POD_IP)")));
    EXPECT_TRUE(check_http_exposure(c, true, "http.address").has_value()) << every;
  }
  EXPECT_EQ(host_port("0.0.0.0", 8080), "0.0.0.0:8080");
  EXPECT_EQ(host_port("::", 8080), "[::]:8080");

  // TLS alone does not say who the client is; with a client CA every address may be served.
  const AgentConfig tls_only =
      parse_ok(kOneSource + "http: {address: 0.0.0.0, tls: {certFile: /t/tls.crt, keyFile: /t/tls.key}}\n");
  auto no_ca = check_http_exposure(tls_only, false, "--http-address");
  ASSERT_FALSE(no_ca.has_value());
  EXPECT_THAT(
      no_ca.error().message(),
      StartsWith("refusing to listen on 0.0.0.0:8080 without http.tls.clientCAFile (--http-address)"));
  const AgentConfig mutual =
      parse_ok(kOneSource +
               "http:\n  address: '::'\n  tls: {certFile: /t/tls.crt, keyFile: /t/tls.key, clientCAFile: "
               "/t/ca.crt}\n");
  EXPECT_EQ(mutual.http_tls_cert_file, "/t/tls.crt");
  EXPECT_EQ(mutual.http_tls_key_file, "/t/tls.key");
  EXPECT_EQ(mutual.http_tls_client_ca_file, "/t/ca.crt");
  EXPECT_FALSE(http_is_exposed(mutual));
  EXPECT_TRUE(check_http_exposure(mutual, false, "http.address").has_value());
}

TEST(AgentConfig, DiffFlagsBuilderRestartAndOtherKeys) {
  const AgentConfig base = parse_ok(kOneSource);
  {
    const ConfigChange c = diff_configs(base, parse_ok(kOneSource + "tierNames: [rail, spine]\n"));
    EXPECT_TRUE(c.builder_changed);
    EXPECT_FALSE(c.needs_restart);
    EXPECT_THAT(c.restarted_sources, IsEmpty());
    EXPECT_THAT(c.notes, ElementsAre("tierNames: [leaf, spine, core] -> [rail, spine]"));
  }
  {
    const ConfigChange c = diff_configs(base, parse_ok(kOneSource + "nodeSelector: {matchLabels: {a: b}}\n"));
    EXPECT_TRUE(c.builder_changed);
    EXPECT_THAT(c.notes, ElementsAre("nodeSelector.matchLabels: {} -> {a=b}"));
  }
  {
    const ConfigChange c = diff_configs(base, parse_ok(kOneSource + "excludedSwitchPatterns: [MGMT]\n"));
    EXPECT_TRUE(c.builder_changed);
  }
  {
    const ConfigChange c = diff_configs(base, parse_ok(kOneSource + "http: {port: 9000}\n"));
    EXPECT_TRUE(c.needs_restart);
    EXPECT_FALSE(c.builder_changed);
    EXPECT_THAT(c.notes, ElementsAre("http.port: 8080 -> 9000"));
  }
  {
    // The listener is bound once: a new address or TLS file needs a restart.
    const ConfigChange c = diff_configs(base, parse_ok(kOneSource + "http: {address: 10.0.0.7}\n"));
    EXPECT_TRUE(c.needs_restart);
    EXPECT_THAT(c.notes, ElementsAre("http.address: 127.0.0.1 -> 10.0.0.7"));
  }
  {
    const ConfigChange c = diff_configs(base, parse_ok(kOneSource + "leaderElection: {leaseName: other}\n"));
    EXPECT_TRUE(c.needs_restart);
  }
  {
    const ConfigChange c =
        diff_configs(base, parse_ok(kOneSource + "guard: {maxDeleteFraction: 0.5}\nlogLevel: debug\n"));
    EXPECT_FALSE(c.needs_restart);
    EXPECT_FALSE(c.builder_changed);
    EXPECT_THAT(c.restarted_sources, IsEmpty());
    EXPECT_THAT(c.notes, ElementsAre("guard.maxDeleteFraction: 0.2 -> 0.5", "logLevel: info -> debug"));
  }
  {
    // Node probes read hostRoot; leader sources do not.
    const AgentConfig two = parse_ok("sources: [{kind: ib-local}, {kind: ibnetdisc}]\n");
    const ConfigChange c =
        diff_configs(two, parse_ok("hostRoot: /host\nsources: [{kind: ib-local}, {kind: ibnetdisc}]\n"));
    EXPECT_THAT(c.restarted_sources, ElementsAre("ib-local"));
    EXPECT_FALSE(c.needs_restart);
  }
  {
    // An inline label block that changes restarts its source even though the spec is the same.
    AgentConfig a = parse_ok(kVolcanoGuide);
    AgentConfig b = a;
    b.sources[2].config["networkTopologyTypes"]["topologyA3"] = nlohmann::json::array();
    EXPECT_THAT(diff_configs(a, b).restarted_sources, ElementsAre("labels:inline"));
  }
}

k8s::NodeList nodes_on_two_tors() {
  k8s::NodeList nodes;
  for (const auto& [name, tor] : {std::pair{"n1", "t1"}, {"n2", "t1"}, {"n3", "t2"}}) {
    k8s::NodeInfo n;
    n.name = name;
    n.labels = {{"volcano.sh/tor", tor}, {"kubernetes.io/hostname", name}};
    nodes.items.push_back(n);
  }
  return nodes;
}

// Creates the registry's labels source on `spec` and runs it on three nodes under two ToRs.
void expect_labels_source_builds_two_tors(const SourceConfig& spec) {
  discoverers::DiscovererRegistry registry;
  discoverers::register_builtin_discoverers(registry);
  const k8s::NodeList nodes = nodes_on_two_tors();
  discoverers::DiscoveryDeps deps;
  deps.nodes = &nodes;
  auto source = registry.create({.kind = spec.kind, .arg = "", .settings = spec.settings}, deps);
  ASSERT_TRUE(source.has_value()) << source.error().message();
  auto found = (*source)->discover();
  ASSERT_TRUE(found.has_value()) << found.error().message();
  ASSERT_TRUE(found->tree.has_value());
  ASSERT_EQ(found->tree->size(), 2u);  // one HyperNode per ToR
  EXPECT_EQ(found->tree->node_count(), 3u);
  for (const auto& domain : found->tree->domains()) EXPECT_EQ(domain.tier_name, "volcano.sh/tor");
}

// Inline label blocks are parsed with the config (never written to a file) and the registry's
// labels source builds from the struct.
TEST(AgentConfig, InlineLabelBlocksAreParsedWithTheConfig) {
  AgentConfig c = parse_ok(kVolcanoGuide);
  expect_labels_source_builds_two_tors(c.sources[2]);
  AgentConfig ours = parse_ok(
      "sources:\n"
      "  - {kind: ib-local}\n"
      "  - {kind: labels, config: {networkTopologyTypes: {pool: [{nodeLabel: volcano.sh/tor}, "
      "{nodeLabel: kubernetes.io/hostname}]}}}\n"
      "  - {kind: labels, config: {file: /etc/labels.yaml}}\n");
  expect_labels_source_builds_two_tors(ours.sources[1]);
  EXPECT_EQ(ours.sources[2].spec(), "labels:/etc/labels.yaml");
  // A bad inline block fails when the config loads, naming the file and the key.
  EXPECT_THAT(error_of("sources: [{kind: labels, config: {networkTopologyTypes: {a: 3}}}]\n"),
              StartsWith("config.yaml: sources[0].config"));
}

// Every kind has one role and one cache policy, and the lists the config checks against are the
// registry's.
TEST(AgentConfig, KindsRolesAndCachePoliciesComeFromTheRegistry) {
  const auto& registry = builtin_registry();
  EXPECT_THAT(node_probe_kinds(), ElementsAre("ib-local", "lldp", "nvlink"));
  EXPECT_EQ(registry.kinds(discoverers::SourceRole::kLeader), leader_source_kinds());
  for (const char* fabric : {"ibnetdisc", "ibnetdisc-cache", "ibsim", "ufm", "ibnetdiscover", "demo"}) {
    EXPECT_EQ(registry.entry(fabric)->cache, CachePolicy::kInterval) << fabric;
  }
  for (const char* per_rebuild : {"labels", "roce", "reports"}) {
    EXPECT_EQ(registry.entry(per_rebuild)->cache, CachePolicy::kEveryRebuild) << per_rebuild;
  }
  // One kind name per source: the probe the CLI calls nvlink is the agent's nvlink.
  EXPECT_EQ(registry.entry("nvml"), nullptr);
}

// The ufm overlay's config: UFM configured from the agent's YAML alone.
TEST(AgentConfig, TheUfmOverlayConfigLoads) {
  ScopedEnv env(kEnv, nullptr);
  auto config =
      load_agent_config(fs::path(HYPERTOPO_SOURCE_DIR) / "deploy" / "overlays" / "ufm" / "config-ufm.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  ASSERT_EQ(config->sources.size(), 3u);
  const auto& ufm = static_cast<const discoverers::ufm::UfmSourceConfig&>(*config->sources[2].settings);
  EXPECT_EQ(ufm.credentials_dir, "/etc/hypertopo/ufm");
  EXPECT_EQ(ufm.ca_file, "/etc/hypertopo/ufm-ca/ca.crt");
  EXPECT_FALSE(ufm.insecure);
  EXPECT_EQ(config->sources[2].interval, 10min);
}

// The ib-walk overlay's config: the live walk on the leader, the probes on every pod. The base
// config lists the walk switched off (its DaemonSet has no umad devices).
TEST(AgentConfig, TheIbWalkOverlayConfigWalksAndTheBaseConfigDoesNot) {
  ScopedEnv env(kEnv, nullptr);
  auto walk = load_agent_config(fs::path(HYPERTOPO_SOURCE_DIR) / "deploy" / "overlays" / "ib-walk" /
                                "config-ib-walk.yaml");
  ASSERT_TRUE(walk.has_value()) << walk.error().message();
  auto base = load_agent_config(fs::path(HYPERTOPO_SOURCE_DIR) / "deploy" / "base" / "config.yaml");
  ASSERT_TRUE(base.has_value()) << base.error().message();
  auto walks = [](const AgentConfig& c) {
    for (const auto& s : c.sources) {
      if (s.kind == "ibnetdisc" && s.enabled) return true;
    }
    return false;
  };
  EXPECT_TRUE(walks(*walk));
  EXPECT_FALSE(walks(*base));
}

// docs/agent.md's list of source config keys says what each source's parser accepts.
TEST(AgentConfig, TheReadmeListsEverySourcesKeys) {
  const std::string readme = testing::read_text(fs::path(HYPERTOPO_SOURCE_DIR) / "docs" / "agent.md");
  const auto start = readme.find("## Source config keys");
  ASSERT_NE(start, std::string::npos);
  const std::string section = readme.substr(start, readme.find("\n\n", readme.find("\n- ", start)) - start);
  const auto& registry = builtin_registry();
  for (const auto& kind : registry.kinds()) {
    const auto at = section.find("- `" + kind + "` (");
    ASSERT_NE(at, std::string::npos) << kind;
    const std::string item = section.substr(at, section.find("\n- ", at + 1) - at);
    const auto* entry = registry.entry(kind);
    EXPECT_NE(item.find(entry->role == SourceRole::kNodeProbe
                            ? "node probe"
                            : (entry->cache == CachePolicy::kInterval ? "per interval" : "every rebuild")),
              std::string::npos)
        << item;
    for (const auto& key : entry->keys)
      EXPECT_NE(item.find("`" + key.name + "`"), std::string::npos) << kind << " " << key.name;
    if (entry->keys.empty()) {
      EXPECT_NE(item.find("no keys"), std::string::npos) << item;
    }
  }
}

}  // namespace
}  // namespace hypertopo::agent
