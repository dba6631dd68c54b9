// HttpServer over real loopback connections. Well-formed requests go through the project's own
// HTTP transport (net/http_transport, plain and TLS); what a polite client never does
// (trickle a request, hold an idle keep-alive connection, read raw status lines and headers) goes
// through a plain POSIX socket.
#include "net/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "net/http_transport.h"
#include "tests/support/eventually.h"
#include "tests/support/fixtures.h"

extern char** environ;

namespace hypertopo::agent {
namespace {

using namespace std::chrono_literals;

// A raw TCP connection to 127.0.0.1:port; every receive gives up after `timeout` so a broken server
// fails the test instead of hanging it.
class RawClient {
 public:
  RawClient(std::uint16_t port, std::chrono::seconds timeout = 10s) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{.tv_sec = static_cast<time_t>(timeout.count()), .tv_usec = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return connected_; }

  bool send(const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // One response: the head (status line and headers) and the Content-Length body. "" when the
  // connection closed or timed out first.
  std::string read_response() {
    std::size_t head_end;
    while ((head_end = pending_.find("\r\n\r\n")) == std::string::npos) {
      if (!receive_more()) return {};
    }
    const std::string head = pending_.substr(0, head_end + 4);
    std::size_t length = 0;
    std::istringstream lines(head);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("Content-Length:", 0) == 0) length = std::stoul(line.substr(15));
    }
    while (pending_.size() < head.size() + length) {
      if (!receive_more()) return {};
    }
    std::string response = pending_.substr(0, head.size() + length);
    pending_.erase(0, response.size());
    return response;
  }

  // True when the server closed the connection (end of stream or reset) before the timeout.
  bool closed_by_server() {
    char byte;
    const ssize_t n = ::recv(fd_, &byte, 1, 0);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }

