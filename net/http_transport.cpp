#include "net/http_transport.h"

#include <openssl/x509v3.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cctype>
#include <charconv>
#include <limits>
#include <mutex>
#include <optional>

namespace hypertopo::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

std::string describe(const error_code& ec, std::chrono::milliseconds timeout) {
  if (ec == beast::error::timeout) return "timed out after " + std::to_string(timeout.count()) + "ms";
  if (ec == http::error::end_of_stream || ec == asio::error::eof) return "the server closed the connection";
  if (ec == http::error::partial_message) return "the connection was cut in the middle of the response";
  if (ec == http::error::body_limit) return "the response body is larger than the limit";
  return ec.message();
}

// One TCP or TLS connection with its own io_context: blocking calls run the context until the
// operation's handler has run, and the stream's deadline turns a stall into beast::error::timeout.
class Connection {
 public:
  asio::io_context io;
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  beast::flat_buffer buffer;

  beast::tcp_stream& tcp() { return secure ? beast::get_lowest_layer(*secure) : *plain; }
  template <typename F>
  void visit(F&& f) {
    if (secure) {
      f(*secure);
    } else {
      f(*plain);
    }
  }
  void run() {
    io.restart();
    io.run();
  }
  // An idle keep-alive connection that has become readable was closed (or broken) by the server.
  bool looks_alive() {
    pollfd p{tcp().socket().native_handle(), POLLIN | POLLRDHUP, 0};
    return tcp().socket().is_open() && ::poll(&p, 1, 0) == 0;
  }
};

std::expected<std::unique_ptr<Connection>, Error> connect(const TransportConfig& config,
                                                          asio::ssl::context* tls) {
  auto conn = std::make_unique<Connection>();
  std::string where = config.host + ":" + config.port;
  error_code ec;
  std::vector<tcp::endpoint> endpoints;
  auto address = asio::ip::make_address(config.host, ec);
  unsigned short port = 0;
  auto [ptr, perr] = std::from_chars(config.port.data(), config.port.data() + config.port.size(), port);
  if (perr != std::errc() || ptr != config.port.data() + config.port.size()) {
    return fail(ErrorCode::kInvalidArgument, "not a port number: \"" + config.port + "\"");
  }
  if (!ec) {
    endpoints.emplace_back(address, port);
  } else {
    tcp::resolver resolver(conn->io);
    resolver.async_resolve(config.host, config.port, [&](error_code e, tcp::resolver::results_type results) {
      ec = e;
      for (const auto& r : results) endpoints.push_back(r.endpoint());
    });
    conn->io.run_for(config.connect_timeout);
    if (!conn->io.stopped()) {
      resolver.cancel();
      conn->run();
      return fail(ErrorCode::kUnavailable, "resolving " + config.host + " timed out");
    }
    if (ec) return fail(ErrorCode::kUnavailable, "cannot resolve " + config.host + ": " + ec.message());
  }
  conn->plain.emplace(conn->io);
  conn->plain->expires_after(config.connect_timeout);
  conn->plain->async_connect(endpoints, [&](error_code e, const tcp::endpoint&) { ec = e; });
  conn->run();
  if (ec)
    return fail(ErrorCode::kUnavailable,
                "cannot connect to " + where + ": " + describe(ec, config.connect_timeout));
  conn->plain->socket().set_option(tcp::no_delay(true), ec);
  if (!config.tls) return conn;

  conn->secure.emplace(std::move(*conn->plain), *tls);
  conn->plain.reset();
  SSL* ssl = conn->secure->native_handle();
  const std::string& name =
      config.tls_config.server_name.empty() ? config.host : config.tls_config.server_name;
  error_code ip_ec;
  asio::ip::make_address(name, ip_ec);
  bool is_ip = !ip_ec;
  if (!is_ip) SSL_set_tlsext_host_name(ssl, name.c_str());
  if (!config.tls_config.insecure_skip_verify) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                   : X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
    if (ok != 1) return fail(ErrorCode::kInvalidArgument, "cannot verify TLS for server name " + name);
  }
  conn->tcp().expires_after(config.connect_timeout);
  conn->secure->async_handshake(asio::ssl::stream_base::client, [&](error_code e) { ec = e; });
  conn->run();
  if (ec) {
    return fail(ErrorCode::kUnavailable,
                "TLS handshake with " + where + " failed: " + describe(ec, config.connect_timeout));
  }
  return conn;
}

