#include "discoverers/ib-fabric/fabric_walk.h"

#include <infiniband/ibnetdisc.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace hypertopo::discoverers::ib_fabric {
namespace {

// PortInfo CapabilityMask bit 14: IsExtendedSpeedsSupported (LinkSpeedExtActive is valid).
constexpr std::uint32_t kCapabilityExtendedSpeeds = 1u << 14;

struct FabricDeleter {
  void operator()(ibnd_fabric_t* fabric) const { ibnd_destroy_fabric(fabric); }
};
using FabricPtr = std::unique_ptr<ibnd_fabric_t, FabricDeleter>;

std::string guid_text(std::uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

// Node descriptions are 64 raw bytes from the fabric: stop at NUL, blank out control bytes, trim.
std::string clean_description(const char* raw, std::size_t size) {
  std::string out;
  for (std::size_t i = 0; i < size && raw[i] != '\0'; ++i) {
    auto c = static_cast<unsigned char>(raw[i]);
    out.push_back(std::iscntrl(c) ? ' ' : static_cast<char>(c));
  }
  auto last = out.find_last_not_of(' ');
  out.erase(last == std::string::npos ? 0 : last + 1);
  auto first = out.find_first_not_of(' ');
  out.erase(0, first == std::string::npos ? out.size() : first);
  return out;
}

std::string node_description(const ibnd_node_t* node) {
  return clean_description(node->nodedesc, sizeof node->nodedesc);
}

std::uint64_t system_guid(ibnd_node_t* node) { return mad_get_field64(node->info, 0, IB_NODE_SYSTEM_GUID_F); }

bool has_extended_speeds(ibnd_port_t* port) {
  // A switch reports its CapabilityMask on port 0 only.
  std::uint8_t* cap_info = port->info;
  ibnd_node_t* node = port->node;
  if (node != nullptr && node->type == IB_NODE_SWITCH && node->ports != nullptr &&
      node->ports[0] != nullptr) {
    cap_info = node->ports[0]->info;
  }
  return (mad_get_field(cap_info, 0, IB_PORT_CAPMASK_F) & kCapabilityExtendedSpeeds) != 0;
}

std::string port_rate(ibnd_port_t* port) {
  auto* info = port->info;
  unsigned width = mad_get_field(info, 0, IB_PORT_LINK_WIDTH_ACTIVE_F);
  unsigned speed = mad_get_field(info, 0, IB_PORT_LINK_SPEED_ACTIVE_F);
  unsigned ext = has_extended_speeds(port) ? mad_get_field(info, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F) : 0;
  return rate_text(width, speed, ext);
}

// The port's own PortInfo (libibnetdisc keeps the raw attribute of every port it reached), in
// PortFacts units: what the health pass compares against the other end and the siblings.
topology::PortFacts port_facts(ibnd_port_t* port) {
  auto* info = port->info;
  const bool ext = has_extended_speeds(port);
  auto field = [&](enum MAD_FIELDS f) { return mad_get_field(info, 0, f); };
  topology::PortFacts facts;
  facts.width_active = static_cast<std::uint8_t>(width_lanes(field(IB_PORT_LINK_WIDTH_ACTIVE_F)));
  facts.width_enabled = static_cast<std::uint8_t>(width_lanes(field(IB_PORT_LINK_WIDTH_ENABLED_F)));
  facts.width_supported = static_cast<std::uint8_t>(width_lanes(field(IB_PORT_LINK_WIDTH_SUPPORTED_F)));
  facts.speed_active =
      lane_speed_mbps(field(IB_PORT_LINK_SPEED_ACTIVE_F), ext ? field(IB_PORT_LINK_SPEED_EXT_ACTIVE_F) : 0);
  facts.speed_enabled =
      lane_speed_mbps(field(IB_PORT_LINK_SPEED_ENABLED_F), ext ? field(IB_PORT_LINK_SPEED_EXT_ENABLED_F) : 0);
  facts.speed_supported = lane_speed_mbps(field(IB_PORT_LINK_SPEED_SUPPORTED_F),
                                          ext ? field(IB_PORT_LINK_SPEED_EXT_SUPPORTED_F) : 0);
  unsigned state = field(IB_PORT_STATE_F);
  unsigned phys = field(IB_PORT_PHYS_STATE_F);
  facts.state = static_cast<std::uint8_t>(state <= 4 ? state : 0);
  facts.phys_state = static_cast<std::uint8_t>(phys <= 7 ? phys : 0);
  return facts;
}

// Deterministic conversion: vertices and links come out in GUID order whatever order the walk (or
// the cache) listed the nodes in, so a live walk and its replay give identical graphs.
topology::FabricGraph to_fabric_graph(ibnd_fabric_t* fabric) {
  std::vector<ibnd_node_t*> switches;
  std::vector<ibnd_node_t*> cas;
  for (ibnd_node_t* node = fabric->nodes; node != nullptr; node = node->next) {
    (node->type == IB_NODE_SWITCH ? switches : cas).push_back(node);
  }
  auto by_guid = [](const ibnd_node_t* a, const ibnd_node_t* b) { return a->guid < b->guid; };
  std::sort(switches.begin(), switches.end(), by_guid);
  std::sort(cas.begin(), cas.end(), by_guid);

  struct CaPort {
    std::uint64_t guid;
    ibnd_port_t* port;
  };
  std::vector<CaPort> ca_ports;
  for (ibnd_node_t* node : cas) {
    if (node->ports == nullptr) continue;
    for (int p = 1; p <= node->numports; ++p) {
      if (ibnd_port_t* port = node->ports[p]) ca_ports.push_back({port->guid, port});
    }
  }
  std::sort(ca_ports.begin(), ca_ports.end(), [](const CaPort& a, const CaPort& b) {
    return std::tie(a.guid, a.port->portnum) < std::tie(b.guid, b.port->portnum);
  });

  topology::FabricGraph graph;
  graph.reserve(switches.size() + ca_ports.size(), switches.size() * 16 + ca_ports.size());
  // Link ends are looked up by libibnetdisc's own node/port objects, not by GUID text.
  std::unordered_map<const ibnd_node_t*, topology::VertexId> switch_vertex;
  std::unordered_map<const ibnd_port_t*, topology::VertexId> port_vertex;
  switch_vertex.reserve(switches.size());
  port_vertex.reserve(ca_ports.size());
  for (ibnd_node_t* node : switches) {
    auto v = graph.add_switch(guid_text(node->guid), node_description(node));
    graph.vertex(v).system_guid = guid_text(system_guid(node));
    switch_vertex.emplace(node, v);
  }
  for (const CaPort& cp : ca_ports) {
    ibnd_node_t* node = cp.port->node;
    std::string description = node_description(node);
    auto v = graph.add_endpoint(guid_text(cp.guid), description);
    port_vertex.emplace(cp.port, v);
    auto& vertex = graph.vertex(v);
    vertex.system_guid = guid_text(system_guid(node));
    vertex.node_guid = guid_text(node->guid);
    vertex.port = cp.port->portnum;
    vertex.aggregation_node = is_aggregation_node_description(description);
  }

  auto vertex_of = [&](ibnd_port_t* port) -> std::optional<topology::VertexId> {
    if (port == nullptr || port->node == nullptr) return std::nullopt;
    if (port->node->type == IB_NODE_SWITCH) {
      auto it = switch_vertex.find(port->node);
      if (it != switch_vertex.end()) return it->second;
    } else {
      auto it = port_vertex.find(port);
      if (it != port_vertex.end()) return it->second;
    }
    return std::nullopt;
  };

  struct PendingLink {
    topology::VertexId a, b;
    int port_a, port_b;
    std::string rate;
    topology::PortFacts end_a, end_b;
  };
  std::vector<PendingLink> links;
  auto collect = [&](ibnd_port_t* port) {
    ibnd_port_t* remote = port->remoteport;
    if (remote == nullptr) return;
    // Each cable is seen from both ends; keep the end with the smaller (vertex, port).
    auto a = vertex_of(port);
    auto b = vertex_of(remote);
    if (!a || !b) return;
    if (std::tie(*b, remote->portnum) < std::tie(*a, port->portnum)) return;
    links.push_back(
        {*a, *b, port->portnum, remote->portnum, port_rate(port), port_facts(port), port_facts(remote)});
  };
  for (ibnd_node_t* node : switches) {
    if (node->ports == nullptr) continue;
    for (int p = 1; p <= node->numports; ++p) {
      if (node->ports[p] != nullptr) collect(node->ports[p]);
    }
  }
  for (const CaPort& cp : ca_ports) collect(cp.port);
  std::sort(links.begin(), links.end(), [](const PendingLink& x, const PendingLink& y) {
    return std::tie(x.a, x.port_a, x.b, x.port_b) < std::tie(y.a, y.port_a, y.b, y.port_b);
  });
  for (const auto& l : links) graph.add_link(l.a, l.port_a, l.b, l.port_b, l.rate, l.end_a, l.end_b);
  return graph;
}

std::string walk_origin(const WalkOptions& options) {
  std::string where = options.ca_name.empty() ? "the default CA" : "CA " + options.ca_name;
  if (options.ca_port > 0) where += " port " + std::to_string(options.ca_port);
  return where;
}

std::expected<FabricPtr, Error> discover(const WalkOptions& options) {
  ibnd_config_t config{};
  config.timeout_ms = options.timeout_ms;
  config.retries = options.retries;
  config.max_hops = options.max_hops;
  config.max_smps = options.max_smps;
  std::vector<char> ca(options.ca_name.begin(), options.ca_name.end());
  ca.push_back('\0');
  errno = 0;
  FabricPtr fabric(
      ibnd_discover_fabric(options.ca_name.empty() ? nullptr : ca.data(), options.ca_port, nullptr, &config));
  if (!fabric) {
    std::string why = errno != 0 ? std::strerror(errno) : "libibnetdisc found no fabric";
    return fail(ErrorCode::kUnavailable,
                "ibnd_discover_fabric from " + walk_origin(options) + " failed: " + why +
                    " (is there an InfiniBand port, and may this user open its umad device?)");
  }
  return fabric;
}

std::expected<void, Error> write_cache(ibnd_fabric_t* fabric, const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);  // ibnd_cache_fabric refuses to overwrite in some versions
  if (ibnd_cache_fabric(fabric, path.c_str(), IBND_CACHE_FABRIC_FLAG_DEFAULT) != 0) {
    return fail(ErrorCode::kUnavailable, "ibnd_cache_fabric could not write " + path.string());
  }
  return {};
}

}  // namespace

