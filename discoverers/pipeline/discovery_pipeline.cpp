#include "discoverers/pipeline/discovery_pipeline.h"

#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "discoverers/nvlink/nvlink_probe.h"
#include "topology/fabric_health.h"

namespace hypertopo::discoverers {

void apply_node_facts(topology::TreeBuilderOptions& options, const k8s::NodeList* nodes,
                      const std::vector<topology::NodeReport>* reports, std::vector<std::string>* warnings) {
  // GUID -> every node that claims it; a GUID claimed twice maps to nobody.
  std::map<std::string, std::set<std::string>> claims;
  std::size_t bad_guids = 0;
  std::string first_bad;
  auto claim = [&](std::string_view text, const std::string& node) {
    // Annotations are hand-edited too: "0x11, 0x12" must read like "0x11,0x12".
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    if (auto g = topology::normalize_guid(text)) {
      claims[*g].insert(node);
    } else if (!text.empty() && ++bad_guids == 1) {
      first_bad = "node " + node + ": '" + std::string(text.substr(0, 64)) + "'";
    }
  };
  if (nodes) {
    std::set<std::string> names;
    for (const auto& n : nodes->items) {
      names.insert(n.name);
      if (auto it = n.annotations.find(kNodeGuidAnnotation); it != n.annotations.end()) {
        std::string_view list = it->second;
        while (!list.empty()) {
          auto comma = list.find(',');
          claim(list.substr(0, comma), n.name);
          list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        }
      }
    }
    options.known_nodes = std::move(names);
  }
  if (reports) {
    for (const auto& r : *reports) {
      for (const auto& hca : r.hcas) {
        // Only InfiniBand ports carry fabric GUIDs; a RoCE port's GID-derived GUID is no fabric id.
        bool ib = false;
        for (const auto& p : hca.ports) {
          if (p.link_layer != topology::LinkLayer::kInfiniBand) continue;
          ib = true;
          if (!p.port_guid.empty()) claim(p.port_guid, r.node_name);
        }
        if (ib && !hca.node_guid.empty()) claim(hca.node_guid, r.node_name);
      }
    }
  }
  if (bad_guids > 0 && warnings) {
    warnings->push_back(std::to_string(bad_guids) + " entr(ies) of " + kNodeGuidAnnotation +
                        " annotations are not GUIDs and were ignored (first: " + first_bad + ")");
  }
  std::size_t contested = 0;
  std::string first_contested;
  for (const auto& [guid, owners] : claims) {
    if (owners.size() == 1) {
      options.node_by_endpoint[guid] = *owners.begin();
    } else if (++contested == 1) {
      std::string who;
      for (const auto& o : owners) who += (who.empty() ? "" : ", ") + o;
      first_contested = "GUID " + guid + " is claimed by several nodes (" + who + ")";
    }
  }
  // One line, however many: a cluster where every node claims the same GUIDs must not flood the log.
  if (contested > 0 && warnings) {
    warnings->push_back(contested == 1 ? first_contested + "; left unmapped"
                                       : first_contested + "; left unmapped (and " +
                                             std::to_string(contested - 1) + " more GUID(s) like it)");
  }
}

std::size_t apply_host_port_facts(topology::FabricGraph& graph,
                                  const std::vector<topology::NodeReport>& reports) {
  // Keyed by port GUID, and by "<node GUID>#<port>" for endpoints a source knows only that way.
  std::unordered_map<std::string, topology::PortFacts> facts;
  std::unordered_set<std::string> contested;
  auto keep = [&](const std::string& key, const topology::PortFacts& f) {
    if (contested.contains(key)) return;
    if (!facts.emplace(key, f).second) {
      facts.erase(key);
      contested.insert(key);
    }
  };
  for (const auto& r : reports) {
    for (const auto& hca : r.hcas) {
      for (const auto& p : hca.ports) {
        if (p.link_layer != topology::LinkLayer::kInfiniBand) continue;
        topology::PortFacts f;
        if (auto rate = topology::parse_sysfs_rate(p.rate)) {
          f.width_active = static_cast<std::uint8_t>(rate->lanes);
          f.speed_active = rate->lane_mbps;
        }
        f.state = topology::port_state_code(p.state);
        f.phys_state = topology::phys_state_code(p.phys_state);
        if (!f.known()) continue;
        if (!p.port_guid.empty()) keep(p.port_guid, f);
        if (!hca.node_guid.empty()) keep(hca.node_guid + "#" + std::to_string(p.number), f);
      }
    }
  }
  if (facts.empty()) return 0;
  std::size_t filled = 0;
  auto lookup = [&](const topology::Vertex& v) -> const topology::PortFacts* {
    if (auto it = facts.find(v.id); it != facts.end()) return &it->second;
    if (v.node_guid.empty() || v.port == 0) return nullptr;
    auto it = facts.find(v.node_guid + "#" + std::to_string(v.port));
    return it != facts.end() ? &it->second : nullptr;
  };
  for (std::size_t i = 0; i < graph.links().size(); ++i) {
    for (bool end_a : {true, false}) {
      const auto& link = graph.links()[i];
      const topology::Vertex& v = graph.vertex(end_a ? link.a : link.b);
      if (v.kind != topology::VertexKind::kEndpoint) continue;
      const topology::PortFacts* own = lookup(v);
      if (!own) continue;
      topology::PortFacts& end = graph.end_facts(i, end_a);
      if (end.width_active == 0) end.width_active = own->width_active;
      if (end.speed_active == 0) end.speed_active = own->speed_active;
      if (end.state == 0) end.state = own->state;
      if (end.phys_state == 0) end.phys_state = own->phys_state;
      ++filled;
    }
  }
  return filled;
}

topology::NvlinkMembership collect_nvlink_membership(const k8s::NodeList* nodes,
                                                     const std::vector<topology::NodeReport>* reports) {
  topology::NvlinkMembership m;
  std::map<std::string, const topology::NvlinkFacts*> reported;  // node -> its report's NVLink facts
  if (reports) {
    for (const auto& r : *reports) {
      if (!r.nvlink) continue;
      reported[r.node_name] = &*r.nvlink;
      if (!r.nvlink->conflicts.empty()) {
        std::string what;
        for (const auto& c : r.nvlink->conflicts) what += (what.empty() ? "" : "; ") + c;
        m.warnings.push_back("node " + r.node_name + ": its GPUs name different NVLink cliques (" + what +
                             "); the node joins no NVLink domain");
      }
      if (!r.nvlink->clique_id.empty()) m.clique_by_node[r.node_name] = r.nvlink->clique_id;
    }
  }
  if (nodes) {
    for (const auto& n : nodes->items) {
      auto facts = nvlink::nvlink_facts_from_node(n);
      if (!facts) {
        m.warnings.push_back(facts.error().message() + "; label ignored");
        continue;
      }
      if (!*facts) continue;
      const std::string& label = (*facts)->clique_id;
      if (auto it = reported.find(n.name); it != reported.end()) {
        if (it->second->clique_id != label) {
          m.warnings.push_back(
              "node " + n.name + ": label " + nvlink::kCliqueLabel + "=" + label +
              " disagrees with its NodeReport (" +
              (it->second->clique_id.empty() ? std::string("no NVLink domain") : it->second->clique_id) +
              "); the NodeReport wins");
        }
        continue;
      }
      m.clique_by_node[n.name] = label;
    }
  }
  return m;
}

namespace {

bool is_reports_source(const SourceSpec& spec) { return spec.kind == "reports"; }

}  // namespace

std::expected<PipelineResult, Error> run_discovery(const DiscovererRegistry& registry,
                                                   const PipelineInput& input) {
  PipelineResult result;
  if (input.deps.reports) result.reports = *input.deps.reports;
  // `reports:` sources first: what they read is a fact for every other source.
  std::vector<SourceSpec> order;
  for (const auto& s : input.sources)
    if (is_reports_source(s)) order.push_back(s);
  for (const auto& s : input.sources)
    if (!is_reports_source(s)) order.push_back(s);

  auto options = input.builder_options;
  std::optional<topology::TreeBuilder> builder;
  DiscoveryDeps deps = input.deps;
  std::vector<std::string> fact_warnings;
  bool first = true;
  for (const auto& spec : order) {
    if (!builder && !is_reports_source(spec)) {
      // Every report is known by now: settle the node facts once, before the first fabric source.
      deps.reports = result.reports.empty() ? nullptr : &result.reports;
      apply_node_facts(options, deps.nodes, deps.reports, &fact_warnings);
      auto made = topology::TreeBuilder::create(options);
      if (!made) return std::unexpected(made.error());
      builder.emplace(std::move(*made));
    }
    SourceOutcome outcome;
    outcome.source = spec.to_string();
    const auto started = std::chrono::steady_clock::now();
    auto part = [&]() -> std::expected<topology::Tree, Error> {
      auto source = registry.create(spec, deps);
      if (!source) return std::unexpected(source.error());
      auto found = (*source)->discover();
      if (!found) return std::unexpected(found.error());
      outcome.notes = found->notes;
      outcome.warnings = found->warnings;
      const bool gave_reports = !found->reports.empty();
      for (auto& r : found->reports) result.reports.push_back(std::move(r));
      if (found->graph) {
        if (deps.reports) {
          const std::size_t filled = apply_host_port_facts(*found->graph, *deps.reports);
          if (filled > 0) {
            outcome.notes.push_back(std::to_string(filled) +
                                    " host link end(s) judged from the hosts' NodeReports");
          }
        }
        const topology::TreeBuilder* use = &*builder;
        std::expected<topology::TreeBuilder, Error> own = std::unexpected(Error(ErrorCode::kInternal, ""));
        if (!found->excluded_device_patterns.empty() || !found->excluded_switch_patterns.empty()) {
          auto o = options;
          o.excluded_device_patterns.insert(o.excluded_device_patterns.end(),
                                            found->excluded_device_patterns.begin(),
                                            found->excluded_device_patterns.end());
          o.excluded_switch_patterns.insert(o.excluded_switch_patterns.end(),
                                            found->excluded_switch_patterns.begin(),
                                            found->excluded_switch_patterns.end());
          own = topology::TreeBuilder::create(std::move(o));
          if (!own) return std::unexpected(own.error());
          use = &*own;
        }
        return use->build(*found->graph);
      }
      if (found->tree) {
        auto tree = std::move(*found->tree);
        tree.source = options.source;
        return tree;
      }
      if (gave_reports) return topology::Tree{};  // facts only; they shape the other sources' trees
      return std::unexpected(Error(ErrorCode::kInternal, "produced neither a graph nor a tree"));
    }();
    outcome.elapsed = std::chrono::steady_clock::now() - started;
    if (!part) {
      outcome.error = part.error().message();
      result.outcomes.push_back(std::move(outcome));
      result.complete = false;
      if (input.stop_on_source_error) {
        // The registry names the source in the errors of its arguments and factory already.
        const std::string who = "source " + spec.to_string();
        if (part.error().message().starts_with(who + ": ")) return std::unexpected(part.error());
        return std::unexpected(part.error().context(who));
      }
      continue;
    }
    outcome.ok = true;
    outcome.domains = part->size();
    result.outcomes.push_back(std::move(outcome));
    if (first) {
      result.tree = std::move(*part);
      first = false;
    } else {
      result.tree.merge(std::move(*part));
    }
  }
  if (!builder) {
    // Only `reports:` sources (or none): the node facts still carry GUID conflicts worth reporting.
    const auto* reports = result.reports.empty() ? nullptr : &result.reports;
    apply_node_facts(options, input.deps.nodes, reports, &fact_warnings);
  }
  result.tree.source = options.source;
  for (auto& w : fact_warnings) result.tree.report.warnings.push_back(std::move(w));
  if (input.nvlink.enabled) {
    const auto* reports = result.reports.empty() ? nullptr : &result.reports;
    auto merged = topology::merge_nvlink_domains(
        result.tree, collect_nvlink_membership(input.deps.nodes, reports), input.nvlink);
    if (!merged) return std::unexpected(merged.error());
    result.nvlink_domains = *merged;
  }
  if (auto ok = topology::check_invariants(result.tree); !ok)
    return std::unexpected(ok.error().context("the merged tree"));
  return result;
}

}  // namespace hypertopo::discoverers
