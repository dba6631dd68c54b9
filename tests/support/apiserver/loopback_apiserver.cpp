#include "tests/support/apiserver/loopback_apiserver.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace hypertopo::testing {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

struct Fault {
  enum class Kind { kFail, kDrop, kTruncate, kDelay } kind;
  int remaining = 0;
  int status = 0;
  int retry_after_seconds = 0;
  std::chrono::milliseconds delay{0};
  std::string verb;
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() + 0 && hex_value(text[i + 1]) >= 0 &&
        hex_value(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2])));
      i += 2;
    } else if (text[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

StoreRequest to_store_request(const http::request<http::string_body>& req) {
  StoreRequest out;
  out.method = std::string(req.method_string());
  std::string_view target(req.target().data(), req.target().size());
  auto q = target.find('?');
  out.path = percent_decode(target.substr(0, q));
  if (q != std::string_view::npos) {
    std::string_view query = target.substr(q + 1);
    while (!query.empty()) {
      auto amp = query.find('&');
      std::string_view pair = query.substr(0, amp);
      auto eq = pair.find('=');
      std::string key = percent_decode(pair.substr(0, eq));
      std::string value = eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1));
      if (!key.empty()) out.query[key] = value;
      if (amp == std::string_view::npos) break;
      query = query.substr(amp + 1);
    }
  }
  out.content_type = std::string(req[http::field::content_type]);
  out.body = req.body();
  return out;
}

// The peer has closed its side: a watch stream has no one left to write to.
bool peer_closed(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

}  // namespace

struct LoopbackApiServer::State {
  LoopbackApiServerOptions options;
  ResourceStore store;
  CertificatePair certificate;
  std::unique_ptr<asio::ssl::context> tls;
  asio::io_context io;
  std::unique_ptr<tcp::acceptor> acceptor;
  uint16_t port = 0;
  std::thread accept_thread;
  std::atomic<bool> stopping{false};

  mutable std::mutex mutex;  // guards everything below
  std::string bearer_token;
  std::vector<std::string> extra_tokens;
  std::vector<LoggedRequest> log;
  std::string last_token;
  bool last_client_cert = false;
  std::deque<Fault> faults;
  int drop_watch_after = 0;
  std::map<std::string, int> counts;
  int requests = 0;
  int connections = 0;
  struct Connection {
    std::thread thread;
    int fd = -1;
    bool done = false;
  };
  std::list<Connection> live;
  RawHttpHandler raw_handler;  // set before start(), read-only afterwards

  std::optional<Fault> take_fault(const std::string& verb) {
    std::lock_guard lock(mutex);
    for (auto it = faults.begin(); it != faults.end(); ++it) {
      if (!it->verb.empty() && it->verb != verb) continue;
      Fault f = *it;
      if (--it->remaining <= 0) faults.erase(it);
      return f;
    }
    return std::nullopt;
  }

  void accept_loop();
  std::expected<void, Error> listen(uint16_t on_port);
  void close_listener_and_connections();
  template <typename Stream>
  void serve(Stream& stream, int fd);
  template <typename Stream>
  bool serve_watch(Stream& stream, int fd, const http::request<http::string_body>& req,
                   const StoreRequest& sreq, const std::function<void(int)>& logged);
};