std::string rate_text(unsigned width_active, unsigned speed_active, unsigned ext_speed_active) {
  const char* width = nullptr;
  switch (width_active) {
    case 1:
      width = "1x";
      break;
    case 2:
      width = "4x";
      break;
    case 4:
      width = "8x";
      break;
    case 8:
      width = "12x";
      break;
    case 16:
      width = "2x";
      break;
    default:
      return "";
  }
  const char* speed = nullptr;
  switch (ext_speed_active) {
    case 1:
      speed = "FDR";
      break;
    case 2:
      speed = "EDR";
      break;
    case 4:
      speed = "HDR";
      break;
    case 8:
      speed = "NDR";
      break;
    default:
      switch (speed_active) {
        case 1:
          speed = "SDR";
          break;
        case 2:
          speed = "DDR";
          break;
        case 4:
          speed = "QDR";
          break;
        default:
          return "";
      }
  }
  return std::string(width) + speed;
}

unsigned width_lanes(unsigned width_mask) {
  // Widest first; 0xff in LinkWidthEnabled means "set to supported" and is only sent, not read.
  if (width_mask & 8) return 12;
  if (width_mask & 4) return 8;
  if (width_mask & 2) return 4;
  if (width_mask & 16) return 2;
  if (width_mask & 1) return 1;
  return 0;
}

