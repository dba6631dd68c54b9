// The FabricGraph a UFM fabric's ports and links describe (see ufm_fabric.h, build_ufm_graph):
// integer-keyed open-addressing tables from GUIDs and (GUID, port) to records and vertices.
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "discoverers/ufm/ufm_fabric.h"

namespace hypertopo::discoverers::ufm {
namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser: GUIDs differ in few low bits
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct GuidPort {
  std::uint64_t guid = 0;
  int port = 0;
  bool operator==(const GuidPort&) const = default;
};

// One cable as the graph has it: both ends (vertex, port), the smaller first.
struct CableKey {
  std::uint64_t a = 0;  // vertex << 32 | port
  std::uint64_t b = 0;
  bool operator==(const CableKey&) const = default;
};

std::uint64_t hash_of(std::uint64_t key) { return mix(key); }
std::uint64_t hash_of(const GuidPort& key) {
  return mix(key.guid ^ mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.port))));
}
std::uint64_t hash_of(const CableKey& key) { return mix(key.a ^ mix(key.b)); }

// An open-addressing map for the assembler's integer keys: one probe sequence in one flat array, no
// node per entry (the standard map's allocations and string keys were most of the graph build's
// time). A pointer it hands out is valid until the next insertion.
template <typename Key, typename Value>
class FlatMap {
 public:
  explicit FlatMap(std::size_t expected) { rehash(capacity_for(expected)); }

  // Cable ends are looked up in answer order, which hashing scatters over the table: asking for the
  // slot a few cables ahead hides most of the cache misses that were the build's cost.
  void prefetch(const Key& key) const { __builtin_prefetch(&slots_[hash_of(key) & mask_]); }

