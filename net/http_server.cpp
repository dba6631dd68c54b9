// The only translation unit of the HTTP server that includes Boost.Beast (it compiles slowly).
//
// Every connection is a Session on its own strand: read a request (header first, so that
// "Expect: 100-continue" can be answered and a body refused before it is read), run the handler,
// write the response, and read the next one while the client keeps the connection alive. One
// deadline covers the whole read of a request; the TCP stream's timer turns a stalled client into
// beast::error::timeout. stop() closes the listener and every open connection on its own strand, so
// the I/O threads run out of work and join.
//
// The limits of net/http_limits.h: each session publishes its phase (an atomic the accepting strand
// reads) so that a new connection at the cap can evict the session that has waited longest for a
// request; a body's declared length, times the memory factor, is taken from one shared budget before
// the body is read and given back once the answer is written. One request may take only a share of
// that budget, a slice of it is kept for small requests, and a body that arrives slower than the
// floor rate is dropped: the deadline of each read of a body is the moment its average rate would
// fall under the floor.
//
// Session lifetime: the registry holds weak references, and a session unregisters itself from its
// destructor, under sessions_mutex. So no session's last reference may be dropped while that mutex
// is held (its destructor would lock it again on the same thread): whatever walks the registry keeps
// the references it takes in a vector declared before the lock, which lets them go after unlocking,
// the chosen victim included. A destructor that runs under the mutex anyway aborts with a message
// instead of wedging the server.
#include "net/http_server.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

namespace hypertopo::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

// A response can be large (a full plan list) and the client slow to take it; writes get at least
// this long even when read_timeout is short.
constexpr std::chrono::milliseconds kMinWriteTimeout{30000};
// What is read and thrown away of a refused request before the connection is closed.
constexpr std::size_t kMaxDrainBytes = 1u << 20;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// What the connection should do after a failed read.
enum class ReadFailure { kClose, kBadRequest, kTooLarge };

ReadFailure classify(const error_code& ec) {
  if (ec == http::error::body_limit) return ReadFailure::kTooLarge;
  if (ec.category() == http::make_error_code(http::error::body_limit).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return ReadFailure::kBadRequest;
  }
  return ReadFailure::kClose;  // the client went away, timed out, or the server is stopping
}

// Where a connection is in its life, as the accepting strand sees it when it looks for one to evict.
enum class Phase : int {
  kWaiting,   // TLS handshake or waiting for (the rest of) a request header: idle keep-alive too
  kBody,      // reading a body it holds a share of the in-flight budget for
  kHandling,  // in the handler
  kWriting,   // writing the answer
  kDraining,  // answered with an error; reading what the client still sends before closing
};

// Lower is evicted first; -1 never.
int eviction_rank(Phase phase) {
  switch (phase) {
    case Phase::kDraining:
      return 0;
    case Phase::kWaiting:
      return 1;
    case Phase::kWriting:
      return 2;
    case Phase::kBody:
    case Phase::kHandling:
      return -1;
  }
  return -1;
}

// Methods whose requests carry no body (RFC 9110 gives GET, HEAD, DELETE and OPTIONS bodies no
// meaning); none of our routes reads one.
bool takes_no_body(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "DELETE" || method == "OPTIONS" ||
         method == "TRACE" || method == "CONNECT";
}

std::int64_t now_ticks() { return std::chrono::steady_clock::now().time_since_epoch().count(); }

// Whether this thread holds sessions_mutex (through SessionsLock): a session destroyed here would
// deadlock on it.
thread_local bool t_holds_sessions_mutex = false;

class SessionsLock {
 public:
  explicit SessionsLock(std::mutex& mutex) : lock_(mutex) { t_holds_sessions_mutex = true; }
  ~SessionsLock() { t_holds_sessions_mutex = false; }
  SessionsLock(const SessionsLock&) = delete;
  SessionsLock& operator=(const SessionsLock&) = delete;

 private:
  std::lock_guard<std::mutex> lock_;
};

// A connection as stop() and the accepting strand see it.
class SessionHandle {
 public:
  virtual ~SessionHandle() = default;
  virtual void close_for_stop() = 0;

  void set_phase(Phase p) {
    phase_since_.store(now_ticks(), std::memory_order_relaxed);
    phase_.store(p, std::memory_order_relaxed);
  }
  Phase phase() const { return phase_.load(std::memory_order_relaxed); }
  std::int64_t phase_since() const { return phase_since_.load(std::memory_order_relaxed); }
  std::atomic<bool> closing{false};  // evicted or stopping: no longer counted against the cap