namespace {

template <typename Stream>
bool write_response(Stream& stream, const http::request<http::string_body>& req, int status, std::string body,
                    int retry_after = 0) {
  http::response<http::string_body> res{static_cast<http::status>(status), req.version()};
  res.set(http::field::content_type, "application/json");
  if (retry_after > 0) res.set(http::field::retry_after, std::to_string(retry_after));
  res.keep_alive(req.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  boost::system::error_code ec;
  http::write(stream, res, ec);
  return !ec && req.keep_alive();
}

// Answers a raw-handler request; false when the connection must close.
template <typename Stream>
bool serve_raw(Stream& stream, const http::request<http::string_body>& req, RawHttpResponse& raw) {
  if (raw.delay.count() > 0) std::this_thread::sleep_for(raw.delay);  // the client's timeout is under test
  if (raw.drop) return false;
  if (raw.chunked_cut) {
    std::ostringstream size;
    size << std::hex << raw.body.size();
    const std::string bytes =
        "HTTP/1.1 " + std::to_string(raw.status) + " X\r\nContent-Type: " + raw.content_type +
        "\r\nTransfer-Encoding: chunked\r\n\r\n" + size.str() + "\r\n" + raw.body + "\r\n";
    boost::system::error_code ec;
    asio::write(stream, asio::buffer(bytes), ec);
    return false;
  }
  if (raw.declared_length) {
    std::string head = "HTTP/1.1 " + std::to_string(raw.status) + " X\r\nContent-Type: " + raw.content_type +
                       "\r\nContent-Length: " + std::to_string(*raw.declared_length) + "\r\n\r\n";
    boost::system::error_code ec;
    asio::write(stream, asio::buffer(head), ec);
    if (!ec) asio::write(stream, asio::buffer(raw.body), ec);
    return false;
  }
  http::response<http::string_body> res{static_cast<http::status>(raw.status), req.version()};
  res.set(http::field::content_type, raw.content_type);
  res.keep_alive(req.keep_alive());
  res.body() = std::move(raw.body);
  res.prepare_payload();
  boost::system::error_code ec;
  http::write(stream, res, ec);
  return !ec && req.keep_alive();
}

template <typename Stream>
bool write_chunk(Stream& stream, const std::string& line) {
  boost::system::error_code ec;
  asio::write(stream, http::make_chunk(asio::buffer(line)), ec);
  return !ec;
}

}  // namespace

template <typename Stream>
bool LoopbackApiServer::State::serve_watch(Stream& stream, int fd,
                                           const http::request<http::string_body>& req,
                                           const StoreRequest& sreq, const std::function<void(int)>& logged) {
  auto open = store.open_watch(sreq);
  logged(open.gone ? 410 : open.status);
  if (open.status != 200) return write_response(stream, req, open.status, open.error_body);
  int cut_after;
  {
    std::lock_guard lock(mutex);
    cut_after = drop_watch_after;
  }
  http::response<http::empty_body> res{http::status::ok, req.version()};
  res.set(http::field::content_type, "application/json");
  res.chunked(true);
  http::response_serializer<http::empty_body> serializer{res};
  boost::system::error_code ec;
  http::write_header(stream, serializer, ec);
  if (ec) return false;
  if (open.gone) {
    nlohmann::json error = {
        {"type", "ERROR"},
        {"object", nlohmann::json::parse(status_body(
                       410, "Expired", "too old resource version: " + sreq.query.at("resourceVersion")))}};
    if (!write_chunk(stream, error.dump() + "\n")) return false;
    asio::write(stream, http::make_chunk_last(), ec);
    return false;
  }
  auto deadline = std::chrono::steady_clock::time_point::max();
  if (auto t = sreq.query.find("timeoutSeconds"); t != sreq.query.end()) {
    deadline = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(t->second.c_str()));
  }
  int sent = 0;
  auto send = [&](const nlohmann::json& event) {
    if (cut_after > 0 && sent >= cut_after) return false;
    if (!write_chunk(stream, event.dump() + "\n")) return false;
    ++sent;
    return true;
  };
  for (const auto& event : open.initial) {
    if (!send(event)) return false;
  }
  while (!stopping && !store.closed() && std::chrono::steady_clock::now() < deadline) {
    if (peer_closed(fd)) return false;
    for (const auto& event : store.next_events(open.cursor, std::chrono::milliseconds(20))) {
      if (!send(event)) return false;  // a cut stream ends without the final chunk
    }
  }
  asio::write(stream, http::make_chunk_last(), ec);
  return false;
}

template <typename Stream>
void LoopbackApiServer::State::serve(Stream& stream, int fd) {
  boost::beast::flat_buffer buffer;
  for (;;) {
    http::request<http::string_body> req;
    boost::system::error_code ec;
    http::read(stream, buffer, req, ec);
    if (ec || stopping) return;
    const auto arrived = std::chrono::steady_clock::now();
    if (raw_handler) {
      auto raw = raw_handler({std::string(req.method_string()), std::string(req.target()),
                              std::string(req[http::field::authorization]), req.body()});
      if (raw) {
        {
          std::lock_guard lock(mutex);
          ++requests;
          ++counts["raw"];
          log.push_back({"raw", std::string(req.target()), "", raw->drop ? 0 : raw->status, arrived});
        }
        if (!serve_raw(stream, req, *raw)) return;
        continue;
      }
    }
    StoreRequest sreq = to_store_request(req);
    const std::string verb = verb_of(sreq);
    std::string token;
    bool authorized = true;
    std::size_t entry = 0;  // this request's line in the log, written before the store sees it
    {
      std::lock_guard lock(mutex);
      ++requests;
      ++counts[verb];
      std::string auth(req[http::field::authorization]);
      token = auth.starts_with("Bearer ") ? auth.substr(7) : "";
      last_token = token;
      authorized = bearer_token.empty() || auth == "Bearer " + bearer_token ||
                   (!token.empty() &&
                    std::find(extra_tokens.begin(), extra_tokens.end(), token) != extra_tokens.end());
      // Logged when read, so that whatever the store does with it is never seen before its line.
      entry = log.size();
      log.push_back({verb, sreq.path, token, 0, arrived});
    }
    auto logged = [&](int status) {
      std::lock_guard lock(mutex);
      log[entry].status = status;
    };
    if (!authorized) {
      logged(401);
      if (!write_response(stream, req, 401, status_body(401, "Unauthorized", "Unauthorized"))) return;
      continue;
    }
    auto fault = take_fault(verb);
    if (fault && fault->kind == Fault::Kind::kDrop) {
      logged(0);
      return;
    }
    if (fault && fault->kind == Fault::Kind::kDelay) std::this_thread::sleep_for(fault->delay);
    if (fault && fault->kind == Fault::Kind::kFail) {
      logged(fault->status);
      std::string reason = fault->status == 429 ? "TooManyRequests" : "InternalError";
      if (fault->status == 503) reason = "ServiceUnavailable";
      if (!write_response(stream, req, fault->status, status_body(fault->status, reason, "injected failure"),
                          fault->retry_after_seconds)) {
        return;
      }
      continue;
    }
    if (verb == "watch") {
      if (!serve_watch(stream, fd, req, sreq, logged)) return;
      continue;
    }
    StoreResponse res = store.handle(sreq);
    logged(res.status);
    if (fault && fault->kind == Fault::Kind::kTruncate) res.body = res.body.substr(0, res.body.size() / 2);
    if (!write_response(stream, req, res.status, std::move(res.body))) return;
  }
}

