#include "agent/runtime/agent_daemon.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <set>

#include "agent/reconciler/hypernode_reconciler.h"
#include "agent/reconciler/node_label_reconciler.h"
#include "discoverers/ib-local/ib_local_probe.h"
#include "discoverers/nvlink/nvlink_probe.h"
#include "discoverers/pipeline/discovery_pipeline.h"
#include "discoverers/roce-lldp/roce_lldp.h"

namespace hypertopo::agent {
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

void publish_fabric_health(MetricsRegistry& metrics, const topology::Tree& tree) {
  auto& degraded = metrics.gauge("hypertopo_domain_degraded", "", {"hypernode"});
  for (const auto& d : tree.domains()) {
    if (d.health.assessed) degraded.set({d.name}, d.health.degraded() ? 1 : 0);
  }
  auto& links = metrics.gauge("hypertopo_fabric_links", "", {"state"});
  for (const auto& [state, names] : bad_links_by_state(tree))
    links.set({state}, static_cast<double>(names.size()));
}

}  // namespace

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr const char* kLevelNames[] = {"trace", "debug", "info", "warn", "error"};

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

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// The spec the agent compares: probedAt changes every round without any fact changing.
json comparable_spec(json spec) {
  if (spec.is_object()) spec.erase("probedAt");
  return spec;
}

bool selector_matches(const std::map<std::string, std::string>& selector, const json& node) {
  const json* labels = nullptr;
  if (auto m = node.find("metadata"); m != node.end() && m->is_object()) {
    if (auto l = m->find("labels"); l != m->end() && l->is_object()) labels = &*l;
  }
  for (const auto& [key, value] : selector) {
    if (labels == nullptr) return false;
    auto it = labels->find(key);
    if (it == labels->end() || !it->is_string() || it->get<std::string>() != value) return false;
  }
  return true;
}

std::string object_name(const json& object) {
  if (auto m = object.find("metadata"); m != object.end() && m->is_object()) {
    if (auto n = m->find("name"); n != m->end() && n->is_string()) return n->get<std::string>();
  }
  return "";
}

// "a, b, c" of the first `n` items.
std::string comma_list_of(const std::vector<std::string>& items, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < n; ++i) out += (i ? ", " : "") + items[i];
  return out;
}

