// Hot reload: what changed between two agent configs, which sources restart, and one log line per
// changed key.
#include <map>
#include <sstream>
#include <utility>

#include "agent/config/agent_config.h"
#include "io/config_reader.h"

namespace hypertopo::agent {
namespace {

using io::comma_list;
using std::chrono::milliseconds;

bool same_builder(const topology::TreeBuilderOptions& a, const topology::TreeBuilderOptions& b) {
  return a.node_by_endpoint == b.node_by_endpoint && a.known_nodes == b.known_nodes &&
         a.host_description_pattern == b.host_description_pattern &&
         a.excluded_device_patterns == b.excluded_device_patterns &&
         a.excluded_switch_patterns == b.excluded_switch_patterns &&
         a.firmware_description_patterns == b.firmware_description_patterns &&
         a.level_names == b.level_names && a.source == b.source;
}

std::string format_ms(milliseconds d) { return std::to_string(d.count()) + "ms"; }

}  // namespace

ConfigChange diff_configs(const AgentConfig& before, const AgentConfig& after) {
  ConfigChange change;
  // Sources are identified by spec(); any difference in one (interval, enabled, credentials, inline
  // config) restarts it.
  std::map<std::string, std::pair<std::vector<SourceConfig>, std::vector<SourceConfig>>> by_spec;
  for (const auto& s : before.sources) by_spec[s.spec()].first.push_back(s);
  for (const auto& s : after.sources) by_spec[s.spec()].second.push_back(s);
  const bool root_changed = before.host_root != after.host_root;
  for (const auto& [spec, pair] : by_spec) {
    const auto& [old_list, new_list] = pair;
    const bool node_probe = !new_list.empty() ? new_list.front().role == SourceRole::kNodeProbe
                                              : old_list.front().role == SourceRole::kNodeProbe;
    if (old_list.empty()) {
      change.notes.push_back("sources: added " + spec);
    } else if (new_list.empty()) {
      change.notes.push_back("sources: removed " + spec);
    } else if (old_list != new_list) {
      change.notes.push_back("sources: changed " + spec);
    } else if (root_changed && node_probe) {
      change.notes.push_back("sources: " + spec + " reads hostRoot, which changed");
    } else {
      continue;
    }
    change.restarted_sources.push_back(spec);
  }

  auto note = [&](const std::string& key, const std::string& from, const std::string& to) {
    if (from != to) change.notes.push_back(key + ": " + from + " -> " + to);
  };
  auto list = [](const std::vector<std::string>& items) { return "[" + comma_list(items) + "]"; };
  auto selector = [](const std::map<std::string, std::string>& labels) {
    std::string out;
    for (const auto& [k, v] : labels) out += (out.empty() ? "" : ", ") + k + "=" + v;
    return "{" + out + "}";
  };
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  auto number = [](double d) {
    std::ostringstream s;
    s << d;
    return s.str();
  };

  note("hostRoot", before.host_root.string(), after.host_root.string());
  if (!same_builder(before.builder, after.builder) || before.node_selector != after.node_selector) {
    change.builder_changed = true;
    note("tierNames", list(before.builder.level_names), list(after.builder.level_names));
    note("source", before.builder.source, after.builder.source);
    note("hostDescriptionPattern", before.builder.host_description_pattern,
         after.builder.host_description_pattern);
    note("excludedDevicePatterns", list(before.builder.excluded_device_patterns),
         list(after.builder.excluded_device_patterns));
    note("excludedSwitchPatterns", list(before.builder.excluded_switch_patterns),
         list(after.builder.excluded_switch_patterns));
    note("firmwareDescriptionPatterns", list(before.builder.firmware_description_patterns),
         list(after.builder.firmware_description_patterns));
    if (before.builder.node_by_endpoint != after.builder.node_by_endpoint)
      change.notes.push_back("guidMap: " + std::to_string(before.builder.node_by_endpoint.size()) + " -> " +
                             std::to_string(after.builder.node_by_endpoint.size()) + " entries");
    note("nodeSelector.matchLabels", selector(before.node_selector), selector(after.node_selector));
  }
  note("guard.maxDeleteFraction", number(before.max_delete_fraction), number(after.max_delete_fraction));
  note("guard.minObjectsForGuard", std::to_string(before.min_objects_for_guard),
       std::to_string(after.min_objects_for_guard));
  if (before.lease_name != after.lease_name) change.needs_restart = true;
  note("leaderElection.leaseName", before.lease_name, after.lease_name);
  note("leaderElection.leaseDuration", format_ms(before.lease_duration), format_ms(after.lease_duration));
  note("leaderElection.renewDeadline", format_ms(before.renew_deadline), format_ms(after.renew_deadline));
  note("leaderElection.retryPeriod", format_ms(before.retry_period), format_ms(after.retry_period));
  note("reconcile.debounce", format_ms(before.debounce), format_ms(after.debounce));
  note("reconcile.resync", std::to_string(before.resync.count()) + "s",
       std::to_string(after.resync.count()) + "s");
  note("exports.nodeLabels.enabled", flag(before.export_node_labels), flag(after.export_node_labels));
  note("exports.nodeLabels.keyPrefix", before.node_label_prefix, after.node_label_prefix);
  note("exports.nodeLabels.topographCompatible", flag(before.topograph_labels), flag(after.topograph_labels));
  if (before.http_port != after.http_port) change.needs_restart = true;
  note("http.port", std::to_string(before.http_port), std::to_string(after.http_port));
  // The listener is bound once, at start: where and how it listens changes with a restart only.
  if (before.http_address != after.http_address || before.http_tls_cert_file != after.http_tls_cert_file ||
      before.http_tls_key_file != after.http_tls_key_file ||
      before.http_tls_client_ca_file != after.http_tls_client_ca_file)
    change.needs_restart = true;
  note("http.address", before.http_address, after.http_address);
  note("http.tls.certFile", before.http_tls_cert_file, after.http_tls_cert_file);
  note("http.tls.keyFile", before.http_tls_key_file, after.http_tls_key_file);
  note("http.tls.clientCAFile", before.http_tls_client_ca_file, after.http_tls_client_ca_file);
  note("logLevel", before.log_level, after.log_level);
  // The clients are made when the agent starts; the writes in flight apply at the next sync.
  if (before.api_qps != after.api_qps || before.api_burst != after.api_burst) change.needs_restart = true;
  note("apiClient.qps", number(before.api_qps), number(after.api_qps));
  note("apiClient.burst", std::to_string(before.api_burst), std::to_string(after.api_burst));
  note("apiClient.parallelWrites", std::to_string(before.parallel_writes),
       std::to_string(after.parallel_writes));
  return change;
}

}  // namespace hypertopo::agent
