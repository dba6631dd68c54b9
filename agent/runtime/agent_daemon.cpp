#include "agent/runtime/agent_daemon.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <set>

#include "agent/reconciler/hypernode_reconciler.h"
#include "agent/reconciler/node_label_reconciler.h"
#include "agent/runtime/source_cache.h"
#include "discoverers/ib-local/ib_local_probe.h"
#include "discoverers/nvlink/nvlink_probe.h"
#include "discoverers/pipeline/discovery_pipeline.h"
#include "discoverers/roce-lldp/roce_lldp.h"
#include "io/json_view.h"
#include "topology/hypernode.h"

namespace hypertopo::agent {

using json = nlohmann::json;
// How long a source or a rebuild took is measured in real time; what the loops plan (debounce,
// periods) runs on deps_.clock.
using SteadyClock = std::chrono::steady_clock;

namespace {

// The spec the agent compares: probedAt changes every round without any fact changing.
json comparable_spec(json spec) {
  if (spec.is_object()) spec.erase("probedAt");
  return spec;
}

std::string object_name(const json& object) {
  if (auto m = object.find("metadata"); m != object.end() && m->is_object()) {
    if (auto n = m->find("name"); n != m->end() && n->is_string()) return n->get<std::string>();
  }
  return "";
}

AgentDeps with_default_clock(AgentDeps deps) {
  if (!deps.clock) deps.clock = std::make_shared<timing::SystemClock>();
  return deps;
}

}  // namespace

NodeProbe real_node_probe(telemetry::Logger log) {
  return [log](const SourceConfig& source, const std::filesystem::path& host_root,
               topology::NodeReport& report) -> std::expected<void, Error> {
    auto line = [log](const std::string& text) {
      if (log) log(telemetry::LogLevel::kDebug, text);
    };
    return builtin_registry().probe({.kind = source.kind, .arg = "", .settings = source.settings},
                                    {.root = host_root, .log = line}, report);
  };
}

AgentDaemon::AgentDaemon(AgentConfig config, AgentIdentity identity, AgentDeps deps)
    : identity_(std::move(identity)),
      deps_(with_default_clock(std::move(deps))),
      config_(std::move(config)),
      registry_(std::make_unique<SourceCache>(*deps_.clock)) {
  if (!deps_.probe) deps_.probe = real_node_probe(deps_.log);
  auto& m = *deps_.metrics;
  // Register every family up front so /metrics shows them before the first event.
  m.histogram("hypertopo_discovery_duration_seconds", "Time one discovery source took, by source.",
              {"source"});
  m.counter("hypertopo_discovery_runs_total",
            "Discovery source runs by source and outcome (ok, error, cached).", {"source", "outcome"});
  m.counter("hypertopo_api_writes_total", "Kubernetes API writes by verb and outcome.", {"verb", "outcome"});
  m.gauge("hypertopo_held_deletions",
          "HyperNode deletions the mass-deletion guard or an incomplete "
          "discovery held back in the last reconcile.",
          {});
  m.counter("hypertopo_held_deletions_total", "HyperNode deletions held back, summed over reconciles.", {});
  m.gauge("hypertopo_leader", "1 while this pod holds the leader Lease.", {});
  m.gauge("hypertopo_last_reconcile_success_timestamp_seconds",
          "Unix time of the last reconcile whose writes all landed.", {});
  m.counter("hypertopo_rebuilds_total", "Leader discover, build and reconcile cycles.", {});
  m.gauge("hypertopo_hypernodes_desired", "HyperNodes in the last built tree.", {});
  m.gauge("hypertopo_domain_degraded", "1 while a HyperNode's FabricDegraded condition is True, else 0.",
          {"hypernode"});
  m.gauge("hypertopo_fabric_links", "Bad links in the last built tree, by state (degraded, down, missing).",
          {"state"});
  m.counter("hypertopo_reconcile_failures_total", "Reconciles that failed or left writes unlanded.", {});
  m.counter("hypertopo_source_warnings_total",
            "Warnings raised by a source (or the build), each counted once when it first appears.",
            {"source"});
  m.gauge("hypertopo_source_warnings", "Warnings the last rebuild's result carries, by source.", {"source"});
  m.gauge("hypertopo_node_labels_pending",
          "Node label PATCHes the running export pass has still to send (0 when none is running).", {});
  m.counter("hypertopo_node_label_writes_total", "Node label PATCHes sent, by outcome.", {"outcome"});
  m.counter("hypertopo_owned_hypernode_drift_total",
            "Owned HyperNodes found deleted or changed by another writer (each starts a rebuild that "
            "restores it).",
            {"change"});
}

AgentDaemon::~AgentDaemon() { stop(); }

void AgentDaemon::log(telemetry::LogLevel level, const std::string& message) const {
  if (deps_.log) deps_.log(level, message);
}

void AgentDaemon::count_write(const std::string& verb, const std::string& outcome) {
  deps_.metrics->counter("hypertopo_api_writes_total", "", {"verb", "outcome"}).inc({verb, outcome});
}

void AgentDaemon::start() {
  if (running_.exchange(true)) return;
  std::vector<SourceConfig> node_sources;
  {
    std::lock_guard lock(mutex_);
    for (const auto& s : config_.sources) {
      if (s.enabled && s.role == SourceRole::kNodeProbe) node_sources.push_back(s);
    }
  }
  if (node_sources.empty()) ready_ = true;
  probe_thread_ = std::jthread([this](std::stop_token stop) { probe_loop(stop); });
  if (deps_.election_client != nullptr) {
    k8s::LeaderElectionOptions o;
    {
      std::lock_guard lock(mutex_);
      o.lease_namespace = identity_.namespace_;
      o.lease_name = config_.lease_name;
      o.identity = identity_.pod_name;
      o.lease_duration = config_.lease_duration;
      o.renew_deadline = config_.renew_deadline;
      o.retry_period = config_.retry_period;
    }
    elector_ = std::make_unique<k8s::LeaderElector>(*deps_.election_client, o,
                                                    std::make_shared<timing::SystemClock>());
    election_thread_ = std::jthread([this] { election_loop(); });
  }
  log(telemetry::LogLevel::kInfo, "agent started on node " + identity_.node_name + " as " +
                                      identity_.pod_name + " in namespace " + identity_.namespace_);
}

void AgentDaemon::stop() {
  if (!running_.exchange(false)) return;
  // Stop acting as leader before the Lease is released, so no successor overlaps our writes.
  if (elector_) elector_->stop();
  if (election_thread_.joinable()) election_thread_.join();
  on_stopped_leading();
  probe_thread_.request_stop();
  probe_wake_.notify_all();
  if (probe_thread_.joinable()) probe_thread_.join();
  log(telemetry::LogLevel::kInfo, "agent stopped");
}

bool AgentDaemon::leading() const { return leading_.load(); }
bool AgentDaemon::ready() const { return ready_.load(); }

AgentDaemon::Counters AgentDaemon::counters() const {
  std::lock_guard lock(mutex_);
  Counters c = counters_;
  if (rebuilding_) {
    c.last_summary = cycle_start_.last_summary;
    c.last_label_summary = cycle_start_.last_label_summary;
    c.source_runs = cycle_start_.source_runs;
    c.node_label_writes = cycle_start_.node_label_writes;
  }
  c.reports_known = reports_.size();
  c.node_labels_pending = labels_pending_;
  c.rebuild_pending = dirty_ || rebuilding_ || label_wants_.has_value() || label_pass_running_;
  return c;
}

void AgentDaemon::register_routes(net::HttpServer& server) {
  server.handle("GET", "/healthz", [this](const net::HttpServerRequest&) {
    if (running_.load()) return net::HttpServerResponse{.body = "ok\n"};
    return net::HttpServerResponse{.status = 503, .body = "stopped\n"};
  });
  server.handle("GET", "/readyz", [this](const net::HttpServerRequest&) {
    if (!ready_.load())
      return net::HttpServerResponse{.status = 503, .body = "this node's NodeReport is not published yet\n"};
    if (auto late = registry_->overdue(); !late.empty()) {
      std::string body;
      for (const auto& o : late) {
        char running[32];
        std::snprintf(running, sizeof running, "%.0f", o.running_seconds);
        body += "fabric source " + o.spec + " has not returned within its deadline of " +
                std::to_string(o.deadline.count()) + "s (running for " + running + "s)\n";
      }
      return net::HttpServerResponse{.status = 503, .body = body};
    }
    return net::HttpServerResponse{.body = "ok\n"};
  });
  server.handle("GET", "/metrics", [this](const net::HttpServerRequest&) {
    return net::HttpServerResponse{.content_type = "text/plain; version=0.0.4; charset=utf-8",
                                   .body = deps_.metrics->render()};
  });
}

void AgentDaemon::reload(AgentConfig next) {
  ConfigChange change;
  bool probe_again = false;
  {
    std::lock_guard lock(mutex_);
    change = diff_configs(config_, next);
    for (const auto& spec : change.restarted_sources) {
      registry_->invalidate(spec);
      for (const auto* list : {&config_.sources, &next.sources}) {
        for (const auto& s : *list) {
          if (s.spec() == spec && s.role == SourceRole::kNodeProbe) probe_again = true;
        }
      }
    }
    const bool restart_needed = change.needs_restart;
    const auto lease_name = config_.lease_name;
    const auto port = config_.http_port;
    config_ = std::move(next);
    if (restart_needed) {
      // The listener and the elector keep what they started with until the pod restarts.
      config_.lease_name = lease_name;
      config_.http_port = port;
    }
    if (probe_again) reprobe_ = true;
    // Any change (guard, selector, tier names, sources) can change what the reconcile writes; a
    // rebuild reuses the cached results of the sources that did not change, so it is cheap.
    if (change.builder_changed || !change.restarted_sources.empty() || !change.notes.empty()) {
      const auto now = deps_.clock->now();
      if (!dirty_) first_event_ = now;
      dirty_ = true;
      last_event_ = now;
    }
    ++generation_;
  }
  for (const auto& note : change.notes) log(telemetry::LogLevel::kInfo, "config reloaded: " + note);
  if (change.needs_restart)
    log(telemetry::LogLevel::kWarn,
        "config reloaded: the HTTP port, the Lease name or the API client's qps or burst changed; "
        "they take effect when the pod restarts");
  wake_.notify_all();
  probe_wake_.notify_all();
}

// ----------------------------------------------------------------------------------------------
// Every pod: probe this node and publish the NodeReport when its facts changed.

void AgentDaemon::probe_loop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    std::vector<SourceConfig> sources;
    std::filesystem::path root;
    {
      std::lock_guard lock(mutex_);
      for (const auto& s : config_.sources) {
        if (s.enabled && s.role == SourceRole::kNodeProbe) sources.push_back(s);
      }
      root = config_.host_root;
      reprobe_ = false;
    }
    // The node sources run together at the shortest of their intervals; a failed publish is tried
    // again after at most 30 s.
    std::chrono::seconds wait{3600};
    if (!sources.empty()) {
      topology::NodeReport report;
      report.node_name = identity_.node_name;
      report.probed_at = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
      for (const auto& source : sources) {
        wait = std::min(wait, source.interval);
        const auto start = SteadyClock::now();
        auto probed = deps_.probe(source, root, report);
        const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
        deps_.metrics->histogram("hypertopo_discovery_duration_seconds", "", {"source"})
            .observe({source.kind}, seconds);
        deps_.metrics->counter("hypertopo_discovery_runs_total", "", {"source", "outcome"})
            .inc({source.kind, probed ? "ok" : "error"});
        if (!probed) {
          // A degraded probe still publishes what the others found; the report says what is missing.
          report.warnings.push_back(source.kind + ": " + probed.error().message());
          log(telemetry::LogLevel::kWarn,
              "node source " + source.kind + " failed: " + probed.error().message());
        }
      }
      {
        std::lock_guard lock(mutex_);
        ++counters_.probes;
      }
      auto published = publish(report);
      if (published) {
        if (!ready_.exchange(true))
          log(telemetry::LogLevel::kInfo, "NodeReport " + identity_.node_name + " published");
      } else {
        log(telemetry::LogLevel::kWarn,
            "publishing NodeReport " + identity_.node_name + ": " + published.error().message());
        wait = std::min(wait, std::chrono::seconds(30));
      }
    }
    std::unique_lock lock(mutex_);
    deps_.clock->wait_until(probe_wake_, lock, stop, deps_.clock->now() + wait, [this] { return reprobe_; });
  }
}

