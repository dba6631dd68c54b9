// The agent config's sections on how the agent runs: nodeSelector, guard, leaderElection (with
// client-go's timing rules), reconcile, http, logLevel and apiClient.
#include <arpa/inet.h>
#include <netinet/in.h>
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

bool is_ip_literal(const std::string& address) {
  in_addr v4{};
  in6_addr v6{};
  return inet_pton(AF_INET, address.c_str(), &v4) == 1 || inet_pton(AF_INET6, address.c_str(), &v6) == 1;
}

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
  const YAML::Node n = root["http"];
  if (!n) return {};
  if (auto ok = r.mapping(n, "http", {"address", "port", "tls"}); !ok) return ok;
  if (!n.IsMap()) return {};
  if (n["port"]) {
    auto port = r.integer(n["port"], "http.port", 1, 65535);
    if (!port) return std::unexpected(port.error());
    c.http_port = static_cast<std::uint16_t>(*port);
  }
  if (n["address"]) {
    auto address = r.nonempty_text(n["address"], "http.address");
    if (!address) return std::unexpected(address.error());
    if (!is_ip_literal(*address))
      return r.bad("http.address", "'" + *address +
                                       "' is not an IPv4 or IPv6 address (127.0.0.1, the pod's IP; "
                                       "no host name, no brackets, no port)");
    c.http_address = *address;
  }
  if (const YAML::Node tls = n["tls"]) {
    if (auto ok = r.mapping(tls, "http.tls", {"certFile", "keyFile", "clientCAFile"}); !ok) return ok;
    const std::pair<const char*, std::string*> files[] = {{"certFile", &c.http_tls_cert_file},
                                                          {"keyFile", &c.http_tls_key_file},
                                                          {"clientCAFile", &c.http_tls_client_ca_file}};
    for (const auto& [key, target] : files) {
      if (!tls.IsMap() || !tls[key]) continue;
      auto file = r.nonempty_text(tls[key], std::string("http.tls.") + key);
      if (!file) return std::unexpected(file.error());
      *target = *file;
    }
    if (c.http_tls_cert_file.empty() != c.http_tls_key_file.empty()) {
      return c.http_tls_key_file.empty() ? r.bad("http.tls.keyFile", "is required with http.tls.certFile")
                                         : r.bad("http.tls.certFile", "is required with http.tls.keyFile");
    }
    if (!c.http_tls_client_ca_file.empty() && c.http_tls_cert_file.empty())
      return r.bad("http.tls.clientCAFile",
                   "needs http.tls.certFile and http.tls.keyFile (the server's own identity)");
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

namespace hypertopo::agent {

bool is_wildcard_address(const std::string& address) {
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) return v4.s_addr == htonl(INADDR_ANY);
  in6_addr v6{};
  if (inet_pton(AF_INET6, address.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_UNSPECIFIED(&v6)) return true;
  // ::ffff:0.0.0.0 binds like 0.0.0.0 on a dual-stack socket.
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 0 && v6.s6_addr[13] == 0 && v6.s6_addr[14] == 0 &&
         v6.s6_addr[15] == 0;
}

bool http_is_exposed(const AgentConfig& config) {
  if (!is_wildcard_address(config.http_address)) return false;
  return config.http_tls_cert_file.empty() || config.http_tls_key_file.empty() ||
         config.http_tls_client_ca_file.empty();
}

std::string host_port(const std::string& address, std::uint16_t port) {
  const bool v6 = address.find(':') != std::string::npos;
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

std::expected<void, Error> check_http_exposure(const AgentConfig& config, bool insecure,
                                               const std::string& address_key) {
  if (insecure || !http_is_exposed(config)) return {};
  const std::string missing =
      config.http_tls_cert_file.empty() ? "without TLS" : "without http.tls.clientCAFile";
  return fail(ErrorCode::kInvalidArgument,
              "refusing to listen on " + host_port(config.http_address, config.http_port) + " " + missing +
                  " (" + address_key +
                  "): every address of the host would serve /healthz, /readyz and "
                  "/metrics to any client that reaches it. Set " +
                  address_key +
                  " to one address (127.0.0.1, the default; in a pod its IP: --http-address=$(POD_IP) "
                  "from the downward API, as deploy/base does), or set http.tls.certFile, "
                  "http.tls.keyFile and http.tls.clientCAFile, or pass --insecure-listen to serve it "
                  "unauthenticated anyway");
}

}  // namespace hypertopo::agent
