// tests/support/apiserver/loopback_apiserver.h: an in-process Kubernetes API server for tests.
//
// Test code only. Serves HTTP/1.1 (or HTTPS with a certificate made at start) on 127.0.0.1, port 0,
// with the REST semantics of resource_store.h for any `/api/v1/...` or `/apis/<g>/<v>/...` path,
// watches as chunked JSON lines, a Bearer token check, per-verb request counters (so a test can say
// "zero writes"), a log of every request (verb, path, bearer token, status, arrival time) and fault
// injection: failing statuses with Retry-After, dropped connections, watch streams cut mid-way, slow
// responses, truncated JSON bodies, and the whole server going down and coming back on its port
// (a restarted kube-apiserver: etcd keeps the objects, the new watch cache may answer 410).
//
//   LoopbackApiServer server({.bearer_token = "t0ken"});
//   ASSERT_TRUE(server.start().has_value());
//   // point a client at server.url() ...
//   server.fail_next(2, 503, /*retry_after_seconds=*/1);   // the next two requests answer 503
//   server.store().compact();                              // older watches now get 410 Gone
//   EXPECT_EQ(server.writes(), 0);
//   server.go_down();                                      // connections cut, nothing listens
//   ASSERT_TRUE(server.come_back({.compact = true}));      // same port, same objects, old watches 410
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
  std::string body;           // the request body (a login's credentials, say)
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

// One request as the server saw it (see request_log()).
struct LoggedRequest {
  std::string verb;   // get, list, watch, create, update, patch, delete ("raw" for raw handlers)
  std::string path;   // without the query
  std::string token;  // the bearer token presented, "" when none
  int status = 0;     // what was answered; 0 when dropped without an answer, or not answered yet
  std::chrono::steady_clock::time_point at;  // when the request was read
};

// How a restarted API server comes back (come_back()).
struct ComeBackOptions {
  // The restarted server's watch cache starts at the current resourceVersion, so a watch resumed
  // from an older one is answered 410 Gone (k8s.io/apiserver pkg/storage/cacher/watch_cache.go,
  // getAllEventsSinceLocked: "too old resource version"), and old continue tokens expire.
  bool compact = false;
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
  // A further token the server accepts beside the one above (one per client, so that a test can tell
  // the clients' requests apart in request_log()).
  void add_bearer_token(const std::string& token);
  // Exactly these tokens are accepted from now on (the others answer 401): a rotation's end.
  void set_bearer_tokens(const std::vector<std::string>& tokens);
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
  // Cuts every open connection (watch streams and idle keep-alive ones) without an answer; the
  // listener stays up.
  void cut_connections();
  // The API server process goes away: the listener closes and every connection is cut (a request
  // already read still lands in the store, as one the real server committed before it died). The
  // store keeps its objects, as etcd does.
  void go_down();
  // Listens again on the same port.
  std::expected<void, Error> come_back(ComeBackOptions options = {});

  // Counters over every request received (faulted ones included) since start or reset_counts().
  int count(const std::string& verb) const;
  int writes() const;  // create + update + patch + delete
  int requests() const;
  int connections_accepted() const;
  void reset_counts();
  // Every request received since start (reset_counts() does not clear it), in arrival order.
  std::vector<LoggedRequest> request_log() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace hypertopo::testing
