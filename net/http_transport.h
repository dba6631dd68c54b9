// net/http_transport.h: HTTP/1.1 round trips and streamed responses over TCP or TLS.
//
// The part of the client that touches Boost.Beast, kept behind this header so only one translation
// unit compiles Beast. Calls block, but every step (resolve, connect, TLS handshake, write, read)
// runs under a deadline. Idle keep-alive connections are pooled and reused; a pooled connection that
// the server has closed is noticed before use. TLS verifies the server's certificate against the
// configured CA (or the system store) and its host name or IP, unless insecure_skip_verify.
//
//   auto transport = HttpTransport::create({.host = "127.0.0.1", .port = "6443", .tls = true, ...});
//   auto res = (*transport)->round_trip({"GET", "/api/v1/nodes", {}, ""}, 30s, /*idempotent=*/true);
//   auto stream = (*transport)->open_stream({"GET", "/api/v1/nodes?watch=1", {}, ""}, 30s);
//   std::string bytes;
//   while (auto more = (*stream)->read_some(bytes, 5min)) { if (!*more) break; ... }
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "errors/error.h"
#include "net/tls_config.h"

namespace hypertopo::net {

struct TransportConfig {
  std::string host;  // a name or an IP (IPv6 without brackets)
  std::string port;
  bool tls = false;
  TlsConfig tls_config;
  std::chrono::milliseconds connect_timeout{10000};
  // round_trip() fails (ErrorCode::kUnavailable, "larger than the limit of N bytes") when a response
  // body exceeds this; a LIST of many large objects is legitimately big, hence the generous default.
  std::uint64_t body_limit = 1ull << 30;
};

struct HttpRequest {
  std::string method;
  std::string target;  // path and query
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::string retry_after;  // the Retry-After header, "" when absent
};

struct TransportError {
  Error error;
  bool sent = false;  // request bytes may have reached the server
  int status = 0;     // the response's status when its header arrived before the failure, else 0
};

// A response whose body arrives over time (a watch).
class HttpStream {
 public:
  virtual ~HttpStream() = default;
  virtual int status() const = 0;
  virtual std::string retry_after() const = 0;  // the Retry-After header, "" when absent
  // Appends the next body bytes to `out`. Returns true while more may come, false at the clean end
  // of the body; fails when the connection is cut, nothing arrives within `idle_timeout`, or
  // cancel() was called.
  virtual std::expected<bool, Error> read_some(std::string& out, std::chrono::milliseconds idle_timeout) = 0;
  // Thread-safe: makes a blocked read_some() return with an error.
  virtual void cancel() = 0;
};

class HttpTransport {
 public:
  static std::expected<std::unique_ptr<HttpTransport>, Error> create(const TransportConfig& config);
  virtual ~HttpTransport() = default;
  // One request and its whole response. `timeout` bounds the write and the read (and a new
  // connection's connect and handshake, when shorter than connect_timeout). A failure on a
  // reused connection before any answer is retried once on a fresh connection when `idempotent`.
  // When `stop` fires, the request still to be written or answered is abandoned: the connection is
  // reset (unsent bytes discarded, never delivered later) and the call fails at once.
  virtual std::expected<HttpResponse, TransportError> round_trip(const HttpRequest& request,
                                                                 std::chrono::milliseconds timeout,
                                                                 bool idempotent, std::stop_token stop) = 0;
  std::expected<HttpResponse, TransportError> round_trip(const HttpRequest& request,
                                                         std::chrono::milliseconds timeout, bool idempotent) {
    return round_trip(request, timeout, idempotent, std::stop_token{});
  }
  // Sends the request and reads the status line and headers; the body is read from the stream.
  // The connection is never returned to the pool.
  virtual std::expected<std::unique_ptr<HttpStream>, TransportError> open_stream(
      const HttpRequest& request, std::chrono::milliseconds timeout) = 0;
  virtual int connections_opened() const = 0;
};

}  // namespace hypertopo::net
