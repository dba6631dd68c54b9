#include "discoverers/registry/rest_endpoint.h"

#include "io/bounded_file.h"
#include "io/size_and_duration.h"

namespace hypertopo::discoverers {

std::vector<ConfigKey> rest_endpoint_keys(const RestService& service, std::vector<ConfigKey> own) {
  std::vector<ConfigKey> keys = {
      {"endpoint", service.name + "'s URL, " + service.url_form + " (required)"},
      {"credentials", "{secretRef: {name, namespace}}: a Secret with " + service.secret_keys +
                          ", read through the API on every run (namespace default: the agent's)"},
      {"credentialsDir", "a directory holding the same keys as files (a mounted Secret)"},
      {"caFile", "PEM CA bundle that signs " + service.name + "'s certificate (default: the system store)"},
      {"insecureSkipVerify",
       "do not verify " + service.name + "'s certificate (default false; warned on every run)"},
      {"timeout", "time for the whole fetch, a duration (30s, 2m) or seconds (default 30s)"},
      {"maxBytes", "largest answer accepted, a size (512Mi, 2Gi) or bytes (default " +
                       io::format_byte_size(service.default_max_bytes) + ")"}};
  for (auto& key : own) keys.push_back(std::move(key));
  return keys;
}

std::expected<void, Error> read_rest_endpoint(const ConfigBlock& block, RestEndpoint& out) {
  const ConfigAt& at = block.where();
  auto endpoint = block.required_text("endpoint");
  if (!endpoint) return std::unexpected(endpoint.error());
  out.endpoint = *endpoint;
  if (!out.endpoint.starts_with("https://") && !out.endpoint.starts_with("http://"))
    return at.bad("endpoint", "'" + out.endpoint + "' is not an http(s):// URL");
  if (out.endpoint.find('@') != std::string::npos)
    return at.bad("endpoint", "must not carry credentials; use credentials.secretRef or credentialsDir");
  const std::pair<const char*, std::string*> paths[] = {{"credentialsDir", &out.credentials_dir},
                                                        {"caFile", &out.ca_file}};
  for (const auto& [key, target] : paths) {
    auto t = block.text(key);
    if (!t) return std::unexpected(t.error());
    if (*t) *target = **t;
  }
  if (block.has("credentials")) {
    ConfigBlock credentials(block.child("credentials"), block.at("credentials"));
    if (auto ok = credentials.only({{"secretRef", ""}}); !ok) return std::unexpected(ok.error());
    if (!credentials.has("secretRef")) return credentials.where().bad("secretRef", "is required");
    ConfigBlock ref(credentials.child("secretRef"), credentials.at("secretRef"));
    if (auto ok = ref.only({{"name", ""}, {"namespace", ""}}); !ok) return std::unexpected(ok.error());
    auto name = ref.required_text("name");
    if (!name) return std::unexpected(name.error());
    out.secret_name = *name;
    auto ns = ref.text("namespace");
    if (!ns) return std::unexpected(ns.error());
    if (*ns) out.secret_namespace = **ns;
    if (!out.credentials_dir.empty())
      return at.bad("credentials", "give either credentials.secretRef or credentialsDir, not both");
  }
  auto insecure = block.boolean("insecureSkipVerify");
  if (!insecure) return std::unexpected(insecure.error());
  if (*insecure) out.insecure = **insecure;
  if (out.insecure && !out.ca_file.empty())
    return at.bad("insecureSkipVerify", "contradicts caFile: verify against the CA, or do not verify");
  auto timeout = block.duration("timeout", kRestTimeoutMin, kRestTimeoutMax);
  if (!timeout) return std::unexpected(timeout.error());
  if (*timeout) out.timeout = **timeout;
  auto max_bytes = block.byte_size("maxBytes", kRestMaxBytesMin, kRestMaxBytesMax);
  if (!max_bytes) return std::unexpected(max_bytes.error());
  if (*max_bytes) out.max_bytes = **max_bytes;
  return {};
}

std::expected<std::optional<EndpointSecret>, Error> read_endpoint_secret(const RestEndpoint& endpoint,
                                                                         const DiscoveryDeps& deps,
                                                                         const RestService& service) {
  if (endpoint.secret_name.empty()) return std::nullopt;
  EndpointSecret out;
  out.origin =
      "Secret " +
      (endpoint.secret_namespace.empty() ? std::string("(agent namespace)") : endpoint.secret_namespace) +
      "/" + endpoint.secret_name;
  if (!deps.read_secret) {
    return fail(ErrorCode::kInvalidArgument, service.name + " credentials name " + out.origin +
                                                 ", which only the agent can read; here mount it and give "
                                                 "the directory (credentialsDir)");
  }
  // Read on every run: a rotated password is used from the next run on.
  auto data = deps.read_secret(endpoint.secret_namespace, endpoint.secret_name);
  if (!data)
    return std::unexpected(
        data.error().context("reading the " + service.name + " credentials " + out.origin));
  out.data = std::move(*data);
  return out;
}

std::string trim_credential(std::string value) {
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r' || value.back() == ' '))
    value.pop_back();
  return value;
}

std::expected<std::string, Error> read_credential_file(const std::filesystem::path& path) {
  auto text = io::read_bounded_file(path, io::kSecretFileLimit);
  if (!text) return std::unexpected(text.error());
  std::string value = trim_credential(std::move(*text));
  if (value.empty()) return fail(ErrorCode::kInvalidArgument, path.string() + " is empty");
  return value;
}

std::expected<void, Error> refuse_cleartext(const net::HttpUrl& url, const RestEndpoint& endpoint,
                                            const RestService& service) {
  if (!url.tls && !endpoint.insecure) {
    return fail(ErrorCode::kInvalidArgument,
                service.name + " URL " + url.origin() +
                    " is plain http://: the credentials would cross the network in clear text. Use https://, "
                    "or " +
                    service.insecure_hint + " to send them anyway");
  }
  return {};
}

std::expected<net::TransportConfig, Error> rest_transport_config(const net::HttpUrl& url,
                                                                 const RestEndpoint& endpoint,
                                                                 const RestService& service) {
  net::TransportConfig config;
  config.host = url.host;
  config.port = url.port;
  config.tls = url.tls;
  config.connect_timeout = endpoint.timeout;
  config.body_limit = endpoint.max_bytes;
  config.tls_config.insecure_skip_verify = endpoint.insecure;
  if (url.tls && !endpoint.insecure && !endpoint.ca_file.empty()) {
    auto pem = io::read_bounded_file(endpoint.ca_file, io::kSecretFileLimit);
    if (!pem) return std::unexpected(pem.error().context("the " + service.name + " CA file"));
    config.tls_config.ca_pem = std::move(*pem);
  }
  return config;
}

}  // namespace hypertopo::discoverers
