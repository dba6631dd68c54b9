// The leader's rebuild: discover through the source cache, build the tree, reconcile the HyperNodes
// (with their FabricDegraded conditions), export node labels, and count and log what happened.
#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include "agent/reconciler/hypernode_reconciler.h"
#include "agent/reconciler/node_label_reconciler.h"
#include "agent/runtime/agent_daemon.h"
#include "agent/runtime/source_cache.h"
#include "discoverers/labels/label_config.h"
#include "discoverers/labels/labels_source.h"
#include "discoverers/nvlink/nvlink_probe.h"
#include "discoverers/pipeline/discovery_pipeline.h"

namespace hypertopo::agent {

using json = nlohmann::json;

namespace {

// A bad link counts once however many domains list it (an uplink of its leaf, internal to the
// spine domain).
std::map<std::string, std::set<std::string>> bad_links_by_state(const topology::Tree& tree) {
  std::map<std::string, std::set<std::string>> out = {
      {"degraded", {}}, {"down", {}}, {"missing", {}}, {"flapping", {}}};
  for (const auto& d : tree.domains()) {
    for (const auto& l : d.health.bad_links) {
      const char* state = l.reason == topology::HealthReason::kLinkDown         ? "down"
                          : l.reason == topology::HealthReason::kMissingUplinks ? "missing"
                          : l.reason == topology::HealthReason::kLinkFlapping   ? "flapping"
                                                                                : "degraded";
      out[state].insert(l.end_a + " " + l.end_b);
    }
  }
  return out;
}

void publish_fabric_health(telemetry::MetricsRegistry& metrics, const topology::Tree& tree) {
  std::map<telemetry::LabelValues, double> degraded;
  for (const auto& d : tree.domains()) {
    if (d.health.assessed) degraded[{d.name}] = d.health.degraded() ? 1 : 0;
  }
  metrics.gauge("hypertopo_domain_degraded", "", {"hypernode"}).replace(std::move(degraded));
  auto& links = metrics.gauge("hypertopo_fabric_links", "", {"state"});
  for (const auto& [state, names] : bad_links_by_state(tree))
    links.set({state}, static_cast<double>(names.size()));
}

// A Secret's `data` values are base64 (RFC 4648, padded).
std::optional<std::string> decode_base64(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    if (c == '\n' || c == '\r') continue;
    const int v = value(c);
    if (v < 0) return std::nullopt;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

// The label keys the discovery pipeline reads of a Node under this config: the NVLink clique label,
// and each labels source's levels and type selectors. nullopt (every label) when a labels source's
// file cannot be read here: the source reports that itself.
std::optional<std::set<std::string>> pipeline_label_keys(const AgentConfig& config) {
  std::set<std::string> keys = {discoverers::nvlink::kCliqueLabel};
  for (const auto& s : config.sources) {
    if (!s.enabled || s.kind != "labels" || !s.settings) continue;
    const auto* c = dynamic_cast<const discoverers::LabelsSourceConfig*>(s.settings.get());
    if (c == nullptr) return std::nullopt;
    std::optional<discoverers::labels::LabelConfig> loaded;
    if (!c->inline_levels) {
      auto read = discoverers::labels::load_label_config(c->file);
      if (!read) return std::nullopt;
      loaded = std::move(*read);
    }
    for (const auto& type : (c->inline_levels ? *c->inline_levels : *loaded).types) {
      keys.insert(type.levels.begin(), type.levels.end());
      if (!type.node_label.empty()) keys.insert(type.node_label);
      for (const auto& [key, value] : type.node_selector) keys.insert(key);
    }
  }
  return keys;
}

// "a, b, c" of the first `n` items.
std::string comma_list_of(const std::vector<std::string>& items, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < n; ++i) out += (i ? ", " : "") + items[i];
  return out;
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

NodeLabelExportOptions AgentDaemon::label_export_options(const AgentConfig& config) {
  NodeLabelExportOptions options;
  options.enabled = config.export_node_labels;
  options.labels.key_prefix = config.node_label_prefix;
  options.labels.topograph_compatible = config.topograph_labels;
  return options;
}

std::expected<std::map<std::string, std::string>, Error> read_secret_data(k8s::KubeClient& client,
                                                                          const std::string& ns,
                                                                          const std::string& name) {
  auto secret = client.get(k8s::kSecretsResource, ns, name);
  if (!secret) return std::unexpected(secret.error().error.context("Secret " + ns + "/" + name));
  std::map<std::string, std::string> out;
  const json& data = (*secret).contains("data") ? (*secret)["data"] : json::object();
  if (!data.is_object()) return fail(ErrorCode::kParse, "Secret " + ns + "/" + name + ": data is not a map");
  for (const auto& [key, value] : data.items()) {
    if (!value.is_string()) continue;
    auto decoded = decode_base64(value.get<std::string>());
    // The key is named, the value never.
    if (!decoded)
      return fail(ErrorCode::kParse, "Secret " + ns + "/" + name + ": data." + key + " is not base64");
    out[key] = std::move(*decoded);
  }
  return out;
}

std::expected<std::map<std::string, std::string>, Error> AgentDaemon::read_secret(const std::string& ns,
                                                                                  const std::string& name) {
  return read_secret_data(*deps_.client, ns, name);
}

// Each warning a source or the build raises is logged once, when it first appears (a cached
// result repeats its warnings on every rebuild), and counted by source.
void AgentDaemon::report_warnings(const discoverers::PipelineResult& run) {
  std::map<std::string, std::set<std::string>> now;
  for (const auto& outcome : run.outcomes) {
    auto& set = now[outcome.source.substr(0, outcome.source.find(':'))];
    for (const auto& w : outcome.warnings) set.insert(w);
  }
  const auto& r = run.tree.report;
  auto& build = now["build"];
  for (const auto& w : r.warnings) build.insert(w);
  if (!r.unmapped_endpoints.empty())
    build.insert(std::to_string(r.unmapped_endpoints.size()) +
                 " unmapped endpoint(s) (no host in the node description, no GUID mapping), first " +
                 r.unmapped_endpoints.front().guid);
  if (!r.excluded_hosts.empty())
    build.insert(std::to_string(r.excluded_hosts.size()) +
                 " host(s) excluded: not in the Node list (first: " + r.excluded_hosts.front() + ")");
  if (!r.unattached_hosts.empty())
    build.insert(std::to_string(r.unattached_hosts.size()) +
                 " host(s) have no link to a switch and are in no domain");
  auto& counter = deps_.metrics->counter("hypertopo_source_warnings_total", "", {"source"});
  auto& gauge = deps_.metrics->gauge("hypertopo_source_warnings", "", {"source"});
  std::map<std::string, std::set<std::string>> before;
  {
    std::lock_guard lock(mutex_);
    before = warnings_seen_;
  }
  for (const auto& [source, lines] : now) {
    const auto& old = before[source];
    for (const auto& w : lines) {
      if (old.contains(w)) continue;
      log(telemetry::LogLevel::kWarn, source + ": " + w);
      counter.inc({source});
    }
    gauge.set({source}, static_cast<double>(lines.size()));
  }
  for (const auto& [source, lines] : before) {
    if (!now.contains(source)) gauge.set({source}, 0);
  }
  std::lock_guard lock(mutex_);
  warnings_seen_ = std::move(now);
}

void AgentDaemon::queue_node_labels(const AgentConfig& config, const topology::Tree* tree,
                                    bool allow_removal) {
  LabelWants wants;
  wants.options = label_export_options(config);
  wants.allow_removal = allow_removal;
  wants.parallel = config.parallel_writes;
  wants.export_on = config.export_node_labels;
  if (wants.options.enabled && tree != nullptr)
    wants.desired = std::make_shared<const std::map<std::string, LabelMap>>(
        topology::exporters::node_labels(*tree, wants.options.labels));
  {
    std::lock_guard lock(mutex_);
    label_wants_ = std::move(wants);
    ++label_generation_;
  }
  label_wake_.notify_all();
}

void AgentDaemon::label_loop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    LabelWants wants;
    std::uint64_t generation = 0;
    {
      std::unique_lock lock(mutex_);
      label_wake_.wait(lock, stop, [&] { return label_wants_.has_value(); });
      if (stop.stop_requested()) break;
      wants = std::move(*label_wants_);
      label_wants_.reset();
      generation = label_generation_;
      label_pass_running_ = true;
    }
    run_label_pass(wants, generation, stop);
    std::lock_guard lock(mutex_);
    label_pass_running_ = false;
    labels_pending_ = 0;
  }
  std::lock_guard lock(mutex_);
  label_pass_running_ = false;
}

void AgentDaemon::run_label_pass(const LabelWants& wants, std::uint64_t generation, std::stop_token stop) {
  const auto start = std::chrono::steady_clock::now();
  NodeLabelPlan plan;
  {
    // Planned over the view in place; only a Node's own export keys are read out of it.
    std::lock_guard lock(mutex_);
    plan = plan_node_labels(nodes_, wants.desired.get(), wants.options, wants.allow_removal);
    labels_pending_ = plan.writes.size();
  }
  auto& pending = deps_.metrics->gauge("hypertopo_node_labels_pending", "", {});
  auto& label_writes = deps_.metrics->counter("hypertopo_node_label_writes_total", "", {"outcome"});
  auto& api_writes = deps_.metrics->counter("hypertopo_api_writes_total", "", {"verb", "outcome"});
  pending.set({}, static_cast<double>(plan.writes.size()));
  const std::size_t planned = plan.writes.size();
  NodeLabelReconciler reconciler(deps_.label_client != nullptr ? *deps_.label_client : *deps_.client,
                                 wants.options);
  const NodeLabelResult result = reconciler.apply(
      std::move(plan), {.parallel = wants.parallel,
                        .superseded =
                            [&] {
                              std::lock_guard lock(mutex_);
                              return stop.stop_requested() || label_generation_ != generation;
                            },
                        .on_written =
                            [&](const std::string&, const json& stored) {
                              // What the server stored now stands in the view, so a later pass does not send
                              // the same patch again; the answer itself is not kept. Progress shows as each
                              // write lands.
                              label_writes.inc({"ok"});
                              api_writes.inc({"patch", "ok"});
                              std::lock_guard lock(mutex_);
                              nodes_.apply(io::NlohmannView(stored), wants.options);
                              if (labels_pending_ > 0) --labels_pending_;
                              ++counters_.node_label_writes;
                              pending.set({}, static_cast<double>(labels_pending_));
                            },
                        .stop = stop});
  for (const auto& [outcome, n] : result.writes) {
    if (outcome == "ok") continue;  // counted as they landed
    label_writes.inc({outcome}, n);
    api_writes.inc({"patch", outcome}, n);
    std::lock_guard lock(mutex_);
    counters_.node_label_writes += n;
  }
  pending.set({}, 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (result.unsent > 0) {
    // Newer wants came (the tree changed again): the next pass plans them from the view, where every
    // write of this one already stands.
    log(telemetry::LogLevel::kInfo, "node labels: " + std::to_string(result.patched) + " of " +
                                        std::to_string(planned) +
                                        " Node(s) written before newer labels were asked for");
    return;
  }
  deps_.metrics->gauge("hypertopo_node_labels_held", "", {}).set({}, result.held);
  {
    std::lock_guard lock(mutex_);
    counters_.last_label_summary = result.summary_line();
  }
  // One line per changed Node, up to a handful; a whole-fabric relabel is one more line.
  constexpr std::size_t kLinesShown = 10;
  for (std::size_t i = 0; i < result.changes.size() && i < kLinesShown; ++i) {
    const auto& c = result.changes[i];
    if (c.error.empty()) {
      log(telemetry::LogLevel::kInfo, "node labels: " + c.node + " " + c.detail);
    } else {
      log(telemetry::LogLevel::kWarn,
          "node labels: " + c.node + " not written (" + c.detail + "): " + c.error);
    }
  }
  if (result.changes.size() > kLinesShown) {
    log(telemetry::LogLevel::kInfo, "node labels: " + std::to_string(result.changes.size() - kLinesShown) +
                                        " more Node(s) changed; in all " + result.summary_line());
  }
  if (planned > 0) {
    char took[32];
    std::snprintf(took, sizeof took, "%.3f", seconds);
    log(telemetry::LogLevel::kInfo,
        std::string("node labels synced in ") + took + " s: " + result.summary_line());
  }
  if (!wants.export_on && result.patched > 0) {
    log(telemetry::LogLevel::kInfo, "node label export is off: its labels were removed from " +
                                        std::to_string(result.patched) + " Node(s)");
  }
}

void AgentDaemon::rebuild(std::stop_token stop) {
  AgentConfig cfg;
  std::vector<topology::NodeReport> reports;
  {
    std::lock_guard lock(mutex_);
    dirty_ = false;
    cfg = config_;
    reports.reserve(reports_.size());
    for (const auto& [name, r] : reports_) reports.push_back(r);
  }
  auto fail_cycle = [&](const std::string& why) {
    deps_.metrics->counter("hypertopo_reconcile_failures_total", "", {}).inc({});
    log(telemetry::LogLevel::kError, why);
  };
  // With the export off, the keys it once wrote come off whatever discovery does: that needs no
  // tree, and a broken source must not keep labels the admin turned off.
  if (!cfg.export_node_labels) queue_node_labels(cfg, nullptr, true);

  discoverers::PipelineInput input;
  std::vector<SourceConfig> leader_sources;
  for (const auto& s : cfg.sources) {
    if (s.enabled && s.role == SourceRole::kLeader) leader_sources.push_back(s);
  }
  if (leader_sources.empty()) {
    // The base deployment runs the node probes alone until the admin picks a fabric source: that
    // is said once, not reported as a failed cycle every time.
    if (!told_no_leader_source_.exchange(true))
      log(telemetry::LogLevel::kWarn, "no tree is built: the config has no enabled leader source (e.g. " +
                                          comma_list_of(leader_source_kinds(), 3) +
                                          "); the NodeReports are published all the same");
    return;
  }
  told_no_leader_source_ = false;
  registry_->set_intervals(leader_sources);
  for (const auto& s : leader_sources) {
    input.sources.push_back({.kind = s.kind, .arg = "", .settings = s.settings});
  }
  input.builder_options = cfg.builder;
  input.stop_on_source_error = false;
  input.deps.root = cfg.host_root;
  input.deps.work_dir = deps_.work_dir;
  input.deps.reports = &reports;
  input.deps.log = [this](const std::string& line) { log(telemetry::LogLevel::kDebug, line); };
  input.deps.read_secret =
      [this](const std::string& ns,
             const std::string& name) -> std::expected<std::map<std::string, std::string>, Error> {
    return read_secret(ns.empty() ? identity_.namespace_ : ns, name);
  };
  // The Nodes the selector takes, with only the labels the sources read: a projection of the view.
  k8s::NodeList nodes;
  const auto label_keys = pipeline_label_keys(cfg);
  {
    std::lock_guard lock(mutex_);
    nodes = nodes_.node_list(cfg.node_selector, label_keys);
  }
  // No Node at all (a fresh test cluster, or a watch that never filled): hosts are not filtered,
  // because filtering by an empty list would make every HyperNode look deleted.
  if (!nodes.items.empty()) input.deps.nodes = &nodes;

  const auto start = std::chrono::steady_clock::now();
  auto run = discoverers::run_discovery(registry_->registry(), input);
  bool ran_fresh = false;
  for (const auto& r : registry_->take_runs()) {
    auto kind = r.spec.substr(0, r.spec.find(':'));
    ran_fresh = ran_fresh || (r.fresh && r.ok);
    if (r.fresh) {
      deps_.metrics->histogram("hypertopo_discovery_duration_seconds", "", {"source"})
          .observe({kind}, r.seconds);
      {
        std::lock_guard lock(mutex_);
        ++counters_.source_runs;
      }
    }
    deps_.metrics->counter("hypertopo_discovery_runs_total", "", {"source", "outcome"})
        .inc({kind, !r.fresh ? "cached" : (r.ok ? "ok" : "error")});
    if (r.fresh && !r.ok) log(telemetry::LogLevel::kWarn, "source " + r.spec + " failed: " + r.error);
  }
  if (!run) return fail_cycle("discovery failed: " + run.error().message());
  report_warnings(*run);
  // Only a complete run of freshly discovered fabric is a new sample of every link's state; a
  // rebuild from cached results is marked from the history as it stands.
  link_history_.apply(run->tree, ran_fresh && run->complete);
  deps_.metrics->gauge("hypertopo_hypernodes_desired", "", {}).set({}, static_cast<double>(run->tree.size()));
  publish_fabric_health(*deps_.metrics, run->tree);

  const ReconcileOptions reconcile_options{
      .source = cfg.builder.source,
      .max_delete_fraction = cfg.max_delete_fraction,
      .min_objects_for_guard = static_cast<std::size_t>(cfg.min_objects_for_guard),
      .event_namespace = identity_.namespace_,
      .reporter = "hypertopo-agent",
      .parallel = cfg.parallel_writes,
      .stop = stop};
  // What the owned-HyperNode watch compares its events with, from before the first write goes out,
  // so that our own writes coming back are seen as such.
  auto desired = std::make_shared<const std::map<std::string, DesiredHyperNode>>(
      desired_hypernodes(run->tree, reconcile_options));
  {
    std::lock_guard lock(mutex_);
    owned_desired_before_ = std::exchange(owned_desired_, std::move(desired));
  }
  HyperNodeReconciler reconciler(*deps_.client, reconcile_options);
  auto result = reconciler.reconcile(run->tree, run->complete);
  if (stop.stop_requested()) {
    log(telemetry::LogLevel::kInfo, "stopped leading during a reconcile: what it had left is not written");
    return;
  }
  if (!result) return fail_cycle("reconcile failed: " + result.error().message());
  {
    // What this reconcile found or made exists, even if the watch has not said so yet: a relist that
    // misses it later means another writer deleted it.
    std::lock_guard lock(mutex_);
    for (const auto& a : result->actions) {
      if (a.kind == ActionKind::kCreate || a.kind == ActionKind::kUpdate ||
          a.kind == ActionKind::kUnchanged) {
        owned_seen_.insert(a.name);
      } else if (a.kind == ActionKind::kDelete) {
        owned_seen_.erase(a.name);
      }
    }
  }
  for (const auto& [key, n] : result->writes) {
    const auto slash = key.find('/');
    deps_.metrics->counter("hypertopo_api_writes_total", "", {"verb", "outcome"})
        .inc({key.substr(0, slash), slash == std::string::npos ? "" : key.substr(slash + 1)}, n);
  }
  deps_.metrics->gauge("hypertopo_held_deletions", "", {}).set({}, result->held);
  if (result->held > 0)
    deps_.metrics->counter("hypertopo_held_deletions_total", "", {}).inc({}, result->held);
  // Node labels follow the same tree, and the same rule for taking things away: nothing is removed
  // while discovery is incomplete or the HyperNode deletions were held back.
  if (cfg.export_node_labels) queue_node_labels(cfg, &run->tree, run->complete && result->held == 0);
  for (const auto& a : result->actions) {
    if (a.kind == ActionKind::kUnchanged) continue;
    log(a.kind == ActionKind::kFailed || a.kind == ActionKind::kForeign ? telemetry::LogLevel::kWarn
                                                                        : telemetry::LogLevel::kInfo,
        std::string(to_string(a.kind)) + " hypernode " + a.name +
            (a.detail.empty() ? "" : " (" + a.detail + ")"));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string summary = result->summary_line();
  {
    std::lock_guard lock(mutex_);
    counters_.last_summary = summary;
  }
  if (result->failed > 0) {
    return fail_cycle("reconcile: " + std::to_string(result->failed) + " write(s) did not land; " + summary);
  }
  deps_.metrics->gauge("hypertopo_last_reconcile_success_timestamp_seconds", "", {}).set({}, unix_seconds());
  char took[32];
  std::snprintf(took, sizeof took, "%.3f", seconds);
  const std::string labels = cfg.export_node_labels ? "; node labels queued beside it" : "";
  log(telemetry::LogLevel::kInfo,
      std::string("reconciled in ") + took + " s (" + std::to_string(reports.size()) + " NodeReports, " +
          std::to_string(nodes.items.size()) + " Nodes" + (run->complete ? "" : ", discovery incomplete") +
          "): " + summary + labels);
}

}  // namespace hypertopo::agent