 private:
  bool receive_more() {
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    pending_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;
};

std::unique_ptr<net::HttpTransport> client_for(std::uint16_t port, bool tls = false, std::string ca_pem = "",
                                               std::string client_cert_pem = "",
                                               std::string client_key_pem = "") {
  net::TransportConfig config{.host = "127.0.0.1", .port = std::to_string(port), .tls = tls};
  config.tls_config.ca_pem = std::move(ca_pem);
  config.tls_config.client_cert_pem = std::move(client_cert_pem);
  config.tls_config.client_key_pem = std::move(client_key_pem);
  auto transport = net::HttpTransport::create(config);
  EXPECT_TRUE(transport.has_value()) << transport.error().message();
  return transport ? std::move(*transport) : nullptr;
}

struct Reply {
  int status = 0;
  std::string body;
};

Reply call(net::HttpTransport& client, const std::string& method, const std::string& target,
           const std::string& body = "", std::vector<std::pair<std::string, std::string>> headers = {}) {
  auto r = client.round_trip({method, target, std::move(headers), body}, 10s, true);
  if (!r) return {0, r.error().error.message()};
  return {r->status, r->body};
}

// Echoes what the server parsed, so that tests see the request as a handler sees it.
net::HttpServerResponse echo(const net::HttpServerRequest& req) {
  auto header = req.headers.find("x-probe");
  return {.body = req.method + "|" + req.path + "|" + req.query + "|" + req.target + "|" +
                  (header == req.headers.end() ? "-" : header->second) + "|" +
                  std::to_string(req.body.size())};
}

std::unique_ptr<net::HttpServer> started(net::HttpServerOptions options) {
  auto server = std::make_unique<net::HttpServer>(std::move(options));
  server->handle("GET", "/echo", echo);
  server->handle("POST", "/echo", echo);
  server->handle("PUT", "/upload", echo);
  auto ok = server->start();
  EXPECT_TRUE(ok.has_value()) << ok.error().message();
  EXPECT_NE(server->port(), 0);
  return server;
}

TEST(HttpServer, RoutesExactMethodAndPathAndSplitsTheQuery) {
  auto server = started({.address = "127.0.0.1", .port = 0});
  auto client = client_for(server->port());
  Reply get = call(*client, "GET", "/echo?a=1&b=%20x", "", {{"X-Probe", "yes"}});
  EXPECT_EQ(get.status, 200);
  EXPECT_EQ(get.body, "GET|/echo|a=1&b=%20x|/echo?a=1&b=%20x|yes|0");
  Reply post = call(*client, "POST", "/echo", "payload");
  EXPECT_EQ(post.status, 200);
  EXPECT_EQ(post.body, "POST|/echo||/echo|-|7");
  // Exact paths: neither a trailing slash nor a prefix matches.
  EXPECT_EQ(call(*client, "GET", "/echo/").status, 404);
  EXPECT_EQ(call(*client, "GET", "/ech").status, 404);
  Reply missing = call(*client, "GET", "/nowhere?x=1");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find("/nowhere"), std::string::npos) << missing.body;
}

TEST(HttpServer, AnotherMethodOnAKnownPathIs405WithAllow) {
  auto server = started({.address = "127.0.0.1", .port = 0});
  RawClient raw(server->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.send("DELETE /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n"));
  const std::string response = raw.read_response();
  EXPECT_EQ(response.rfind("HTTP/1.1 405", 0), 0u) << response;
  EXPECT_NE(response.find("Allow: GET, POST\r\n"), std::string::npos) << response;
  // The connection stays usable after a 405.
  ASSERT_TRUE(raw.send("GET /echo HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_EQ(raw.read_response().rfind("HTTP/1.1 200", 0), 0u);
}

TEST(HttpServer, ABodyOverTheLimitIs413) {
  auto server = started({.address = "127.0.0.1", .port = 0, .limits = {.max_body_bytes = 1024}});
  auto client = client_for(server->port());
  Reply at_limit = call(*client, "PUT", "/upload", std::string(1024, 'a'));
  EXPECT_EQ(at_limit.status, 200);
  EXPECT_EQ(at_limit.body, "PUT|/upload||/upload|-|1024");
  Reply over = call(*client, "PUT", "/upload", std::string(64 * 1024, 'a'));
  EXPECT_EQ(over.status, 413);
  EXPECT_NE(over.body.find("1024"), std::string::npos) << over.body;
  // A chunked body (no Content-Length to refuse up front) is cut off too.
  RawClient raw(server->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.send("PUT /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" +
                       std::string(0x800, 'b') + "\r\n0\r\n\r\n"));
  EXPECT_EQ(raw.read_response().rfind("HTTP/1.1 413", 0), 0u);
  EXPECT_EQ(call(*client, "GET", "/echo").status, 200);
}

TEST(HttpServer, AHandlerThatThrowsAnswers500AndTheServerKeepsServing) {
  net::HttpServer server({.address = "127.0.0.1", .port = 0});
  std::atomic<int> calls = 0;
  server.handle("GET", "/flaky", [&calls](const net::HttpServerRequest&) -> net::HttpServerResponse {
    if (calls++ == 0) throw std::runtime_error("index not built yet");
    return {.body = "fine"};
  });
  ASSERT_TRUE(server.start().has_value());
  auto client = client_for(server.port());
  Reply failed = call(*client, "GET", "/flaky");
  EXPECT_EQ(failed.status, 500);
  EXPECT_NE(failed.body.find("index not built yet"), std::string::npos) << failed.body;
  Reply next = call(*client, "GET", "/flaky");
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(next.body, "fine");
  EXPECT_EQ(client->connections_opened(), 1);  // the 500 did not cost the connection
}

TEST(HttpServer, KeepAliveServesManyRequestsOnOneConnection) {
  auto server = started({.address = "127.0.0.1", .port = 0});
  auto client = client_for(server->port());
  EXPECT_EQ(call(*client, "GET", "/echo?n=1").body, "GET|/echo|n=1|/echo?n=1|-|0");
  EXPECT_EQ(call(*client, "GET", "/echo?n=2").body, "GET|/echo|n=2|/echo?n=2|-|0");
  EXPECT_EQ(client->connections_opened(), 1);

  // Two pipelined requests written at once are answered in order on the same socket.
  RawClient raw(server->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(
      raw.send("GET /echo?p=1 HTTP/1.1\r\nHost: t\r\n\r\nPOST /echo?p=2 HTTP/1.1\r\nHost: "
               "t\r\nContent-Length: 3\r\n\r\nabc"));
  const std::string first = raw.read_response();
  const std::string second = raw.read_response();
  EXPECT_NE(first.find("GET|/echo|p=1|"), std::string::npos) << first;
  EXPECT_NE(second.find("POST|/echo|p=2|/echo?p=2|-|3"), std::string::npos) << second;

  // "Connection: close" is honoured.
  ASSERT_TRUE(raw.send("GET /echo HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"));
  EXPECT_EQ(raw.read_response().rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_TRUE(raw.closed_by_server());
}

TEST(HttpServer, ConcurrentClientsAreAllAnswered) {
  auto server = started({.address = "127.0.0.1", .port = 0, .threads = 4});
  constexpr int kClients = 8;
  constexpr int kRequests = 25;
  std::vector<std::future<int>> answered;
  for (int c = 0; c < kClients; ++c) {
    answered.push_back(std::async(std::launch::async, [&server, c] {
      auto client = client_for(server->port());
      int good = 0;
      for (int i = 0; client && i < kRequests; ++i) {
        const std::string query = "c=" + std::to_string(c) + "&i=" + std::to_string(i);
        Reply r = call(*client, "GET", "/echo?" + query);
        if (r.status == 200 && r.body == "GET|/echo|" + query + "|/echo?" + query + "|-|0") ++good;
      }
      return good;
    }));
  }
  for (auto& f : answered) EXPECT_EQ(f.get(), kRequests);
}

TEST(HttpServer, ASlowClientIsDroppedAndOthersAreServed) {
  auto server = started({.address = "127.0.0.1", .port = 0, .limits = {.read_timeout = 200ms}});
  RawClient slow(server->port());
  ASSERT_TRUE(slow.connected());
  ASSERT_TRUE(slow.send("GET /echo HTTP/1.1\r\nHost: t\r\n"));  // never finishes the header
  // The client's own receive timeout (10 s) is far above the server's 200 ms: a close seen here
  // comes from the server's deadline.
  EXPECT_TRUE(slow.closed_by_server());
  auto client = client_for(server->port());
  EXPECT_EQ(call(*client, "GET", "/echo").status, 200);
}

TEST(HttpServer, StopClosesIdleKeepAliveConnectionsAndIsIdempotent) {
  // The read timeout is far longer than the test: stop() must not wait for it.
  auto server = started({.address = "127.0.0.1", .port = 0, .limits = {.read_timeout = 10min}, .threads = 2});
  RawClient idle(server->port(), 60s);
  ASSERT_TRUE(idle.connected());
  ASSERT_TRUE(idle.send("GET /echo HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_EQ(idle.read_response().rfind("HTTP/1.1 200", 0), 0u);
  auto stopped = std::async(std::launch::async, [&server] { server->stop(); });
  ASSERT_EQ(stopped.wait_for(30s), std::future_status::ready)
      << "stop() hangs on an idle keep-alive connection";
  EXPECT_TRUE(idle.closed_by_server());
  server->stop();  // a second stop is a no-op
  RawClient after(server->port(), 5s);
  EXPECT_FALSE(after.connected() && after.send("GET /echo HTTP/1.1\r\nHost: t\r\n\r\n") &&
               !after.read_response().empty());
  server.reset();  // the destructor stops again
}

TEST(HttpServer, StopWithoutStartAndStartTwice) {
  net::HttpServer never({.address = "127.0.0.1", .port = 0});
  never.stop();
  net::HttpServer twice({.address = "127.0.0.1", .port = 0});
  ASSERT_TRUE(twice.start().has_value());
  auto again = twice.start();
  ASSERT_FALSE(again.has_value());
  EXPECT_NE(again.error().message().find("already started"), std::string::npos);
}

TEST(HttpServer, APortInUseIsAnErrorNamingAddressAndPort) {
  auto first = started({.address = "127.0.0.1", .port = 0});
  net::HttpServer second({.address = "127.0.0.1", .port = first->port()});
  auto ok = second.start();
  ASSERT_FALSE(ok.has_value());
  const std::string where = "127.0.0.1:" + std::to_string(first->port());
  EXPECT_NE(ok.error().message().find(where), std::string::npos) << ok.error().message();
  EXPECT_NE(ok.error().message().find("in use"), std::string::npos) << ok.error().message();

  net::HttpServer bad_address({.address = "not-an-ip", .port = 0});
  auto bad = bad_address.start();
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("not-an-ip:0"), std::string::npos) << bad.error().message();
}

// A throwaway self-signed certificate for 127.0.0.1, made by the openssl command line.
struct SelfSigned {
  std::filesystem::path cert, key;
  std::string cert_pem, key_pem;
};

std::optional<SelfSigned> make_certificate(const std::filesystem::path& dir,
                                           const std::string& name = "tls") {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) return std::nullopt;
  SelfSigned made{dir / (name + ".crt"), dir / (name + ".key"), "", ""};
  const std::string command =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext "
      "subjectAltName=IP:127.0.0.1 -keyout '" +
      made.key.string() + "' -out '" + made.cert.string() + "' >/dev/null 2>&1";
  if (std::system(command.c_str()) != 0) return std::nullopt;
  made.cert_pem = testing::read_text(made.cert);
  made.key_pem = testing::read_text(made.key);
  return made;
}

TEST(HttpServer, ServesTlsWithTheConfiguredCertificate) {
  testing::TempDir dir;
  auto cert = make_certificate(dir.path());
  HT_REQUIRE(cert.has_value(), "the openssl command (to make a test certificate)");
  auto server = started({.address = "127.0.0.1",
                         .port = 0,
                         .tls_cert_file = cert->cert.string(),
                         .tls_key_file = cert->key.string()});
  auto client = client_for(server->port(), true, cert->cert_pem);
  Reply first = call(*client, "GET", "/echo?tls=1");
  EXPECT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.body, "GET|/echo|tls=1|/echo?tls=1|-|0");
  EXPECT_EQ(call(*client, "POST", "/echo", "secret").body, "POST|/echo||/echo|-|6");
  EXPECT_EQ(client->connections_opened(), 1);
  // Plain HTTP to the TLS port gets no HTTP answer.
  RawClient plain(server->port());
  ASSERT_TRUE(plain.connected());
  ASSERT_TRUE(plain.send("GET /echo HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_EQ(plain.read_response().find("HTTP/1.1 200"), std::string::npos);
}

TEST(HttpServer, TlsFileErrorsNameTheFile) {
  testing::TempDir dir;
  auto cert = make_certificate(dir.path());
  HT_REQUIRE(cert.has_value(), "the openssl command (to make a test certificate)");
  const std::string missing = (dir.path() / "absent.key").string();
  net::HttpServer no_key(
      {.address = "127.0.0.1", .port = 0, .tls_cert_file = cert->cert.string(), .tls_key_file = missing});
  auto failed = no_key.start();
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().message().find(missing), std::string::npos) << failed.error().message();

  const auto garbage = dir.path() / "garbage.crt";
  testing::write_text(garbage, "not a certificate\n");
  net::HttpServer bad_cert({.address = "127.0.0.1",
                            .port = 0,
                            .tls_cert_file = garbage.string(),
                            .tls_key_file = cert->key.string()});
  failed = bad_cert.start();
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().message().find(garbage.string()), std::string::npos) << failed.error().message();

  net::HttpServer half({.address = "127.0.0.1", .port = 0, .tls_cert_file = cert->cert.string()});
  failed = half.start();
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().message().find("key file"), std::string::npos) << failed.error().message();
}

// With a client CA, the TLS handshake itself refuses clients without a certificate that CA signed:
// no handler runs for them. The self-signed test certificates are their own CA.
TEST(HttpServer, ClientCertificatesAreRequiredAndVerifiedAgainstTheClientCa) {
  testing::TempDir dir;
  auto server_cert = make_certificate(dir.path(), "server");
  auto client_cert = make_certificate(dir.path(), "client");
  auto stranger = make_certificate(dir.path(), "stranger");
  HT_REQUIRE(server_cert && client_cert && stranger, "the openssl command (to make a test certificate)");
  std::atomic<int> handled{0};
  net::HttpServer server({.address = "127.0.0.1",
                          .port = 0,
                          .tls_cert_file = server_cert->cert.string(),
                          .tls_key_file = server_cert->key.string(),
                          .tls_client_ca_file = client_cert->cert.string()});
  server.handle("GET", "/echo", [&](const net::HttpServerRequest& req) {
    ++handled;
    return echo(req);
  });
  ASSERT_TRUE(server.start().has_value());

  auto anonymous = client_for(server.port(), true, server_cert->cert_pem);
  Reply refused = call(*anonymous, "GET", "/echo");
  EXPECT_EQ(refused.status, 0) << refused.body;
  auto wrong = client_for(server.port(), true, server_cert->cert_pem, stranger->cert_pem, stranger->key_pem);
  Reply refused_wrong = call(*wrong, "GET", "/echo");
  EXPECT_EQ(refused_wrong.status, 0) << refused_wrong.body;
  EXPECT_EQ(handled.load(), 0);

  auto trusted =
      client_for(server.port(), true, server_cert->cert_pem, client_cert->cert_pem, client_cert->key_pem);
  Reply ok = call(*trusted, "GET", "/echo?who=scheduler");
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.body, "GET|/echo|who=scheduler|/echo?who=scheduler|-|0");
  EXPECT_EQ(handled.load(), 1);

  // A client CA file that is not PEM is an error naming it; a client CA without a server identity too.
  const auto garbage = dir.path() / "garbage-ca.crt";
  testing::write_text(garbage, "not a CA\n");
  net::HttpServer bad_ca({.address = "127.0.0.1",
                          .port = 0,
                          .tls_cert_file = server_cert->cert.string(),
                          .tls_key_file = server_cert->key.string(),
                          .tls_client_ca_file = garbage.string()});
  auto failed = bad_ca.start();
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().message().find(garbage.string()), std::string::npos) << failed.error().message();
  net::HttpServer ca_only(
      {.address = "127.0.0.1", .port = 0, .tls_client_ca_file = client_cert->cert.string()});
  failed = ca_only.start();
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().message().find("client CA"), std::string::npos) << failed.error().message();
}