std::expected<bool, Error> AgentDaemon::publish(const topology::NodeReport& report) {
  json object = topology::render_node_report(report);
  object["metadata"]["namespace"] = identity_.namespace_;
  object["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "hypertopo"}};
  auto current = deps_.client->get(kNodeReportsResource, identity_.namespace_, report.node_name);
  if (!current) {
    if (!current.error().not_found()) return std::unexpected(current.error().error);
    auto made = deps_.client->create(kNodeReportsResource, identity_.namespace_, object);
    count_write("create", made ? "ok" : (made.error().already_exists() ? "exists" : "error"));
    if (!made) return std::unexpected(made.error().error.context("creating NodeReport " + report.node_name));
    std::lock_guard lock(mutex_);
    ++counters_.reports_written;
    return true;
  }
  if (comparable_spec((*current)["spec"]) == comparable_spec(object["spec"])) return false;
  auto put = deps_.client->update_with_retry(
      kNodeReportsResource, identity_.namespace_, report.node_name, [&](json& o) {
        if (comparable_spec(o["spec"]) == comparable_spec(object["spec"])) return false;
        o["spec"] = object["spec"];
        return true;
      });
  if (!put) {
    count_write("update", put.error().conflict() ? "conflict" : "error");
    return std::unexpected(put.error().error.context("updating NodeReport " + report.node_name));
  }
  if (put->conflicts > 0) count_write("update", "conflict");
  if (!put->written) return false;
  count_write("update", "ok");
  std::lock_guard lock(mutex_);
  ++counters_.reports_written;
  return true;
}

// ----------------------------------------------------------------------------------------------
// Leader election and the leader's loops.

void AgentDaemon::election_loop() {
  elector_->run([this] { on_started_leading(); }, [this] { on_stopped_leading(); });
}

void AgentDaemon::on_started_leading() {
  leading_ = true;
  deps_.metrics->gauge("hypertopo_leader", "", {}).set({}, 1);
  log(telemetry::LogLevel::kInfo, identity_.pod_name + " became the leader");
  {
    std::lock_guard lock(mutex_);
    synced_watches_ = 0;
    reports_.clear();
    owned_desired_.reset();
    owned_desired_before_.reset();
    owned_seen_.clear();
    nodes_.begin_relist();
    nodes_.end_relist();  // empty: the new term lists them again
    dirty_ = false;
  }
  leader_thread_ = std::jthread([this](std::stop_token stop) { leader_loop(stop); });
}

void AgentDaemon::on_stopped_leading() {
  // The term ends now: its requests in flight are abandoned and nothing it queued is sent (the stop
  // token reaches every write, retry and backoff); the loops are then joined.
  if (leader_thread_.joinable()) {
    leader_thread_.request_stop();
    wake_.notify_all();
  }
  if (leading_.exchange(false)) {
    deps_.metrics->gauge("hypertopo_leader", "", {}).set({}, 0);
    log(telemetry::LogLevel::kInfo, identity_.pod_name + " stopped leading");
  }
  if (leader_thread_.joinable()) leader_thread_.join();
}

void AgentDaemon::mark_dirty() {
  {
    std::lock_guard lock(mutex_);
    const auto now = deps_.clock->now();
    if (!dirty_) first_event_ = now;
    dirty_ = true;
    last_event_ = now;
    ++generation_;
  }
  wake_.notify_all();
}

void AgentDaemon::watch_loop(std::stop_token stop, const k8s::Resource& resource, const std::string& ns) {
  const bool reports = resource.plural == kNodeReportsResource.plural;
  // The HyperNodes we own: an event is only compared with what the last tree wants of the object.
  const bool owned = resource.plural == kHyperNodesResource.plural;
  k8s::ListOptions list_options;
  if (owned) {
    std::lock_guard lock(mutex_);
    list_options.label_selector = std::string(topology::kSourceLabel) + "=" + config_.builder.source + "," +
                                  topology::kManagedByLabel + "=" + topology::kManagedByValue;
  }
  bool counted_sync = false;
  bool need_list = true;
  std::string rv;
  // Unknown NodeReport keys already logged: once per kind of key for the life of the watch, since
  // during a rolling upgrade every newer agent's report carries the same new field.
  std::set<std::string> unknown_keys_logged;
  auto pause = [&](std::chrono::milliseconds d) {
    std::unique_lock lock(mutex_);
    deps_.clock->wait_until(wake_, lock, stop, deps_.clock->now() + d, [] { return false; });
  };
  // Applies one object to the leader's view; false when the change cannot alter the tree.
  auto apply = [&](const json& object, bool deleted) -> bool {
    const std::string name = object_name(object);
    if (name.empty()) return false;
    std::lock_guard lock(mutex_);
    if (owned) {
      bool existed = true;
      if (deleted) {
        existed = owned_seen_.erase(name) > 0;
      } else {
        owned_seen_.insert(name);
      }
      if (!owned_desired_) return false;
      auto it = owned_desired_->find(name);
      if (it == owned_desired_->end()) return false;  // not wanted now: a held deletion, or a stale event
      // Never seen: this term's reconcile has not created it yet (a list that came after the tree but
      // before the create). Nobody deleted it; another cycle makes sure it is created.
      if (deleted && !existed) return true;
      const std::string what = deleted ? "" : hypernode_drift(object, it->second);
      if (!deleted && what.empty()) return false;  // as wanted: our own write coming back, or another's no-op
      if (!deleted && owned_desired_before_) {
        // What the previous tree wanted: a write of ours from the last cycle, seen after this cycle's
        // tree was built; this cycle's reconcile writes the new state anyway.
        auto before = owned_desired_before_->find(name);
        if (before != owned_desired_before_->end() && hypernode_drift(object, before->second).empty())
          return false;
      }
      deps_.metrics->counter("hypertopo_owned_hypernode_drift_total", "", {"change"})
          .inc({deleted ? "deleted" : "changed"});
      log(telemetry::LogLevel::kInfo, "HyperNode " + name +
                                          (deleted ? " was deleted" : " was changed (" + what + ")") +
                                          " by another writer: restoring it");
      return true;
    }
    if (!reports) {
      if (deleted) return nodes_.erase(name);
      // The export's own label patches come back through this watch: they need no rebuild.
      return nodes_.apply(io::NlohmannView(object), label_export_options(config_));
    }
    if (deleted) {
      reports_.erase(name);
      return true;
    }
    std::vector<std::string> unknown_keys;
    auto parsed = topology::parse_node_report(object, &unknown_keys);
    for (const auto& key : unknown_keys) {
      if (unknown_keys_logged.size() < topology::kMaxUnknownKeys && unknown_keys_logged.insert(key).second) {
        log(telemetry::LogLevel::kWarn,
            "NodeReport " + name + ": unknown key " + key +
                " ignored (logged once); written by another agent version, or misspelt?");
      }
    }
    if (!parsed) {
      // One bad report must not stop the others from counting; it is left out and said so.
      log(telemetry::LogLevel::kWarn, "NodeReport " + name + " left out: " + parsed.error().message());
      reports_.erase(name);
      return true;
    }
    reports_[name] = std::move(*parsed);
    return true;
  };
  while (!stop.stop_requested()) {
    if (need_list) {
      // Page by page, each page read into the view and dropped: a list of 10,000 Nodes never sits in
      // memory whole. What the list no longer has leaves the view when it ends.
      std::set<std::string> listed_reports;
      bool drifted = false;
      if (!reports && !owned) {
        std::lock_guard lock(mutex_);
        nodes_.begin_relist();
      }
      auto listed = deps_.client->list_each_page(
          resource, ns, list_options, [&](std::string& page) -> k8s::ApiResult<void> {
            if (owned) {
              json parsed = json::parse(page, nullptr, /*allow_exceptions=*/false);
              if (parsed.is_discarded() || !parsed.contains("items") || !parsed["items"].is_array())
                return {};
              for (const auto& item : parsed["items"]) {
                listed_reports.insert(object_name(item));
                drifted = apply(item, false) || drifted;
              }
              return {};
            }
            if (!reports) {
              std::lock_guard lock(mutex_);
              auto read = nodes_.apply_page(page, label_export_options(config_));
              if (!read)
                return std::unexpected(k8s::ApiError{read.error(), 200, "", read.error().message(), {}});
              return {};
            }
            json parsed = json::parse(page, nullptr, /*allow_exceptions=*/false);
            if (parsed.is_discarded() || !parsed.contains("items") || !parsed["items"].is_array()) return {};
            for (const auto& item : parsed["items"]) {
              listed_reports.insert(object_name(item));
              apply(item, false);
            }
            return {};
          });
      if (!listed) {
        if (!reports && !owned) {
          std::lock_guard lock(mutex_);
          nodes_.end_relist();
        }
        log(telemetry::LogLevel::kWarn, "listing " + resource.plural + ": " + listed.error().error.message());
        pause(std::chrono::seconds(2));
        continue;
      }
      if (owned) {
        // A (re)list after a 410 or a cut watch: what went missing meanwhile is as good as deleted.
        std::vector<std::string> missing;
        {
          std::lock_guard lock(mutex_);
          if (owned_desired_) {
            for (const auto& [name, want] : *owned_desired_) {
              if (!listed_reports.contains(name)) missing.push_back(name);
            }
          }
        }
        for (const auto& name : missing) {
          drifted = apply(json{{"metadata", {{"name", name}}}}, true) || drifted;
        }
        {
          // Gone while unwatched, wanted or not: seen again only once it exists again.
          std::lock_guard lock(mutex_);
          std::erase_if(owned_seen_, [&](const std::string& name) { return !listed_reports.contains(name); });
        }
        rv = *listed;
        need_list = false;
        if (drifted) mark_dirty();
        continue;
      }
      {
        std::lock_guard lock(mutex_);
        if (reports) {
          std::erase_if(reports_, [&](const auto& entry) { return !listed_reports.contains(entry.first); });
        } else {
          nodes_.end_relist();
        }
      }
      rv = *listed;
      need_list = false;
      if (!counted_sync) {
        std::lock_guard lock(mutex_);
        ++synced_watches_;
        counted_sync = true;
      }
      mark_dirty();
    }
    auto end = deps_.client->watch(
        resource, ns, {.resource_version = rv, .label_selector = list_options.label_selector},
        [&](const k8s::WatchEvent& e) {
          if (e.type == k8s::WatchEvent::Type::kBookmark) return true;
          if (apply(e.object, e.type == k8s::WatchEvent::Type::kDeleted)) mark_dirty();
          return true;
        },
        stop);
    if (end) {
      rv = end->resource_version;
      if (end->reason == k8s::WatchEnd::Reason::kStopped) break;
      continue;
    }
    if (end.error().gone()) {
      log(telemetry::LogLevel::kInfo, "watch of " + resource.plural + " expired (410 Gone): listing again");
      need_list = true;
      continue;
    }
    log(telemetry::LogLevel::kWarn, "watching " + resource.plural + ": " + end.error().error.message());
    pause(std::chrono::seconds(1));
  }
}

void AgentDaemon::leader_loop(std::stop_token stop) {
  std::jthread reports_watch(
      [this](std::stop_token s) { watch_loop(s, kNodeReportsResource, identity_.namespace_); });
  std::jthread nodes_watch([this](std::stop_token s) { watch_loop(s, k8s::kNodesResource, ""); });
  std::jthread owned_watch([this](std::stop_token s) { watch_loop(s, kHyperNodesResource, ""); });
  // The node label export runs beside the rebuilds: a tree change is reconciled while thousands of
  // label PATCHes are still on their way.
  {
    std::lock_guard lock(mutex_);
    label_wants_.reset();
    labels_pending_ = 0;
  }
  std::jthread labels([this](std::stop_token s) { label_loop(s); });
  auto next_resync = deps_.clock->now();  // the first rebuild comes as soon as both lists are in
  std::uint64_t seen = 0;
  while (!stop.stop_requested()) {
    bool due = false;
    {
      std::unique_lock lock(mutex_);
      const auto now = deps_.clock->now();
      const auto debounce = config_.debounce;
      const auto max_delay = std::max<std::chrono::milliseconds>(debounce * 10, std::chrono::seconds(10));
      auto deadline = next_resync;
      if (auto source_due = registry_->next_due(); source_due && *source_due < deadline)
        deadline = *source_due;
      if (dirty_) deadline = std::min(deadline, std::min(last_event_ + debounce, first_event_ + max_delay));
      if (synced_watches_ < 2) deadline = now + std::chrono::hours(1);  // wait for both lists
      if (now >= deadline) {
        due = true;
      } else {
        seen = generation_;
        deps_.clock->wait_until(wake_, lock, stop, deadline, [&] { return generation_ != seen; });
      }
    }
    if (!due || stop.stop_requested()) continue;
    {
      std::lock_guard lock(mutex_);
      rebuilding_ = true;
      cycle_start_ = counters_;
    }
    rebuild(stop);
    deps_.metrics->counter("hypertopo_rebuilds_total", "", {}).inc({});
    std::lock_guard lock(mutex_);
    ++counters_.rebuilds;  // counted once the cycle has ended, whatever its outcome
    rebuilding_ = false;
    next_resync = deps_.clock->now() + config_.resync;
  }
  reports_watch.request_stop();
  nodes_watch.request_stop();
  owned_watch.request_stop();
  labels.request_stop();
  label_wake_.notify_all();
}

}  // namespace hypertopo::agent
