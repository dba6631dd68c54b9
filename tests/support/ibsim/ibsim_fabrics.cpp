#include "tests/support/ibsim/ibsim_fabrics.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "topology/guid_text.h"

namespace hypertopo::testing {
namespace {

using topology::guid_text;
using topology::VertexId;

std::string numbered(const std::string& stem, int n, int width = 2) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%0*d", width, n);
  return stem + buf;
}

// Builds a fabric the way it is cabled: ports are taken in order on each device.
class Cabling {
 public:
  explicit Cabling(GeneratedFabric& fabric) : f_(fabric) {}

  VertexId add_switch(const std::string& name) {
    auto v =
        f_.graph.add_switch(guid_text(0x2c5eab0300000000ull + (++switches_)), "MF0;" + name + ":MQM9700/U1");
    ++f_.switches;
    return v;
  }
  // A single-port HCA; its port GUID is odd so that ibsim's node GUID (port GUID - 1) stays unique.
  VertexId add_hca(const std::string& host, const std::string& device) {
    auto v = f_.graph.add_endpoint(guid_text(0xe09d730300000000ull + 2 * (++cas_) + 1), host + " " + device);
    ++f_.endpoints;
    return v;
  }
  void link(VertexId a, VertexId b) {
    f_.graph.add_link(a, ++next_port_[a], b, ++next_port_[b], "4xNDR");
    ++f_.links;
  }

 private:
  GeneratedFabric& f_;
  std::uint64_t switches_ = 0;
  std::uint64_t cas_ = 0;
  std::map<VertexId, int> next_port_;
};

void normalise(std::vector<std::vector<ExpectedDomain>>& tiers) {
  for (auto& tier : tiers) {
    for (auto& domain : tier) std::sort(domain.begin(), domain.end());
    std::sort(tier.begin(), tier.end());
  }
}

ExpectedDomain all_hosts(const std::vector<ExpectedDomain>& domains) {
  ExpectedDomain all;
  for (const auto& d : domains) all.insert(all.end(), d.begin(), d.end());
  return all;
}

}  // namespace

GeneratedFabric two_level_fat_tree(const FatTreeSpec& spec) {
  GeneratedFabric f;
  f.name = "two-level-fat-tree";
  Cabling c(f);
  std::vector<VertexId> spines;
  for (int s = 1; s <= spec.spines; ++s) spines.push_back(c.add_switch(numbered("FT2-SPINE-", s)));
  std::vector<ExpectedDomain> leaves;
  for (int l = 1; l <= spec.leaves; ++l) {
    VertexId leaf = c.add_switch(numbered("FT2-LEAF-", l));
    ExpectedDomain hosts;
    for (int h = 1; h <= spec.hosts_per_leaf; ++h) {
      std::string host = numbered("ft2-l" + numbered("", l) + "-h", h);
      c.link(leaf, c.add_hca(host, "mlx5_0"));
      hosts.push_back(host);
    }
    for (VertexId s : spines) c.link(leaf, s);
    leaves.push_back(hosts);
  }
  f.tiers = {leaves, {all_hosts(leaves)}};
  normalise(f.tiers);
  return f;
}