// The limits of net/http_limits.h, each through raw connections as a hostile client would open them.

TEST(HttpServer, AGetWithABodyIs413BeforeTheBodyIsRead) {
  auto server = started({.address = "127.0.0.1", .port = 0});
  RawClient raw(server->port(), 5s);
  ASSERT_TRUE(raw.connected());
  // The body is announced and never sent: the answer may not wait for it.
  ASSERT_TRUE(raw.send("GET /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n"));
  const std::string response = raw.read_response();
  EXPECT_EQ(response.rfind("HTTP/1.1 413", 0), 0u) << response;
  EXPECT_NE(response.find("GET request takes no body"), std::string::npos) << response;
  // A body on a path that does not exist is refused before it is read too.
  RawClient nowhere(server->port(), 5s);
  ASSERT_TRUE(nowhere.send("POST /nowhere HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n"));
  EXPECT_EQ(nowhere.read_response().rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(server->stats().requests_too_large, 1u);
}

TEST(HttpServer, AtTheConnectionCapTheLongestIdleConnectionMakesRoom) {
  auto server = started({.address = "127.0.0.1", .port = 0, .limits = {.max_connections = 4}});
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<RawClient>(server->port(), 5s));
    ASSERT_TRUE(idle.back()->connected());
    // One at a time, so that the first is the one that has waited longest.
    ASSERT_TRUE(testing::eventually([&] { return server->stats().connections_open == idle.size(); }));
  }
  auto client = client_for(server->port());
  EXPECT_EQ(call(*client, "GET", "/echo").status, 200);
  EXPECT_TRUE(idle.front()->closed_by_server());
  const auto stats = server->stats();
  EXPECT_EQ(stats.connections_evicted, 1u);
  EXPECT_LE(stats.connections_open, 4u);
  // The newer idle connections are still served.
  ASSERT_TRUE(idle.back()->send("GET /echo HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_EQ(idle.back()->read_response().rfind("HTTP/1.1 200", 0), 0u);
}

TEST(HttpServer, ABodyThatDoesNotFitInFlightIs503BeforeItIsRead) {
  // One request may take the whole budget here, and the first body waits for the test as long as it
  // needs: no floor rate.
  auto server = started({.address = "127.0.0.1",
                         .port = 0,
                         .limits = {.max_body_bytes = 1u << 20,
                                    .body_memory_factor = 2,
                                    .max_inflight_bytes = 3u << 20,
                                    .request_share = 1,
                                    .min_body_bytes_per_second = 0}});
  const std::string head = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1048576\r\n\r\n";
  RawClient first(server->port());
  ASSERT_TRUE(first.send(head + std::string(1000, 'a')));  // and the rest later
  ASSERT_TRUE(testing::eventually([&] { return server->stats().inflight_bytes == (2u << 20); }));
  RawClient second(server->port(), 5s);
  ASSERT_TRUE(second.send(head));
  const std::string busy = second.read_response();
  EXPECT_EQ(busy.rfind("HTTP/1.1 503", 0), 0u) << busy;
  EXPECT_NE(busy.find("Retry-After: 1\r\n"), std::string::npos) << busy;
  // The first body completes and gives its share back; the retry fits.
  ASSERT_TRUE(first.send(std::string((1u << 20) - 1000, 'a')));
  EXPECT_EQ(first.read_response().rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_TRUE(testing::eventually([&] { return server->stats().inflight_bytes == 0; }));
  auto client = client_for(server->port());
  EXPECT_EQ(call(*client, "POST", "/echo", std::string(1u << 20, 'c')).status, 200);
  // A body whose share could never fit is 413, not 503: a retry would not help.
  auto big = started(
      {.address = "127.0.0.1",
       .port = 0,
       .limits = {.max_body_bytes = 1u << 20, .body_memory_factor = 8, .max_inflight_bytes = 4u << 20}});
  RawClient too_big(big->port(), 5s);
  ASSERT_TRUE(too_big.send(head));
  EXPECT_EQ(too_big.read_response().rfind("HTTP/1.1 413", 0), 0u);
  EXPECT_EQ(server->stats().peak_inflight_bytes, 2u << 20);
  EXPECT_EQ(server->stats().requests_busy, 1u);
}

// 250 connections that each announce the largest body and trickle it: the bytes held stay within the
// budget, the connections within the cap, and a health check on a fresh connection is answered.
TEST(HttpServer, TwoHundredFiftySlowMaximalBodiesStayBoundedAndHealthIsAnswered) {
  const net::HttpServerLimits limits{.max_connections = 64,
                                     .max_body_bytes = 1u << 20,
                                     .body_memory_factor = 2,
                                     .max_inflight_bytes = 16u << 20};
  auto server = started({.address = "127.0.0.1", .port = 0, .limits = limits});
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 250; ++i) {
    slow.push_back(std::make_unique<RawClient>(server->port(), 5s));
    slow.back()->send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1048576\r\n\r\n" +
                      std::string(100, 'x'));
  }
  auto client = client_for(server->port());
  EXPECT_EQ(call(*client, "GET", "/echo").status, 200);
  const auto stats = server->stats();
  EXPECT_LE(stats.peak_inflight_bytes, limits.max_inflight_bytes);
  EXPECT_LE(stats.connections_open, limits.max_connections);
  EXPECT_GT(stats.requests_busy + stats.connections_evicted + stats.connections_refused, 0u);
}