  Value* find(const Key& key) {
    for (std::size_t i = hash_of(key) & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (!slot.used) return nullptr;
      if (slot.key == key) return &slot.value;
    }
  }
  // The value of `key`, inserted as `value` when absent; second: whether it was inserted.
  std::pair<Value*, bool> try_emplace(const Key& key, const Value& value) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    for (std::size_t i = hash_of(key) & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (!slot.used) {
        slot = Slot{key, value, true};
        ++size_;
        return {&slot.value, true};
      }
      if (slot.key == key) return {&slot.value, false};
    }
  }

 private:
  struct Slot {
    Key key{};
    Value value{};
    bool used = false;
  };
  static std::size_t capacity_for(std::size_t entries) {
    std::size_t capacity = 16;
    while (capacity < entries * 2) capacity *= 2;
    return capacity;
  }
  void rehash(std::size_t capacity) {
    std::vector<Slot> old(capacity);
    std::swap(old, slots_);
    mask_ = capacity - 1;
    size_ = 0;
    for (const Slot& slot : old)
      if (slot.used) try_emplace(slot.key, slot.value);
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

constexpr std::uint32_t kNone = 0xffffffffu;

// What the ports answer says of one GUID, and the vertex it names in the graph.
struct GuidFacts {
  std::uint32_t ca_port = kNone;  // the first CA port record with this port GUID
  topology::VertexId vertex = kNone;
  // A switch port record it owns: the first with a description (node_description, else
  // system_name), else any; kNone when it owns none.
  std::uint32_t switch_port = kNone;
  bool ca_node = false;  // some CA port record names it as `systemID`
};

class GraphAssembler {
 public:
  GraphAssembler(const UfmFabric& fabric, std::vector<std::string>* notes)
      : fabric_(fabric),
        notes_(notes),
        guids_(fabric.ports.size()),
        port_at_(fabric.ports.size()),
        unlisted_(16),
        seen_(fabric.links.size()),
        cabled_(fabric.ports.size()) {
    graph_.reserve(fabric.ports.size(), fabric.ports.size());
    const auto& ports = fabric.ports;
    for (std::uint32_t i = 0; i < ports.size(); ++i) {
      if (i + kAhead < ports.size()) {
        const UfmFabric::Port& ahead = ports[i + kAhead];
        const std::uint64_t owner = ahead.has_system_guid ? ahead.system_guid : ahead.guid;
        port_at_.prefetch(GuidPort{owner, ahead.number});
        guids_.prefetch(ahead.role == PortRole::kSwitch ? owner : ahead.guid);
      }
      const UfmFabric::Port& p = ports[i];
      const std::uint64_t owner = p.has_system_guid ? p.system_guid : p.guid;
      port_at_.try_emplace(GuidPort{owner, p.number}, i);
      if (p.role == PortRole::kSwitch) {
        GuidFacts& g = *guids_.try_emplace(owner, GuidFacts{}).first;
        if (g.switch_port == kNone || switch_description(g.switch_port).size == 0) g.switch_port = i;
      } else {
        GuidFacts& g = *guids_.try_emplace(p.guid, GuidFacts{}).first;
        if (g.ca_port == kNone) g.ca_port = i;
        if (p.has_system_guid) guids_.try_emplace(p.system_guid, GuidFacts{}).first->ca_node = true;
      }
    }
  }

  static constexpr std::size_t kAhead = 16;

  // Asks for the table slots a cable end will need (see FlatMap::prefetch).
  void prefetch(std::uint64_t guid, int port) const {
    guids_.prefetch(guid);
    port_at_.prefetch(GuidPort{guid, port});
  }

  struct End {
    topology::VertexId vertex = 0;
    const UfmFabric::Port* port = nullptr;  // the record of this end's port, when listed
    bool switch_end = false;                // a switch, named by the GUID
    bool unlisted = false;                  // a CA port resources/ports does not list
  };
  // A cable whose two ends are resolved to vertices (and their vertices made), not yet added.
  struct Cable {
    std::uint64_t guid_a = 0, guid_b = 0;
    int port_a = 0, port_b = 0;
    End a, b;
    CableKey key() const {
      const std::uint64_t ka = std::uint64_t{a.vertex} << 32 | static_cast<std::uint32_t>(port_a);
      const std::uint64_t kb = std::uint64_t{b.vertex} << 32 | static_cast<std::uint32_t>(port_b);
      return ka < kb ? CableKey{ka, kb} : CableKey{kb, ka};
    }
  };

  // Resolving a cable's ends is what makes vertices, so cables are resolved in answer order; what
  // adding one then touches (the set of cables, the ends' records) can be asked for ahead of it.
  Cable resolve(std::uint64_t a, int pa, UfmFabric::Text a_desc, std::uint64_t b, int pb,
                UfmFabric::Text b_desc) {
    return Cable{a, b, pa, pb, end(a, pa, a_desc), end(b, pb, b_desc)};  // a's end first: in order
  }
  void prefetch(const Cable& c) const {
    seen_.prefetch(c.key());
    if (c.a.port) __builtin_prefetch(&cabled_[static_cast<std::size_t>(c.a.port - fabric_.ports.data())], 1);
    if (c.b.port) __builtin_prefetch(&cabled_[static_cast<std::size_t>(c.b.port - fabric_.ports.data())], 1);
  }
  void add(const Cable& c) {
    remember(c.a, c.guid_a, c.port_a, c.b, c.guid_b, c.port_b);
    remember(c.b, c.guid_b, c.port_b, c.a, c.guid_a, c.port_a);
    if (!seen_.try_emplace(c.key(), 1).second) return;
    std::string_view rate = c.a.port ? fabric_.text(c.a.port->rate) : std::string_view();
    if (rate.empty() && c.b.port) rate = fabric_.text(c.b.port->rate);
    graph_.add_link(c.a.vertex, c.port_a, c.b.vertex, c.port_b, rate,
                    c.a.port ? c.a.port->facts : topology::PortFacts{},
                    c.b.port ? c.b.port->facts : topology::PortFacts{});
  }
  void link(std::uint64_t a, int pa, UfmFabric::Text a_desc, std::uint64_t b, int pb,
            UfmFabric::Text b_desc) {
    add(resolve(a, pa, a_desc, b, pb, b_desc));
  }

  // Whether the cable port record `i` names by its peer fields was already added from the links
  // answer, from the same two (GUID, port) ends, so that adding it again would change nothing: the
  // ports pass then costs no table lookup for most ports.
  bool repeats(std::uint32_t i, std::uint64_t owner) const {
    const Cabled& c = cabled_[i];
    const UfmFabric::Port& p = fabric_.ports[i];
    if (!c.valid || c.owner != owner || c.other_guid != p.peer_guid || c.other_port != p.peer_port)
      return false;
    // A switch end seen again takes a description it still lacks.
    if (c.self_switch && graph_.vertex(c.self).description.empty()) return false;
    if (c.other_switch && graph_.vertex(c.other).description.empty()) return false;
    return true;
  }

  topology::FabricGraph finish() {
    if (notes_ && unlisted_ca_ports_ > 0) {
      notes_->push_back(
          std::to_string(unlisted_ca_ports_) +
          " cable end(s) name a CA port that resources/ports did not list; kept without a host");
    }
    return std::move(graph_);
  }

 private:
  // A cable end (guid, port) resolved to the port record it names, and the other end it met.
  struct Cabled {
    std::uint64_t owner = 0;
    std::uint64_t other_guid = 0;
    int other_port = 0;
    topology::VertexId self = 0;
    topology::VertexId other = 0;
    bool self_switch = false;
    bool other_switch = false;
    bool valid = false;
  };

  void remember(const End& self, std::uint64_t guid, int port, const End& other, std::uint64_t other_guid,
                int other_port) {
    if (!self.port || self.unlisted || other.unlisted || self.port->number != port) return;
    const auto i = static_cast<std::size_t>(self.port - fabric_.ports.data());
    cabled_[i] = Cabled{guid,         other_guid,      other_port,       self.vertex,
                        other.vertex, self.switch_end, other.switch_end, true};
  }

  // One end of a cable: a CA port (by port GUID, or node GUID + port number) or else a switch; and
  // the port's record: a CA port by its port GUID, else the port `port` of node `guid`.
  End end(std::uint64_t guid, int port, UfmFabric::Text description) {
    const GuidFacts g = *guids_.try_emplace(guid, GuidFacts{}).first;
    End out;
    if (g.ca_port != kNone) {
      // An HCA whose port GUID is its node GUID lists its other ports under the same GUID.
      const UfmFabric::Port& p = fabric_.ports[g.ca_port];
      if (p.number == port || p.number == 0 || port == 0) out.port = &p;
    }
    const UfmFabric::Port* at = nullptr;
    if (!out.port) {
      if (const std::uint32_t* i = port_at_.find(GuidPort{guid, port})) at = &fabric_.ports[*i];
      if (!out.port) out.port = at;
    }
    if (g.ca_port != kNone) {
      out.vertex = endpoint(fabric_.ports[g.ca_port]);
    } else if (g.ca_node && at) {
      out.vertex = endpoint(*at);
    } else if (g.ca_node) {
      // A CA port UFM did not list: keep it, keyed by node GUID and port, without a host.
      ++unlisted_ca_ports_;
      auto [v, inserted] = unlisted_.try_emplace(GuidPort{guid, port}, kNone);
      if (inserted) {
        *v = graph_.add_new_vertex(topology::VertexKind::kEndpoint,
                                   guid_text(guid) + "_" + std::to_string(port), fabric_.text(description));
      } else {
        fill_description(*v, description);
      }
      out.vertex = *v;
      out.unlisted = true;
    } else {
      out.switch_end = true;
      const UfmFabric::Text text = g.switch_port != kNone ? switch_description(g.switch_port) : description;
      GuidFacts& named = *guids_.find(guid);
      if (named.vertex == kNone) {
        named.vertex =
            graph_.add_new_vertex(topology::VertexKind::kSwitch, guid_text(guid), fabric_.text(text));
      } else {
        // As FabricGraph::add_switch: an existing vertex takes the description if it had none and
        // becomes a switch.
        fill_description(named.vertex, text);
        graph_.vertex(named.vertex).kind = topology::VertexKind::kSwitch;
      }
      out.vertex = named.vertex;
    }
    return out;
  }

  UfmFabric::Text switch_description(std::uint32_t port) const {
    const UfmFabric::Port& p = fabric_.ports[port];
    return p.node_description.size == 0 ? p.system_name : p.node_description;
  }

  void fill_description(topology::VertexId v, UfmFabric::Text description) {
    topology::Vertex& vx = graph_.vertex(v);
    if (vx.description.empty()) vx.description = fabric_.text(description);
  }

  topology::VertexId endpoint(const UfmFabric::Port& p) {
    GuidFacts& g = *guids_.try_emplace(p.guid, GuidFacts{}).first;
    if (g.vertex != kNone) return g.vertex;
    g.vertex = graph_.add_new_vertex(topology::VertexKind::kEndpoint, guid_text(p.guid),
                                     fabric_.text(p.node_description));
    topology::Vertex& vx = graph_.vertex(g.vertex);
    vx.host = fabric_.text(p.system_name);
    if (p.has_system_guid) {
      vx.node_guid = guid_text(p.system_guid);
      vx.system_guid = vx.node_guid;
    }
    vx.port = p.number;
    vx.aggregation_node = vx.description.find("Aggregation Node") != std::string::npos;
    return g.vertex;
  }

  const UfmFabric& fabric_;
  std::vector<std::string>* notes_;
  topology::FabricGraph graph_;
  // Every GUID the ports answer or a cable names. Switches and CA ports share FabricGraph's one
  // namespace of ids, so one vertex per GUID whatever its kind; this map is what keeps ids unique
  // (vertices are added with add_new_vertex, no lookup in the graph's own index).
  FlatMap<std::uint64_t, GuidFacts> guids_;
  FlatMap<GuidPort, std::uint32_t> port_at_;        // (owner GUID, port number) -> port record
  FlatMap<GuidPort, topology::VertexId> unlisted_;  // CA ports named "<node guid>_<port>"
  FlatMap<CableKey, std::uint8_t> seen_;            // the cables added so far, by both ends
  std::vector<Cabled> cabled_;                      // by port record
  std::size_t unlisted_ca_ports_ = 0;
};

}  // namespace