 private:
  std::atomic<Phase> phase_{Phase::kWaiting};
  std::atomic<std::int64_t> phase_since_{now_ticks()};
};

// References taken while walking the registry; declared before the SessionsLock, so they are
// released after it.
using HeldSessions = std::vector<std::shared_ptr<SessionHandle>>;

enum class RouteMatch { kFound, kNoPath, kBadMethod };

// What the sessions share with the server: options, routes and the registry of open connections.
struct ServerCore {
  HttpServerOptions options;

  std::mutex routes_mutex;
  std::unordered_map<std::string, std::map<std::string, HttpHandler>> routes;  // path -> method -> handler

  std::mutex sessions_mutex;
  bool stopping = false;
  bool started = false;
  std::uint64_t next_session_id = 0;
  std::unordered_map<std::uint64_t, std::weak_ptr<SessionHandle>> sessions;

  std::atomic<std::size_t> inflight{0};
  std::atomic<std::size_t> peak_inflight{0};
  std::atomic<std::uint64_t> evicted{0}, refused{0}, accept_errors{0}, busy{0}, too_large{0}, too_slow{0};

  explicit ServerCore(HttpServerOptions o) : options(std::move(o)) {}

  const HttpServerLimits& limits() const { return options.limits; }
  std::chrono::milliseconds write_timeout() const {
    return std::max(options.limits.read_timeout, kMinWriteTimeout);
  }

  // The most one request may hold of the shared budget.
  std::size_t request_share() const {
    return limits().max_inflight_bytes / std::max<std::size_t>(1, limits().request_share);
  }

  // Takes `bytes` from the shared budget; false (and nothing taken) when they do not fit now. A
  // request over small_request_bytes leaves the small requests' reserve alone.
  bool reserve(std::size_t bytes) {
    const std::size_t reserve_share = limits().small_reserve_share;
    const std::size_t kept = bytes <= limits().small_request_bytes || reserve_share == 0
                                 ? 0
                                 : limits().max_inflight_bytes / reserve_share;
    const std::size_t ceiling = limits().max_inflight_bytes - std::min(kept, limits().max_inflight_bytes);
    std::size_t current = inflight.load();
    do {
      if (bytes > ceiling || current > ceiling - bytes) return false;
    } while (!inflight.compare_exchange_weak(current, current + bytes));
    std::size_t peak = peak_inflight.load();
    while (current + bytes > peak && !peak_inflight.compare_exchange_weak(peak, current + bytes)) {
    }
    return true;
  }
  void release(std::size_t bytes) { inflight.fetch_sub(bytes); }

  RouteMatch match(const std::string& path, const std::string& method, std::string& allow) {
    std::lock_guard lock(routes_mutex);
    auto found = routes.find(path);
    if (found == routes.end()) return RouteMatch::kNoPath;
    if (found->second.contains(method)) return RouteMatch::kFound;
    for (const auto& [name, unused] : found->second) allow += (allow.empty() ? "" : ", ") + name;
    return RouteMatch::kBadMethod;
  }

  // At the cap, marks the session to evict (the caller closes it) or answers nullptr when the cap
  // is not reached (`room` true) or nothing may go. Called with sessions_mutex held; every session
  // it looks at stays referenced in `held`, which the caller releases after unlocking.
  std::shared_ptr<SessionHandle> pick_victim_locked(bool& room, bool only_idle, HeldSessions& held) {
    std::size_t live = 0;
    SessionHandle* victim = nullptr;
    std::size_t victim_at = 0;
    int victim_rank = 0;
    held.reserve(sessions.size());
    for (const auto& [id, weak] : sessions) {
      held.push_back(weak.lock());
      SessionHandle* session = held.back().get();
      if (!session || session->closing.load()) continue;
      ++live;
      const int rank = eviction_rank(session->phase());
      if (rank < 0 || (only_idle && rank > 1)) continue;
      if (!victim || rank < victim_rank ||
          (rank == victim_rank && session->phase_since() < victim->phase_since())) {
        victim = session;
        victim_at = held.size() - 1;
        victim_rank = rank;
      }
    }
    room = live < limits().max_connections;
    if ((room && !only_idle) || !victim) return nullptr;
    victim->closing = true;
    return held[victim_at];
  }