NodeLabelExportOptions label_export_options(const AgentConfig& config) {
  NodeLabelExportOptions options;
  options.enabled = config.export_node_labels;
  options.labels.key_prefix = config.node_label_prefix;
  options.labels.topograph_compatible = config.topograph_labels;
  return options;
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::optional<LogLevel> parse_log_level(std::string_view text) {
  for (int i = 0; i < 5; ++i) {
    if (text == kLevelNames[i]) return static_cast<LogLevel>(i);
  }
  return std::nullopt;
}

Logger make_stderr_logger(LogLevel min) {
  auto mutex = std::make_shared<std::mutex>();
  return [min, mutex](LogLevel level, const std::string& message) {
    if (level < min) return;
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char stamp[96];  // room for any int the compiler can imagine in each field
    std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    std::lock_guard lock(*mutex);
    std::cerr << "ts=" << stamp << " level=" << kLevelNames[static_cast<int>(level)]
              << " msg=" << quote(message) << "\n";
  };
}

NodeProbe real_node_probe(Logger log) {
  return [log](const SourceConfig& source, const std::filesystem::path& host_root,
               topology::NodeReport& report) -> std::expected<void, Error> {
    auto line = [log](const std::string& text) {
      if (log) log(LogLevel::kDebug, text);
    };
    return builtin_registry().probe({.kind = source.kind, .arg = "", .settings = source.settings},
                                    {.root = host_root, .log = line}, report);
  };
}

// The builtin discoverers behind a cache: a cacheable source's last good result is reused until its
// interval has passed or a reload changed it.
class AgentDaemon::CachingRegistry {
 public:
  struct Run {
    std::string spec;
    bool fresh = false;  // ran now (false: the cached result)
    bool ok = false;
    double seconds = 0;
    std::string error;
  };

  // Every built-in source, leader sources behind the cache: a source whose entry says kInterval
  // (walks, UFM, captures) runs at most once per interval, whatever the number of rebuilds.
  CachingRegistry() {
    discoverers::register_builtin_discoverers(base_);
    for (const auto& kind : base_.kinds()) {
      discoverers::SourceEntry entry = *base_.entry(kind);
      if (entry.role == SourceRole::kLeader) {
        entry.factory = [this](const discoverers::SourceSpec& spec, const discoverers::DiscoveryDeps& deps)
            -> std::expected<std::unique_ptr<discoverers::Discoverer>, Error> {
          return std::make_unique<CachedSource>(*this, spec, deps);
        };
      }
      auto added = wrapped_.add(std::move(entry));
      (void)added;  // the entries come from a registry, so they are valid and unique
    }
  }

  const discoverers::DiscovererRegistry& registry() const { return wrapped_; }

  void set_intervals(const std::vector<SourceConfig>& sources) {
    std::lock_guard lock(mutex_);
    intervals_.clear();
    for (const auto& s : sources) intervals_[s.spec()] = s.interval;
  }
  void invalidate(const std::string& spec) {
    std::lock_guard lock(mutex_);
    cache_.erase(spec);
  }
  // When the first cached result runs out; nullopt when nothing is cached.
  std::optional<SteadyClock::time_point> next_due() const {
    std::lock_guard lock(mutex_);
    std::optional<SteadyClock::time_point> due;
    for (const auto& [spec, entry] : cache_) {
      auto it = intervals_.find(spec);
      if (it == intervals_.end()) continue;
      auto at = entry.at + it->second;
      if (!due || at < *due) due = at;
    }
    return due;
  }
  std::vector<Run> take_runs() {
    std::lock_guard lock(mutex_);
    return std::exchange(runs_, {});
  }

 private:
  struct Entry {
    std::expected<discoverers::Discovery, Error> result = std::unexpected(Error(ErrorCode::kInternal, ""));
    std::optional<discoverers::Discovery> last_good;
    SteadyClock::time_point at;
  };

  class CachedSource : public discoverers::Discoverer {
   public:
    CachedSource(CachingRegistry& owner, discoverers::SourceSpec spec, discoverers::DiscoveryDeps deps)
        : owner_(owner), spec_(std::move(spec)), deps_(std::move(deps)) {}
    std::string name() const override { return spec_.to_string(); }
    std::expected<discoverers::Discovery, Error> discover() override {
      const std::string key = spec_.to_string();
      const bool keep = owner_.base_.entry(spec_.kind)->cache == CachePolicy::kInterval;
      if (keep) {
        std::lock_guard lock(owner_.mutex_);
        auto it = owner_.cache_.find(key);
        auto interval = owner_.intervals_.find(key);
        if (it != owner_.cache_.end() && interval != owner_.intervals_.end() &&
            SteadyClock::now() < it->second.at + interval->second) {
          owner_.runs_.push_back({key, false, it->second.result.has_value(), 0, ""});
          return it->second.result;
        }
      }
      const auto start = SteadyClock::now();
      auto result = [&]() -> std::expected<discoverers::Discovery, Error> {
        auto source = owner_.base_.create(spec_, deps_);
        if (!source) return std::unexpected(source.error());
        return (*source)->discover();
      }();
      const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
      std::lock_guard lock(owner_.mutex_);
      owner_.runs_.push_back(
          {key, true, result.has_value(), seconds, result ? "" : result.error().message()});
      if (!keep) return result;
      if (!result) {
        // A fabric source that failed (UFM refusing the password or answering 5xx, a walk that timed
        // out) is not tried again before its interval has passed: a burst of rebuilds is no retry
        // storm, and a wrong password costs one error per interval. Meanwhile its last good
        // topology stands in for it, so a failure never shrinks the tree.
        auto& entry = owner_.cache_[key];
        entry.at = SteadyClock::now();
        if (entry.last_good) {
          owner_.runs_.back().error += " (the last good result is used until the next run)";
          entry.result = *entry.last_good;
          return *entry.last_good;
        }
        entry.result = std::unexpected(result.error());
        return result;
      }
      owner_.cache_[key] = Entry{*result, *result, SteadyClock::now()};
      return result;
    }

   private:
    CachingRegistry& owner_;
    discoverers::SourceSpec spec_;
    discoverers::DiscoveryDeps deps_;
  };

  discoverers::DiscovererRegistry base_, wrapped_;
  mutable std::mutex mutex_;
  std::map<std::string, std::chrono::seconds> intervals_;
  std::map<std::string, Entry> cache_;
  std::vector<Run> runs_;
};

AgentDaemon::AgentDaemon(AgentConfig config, AgentIdentity identity, AgentDeps deps)
    : identity_(std::move(identity)),
      deps_(std::move(deps)),
      config_(std::move(config)),
      registry_(std::make_unique<CachingRegistry>()) {
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
}

AgentDaemon::~AgentDaemon() { stop(); }

void AgentDaemon::log(LogLevel level, const std::string& message) const {
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
    elector_ =
        std::make_unique<k8s::LeaderElector>(*deps_.election_client, o, std::make_shared<k8s::SystemClock>());
    election_thread_ = std::jthread([this] { election_loop(); });
  }
  log(LogLevel::kInfo, "agent started on node " + identity_.node_name + " as " + identity_.pod_name +
                           " in namespace " + identity_.namespace_);
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
  log(LogLevel::kInfo, "agent stopped");
}

