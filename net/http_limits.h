// net/http_limits.h: every number that bounds what one HttpServer holds, in one place, with the two
// profiles the binary uses: the agent's (health, readiness and metrics on every GPU node, a 256Mi
// container) and the scheduler extender's (kube-scheduler's filter and prioritize calls, a 1Gi
// container). docs/limits.md ("HTTP server limits") states the same numbers.
//
// The policy (net/http_server.cpp applies it):
//   - at most max_connections open connections; at the cap a new connection evicts the one that has
//     waited longest for a request (idle keep-alive or a header still trickling in), else a
//     connection still writing its answer; a connection reading a body or running a handler is
//     never evicted, and when no connection can go the new one is closed at once;
//   - a request header over max_header_bytes is refused (431 is not used: 400, as Beast reports);
//   - GET, HEAD, DELETE and OPTIONS take no body (413 before a byte of it is read); other methods at
//     most max_body_bytes;
//   - a body is counted at body_memory_factor times its declared length (what the handler's parse
//     of it costs, measured) against max_inflight_bytes, shared by all connections, from the moment
//     its header arrives until its answer is written. One request takes at most
//     max_inflight_bytes / request_share of it, and max_inflight_bytes / small_reserve_share is kept
//     for small requests (counted at most small_request_bytes), so that a few large bodies can never
//     take the budget from every other caller. A body over its share could never fit: 413; one that
//     does not fit now: 503 with Retry-After; both before a byte of the body is read;
//   - a body that, once body_rate_grace has passed, has arrived at less than min_body_bytes_per_second
//     on average is dropped (the connection is closed): a client trickling a large body gives its
//     share back within seconds, not at the end of read_timeout;
//   - accept() failing for want of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) evicts an
//     idle connection and waits accept_backoff_min, doubling up to accept_backoff_max, instead of
//     retrying at once (which spins a core while the backlog stays full);
//   - one read_timeout covers a whole request, header and body.
//
// clang-format off
//   net::HttpServer server({.address = "127.0.0.1", .port = 0, .limits = net::kExtenderHttpLimits});
// clang-format on
#pragma once

#include <chrono>
#include <cstddef>

namespace hypertopo::net {

struct HttpServerLimits {
  std::size_t max_connections = 64;
  std::size_t max_header_bytes = 16 * 1024;
  std::size_t max_body_bytes = 1u << 20;
  std::size_t body_memory_factor = 1;
  std::size_t max_inflight_bytes = 8u << 20;
  std::size_t request_share = 8;                // one request: at most max_inflight_bytes / request_share
  std::size_t small_reserve_share = 8;          // max_inflight_bytes / this is kept for small requests
  std::size_t small_request_bytes = 64 * 1024;  // counted (times body_memory_factor)
  std::chrono::milliseconds body_rate_grace{5000};
  std::size_t min_body_bytes_per_second = 64 * 1024;  // 0: no floor
  std::chrono::milliseconds read_timeout{30000};
  std::chrono::milliseconds accept_backoff_min{10};
  std::chrono::milliseconds accept_backoff_max{1000};
};

// The agent: GET routes only (healthz, readyz, metrics), so no body is ever buffered there; 64
// connections with full headers hold about 1 MiB. These are also the defaults of HttpServerOptions
// (a POST route elsewhere takes up to 1 MiB: an eighth of the 8 MiB of bodies at once, 1 MiB of which
// only bodies of 64 KiB or less may take). A body must arrive at 64 KiB/s on average once 5 s have
// passed: 1 MiB then takes at most 16 s, inside the 30 s read_timeout.
inline constexpr HttpServerLimits kAgentHttpLimits{};

// The extender: kube-scheduler sends one filter or prioritize call at a time per profile. A body of
// full Node objects (nodeCacheCapable: false) is parsed into a JSON tree that peaks at 15 to 32 times
// the body (scripts/extender-filter-memory.py: 14.7x for a 9.4 MiB body of generated Nodes; real
// objects with more, smaller fields reach about 32x), so bodies count 32 times and 640 MiB of them
// may be in flight, which keeps the extender's heap within its 1Gi limit whatever arrives. One
// request takes at most an eighth of that, 80 MiB counted: the largest body taken is 2.5 MiB
// (80 MiB / 32; some 250 to 500 full Node objects). The deployed kube-scheduler config sets
// nodeCacheCapable: true, whose bodies name the nodes: 10,000 nodes are ~0.3 MiB (~10 MiB counted),
// under the 16 MiB counted (512 KiB) up to which a request may also take the last eighth, 80 MiB,
// that larger bodies leave free. So seven 2.5 MiB bodies trickling at once still leave room for
// eight such calls, and each trickler is dropped once it falls under 64 KiB/s after 5 s.
inline constexpr HttpServerLimits kExtenderHttpLimits{
    .max_connections = 128,
    .max_header_bytes = 64 * 1024,
    .max_body_bytes = (640u << 20) / 8 / 32,
    .body_memory_factor = 32,
    .max_inflight_bytes = 640u << 20,
    .small_request_bytes = 16u << 20,
};

}  // namespace hypertopo::net
