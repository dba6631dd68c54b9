#include "discoverers/ufm/ufm_client.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "discoverers/registry/discoverer.h"
#include "io/bounded_file.h"
#include "net/header_credentials.h"
#include "net/http_transport.h"
#include "net/retry.h"
#include "net/url.h"

namespace hypertopo::discoverers::ufm {

const RestService& ufm_service() {
  static const RestService service{
      .name = "UFM",
      .url_form = "https://HOST[:PORT][/prefix]",
      .secret_keys = "token, or username and password",
      .default_max_bytes = kUfmDefaultMaxBytes,
      .insecure_hint = "pass --ufm-insecure (insecureSkipVerify: true in the agent config)"};
  return service;
}

namespace {

// Where the credentials came from, for messages (never their contents).
std::string credentials_origin(const UfmClientOptions& options) {
  if (!options.credentials_origin.empty()) return options.credentials_origin;
  return options.credentials_dir;
}

class RestClient final : public UfmClient {
 public:
  RestClient(UfmClientOptions options, net::HttpUrl url, std::string authorization, std::string base_path,
             std::unique_ptr<net::HttpTransport> transport, UfmResponseParser* parser)
      : options_(std::move(options)),
        url_(std::move(url)),
        authorization_(std::move(authorization)),
        base_path_(std::move(base_path)),
        transport_(std::move(transport)),
        own_parser_(parser ? nullptr : std::make_unique<UfmResponseParser>()),
        parser_(parser ? *parser : *own_parser_) {
    if (!options_.clock) options_.clock = std::make_shared<timing::SystemClock>();
  }

  std::expected<void, Error> fetch_ports(UfmFabric& out) override {
    return fetch_all("ports", [&](std::string& body) { return parser_.ports(body, out); });
  }
  std::expected<void, Error> fetch_links(UfmFabric& out) override {
    return fetch_all("links", [&](std::string& body) { return parser_.links(body, out); });
  }
  std::string base_url() const override { return url_.origin() + base_path_; }
  const UfmFetchStats& stats() const override { return stats_; }

 private:
  void log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }

  template <typename Parse>
  std::expected<void, Error> fetch_all(const std::string& resource, Parse&& parse) {
    std::uint64_t seen = 0;
    std::size_t skipped = 0;
    std::string first_skip;
    for (std::size_t page = 1;; ++page) {
      std::string target = url_.path + base_path_ + "/resources/" + resource;
      if (options_.page_size > 0) {
        target += "?page_number=" + std::to_string(page) + "&rpp=" + std::to_string(options_.page_size);
      } else if (page > 1) {
        target += "?page_number=" + std::to_string(page);
      }
      auto body = get(target);
      if (!body) return std::unexpected(body.error());
      auto parsed = parse(*body);
      if (!parsed) {
        return std::unexpected(parsed.error().context("GET " + url_.server() + target));
      }
      ++stats_.pages;
      if (parsed->skipped > 0 && first_skip.empty()) first_skip = parsed->first_skip;
      skipped += parsed->skipped;
      seen += parsed->records;
      if (parsed->paged && parsed->records == 0 && parsed->total && seen < *parsed->total) {
        // The server promised more than it gives: the rest of the fabric would be silently missing.
        return fail(ErrorCode::kParse, "GET " + url_.server() + target + ": total_resources is " +
                                           std::to_string(*parsed->total) + " but the answer ends after " +
                                           std::to_string(seen) + " record(s) with an empty page");
      }
      if (!parsed->paged || parsed->records == 0) break;
      if (parsed->total && seen >= *parsed->total) break;
      if (!parsed->total && options_.page_size > 0 && parsed->records < options_.page_size) break;
      if (page >= kMaxPages) {
        return fail(ErrorCode::kParse, "GET " + base_url() + "/resources/" + resource + ": more than " +
                                           std::to_string(kMaxPages) + " pages; giving up");
      }
    }
    if (skipped > 0) {
      stats_.skipped_records += skipped;
      stats_.skip_reasons.push_back("resources/" + resource + ": skipped " + std::to_string(skipped) +
                                    " record(s) without required fields (first: " + first_skip + ")");
    }
    return {};
  }

