// Leader side of roce-lldp: NodeReports + switch hierarchy -> FabricGraph, and the "roce" source.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "discoverers/registry/source_config.h"
#include "discoverers/roce-lldp/roce_lldp.h"
#include "io/bounded_file.h"
#include "io/config_reader.h"
#include "io/yaml_reader.h"

namespace hypertopo::discoverers::roce_lldp {

std::optional<std::string> RoceHierarchy::parent_of(const std::string& switch_name) const {
  if (auto it = parents.find(switch_name); it != parents.end()) return it->second;
  for (const auto& rule : rules) {
    auto m = rule.compiled->search(switch_name);
    if (!m) continue;
    // $N is group N, $& the whole match, $$ a dollar (the ECMAScript replacement format).
    std::string out;
    for (std::size_t i = 0; i < rule.parent.size(); ++i) {
      const char c = rule.parent[i];
      const char next = i + 1 < rule.parent.size() ? rule.parent[i + 1] : '\0';
      if (c == '$' && std::isdigit(static_cast<unsigned char>(next)) &&
          static_cast<std::size_t>(next - '0') < m->size()) {
        out += (*m)[static_cast<std::size_t>(next - '0')];
        ++i;
      } else if (c == '$' && next == '&') {
        out += (*m)[0];
        ++i;
      } else if (c == '$' && next == '$') {
        out += '$';
        ++i;
      } else {
        out += c;
      }
    }
    return out;
  }
  return std::nullopt;
}

std::expected<RoceHierarchy, Error> parse_roce_hierarchy(const std::string& yaml_text,
                                                         const std::string& name) {
  RoceHierarchy h;
  h.origin = name;
  auto loaded = io::load_yaml(yaml_text, name);
  if (!loaded) return std::unexpected(loaded.error());
  YAML::Node doc = *loaded;
  if (doc.IsNull()) return h;
  if (!doc.IsMap())
    return fail(ErrorCode::kInvalidArgument, name + ": expected a mapping with 'parents' and/or 'rules'");
  const io::ConfigReader r(name);
  if (auto ok = r.only_keys(doc, {"parents", "rules"}, ""); !ok) return std::unexpected(ok.error());
  if (const YAML::Node parents = doc["parents"]) {
    if (!parents.IsMap()) return r.bad("parents", "must be a mapping of switch to parent");
    for (const auto& p : parents) {
      auto child = r.nonempty_text(p.first, "parents");
      if (!child) return std::unexpected(child.error());
      const std::string at = io::key_path("parents", *child);
      auto parent = r.nonempty_text(p.second, at);
      if (!parent) return std::unexpected(parent.error());
      if (*parent == *child) return r.bad(at, "a switch cannot be its own parent");
      h.parents[*child] = *parent;
    }
  }
  if (const YAML::Node rules = doc["rules"]) {
    if (!rules.IsSequence()) return r.bad("rules", "must be a list of {pattern, parent}");
    for (std::size_t i = 0; i < rules.size(); ++i) {
      const std::string where = io::indexed("rules", i);
      const YAML::Node& entry = rules[i];
      if (!entry.IsMap()) return r.bad(where, "must be a mapping {pattern, parent}");
      if (auto ok = r.only_keys(entry, {"pattern", "parent"}, where); !ok) return std::unexpected(ok.error());
      for (const char* key : {"pattern", "parent"})
        if (!entry[key]) return r.bad(io::key_path(where, key), "is required");
      auto pattern = r.nonempty_text(entry["pattern"], where + ".pattern");
      if (!pattern) return std::unexpected(pattern.error());
      auto parent = r.nonempty_text(entry["parent"], where + ".parent");
      if (!parent) return std::unexpected(parent.error());
      auto compiled = text::UserPattern::compile(*pattern);
      if (!compiled) return r.bad(where + ".pattern", "'" + *pattern + "': " + compiled.error());
      RoceHierarchy::Rule rule;
      rule.compiled = std::move(*compiled);
      // $N beyond the pattern's groups would silently render empty: reject it.
      const std::size_t groups = static_cast<std::size_t>(rule.compiled->group_count());
      for (std::size_t pos = parent->find('$'); pos != std::string::npos; pos = parent->find('$', pos + 1)) {
        if (pos + 1 < parent->size() && std::isdigit(static_cast<unsigned char>((*parent)[pos + 1])) &&
            static_cast<std::size_t>((*parent)[pos + 1] - '0') > groups) {
          return r.bad(where + ".parent", "'" + *parent + "' uses $" + (*parent)[pos + 1] +
                                              " but the pattern has " + std::to_string(groups) + " group(s)");
        }
      }
      rule.pattern = *pattern;
      rule.parent = *parent;
      h.rules.push_back(std::move(rule));
    }
  }
  return h;
}

std::expected<RoceHierarchy, Error> load_roce_hierarchy(const std::filesystem::path& path) {
  auto text = io::read_bounded_file(path, io::kConfigFileLimit);
  if (!text) return std::unexpected(text.error().context("switch hierarchy"));
  return parse_roce_hierarchy(*text, path.string());
}

std::expected<topology::FabricGraph, Error> build_roce_fabric(
    const std::vector<topology::NodeReport>& reports, const RoceHierarchy& hierarchy,
    std::vector<std::string>* notes) {
  auto note = [&](std::string line) {
    if (notes != nullptr) notes->push_back(std::move(line));
  };
  topology::FabricGraph graph;
  std::set<std::string> tors;  // by display name
  for (const auto& report : reports) {
    std::size_t attached = 0;
    for (const auto& rail : report.roce) {
      if (!rail.neighbor) continue;
      const auto& n = *rail.neighbor;
      // The ToR is identified by its chassis id; its system name is what admins (and the hierarchy) use.
      const std::string display = n.system_name.empty() ? n.chassis_id : n.system_name;
      if (display.empty()) continue;
      const std::string id = n.chassis_id.empty() ? "name:" + display : n.chassis_id;
      auto sw = graph.add_switch(id, display);
      auto ep =
          graph.add_endpoint(report.node_name + "/" + rail.netdev, report.node_name + " " + rail.netdev);
      graph.vertex(ep).host = report.node_name;
      graph.vertex(ep).device = rail.netdev;
      int port = 0;
      if (auto pos = n.port_id.find_last_not_of("0123456789"); pos + 1 < n.port_id.size()) {
        port = std::atoi(n.port_id.c_str() + pos + 1);
      }
      graph.add_link(sw, port, ep, rail.rdma_port,
                     rail.speed_mbps ? std::to_string(*rail.speed_mbps) + "Mb/s" : std::string());
      tors.insert(display);
      ++attached;
    }
    if (attached == 0)
      note(report.node_name + ": no RoCE netdev with an LLDP neighbour; not in the RoCE tree");
  }
  // Climb the hierarchy from every ToR; each switch gets one parent link.
  std::set<std::string> linked;
  for (const auto& tor : tors) {
    std::string current = tor;
    std::vector<std::string> path{current};
    auto id_of = [&](const std::string& name) -> std::string {
      // ToRs were added by chassis id; find them by description so that the link lands on the same vertex.
      for (topology::VertexId v = 0; v < graph.vertex_count(); ++v) {
        const auto& vx = graph.vertex(v);
        if (vx.kind == topology::VertexKind::kSwitch && vx.description == name) return vx.id;
      }
      return "name:" + name;
    };
    while (auto parent = hierarchy.parent_of(current)) {
      if (std::find(path.begin(), path.end(), *parent) != path.end()) {
        std::string chain;
        for (const auto& p : path) chain += p + " -> ";
        return fail(ErrorCode::kInvalidArgument,
                    hierarchy.origin + ": the switch hierarchy has a cycle: " + chain + *parent);
      }
      if (!linked.insert(current).second) break;  // already climbed from here
      auto child_v = graph.add_switch(id_of(current), current);
      auto parent_v = graph.add_switch(id_of(*parent), *parent);
      graph.add_link(child_v, 0, parent_v, 0);
      path.push_back(*parent);
      current = *parent;
    }
  }
  return graph;
}

namespace {

class RoceSource : public Discoverer {
 public:
  RoceSource(RoceHierarchy hierarchy, const std::vector<topology::NodeReport>* reports)
      : hierarchy_(std::move(hierarchy)), reports_(reports) {}
  std::string name() const override { return "roce"; }