// As many connections as the server lets in announce the largest body it takes and trickle it; the
// eighth finds the large bodies' part of the budget full. Sixteen filter-sized calls at once are all
// answered from the slice that only small requests may take.
TEST(HttpServer, TricklingMaximalBodiesLeaveRoomForSmallRequests) {
  // The extender's proportions on a smaller budget: bodies count 32 times, one request takes an
  // eighth (1 MiB counted: a 32 KiB body), an eighth is kept for bodies of at most 2 KiB. No floor
  // rate, so the tricklers hold their shares for as long as the test runs.
  const net::HttpServerLimits limits{.max_body_bytes = 32u << 10,
                                     .body_memory_factor = 32,
                                     .max_inflight_bytes = 8u << 20,
                                     .small_request_bytes = 64u << 10,
                                     .min_body_bytes_per_second = 0};
  auto server = started({.address = "127.0.0.1", .port = 0, .limits = limits, .threads = 2});
  const std::string head = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 32768\r\n\r\n";
  std::vector<std::unique_ptr<RawClient>> tricklers;
  for (int i = 0; i < 7; ++i) {
    tricklers.push_back(std::make_unique<RawClient>(server->port(), 10s));
    ASSERT_TRUE(tricklers.back()->send(head + "x"));
    ASSERT_TRUE(testing::eventually([&] { return server->stats().inflight_bytes == (i + 1) * (1u << 20); }));
  }
  RawClient eighth(server->port(), 10s);
  ASSERT_TRUE(eighth.send(head + "x"));
  const std::string busy = eighth.read_response();
  EXPECT_EQ(busy.rfind("HTTP/1.1 503", 0), 0u) << busy;

  std::vector<std::future<Reply>> calls;
  for (int i = 0; i < 16; ++i) {
    calls.push_back(std::async(std::launch::async, [&server, i] {
      auto client = client_for(server->port());
      if (!client) return Reply{};
      return call(*client, "POST", "/echo", std::string(2048, static_cast<char>('a' + i)));
    }));
  }
  for (auto& trickler : tricklers) EXPECT_TRUE(trickler->send("x"));
  for (auto& c : calls) {
    const Reply reply = c.get();
    EXPECT_EQ(reply.status, 200) << reply.body;
    EXPECT_EQ(reply.body, "POST|/echo||/echo|-|2048");
  }
  // The tricklers still hold their shares: the small calls took only the reserve and what was left.
  // A small call's share is given back when its answer's write completes, which can be just after
  // the client has read the answer.
  EXPECT_TRUE(testing::eventually([&] { return server->stats().inflight_bytes == (7u << 20); }))
      << server->stats().inflight_bytes;
  EXPECT_LE(server->stats().peak_inflight_bytes, limits.max_inflight_bytes);
  EXPECT_EQ(server->stats().requests_busy, 1u);
}