  HttpServerResponse dispatch(const HttpServerRequest& request, std::string& allow) {
    HttpHandler handler;
    {
      std::lock_guard lock(routes_mutex);
      auto path = routes.find(request.path);
      if (path == routes.end()) {
        return HttpServerResponse{.status = 404, .body = "no route for " + request.path + "\n"};
      }
      auto method = path->second.find(request.method);
      if (method == path->second.end()) {
        for (const auto& [name, unused] : path->second) allow += (allow.empty() ? "" : ", ") + name;
        return HttpServerResponse{
            .status = 405,
            .body = request.method + " is not allowed on " + request.path + " (allowed: " + allow + ")\n"};
      }
      handler = method->second;
    }
    try {
      return handler(request);
    } catch (const std::exception& e) {
      return HttpServerResponse{.status = 500, .body = std::string(e.what()) + "\n"};
    } catch (...) {
      return HttpServerResponse{.status = 500, .body = "the handler failed with a non-standard exception\n"};
    }
  }

  void unregister_session(std::uint64_t id) {
    if (t_holds_sessions_mutex) {
      std::fputs("hypertopo: an HTTP session was destroyed under sessions_mutex\n", stderr);
      std::abort();
    }
    SessionsLock lock(sessions_mutex);
    sessions.erase(id);
  }
};