// What Go's net/http refuses before it sends (http.Transport.roundTrip checks every header with
// golang.org/x/net/http/httpguts ValidHeaderFieldName and ValidHeaderFieldValue; client-go inherits
// it): a name outside RFC 9110's token characters, a value with a control character other than a
// tab, and here a method or target with a space or control character too. A CR or LF would end the
// header and start another one of the sender's choosing. The error names the header, never its value
// (a token).
bool is_token_char(unsigned char c) {
  return std::isalnum(c) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

std::optional<Error> invalid_request(const HttpRequest& request) {
  auto bad_text = [](std::string_view text, bool allow_tab) {
    return std::any_of(text.begin(), text.end(), [&](char ch) {
      const auto c = static_cast<unsigned char>(ch);
      return (c < 0x20 && !(allow_tab && c == '\t')) || c == 0x7f;
    });
  };
  if (request.method.empty() || !std::all_of(request.method.begin(), request.method.end(), [](char c) {
        return is_token_char(static_cast<unsigned char>(c));
      })) {
    return Error(ErrorCode::kInvalidArgument, "refusing to send a request with an invalid method");
  }
  if (bad_text(request.target, false) || request.target.find(' ') != std::string::npos) {
    return Error(ErrorCode::kInvalidArgument,
                 "refusing to send a request whose path has a space or control character");
  }
  for (const auto& [name, value] : request.headers) {
    if (name.empty() || !std::all_of(name.begin(), name.end(),
                                     [](char c) { return is_token_char(static_cast<unsigned char>(c)); })) {
      return Error(ErrorCode::kInvalidArgument, "refusing to send a header with an invalid name");
    }
    if (bad_text(value, true)) {
      return Error(ErrorCode::kInvalidArgument,
                   "refusing to send the " + name +
                       " header: its value holds a control character (CR, LF or another)");
    }
  }
  return std::nullopt;
}

http::request<http::string_body> make_request(const HttpRequest& request, const std::string& host_header) {
  http::request<http::string_body> req;
  req.method_string(request.method);
  req.target(request.target);
  req.version(11);
  req.set(http::field::host, host_header);
  for (const auto& [k, v] : request.headers) req.set(k, v);
  req.body() = request.body;
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT" ||
      request.method == "PATCH") {
    req.prepare_payload();
  }
  req.keep_alive(true);
  return req;
}

// Writes `req`; on success leaves the connection ready to read the answer.
error_code write_request(Connection& conn, http::request<http::string_body>& req,
                         std::chrono::milliseconds timeout) {
  error_code ec;
  conn.tcp().expires_after(timeout);
  conn.visit([&](auto& s) { http::async_write(s, req, [&](error_code e, size_t) { ec = e; }); });
  conn.run();
  return ec;
}

class Stream final : public HttpStream {
 public:
  Stream(std::unique_ptr<Connection> conn, std::unique_ptr<http::response_parser<http::buffer_body>> parser)
      : conn_(std::move(conn)), parser_(std::move(parser)) {}
  int status() const override { return static_cast<int>(parser_->get().result_int()); }
  std::string retry_after() const override { return std::string(parser_->get()[http::field::retry_after]); }

  std::expected<bool, Error> read_some(std::string& out, std::chrono::milliseconds idle_timeout) override {
    if (parser_->is_done()) return false;
    if (cancelled_) return fail(ErrorCode::kUnavailable, "the stream was cancelled");
    char chunk[16384];
    parser_->get().body().data = chunk;
    parser_->get().body().size = sizeof chunk;
    error_code ec;
    conn_->tcp().expires_after(idle_timeout);
    conn_->visit([&](auto& s) {
      http::async_read_some(s, conn_->buffer, *parser_, [&](error_code e, size_t) { ec = e; });
    });
    conn_->run();
    if (ec == http::error::need_buffer) ec = {};
    if (cancelled_) return fail(ErrorCode::kUnavailable, "the stream was cancelled");
    if (ec) return fail(ErrorCode::kUnavailable, describe(ec, idle_timeout));
    out.append(chunk, sizeof chunk - parser_->get().body().size);
    return !parser_->is_done();
  }

