// tests/support/apiserver/loopback_apiserver.h: an in-process Kubernetes API server for tests.
//
// Test code only. Serves HTTP/1.1 (or HTTPS with a certificate made at start) on 127.0.0.1, port 0,
// with the REST semantics of resource_store.h for any `/api/v1/...` or `/apis/<g>/<v>/...` path,
// watches as chunked JSON lines, a Bearer token check, per-verb request counters (so a test can say
// "zero writes") and fault injection: failing statuses with Retry-After, dropped connections,
// watch streams cut mid-way, slow responses and truncated JSON bodies.
//
//   LoopbackApiServer server({.bearer_token = "t0ken"});
//   ASSERT_TRUE(server.start().has_value());
//   // point a client at server.url() ...
//   server.fail_next(2, 503, /*retry_after_seconds=*/1);   // the next two requests answer 503
//   server.store().compact();                              // older watches now get 410 Gone
//   EXPECT_EQ(server.writes(), 0);
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "errors/error.h"
#include "tests/support/apiserver/resource_store.h"
#include "tests/support/apiserver/self_signed_cert.h"

namespace hypertopo::testing {

// A request for a path the test serves itself (see set_raw_handler): non-Kubernetes REST APIs such
// as UFM's, served over the same loopback HTTP/HTTPS listener.
struct RawHttpRequest {
  std::string method;
  std::string target;         // path and query, as sent
  std::string authorization;  // the Authorization header, "" when absent
};

struct RawHttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::chrono::milliseconds delay{0};  // wait this long before answering (client timeouts)
  bool drop = false;                   // close the connection without answering
  // Announce this Content-Length but send only `body` and close (a response cut short on the wire).
  std::optional<std::size_t> declared_length;
  // Send `body` as the one chunk of a chunked response and close without the last chunk (a server
  // that answers and hangs up, as UFM does with a 401).
  bool chunked_cut = false;
};

// Returns nullopt for requests the Kubernetes store should handle as usual. Runs on the server's
// connection threads, possibly concurrently.
using RawHttpHandler = std::function<std::optional<RawHttpResponse>(const RawHttpRequest&)>;

struct LoopbackApiServerOptions {
  std::string bearer_token;          // empty: no Authorization check
  bool tls = false;                  // HTTPS with a self-signed certificate (see certificate())
  bool require_client_cert = false;  // with tls: the client must present a certificate the CA signed
};

class LoopbackApiServer {
 public:
  explicit LoopbackApiServer(LoopbackApiServerOptions options = {});
  ~LoopbackApiServer();
  LoopbackApiServer(const LoopbackApiServer&) = delete;
  LoopbackApiServer& operator=(const LoopbackApiServer&) = delete;

  std::expected<void, Error> start();
  void stop();  // closes every connection and joins every thread; the destructor calls it

  uint16_t port() const;
  std::string url() const;  // "http://127.0.0.1:<port>" or "https://..."
  // With tls: the server's certificate, which is also the CA to trust and a valid client identity.
  const CertificatePair& certificate() const;
  ResourceStore& store();

  void set_bearer_token(const std::string& token);
  std::string last_bearer_token() const;  // what the last request presented ("" when none)
  bool last_request_had_client_cert() const;

  // Requests the handler answers bypass the bearer-token check, the fault queue and the store; they
  // count under the verb "raw". Set it before start().
  void set_raw_handler(RawHttpHandler handler);

  // Fault injection. Each applies to the next `count` requests whose verb (get, list, watch, create,
  // update, patch, delete) is `verb`, or any request when `verb` is empty; faults queue in order.
  void fail_next(int count, int status, int retry_after_seconds = 0, const std::string& verb = "");
  void drop_next(int count, const std::string& verb = "");      // close without answering
  void truncate_next(int count, const std::string& verb = "");  // 200 with half of the JSON body
  void delay_next(int count, std::chrono::milliseconds delay, const std::string& verb = "");
  // Every watch stream opened from now on is cut after `events` events (no final chunk); 0: never.
  void drop_watches_after(int events);

  // Counters over every request received (faulted ones included) since start or reset_counts().
  int count(const std::string& verb) const;
  int writes() const;  // create + update + patch + delete
  int requests() const;
  int connections_accepted() const;
  void reset_counts();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace hypertopo::testing
