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
//     its header arrives until its answer is written; a body that could never fit is 413, one that
//     does not fit now is 503 with Retry-After, both before the body is read;
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
  std::size_t max_inflight_bytes = 4u << 20;
  std::chrono::milliseconds read_timeout{30000};
  std::chrono::milliseconds accept_backoff_min{10};
  std::chrono::milliseconds accept_backoff_max{1000};
};

// The agent: GET routes only (healthz, readyz, metrics), so no body is ever buffered there; 64
// connections with full headers hold about 1 MiB. These are also the defaults of HttpServerOptions
// (a POST route elsewhere takes up to 1 MiB, 4 MiB of bodies at once).
inline constexpr HttpServerLimits kAgentHttpLimits{};

// The extender: kube-scheduler sends one filter or prioritize call at a time per profile. A body of
// full Node objects (nodeCacheCapable: false) is parsed into a JSON tree that peaks at 15 to 32 times
// the body (scripts/extender-filter-memory.py: 14.7x for a 9.4 MiB body of generated Nodes; real
// objects with more, smaller fields reach about 32x), so bodies count 32 times and 640 MiB of them
// may be in flight: the largest body taken is 20 MiB, and the extender's heap stays within its
// 1Gi limit whatever arrives. A node-name body (nodeCacheCapable: true) of 10,000 nodes is ~0.3 MiB.
inline constexpr HttpServerLimits kExtenderHttpLimits{
    .max_connections = 128,
    .max_header_bytes = 64 * 1024,
    .max_body_bytes = 20u << 20,
    .body_memory_factor = 32,
    .max_inflight_bytes = 640u << 20,
};

}  // namespace hypertopo::net
