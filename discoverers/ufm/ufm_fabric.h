// discoverers/ufm/ufm_fabric.h: UFM's `resources/ports` and `resources/links` answers, parsed with
// simdjson's on-demand API, and the FabricGraph they describe.
//
// UFM lists every port of the fabric: host ports ("Computer IB Port") with their port GUID, the
// HCA's node GUID (`systemID`), `system_name` (the host part of the HCA description) and the peer
// they are cabled to; switch ports ("Switch IB Port") with the switch's GUID. `resources/links`
// lists every cable by (source_guid, source_port, destination_guid, destination_port). Both
// answers are either a plain JSON array or, when paged, `{"total_resources": N, "data": [...]}`.
//
// Records without a usable `guid` (links: `source_guid`/`destination_guid`) are skipped and counted,
// never guessed; a body that is not JSON (a response cut short) is an error naming the byte offset.
//
// The fetch path reads each page as it arrives straight into a UfmFabric: GUIDs as integers, the
// few texts the graph keeps copied once into one arena, no record objects. A 100 MiB answer costs
// a few times simdjson's own parse of it, not tens (bench/ufm). UfmPort / UfmLink are the same
// facts as self-contained records, for callers that look at single records.
//
//   UfmResponseParser parser;                 // reuse it: its buffers grow to the largest page
//   UfmFabric fabric;                         // reuse it too: clear() keeps the capacity
//   auto page = parser.ports(body, fabric);   // std::expected<UfmPage, Error>, once per page
//   auto links = parser.links(links_body, fabric);
//   std::vector<std::string> notes;
//   topology::FabricGraph graph = build_ufm_graph(fabric, &notes);
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "errors/error.h"
#include "topology/fabric_graph.h"
#include "topology/guid_text.h"

namespace hypertopo::discoverers::ufm {

enum class PortRole : std::uint8_t { kHost, kSwitch, kOther };

struct UfmPort {
  PortRole role = PortRole::kOther;
  std::string guid;         // port GUID, normalised ("0x" + 16 hex digits)
  std::string system_guid;  // `systemID`: the node GUID of the HCA or switch, normalised; may be ""
  std::string system_name;  // host ports: the HCA description's host part; switches: the switch name
  std::string node_description;
  int number = 0;                // port number (from `number`, else the `name` suffix "<guid>_<n>")
  std::string peer_guid;         // normalised; "" when the port has no peer
  int peer_port = 0;             // from `peer` ("<guid>_<port>")
  std::string peer_description;  // `peer_node_description`, else `peer_node_name`
  std::string rate;              // "4xNDR" from active_width + active_speed; "" when unknown
  bool down = false;             // logical_state "Down"
  // active_width / active_speed, enabled_width / enabled_speed / supported_width / supported_speed
  // (lists: the widest and fastest entry), logical_state and physical_state, in the units every
  // fabric source shares ("4x" -> 4 lanes, "NDR" -> 106250 Mb/s, "Active" -> 4, "Link Up" -> 5).
  topology::PortFacts facts;
};

struct UfmLink {
  std::string source_guid;  // normalised
  int source_port = 0;
  std::string destination_guid;  // normalised
  int destination_port = 0;
  std::string source_description;       // `source_port_node_description` when present
  std::string destination_description;  // `destination_port_node_description` when present
};

// What one answer held.
struct UfmPage {
  bool paged = false;                  // the `{"total_resources", "data"}` envelope
  std::optional<std::uint64_t> total;  // `total_resources` when paged
  std::size_t records = 0;             // array elements seen (used and skipped)
  std::size_t skipped = 0;             // elements without the required fields
  std::string first_skip;              // why the first skipped element was skipped
};

// The ports and links of one fabric as read: GUIDs as integers, the texts the graph keeps in one
// arena (a Text is an offset into it, valid as long as the UfmFabric is).
class UfmFabric {
 public:
  struct Text {
    std::size_t offset = 0;
    std::size_t size = 0;
  };
  struct Port {
    std::uint64_t guid = 0;         // port GUID
    std::uint64_t system_guid = 0;  // `systemID`, when has_system_guid
    std::uint64_t peer_guid = 0;    // when has_peer_guid
    int number = 0;
    int peer_port = 0;
    Text system_name;
    Text node_description;
    Text peer_description;
    Text rate;
    topology::PortFacts facts;
    PortRole role = PortRole::kOther;
    bool has_system_guid = false;
    bool has_peer_guid = false;
    bool down = false;
  };
  struct Link {
    std::uint64_t source_guid = 0;
    std::uint64_t destination_guid = 0;
    int source_port = 0;
    int destination_port = 0;
    Text source_description;
    Text destination_description;
  };

  std::string_view text(Text t) const { return std::string_view(arena_).substr(t.offset, t.size); }
  Text keep(std::string_view text);
  Text keep_joined(std::string_view first, std::string_view second);
  // Empties the fabric; its arrays keep their capacity for the next run.
  void clear();

  std::vector<Port> ports;
  std::vector<Link> links;

 private:
  std::string arena_;
};

// Parses answers, appending to `out`. `body` may grow (simdjson needs padding after the
// text); its contents are unchanged. Not thread-safe; one parser per thread.
class UfmResponseParser {
 public:
  UfmResponseParser();
  ~UfmResponseParser();
  UfmResponseParser(const UfmResponseParser&) = delete;
  UfmResponseParser& operator=(const UfmResponseParser&) = delete;

  std::expected<UfmPage, Error> ports(std::string& body, UfmFabric& out);
  std::expected<UfmPage, Error> links(std::string& body, UfmFabric& out);
  // The same reading, as self-contained records.
  std::expected<UfmPage, Error> ports(std::string& body, std::vector<UfmPort>& out);
  std::expected<UfmPage, Error> links(std::string& body, std::vector<UfmLink>& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The fabric the records describe: switches by GUID, one endpoint per host (CA) port (id = port
// GUID, node_guid = systemID, host = system_name, description = node_description), links from
// `links` plus the ports' own peer fields (deduplicated), with the port's rate and both ends'
// PortFacts for the health pass. A link end that is not a known CA port or CA node is a switch.
// Notes say what was skipped.
topology::FabricGraph build_ufm_graph(const UfmFabric& fabric, std::vector<std::string>* notes);
topology::FabricGraph build_ufm_graph(const std::vector<UfmPort>& ports, const std::vector<UfmLink>& links,
                                      std::vector<std::string>* notes);

// A GUID as the graph names it: "0x" and 16 lower-case hex digits.
using topology::guid_text;
// A GUID as UFM writes it ("0x248a070300f88fe0", "248A070300F88FE0", or a JSON number read as hex
// digits), as topology::normalize_guid accepts it; nullopt when it is not 1-16 hex digits.
std::optional<std::uint64_t> parse_guid(std::string_view text);

}  // namespace hypertopo::discoverers::ufm