  std::expected<void, Error> refused(const std::string& where, int status) const {
    return fail(ErrorCode::kPermission, "UFM refused GET " + where + " with HTTP " + std::to_string(status) +
                                            (status == 401 ? " Unauthorized" : " Forbidden") +
                                            ": check the " +
                                            (using_token() ? "token" : "username and password") + " in " +
                                            credentials_origin(options_) + " (not retried)");
  }

  std::chrono::milliseconds remaining() const { return options_.timeout - spent_; }

  std::expected<std::string, Error> out_of_time(const std::string& where, const std::string& last,
                                                int attempts) const {
    return fail(ErrorCode::kUnavailable, "GET " + where + ": " + (last.empty() ? "" : last + "; ") +
                                             "the UFM time budget of " +
                                             std::to_string(options_.timeout.count()) +
                                             "ms (--ufm-timeout, for the whole fetch) is spent" + " after " +
                                             std::to_string(attempts) + " attempt(s)");
  }

  // One GET with the retry policy; returns the body of a 2xx answer. Every request, retry and
  // backoff of this client draws on one budget (options_.timeout): a server that answers slowly or
  // not at all costs the caller that long, not that long per attempt.
  std::expected<std::string, Error> get(const std::string& target) {
    const std::string where = url_.server() + target;  // never credentials
    net::HttpRequest request{
        "GET", target, {{"Authorization", authorization_}, {"Accept", "application/json"}}, ""};
    std::string last;
    for (int attempt = 1;; ++attempt) {
      if (remaining().count() <= 0) return out_of_time(where, last, attempt - 1);
      ++stats_.requests;
      log("ufm: GET " + where + (attempt > 1 ? " (attempt " + std::to_string(attempt) + ")" : ""));
      auto wait = net::backoff_delay(options_.initial_backoff, options_.max_backoff, attempt - 1);
      const auto started = std::chrono::steady_clock::now();
      auto res = transport_->round_trip(request, remaining(), /*idempotent=*/true);
      spent_ +=
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
      // A 401/403 whose body was then cut (a chunked answer closed early) is still a refusal.
      if (!res && (res.error().status == 401 || res.error().status == 403))
        return std::unexpected(refused(where, res.error().status).error());
      if (res) {
        int status = res->status;
        if (status >= 200 && status < 300) {
          log("ufm: GET " + where + ": HTTP " + std::to_string(status) + ", " +
              std::to_string(res->body.size()) + " bytes");
          return std::move(res->body);
        }
        if (status == 401 || status == 403) return std::unexpected(refused(where, status).error());
        last = "HTTP " + std::to_string(status);
        if (!net::retryable_status(status, /*idempotent=*/true)) {
          return fail(ErrorCode::kUnavailable, "GET " + where + ": " + last +
                                                   " (is this a UFM Enterprise server with this REST path?)");
        }
        wait = net::retry_wait(wait, res->retry_after, options_.max_backoff);
      } else {
        std::string message = res.error().error.message();
        // The transport names the request as "GET <target>: "; the error below names the full URL.
        if (std::string prefix = "GET " + target + ": "; message.starts_with(prefix))
          message.erase(0, prefix.size());
        if (message.find("larger than the limit") != std::string::npos) {
          return fail(ErrorCode::kUnavailable,
                      "GET " + where + ": " + message +
                          " (the UFM response size cap; raise it with --ufm-max-bytes or "
                          "max-bytes=)");
        }
        if (message.find("TLS handshake") != std::string::npos) {
          return fail(ErrorCode::kUnavailable,
                      "GET " + where + ": " + message +
                          " (trust the server's CA with --ufm-ca FILE; --ufm-insecure skips verification)");
        }
        last = message;
      }
      if (attempt >= options_.max_attempts) {
        return fail(ErrorCode::kUnavailable, "GET " + where + ": " + last + " (gave up after " +
                                                 std::to_string(attempt) + " attempts)");
      }
      // Waiting longer than the budget allows only to fail afterwards helps nobody.
      if (wait >= remaining()) return out_of_time(where, last, attempt);
      log("ufm: GET " + where + ": " + last + "; retrying in " + std::to_string(wait.count()) + "ms");
      options_.clock->sleep_for(wait);
      spent_ += wait;
    }
  }

  bool using_token() const { return base_path_ == "/ufmRestV3"; }