template <typename Stream>
class Session : public SessionHandle, public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  Session(ServerCore& server, Stream stream) : server_(server), stream_(std::move(stream)) {}
  ~Session() override {
    release_reservation();
    if (id_) server_.unregister_session(*id_);
  }

  std::optional<std::uint64_t>& id() { return id_; }

  void run() {
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->begin(); });
  }

  void close_for_stop() override {
    closing = true;
    asio::post(stream_.get_executor(), [self = this->shared_from_this()] {
      self->stopped_ = true;
      self->release_reservation();
      self->tcp().close();  // cancels the pending operation and the deadline timer
    });
  }

 private:
  beast::tcp_stream& tcp() { return beast::get_lowest_layer(stream_); }
  const HttpServerLimits& limits() const { return server_.limits(); }

  void release_reservation() {
    if (reserved_ == 0) return;
    server_.release(reserved_);
    reserved_ = 0;
  }

  void begin() {
    if (stopped_) return;
    if constexpr (kTls) {
      tcp().expires_after(limits().read_timeout);
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](error_code ec) {
                                if (ec) return self->tcp().close();
                                self->read_request();
                              });
    } else {
      read_request();
    }
  }

  void read_request() {
    if (stopped_) return;
    set_phase(Phase::kWaiting);
    parser_.emplace();
    parser_->header_limit(
        static_cast<std::uint32_t>(std::min<std::size_t>(limits().max_header_bytes, UINT32_MAX)));
    parser_->body_limit(limits().max_body_bytes);
    // One deadline for the whole request, header and body: a client trickling bytes is dropped.
    request_deadline_ = Clock::now() + limits().read_timeout;
    tcp().expires_at(request_deadline_);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](error_code ec, std::size_t) {
                              if (ec) return self->read_failed(ec);
                              self->after_header();
                            });
  }

  // A body is refused before a byte of it is read: on a route that does not exist or takes none,
  // over the route's limit, or when its share of the in-flight budget is not free.
  void after_header() {
    const auto& header = parser_->get();
    if (!parser_->is_done()) {
      const std::string method(header.method_string());
      const std::string target(header.target());
      const std::string path = target.substr(0, target.find('?'));
      std::string allow;
      switch (server_.match(path, method, allow)) {
        case RouteMatch::kNoPath:
          return send_error(404, "no route for " + path + "\n");
        case RouteMatch::kBadMethod:
          return send_error(405, method + " is not allowed on " + path + " (allowed: " + allow + ")\n",
                            {{"Allow", allow}});
        case RouteMatch::kFound:
          break;
      }
      const std::size_t limit = takes_no_body(method) ? 0 : limits().max_body_bytes;
      const auto length = parser_->content_length();
      if (limit == 0) {
        ++server_.too_large;
        return send_error(413, "a " + method + " request takes no body\n");
      }
      if (length && *length > limit) {
        ++server_.too_large;
        return send_error(
            413, "the request body is larger than the limit of " + std::to_string(limit) + " bytes\n");
      }
      parser_->body_limit(limit);
      const std::size_t declared = length ? static_cast<std::size_t>(*length) : limit;
      const std::size_t factor = std::max<std::size_t>(1, limits().body_memory_factor);
      // One request's share is what keeps a single client from holding everyone else's budget.
      const std::size_t share = server_.request_share();
      const std::size_t cost = declared > share / factor ? share + 1 : declared * factor;
      if (cost > share) {
        ++server_.too_large;
        return send_error(
            413, "the request body of " + std::to_string(declared) +
                     " bytes is larger than one request may send here (" + std::to_string(share / factor) +
                     " bytes: its share of " + std::to_string(share) + " of the " +
                     std::to_string(limits().max_inflight_bytes) + " bytes in flight, counted " +
                     std::to_string(factor) + " times its size)\n");
      }
      if (!server_.reserve(cost)) {
        ++server_.busy;
        return send_error(503, "too many request bodies in flight; retry\n", {{"Retry-After", "1"}});
      }
      reserved_ = cost;
      set_phase(Phase::kBody);
    }
    if (!parser_->is_done() && beast::iequals(header[http::field::expect], "100-continue")) {
      auto interim =
          std::make_shared<http::response<http::empty_body>>(http::status::continue_, header.version());
      http::async_write(stream_, *interim,
                        [self = this->shared_from_this(), interim](error_code ec, std::size_t) {
                          if (ec) return self->tcp().close();
                          self->read_body();
                        });
      return;
    }
    read_body();
  }

  void read_body() {
    if (parser_->is_done()) return respond();
    body_started_ = Clock::now();
    body_received_ = 0;
    read_body_some();
  }

  // Piece by piece, so that each read's deadline can be the moment the body's average rate would
  // fall under the floor if nothing more came.
  void read_body_some() {
    auto deadline = request_deadline_;
    if (const std::size_t floor = limits().min_body_bytes_per_second; floor > 0) {
      const auto earned = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(static_cast<double>(body_received_) / static_cast<double>(floor)));
      deadline =
          std::min(deadline, body_started_ + std::max<Clock::duration>(limits().body_rate_grace, earned));
    }
    deadline_is_floor_ = deadline < request_deadline_;
    tcp().expires_at(deadline);
    http::async_read_some(stream_, buffer_, *parser_,
                          [self = this->shared_from_this()](error_code ec, std::size_t n) {
                            self->body_received_ += n;
                            if (ec == beast::error::timeout && self->deadline_is_floor_) {
                              ++self->server_.too_slow;
                              return self->tcp().close();
                            }
                            if (ec) return self->read_failed(ec);
                            if (self->parser_->is_done()) return self->respond();
                            self->read_body_some();
                          });
  }

  void read_failed(const error_code& ec) {
    switch (classify(ec)) {
      case ReadFailure::kTooLarge:
        ++server_.too_large;
        return send_error(413, "the request body is larger than the limit of " +
                                   std::to_string(limits().max_body_bytes) + " bytes\n");
      case ReadFailure::kBadRequest:
        return send_error(400, "malformed request: " + ec.message() + "\n");
      case ReadFailure::kClose:
        return tcp().close();
    }
  }

  // Answers and closes. The unread rest of the request is drained first: closing a socket with
  // unread bytes resets the connection, and the client would lose the answer.
  void send_error(int status, std::string body,
                  std::vector<std::pair<std::string, std::string>> headers = {}) {
    if (stopped_) return;
    release_reservation();
    set_phase(Phase::kDraining);
    response_ = {};
    response_.version(11);
    response_.result(static_cast<unsigned>(status));
    response_.set(http::field::server, "hypertopo");
    response_.set(http::field::content_type, "text/plain; charset=utf-8");
    for (const auto& [name, value] : headers) response_.set(name, value);
    response_.keep_alive(false);
    response_.body() = std::move(body);
    response_.prepare_payload();
    tcp().expires_after(server_.write_timeout());
    http::async_write(stream_, response_, [self = this->shared_from_this()](error_code ec, std::size_t) {
      if (ec) return self->tcp().close();
      error_code ignored;
      self->tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
      self->tcp().expires_after(self->limits().read_timeout);
      self->drain();
    });
  }

  // At most kMaxDrainBytes: a client that goes on sending a refused body is cut off (it may then
  // see a reset instead of the answer).
  void drain() {
    tcp().async_read_some(asio::buffer(scratch_),
                          [self = this->shared_from_this()](error_code ec, std::size_t n) {
                            self->drained_ += n;
                            if (ec || self->drained_ > kMaxDrainBytes) return self->tcp().close();
                            self->drain();
                          });
  }

  void respond() {
    if (stopped_) return;
    set_phase(Phase::kHandling);
    auto& message = parser_->get();
    HttpServerRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    const auto question = request.target.find('?');
    request.path = request.target.substr(0, question);
    if (question != std::string::npos) request.query = request.target.substr(question + 1);
    for (const auto& field : message) {
      auto [it, inserted] = request.headers.emplace(
          lower(std::string_view(field.name_string().data(), field.name_string().size())),
          std::string(field.value()));
      if (!inserted) it->second += ", " + std::string(field.value());
    }
    request.body = std::move(message.body());

    std::string allow;
    HttpServerResponse reply = server_.dispatch(request, allow);
    const bool keep_alive = message.keep_alive();

    response_ = {};
    response_.version(message.version());
    const bool valid_status = reply.status >= 100 && reply.status <= 999;
    response_.result(static_cast<unsigned>(valid_status ? reply.status : 500));
    response_.set(http::field::server, "hypertopo");
    response_.set(http::field::content_type, reply.content_type);
    if (!allow.empty()) response_.set(http::field::allow, allow);
    response_.keep_alive(keep_alive);
    response_.body() = valid_status
                           ? std::move(reply.body)
                           : "the handler answered an invalid status " + std::to_string(reply.status) + "\n";
    response_.prepare_payload();
    if (stopped_) return;
    set_phase(Phase::kWriting);
    tcp().expires_after(server_.write_timeout());
    http::async_write(stream_, response_,
                      [self = this->shared_from_this(), keep_alive](error_code ec, std::size_t) {
                        self->release_reservation();
                        if (ec) return self->tcp().close();
                        if (keep_alive) return self->read_request();
                        self->finish();
                      });
  }

  void finish() {
    if constexpr (kTls) {
      stream_.async_shutdown([self = this->shared_from_this()](error_code) { self->tcp().close(); });
    } else {
      error_code ignored;
      tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
      tcp().close();
    }
  }

  ServerCore& server_;
  Stream stream_;
  std::optional<std::uint64_t> id_;  // set once registered with the server
  bool stopped_ = false;
  std::size_t reserved_ = 0;  // this session's share of the in-flight budget
  std::size_t drained_ = 0;
  Clock::time_point request_deadline_{};  // read_timeout after the request's first byte was awaited
  Clock::time_point body_started_{};
  std::size_t body_received_ = 0;
  bool deadline_is_floor_ = false;  // the pending body read ends at the floor rate's deadline
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  std::array<char, 16 * 1024> scratch_{};
};

}  // namespace