  void cancel() override {
    cancelled_ = true;
    Connection* c = conn_.get();
    asio::post(c->io, [c] { c->tcp().cancel(); });
  }

 private:
  std::unique_ptr<Connection> conn_;
  std::unique_ptr<http::response_parser<http::buffer_body>> parser_;
  std::atomic<bool> cancelled_{false};
};

class BeastTransport final : public HttpTransport {
 public:
  explicit BeastTransport(TransportConfig config) : config_(std::move(config)) {
    bool ipv6 = config_.host.find(':') != std::string::npos;
    host_header_ = (ipv6 ? "[" + config_.host + "]" : config_.host) + ":" + config_.port;
  }

  std::expected<void, Error> init() {
    if (!config_.tls) return {};
    tls_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    error_code ec;
    const TlsConfig& t = config_.tls_config;
    if (t.insecure_skip_verify) {
      tls_->set_verify_mode(asio::ssl::verify_none);
    } else {
      tls_->set_verify_mode(asio::ssl::verify_peer);
      if (!t.ca_pem.empty()) {
        tls_->add_certificate_authority(asio::buffer(t.ca_pem), ec);
        if (ec) return fail(ErrorCode::kInvalidArgument, "the CA bundle is not valid PEM: " + ec.message());
      } else {
        tls_->set_default_verify_paths(ec);
      }
    }
    if (!t.client_cert_pem.empty()) {
      tls_->use_certificate_chain(asio::buffer(t.client_cert_pem), ec);
      if (ec)
        return fail(ErrorCode::kInvalidArgument, "the client certificate is not valid PEM: " + ec.message());
      tls_->use_private_key(asio::buffer(t.client_key_pem), asio::ssl::context::pem, ec);
      if (ec) return fail(ErrorCode::kInvalidArgument, "the client key is not valid PEM: " + ec.message());
    }
    return {};
  }

  using HttpTransport::round_trip;
  std::expected<HttpResponse, TransportError> round_trip(const HttpRequest& request,
                                                         std::chrono::milliseconds timeout, bool idempotent,
                                                         std::stop_token stop) override {
    if (auto invalid = invalid_request(request)) return std::unexpected(TransportError{*invalid, false});
    auto req = make_request(request, host_header_);
    auto cancelled = [&](bool sent) {
      return std::unexpected(TransportError{
          Error(ErrorCode::kUnavailable, request.method + " " + request.target + ": cancelled"), sent});
    };
    for (int attempt = 0;; ++attempt) {
      if (stop.stop_requested()) return cancelled(false);
      bool reused = false;
      auto conn = take_idle();
      if (conn) {
        reused = true;
      } else {
        auto fresh = open(timeout);
        if (!fresh) return std::unexpected(TransportError{fresh.error(), false});
        conn = std::move(*fresh);
      }
      if (stop.stop_requested()) return cancelled(false);
      // Abandoned: reset, so that what the kernel still holds of the request is dropped rather than
      // delivered when a partition heals (a new leader may be writing by then).
      Connection* raw = conn.get();
      auto reset = [raw] {
        asio::post(raw->io, [raw] {
          error_code ignored;
          raw->tcp().socket().set_option(asio::socket_base::linger(true, 0), ignored);
          raw->tcp().socket().cancel(ignored);
        });
      };
      std::optional<std::stop_callback<decltype(reset)>> abandon(std::in_place, stop, reset);
      error_code ec = write_request(*conn, req, timeout);
      if (stop.stop_requested()) return cancelled(true);
      http::response_parser<http::string_body> parser;
      parser.body_limit(config_.body_limit);
      if (!ec) {
        conn->tcp().expires_after(timeout);
        conn->visit([&](auto& s) {
          http::async_read_header(s, conn->buffer, parser, [&](error_code e, size_t) { ec = e; });
        });
        conn->run();
        // Refuse an announced oversized body before reading any of it.
        if (!ec && parser.content_length() && *parser.content_length() > config_.body_limit)
          ec = http::error::body_limit;
      }
      if (!ec && !parser.is_done()) {
        conn->visit([&](auto& s) {
          http::async_read(s, conn->buffer, parser, [&](error_code e, size_t) { ec = e; });
        });
        conn->run();
      }
      if (!ec && parser.get().body().size() > config_.body_limit) ec = http::error::body_limit;
      if (stop.stop_requested()) return cancelled(true);
      if (ec) {
        // A pooled connection the server closed meanwhile: the request never got an answer.
        if (reused && idempotent && attempt == 0 && !parser.got_some() && ec != beast::error::timeout)
          continue;
        std::string what = describe(ec, timeout);
        if (ec == http::error::body_limit) what += " of " + std::to_string(config_.body_limit) + " bytes";
        // The status line arrived before the body failed: keep it, a 401 must stay a 401.
        const int status = parser.is_header_done() ? static_cast<int>(parser.get().result_int()) : 0;
        if (status != 0) what = "HTTP " + std::to_string(status) + ", then " + what;
        return std::unexpected(TransportError{
            Error(ErrorCode::kUnavailable, request.method + " " + request.target + ": " + what), true,
            status});
      }
      auto res = parser.release();
      HttpResponse out;
      out.status = static_cast<int>(res.result_int());
      out.body = std::move(res.body());
      out.retry_after = std::string(res[http::field::retry_after]);
      abandon.reset();
      // A reset may be queued on the connection when `stop` fired just now: it is not reused.
      if (res.keep_alive() && !stop.stop_requested()) give_back(std::move(conn));
      return out;
    }
  }

