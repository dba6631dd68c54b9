// The agent config's sections on how the agent runs: nodeSelector, guard, leaderElection (with
// client-go's timing rules), reconcile, http, logLevel and apiClient.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "agent/config/config_sections.h"
#include "io/config_reader.h"
#include "topology/tree.h"

namespace hypertopo::agent::sections {
namespace {

using std::chrono::milliseconds;

const std::vector<std::string> kLogLevels = {"trace", "debug", "info", "warn", "error"};

}  // namespace

// nodeSelector.matchLabels: the nodes whose reports the tree is built from.
std::expected<void, Error> read_node_selector(const io::ConfigReader& r, const YAML::Node& root,
                                              AgentConfig& c) {
  if (const YAML::Node n = root["nodeSelector"]) {
    if (auto ok = r.mapping(n, "nodeSelector", {"matchLabels"}); !ok) return ok;
    if (const YAML::Node match = n.IsMap() ? n["matchLabels"] : YAML::Node()) {
      if (!match.IsMap() && !match.IsNull())
        return r.bad("nodeSelector.matchLabels", "must be a mapping of label key to value");
      for (const auto& kv : match) {
        const std::string key = kv.first.Scalar();
        if (key.empty()) return r.bad("nodeSelector.matchLabels", "a label key must not be empty");
        auto value = r.text(kv.second, "nodeSelector.matchLabels." + key);
        if (!value) return std::unexpected(value.error());
        c.node_selector[key] = *value;
      }
    }
  }
  return {};
}

// guard: how many owned objects one reconcile may delete.
std::expected<void, Error> read_guard(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c) {
  if (const YAML::Node n = root["guard"]) {
    if (auto ok = r.mapping(n, "guard", {"maxDeleteFraction", "minObjectsForGuard"}); !ok) return ok;
    if (n.IsMap() && n["maxDeleteFraction"]) {
      auto f = r.number(n["maxDeleteFraction"], "guard.maxDeleteFraction", 0, 1);
      if (!f) return std::unexpected(f.error());
      c.max_delete_fraction = *f;
    }
    if (n.IsMap() && n["minObjectsForGuard"]) {
      auto m = r.integer(n["minObjectsForGuard"], "guard.minObjectsForGuard", 0, 1'000'000);
      if (!m) return std::unexpected(m.error());
      c.min_objects_for_guard = static_cast<int>(*m);
    }
  }
  return {};
}

// leaderElection: the Lease and its timings.
std::expected<void, Error> read_leader_election(const io::ConfigReader& r, const YAML::Node& root,
                                                AgentConfig& c) {
  if (const YAML::Node n = root["leaderElection"]) {
    if (auto ok =
            r.mapping(n, "leaderElection", {"leaseName", "leaseDuration", "renewDeadline", "retryPeriod"});
        !ok)
      return ok;
    if (n.IsMap() && n["leaseName"]) {
      auto name = r.text(n["leaseName"], "leaderElection.leaseName");
      if (!name) return std::unexpected(name.error());
      // A Lease name is a DNS-1123 subdomain: the rule every object name we write follows.
      if (!topology::is_dns1123_subdomain(*name))
        return r.bad("leaderElection.leaseName",
                     "'" + *name + "' is not a valid object name (DNS-1123 subdomain)");
      c.lease_name = *name;
    }
    const std::pair<const char*, milliseconds*> timings[] = {{"leaseDuration", &c.lease_duration},
                                                             {"renewDeadline", &c.renew_deadline},
                                                             {"retryPeriod", &c.retry_period}};
    for (const auto& [key, target] : timings) {
      if (!n.IsMap() || !n[key]) continue;
      const std::string at = std::string("leaderElection.") + key;
      auto d = r.duration(n[key], at);
      if (!d) return std::unexpected(d.error());
      if (d->count() <= 0) return r.bad(at, "must be greater than 0");
      *target = *d;
    }
  }
  // client-go's LeaderElectionConfig checks (leaderelection.NewLeaderElector, JitterFactor 1.2).
  if (c.lease_duration <= c.renew_deadline)
    return r.bad("leaderElection.renewDeadline", "must be shorter than leaseDuration");
  if (c.renew_deadline.count() * 10 <= c.retry_period.count() * 12)
    return r.bad("leaderElection.retryPeriod",
                 "must be shorter than renewDeadline / 1.2 (client-go's jitter)");
  return {};
}

// reconcile: debounce and resync.
std::expected<void, Error> read_reconcile(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c) {
  if (const YAML::Node n = root["reconcile"]) {
    if (auto ok = r.mapping(n, "reconcile", {"debounce", "resync"}); !ok) return ok;
    if (n.IsMap() && n["debounce"]) {
      auto d = r.duration(n["debounce"], "reconcile.debounce");
      if (!d) return std::unexpected(d.error());
      c.debounce = *d;
    }
    if (n.IsMap() && n["resync"]) {
      auto d = r.period(n["resync"], "reconcile.resync");
      if (!d) return std::unexpected(d.error());
      c.resync = *d;
    }
  }
  return {};
}

// http: the health and metrics port.
std::expected<void, Error> read_http(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c) {
  if (const YAML::Node n = root["http"]) {
    if (auto ok = r.mapping(n, "http", {"port"}); !ok) return ok;
    if (n.IsMap() && n["port"]) {
      auto port = r.integer(n["port"], "http.port", 1, 65535);
      if (!port) return std::unexpected(port.error());
      c.http_port = static_cast<std::uint16_t>(*port);
    }
  }
  return {};
}

// logLevel.
std::expected<void, Error> read_log_level(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c) {
  if (const YAML::Node n = root["logLevel"]) {
    auto level = r.text(n, "logLevel");
    if (!level) return std::unexpected(level.error());
    if (std::find(kLogLevels.begin(), kLogLevels.end(), *level) == kLogLevels.end())
      return r.bad("logLevel", "unknown level '" + *level + "' (known: " + io::comma_list(kLogLevels) + ")");
    c.log_level = *level;
  }
  return {};
}

// apiClient: the pace of the leader's API clients (agent_config.h says why the defaults).
std::expected<void, Error> read_api_client(const io::ConfigReader& r, const YAML::Node& root,
                                           AgentConfig& c) {
  if (const YAML::Node n = root["apiClient"]) {
    if (auto ok = r.mapping(n, "apiClient", {"qps", "burst", "parallelWrites"}); !ok) return ok;
    if (n.IsMap() && n["qps"]) {
      auto qps = r.number(n["qps"], "apiClient.qps", 0, 100000);
      if (!qps) return std::unexpected(qps.error());
      if (*qps <= 0) return r.bad("apiClient.qps", "must be greater than 0");
      c.api_qps = *qps;
    }
    if (n.IsMap() && n["burst"]) {
      auto burst = r.integer(n["burst"], "apiClient.burst", 1, 100000);
      if (!burst) return std::unexpected(burst.error());
      c.api_burst = static_cast<int>(*burst);
    }
    if (n.IsMap() && n["parallelWrites"]) {
      auto parallel = r.integer(n["parallelWrites"], "apiClient.parallelWrites", 1, 64);
      if (!parallel) return std::unexpected(parallel.error());
      c.parallel_writes = static_cast<int>(*parallel);
    }
  }
  return {};
}

}  // namespace hypertopo::agent::sections