// The base (registry) outlives the io_context: sessions destroyed with the context's pending
// handlers unregister themselves there. The TLS context is declared before the io_context too.
struct HttpServer::Impl : ServerCore {
  std::optional<asio::ssl::context> tls;
  asio::io_context io;
  std::optional<tcp::acceptor> acceptor;
  std::optional<asio::steady_timer> accept_timer;  // the back-off after a failed accept()
  std::chrono::milliseconds accept_backoff{0};
  std::atomic<std::uint16_t> bound_port{0};
  std::vector<std::thread> threads;

  explicit Impl(HttpServerOptions o) : ServerCore(std::move(o)) {}

  std::expected<void, Error> load_tls();
  std::expected<void, Error> listen();
  void accept();
  template <typename Stream>
  void start_session(Stream stream);
};

template <typename Stream>
void HttpServer::Impl::start_session(Stream stream) {
  auto session = std::make_shared<Session<Stream>>(*this, std::move(stream));
  HeldSessions held;
  std::shared_ptr<SessionHandle> victim;
  {
    SessionsLock lock(sessions_mutex);
    if (stopping) return;  // the session closes its socket as it goes away
    bool room = false;
    victim = pick_victim_locked(room, false, held);
    if (!room && !victim) {
      ++refused;
      return;  // every connection is busy with a body or a handler: this one closes as it goes away
    }
    session->id() = next_session_id++;
    sessions.emplace(*session->id(), session);
  }
  if (victim) {
    ++evicted;
    victim->close_for_stop();
  }
  session->run();
}