bool AgentDaemon::leading() const { return leading_.load(); }
bool AgentDaemon::ready() const { return ready_.load(); }

AgentDaemon::Counters AgentDaemon::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

void AgentDaemon::register_routes(HttpServer& server) {
  server.handle("GET", "/healthz", [this](const HttpServerRequest&) {
    if (running_.load()) return HttpServerResponse{.body = "ok\n"};
    return HttpServerResponse{.status = 503, .body = "stopped\n"};
  });
  server.handle("GET", "/readyz", [this](const HttpServerRequest&) {
    if (ready_.load()) return HttpServerResponse{.body = "ok\n"};
    return HttpServerResponse{.status = 503, .body = "this node's NodeReport is not published yet\n"};
  });
  server.handle("GET", "/metrics", [this](const HttpServerRequest&) {
    return HttpServerResponse{.content_type = "text/plain; version=0.0.4; charset=utf-8",
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
      if (!dirty_) first_event_ = SteadyClock::now();
      dirty_ = true;
      last_event_ = SteadyClock::now();
    }
    ++generation_;
  }
  for (const auto& note : change.notes) log(LogLevel::kInfo, "config reloaded: " + note);
  if (change.needs_restart)
    log(LogLevel::kWarn,
        "config reloaded: the HTTP port or the Lease name changed; "
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
          log(LogLevel::kWarn, "node source " + source.kind + " failed: " + probed.error().message());
        }
      }
      {
        std::lock_guard lock(mutex_);
        ++counters_.probes;
      }
      auto published = publish(report);
      if (published) {
        if (!ready_.exchange(true)) log(LogLevel::kInfo, "NodeReport " + identity_.node_name + " published");
      } else {
        log(LogLevel::kWarn,
            "publishing NodeReport " + identity_.node_name + ": " + published.error().message());
        wait = std::min(wait, std::chrono::seconds(30));
      }
    }
    std::unique_lock lock(mutex_);
    probe_wake_.wait_for(lock, stop, wait, [this] { return reprobe_; });
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
  log(LogLevel::kInfo, identity_.pod_name + " became the leader");
  {
    std::lock_guard lock(mutex_);
    synced_watches_ = 0;
    reports_.clear();
    nodes_.clear();
    dirty_ = false;
  }
  leader_thread_ = std::jthread([this](std::stop_token stop) { leader_loop(stop); });
}