topology::FabricGraph build_ufm_graph(const UfmFabric& fabric, std::vector<std::string>* notes) {
  GraphAssembler assembler(fabric, notes);
  constexpr std::size_t kAhead = GraphAssembler::kAhead;
  // Cable i is resolved kBehind cables before it is added, its slots asked for in between.
  constexpr std::size_t kBehind = 8;
  std::array<GraphAssembler::Cable, kBehind> resolved;
  const auto& links = fabric.links;
  for (std::size_t i = 0; i < links.size() + kBehind; ++i) {
    if (i + kAhead < links.size()) {
      const UfmFabric::Link& ahead = links[i + kAhead];
      assembler.prefetch(ahead.source_guid, ahead.source_port);
      assembler.prefetch(ahead.destination_guid, ahead.destination_port);
    }
    GraphAssembler::Cable& slot = resolved[i % kBehind];
    if (i >= kBehind) assembler.add(slot);  // cable i - kBehind
    if (i < links.size()) {
      const UfmFabric::Link& l = links[i];
      slot = assembler.resolve(l.source_guid, l.source_port, l.source_description, l.destination_guid,
                               l.destination_port, l.destination_description);
      assembler.prefetch(slot);
    }
  }
  // The ports' own peer fields fill in cables the links answer lacks (or a server without it).
  const auto& ports = fabric.ports;
  auto owner_of = [](const UfmFabric::Port& p) {
    return p.role == PortRole::kSwitch && p.has_system_guid ? p.system_guid : p.guid;
  };
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const UfmFabric::Port& p = ports[i];
    if (p.down || !p.has_peer_guid || p.peer_port == 0) continue;
    const std::uint64_t owner = owner_of(p);
    if (assembler.repeats(static_cast<std::uint32_t>(i), owner)) continue;
    assembler.link(owner, p.number, p.node_description, p.peer_guid, p.peer_port, p.peer_description);
  }
  return assembler.finish();
}

