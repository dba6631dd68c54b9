// The agent config's source list: `sources` (our form) or Volcano's `networkTopologyDiscovery`,
// each entry checked by the registry's own parser for its kind; and the registry's kinds.
#include <yaml-cpp/yaml.h>

#include <map>

#include "agent/config/agent_config.h"
#include "agent/config/config_sections.h"
#include "discoverers/registry/discoverer.h"
#include "io/config_reader.h"
#include "io/yaml_json.h"

namespace hypertopo::agent {
namespace {

const discoverers::DiscovererRegistry& registry() {
  static const discoverers::DiscovererRegistry kRegistry = [] {
    discoverers::DiscovererRegistry r;
    discoverers::register_builtin_discoverers(r);
    return r;
  }();
  return kRegistry;
}

// The typed settings of one source from its `config` block (null: every default), through the
// source's own parser, so the file and key named in an error are the user's.
std::expected<void, Error> fill_settings(const io::ConfigReader& r, const discoverers::SourceEntry& entry,
                                         const YAML::Node& block, const std::string& path, SourceConfig& s) {
  s.kind = entry.kind;
  s.role = entry.role;
  s.cache = entry.cache;
  auto settings = entry.parse_config(block ? block : YAML::Node(), {r.file(), path});
  if (!settings) return std::unexpected(settings.error());
  s.settings = std::move(*settings);
  s.config = block ? io::yaml_to_json(block) : nlohmann::json();
  return {};
}

// `interval`, `deadline` and `enabled`, the keys both list forms share.
std::expected<void, Error> read_schedule(const io::ConfigReader& r, const YAML::Node& node,
                                         const std::string& path, SourceConfig& s) {
  if (node["interval"]) {
    auto interval = r.period(node["interval"], io::key_path(path, "interval"));
    if (!interval) return std::unexpected(interval.error());
    s.interval = *interval;
  }
  if (node["deadline"]) {
    auto deadline = r.period(node["deadline"], io::key_path(path, "deadline"));
    if (!deadline) return std::unexpected(deadline.error());
    s.deadline = *deadline;
  }
  if (node["enabled"]) {
    auto enabled = r.boolean(node["enabled"], io::key_path(path, "enabled"));
    if (!enabled) return std::unexpected(enabled.error());
    s.enabled = *enabled;
  }
  return {};
}

// One entry of our own `sources` list: {kind, interval, deadline, enabled, config}.
std::expected<SourceConfig, Error> parse_source(const io::ConfigReader& r, const YAML::Node& node,
                                                const std::string& path) {
  if (!node.IsMap()) return r.bad(path, "must be a mapping with kind");
  if (auto ok = r.only_keys(node, {"kind", "interval", "deadline", "enabled", "config"}, path); !ok)
    return std::unexpected(ok.error());
  SourceConfig s;
  if (!node["kind"]) return r.bad(io::key_path(path, "kind"), "is required");
  auto kind = r.nonempty_text(node["kind"], io::key_path(path, "kind"));
  if (!kind) return std::unexpected(kind.error());
  const discoverers::SourceEntry* entry = registry().entry(*kind);
  if (entry == nullptr) {
    return r.bad(io::key_path(path, "kind"), "unknown source '" + *kind + "' (known: node probes " +
                                                 io::comma_list(node_probe_kinds()) + "; leader sources " +
                                                 io::comma_list(leader_source_kinds()) + ")");
  }
  if (auto ok = read_schedule(r, node, path, s); !ok) return std::unexpected(ok.error());
  if (auto ok = fill_settings(r, *entry, node["config"], io::key_path(path, "config"), s); !ok)
    return std::unexpected(ok.error());
  return s;
}

// One entry of Volcano's networkTopologyDiscovery list: {source, enabled, interval, deadline, credentials,
// config}, read into the same structs (label -> labels, ufm, roce).
std::expected<SourceConfig, Error> parse_volcano_entry(const io::ConfigReader& r, const YAML::Node& node,
                                                       const std::string& path) {
  if (!node.IsMap()) return r.bad(path, "must be a mapping with source");
  if (auto ok =
          r.only_keys(node, {"source", "enabled", "interval", "deadline", "credentials", "config"}, path);
      !ok)
    return std::unexpected(ok.error());
  if (!node["source"]) return r.bad(io::key_path(path, "source"), "is required");
  auto source = r.nonempty_text(node["source"], io::key_path(path, "source"));
  if (!source) return std::unexpected(source.error());
  const std::map<std::string, std::string> kinds = {{"label", "labels"}, {"ufm", "ufm"}, {"roce", "roce"}};
  auto kind = kinds.find(*source);
  if (kind == kinds.end())
    return r.bad(io::key_path(path, "source"), "unknown source '" + *source + "' (known: label, roce, ufm)");
  SourceConfig s;
  s.interval = std::chrono::hours(1);  // Volcano's default
  YAML::Node block = node["config"] ? YAML::Clone(node["config"]) : YAML::Node();
  if (node["credentials"]) {
    if (kind->second != "ufm")
      return r.bad(io::key_path(path, "credentials"), "only a ufm source takes credentials");
    if (!block || block.IsNull()) block = YAML::Node(YAML::NodeType::Map);
    if (!block.IsMap()) return r.bad(io::key_path(path, "config"), "must be a mapping");
    block["credentials"] = YAML::Clone(node["credentials"]);
  }
  if (auto ok = fill_settings(r, *registry().entry(kind->second), block, io::key_path(path, "config"), s);
      !ok)
    return std::unexpected(ok.error());
  if (auto ok = read_schedule(r, node, path, s); !ok) return std::unexpected(ok.error());
  return s;
}

std::expected<std::vector<SourceConfig>, Error> parse_source_list(const io::ConfigReader& r,
                                                                  const YAML::Node& list,
                                                                  const std::string& path, bool volcano) {
  if (!list.IsSequence()) return r.bad(path, "must be a list of sources");
  if (list.size() == 0) return r.bad(path, "lists no source");
  std::vector<SourceConfig> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = io::indexed(path, i);
    auto s = volcano ? parse_volcano_entry(r, list[i], at) : parse_source(r, list[i], at);
    if (!s) return std::unexpected(s.error());
    for (std::size_t j = 0; j < out.size(); ++j) {
      if (out[j].kind == s->kind && out[j].config == s->config)
        return r.bad(at, "the same source as " + io::indexed(path, j) + " (" + s->spec() + ")");
    }
    out.push_back(std::move(*s));
  }
  return out;
}

}  // namespace

