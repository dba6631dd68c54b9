// tests/support/apiserver/tcp_partition.h: a loopback TCP relay that a test can partition.
//
// Test code only. One client (an agent process, say) reaches the server through this relay while
// the others reach it directly, so the test can cut that one client off, as a network partition
// between one node and the control plane does, while the server keeps serving everyone else.
// Partitioned, the relay is a black hole: connections open and stay open, bytes in either direction
// are read and dropped, new connections are accepted and held the same way (the client sees its
// requests time out, not refused). Healed, every connection that lived through the partition is cut
// (as a conntrack or NAT table that forgot them would answer: reset), and new ones pass again.
// Nothing sent during the partition ever reaches the server.
//
//   TcpPartition relay(server.port());
//   ASSERT_TRUE(relay.start());
//   // point the client at relay.url() ...
//   relay.partition_when("POST /apis/topology.volcano.sh");   // cut off as that request goes out
//   relay.heal();
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <string>

#include "errors/error.h"

namespace hypertopo::testing {

class TcpPartition {
 public:
  explicit TcpPartition(std::uint16_t upstream_port);  // on 127.0.0.1
  ~TcpPartition();
  TcpPartition(const TcpPartition&) = delete;
  TcpPartition& operator=(const TcpPartition&) = delete;

  std::expected<void, Error> start();  // listens on 127.0.0.1, port 0
  void stop();                         // cuts everything; the destructor calls it
  std::uint16_t port() const;
  std::string url() const;  // "http://127.0.0.1:<port>"

  void partition();
  // The partition starts when bytes from the client contain `needle` (those bytes are dropped).
  void partition_when(const std::string& needle);
  void heal();
  bool partitioned() const;
  int connections() const;  // accepted since start

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace hypertopo::testing
