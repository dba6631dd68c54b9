// agent/config/agent_config.h: `hypertopo agent --config FILE`, the agent's one YAML file.
//
// The example is deploy/base/config.yaml (docs/agent.md shows it). Every key is checked at load:
// unknown keys, wrong types and bad values are errors that name the file and the key path
// ("config.yaml: guard.maxDeleteFraction: must be a number in [0, 1]"). Durations are Go-style
// strings ("90s", "5m", "1h30m", "500ms") or plain seconds.
//
//   hostRoot: /host
//   sources:                          # or Volcano's networkTopologyDiscovery list (below)
//     - kind: ib-local                # node probes (every pod): ib-local, lldp, nvlink
//       interval: 5m                  # default 1h; whole seconds, > 0
//       deadline: 5m                  # a run still going after this makes /readyz fail, naming
//                                     #   the source (default 5m; leader sources)
//     - kind: ibnetdisc               # leader sources: any leader kind of the registry
//       interval: 10m                 #   fabric sources (walks, UFM, captures) run at most once
//                                     #   per interval; labels, roce and reports on every rebuild
//     - kind: ufm
//       interval: 10m
//       enabled: true
//       config:                       # the source's own keys, checked by its own parser
//         endpoint: https://ufm.example
//         credentials: {secretRef: {name: ufm-credentials}}   # or credentialsDir: /etc/ufm
//         caFile: /etc/ufm-ca/ca.crt
//     - kind: labels
//       config:
//         networkTopologyTypes: {rack: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]}
//   tierNames: [leaf, spine, core]    # builder keys (topology/builder_config.h) are accepted too:
//   source: hypertopo                 #   source, hostDescriptionPattern, excludedDevicePatterns,
//                                     #   excludedSwitchPatterns, firmwareDescriptionPatterns, guidMap
//                                     #   (checked by topology::parse_builder_config)
//   nodeSelector: {matchLabels: {nvidia.com/gpu.present: "true"}}
//   guard: {maxDeleteFraction: 0.2, minObjectsForGuard: 4}
//   leaderElection: {leaseName: hypertopo-agent, leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 2s}
//   reconcile: {debounce: 2s, resync: 10m}
//   exports: {nodeLabels: {enabled: false, keyPrefix: hypertopo.io/tier-, topographCompatible: false}}
//   http:
//     port: 8080
//     address: 127.0.0.1              # an IP literal (default loopback); the manifests pass the
//                                     #   pod's IP as --http-address. 0.0.0.0 or :: (every address)
//                                     #   is refused without tls and clientCAFile, unless
//                                     #   --insecure-listen (check_http_exposure below)
//     tls: {certFile: /tls/tls.crt, keyFile: /tls/tls.key, clientCAFile: /tls/ca.crt}
//   apiClient: {qps: 100, burst: 200, parallelWrites: 8}   # per API client of the leader
//   logLevel: info                    # trace, debug, info, warn, error
//
// Each source's `config` keys are listed by its registry entry (SourceEntry::keys; docs/agent.md's
// reference is tested against them).
//
// Volcano's form is accepted in place of `sources`, and read into the same structs:
//   networkTopologyDiscovery:
//     - {source: ufm, enabled: true, interval: 10m,
//        credentials: {secretRef: {name: ufm-credentials, namespace: volcano-system}},
//        config: {endpoint: "https://ufm:8080", insecureSkipVerify: true}}
//     - {source: label, enabled: true, config: {networkTopologyTypes: {...}}}
// `label` becomes a labels source, `ufm` a ufm source (credentials join its config), `roce` the roce
// source. An entry without interval gets 1h, as Volcano does. Giving both `sources` and
// `networkTopologyDiscovery` is an error.
//
// leaderElection follows client-go's rules: leaseDuration > renewDeadline > 1.2 x retryPeriod.
//
// Environment overrides applied after the file: HYPERTOPO_EXPORT_NODE_LABELS=true|false (any other
// value is an error naming the variable).
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "discoverers/registry/discoverer.h"
#include "errors/error.h"
#include "io/config_reader.h"
#include "topology/tree_builder.h"