GeneratedFabric three_level_fat_tree(const PodFatTreeSpec& spec) {
  GeneratedFabric f;
  f.name = "three-level-fat-tree";
  Cabling c(f);
  std::vector<VertexId> cores;
  for (int k = 1; k <= spec.cores; ++k) cores.push_back(c.add_switch(numbered("FT3-CORE-", k)));
  std::vector<ExpectedDomain> leaf_domains;
  std::vector<ExpectedDomain> pod_domains;
  for (int p = 1; p <= spec.pods; ++p) {
    std::vector<VertexId> spines;
    for (int s = 1; s <= spec.spines_per_pod; ++s) {
      spines.push_back(c.add_switch("FT3-P" + numbered("", p) + "-SPINE-" + numbered("", s)));
      for (VertexId core : cores) c.link(spines.back(), core);
    }
    ExpectedDomain pod;
    for (int l = 1; l <= spec.leaves_per_pod; ++l) {
      VertexId leaf = c.add_switch("FT3-P" + numbered("", p) + "-LEAF-" + numbered("", l));
      ExpectedDomain hosts;
      for (int h = 1; h <= spec.hosts_per_leaf; ++h) {
        std::string host = "ft3-p" + numbered("", p) + "-l" + numbered("", l) + "-h" + numbered("", h);
        c.link(leaf, c.add_hca(host, "mlx5_0"));
        hosts.push_back(host);
      }
      for (VertexId s : spines) c.link(leaf, s);
      pod.insert(pod.end(), hosts.begin(), hosts.end());
      leaf_domains.push_back(hosts);
    }
    pod_domains.push_back(pod);
  }
  f.tiers = {leaf_domains, pod_domains, {all_hosts(pod_domains)}};
  normalise(f.tiers);
  return f;
}

GeneratedFabric rail_optimised_superpod(const SuperPodSpec& spec) {
  GeneratedFabric f;
  f.name = "rail-optimised-superpod";
  Cabling c(f);
  std::vector<VertexId> spines;
  for (int s = 1; s <= spec.spines; ++s) spines.push_back(c.add_switch(numbered("SPOD-SPINE-", s)));
  std::vector<ExpectedDomain> units;
  for (int su = 1; su <= spec.scalable_units; ++su) {
    std::vector<VertexId> rail_leaves;
    for (int r = 0; r < spec.rails; ++r) {
      rail_leaves.push_back(
          c.add_switch("SPOD-SU" + numbered("", su) + "-RAIL" + std::to_string(r) + "-LEAF"));
    }
    ExpectedDomain hosts;
    for (int h = 1; h <= spec.hosts_per_su; ++h) {
      std::string host = "dgx-su" + numbered("", su) + "-" + numbered("", h, 3);
      for (int r = 0; r < spec.rails; ++r)
        c.link(rail_leaves[r], c.add_hca(host, "mlx5_" + std::to_string(r)));
      hosts.push_back(host);
    }
    for (int r = 0; r < spec.rails; ++r) {
      for (int u = 0; u < spec.uplinks_per_leaf; ++u) {
        c.link(rail_leaves[r], spines[static_cast<std::size_t>((u + r) % spec.spines)]);
      }
    }
    units.push_back(hosts);
  }
  f.tiers = {units, {all_hosts(units)}};
  normalise(f.tiers);
  return f;
}

GeneratedFabric storage_leaf_fabric(const StorageFabricSpec& spec) {
  GeneratedFabric f;
  f.name = "storage-leaf-fabric";
  Cabling c(f);
  std::vector<VertexId> spines;
  for (int s = 1; s <= spec.compute.spines; ++s) spines.push_back(c.add_switch(numbered("STF-SPINE-", s)));
  VertexId storage_leaf = c.add_switch("STF-STORAGE-LEAF-01");
  for (VertexId s : spines) c.link(storage_leaf, s);
  std::vector<ExpectedDomain> leaves;
  for (int l = 1; l <= spec.compute.leaves; ++l) {
    VertexId leaf = c.add_switch(numbered("STF-LEAF-", l));
    ExpectedDomain hosts;
    for (int h = 1; h <= spec.compute.hosts_per_leaf; ++h) {
      std::string host = "stf-l" + numbered("", l) + "-h" + numbered("", h);
      c.link(leaf, c.add_hca(host, "mlx5_0"));
      c.link(storage_leaf, c.add_hca(host, "mlx5_8"));
      hosts.push_back(host);
    }
    for (VertexId s : spines) c.link(leaf, s);
    leaves.push_back(hosts);
  }
  for (int s = 1; s <= spec.storage_servers; ++s) {
    std::string server = numbered("stor-", s);
    c.link(storage_leaf, c.add_hca(server, "mlx5_0"));
    f.storage_hosts.push_back(server);
  }
  f.builder.excluded_device_patterns = {"mlx5_8"};
  f.builder.excluded_switch_patterns = {"STORAGE"};
  f.tiers = {leaves, {all_hosts(leaves)}};
  normalise(f.tiers);
  return f;
}