  std::expected<std::unique_ptr<HttpStream>, TransportError> open_stream(
      const HttpRequest& request, std::chrono::milliseconds timeout) override {
    if (auto invalid = invalid_request(request)) return std::unexpected(TransportError{*invalid, false});
    auto conn = open();  // a watch holds its connection for minutes: never take one from the pool
    if (!conn) return std::unexpected(TransportError{conn.error(), false});
    auto req = make_request(request, host_header_);
    error_code ec = write_request(**conn, req, timeout);
    auto parser = std::make_unique<http::response_parser<http::buffer_body>>();
    parser->body_limit(std::numeric_limits<std::uint64_t>::max());  // a watch has no end in sight
    if (!ec) {
      (*conn)->tcp().expires_after(timeout);
      (*conn)->visit([&](auto& s) {
        http::async_read_header(s, (*conn)->buffer, *parser, [&](error_code e, size_t) { ec = e; });
      });
      (*conn)->run();
    }
    if (ec) {
      return std::unexpected(
          TransportError{Error(ErrorCode::kUnavailable,
                               request.method + " " + request.target + ": " + describe(ec, timeout)),
                         true});
    }
    return std::make_unique<Stream>(std::move(*conn), std::move(parser));
  }

  int connections_opened() const override { return opened_; }

 private:
  // `budget`: a caller's whole-request timeout shorter than the connect timeout bounds the connect too.
  std::expected<std::unique_ptr<Connection>, Error> open(
      std::chrono::milliseconds budget = std::chrono::milliseconds::max()) {
    if (budget >= config_.connect_timeout) {
      auto conn = connect(config_, tls_.get());
      if (conn) ++opened_;
      return conn;
    }
    TransportConfig shorter = config_;
    shorter.connect_timeout = std::max(budget, std::chrono::milliseconds(1));
    auto conn = connect(shorter, tls_.get());
    if (conn) ++opened_;
    return conn;
  }

  std::unique_ptr<Connection> take_idle() {
    std::lock_guard lock(mutex_);
    while (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      if (conn->looks_alive()) return conn;
    }
    return nullptr;
  }

  void give_back(std::unique_ptr<Connection> conn) {
    std::lock_guard lock(mutex_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(conn));
  }

  static constexpr size_t kMaxIdle = 8;
  TransportConfig config_;
  std::string host_header_;
  std::unique_ptr<asio::ssl::context> tls_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::atomic<int> opened_{0};
};

}  // namespace

std::expected<std::unique_ptr<HttpTransport>, Error> HttpTransport::create(const TransportConfig& config) {
  auto transport = std::make_unique<BeastTransport>(config);
  if (auto ok = transport->init(); !ok) return std::unexpected(ok.error());
  return transport;
}

}  // namespace hypertopo::net
