#include "tests/support/apiserver/tcp_partition.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <thread>

namespace hypertopo::testing {

struct TcpPartition::State {
  std::uint16_t upstream_port = 0;
  int listener = -1;
  std::uint16_t port = 0;
  std::thread accept_thread;
  std::atomic<bool> stopping{false};

  mutable std::mutex mutex;  // guards everything below
  bool partitioned = false;
  std::string needle;  // partition_when()
  int accepted = 0;
  struct Link {
    int client = -1;
    int upstream = -1;  // -1 when accepted during a partition: it never reaches the server
    bool spanned = false;
    bool done = false;
    std::thread thread;
  };
  std::list<Link> links;

  void begin_partition_locked() {
    partitioned = true;
    needle.clear();
    for (auto& l : links) l.spanned = true;
  }
  void accept_loop();
  void pump(Link& link);
};

namespace {

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
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

}  // namespace

void TcpPartition::State::pump(Link& link) {
  char buf[16384];
  for (;;) {
    pollfd fds[2] = {{link.client, POLLIN, 0}, {link.upstream, POLLIN, 0}};
    const int ready = ::poll(fds, link.upstream >= 0 ? 2 : 1, 100);
    if (stopping) break;
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    bool ended = false;
    for (int side = 0; side < 2 && !ended; ++side) {
      if (fds[side].fd < 0 || (fds[side].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::recv(fds[side].fd, buf, sizeof buf, 0);
      if (n <= 0) {
        ended = true;
        break;
      }
      bool drop = false;
      {
        std::lock_guard lock(mutex);
        if (side == 0 && !partitioned && !needle.empty() &&
            std::string_view(buf, static_cast<std::size_t>(n)).find(needle) != std::string_view::npos) {
          begin_partition_locked();
        }
        drop = partitioned || link.spanned || link.upstream < 0;
      }
      if (drop) continue;  // the black hole: read, never delivered
      if (!write_all(side == 0 ? link.upstream : link.client, buf, static_cast<std::size_t>(n))) ended = true;
    }
    if (ended) break;
  }
  std::lock_guard lock(mutex);
  ::shutdown(link.client, SHUT_RDWR);
  if (link.upstream >= 0) ::shutdown(link.upstream, SHUT_RDWR);
  link.done = true;
}

void TcpPartition::State::accept_loop() {
  while (!stopping) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;
    }
    std::lock_guard lock(mutex);
    if (stopping) {
      ::close(fd);
      return;
    }
    ++accepted;
    for (auto it = links.begin(); it != links.end();) {
      if (it->done) {
        if (it->thread.joinable()) it->thread.join();
        ::close(it->client);
        if (it->upstream >= 0) ::close(it->upstream);
        it = links.erase(it);
      } else {
        ++it;
      }
    }
    auto& link = links.emplace_back();
    link.client = fd;
    link.spanned = partitioned;
    link.upstream = partitioned ? -1 : connect_loopback(upstream_port);
    if (!partitioned && link.upstream < 0) {
      link.done = true;  // the server is down: the client sees its connection closed
      ::shutdown(fd, SHUT_RDWR);
      continue;
    }
    link.thread = std::thread([this, &link] { pump(link); });
  }
}

TcpPartition::TcpPartition(std::uint16_t upstream_port) : state_(std::make_unique<State>()) {
  state_->upstream_port = upstream_port;
}

TcpPartition::~TcpPartition() { stop(); }

std::expected<void, Error> TcpPartition::start() {
  State& s = *state_;
  s.listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (s.listener < 0 || ::bind(s.listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(s.listener, 128) != 0 ||
      ::getsockname(s.listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return fail(ErrorCode::kUnavailable,
                std::string("tcp partition relay cannot listen: ") + std::strerror(errno));
  }
  s.port = ntohs(addr.sin_port);
  s.accept_thread = std::thread([&s] { s.accept_loop(); });
  return {};
}

void TcpPartition::stop() {
  State& s = *state_;
  if (s.stopping.exchange(true)) return;
  if (s.listener >= 0) ::shutdown(s.listener, SHUT_RDWR);
  if (s.accept_thread.joinable()) s.accept_thread.join();
  {
    std::lock_guard lock(s.mutex);
    for (auto& l : s.links) {
      ::shutdown(l.client, SHUT_RDWR);
      if (l.upstream >= 0) ::shutdown(l.upstream, SHUT_RDWR);
    }
  }
  for (auto& l : s.links) {
    if (l.thread.joinable()) l.thread.join();
    ::close(l.client);
    if (l.upstream >= 0) ::close(l.upstream);
  }
  s.links.clear();
  if (s.listener >= 0) ::close(s.listener);
  s.listener = -1;
}

std::uint16_t TcpPartition::port() const { return state_->port; }

std::string TcpPartition::url() const { return "http://127.0.0.1:" + std::to_string(state_->port); }

void TcpPartition::partition() {
  std::lock_guard lock(state_->mutex);
  state_->begin_partition_locked();
}

void TcpPartition::partition_when(const std::string& needle) {
  std::lock_guard lock(state_->mutex);
  state_->needle = needle;
}

void TcpPartition::heal() {
  std::lock_guard lock(state_->mutex);
  state_->partitioned = false;
  for (auto& l : state_->links) {
    if (!l.spanned) continue;
    ::shutdown(l.client, SHUT_RDWR);
    if (l.upstream >= 0) ::shutdown(l.upstream, SHUT_RDWR);
  }
}

bool TcpPartition::partitioned() const {
  std::lock_guard lock(state_->mutex);
  return state_->partitioned;
}

int TcpPartition::connections() const {
  std::lock_guard lock(state_->mutex);
  return state_->accepted;
}

}  // namespace hypertopo::testing