void AgentDaemon::on_stopped_leading() {
  if (leader_thread_.joinable()) {
    leader_thread_.request_stop();
    wake_.notify_all();
    leader_thread_.join();
  }
  if (leading_.exchange(false)) {
    deps_.metrics->gauge("hypertopo_leader", "", {}).set({}, 0);
    log(LogLevel::kInfo, identity_.pod_name + " stopped leading");
  }
}

void AgentDaemon::mark_dirty() {
  {
    std::lock_guard lock(mutex_);
    const auto now = SteadyClock::now();
    if (!dirty_) first_event_ = now;
    dirty_ = true;
    last_event_ = now;
    ++generation_;
  }
  wake_.notify_all();
}

void AgentDaemon::watch_loop(std::stop_token stop, const k8s::Resource& resource, const std::string& ns) {
  const bool reports = resource.plural == kNodeReportsResource.plural;
  bool counted_sync = false;
  bool need_list = true;
  std::string rv;
  // Unknown NodeReport keys already logged: once per kind of key for the life of the watch, since
  // during a rolling upgrade every newer agent's report carries the same new field.
  std::set<std::string> unknown_keys_logged;
  auto pause = [&](std::chrono::milliseconds d) {
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, stop, d, [] { return false; });
  };
  // Applies one object to the leader's view; false when the change cannot alter the tree.
  auto apply = [&](const json& object, bool deleted) -> bool {
    const std::string name = object_name(object);
    if (name.empty()) return false;
    std::lock_guard lock(mutex_);
    if (!reports) {
      if (deleted) {
        nodes_.erase(name);
        return true;
      }
      auto it = nodes_.find(name);
      // The export's own label patches come back through this watch: they need no rebuild.
      const bool matters =
          it == nodes_.end() || !differs_only_in_export(it->second, object, label_export_options(config_));
      nodes_[name] = object;
      return matters;
    }
    if (deleted) {
      reports_.erase(name);
      return true;
    }
    std::vector<std::string> unknown_keys;
    auto parsed = topology::parse_node_report(object, &unknown_keys);
    for (const auto& key : unknown_keys) {
      if (unknown_keys_logged.size() < topology::kMaxUnknownKeys && unknown_keys_logged.insert(key).second) {
        log(LogLevel::kWarn, "NodeReport " + name + ": unknown key " + key +
                                 " ignored (logged once); written by another agent version, or misspelt?");
      }
    }
    if (!parsed) {
      // One bad report must not stop the others from counting; it is left out and said so.
      log(LogLevel::kWarn, "NodeReport " + name + " left out: " + parsed.error().message());
      reports_.erase(name);
      return true;
    }
    reports_[name] = std::move(*parsed);
    return true;
  };
  while (!stop.stop_requested()) {
    if (need_list) {
      auto listed = deps_.client->list(resource, ns);
      if (!listed) {
        log(LogLevel::kWarn, "listing " + resource.plural + ": " + listed.error().error.message());
        pause(std::chrono::seconds(2));
        continue;
      }
      {
        std::lock_guard lock(mutex_);
        if (reports) {
          reports_.clear();
        } else {
          nodes_.clear();
        }
      }
      for (const auto& item : listed->items) apply(item, false);
      rv = listed->resource_version;
      need_list = false;
      if (!counted_sync) {
        std::lock_guard lock(mutex_);
        ++synced_watches_;
        counted_sync = true;
      }
      mark_dirty();
    }
    auto end = deps_.client->watch(
        resource, ns, {.resource_version = rv},
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
      log(LogLevel::kInfo, "watch of " + resource.plural + " expired (410 Gone): listing again");
      need_list = true;
      continue;
    }
    log(LogLevel::kWarn, "watching " + resource.plural + ": " + end.error().error.message());
    pause(std::chrono::seconds(1));
  }
}

