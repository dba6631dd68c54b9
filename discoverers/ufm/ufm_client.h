// discoverers/ufm/ufm_client.h: talking to a UFM Enterprise server's REST API.
//
// Where it is (`https://host[:port][/prefix]`), how to prove who we are, and how patient to be. The
// credentials come from files in a directory mounted from a Secret: `token` (token auth: base path
// /ufmRestV3 and `Authorization: Basic <token>`) or `username` + `password` (basic auth on
// /ufmRest). TLS verifies the server against the CA file (or the system store) unless `insecure` is
// set explicitly; plain http:// is refused unless `insecure` too, since the credentials would cross
// the network in clear text. 401/403 end the run at once, also when the body after the status is cut
// (retrying a wrong password only locks accounts); 5xx, 429 and transport failures are retried with
// bounded exponential backoff inside one time budget (`timeout`) for every request, retry and
// backoff of the client; a response larger than the size cap is an error, never truncated.
// Credentials never appear in a log line or an error (a password written into the URL is redacted).
//
//   UfmClientOptions options;
//   options.endpoint = "https://ufm.example:443";
//   options.credentials_dir = "/etc/hypertopo/ufm";
//   auto client = UfmClient::create(options);            // std::expected<..., Error>
//   UfmFabric fabric;
//   auto ok = (*client)->fetch_ports(fabric);             // each page parsed as it arrives
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "discoverers/registry/rest_endpoint.h"
#include "discoverers/ufm/ufm_fabric.h"
#include "errors/error.h"
#include "timing/clock.h"

namespace hypertopo::discoverers::ufm {

inline constexpr std::uint64_t kUfmDefaultMaxBytes = 512ull * 1024 * 1024;  // per response body

// The endpoint's settings (RestEndpoint: url, credentials directory or Secret, CA, insecure, the time
// budget for the whole fetch, the size cap) and the client's own.
struct UfmClientOptions : RestEndpoint {
  UfmClientOptions() { max_bytes = kUfmDefaultMaxBytes; }
  // The keys of credentials_dir given as values (a Secret's data read through the API); used instead
  // of credentials_dir when not empty. Never logged.
  std::map<std::string, std::string> credentials;
  std::string credentials_origin;  // for messages: "Secret ns/name" (default: credentials_dir)
  std::size_t page_size = 0;  // rpp for paged requests; 0: ask unpaged (a paged answer is still followed)
  int max_attempts = 4;       // per request, for 5xx / 429 / transport failures
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{8000};
  std::shared_ptr<timing::Clock> clock;         // null: the system clock
  std::function<void(const std::string&)> log;  // progress, one line each; never credentials
};

// UFM's names in the shared endpoint messages and key help.
const RestService& ufm_service();

// Statistics of the last fetch, for notes and tests.
struct UfmFetchStats {
  int requests = 0;  // HTTP requests made (retries included)
  int pages = 0;     // pages parsed
  std::size_t skipped_records = 0;
  std::vector<std::string> skip_reasons;  // first reason per resource with skips
};

class UfmClient {
 public:
  // Reads the credentials and the CA file; fails when they are missing or unreadable (naming the
  // file, never its contents) or when the URL is not http(s)://host[:port][/prefix]. `parser`, when
  // given, reads the answers (it must outlive the client): a caller that fetches again keeps its
  // buffers; otherwise the client has its own.
  static std::expected<std::unique_ptr<UfmClient>, Error> create(const UfmClientOptions& options,
                                                                 UfmResponseParser* parser = nullptr);
  virtual ~UfmClient() = default;

  // GET <base>/resources/ports (all pages), appended to `out`: each page is parsed when it arrives
  // and dropped before the next is asked for, so a paged fetch holds one page's text at a time.
  virtual std::expected<void, Error> fetch_ports(UfmFabric& out) = 0;
  // GET <base>/resources/links (all pages), appended to `out`.
  virtual std::expected<void, Error> fetch_links(UfmFabric& out) = 0;
  // "https://host:port/ufmRest" or ".../ufmRestV3": where requests go (no credentials in it).
  virtual std::string base_url() const = 0;
  virtual const UfmFetchStats& stats() const = 0;
};

}  // namespace hypertopo::discoverers::ufm
