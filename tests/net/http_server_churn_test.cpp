// HttpServer under connection churn: many I/O threads, one short connection per request, and a
// connection cap small enough that new connections evict idle ones all the time. Every accept scans
// the open sessions while another I/O thread may be dropping a session's last reference; a session
// destroyed during that scan must not wedge the server. The load runs against a deadline so that a
// wedged server fails the test instead of hanging it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "net/http_server.h"

namespace hypertopo::net {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

int connect_to(std::uint16_t port, std::chrono::seconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  // SO_SNDTIMEO bounds connect() too: a server that no longer accepts fills its backlog, and the
  // kernel would go on retrying the handshake for minutes.
  timeval tv{.tv_sec = static_cast<time_t>(timeout.count()), .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One request on a connection of its own; true when the whole 200 answer came back. The server
// closes first (Connection: close), so the client's ports do not linger in TIME_WAIT.
bool healthz_once(std::uint16_t port) {
  const int fd = connect_to(port, 2s);
  if (fd < 0) return false;
  static constexpr std::string_view kRequest =
      "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
  bool ok =
      ::send(fd, kRequest.data(), kRequest.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(kRequest.size());
  std::string answer;
  char chunk[512];
  while (ok) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0) ok = false;
    if (n <= 0) break;
    answer.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return ok && answer.starts_with("HTTP/1.1 200") && answer.ends_with("\r\n\r\nok\n");
}

// True while the server has not closed this idle connection.
bool still_open(int fd) {
  char byte;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

TEST(HttpServerChurn, ShortConnectionsWithEvictionsOnFourThreadsAreAllAnsweredAndStopReturns) {
  constexpr int kClients = 8;
  // The sanitizer build (-O0, ASan and UBSan) serves about 1,600 short connections a second on two
  // cores, so it runs 12,000 of them: ten times the first 1,200 connections within which the server
  // this test was written against wedged there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr int kRequests = 12'000;
#else
  constexpr int kRequests = 200'000;
#endif
  constexpr int kPerClient = kRequests / kClients;
  // A bound on a hang, not a speed target: the sanitizer build serves this load well inside it.
  constexpr auto kDeadline = 55s;

  // Each client also parks an idle connection; 8 parked plus up to 8 busy is over the cap of 12,
  // so new connections keep evicting the connection that has waited longest.
  auto server = std::make_unique<HttpServer>(
      HttpServerOptions{.address = "127.0.0.1", .port = 0, .limits = {.max_connections = 12}, .threads = 4});
  server->handle("GET", "/healthz",
                 [](const HttpServerRequest&) { return HttpServerResponse{.body = "ok\n"}; });
  auto ok = server->start();
  ASSERT_TRUE(ok.has_value()) << ok.error().message();
  const std::uint16_t port = server->port();

  const auto started = Clock::now();
  const auto deadline = started + kDeadline;
  std::atomic<int> answered{0}, retried{0};
  std::vector<int> parked(kClients, -1);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int done = 0, i = 0; done < kPerClient && Clock::now() < deadline; ++i) {
        if (i % 8 == 0 && (parked[c] < 0 || !still_open(parked[c]))) {
          if (parked[c] >= 0) ::close(parked[c]);
          parked[c] = connect_to(port, 2s);
        }
        if (healthz_once(port)) {
          ++done;
          ++answered;
        } else {
          ++retried;  // evicted before its request was read, or refused at the cap: a client retries
        }
      }
    });
  }
  for (auto& client : clients) client.join();
  const auto loaded = Clock::now();

  // stats() and stop() on a thread of their own (a wedged server holds the lock stats() takes), so
  // that a wedged server fails here rather than hanging the run.
  HttpServerStats stats;
  Clock::duration stop_took{};
  std::promise<void> stopped;
  auto stop_done = stopped.get_future();
  std::thread stopper([&] {
    stats = server->stats();
    const auto stop_started = Clock::now();
    server->stop();
    stop_took = Clock::now() - stop_started;
    stopped.set_value();
  });
  if (stop_done.wait_for(10s) != std::future_status::ready) {
    std::fprintf(
        stderr,
        "HttpServer::stats() or stop() did not return within 10 s: the server is wedged (%d answered, "
        "%d retried)\n",
        answered.load(), retried.load());
    std::_Exit(EXIT_FAILURE);  // its threads cannot be joined; the process cannot end otherwise
  }
  stopper.join();
  for (int fd : parked) {
    if (fd >= 0) ::close(fd);
  }

  std::printf("[churn] %d answered, %d retried in %.1f s; %llu evicted, %llu refused; stop() took %.1f ms\n",
              answered.load(), retried.load(), std::chrono::duration<double>(loaded - started).count(),
              static_cast<unsigned long long>(stats.connections_evicted),
              static_cast<unsigned long long>(stats.connections_refused),
              std::chrono::duration<double, std::milli>(stop_took).count());
  EXPECT_EQ(answered.load(), kRequests) << "the load did not finish within " << kDeadline.count() << " s";
  EXPECT_GT(stats.connections_evicted, 0u);
  // A request goes unanswered only when its connection was evicted or refused at the cap.
  EXPECT_LE(static_cast<std::uint64_t>(retried.load()),
            stats.connections_evicted + stats.connections_refused);
  EXPECT_LT(stop_took, 1s);
}

}  // namespace
}  // namespace hypertopo::net