// A body whose declared length, counted, is over one request's share could never be taken: 413 at
// once, naming the limit, and not one byte of it is awaited.
TEST(HttpServer, ABodyOverOneRequestsShareIs413NamingTheLimit) {
  auto server = started({.address = "127.0.0.1",
                         .port = 0,
                         .limits = {.max_body_bytes = 1u << 20, .max_inflight_bytes = 4u << 20}});
  RawClient raw(server->port(), 5s);
  ASSERT_TRUE(raw.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 524289\r\n\r\n"));
  const std::string response = raw.read_response();
  EXPECT_EQ(response.rfind("HTTP/1.1 413", 0), 0u) << response;
  EXPECT_NE(
      response.find("the request body of 524289 bytes is larger than one request may send here (524288 "
                    "bytes: its share of 524288 of the 4194304 bytes in flight, counted 1 times its size)"),
      std::string::npos)
      << response;
  EXPECT_EQ(server->stats().requests_too_large, 1u);
  // A body of exactly the share is taken.
  auto client = client_for(server->port());
  EXPECT_EQ(call(*client, "POST", "/echo", std::string(524288, 'b')).body, "POST|/echo||/echo|-|524288");
  EXPECT_EQ(server->stats().peak_inflight_bytes, 524288u);
}

// The extender's profile takes the largest body it states and refuses one byte more before reading it.
TEST(HttpServer, TheExtenderProfileTakesItsStatedLargestBody) {
  constexpr auto limits = net::kExtenderHttpLimits;
  static_assert(limits.max_body_bytes * limits.body_memory_factor ==
                limits.max_inflight_bytes / limits.request_share);
  auto server = started({.address = "127.0.0.1", .port = 0, .limits = limits});
  auto client = client_for(server->port());
  const std::size_t largest = limits.max_body_bytes;
  EXPECT_EQ(call(*client, "POST", "/echo", std::string(largest, 'n')).body,
            "POST|/echo||/echo|-|" + std::to_string(largest));
  RawClient over(server->port(), 5s);
  ASSERT_TRUE(over.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(largest + 1) +
                        "\r\n\r\n"));
  const std::string response = over.read_response();
  EXPECT_EQ(response.rfind("HTTP/1.1 413", 0), 0u) << response;
}