void AgentDaemon::leader_loop(std::stop_token stop) {
  std::jthread reports_watch(
      [this](std::stop_token s) { watch_loop(s, kNodeReportsResource, identity_.namespace_); });
  std::jthread nodes_watch([this](std::stop_token s) { watch_loop(s, k8s::kNodesResource, ""); });
  auto next_resync = SteadyClock::now();  // the first rebuild comes as soon as both lists are in
  std::uint64_t seen = 0;
  while (!stop.stop_requested()) {
    bool due = false;
    {
      std::unique_lock lock(mutex_);
      const auto now = SteadyClock::now();
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
        wake_.wait_until(lock, stop, deadline, [&] { return generation_ != seen; });
      }
    }
    if (!due || stop.stop_requested()) continue;
    rebuild();
    deps_.metrics->counter("hypertopo_rebuilds_total", "", {}).inc({});
    std::lock_guard lock(mutex_);
    ++counters_.rebuilds;  // counted once the cycle has ended, whatever its outcome
    next_resync = SteadyClock::now() + config_.resync;
  }
  reports_watch.request_stop();
  nodes_watch.request_stop();
}

std::expected<std::map<std::string, std::string>, Error> AgentDaemon::read_secret(const std::string& ns,
                                                                                  const std::string& name) {
  auto secret = deps_.client->get(k8s::kSecretsResource, ns, name);
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
      log(LogLevel::kWarn, source + ": " + w);
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

void AgentDaemon::sync_node_labels(const AgentConfig& config, const topology::Tree* tree,
                                   bool allow_removal) {
  const NodeLabelExportOptions options = label_export_options(config);
  NodeLabelPlan plan;
  {
    // Planned over the watch's view in place: Node objects are large, and there may be thousands.
    std::lock_guard lock(mutex_);
    plan = plan_node_labels(tree, nodes_, options, allow_removal);
  }
  NodeLabelReconciler reconciler(*deps_.client, options);
  const NodeLabelResult result = reconciler.apply(plan);
  auto& label_writes = deps_.metrics->counter("hypertopo_node_label_writes_total", "", {"outcome"});
  int sent = 0;
  for (const auto& [outcome, n] : result.writes) {
    label_writes.inc({outcome}, n);
    deps_.metrics->counter("hypertopo_api_writes_total", "", {"verb", "outcome"}).inc({"patch", outcome}, n);
    sent += n;
  }
  deps_.metrics->gauge("hypertopo_node_labels_held", "", {}).set({}, result.held);
  {
    std::lock_guard lock(mutex_);
    counters_.node_label_writes += sent;
    counters_.last_label_summary = result.summary_line();
    // What the server stored now stands in the view, so a rebuild before the watch event comes
    // does not send the same patch again.
    for (const auto& [name, object] : result.stored) {
      if (nodes_.contains(name)) nodes_[name] = object;
    }
  }
  // One line per changed Node, up to a handful; a whole-fabric relabel is one more line.
  constexpr std::size_t kLinesShown = 10;
  for (std::size_t i = 0; i < result.changes.size() && i < kLinesShown; ++i) {
    const auto& c = result.changes[i];
    if (c.error.empty()) {
      log(LogLevel::kInfo, "node labels: " + c.node + " " + c.detail);
    } else {
      log(LogLevel::kWarn, "node labels: " + c.node + " not written (" + c.detail + "): " + c.error);
    }
  }
  if (result.changes.size() > kLinesShown) {
    log(LogLevel::kInfo, "node labels: " + std::to_string(result.changes.size() - kLinesShown) +
                             " more Node(s) changed; in all " + result.summary_line());
  }
  if (!config.export_node_labels && result.patched > 0) {
    log(LogLevel::kInfo, "node label export is off: its labels were removed from " +
                             std::to_string(result.patched) + " Node(s)");
  }
}

void AgentDaemon::rebuild() {
  AgentConfig cfg;
  std::vector<topology::NodeReport> reports;
  json node_items = json::array();
  {
    std::lock_guard lock(mutex_);
    dirty_ = false;
    cfg = config_;
    reports.reserve(reports_.size());
    for (const auto& [name, r] : reports_) reports.push_back(r);
    for (const auto& [name, n] : nodes_) {
      if (selector_matches(cfg.node_selector, n)) node_items.push_back(n);
    }
  }
  auto fail_cycle = [&](const std::string& why) {
    deps_.metrics->counter("hypertopo_reconcile_failures_total", "", {}).inc({});
    log(LogLevel::kError, why);
  };
  // With the export off, the keys it once wrote come off whatever discovery does: that needs no
  // tree, and a broken source must not keep labels the admin turned off.
  if (!cfg.export_node_labels) sync_node_labels(cfg, nullptr, true);

  discoverers::PipelineInput input;
  std::vector<SourceConfig> leader_sources;
  for (const auto& s : cfg.sources) {
    if (s.enabled && s.role == SourceRole::kLeader) leader_sources.push_back(s);
  }
  if (leader_sources.empty()) {
    // The base deployment runs the node probes alone until the admin picks a fabric source: that
    // is said once, not reported as a failed cycle every time.
    if (!told_no_leader_source_.exchange(true))
      log(LogLevel::kWarn, "no tree is built: the config has no enabled leader source (e.g. " +
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
  input.deps.log = [this](const std::string& line) { log(LogLevel::kDebug, line); };
  input.deps.read_secret =
      [this](const std::string& ns,
             const std::string& name) -> std::expected<std::map<std::string, std::string>, Error> {
    return read_secret(ns.empty() ? identity_.namespace_ : ns, name);
  };
  auto nodes = k8s::parse_node_list(json{{"kind", "NodeList"}, {"items", node_items}});
  if (!nodes) return fail_cycle("rebuild skipped: the Node list: " + nodes.error().message());
  // No Node at all (a fresh test cluster, or a watch that never filled): hosts are not filtered,
  // because filtering by an empty list would make every HyperNode look deleted.
  if (!nodes->items.empty()) input.deps.nodes = &*nodes;

  const auto start = SteadyClock::now();
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
    if (r.fresh && !r.ok) log(LogLevel::kWarn, "source " + r.spec + " failed: " + r.error);
  }
  if (!run) return fail_cycle("discovery failed: " + run.error().message());
  report_warnings(*run);
  // Only a complete run of freshly discovered fabric is a new sample of every link's state; a
  // rebuild from cached results is marked from the history as it stands.
  link_history_.apply(run->tree, ran_fresh && run->complete);
  deps_.metrics->gauge("hypertopo_hypernodes_desired", "", {}).set({}, static_cast<double>(run->tree.size()));
  publish_fabric_health(*deps_.metrics, run->tree);

  HyperNodeReconciler reconciler(
      *deps_.client, {.source = cfg.builder.source,
                      .max_delete_fraction = cfg.max_delete_fraction,
                      .min_objects_for_guard = static_cast<std::size_t>(cfg.min_objects_for_guard),
                      .event_namespace = identity_.namespace_,
                      .reporter = "hypertopo-agent"});
  auto result = reconciler.reconcile(run->tree, run->complete);
  if (!result) return fail_cycle("reconcile failed: " + result.error().message());
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
  if (cfg.export_node_labels) sync_node_labels(cfg, &run->tree, run->complete && result->held == 0);
  for (const auto& a : result->actions) {
    if (a.kind == ActionKind::kUnchanged) continue;
    log(a.kind == ActionKind::kFailed || a.kind == ActionKind::kForeign ? LogLevel::kWarn : LogLevel::kInfo,
        std::string(to_string(a.kind)) + " hypernode " + a.name +
            (a.detail.empty() ? "" : " (" + a.detail + ")"));
  }
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
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
  std::string labels;
  if (cfg.export_node_labels) {
    std::lock_guard lock(mutex_);
    labels = "; node labels " + counters_.last_label_summary;
  }
  log(LogLevel::kInfo, std::string("reconciled in ") + took + " s (" + std::to_string(reports.size()) +
                           " NodeReports, " + std::to_string(node_items.size()) + " Nodes" +
                           (run->complete ? "" : ", discovery incomplete") + "): " + summary + labels);
}

}  // namespace hypertopo::agent