  std::expected<Discovery, Error> discover() override {
    if (reports_ == nullptr || reports_->empty()) {
      return fail(ErrorCode::kInvalidArgument,
                  "the roce source builds from NodeReports: none were given (use --source reports:DIR or "
                  "the agents' published reports)");
    }
    Discovery d;
    auto graph = build_roce_fabric(*reports_, hierarchy_, &d.notes);
    if (!graph) return std::unexpected(graph.error());
    d.notes.insert(d.notes.begin(), "roce: " + std::to_string(reports_->size()) + " NodeReports, " +
                                        std::to_string(graph->switch_count()) + " switches, " +
                                        std::to_string(graph->endpoint_count()) + " rails");
    d.graph = std::move(*graph);
    return d;
  }

 private:
  RoceHierarchy hierarchy_;
  const std::vector<topology::NodeReport>* reports_;
};

}  // namespace

std::expected<std::unique_ptr<Discoverer>, Error> make_roce_source(const SourceSpec& spec,
                                                                   const DiscoveryDeps& deps) {
  RoceHierarchy hierarchy;
  const auto& c = settings_of<RoceConfig>(spec);
  if (!c.hierarchy.empty()) {
    auto loaded = load_roce_hierarchy(c.hierarchy);
    if (!loaded) return std::unexpected(loaded.error());
    hierarchy = std::move(*loaded);
  }
  return std::make_unique<RoceSource>(std::move(hierarchy), deps.reports);
}

SourceEntry roce_source_entry() {
  const std::vector<ConfigKey> keys = {
      {"hierarchy", "YAML naming the switches above the ToRs (parents, or rules); default: ToRs only"},
      {"endpoint", "Volcano's RoCE discoverer key; not needed (the NodeReports carry the neighbours)"},
      {"token", "Volcano's RoCE discoverer key; not needed, and not used"}};
  return {.kind = "roce",
          .summary =
              "RoCE ToRs from the NodeReports' LLDP neighbours: roce[:HIERARCHY.yaml] (switches above the "
              "ToRs; needs NodeReports)",
          .role = SourceRole::kLeader,
          .cache = CachePolicy::kEveryRebuild,
          .keys = keys,
          .parse_config = [keys](const YAML::Node& node,
                                 const ConfigAt& at) -> std::expected<SettingsPtr, Error> {
            ConfigBlock block(node, at);
            if (auto ok = block.only(keys); !ok) return std::unexpected(ok.error());
            auto c = std::make_shared<RoceConfig>();
            for (const char* key : {"hierarchy", "endpoint", "token"}) {
              auto t = block.text(key);
              if (!t) return std::unexpected(t.error());
              if (*t && std::string(key) == "hierarchy") c->hierarchy = **t;
            }
            return c;
          },
          .parse_arg = [](const std::string& arg) -> std::expected<SettingsPtr, Error> {
            auto c = std::make_shared<RoceConfig>();
            c->hierarchy = arg;
            return c;
          },
          .factory = make_roce_source};
}

}  // namespace hypertopo::discoverers::roce_lldp