// A body trickling under the floor rate is dropped once the grace period is over, though the
// request's own deadline is minutes away; one that keeps above the floor is answered.
TEST(HttpServer, ABodyUnderTheFloorRateIsDroppedAfterTheGracePeriod) {
  auto server = started(
      {.address = "127.0.0.1",
       .port = 0,
       .limits = {.body_rate_grace = 200ms, .min_body_bytes_per_second = 1024, .read_timeout = 10min}});
  const std::string head = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 8192\r\n\r\n";
  RawClient slow(server->port(), 30s);
  ASSERT_TRUE(slow.send(head + "x"));
  // 1 byte in more than 200 ms is under 1 KiB/s: the server closes the connection.
  EXPECT_TRUE(slow.closed_by_server());
  // Beast's stream closes the socket when its timer fires and only then runs the handler that
  // counts the drop, so the client may see the close before the count.
  EXPECT_TRUE(testing::eventually([&] { return server->stats().requests_too_slow == 1; }))
      << server->stats().requests_too_slow;
  EXPECT_TRUE(testing::eventually([&] { return server->stats().inflight_bytes == 0; }));

  // 4 KiB at once earns 4 s at 1 KiB/s: a pause past the grace period (the one wait this needs)
  // keeps the average above the floor.
  RawClient steady(server->port(), 30s);
  ASSERT_TRUE(steady.send(head + std::string(4096, 'y')));
  std::this_thread::sleep_for(400ms);
  ASSERT_TRUE(steady.send(std::string(4096, 'y')));
  const std::string answer = steady.read_response();
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  EXPECT_EQ(server->stats().requests_too_slow, 1u);
}

