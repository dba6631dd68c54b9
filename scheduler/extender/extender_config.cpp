#include "scheduler/extender/extender_config.h"

#include <arpa/inet.h>

#include <set>

#include "io/bounded_file.h"
#include "io/config_reader.h"
#include "io/yaml_reader.h"
#include "scheduler/config/volcano_config.h"

namespace hypertopo::scheduler {

std::expected<void, Error> parse_listen(const std::string& text, const std::string& what,
                                        ExtenderConfig& cfg) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos)
    return fail(ErrorCode::kInvalidArgument, what + ": expected ADDR:PORT, got '" + text + "'");
  const std::string port = text.substr(colon + 1);
  int value = -1;
  try {
    std::size_t used = 0;
    value = std::stoi(port, &used);
    if (used != port.size()) value = -1;
  } catch (const std::exception&) {
  }
  if (value < 0 || value > 65535)
    return fail(ErrorCode::kInvalidArgument, what + ": port '" + port + "' is not 0..65535");
  if (colon > 0) cfg.listen_address = text.substr(0, colon);
  cfg.listen_port = static_cast<std::uint16_t>(value);
  return {};
}

std::expected<ExtenderConfig, Error> load_extender_config(const std::filesystem::path& path) {
  auto text = io::read_bounded_file(path, io::kConfigFileLimit);
  if (!text) return std::unexpected(text.error());
  const std::string where = path.string();
  // YAML, or JSON (which YAML reads as it is).
  auto loaded = io::load_yaml(*text, where);
  if (!loaded) return std::unexpected(loaded.error());
  const YAML::Node doc = *loaded;
  if (!doc.IsMap()) return fail(ErrorCode::kInvalidArgument, where + ": expected a mapping");
  const io::ConfigReader r(where);
  if (auto ok =
          r.only_keys(doc,
                      {"apiVersion", "kind", "schedulerConfig", "fabricHealth", "planTTLSeconds", "listen",
                       "urlPrefix", "stateFile", "tls", "gangLabelKeys", "gangAnnotationKeys"},
                      "");
      !ok)
    return std::unexpected(ok.error());
  ExtenderConfig cfg;
  if (doc["apiVersion"]) {
    if (auto v = r.text(doc["apiVersion"], "apiVersion"); !v) return std::unexpected(v.error());
  }
  if (doc["kind"]) {
    auto kind = r.text(doc["kind"], "kind");
    if (!kind) return std::unexpected(kind.error());
    if (*kind != "ExtenderConfig") return r.bad("kind", "must be ExtenderConfig, got '" + *kind + "'");
  }
  if (doc["schedulerConfig"]) {
    auto p = r.nonempty_text(doc["schedulerConfig"], "schedulerConfig");
    if (!p) return std::unexpected(p.error());
    auto sc = load_scheduler_config_file(*p);
    if (!sc) return std::unexpected(sc.error().context(where + ": schedulerConfig"));
    cfg.service.binpack = sc->binpack;
    cfg.service.fabric_health = sc->fabric_health;
    for (const auto& w : sc->warnings) cfg.warnings.push_back(where + ": schedulerConfig " + *p + ": " + w);
  }
  if (doc["fabricHealth"]) {
    auto m = r.text(doc["fabricHealth"], "fabricHealth");
    if (!m) return std::unexpected(m.error());
    auto mode = parse_fabric_health_mode(*m);
    if (!mode)
      return r.bad("fabricHealth", "must be " + std::string(kFabricHealthModes) + ", got '" + *m + "'");
    cfg.service.fabric_health = *mode;
  }
  if (doc["planTTLSeconds"]) {
    // A plan idle for longer than a week is a plan nobody will come back for.
    // A duration ("10m", "1h") or, as the key's name says, a number of seconds.
    auto ttl = r.period(doc["planTTLSeconds"], "planTTLSeconds");
    if (!ttl) return std::unexpected(ttl.error());
    if (*ttl > std::chrono::hours(7 * 24)) return r.bad("planTTLSeconds", "must be at most 168h (a week)");
    cfg.service.plan_ttl = *ttl;
  }
  if (doc["listen"]) {
    auto l = r.text(doc["listen"], "listen");
    if (!l) return std::unexpected(l.error());
    if (auto ok = parse_listen(*l, io::config_message(where, "listen", ""), cfg); !ok)
      return std::unexpected(ok.error());
  }
  if (doc["urlPrefix"]) {
    auto p = r.text(doc["urlPrefix"], "urlPrefix");
    if (!p) return std::unexpected(p.error());
    if (p->empty() || p->front() != '/') return r.bad("urlPrefix", "must start with '/'");
    cfg.url_prefix = *p;
    while (cfg.url_prefix.size() > 1 && cfg.url_prefix.back() == '/') cfg.url_prefix.pop_back();
  }
  if (doc["stateFile"]) {
    auto p = r.nonempty_text(doc["stateFile"], "stateFile");
    if (!p) return std::unexpected(p.error());
    cfg.service.state_file = *p;
  }
  if (const YAML::Node tls = doc["tls"]) {
    if (auto ok = r.mapping(tls, "tls", {"certFile", "keyFile", "clientCAFile"}); !ok)
      return std::unexpected(ok.error());
    const std::pair<const char*, std::string*> files[] = {{"certFile", &cfg.tls_cert_file},
                                                          {"keyFile", &cfg.tls_key_file},
                                                          {"clientCAFile", &cfg.tls_client_ca_file}};
    for (const auto& [key, target] : files) {
      if (!tls.IsMap() || !tls[key]) continue;
      auto file = r.nonempty_text(tls[key], io::key_path("tls", key));
      if (!file) return std::unexpected(file.error());
      *target = *file;
    }
    if (cfg.tls_cert_file.empty() != cfg.tls_key_file.empty()) {
      return cfg.tls_key_file.empty() ? r.bad("tls.keyFile", "is required with tls.certFile")
                                      : r.bad("tls.certFile", "is required with tls.keyFile");
    }
    if (!cfg.tls_client_ca_file.empty() && cfg.tls_cert_file.empty())
      return r.bad("tls.clientCAFile", "needs tls.certFile and tls.keyFile (the server's own identity)");
  }
  const std::pair<const char*, std::vector<std::string>*> gang_keys[] = {
      {"gangLabelKeys", &cfg.service.gang_label_keys},
      {"gangAnnotationKeys", &cfg.service.gang_annotation_keys}};
  for (const auto& [key, target] : gang_keys) {
    if (!doc[key]) continue;
    auto keys = r.strings(doc[key], key);
    if (!keys) return std::unexpected(keys.error());
    for (std::size_t i = 0; i < keys->size(); ++i)
      if ((*keys)[i].empty()) return r.bad(io::indexed(key, i), "must not be empty");
    *target = std::move(*keys);
  }
  return cfg;
}

bool is_loopback_address(const std::string& address) {
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, address.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

bool listen_is_protected(const ExtenderConfig& cfg) {
  if (is_loopback_address(cfg.listen_address)) return true;
  return !cfg.tls_cert_file.empty() && !cfg.tls_key_file.empty() && !cfg.tls_client_ca_file.empty();
}

std::expected<void, Error> check_listen_exposure(const ExtenderConfig& cfg, bool insecure) {
  if (insecure || listen_is_protected(cfg)) return {};
  const std::string where = cfg.listen_address + ":" + std::to_string(cfg.listen_port);
  const std::string missing = cfg.tls_cert_file.empty() ? "without TLS" : "without tls.clientCAFile";
  return fail(ErrorCode::kInvalidArgument,
              "refusing to listen on " + where + " " + missing +
                  ": any client that reaches it could create gang plans. Listen on 127.0.0.1 (run the "
                  "extender beside kube-scheduler in its pod), or set tls.certFile, tls.keyFile and "
                  "tls.clientCAFile (kube-scheduler's extender tlsConfig presents the client "
                  "certificate), or pass --insecure-listen to serve it unauthenticated anyway");
}

}  // namespace hypertopo::scheduler