void HttpServer::Impl::accept() {
  acceptor->async_accept(asio::make_strand(io), [this](error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
    if (!ec) {
      accept_backoff = std::chrono::milliseconds{0};
      beast::tcp_stream plain(std::move(socket));
      if (tls) {
        start_session(beast::ssl_stream<beast::tcp_stream>(std::move(plain), *tls));
      } else {
        start_session(std::move(plain));
      }
      return accept();
    }
    // Out of descriptors (EMFILE, ENFILE) or memory, the pending connection stays in the backlog and
    // an immediate retry fails again at once, spinning a core: free a descriptor held by an idle
    // connection and wait, longer each time, before accepting again.
    ++accept_errors;
    HeldSessions held;
    std::shared_ptr<SessionHandle> victim;
    {
      SessionsLock lock(sessions_mutex);
      bool room = false;
      victim = pick_victim_locked(room, true, held);
    }
    if (victim) {
      ++evicted;
      victim->close_for_stop();
    }
    accept_backoff = accept_backoff.count() == 0
                         ? options.limits.accept_backoff_min
                         : std::min(accept_backoff * 2, options.limits.accept_backoff_max);
    accept_timer->expires_after(accept_backoff);
    accept_timer->async_wait([this](error_code wait_ec) {
      if (wait_ec || !acceptor->is_open()) return;
      accept();
    });
  });
}

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::handle(const std::string& method, const std::string& path, HttpHandler handler) {
  std::lock_guard lock(impl_->routes_mutex);
  impl_->routes[path][method] = std::move(handler);
}

std::expected<void, Error> HttpServer::Impl::load_tls() {
  const std::string where = options.address + ":" + std::to_string(options.port);
  if (options.tls_cert_file.empty() || options.tls_key_file.empty()) {
    if (options.tls_cert_file.empty() && options.tls_key_file.empty()) {
      return fail(ErrorCode::kInvalidArgument, where + ": a client CA file (" + options.tls_client_ca_file +
                                                   ") needs TLS: a certificate file and a key file");
    }
    return fail(ErrorCode::kInvalidArgument,
                where + ": TLS needs both a certificate file and a key file (only " +
                    (options.tls_cert_file.empty() ? "the key file \"" + options.tls_key_file
                                                   : "the certificate file \"" + options.tls_cert_file) +
                    "\" is set)");
  }
  std::vector<std::string> files{options.tls_cert_file, options.tls_key_file};
  if (!options.tls_client_ca_file.empty()) files.push_back(options.tls_client_ca_file);
  for (const auto& file : files) {
    std::error_code fs_ec;
    if (!std::filesystem::is_regular_file(file, fs_ec)) {
      return fail(ErrorCode::kNotFound, "TLS file " + file + ": no such file");
    }
  }
  tls.emplace(asio::ssl::context::tls_server);
  tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                   asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                   asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use);
  error_code ec;
  tls->use_certificate_chain_file(options.tls_cert_file, ec);
  if (ec) {
    return fail(ErrorCode::kInvalidArgument, "TLS certificate file " + options.tls_cert_file +
                                                 ": not a PEM certificate (" + ec.message() + ")");
  }
  tls->use_private_key_file(options.tls_key_file, asio::ssl::context::pem, ec);
  if (ec) {
    return fail(ErrorCode::kInvalidArgument,
                "TLS key file " + options.tls_key_file + ": not a PEM private key (" + ec.message() + ")");
  }
  if (SSL_CTX_check_private_key(tls->native_handle()) != 1) {
    return fail(ErrorCode::kInvalidArgument, "TLS key file " + options.tls_key_file +
                                                 " does not match the certificate in " +
                                                 options.tls_cert_file);
  }
  if (!options.tls_client_ca_file.empty()) {
    tls->load_verify_file(options.tls_client_ca_file, ec);
    if (ec) {
      return fail(ErrorCode::kInvalidArgument, "TLS client CA file " + options.tls_client_ca_file +
                                                   ": not a PEM certificate bundle (" + ec.message() + ")");
    }
    // The handshake itself refuses a client without a certificate the CA signed, before any byte
    // of HTTP is read.
    tls->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
    // A resumed session skips the certificate check; OpenSSL refuses to resume sessions of a
    // verifying server without a session id context, so give it one.
    static constexpr unsigned char kSessionContext[] = "hypertopo-http";
    SSL_CTX_set_session_id_context(tls->native_handle(), kSessionContext, sizeof kSessionContext - 1);
  }
  return {};
}