namespace sections {

std::expected<void, Error> read_sources(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c) {
  const YAML::Node sources = root["sources"];
  const YAML::Node volcano = root["networkTopologyDiscovery"];
  if (sources && volcano)
    return r.bad("networkTopologyDiscovery", "give either sources or networkTopologyDiscovery, not both");
  if (!sources && !volcano) return r.bad("sources", "is required (or Volcano's networkTopologyDiscovery)");
  auto list = sources ? parse_source_list(r, sources, "sources", false)
                      : parse_source_list(r, volcano, "networkTopologyDiscovery", true);
  if (!list) return std::unexpected(list.error());
  c.sources = std::move(*list);
  return {};
}

}  // namespace sections

const std::vector<std::string>& node_probe_kinds() {
  static const std::vector<std::string> kinds = registry().kinds(discoverers::SourceRole::kNodeProbe);
  return kinds;
}

const std::vector<std::string>& leader_source_kinds() {
  static const std::vector<std::string> kinds = registry().kinds(discoverers::SourceRole::kLeader);
  return kinds;
}

std::string SourceConfig::spec() const {
  const std::string what = settings ? settings->describe() : "";
  return what.empty() ? kind : kind + ":" + what;
}

std::expected<SourceConfig, Error> source_from_arg(const std::string& kind, const std::string& arg) {
  auto entry = registry().find(kind);
  if (!entry) return std::unexpected(entry.error());
  auto settings = (*entry)->parse_arg(arg);
  if (!settings) return std::unexpected(settings.error());
  SourceConfig s;
  s.kind = kind;
  s.role = (*entry)->role;
  s.cache = (*entry)->cache;
  s.settings = std::move(*settings);
  s.config = arg.empty() ? nlohmann::json() : nlohmann::json{{"arg", arg}};
  return s;
}

const discoverers::DiscovererRegistry& builtin_registry() { return registry(); }

}  // namespace hypertopo::agent