namespace hypertopo::agent {

using SourceRole = discoverers::SourceRole;
using CachePolicy = discoverers::CachePolicy;

struct SourceConfig {
  std::string kind;  // a registry kind
  std::chrono::seconds interval{3600};
  // A leader source's run that has not returned after this is wedged: /readyz fails and names it.
  std::chrono::seconds deadline{300};
  bool enabled = true;
  SourceRole role = SourceRole::kLeader;           // from the registry entry
  CachePolicy cache = CachePolicy::kEveryRebuild;  // from the registry entry
  discoverers::SettingsPtr settings;               // the source's typed config
  nlohmann::json config;                           // its `config` block as written (null: none)
  std::string spec() const;                        // "kind" or "kind:<what it reads>", for logs and caches
  bool operator==(const SourceConfig& o) const {
    return kind == o.kind && interval == o.interval && deadline == o.deadline && enabled == o.enabled &&
           config == o.config;
  }
};

// A source as the command line would give it (`kind:arg`), with the registry's defaults otherwise;
// for tests and tools that build a config in code.
std::expected<SourceConfig, Error> source_from_arg(const std::string& kind, const std::string& arg = "");

struct AgentConfig {
  std::filesystem::path host_root = "/";
  std::vector<SourceConfig> sources;
  topology::TreeBuilderOptions builder;              // tierNames and the other builder keys
  std::map<std::string, std::string> node_selector;  // matchLabels
  double max_delete_fraction = 0.2;
  int min_objects_for_guard = 4;  // with fewer owned objects the guard does not apply
  std::string lease_name = "hypertopo-agent";
  std::chrono::milliseconds lease_duration{15000}, renew_deadline{10000}, retry_period{2000};
  std::chrono::milliseconds debounce{2000};  // events within this window cause one rebuild
  std::chrono::seconds resync{600};          // rebuild at least this often without events
  bool export_node_labels = false;
  std::string node_label_prefix = "hypertopo.io/tier-";
  bool topograph_labels = false;
  std::uint16_t http_port = 8080;
  // /healthz, /readyz and /metrics: loopback unless the admin names an address (the manifests name
  // the pod's own IP, which kubelet probes and Prometheus reach).
  std::string http_address = "127.0.0.1";
  std::string http_tls_cert_file, http_tls_key_file;
  std::string http_tls_client_ca_file;  // clients must present a certificate this CA signed
  std::string log_level = "info";
  // apiClient: each of the leader's API clients (one for the HyperNodes, NodeReports and Nodes it
  // reads, one for the node label export) may send `api_qps` requests a second, `api_burst` at once,
  // with at most `parallel_writes` writes in flight. client-go's defaults are 5/10 and
  // kube-controller-manager's 20/30 per controller; at 10,000 Nodes the export alone is 10,000 PATCHes,
  // which at 20 a second is 8 minutes. 100/200 labels 10,000 Nodes in under 2 minutes and writes a
  // 650-HyperNode tree in a few seconds; the API server's own Priority and Fairness still has the
  // last word (a 429 waits out its Retry-After), as for the large controllers that raise theirs
  // (kube-scheduler runs 50/100 by default).
  double api_qps = 100;
  int api_burst = 200;
  int parallel_writes = 8;
};

std::expected<AgentConfig, Error> parse_agent_config(const std::string& yaml_text, const std::string& name);
// Reads the file, parses it, applies the environment overrides.
std::expected<AgentConfig, Error> load_agent_config(const std::filesystem::path& path);

// Hot reload: what changed between two configs.
struct ConfigChange {
  std::vector<std::string> restarted_sources;  // spec() of sources added, removed or changed
  bool builder_changed = false;                // tier names, patterns, node selector
  bool needs_restart = false;                  // http port, address or TLS, or the lease name changed:
                                               // restart the pod
  std::vector<std::string> notes;              // one line per changed key, for the log
};
ConfigChange diff_configs(const AgentConfig& before, const AgentConfig& after);

// Go-style duration ("1h30m", "90s", "250ms") or a plain number of seconds, as every duration in
// the file is read.
using io::parse_duration;

// The HTTP server's exposure. A specific address (127.0.0.1, the pod's IP) is served as configured:
// kubelet's httpGet probes and Prometheus' scrapes come to the pod's IP and present no client
// certificate. Every address of the host at once (0.0.0.0, ::) is refused unless the server
// authenticates its clients (http.tls with clientCAFile) or `insecure` (--insecure-listen) is given.
// `address_key` names where the address came from in the message ("http.address", "--http-address").
//
//   if (auto ok = check_http_exposure(config, insecure_listen, "http.address"); !ok) ...;  // refuse
bool is_wildcard_address(const std::string& address);  // 0.0.0.0, ::, ::ffff:0.0.0.0
bool http_is_exposed(const AgentConfig& config);       // wildcard without TLS client authentication
std::expected<void, Error> check_http_exposure(const AgentConfig& config, bool insecure,
                                               const std::string& address_key);
// "127.0.0.1:8080", "[fd00::2]:8080": an address and port as a listener's log line names them.
std::string host_port(const std::string& address, std::uint16_t port);

// HYPERTOPO_EXPORT_NODE_LABELS=true|false sets export_node_labels (load_agent_config calls this).
std::expected<void, Error> apply_environment_overrides(AgentConfig& config);

// The kinds a source may have, from the built-in registry: node probes run in every pod, leader
// sources on the elected leader.
const std::vector<std::string>& node_probe_kinds();
const std::vector<std::string>& leader_source_kinds();
const discoverers::DiscovererRegistry& builtin_registry();

}  // namespace hypertopo::agent