void LoopbackApiServer::State::accept_loop() {
  while (!stopping) {
    tcp::socket socket(io);
    boost::system::error_code ec;
    acceptor->accept(socket, ec);
    if (ec || stopping) return;
    std::lock_guard lock(mutex);
    ++connections;
    // Reap finished connections so a long test does not grow the list.
    for (auto it = live.begin(); it != live.end();) {
      if (it->done) {
        it->thread.join();
        it = live.erase(it);
      } else {
        ++it;
      }
    }
    auto& conn = live.emplace_back();
    conn.fd = socket.native_handle();
    conn.thread = std::thread([this, &conn, s = std::move(socket)]() mutable {
      int fd = s.native_handle();
      if (tls) {
        asio::ssl::stream<tcp::socket> stream(std::move(s), *tls);
        boost::system::error_code handshake_ec;
        stream.handshake(asio::ssl::stream_base::server, handshake_ec);
        if (!handshake_ec) {
          {
            std::lock_guard l(mutex);
            last_client_cert = SSL_get0_peer_certificate(stream.native_handle()) != nullptr;
          }
          serve(stream, fd);  // no TLS close_notify: a dropped connection is meant to be abrupt
        }
      } else {
        serve(s, fd);
        boost::system::error_code shutdown_ec;
        s.shutdown(tcp::socket::shutdown_both, shutdown_ec);
      }
      std::lock_guard l(mutex);
      conn.fd = -1;
      conn.done = true;
    });
  }
}

LoopbackApiServer::LoopbackApiServer(LoopbackApiServerOptions options) : state_(std::make_unique<State>()) {
  state_->options = std::move(options);
  state_->bearer_token = state_->options.bearer_token;
}

LoopbackApiServer::~LoopbackApiServer() { stop(); }

std::expected<void, Error> LoopbackApiServer::start() {
  State& s = *state_;
  if (s.options.tls) {
    auto cert = make_self_signed_cert("loopback-apiserver");
    if (!cert) return std::unexpected(cert.error().context("while making the loopback server's certificate"));
    s.certificate = *cert;
    s.tls = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    boost::system::error_code ec;
    s.tls->use_certificate_chain(asio::buffer(s.certificate.cert_pem), ec);
    if (!ec) s.tls->use_private_key(asio::buffer(s.certificate.key_pem), asio::ssl::context::pem, ec);
    if (!ec && s.options.require_client_cert) {
      s.tls->add_certificate_authority(asio::buffer(s.certificate.cert_pem), ec);
      s.tls->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
    }
    if (ec) return fail(ErrorCode::kInternal, "loopback server TLS setup: " + ec.message());
  }
  return s.listen(0);
}

std::expected<void, Error> LoopbackApiServer::State::listen(uint16_t on_port) {
  boost::system::error_code ec;
  acceptor = std::make_unique<tcp::acceptor>(io);
  tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), on_port);
  acceptor->open(endpoint.protocol(), ec);
  // come_back() binds the port again while the cut connections may linger in TIME_WAIT.
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return fail(ErrorCode::kUnavailable, "loopback server cannot listen on 127.0.0.1:" +
                                             std::to_string(on_port) + ": " + ec.message());
  }
  port = acceptor->local_endpoint().port();
  accept_thread = std::thread([this] { accept_loop(); });
  return {};
}

