#include "discoverers/netq/netq_topology.h"

#include <charconv>
#include <map>
#include <nlohmann/json.hpp>

#include "io/json_reader.h"

namespace hypertopo::discoverers::netq {
namespace {

using nlohmann::json;

std::unexpected<Error> bad(const std::string& where, const std::string& what) {
  return std::unexpected(Error(ErrorCode::kParse, where + ": " + what));
}

// A string field; "" when absent or null, an error when of another type.
std::expected<std::string, Error> text_at(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::string();
  if (!it->is_string()) return bad(where + "." + key, "must be a string");
  return it->get<std::string>();
}

// The switch port number an interface name carries ("swp17s0" -> 17, "Ethernet4" -> 4); 0 when none.
int port_number(std::string_view name) {
  const auto digit = name.find_first_of("0123456789");
  if (digit == std::string_view::npos) return 0;
  int n = 0;
  auto [end, ec] = std::from_chars(name.data() + digit, name.data() + name.size(), n);
  (void)end;
  return ec == std::errc() ? n : 0;
}

struct NetqNode {
  std::string name;
  bool host = false;
};

}  // namespace

std::expected<void, Error> parse_netq_topology(std::string_view text, const std::string& where,
                                               NetqTopology& out) {
  auto doc = io::parse_json(text, where);
  if (!doc) return std::unexpected(doc.error());
  if (!doc->is_array())
    return bad(where, "expected a list of topology graphs (NetQ's fetch-topology answer)");
  if (doc->empty()) return bad(where, "the answer holds no topology graph");
  std::size_t node_count = 0;
  for (std::size_t g = 0; g < doc->size(); ++g) {
    const json& graph = (*doc)[g];
    const std::string at = where + ": [" + std::to_string(g) + "]";
    if (!graph.is_object()) return bad(at, "must be an object with nodes and links");
    std::map<std::string, NetqNode> nodes;  // NetQ node id -> what it is
    const json empty = json::array();
    const json& tiers = graph.contains("nodes") ? graph["nodes"] : empty;
    if (!tiers.is_array()) return bad(at + ".nodes", "must be a list");
    for (std::size_t t = 0; t < tiers.size(); ++t) {
      const std::string tat = at + ".nodes[" + std::to_string(t) + "]";
      if (!tiers[t].is_object()) return bad(tat, "must be an object");
      const json& members = tiers[t].contains("compounded_nodes") ? tiers[t]["compounded_nodes"] : empty;
      if (!members.is_array()) return bad(tat + ".compounded_nodes", "must be a list");
      for (std::size_t i = 0; i < members.size(); ++i) {
        const std::string nat = tat + ".compounded_nodes[" + std::to_string(i) + "]";
        const json& n = members[i];
        if (!n.is_object()) return bad(nat, "must be an object");
        if (++node_count > kMaxNetqNodes)
          return bad(where, "more than " + std::to_string(kMaxNetqNodes) + " nodes; refusing the answer");
        auto id = text_at(n, "id", nat);
        if (!id) return std::unexpected(id.error());
        auto name = text_at(n, "name", nat);
        if (!name) return std::unexpected(name.error());
        if (id->empty() || name->empty()) {
          out.warnings.push_back(nat + ": a node without id or name; skipped");
          continue;
        }
        auto tier_it = n.find("tier");
        if (tier_it == n.end() || !tier_it->is_number_integer())
          return bad(nat + ".tier", "must be an integer");
        const bool host = tier_it->get<std::int64_t>() == -1;
        if (auto [it, added] = nodes.emplace(*id, NetqNode{*name, host}); !added) {
          out.warnings.push_back(nat + ": node id " + *id + " listed twice; the first kept");
          continue;
        }
        if (host) {
          ++out.hosts;
        } else {
          out.graph.add_switch(*name, *name);
          ++out.switches;
        }
      }
    }
    const json& links = graph.contains("links") ? graph["links"] : empty;
    if (!links.is_array()) return bad(at + ".links", "must be a list");
    for (std::size_t l = 0; l < links.size(); ++l) {
      const std::string lat = at + ".links[" + std::to_string(l) + "]";
      if (!links[l].is_object()) return bad(lat, "must be an object");
      const json& cables = links[l].contains("compounded_links") ? links[l]["compounded_links"] : empty;
      if (!cables.is_array()) return bad(lat + ".compounded_links", "must be a list");
      for (std::size_t c = 0; c < cables.size(); ++c) {
        const std::string cat = lat + ".compounded_links[" + std::to_string(c) + "]";
        if (!cables[c].is_object()) return bad(cat, "must be an object");
        const json& ends = cables[c].contains("interfaces") ? cables[c]["interfaces"] : empty;
        if (!ends.is_array() || ends.size() != 2)
          return bad(cat + ".interfaces", "must list the cable's two ends");
        if (++out.cables > kMaxNetqCables)
          return bad(where, "more than " + std::to_string(kMaxNetqCables) + " cables; refusing the answer");
        topology::VertexId v[2] = {0, 0};
        int port[2] = {0, 0};
        bool usable = true;
        for (int e = 0; e < 2; ++e) {
          const std::string eat = cat + ".interfaces[" + std::to_string(e) + "]";
          if (!ends[e].is_object()) return bad(eat, "must be an object");
          auto node = text_at(ends[e], "node", eat);
          if (!node) return std::unexpected(node.error());
          auto iface = text_at(ends[e], "interface", eat);
          if (!iface) return std::unexpected(iface.error());
          auto it = nodes.find(*node);
          if (it == nodes.end()) {
            out.warnings.push_back(eat + ": node " + *node + " is in no tier of the graph; cable skipped");
            usable = false;
            break;
          }
          if (it->second.host) {
            const std::string ep =
                it->second.name + "/" + (iface->empty() ? "link" + std::to_string(l) : *iface);
            v[e] = out.graph.add_endpoint(ep, it->second.name + " " + *iface);
            out.graph.vertex(v[e]).host = it->second.name;
            out.graph.vertex(v[e]).device = *iface;
          } else {
            v[e] = out.graph.add_switch(it->second.name, it->second.name);
            port[e] = port_number(*iface);
          }
        }
        if (!usable) continue;
        out.graph.add_link(v[0], port[0], v[1], port[1]);
      }
    }
  }
  return {};
}

std::expected<std::vector<topology::NodeReport>, Error> parse_nmx_compute_nodes(
    std::string_view text, const std::string& where, std::vector<std::string>& warnings) {
  auto doc = io::parse_json(text, where);
  if (!doc) return std::unexpected(doc.error());
  if (!doc->is_array()) return bad(where, "expected a list of compute nodes (NMX's compute-nodes answer)");
  if (doc->size() > kMaxNetqNodes)
    return bad(where, "more than " + std::to_string(kMaxNetqNodes) + " compute nodes; refusing the answer");
  std::map<std::string, std::string> domain_of;
  std::map<std::string, std::vector<std::string>> conflicts;
  for (std::size_t i = 0; i < doc->size(); ++i) {
    const json& n = (*doc)[i];
    const std::string at = where + ": [" + std::to_string(i) + "]";
    if (!n.is_object()) return bad(at, "must be an object");
    auto name = text_at(n, "Name", at);
    if (!name) return std::unexpected(name.error());
    auto domain = text_at(n, "DomainUUID", at);
    if (!domain) return std::unexpected(domain.error());
    if (name->empty()) {
      warnings.push_back(at + ": a compute node without Name; skipped");
      continue;
    }
    if (domain->empty()) continue;  // in no NVLink domain
    auto [it, added] = domain_of.emplace(*name, *domain);
    if (!added && it->second != *domain) conflicts[*name].push_back(*domain);
  }
  std::vector<topology::NodeReport> out;
  for (const auto& [name, domain] : domain_of) {
    topology::NodeReport r;
    r.node_name = name;
    topology::NvlinkFacts facts;
    facts.source = "nmx";
    if (auto c = conflicts.find(name); c != conflicts.end()) {
      facts.conflicts.push_back("NMX lists it in NVLink domain " + domain);
      for (const auto& d : c->second) facts.conflicts.push_back("NMX lists it in NVLink domain " + d);
    } else {
      facts.clique_id = domain;
    }
    r.nvlink = std::move(facts);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace hypertopo::discoverers::netq
