#include "topology/tree_builder.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <numeric>
#include <unordered_set>

#include "topology/fabric_health.h"

namespace hypertopo::topology {
namespace {

constexpr int kNoLevel = 0;

class UnionFind {
 public:
  explicit UnionFind(std::size_t n) : parent_(n), rank_(n, 0) {
    std::iota(parent_.begin(), parent_.end(), 0u);
  }
  std::uint32_t find(std::uint32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  bool unite(std::uint32_t a, std::uint32_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return false;
    if (rank_[a] < rank_[b]) std::swap(a, b);
    parent_[b] = a;
    if (rank_[a] == rank_[b]) ++rank_[a];
    return true;
  }

 private:
  std::vector<std::uint32_t> parent_;
  std::vector<std::uint8_t> rank_;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits on runs of whitespace.
std::vector<std::string_view> tokens(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool valid_host_token(std::string_view h) {
  if (h.empty() || !std::isalnum(static_cast<unsigned char>(h.front()))) return false;
  return std::all_of(h.begin(), h.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

bool generic_host_name(std::string_view h) {
  static const std::unordered_set<std::string_view> kGeneric = {
      "localhost", "localhost.localdomain", "ubuntu", "debian", "rhel", "centos", "rocky", "dgx", "(none)"};
  std::string lower(h);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return kGeneric.contains(lower);
}

// "a, b, c and 4 more" of a sorted list.
std::string bounded_list(const std::vector<std::string>& items, std::size_t shown) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < shown; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > shown) out += " and " + std::to_string(items.size() - shown) + " more";
  return out;
}

constexpr std::size_t kSetAsideNamesShown = 10;

std::string level_name(const TreeBuilderOptions& o, int level) {
  if (level >= 1 && static_cast<std::size_t>(level) <= o.level_names.size()) return o.level_names[level - 1];
  return "tier-" + std::to_string(level);
}

}  // namespace

std::expected<std::vector<text::UserPattern>, Error> compile_patterns(
    const std::vector<std::string>& patterns, const std::string& what) {
  auto out = text::compile_patterns(patterns, what, {.case_insensitive = true});
  if (!out) return fail(ErrorCode::kInvalidArgument, out.error());
  return std::move(*out);
}

std::string switch_display_name(const Vertex& sw) {
  std::string_view d = trim(sw.description);
  // Mellanox/NVIDIA managed switches: "MF0;<system name>:<model>/<unit>".
  if (auto semi = d.find(';'); semi != std::string_view::npos && d.substr(0, semi).starts_with("MF")) {
    d = d.substr(semi + 1);
    if (auto colon = d.find(':'); colon != std::string_view::npos) d = d.substr(0, colon);
  }
  std::string name = sanitize_name(d);
  const bool firmware_default = d.find("Mellanox Technologies") != std::string_view::npos ||
                                d.find("NVIDIA Technologies") != std::string_view::npos ||
                                d.starts_with("Quantum") || d.starts_with("SwitchIB") ||
                                d.starts_with("SwitchX") || d.starts_with("MT");
  if (name.empty() || firmware_default || name.size() > 200) return sanitize_name(sw.id);
  return name;
}

std::expected<TreeBuilder, Error> TreeBuilder::create(TreeBuilderOptions options) {
  TreeBuilder b;
  const TreeBuilderOptions defaults;
  b.default_host_pattern_ = options.host_description_pattern == defaults.host_description_pattern;
  b.default_firmware_patterns_ =
      options.firmware_description_patterns == defaults.firmware_description_patterns;
  auto host = text::UserPattern::compile(options.host_description_pattern);
  if (!host) {
    return fail(ErrorCode::kInvalidArgument,
                "host description pattern '" + options.host_description_pattern + "': " + host.error());
  }
  b.host_pattern_ = std::move(*host);
  if (b.host_pattern_->group_count() < 1) {
    return fail(ErrorCode::kInvalidArgument, "host description pattern '" + options.host_description_pattern +
                                                 "' needs one capture group for the host name");
  }
  auto dev = compile_patterns(options.excluded_device_patterns, "excluded device patterns");
  if (!dev) return std::unexpected(dev.error());
  auto sw = compile_patterns(options.excluded_switch_patterns, "excluded switch patterns");
  if (!sw) return std::unexpected(sw.error());
  auto fw = compile_patterns(options.firmware_description_patterns, "firmware description patterns");
  if (!fw) return std::unexpected(fw.error());
  auto appliance = compile_patterns(options.appliance_patterns, "appliance patterns");
  if (!appliance) return std::unexpected(appliance.error());
  auto keep = compile_patterns(options.keep_host_patterns, "kept host patterns");
  if (!keep) return std::unexpected(keep.error());
  b.appliance_patterns_ = std::move(*appliance);
  b.keep_patterns_ = std::move(*keep);
  b.device_patterns_ = std::move(*dev);
  b.switch_patterns_ = std::move(*sw);
  b.firmware_patterns_ = std::move(*fw);
  b.options_ = std::move(options);
  return b;
}

bool TreeBuilder::is_firmware_description(std::string_view d) const {
  d = trim(d);
  if (default_firmware_patterns_) {
    // The default patterns, without a regex engine on the hot path.
    if (d.size() > 2 && d[0] == 'M' && d[1] == 'T' && std::isdigit(static_cast<unsigned char>(d[2])))
      return true;
    if (d.starts_with("ConnectX")) return true;
    if (d.find("Mellanox Technologies") != std::string_view::npos) return true;
    auto nv = d.find("NVIDIA");
    return nv != std::string_view::npos && d.find("Technologies", nv) != std::string_view::npos;
  }
  return std::any_of(firmware_patterns_.begin(), firmware_patterns_.end(),
                     [&](const text::UserPattern& r) { return r.matches_whole(d); });
}

std::optional<std::string> TreeBuilder::host_from_description(std::string_view description) const {
  if (trim(description).empty() || is_firmware_description(description)) return std::nullopt;
  if (default_host_pattern_) {
    auto t = tokens(description);
    if (t.size() != 2 || !valid_host_token(t[0])) return std::nullopt;
    return std::string(t[0]);
  }
  auto m = host_pattern_->search(description);
  if (!m || (*m)[1].empty()) return std::nullopt;
  return (*m)[1];
}

std::expected<Tree, Error> TreeBuilder::build(const FabricGraph& graph) const {
  Tree tree;
  tree.source = options_.source;
  BuildReport& report = tree.report;
  const std::size_t n = graph.vertex_count();
  const auto& vs = graph.vertices();

  // 1. Switches cut out by pattern (storage / management fabrics).
  std::vector<char> usable_switch(n, 0);
  std::vector<std::string> display(n);
  std::unordered_map<std::string, int> display_count;
  for (VertexId v = 0; v < n; ++v) {
    if (vs[v].kind != VertexKind::kSwitch) continue;
    display[v] = switch_display_name(vs[v]);
    bool excluded = false;
    for (const auto& r : switch_patterns_) {
      if (r.matches_part(display[v]) || r.matches_part(vs[v].description)) {
        excluded = true;
        break;
      }
    }
    if (excluded) {
      report.excluded_switches.push_back(display[v]);
      continue;
    }
    usable_switch[v] = 1;
    ++display_count[display[v]];
  }
  // Two switches with the same description are told apart by GUID.
  for (VertexId v = 0; v < n; ++v) {
    if (usable_switch[v] && display_count[display[v]] > 1) display[v] = sanitize_name(vs[v].id);
  }

  // 2. Endpoints: who owns each one, or why it is left out.
  std::unordered_map<std::string, std::vector<std::string>> short_names;  // "dgx-1" -> {"dgx-1.x.y"}
  if (options_.known_nodes) {
    for (const auto& node : *options_.known_nodes) {
      auto dot = node.find('.');
      if (dot != std::string::npos) short_names[node.substr(0, dot)].push_back(node);
    }
  }
  std::unordered_map<std::string, std::uint32_t> host_index;
  std::vector<std::string> host_names;
  std::vector<std::int64_t> endpoint_host(n, -1);
  std::set<std::string> excluded_hosts;
  std::map<std::string, std::set<std::string>> generic_hosts;  // name -> GUIDs
  // Hosts named by a description (not a GUID map): "<host> <device>" -> HCA (node GUID) -> its
  // switches. One device name on two HCAs means two machines that share a host name.
  struct Named {
    VertexId endpoint;
    std::string host;
  };
  std::vector<Named> named;
  // Without a Node list: each host's reason to be set aside ("" for a compute node), decided once.
  std::map<std::string, std::string> host_verdict;
  std::unordered_set<std::string> switch_names;
  if (!options_.known_nodes) {
    for (VertexId v = 0; v < n; ++v) {
      if (vs[v].kind == VertexKind::kSwitch) switch_names.insert(display[v]);
    }
  }
  auto keep_host = [&](const std::string& host) {
    return std::any_of(keep_patterns_.begin(), keep_patterns_.end(),
                       [&](const text::UserPattern& r) { return r.matches_whole(host); });
  };
  auto appliance = [&](std::string_view text) {
    return std::any_of(appliance_patterns_.begin(), appliance_patterns_.end(),
                       [&](const text::UserPattern& r) { return r.matches_part(text); });
  };
  // Each "<host> <device>" and the first HCA (node GUID) seen with it; the endpoints that carry one,
  // so the descriptions that more than one HCA gives are gathered whole only when there are any.
  struct Description {
    std::string_view first_guid;
    bool shared = false;  // a second HCA gives it too
  };
  std::unordered_map<std::string, Description> descriptions;
  std::vector<std::pair<VertexId, const std::pair<const std::string, Description>*>> described;
  for (VertexId v = 0; v < n; ++v) {
    const Vertex& e = vs[v];
    if (e.kind != VertexKind::kEndpoint) continue;
    if (e.aggregation_node || e.description.find("Aggregation Node") != std::string::npos) {
      ++report.aggregation_nodes;
      continue;
    }
    std::string device = e.device;
    if (device.empty()) {
      auto t = tokens(e.description);
      if (t.size() == 2) device = std::string(t[1]);
    }
    if (!device.empty() && std::any_of(device_patterns_.begin(), device_patterns_.end(),
                                       [&](const text::UserPattern& r) { return r.matches_whole(device); })) {
      report.excluded_endpoints.push_back(e.id);
      continue;
    }
    // An endpoint cabled only to cut-out switches belongs to that (storage / management) fabric.
    auto nbrs = graph.neighbors(v);
    if (!nbrs.empty() && std::none_of(nbrs.begin(), nbrs.end(), [&](VertexId s) {
          return usable_switch[s] || vs[s].kind == VertexKind::kEndpoint;
        })) {
      report.excluded_endpoints.push_back(e.id);
      continue;
    }
    std::optional<std::string> host;
    bool by_identity = false;
    auto mapped = options_.node_by_endpoint.find(e.id);
    if (mapped == options_.node_by_endpoint.end() && !e.node_guid.empty()) {
      mapped = options_.node_by_endpoint.find(e.node_guid);
    }
    if (mapped != options_.node_by_endpoint.end()) {
      host = mapped->second;
      by_identity = true;
    } else if (!e.host.empty()) {
      host = e.host;
    } else {
      host = host_from_description(e.description);
    }
    if (host && !by_identity) {
      // Host names are case-insensitive; Kubernetes node names are lower-case DNS-1123 names.
      for (auto& c : *host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (host && !is_dns1123_subdomain(*host)) {
      report.warnings.push_back("endpoint " + e.id + ": '" + *host + "' is not a valid node name");
      host.reset();
    }
    if (!host) {
      report.unmapped_endpoints.push_back({e.id, e.description});
      continue;
    }
    if (options_.known_nodes && !options_.known_nodes->contains(*host)) {
      auto sn = short_names.find(*host);
      if (sn != short_names.end() && sn->second.size() == 1) {
        host = sn->second.front();
      } else {
        excluded_hosts.insert(*host);
        continue;
      }
    }
    if (!options_.known_nodes && !by_identity) {
      // No Node list to say which hosts are nodes: the names no compute node has are set aside.
      auto [verdict, first] = host_verdict.try_emplace(*host, "");
      if (first && !keep_host(*host)) {
        if (generic_host_name(*host)) {
          verdict->second = "generic host name";
        } else if (switch_names.contains(*host)) {
          verdict->second = "a switch's name";
        } else if (appliance(*host)) {
          verdict->second = "appliance";
        }
      }
      // A custom description format can name the appliance outside the host name.
      if (verdict->second.empty() && !default_host_pattern_ && appliance(e.description) && !keep_host(*host))
        verdict->second = "appliance";
      if (!verdict->second.empty()) continue;
    }
    if (!by_identity && generic_host_name(*host)) generic_hosts[*host].insert(e.id);
    if (!by_identity && !device.empty() && !e.node_guid.empty()) {
      std::string lower_device = device;
      for (auto& c : lower_device) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto [at, first] = descriptions.try_emplace(*host + " " + lower_device, Description{e.node_guid});
      if (!first && at->second.first_guid != e.node_guid) at->second.shared = true;
      described.emplace_back(v, &*at);
    }
    named.push_back({v, *host});
  }
  // Several HCAs with one description: a rail-optimised host has one HCA per device name, so these
  // are different machines given one name (or names that differ only in case). Folding them would
  // make one host of several on different leaves; they are left out, each named, until a GUID map
  // says which machine is which.
  std::map<std::string, std::map<std::string, std::set<std::string>>> hcas_by_description;
  for (const auto& [v, description] : described) {
    if (!description->second.shared) continue;
    auto& switches = hcas_by_description[description->first][vs[v].node_guid];
    for (VertexId s : graph.neighbors(v)) {
      if (usable_switch[s]) switches.insert(display[s]);
    }
  }
  std::set<std::string> shared_names;
  for (const auto& [description, hcas] : hcas_by_description) {
    if (hcas.size() < 2) continue;
    const std::string host = description.substr(0, description.find(' '));
    shared_names.insert(host);
    std::string guids, switches;
    std::set<std::string> all_switches;
    for (const auto& [guid, on] : hcas) {
      guids += (guids.empty() ? "" : ", ") + guid;
      all_switches.insert(on.begin(), on.end());
    }
    for (const auto& sw : all_switches) switches += (switches.empty() ? "" : ", ") + sw;
    report.warnings.push_back("host '" + host + "': " + std::to_string(hcas.size()) +
                              " HCAs describe themselves as '" + description + "' (node GUIDs " + guids +
                              ") on switches " + (switches.empty() ? std::string("(none)") : switches) +
                              ": several machines share this name, so none of them is placed; map their "
                              "GUIDs to node names to keep them");
  }
  for (const auto& [v, host] : named) {
    if (shared_names.contains(host)) {
      report.unmapped_endpoints.push_back({vs[v].id, vs[v].description});
      continue;
    }
    auto [it, inserted] = host_index.try_emplace(host, static_cast<std::uint32_t>(host_names.size()));
    if (inserted) host_names.push_back(host);
    endpoint_host[v] = it->second;
  }
  report.excluded_hosts.assign(excluded_hosts.begin(), excluded_hosts.end());
  {
    std::vector<std::string> set_aside;
    for (const auto& [host, why] : host_verdict) {
      if (!why.empty()) set_aside.push_back(host + " (" + why + ")");
    }
    if (!set_aside.empty()) {
      report.warnings.push_back(std::to_string(set_aside.size()) + " host(s) set aside, not compute nodes: " +
                                bounded_list(set_aside, kSetAsideNamesShown) +
                                "; a Node list (--nodes) or the builder config's keepHosts keeps them");
    }
  }
  for (const auto& [name, guids] : generic_hosts) {
    report.warnings.push_back("host name '" + name + "' is a generic default; its " +
                              std::to_string(guids.size()) +
                              " HCA(s) are taken as one machine: map them by GUID if they are not");
  }
  std::sort(report.unmapped_endpoints.begin(), report.unmapped_endpoints.end(),
            [](const auto& a, const auto& b) { return a.guid < b.guid; });

  // 3. Switch levels: hop distance from the nearest compute host (leaf = 1).
  std::vector<int> level(n, kNoLevel);
  std::vector<VertexId> frontier;
  const std::size_t host_count = host_names.size();
  std::vector<char> host_attached(host_count, 0);
  for (VertexId v = 0; v < n; ++v) {
    if (endpoint_host[v] < 0) continue;
    for (VertexId s : graph.neighbors(v)) {
      if (!usable_switch[s]) continue;
      host_attached[static_cast<std::size_t>(endpoint_host[v])] = 1;
      if (level[s] == kNoLevel) {
        level[s] = 1;
        frontier.push_back(s);
      }
    }
  }
  int max_level = frontier.empty() ? 0 : 1;
  for (std::size_t head = 0; head < frontier.size(); ++head) {
    VertexId s = frontier[head];
    for (VertexId t : graph.neighbors(s)) {
      if (usable_switch[t] && level[t] == kNoLevel) {
        level[t] = level[s] + 1;
        max_level = std::max(max_level, level[t]);
        frontier.push_back(t);
      }
    }
  }
  for (std::size_t h = 0; h < host_count; ++h) {
    if (!host_attached[h]) report.unattached_hosts.push_back(host_names[h]);
  }
  std::sort(report.unattached_hosts.begin(), report.unattached_hosts.end());

  // 4. Grow components level by level; hosts are elements 0..H-1, switch v is H+v.
  UnionFind uf(host_count + n);
  std::vector<std::vector<VertexId>> switches_at(static_cast<std::size_t>(max_level) + 1);
  for (VertexId v = 0; v < n; ++v) {
    if (level[v] != kNoLevel) switches_at[static_cast<std::size_t>(level[v])].push_back(v);
  }
  std::size_t components = 0;  // host groups at the last emitted tier (singletons at first)
  for (std::size_t h = 0; h < host_count; ++h) components += host_attached[h] ? 1 : 0;

  std::vector<std::int64_t> below(host_count, -1);  // each host's domain at the last emitted tier
  // For the health pass: the lowest domain each switch belongs to.
  std::vector<std::int64_t> switch_home(options_.assess_health ? n : 0, -1);
  int tier = 0;
  for (int k = 1; k <= max_level; ++k) {
    for (VertexId s : switches_at[static_cast<std::size_t>(k)]) {
      for (VertexId t : graph.neighbors(s)) {
        if (usable_switch[t] && level[t] != kNoLevel && level[t] <= k) {
          uf.unite(static_cast<std::uint32_t>(host_count + s), static_cast<std::uint32_t>(host_count + t));
        } else if (endpoint_host[t] >= 0) {
          uf.unite(static_cast<std::uint32_t>(host_count + s), static_cast<std::uint32_t>(endpoint_host[t]));
        }
      }
    }
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> groups;
    for (std::uint32_t h = 0; h < host_count; ++h) {
      if (host_attached[h]) groups[uf.find(h)].push_back(h);
    }
    // A level is a tier only where it merges something.
    if (groups.size() == components) continue;
    components = groups.size();
    ++tier;
    // Anchor: the smallest switch of this level in the component; a component that this level did
    // not grow keeps the smallest switch of the highest level below that it has.
    std::unordered_map<std::uint32_t, std::string> anchor;
    for (int lv = k; lv >= 1 && anchor.size() < groups.size(); --lv) {
      std::unordered_map<std::uint32_t, std::string> at_level;
      for (VertexId s : switches_at[static_cast<std::size_t>(lv)]) {
        auto root = uf.find(static_cast<std::uint32_t>(host_count + s));
        if (!groups.contains(root) || anchor.contains(root)) continue;
        auto [it, inserted] = at_level.try_emplace(root, display[s]);
        if (!inserted && display[s] < it->second) it->second = display[s];
      }
      anchor.merge(at_level);
    }
    // Deterministic order: by anchor name.
    std::vector<std::pair<std::string, std::uint32_t>> ordered;
    ordered.reserve(groups.size());
    for (const auto& [root, _] : groups) ordered.emplace_back(anchor[root], root);
    std::sort(ordered.begin(), ordered.end());
    const std::string tier_name = level_name(options_, k);
    std::vector<std::int64_t> next(host_count, -1);
    std::unordered_map<std::uint32_t, DomainId> domain_of_root;
    for (const auto& [anchor_name, root] : ordered) {
      std::string name = sanitize_name(tier_name) + "-" + anchor_name;
      name = fit_member_name(name);
      DomainId id = tree.add_domain(name, tier, tier_name);
      tree.domain(id).anchor = anchor_name;
      auto& members = groups[root];
      if (tier == 1) {
        for (auto h : members) tree.domain(id).nodes.push_back(host_names[h]);
        std::sort(tree.domain(id).nodes.begin(), tree.domain(id).nodes.end());
      } else {
        std::set<DomainId> children;
        for (auto h : members) children.insert(static_cast<DomainId>(below[h]));
        for (DomainId c : children) tree.attach(id, c);
      }
      for (auto h : members) next[h] = static_cast<std::int64_t>(id);
      if (options_.assess_health) domain_of_root.emplace(root, id);
    }
    below = std::move(next);
    if (options_.assess_health) {
      for (int lv = 1; lv <= k; ++lv) {
        for (VertexId s : switches_at[static_cast<std::size_t>(lv)]) {
          if (switch_home[s] >= 0) continue;
          auto it = domain_of_root.find(uf.find(static_cast<std::uint32_t>(host_count + s)));
          if (it != domain_of_root.end()) switch_home[s] = static_cast<std::int64_t>(it->second);
        }
      }
    }
  }

  if (auto ok = check_invariants(tree); !ok)
    return std::unexpected(ok.error().context("the built tree is invalid"));
  if (options_.assess_health) {
    assess_fabric_health(BuiltFabric{.graph = &graph,
                                     .switch_level = level,
                                     .switch_home = switch_home,
                                     .endpoint_host = endpoint_host,
                                     .switch_names = display,
                                     .host_names = host_names},
                         tree);
  }
  return tree;
}

}  // namespace hypertopo::topology