void LoopbackApiServer::State::close_listener_and_connections() {
  if (acceptor) ::shutdown(acceptor->native_handle(), SHUT_RDWR);  // wakes the blocked accept()
  if (accept_thread.joinable()) accept_thread.join();
  {
    std::lock_guard lock(mutex);
    for (auto& c : live) {
      if (c.fd >= 0) ::shutdown(c.fd, SHUT_RDWR);  // wakes blocked reads and writes
    }
  }
  // Threads touch their own list entry at exit, so join while the list is still in place.
  for (auto& c : live) {
    if (c.thread.joinable()) c.thread.join();
  }
  live.clear();
  boost::system::error_code ec;
  if (acceptor) acceptor->close(ec);
  acceptor.reset();
}

void LoopbackApiServer::stop() {
  State& s = *state_;
  if (s.stopping.exchange(true)) return;
  s.store.close();
  s.close_listener_and_connections();
}

void LoopbackApiServer::go_down() {
  State& s = *state_;
  if (s.stopping) return;
  s.close_listener_and_connections();
}

std::expected<void, Error> LoopbackApiServer::come_back(ComeBackOptions options) {
  State& s = *state_;
  if (s.stopping) return fail(ErrorCode::kUnavailable, "the loopback server was stopped");
  if (s.acceptor) return {};  // it never went down
  if (options.compact) s.store.compact();
  return s.listen(s.port);
}

void LoopbackApiServer::cut_connections() {
  std::lock_guard lock(state_->mutex);
  for (auto& c : state_->live) {
    if (c.fd >= 0) ::shutdown(c.fd, SHUT_RDWR);
  }
}

void LoopbackApiServer::add_bearer_token(const std::string& token) {
  std::lock_guard lock(state_->mutex);
  state_->extra_tokens.push_back(token);
}

void LoopbackApiServer::set_bearer_tokens(const std::vector<std::string>& tokens) {
  std::lock_guard lock(state_->mutex);
  state_->bearer_token = tokens.empty() ? "" : tokens.front();
  state_->extra_tokens.assign(tokens.begin() + (tokens.empty() ? 0 : 1), tokens.end());
}

std::vector<LoggedRequest> LoopbackApiServer::request_log() const {
  std::lock_guard lock(state_->mutex);
  return state_->log;
}

void LoopbackApiServer::set_raw_handler(RawHttpHandler handler) { state_->raw_handler = std::move(handler); }

uint16_t LoopbackApiServer::port() const { return state_->port; }

std::string LoopbackApiServer::url() const {
  return std::string(state_->options.tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(state_->port);
}

const CertificatePair& LoopbackApiServer::certificate() const { return state_->certificate; }
ResourceStore& LoopbackApiServer::store() { return state_->store; }

void LoopbackApiServer::set_bearer_token(const std::string& token) {
  std::lock_guard lock(state_->mutex);
  state_->bearer_token = token;
}

std::string LoopbackApiServer::last_bearer_token() const {
  std::lock_guard lock(state_->mutex);
  return state_->last_token;
}

bool LoopbackApiServer::last_request_had_client_cert() const {
  std::lock_guard lock(state_->mutex);
  return state_->last_client_cert;
}

void LoopbackApiServer::fail_next(int count, int status, int retry_after_seconds, const std::string& verb) {
  std::lock_guard lock(state_->mutex);
  state_->faults.push_back({Fault::Kind::kFail, count, status, retry_after_seconds, {}, verb});
}

void LoopbackApiServer::drop_next(int count, const std::string& verb) {
  std::lock_guard lock(state_->mutex);
  state_->faults.push_back({Fault::Kind::kDrop, count, 0, 0, {}, verb});
}

void LoopbackApiServer::truncate_next(int count, const std::string& verb) {
  std::lock_guard lock(state_->mutex);
  state_->faults.push_back({Fault::Kind::kTruncate, count, 0, 0, {}, verb});
}

void LoopbackApiServer::delay_next(int count, std::chrono::milliseconds delay, const std::string& verb) {
  std::lock_guard lock(state_->mutex);
  state_->faults.push_back({Fault::Kind::kDelay, count, 0, 0, delay, verb});
}

void LoopbackApiServer::drop_watches_after(int events) {
  std::lock_guard lock(state_->mutex);
  state_->drop_watch_after = events;
}

int LoopbackApiServer::count(const std::string& verb) const {
  std::lock_guard lock(state_->mutex);
  auto it = state_->counts.find(verb);
  return it == state_->counts.end() ? 0 : it->second;
}

int LoopbackApiServer::writes() const {
  return count("create") + count("update") + count("patch") + count("delete");
}

int LoopbackApiServer::requests() const {
  std::lock_guard lock(state_->mutex);
  return state_->requests;
}

int LoopbackApiServer::connections_accepted() const {
  std::lock_guard lock(state_->mutex);
  return state_->connections;
}

void LoopbackApiServer::reset_counts() {
  std::lock_guard lock(state_->mutex);
  state_->counts.clear();
  state_->requests = 0;
  state_->connections = 0;
}

}  // namespace hypertopo::testing
