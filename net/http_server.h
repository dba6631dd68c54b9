// net/http_server.h: a small HTTP/1.1 server on Boost.Beast for health, metrics and the
// scheduler extender's webhook routes.
//
// Routes are exact (method, path) pairs; the query string is split off before matching. An unknown
// path answers 404, a known path with another method 405 (with Allow). What a server holds at once
// (connections, header and body bytes, bytes in flight, accept back-off) is bounded by
// options.limits: the policy and its two profiles are in net/http_limits.h. A handler that throws answers 500
// with the exception's text; the server keeps running. Keep-alive is honoured. With tls_cert_file
// and tls_key_file set, every connection is TLS (PEM files, read at start()); with tls_client_ca_file
// too, a client that presents no certificate, or one that CA did not sign, fails the handshake and
// never reaches a handler. port 0 picks a free port; port() tells which after start().
//
// clang-format off
//   HttpServer server({.address = "127.0.0.1", .port = 8080});
//   server.handle("GET", "/healthz", [](const HttpServerRequest&) {
//     return HttpServerResponse{.body = "ok\n"};
//   });
//   if (auto ok = server.start(); !ok) ...;    // binds and starts the I/O threads
//   ...
//   server.stop();                             // closes the listener and open connections, joins threads
// clang-format on
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "errors/error.h"
#include "net/http_limits.h"

namespace hypertopo::net {

struct HttpServerRequest {
  std::string method;                          // "GET", "POST", ...
  std::string target;                          // as sent: path and query
  std::string path;                            // the target up to '?'
  std::string query;                           // after '?', undecoded; "" when none
  std::map<std::string, std::string> headers;  // field names lower-cased
  std::string body;
};

struct HttpServerResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpServerResponse(const HttpServerRequest&)>;

struct HttpServerOptions {
  std::string address = "0.0.0.0";
  std::uint16_t port = 8080;  // 0: any free port
  std::string tls_cert_file;  // both set: HTTPS only
  std::string tls_key_file;
  std::string tls_client_ca_file;  // set: clients must present a certificate this CA bundle signed
  HttpServerLimits limits = kAgentHttpLimits;
  int threads = 1;  // I/O threads; handlers run on them
};

// What the server holds and has refused since start(), for metrics and tests.
struct HttpServerStats {
  std::size_t connections_open = 0;
  std::size_t inflight_bytes = 0;         // body bytes counted (times body_memory_factor) right now
  std::size_t peak_inflight_bytes = 0;    // the most at any time
  std::uint64_t connections_evicted = 0;  // closed at the cap to make room for a new one
  std::uint64_t connections_refused = 0;  // closed at once: at the cap with none to evict
  std::uint64_t accept_errors = 0;        // accept() failures (EMFILE, ...), each followed by a back-off
  std::uint64_t requests_busy = 0;        // 503: the body did not fit in what is in flight now
  std::uint64_t requests_too_large = 0;   // 413: the body is over the route's limit or one request's share
  std::uint64_t requests_too_slow = 0;    // dropped: the body arrived under min_body_bytes_per_second
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();  // stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Register before start(). A second handler for the same method and path replaces the first.
  void handle(const std::string& method, const std::string& path, HttpHandler handler);
  // Binds (the error names the address and port, e.g. "0.0.0.0:8080: Address already in use"),
  // loads the TLS files when set (the error names the file), starts the threads.
  std::expected<void, Error> start();
  void stop();  // idempotent
  // One request through the routes as a connection would run it, without a socket (fuzzing).
  HttpServerResponse dispatch(const HttpServerRequest& request);
  std::uint16_t port() const;  // the bound port after start()
  HttpServerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hypertopo::net