unsigned lane_speed_mbps(unsigned speed_mask, unsigned ext_speed_mask) {
  // LinkSpeedExt values 30 and 31 are "disable" / "set to supported" requests, not speeds.
  if (ext_speed_mask < 30) {
    if (ext_speed_mask & 16) return 212500;
    if (ext_speed_mask & 8) return 106250;
    if (ext_speed_mask & 4) return 53125;
    if (ext_speed_mask & 2) return 25781;
    if (ext_speed_mask & 1) return 14062;
  }
  if (speed_mask & 4) return 10000;
  if (speed_mask & 2) return 5000;
  if (speed_mask & 1) return 2500;
  return 0;
}

bool is_aggregation_node_description(std::string_view description) {
  return description.find("Aggregation Node") != std::string_view::npos;
}

std::expected<topology::FabricGraph, Error> walk_fabric(const WalkOptions& options) {
  auto fabric = discover(options);
  if (!fabric) return std::unexpected(fabric.error());
  if (options.cache_path) {
    if (auto ok = write_cache(fabric->get(), *options.cache_path); !ok && options.notes != nullptr) {
      options.notes->push_back("the walk was not recorded: " + ok.error().message());
    }
  }
  return to_fabric_graph(fabric->get());
}

std::expected<void, Error> record_fabric_cache(const WalkOptions& options) {
  if (!options.cache_path) return fail(ErrorCode::kInvalidArgument, "record_fabric_cache needs a cache path");
  auto fabric = discover(options);
  if (!fabric) return std::unexpected(fabric.error());
  return write_cache(fabric->get(), *options.cache_path);
}

std::expected<topology::FabricGraph, Error> load_fabric_cache(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return fail(ErrorCode::kNotFound, "ibnd cache " + path.string() + " does not exist or is not a file");
  }
  FabricPtr fabric(ibnd_load_fabric(path.c_str(), 0));
  if (!fabric) {
    return fail(ErrorCode::kParse, "ibnd_load_fabric could not read " + path.string() +
                                       " (not an ibnetdiscover cache, or truncated)");
  }
  return to_fabric_graph(fabric.get());
}

}  // namespace hypertopo::discoverers::ib_fabric
