// discoverers/registry/rest_endpoint.h: the settings of a fabric manager's REST endpoint (UFM,
// NetQ), read in one place with one set of keys, bounds and units.
//
// Every REST source's config block takes the same keys: `endpoint` (https://HOST[:PORT][/prefix]),
// `credentials: {secretRef: {name, namespace}}` (a Secret read through the API on every run) or
// `credentialsDir` (a mounted Secret), `caFile`, `insecureSkipVerify`, `timeout` (a Go duration or
// seconds, from 1ms to 1h, kept in milliseconds) and `maxBytes` (a quantity or bytes, from 1 to 64Gi).
// A source adds its own keys (UFM's pageSize) and its own default size cap. The same values build the
// HTTP transport: the CA file read within bounds, the size cap, and plain http:// refused unless
// insecureSkipVerify, since the credentials would cross the network in clear text.
//
//   const RestService& ufm = ufm_service();   // {.name = "UFM", .url_form = "https://HOST...", ...}
//   ConfigBlock block(node, at);
//   if (auto ok = block.only(rest_endpoint_keys(ufm, {{"pageSize", "..."}})); !ok) ...
//   auto c = std::make_shared<UfmSourceConfig>();   // derives from RestEndpoint
//   if (auto ok = read_rest_endpoint(block, *c); !ok) ...
//   auto secret = read_endpoint_secret(*c, deps, ufm);   // per run: the Secret's data, if named
//   if (auto ok = refuse_cleartext(url, *c, ufm); !ok) ...; auto tc = rest_transport_config(url, *c, ufm);
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "discoverers/registry/discoverer.h"
#include "discoverers/registry/source_config.h"
#include "errors/error.h"
#include "net/http_transport.h"
#include "net/url.h"

namespace hypertopo::discoverers {

// The bounds of the common keys, shared with the command line's --ufm-* flags.
inline constexpr std::chrono::milliseconds kRestTimeoutMin{1};
inline constexpr std::chrono::milliseconds kRestTimeoutMax = std::chrono::hours(1);
// A cap below a kilobyte only makes every answer fail, loudly ("larger than the limit"); the lower
// bound stays 1 so that every value a config could give before stays valid.
inline constexpr std::uint64_t kRestMaxBytesMin = 1;
inline constexpr std::uint64_t kRestMaxBytesMax = 64ULL << 30;

// What differs between the services in messages and defaults.
struct RestService {
  std::string name;         // "UFM", "NetQ"
  std::string url_form;     // "https://HOST[:PORT][/prefix]"
  std::string secret_keys;  // what the Secret holds: "token, or username and password"
  std::uint64_t default_max_bytes = 0;
  std::string insecure_hint;  // how to allow http:// ("set insecureSkipVerify")
};

struct RestEndpoint {
  std::string endpoint;                      // https://host[:port][/prefix]
  std::string credentials_dir;               // a mounted Secret
  std::string secret_name;                   // credentials.secretRef: read through the API on every run
  std::string secret_namespace;              // "" : the agent's own namespace
  std::string ca_file;                       // PEM bundle; "" : the system store
  bool insecure = false;                     // insecureSkipVerify
  std::chrono::milliseconds timeout{30000};  // the whole fetch: every request, retry and backoff
  std::uint64_t max_bytes = 0;               // per answer; each service sets its default
};

// The common keys with their help, then the source's own.
std::vector<ConfigKey> rest_endpoint_keys(const RestService& service, std::vector<ConfigKey> own = {});

// Reads the common keys of `block` into `out` (absent keys keep out's values); the block's keys must
// already have been checked with only().
std::expected<void, Error> read_rest_endpoint(const ConfigBlock& block, RestEndpoint& out);

// The credentials a run uses: the Secret's data when the endpoint names one (read through
// deps.read_secret, on every run), else nothing (the caller reads credentials_dir).
struct EndpointSecret {
  std::map<std::string, std::string> data;
  std::string origin;  // "Secret ns/name", for messages
};
std::expected<std::optional<EndpointSecret>, Error> read_endpoint_secret(const RestEndpoint& endpoint,
                                                                         const DiscoveryDeps& deps,
                                                                         const RestService& service);

// A credential value without the trailing newline editors and `kubectl create secret` leave.
std::string trim_credential(std::string value);
// A credential file (bounded, trimmed); empty is an error naming the file.
std::expected<std::string, Error> read_credential_file(const std::filesystem::path& path);

// Basic auth and tokens are credentials: over http:// anyone on the path reads them, so plain http://
// is refused unless insecureSkipVerify. Called before the credentials are read.
std::expected<void, Error> refuse_cleartext(const net::HttpUrl& url, const RestEndpoint& endpoint,
                                            const RestService& service);

// Settings of the HTTP transport to `url` (parsed from endpoint.endpoint): the CA file (when
// verifying, read within bounds), the size cap and the time budget as the connect timeout.
std::expected<net::TransportConfig, Error> rest_transport_config(const net::HttpUrl& url,
                                                                 const RestEndpoint& endpoint,
                                                                 const RestService& service);

// A fabric manager's answer that does not read (not JSON, not the shape its API documents, no port
// at all) is a failure of that fabric, as an unreachable one is, never a fault of the caller's input:
// kParse becomes kUnavailable (exit 3 of the command contract), the message unchanged. Errors of
// the caller's settings (a malformed URL, a missing credential) are not passed through this.
inline Error fabric_answer_failure(Error e) {
  if (e.code() != ErrorCode::kParse) return e;
  return Error(ErrorCode::kUnavailable, e.message());
}

}  // namespace hypertopo::discoverers