// The server's process runs out of descriptors while idle connections hold them. It must neither
// spin on accept() nor leave a health check unanswered until the idle connections time out: it
// closes the longest idle one, backs off, and accepts again. The server runs in a process of its own
// (descriptor_limit_server.cpp) whose descriptor limit is a few above what it holds, so that the
// test's own sockets are not limited; that process suppresses the sanitizer check that needs a free
// descriptor itself where the server makes it, so the case runs in every build, the sanitizer build
// included.
TEST(HttpServer, OutOfDescriptorsTheServerEvictsIdleConnectionsAndKeepsAnswering) {
  int to_child[2];
  int from_child[2];
  ASSERT_EQ(::pipe2(to_child, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(from_child, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
  std::string binary = HT_DESCRIPTOR_LIMIT_SERVER;
  std::string free_slots = "24";  // its epoll, eventfd, timerfd and listener, then some 15 connections
  char* argv[] = {binary.data(), free_slots.data(), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv, environ), 0) << binary;
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_child[0]);
  ::close(from_child[1]);
  std::string line;
  char c;
  while (line.find('\n') == std::string::npos && ::read(from_child[0], &c, 1) == 1) line.push_back(c);
  const std::uint16_t port = static_cast<std::uint16_t>(std::atoi(line.c_str()));
  if (port == 0) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    ::waitpid(pid, nullptr, 0);
    FAIL() << "the server did not start: \"" << line << "\"";
  }
  // The kernel completes these connections in the backlog whether or not the server accepts them.
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 40; ++i) idle.push_back(std::make_unique<RawClient>(port, 10s));
  RawClient health(port, 10s);
  ASSERT_TRUE(health.send("GET /echo HTTP/1.1\r\nHost: t\r\n\r\n"));
  const std::string response = health.read_response();
  idle.clear();
  ::close(to_child[1]);
  std::string stats;
  while (::read(from_child[0], &c, 1) == 1) stats.push_back(c);
  ::close(from_child[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  // The accept errors happened (the descriptors did run out) and idle connections were closed for them.
  unsigned long long accept_errors = 0, evicted = 0;
  EXPECT_EQ(std::sscanf(stats.c_str(), "accept_errors %llu evicted %llu", &accept_errors, &evicted), 2)
      << stats;
  EXPECT_GT(accept_errors, 0u) << stats;
  EXPECT_GT(evicted, 0u) << stats;
  EXPECT_EQ(response.rfind("HTTP/1.1 200", 0), 0u)
      << "no answer while idle connections hold every descriptor";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

// Every header the transport sends is checked: a value with CR or LF (a token read from a file, say)
// is refused before a byte goes out, and the error names the header, not the value.
TEST(HttpTransport, AHeaderValueWithCrOrLfIsRefusedAndNothingIsSent) {
  std::atomic<int> requests{0};
  auto server = std::make_unique<net::HttpServer>(net::HttpServerOptions{.address = "127.0.0.1", .port = 0});
  server->handle("GET", "/echo", [&](const net::HttpServerRequest& req) {
    ++requests;
    return echo(req);
  });
  ASSERT_TRUE(server->start().has_value());
  auto client = client_for(server->port());
  for (const std::string bad :
       {"Bearer abc\r\nImpersonate-User: system:admin", "Bearer abc\nX: y", "a\x7f"}) {
    auto r = client->round_trip({"GET", "/echo", {{"Authorization", bad}}, ""}, 10s, true);
    ASSERT_FALSE(r.has_value());
    EXPECT_FALSE(r.error().sent);
    EXPECT_NE(r.error().error.message().find("Authorization header"), std::string::npos)
        << r.error().error.message();
    EXPECT_EQ(r.error().error.message().find("system:admin"), std::string::npos);
  }
  EXPECT_FALSE(client->round_trip({"GET", "/echo HTTP/1.1\r\nX: y", {}, ""}, 10s, true).has_value());
  EXPECT_FALSE(client->open_stream({"GET", "/echo", {{"X-Probe", "a\r\nb"}}, ""}, 10s).has_value());
  EXPECT_EQ(requests.load(), 0);
  // A tab is allowed in a value, as RFC 9110 and Go's net/http allow it.
  EXPECT_EQ(call(*client, "GET", "/echo", "", {{"X-Probe", "a\tb"}}).status, 200);
  EXPECT_EQ(requests.load(), 1);
}

}  // namespace
}  // namespace hypertopo::agent