std::expected<void, Error> HttpServer::Impl::listen() {
  const std::string where = options.address + ":" + std::to_string(options.port);
  error_code ec;
  const auto address = asio::ip::make_address(options.address, ec);
  if (ec) return fail(ErrorCode::kInvalidArgument, where + ": not an IP address (" + ec.message() + ")");
  const tcp::endpoint endpoint(address, options.port);
  acceptor.emplace(asio::make_strand(io));
  accept_timer.emplace(acceptor->get_executor());
  auto failed = [&](const char* step) {
    return fail(ErrorCode::kUnavailable, where + ": " + ec.message() + " (" + step + ")");
  };
  if (acceptor->open(endpoint.protocol(), ec); ec) return failed("socket");
  if (acceptor->set_option(asio::socket_base::reuse_address(true), ec); ec) return failed("SO_REUSEADDR");
  if (acceptor->bind(endpoint, ec); ec) return failed("bind");
  if (acceptor->listen(asio::socket_base::max_listen_connections, ec); ec) return failed("listen");
  bound_port = acceptor->local_endpoint(ec).port();
  if (ec) return failed("getsockname");
  return {};
}

std::expected<void, Error> HttpServer::start() {
  Impl& s = *impl_;
  {
    SessionsLock lock(s.sessions_mutex);
    if (s.started || s.stopping)
      return fail(ErrorCode::kInvalidArgument, "the HTTP server was already started");
  }
  auto ready = (s.options.tls_cert_file.empty() && s.options.tls_key_file.empty() &&
                s.options.tls_client_ca_file.empty())
                   ? std::expected<void, Error>{}
                   : s.load_tls();
  if (ready) ready = s.listen();
  if (!ready) {  // nothing runs yet: leave the server as new, so that start() may be tried again
    s.accept_timer.reset();
    s.acceptor.reset();
    s.tls.reset();
    s.bound_port = 0;
    return ready;
  }
  {
    SessionsLock lock(s.sessions_mutex);
    s.started = true;
  }
  s.accept();
  const int count = std::max(1, s.options.threads);
  for (int i = 0; i < count; ++i) s.threads.emplace_back([&s] { s.io.run(); });
  return {};
}

void HttpServer::stop() {
  Impl& s = *impl_;
  HeldSessions open;
  {
    SessionsLock lock(s.sessions_mutex);
    if (!s.started || s.stopping) return;
    s.stopping = true;
    for (const auto& [id, weak] : s.sessions) {
      if (auto session = weak.lock()) open.push_back(std::move(session));
    }
  }
  if (s.acceptor) {
    asio::post(s.acceptor->get_executor(), [&s] {
      error_code ignored;
      s.acceptor->close(ignored);
      s.accept_timer->cancel();
    });
  }
  for (const auto& session : open) session->close_for_stop();
  open.clear();
  // With the listener and every connection closed, the threads run out of work and return.
  for (auto& thread : s.threads) {
    if (thread.joinable()) thread.join();
  }
  s.threads.clear();
}

std::uint16_t HttpServer::port() const { return impl_->bound_port; }

HttpServerStats HttpServer::stats() const {
  const Impl& s = *impl_;
  HttpServerStats out;
  HeldSessions held;
  {
    SessionsLock lock(impl_->sessions_mutex);
    held.reserve(s.sessions.size());
    for (const auto& [id, weak] : s.sessions) {
      held.push_back(weak.lock());
      if (held.back() && !held.back()->closing.load()) ++out.connections_open;
    }
  }
  out.inflight_bytes = s.inflight.load();
  out.peak_inflight_bytes = s.peak_inflight.load();
  out.connections_evicted = s.evicted.load();
  out.connections_refused = s.refused.load();
  out.accept_errors = s.accept_errors.load();
  out.requests_busy = s.busy.load();
  out.requests_too_large = s.too_large.load();
  out.requests_too_slow = s.too_slow.load();
  return out;
}

HttpServerResponse HttpServer::dispatch(const HttpServerRequest& request) {
  std::string allow;
  return impl_->dispatch(request, allow);
}

}  // namespace hypertopo::net