topology::FabricGraph build_ufm_graph(const std::vector<UfmPort>& ports, const std::vector<UfmLink>& links,
                                      std::vector<std::string>* notes) {
  // Records hold normalised GUIDs ("" when absent); those that are not GUIDs cannot name a vertex.
  UfmFabric fabric;
  fabric.ports.reserve(ports.size());
  for (const UfmPort& r : ports) {
    auto guid = parse_guid(r.guid);
    if (!guid) continue;
    UfmFabric::Port& p = fabric.ports.emplace_back();
    p.guid = *guid;
    if (auto system = parse_guid(r.system_guid)) {
      p.system_guid = *system;
      p.has_system_guid = true;
    }
    if (auto peer = parse_guid(r.peer_guid)) {
      p.peer_guid = *peer;
      p.has_peer_guid = true;
    }
    p.number = r.number;
    p.peer_port = r.peer_port;
    p.system_name = fabric.keep(r.system_name);
    p.node_description = fabric.keep(r.node_description);
    p.peer_description = fabric.keep(r.peer_description);
    p.rate = fabric.keep(r.rate);
    p.facts = r.facts;
    p.role = r.role;
    p.down = r.down;
  }
  fabric.links.reserve(links.size());
  for (const UfmLink& r : links) {
    auto source = parse_guid(r.source_guid);
    auto destination = parse_guid(r.destination_guid);
    if (!source || !destination) continue;
    UfmFabric::Link& l = fabric.links.emplace_back();
    l.source_guid = *source;
    l.destination_guid = *destination;
    l.source_port = r.source_port;
    l.destination_port = r.destination_port;
    l.source_description = fabric.keep(r.source_description);
    l.destination_description = fabric.keep(r.destination_description);
  }
  return build_ufm_graph(fabric, notes);
}

}  // namespace hypertopo::discoverers::ufm