  static constexpr std::size_t kMaxPages = 100000;
  UfmClientOptions options_;
  net::HttpUrl url_;
  std::string authorization_;  // the header value; never logged
  std::string base_path_;
  std::unique_ptr<net::HttpTransport> transport_;
  std::unique_ptr<UfmResponseParser> own_parser_;  // when the caller lends none
  UfmResponseParser& parser_;
  UfmFetchStats stats_;
  std::chrono::milliseconds spent_{0};  // of options_.timeout: requests and backoff so far
};

}  // namespace

std::expected<std::unique_ptr<UfmClient>, Error> UfmClient::create(const UfmClientOptions& options,
                                                                   UfmResponseParser* parser) {
  auto url = net::parse_http_url(
      options.endpoint,
      {.what = "UFM URL",
       .scheme_hint = ": expected ufm:https://HOST[:PORT]",
       .credentials_hint = "; put them in the credentials directory (--ufm-credentials DIR)"});
  if (!url) return std::unexpected(url.error());
  if (auto ok = refuse_cleartext(*url, options, ufm_service()); !ok) return std::unexpected(ok.error());
  std::string authorization;
  std::string base_path;
  if (!options.credentials.empty()) {
    // A Secret's data, read through the API by the caller.
    auto value = [&](const char* key) -> std::string {
      auto it = options.credentials.find(key);
      return it == options.credentials.end() ? std::string() : trim_credential(it->second);
    };
    if (!value("token").empty()) {
      if (auto ok = net::check_header_token(
              value("token"), "UFM credentials " + credentials_origin(options) + " key 'token'");
          !ok)
        return std::unexpected(ok.error());
      authorization = "Basic " + value("token");
      base_path = "/ufmRestV3";
    } else if (!value("username").empty() && !value("password").empty()) {
      authorization = net::basic_authorization(value("username"), value("password"));
      base_path = "/ufmRest";
    } else {
      return fail(ErrorCode::kNotFound, "UFM credentials " + credentials_origin(options) +
                                            " hold neither 'token' nor both 'username' and 'password'");
    }
  } else {
    if (options.credentials_dir.empty()) {
      return fail(
          ErrorCode::kInvalidArgument,
          "UFM at " + url->origin() +
              " needs credentials: a directory with 'token', or 'username' and 'password' "
              "(--ufm-credentials DIR, or credentialsDir / credentials.secretRef in the agent config)");
    }
    const std::filesystem::path dir(options.credentials_dir);
    if (!std::filesystem::is_directory(dir)) {
      return fail(ErrorCode::kNotFound,
                  "UFM credentials directory " + options.credentials_dir + " does not exist");
    }
    auto token_file = dir / "token";
    if (std::filesystem::exists(token_file)) {
      auto token = read_credential_file(token_file);
      if (!token) return std::unexpected(token.error().context("UFM token"));
      if (auto ok = net::check_header_token(*token, "UFM token file " + token_file.string()); !ok)
        return std::unexpected(ok.error());
      authorization = "Basic " + *token;
      base_path = "/ufmRestV3";
    } else {
      auto user_file = dir / "username";
      auto password_file = dir / "password";
      if (!std::filesystem::exists(user_file) || !std::filesystem::exists(password_file)) {
        return fail(ErrorCode::kNotFound,
                    "UFM credentials directory " + options.credentials_dir +
                        " has neither a 'token' file nor both 'username' and 'password'");
      }
      auto user = read_credential_file(user_file);
      if (!user) return std::unexpected(user.error().context("UFM username"));
      auto password = read_credential_file(password_file);
      if (!password) return std::unexpected(password.error().context("UFM password"));
      authorization = net::basic_authorization(*user, *password);
      base_path = "/ufmRest";
    }
  }
  auto config = rest_transport_config(*url, options, ufm_service());
  if (!config) return std::unexpected(config.error());
  auto transport = net::HttpTransport::create(*config);
  if (!transport) return std::unexpected(transport.error().context("UFM at " + url->origin()));
  if (options.log && url->tls && options.insecure)
    options.log("ufm: warning: TLS certificate verification is off for " + url->origin() + " (insecure)");
  if (options.log && !url->tls)
    options.log("ufm: warning: the UFM credentials go in clear text to " + url->origin() +
                " (http://, allowed by insecure)");
  return std::make_unique<RestClient>(options, std::move(*url), std::move(authorization),
                                      std::move(base_path), std::move(*transport), parser);
}

}  // namespace hypertopo::discoverers::ufm
