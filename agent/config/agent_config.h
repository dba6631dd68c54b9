// agent/config/agent_config.h: `hypertopo agent --config FILE`, the agent's one YAML file.
//
// The example is deploy/base/config.yaml (the README shows it). Every key is checked at load:
// unknown keys, wrong types and bad values are errors that name the file and the key path
// ("config.yaml: guard.maxDeleteFraction: must be a number in [0, 1]"). Durations are Go-style
// strings ("90s", "5m", "1h30m", "500ms") or plain seconds.
//
//   hostRoot: /host
//   sources:                          # or Volcano's networkTopologyDiscovery list (below)
//     - kind: ib-local                # node probes (every pod): ib-local, nvlink, lldp
//       interval: 5m                  # default 1h; whole seconds, > 0
//     - kind: ibnetdisc               # leader sources: any discoverer kind of the registry
//       interval: 10m                 #   (leader_source_kinds(); a test keeps it equal to the registry)
//     - kind: ufm
//       arg: https://ufm.example      # the source argument (kind:arg on the command line)
//       interval: 10m
//       enabled: true
//       credentialsSecret: {name: ufm-credentials, namespace: hypertopo-system}  # ufm only
//       insecureSkipVerify: false     # ufm only
//     - kind: labels                  # labels: a file (arg) or the networkTopologyTypes block (config)
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
//   http: {port: 8080}
//   logLevel: info                    # trace, debug, info, warn, error
//
// Volcano's form is accepted in place of `sources`:
//   networkTopologyDiscovery:
//     - {source: ufm, enabled: true, interval: 10m,
//        credentials: {secretRef: {name: ufm-credentials, namespace: volcano-system}},
//        config: {endpoint: "https://ufm:8080", insecureSkipVerify: true}}
//     - {source: label, enabled: true, config: {networkTopologyTypes: {...}}}
// `label` becomes a labels source whose config is the given `config` block; `ufm` a ufm source on
// `endpoint`; `roce` the roce source. An entry without interval gets 1h, as Volcano does. Giving both
// `sources` and `networkTopologyDiscovery` is an error. Inline label blocks are written to files by
// materialize_inline_configs() before the sources are created (the labels source reads a file).
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

#include "errors/error.h"
#include "topology/tree_builder.h"

namespace hypertopo::agent {

enum class SourceRole { kNode, kLeader };  // node probes run on every pod; the rest on the leader

struct SourceConfig {
  std::string kind;  // "ib-local", "nvlink", "lldp" (node); a registry kind (leader)
  std::string arg;   // the source argument; for `label` from Volcano's form, a file the loader wrote
  std::chrono::seconds interval{3600};
  bool enabled = true;
  SourceRole role = SourceRole::kLeader;
  bool insecure_skip_verify = false;          // ufm
  std::string secret_name, secret_namespace;  // ufm credentials Secret
  nlohmann::json config;                      // Volcano's `config` block, as given (null if none)
  std::string spec() const { return arg.empty() ? kind : kind + ":" + arg; }  // "kind[:arg]"
  bool operator==(const SourceConfig&) const = default;
};

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
  std::string log_level = "info";
};

std::expected<AgentConfig, Error> parse_agent_config(const std::string& yaml_text, const std::string& name);
// Reads the file, parses it, applies the environment overrides.
std::expected<AgentConfig, Error> load_agent_config(const std::filesystem::path& path);

// Hot reload: what changed between two configs.
struct ConfigChange {
  std::vector<std::string> restarted_sources;  // spec() of sources added, removed or changed
  bool builder_changed = false;                // tier names, patterns, node selector
  bool needs_restart = false;                  // http port or lease name changed: restart the pod
  std::vector<std::string> notes;              // one line per changed key, for the log
};
ConfigChange diff_configs(const AgentConfig& before, const AgentConfig& after);

// Go-style duration ("1h30m", "90s", "250ms") or a plain number of seconds.
std::expected<std::chrono::milliseconds, Error> parse_duration(const std::string& text);

// HYPERTOPO_EXPORT_NODE_LABELS=true|false sets export_node_labels (load_agent_config calls this).
std::expected<void, Error> apply_environment_overrides(AgentConfig& config);

// Every `labels` source with an inline `config` block and no arg: the block is written as YAML to
// work_dir/"labels-<index in sources>.yaml" and arg is set to that path, so that the registry's labels
// source (which reads a file) can be created from it. work_dir is created when missing.
std::expected<void, Error> materialize_inline_configs(AgentConfig& config,
                                                      const std::filesystem::path& work_dir);

// The kinds a source may have. Node probes run in every pod; the leader kinds mirror
// discoverers::register_builtin_discoverers() (kept here so that this library does not link every
// source; tests/agent-config checks the two lists agree).
const std::vector<std::string>& node_probe_kinds();
const std::vector<std::string>& leader_source_kinds();

}  // namespace hypertopo::agent