std::vector<std::vector<ExpectedDomain>> tier_structure(const topology::Tree& tree) {
  std::vector<std::vector<ExpectedDomain>> tiers(static_cast<std::size_t>(std::max(0, tree.max_tier())));
  for (topology::DomainId id = 0; id < tree.size(); ++id) {
    tiers[static_cast<std::size_t>(tree.domain(id).tier - 1)].push_back(tree.nodes_under(id));
  }
  normalise(tiers);
  return tiers;
}

std::vector<std::string> canonical_links(const topology::FabricGraph& graph) {
  std::vector<std::string> out;
  for (const auto& l : graph.links()) {
    std::string a = graph.vertex(l.a).id + "[" + std::to_string(l.port_a) + "]";
    std::string b = graph.vertex(l.b).id + "[" + std::to_string(l.port_b) + "]";
    out.push_back(a < b ? a + "-" + b : b + "-" + a);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string health_fabric_netfile(const HealthFabricSpec& spec) {
  auto has = [](const std::vector<std::pair<int, int>>& list, int a, int b) {
    return std::find(list.begin(), list.end(), std::pair{a, b}) != list.end();
  };
  auto leaf = [](int l) { return "leaf-" + std::to_string(l); };
  auto spine = [](int s) { return "spine-" + std::to_string(s); };
  auto host = [](int l, int h) { return "node-" + std::to_string(l) + std::to_string(h); };
  auto uplink_width = [&](int l, int s) { return has(spec.narrow_uplinks, l, s) ? " w=1" : ""; };
  auto host_width = [&](int l, int h) { return has(spec.narrow_host_links, l, h) ? " w=1" : ""; };
  auto cabled = [&](int l, int s) { return !has(spec.pulled_uplinks, l, s); };
  std::string text;
  for (int l = 1; l <= spec.leaves; ++l) {
    text += "Switch 8 \"S-" + leaf(l) + "\" # \"MF0;" + leaf(l) + ":MQM8700/U1\"\n";
    for (int h = 1; h <= spec.hosts_per_leaf; ++h)
      text += "[" + std::to_string(h) + "] \"H-" + host(l, h) + "\"[1]" + host_width(l, h) + "\n";
    for (int s = 1; s <= spec.spines; ++s) {
      if (!cabled(l, s)) continue;
      text += "[" + std::to_string(spec.hosts_per_leaf + s) + "] \"S-" + spine(s) + "\"[" +
              std::to_string(l) + "]" + uplink_width(l, s) + "\n";
    }
    text += "\n";
  }
  for (int s = 1; s <= spec.spines; ++s) {
    text += "Switch 8 \"S-" + spine(s) + "\" # \"MF0;" + spine(s) + ":MQM8700/U1\"\n";
    for (int l = 1; l <= spec.leaves; ++l) {
      if (!cabled(l, s)) continue;
      text += "[" + std::to_string(l) + "] \"S-" + leaf(l) + "\"[" + std::to_string(spec.hosts_per_leaf + s) +
              "]" + uplink_width(l, s) + "\n";
    }
    text += "\n";
  }
  for (int l = 1; l <= spec.leaves; ++l) {
    for (int h = 1; h <= spec.hosts_per_leaf; ++h) {
      text += "Hca 1 \"H-" + host(l, h) + "\" # \"" + host(l, h) + " mlx5_0\"\n";
      text += "[1] \"S-" + leaf(l) + "\"[" + std::to_string(h) + "]" + host_width(l, h) + "\n\n";
    }
  }
  return text;
}

}  // namespace hypertopo::testing
