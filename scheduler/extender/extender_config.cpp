#include "scheduler/extender/extender_config.h"

#include <arpa/inet.h>

#include <set>

#include "scheduler/config/volcano_config.h"
#include "scheduler/input/cluster_loader.h"

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
  auto doc = read_document(path);
  if (!doc) return std::unexpected(doc.error());
  const std::string where = path.string();
  if (!doc->is_object()) return fail(ErrorCode::kInvalidArgument, where + ": expected a mapping");
  static const std::set<std::string> known{
      "apiVersion", "kind", "schedulerConfig", "planTTLSeconds",     "listen",      "urlPrefix",
      "stateFile",  "tls",  "gangLabelKeys",   "gangAnnotationKeys", "fabricHealth"};
  ExtenderConfig cfg;
  auto text = [&](const std::string& key) -> std::expected<std::string, Error> {
    const auto& v = (*doc)[key];
    if (!v.is_string()) return fail(ErrorCode::kInvalidArgument, where + ": " + key + " must be a string");
    return v.get<std::string>();
  };
  auto keys = [&](const std::string& key) -> std::expected<std::vector<std::string>, Error> {
    const auto& v = (*doc)[key];
    std::vector<std::string> out;
    if (!v.is_array())
      return fail(ErrorCode::kInvalidArgument, where + ": " + key + " must be a list of strings");
    for (const auto& k : v) {
      if (!k.is_string() || k.get<std::string>().empty())
        return fail(ErrorCode::kInvalidArgument, where + ": " + key + " must be a list of non-empty strings");
      out.push_back(k.get<std::string>());
    }
    return out;
  };
  for (const auto& [key, value] : doc->items()) {
    if (!known.contains(key)) return fail(ErrorCode::kInvalidArgument, where + ": unknown key '" + key + "'");
  }
  if (doc->contains("kind")) {
    auto kind = text("kind");
    if (!kind) return std::unexpected(kind.error());
    if (*kind != "ExtenderConfig")
      return fail(ErrorCode::kInvalidArgument, where + ": kind must be ExtenderConfig, got '" + *kind + "'");
  }
  if (doc->contains("schedulerConfig")) {
    auto p = text("schedulerConfig");
    if (!p) return std::unexpected(p.error());
    auto sc = load_scheduler_config_file(*p);
    if (!sc) return std::unexpected(sc.error().context(where + ": schedulerConfig"));
    cfg.service.binpack = sc->binpack;
    cfg.service.fabric_health = sc->fabric_health;
  }
  if (doc->contains("fabricHealth")) {
    auto m = text("fabricHealth");
    if (!m) return std::unexpected(m.error());
    auto mode = parse_fabric_health_mode(*m);
    if (!mode) {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": fabricHealth must be " + std::string(kFabricHealthModes) + ", got '" + *m + "'");
    }
    cfg.service.fabric_health = *mode;
  }
  if (doc->contains("planTTLSeconds")) {
    const auto& v = (*doc)["planTTLSeconds"];
    if (!v.is_number_integer() || v.get<std::int64_t>() <= 0)
      return fail(ErrorCode::kInvalidArgument, where + ": planTTLSeconds must be a positive integer");
    cfg.service.plan_ttl = std::chrono::seconds(v.get<std::int64_t>());
  }
  if (doc->contains("listen")) {
    auto l = text("listen");
    if (!l) return std::unexpected(l.error());
    if (auto ok = parse_listen(*l, where + ": listen", cfg); !ok) return std::unexpected(ok.error());
  }
  if (doc->contains("urlPrefix")) {
    auto p = text("urlPrefix");
    if (!p) return std::unexpected(p.error());
    if (p->empty() || p->front() != '/')
      return fail(ErrorCode::kInvalidArgument, where + ": urlPrefix must start with '/'");
    cfg.url_prefix = *p;
    while (cfg.url_prefix.size() > 1 && cfg.url_prefix.back() == '/') cfg.url_prefix.pop_back();
  }
  if (doc->contains("stateFile")) {
    auto p = text("stateFile");
    if (!p) return std::unexpected(p.error());
    cfg.service.state_file = *p;
  }
  if (doc->contains("tls")) {
    const auto& tls = (*doc)["tls"];
    if (!tls.is_object()) return fail(ErrorCode::kInvalidArgument, where + ": tls must be a mapping");
    for (const auto& [key, value] : tls.items()) {
      if (key != "certFile" && key != "keyFile" && key != "clientCAFile")
        return fail(ErrorCode::kInvalidArgument, where + ": unknown key 'tls." + key + "'");
      if (!value.is_string())
        return fail(ErrorCode::kInvalidArgument, where + ": tls." + key + " must be a string");
    }
    cfg.tls_cert_file = tls.value("certFile", "");
    cfg.tls_key_file = tls.value("keyFile", "");
    cfg.tls_client_ca_file = tls.value("clientCAFile", "");
    if (cfg.tls_cert_file.empty() != cfg.tls_key_file.empty())
      return fail(ErrorCode::kInvalidArgument,
                  where + ": tls.certFile and tls.keyFile must be given together");
    if (!cfg.tls_client_ca_file.empty() && cfg.tls_cert_file.empty())
      return fail(
          ErrorCode::kInvalidArgument,
          where + ": tls.clientCAFile needs tls.certFile and tls.keyFile (the server's own identity)");
  }
  if (doc->contains("gangLabelKeys")) {
    auto k = keys("gangLabelKeys");
    if (!k) return std::unexpected(k.error());
    cfg.service.gang_label_keys = *k;
  }
  if (doc->contains("gangAnnotationKeys")) {
    auto k = keys("gangAnnotationKeys");
    if (!k) return std::unexpected(k.error());
    cfg.service.gang_annotation_keys = *k;
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
