// The HTTP server's request parsing and limits (net/http_server, the agent's and the extender's
// listener): the input is written as is into a loopback connection to a running server (header
// trickles, bodies on GET routes, bad chunking, pipelined requests, Expect: 100-continue), and the
// server must answer with an HTTP status line or close, and then still answer a plain health check.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "net/http_server.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace hypertopo;

net::HttpServer& server() {
  static net::HttpServer* running = [] {
    auto* s = new net::HttpServer({.address = "127.0.0.1",
                                   .port = 0,
                                   .limits = {.max_connections = 8,
                                              .max_body_bytes = 64 * 1024,
                                              .max_inflight_bytes = 256 * 1024,
                                              .read_timeout = std::chrono::milliseconds(2000)}});
    s->handle("GET", "/healthz",
              [](const net::HttpServerRequest&) { return net::HttpServerResponse{.body = "ok\n"}; });
    s->handle("POST", "/echo",
              [](const net::HttpServerRequest& r) { return net::HttpServerResponse{.body = r.body}; });
    if (!s->start()) std::abort();
    return s;
  }();
  return *running;
}

// Sends `bytes`, closes the sending side, and returns what came back before the server closed (or
// 5 s passed).
std::string exchange(std::uint16_t port, std::string_view bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{.tv_sec = 5, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0 && answer.size() < (1u << 20);)
      answer.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return answer;
}

}  // namespace

HT_FUZZ_TARGET(http_request) {
  const std::uint16_t port = server().port();
  const std::string answer = exchange(port, input);
  if (!answer.empty() && answer.rfind("HTTP/1.", 0) != 0) std::abort();  // something that is not HTTP
  // Whatever the input did, the server still serves.
  if (exchange(port, "GET /healthz HTTP/1.1\r\nHost: f\r\nConnection: close\r\n\r\n")
          .rfind("HTTP/1.1 200", 0) != 0)
    std::abort();
}
