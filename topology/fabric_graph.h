// topology/fabric_graph.h: the fabric as every source sees it.
//
// Vertices are switches (id = node GUID or chassis name) and endpoints (an HCA port or a NIC, id =
// port/node GUID or MAC, owned by a host once the host is known); edges are links with port numbers
// and the rate where known. Every fabric source (ibnetdiscover text, a libibnetdisc walk, UFM, LLDP)
// produces one; the TreeBuilder turns it into a Tree.
//
//   FabricGraph g;
//   auto leaf = g.add_switch("0x2c5eab0300b87b40", "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1");
//   auto hca  = g.add_endpoint("0xe09d7303007a4bd8", "a08-p1-dgx-04-c01 mlx5_5");
//   g.add_link(leaf, 1, hca, 1, "4xNDR");
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hypertopo::topology {

using VertexId = std::uint32_t;

enum class VertexKind : std::uint8_t { kSwitch, kEndpoint };

struct Vertex {
  VertexKind kind = VertexKind::kEndpoint;
  std::string id;                 // GUID ("0x..." lower-case hex), chassis id or MAC
  std::string description;        // node description as the fabric reports it
  std::string host;               // endpoints: owning host when the source knows it (LLDP, NodeReports)
  std::string device;             // endpoints: HCA / netdev name when known ("mlx5_0")
  std::string system_guid;        // sysimgguid when known
  std::string node_guid;          // endpoints: the HCA's node GUID when known (id is the port GUID)
  int port = 0;                   // endpoints: the HCA port number when known
  bool aggregation_node = false;  // SHARP "Aggregation Node" CA: never compute
};

// What one end of a link says of its own port (IB PortInfo, a UFM ports answer, sysfs). Widths are
// lane counts (the widest of a capability mask), speeds are per-lane signalling rates in Mb/s (the
// fastest of a mask), so sources that name them differently compare. 0 = the source does not say.
struct PortFacts {
  std::uint8_t width_active = 0;
  std::uint8_t width_enabled = 0;
  std::uint8_t width_supported = 0;
  std::uint8_t state = 0;  // IB PortState: 1 Down, 2 Initialize, 3 Armed, 4 Active
  std::uint32_t speed_active = 0;
  std::uint32_t speed_enabled = 0;
  std::uint32_t speed_supported = 0;
  std::uint8_t phys_state = 0;  // IB PortPhysicalState: 1 Sleep, 2 Polling, 3 Disabled, 4 Training,
                                // 5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest
  bool known() const { return width_active != 0 || speed_active != 0 || state != 0 || phys_state != 0; }
  bool operator==(const PortFacts&) const = default;
};

struct Link {
  VertexId a = 0;
  VertexId b = 0;
  int port_a = 0;
  int port_b = 0;
  std::string rate;  // e.g. "4xNDR"; empty when unknown
  PortFacts end_a;   // port_a's own view of the link
  PortFacts end_b;
};

class FabricGraph {
 public:
  // Adds a vertex, or returns the existing one with the same id (descriptions fill in when empty).
  VertexId add_switch(std::string_view id, std::string_view description);
  VertexId add_endpoint(std::string_view id, std::string_view description);
  // Adds a vertex whose id the caller knows no vertex has yet: no lookup, the id moved in. For
  // sources that key their vertices themselves (UFM, by integer GUID); the id index catches up on
  // the next add_switch / add_endpoint (find looks through the vertices it lacks). A repeated id
  // here is the caller's bug: find then names the first vertex with it.
  VertexId add_new_vertex(VertexKind kind, std::string id, std::string_view description);
  void add_link(VertexId a, int port_a, VertexId b, int port_b, std::string_view rate = {});
  void add_link(VertexId a, int port_a, VertexId b, int port_b, std::string_view rate, const PortFacts& end_a,
                const PortFacts& end_b);

  // What one end of link `link` says of its port, learnt after the link was added (a host's own
  // NodeReport); the ends themselves do not change.
  PortFacts& end_facts(std::size_t link, bool end_a) {
    return end_a ? links_[link].end_a : links_[link].end_b;
  }

  std::optional<VertexId> find(std::string_view id) const;
  Vertex& vertex(VertexId v) { return vertices_[v]; }
  const Vertex& vertex(VertexId v) const { return vertices_[v]; }
  std::size_t vertex_count() const { return vertices_.size(); }
  const std::vector<Vertex>& vertices() const { return vertices_; }
  const std::vector<Link>& links() const { return links_; }
  std::size_t switch_count() const;
  std::size_t endpoint_count() const;

  // Neighbours of v (one entry per link end, parallel links repeat, self-loops are skipped).
  // Built on first use after a change.
  std::span<const VertexId> neighbors(VertexId v) const;

  void reserve(std::size_t vertices, std::size_t links);

 private:
  VertexId add_vertex(VertexKind kind, std::string_view id, std::string_view description);
  void build_adjacency() const;

  std::vector<Vertex> vertices_;
  std::vector<Link> links_;
  // Heterogeneous lookup: find() and add_vertex() look ids up as views, no string made per call.
  struct IdHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
  };
  void catch_up_index();

  std::unordered_map<std::string, VertexId, IdHash, std::equal_to<>> index_;
  std::size_t indexed_ = 0;  // vertices_[0, indexed_) are in index_; find() scans the rest
  mutable bool adjacency_valid_ = false;
  mutable std::vector<std::uint32_t> adjacency_offsets_;
  mutable std::vector<VertexId> adjacency_;
};

// Normalises a GUID to "0x" + 16 lower-case hex digits; returns nullopt when it is not hex.
std::optional<std::string> normalize_guid(std::string_view text);

}  // namespace hypertopo::topology
