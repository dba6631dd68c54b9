#include "agent/config/agent_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include "discoverers/registry/discoverer.h"
#include "io/bounded_file.h"
#include "io/config_reader.h"
#include "io/yaml_json.h"
#include "io/yaml_reader.h"
#include "topology/builder_config.h"
#include "topology/label_rules.h"
#include "topology/tree.h"

namespace hypertopo::agent {
namespace {

using std::chrono::milliseconds;

const std::vector<std::string> kTopLevelKeys = {"hostRoot",     "sources", "networkTopologyDiscovery",
                                                "nodeSelector", "guard",   "leaderElection",
                                                "reconcile",    "exports", "http",
                                                "logLevel"};

const std::vector<std::string> kLogLevels = {"trace", "debug", "info", "warn", "error"};

using io::comma_list;
using io::indexed;
using Reader = io::ConfigReader;

std::string join_key(const std::string& path, const std::string& key) { return io::key_path(path, key); }

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
std::expected<void, Error> fill_settings(const Reader& r, const discoverers::SourceEntry& entry,
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

// One entry of our own `sources` list: {kind, interval, enabled, config}.
std::expected<SourceConfig, Error> parse_source(const Reader& r, const YAML::Node& node,
                                                const std::string& path) {
  if (!node.IsMap()) return r.bad(path, "must be a mapping with kind");
  if (auto ok = r.only_keys(node, {"kind", "interval", "enabled", "config"}, path); !ok)
    return std::unexpected(ok.error());
  SourceConfig s;
  if (!node["kind"]) return r.bad(join_key(path, "kind"), "is required");
  auto kind = r.nonempty_text(node["kind"], join_key(path, "kind"));
  if (!kind) return std::unexpected(kind.error());
  const discoverers::SourceEntry* entry = registry().entry(*kind);
  if (entry == nullptr) {
    return r.bad(join_key(path, "kind"), "unknown source '" + *kind + "' (known: node probes " +
                                             comma_list(node_probe_kinds()) + "; leader sources " +
                                             comma_list(leader_source_kinds()) + ")");
  }
  if (node["interval"]) {
    auto interval = r.period(node["interval"], join_key(path, "interval"));
    if (!interval) return std::unexpected(interval.error());
    s.interval = *interval;
  }
  if (node["enabled"]) {
    auto enabled = r.boolean(node["enabled"], join_key(path, "enabled"));
    if (!enabled) return std::unexpected(enabled.error());
    s.enabled = *enabled;
  }
  if (auto ok = fill_settings(r, *entry, node["config"], join_key(path, "config"), s); !ok)
    return std::unexpected(ok.error());
  return s;
}

// One entry of Volcano's networkTopologyDiscovery list: {source, enabled, interval, credentials,
// config}, read into the same structs (label -> labels, ufm, roce).
std::expected<SourceConfig, Error> parse_volcano_entry(const Reader& r, const YAML::Node& node,
                                                       const std::string& path) {
  if (!node.IsMap()) return r.bad(path, "must be a mapping with source");
  if (auto ok = r.only_keys(node, {"source", "enabled", "interval", "credentials", "config"}, path); !ok)
    return std::unexpected(ok.error());
  if (!node["source"]) return r.bad(join_key(path, "source"), "is required");
  auto source = r.nonempty_text(node["source"], join_key(path, "source"));
  if (!source) return std::unexpected(source.error());
  const std::map<std::string, std::string> kinds = {{"label", "labels"}, {"ufm", "ufm"}, {"roce", "roce"}};
  auto kind = kinds.find(*source);
  if (kind == kinds.end())
    return r.bad(join_key(path, "source"), "unknown source '" + *source + "' (known: label, roce, ufm)");
  SourceConfig s;
  s.interval = std::chrono::hours(1);  // Volcano's default
  YAML::Node block = node["config"] ? YAML::Clone(node["config"]) : YAML::Node();
  if (node["credentials"]) {
    if (kind->second != "ufm")
      return r.bad(join_key(path, "credentials"), "only a ufm source takes credentials");
    if (!block || block.IsNull()) block = YAML::Node(YAML::NodeType::Map);
    if (!block.IsMap()) return r.bad(join_key(path, "config"), "must be a mapping");
    block["credentials"] = YAML::Clone(node["credentials"]);
  }
  if (auto ok = fill_settings(r, *registry().entry(kind->second), block, join_key(path, "config"), s); !ok)
    return std::unexpected(ok.error());
  if (node["enabled"]) {
    auto enabled = r.boolean(node["enabled"], join_key(path, "enabled"));
    if (!enabled) return std::unexpected(enabled.error());
    s.enabled = *enabled;
  }
  if (node["interval"]) {
    auto interval = r.period(node["interval"], join_key(path, "interval"));
    if (!interval) return std::unexpected(interval.error());
    s.interval = *interval;
  }
  return s;
}

std::expected<std::vector<SourceConfig>, Error> parse_source_list(const Reader& r, const YAML::Node& list,
                                                                  const std::string& path, bool volcano) {
  if (!list.IsSequence()) return r.bad(path, "must be a list of sources");
  if (list.size() == 0) return r.bad(path, "lists no source");
  std::vector<SourceConfig> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = indexed(path, i);
    auto s = volcano ? parse_volcano_entry(r, list[i], at) : parse_source(r, list[i], at);
    if (!s) return std::unexpected(s.error());
    for (std::size_t j = 0; j < out.size(); ++j) {
      if (out[j].kind == s->kind && out[j].config == s->config)
        return r.bad(at, "the same source as " + indexed(path, j) + " (" + s->spec() + ")");
    }
    out.push_back(std::move(*s));
  }
  return out;
}

// A label key prefix such as "hypertopo.io/tier-": the tier name is appended to make the key.
bool is_label_key_prefix(const std::string& prefix) {
  return !prefix.empty() && !topology::label_key_error(prefix + "1");
}

std::expected<void, Error> parse_sections(const Reader& r, const YAML::Node& root, AgentConfig& c) {
  if (const YAML::Node n = root["hostRoot"]) {
    auto root_dir = r.nonempty_text(n, "hostRoot");
    if (!root_dir) return std::unexpected(root_dir.error());
    c.host_root = *root_dir;
  }

  const YAML::Node sources = root["sources"];
  const YAML::Node volcano = root["networkTopologyDiscovery"];
  if (sources && volcano)
    return r.bad("networkTopologyDiscovery", "give either sources or networkTopologyDiscovery, not both");
  if (!sources && !volcano) return r.bad("sources", "is required (or Volcano's networkTopologyDiscovery)");
  auto list = sources ? parse_source_list(r, sources, "sources", false)
                      : parse_source_list(r, volcano, "networkTopologyDiscovery", true);
  if (!list) return std::unexpected(list.error());
  c.sources = std::move(*list);

  if (const YAML::Node n = root["nodeSelector"]) {
    if (auto ok = r.mapping(n, "nodeSelector", {"matchLabels"}); !ok) return ok;
    if (const YAML::Node match = n.IsMap() ? n["matchLabels"] : YAML::Node()) {
      if (!match.IsMap() && !match.IsNull())
        return r.bad("nodeSelector.matchLabels", "must be a mapping of label key to value");
      for (const auto& kv : match) {
        const std::string key = kv.first.Scalar();
        if (key.empty()) return r.bad("nodeSelector.matchLabels", "a label key must not be empty");
        auto value = r.text(kv.second, "nodeSelector.matchLabels." + key);
        if (!value) return std::unexpected(value.error());
        c.node_selector[key] = *value;
      }
    }
  }

  if (const YAML::Node n = root["guard"]) {
    if (auto ok = r.mapping(n, "guard", {"maxDeleteFraction", "minObjectsForGuard"}); !ok) return ok;
    if (n.IsMap() && n["maxDeleteFraction"]) {
      auto f = r.number(n["maxDeleteFraction"], "guard.maxDeleteFraction", 0, 1);
      if (!f) return std::unexpected(f.error());
      c.max_delete_fraction = *f;
    }
    if (n.IsMap() && n["minObjectsForGuard"]) {
      auto m = r.integer(n["minObjectsForGuard"], "guard.minObjectsForGuard", 0, 1'000'000);
      if (!m) return std::unexpected(m.error());
      c.min_objects_for_guard = static_cast<int>(*m);
    }
  }

  if (const YAML::Node n = root["leaderElection"]) {
    if (auto ok =
            r.mapping(n, "leaderElection", {"leaseName", "leaseDuration", "renewDeadline", "retryPeriod"});
        !ok)
      return ok;
    if (n.IsMap() && n["leaseName"]) {
      auto name = r.text(n["leaseName"], "leaderElection.leaseName");
      if (!name) return std::unexpected(name.error());
      // A Lease name is a DNS-1123 subdomain: the rule every object name we write follows.
      if (!topology::is_dns1123_subdomain(*name))
        return r.bad("leaderElection.leaseName",
                     "'" + *name + "' is not a valid object name (DNS-1123 subdomain)");
      c.lease_name = *name;
    }
    const std::pair<const char*, milliseconds*> timings[] = {{"leaseDuration", &c.lease_duration},
                                                             {"renewDeadline", &c.renew_deadline},
                                                             {"retryPeriod", &c.retry_period}};
    for (const auto& [key, target] : timings) {
      if (!n.IsMap() || !n[key]) continue;
      const std::string at = std::string("leaderElection.") + key;
      auto d = r.duration(n[key], at);
      if (!d) return std::unexpected(d.error());
      if (d->count() <= 0) return r.bad(at, "must be greater than 0");
      *target = *d;
    }
  }
  // client-go's LeaderElectionConfig checks (leaderelection.NewLeaderElector, JitterFactor 1.2).
  if (c.lease_duration <= c.renew_deadline)
    return r.bad("leaderElection.renewDeadline", "must be shorter than leaseDuration");
  if (c.renew_deadline.count() * 10 <= c.retry_period.count() * 12)
    return r.bad("leaderElection.retryPeriod",
                 "must be shorter than renewDeadline / 1.2 (client-go's jitter)");

  if (const YAML::Node n = root["reconcile"]) {
    if (auto ok = r.mapping(n, "reconcile", {"debounce", "resync"}); !ok) return ok;
    if (n.IsMap() && n["debounce"]) {
      auto d = r.duration(n["debounce"], "reconcile.debounce");
      if (!d) return std::unexpected(d.error());
      c.debounce = *d;
    }
    if (n.IsMap() && n["resync"]) {
      auto d = r.period(n["resync"], "reconcile.resync");
      if (!d) return std::unexpected(d.error());
      c.resync = *d;
    }
  }

  if (const YAML::Node n = root["exports"]) {
    if (auto ok = r.mapping(n, "exports", {"nodeLabels"}); !ok) return ok;
    if (const YAML::Node labels = n.IsMap() ? n["nodeLabels"] : YAML::Node()) {
      const std::string at = "exports.nodeLabels";
      if (auto ok = r.mapping(labels, at, {"enabled", "keyPrefix", "topographCompatible"}); !ok) return ok;
      if (labels.IsMap() && labels["enabled"]) {
        auto b = r.boolean(labels["enabled"], at + ".enabled");
        if (!b) return std::unexpected(b.error());
        c.export_node_labels = *b;
      }
      if (labels.IsMap() && labels["keyPrefix"]) {
        auto p = r.text(labels["keyPrefix"], at + ".keyPrefix");
        if (!p) return std::unexpected(p.error());
        if (!is_label_key_prefix(*p))
          return r.bad(at + ".keyPrefix", "'" + *p + "' cannot start a label key (e.g. hypertopo.io/tier-)");
        c.node_label_prefix = *p;
      }
      if (labels.IsMap() && labels["topographCompatible"]) {
        auto b = r.boolean(labels["topographCompatible"], at + ".topographCompatible");
        if (!b) return std::unexpected(b.error());
        c.topograph_labels = *b;
      }
    }
  }

  if (const YAML::Node n = root["http"]) {
    if (auto ok = r.mapping(n, "http", {"port"}); !ok) return ok;
    if (n.IsMap() && n["port"]) {
      auto port = r.integer(n["port"], "http.port", 1, 65535);
      if (!port) return std::unexpected(port.error());
      c.http_port = static_cast<std::uint16_t>(*port);
    }
  }

  if (const YAML::Node n = root["logLevel"]) {
    auto level = r.text(n, "logLevel");
    if (!level) return std::unexpected(level.error());
    if (std::find(kLogLevels.begin(), kLogLevels.end(), *level) == kLogLevels.end())
      return r.bad("logLevel", "unknown level '" + *level + "' (known: " + comma_list(kLogLevels) + ")");
    c.log_level = *level;
  }
  return {};
}

bool same_builder(const topology::TreeBuilderOptions& a, const topology::TreeBuilderOptions& b) {
  return a.node_by_endpoint == b.node_by_endpoint && a.known_nodes == b.known_nodes &&
         a.host_description_pattern == b.host_description_pattern &&
         a.excluded_device_patterns == b.excluded_device_patterns &&
         a.excluded_switch_patterns == b.excluded_switch_patterns &&
         a.firmware_description_patterns == b.firmware_description_patterns &&
         a.level_names == b.level_names && a.source == b.source;
}

std::string format_ms(milliseconds d) { return std::to_string(d.count()) + "ms"; }

}  // namespace

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

std::expected<AgentConfig, Error> parse_agent_config(const std::string& yaml_text, const std::string& name) {
  auto loaded = io::load_yaml(yaml_text, name);
  if (!loaded) return std::unexpected(loaded.error());
  YAML::Node root = *loaded;
  if (!root.IsMap()) return fail(ErrorCode::kInvalidArgument, name + ": expected a mapping at the top level");
  Reader r(name);
  AgentConfig config;
  try {
    std::vector<std::string> known = kTopLevelKeys;
    // The builder's own keys are handed to topology::parse_builder_config as one sub-document, so
    // that their checks and messages are the same as in a standalone builder config.
    const auto& builder_keys = topology::builder_config_keys();
    known.insert(known.end(), builder_keys.begin(), builder_keys.end());
    std::sort(known.begin(), known.end());
    if (auto ok = r.only_keys(root, known, ""); !ok) return std::unexpected(ok.error());

    // The builder keys, as a document of their own, through the builder's own parser.
    YAML::Node builder(YAML::NodeType::Map);
    for (const auto& entry : root) {
      if (std::ranges::find(builder_keys, entry.first.Scalar()) != builder_keys.end())
        builder[entry.first.Scalar()] = entry.second;
    }
    if (builder.size() > 0) {
      YAML::Emitter out;
      out << builder;
      auto options = topology::parse_builder_config(out.c_str(), name);
      if (!options) return std::unexpected(options.error());
      config.builder = std::move(*options);
    }
    if (auto ok = parse_sections(r, root, config); !ok) return std::unexpected(ok.error());
  } catch (const YAML::Exception& e) {
    // yaml-cpp throws on conversions the checks above did not foresee; still the file's fault.
    return fail(ErrorCode::kParse, name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return config;
}

std::expected<void, Error> apply_environment_overrides(AgentConfig& config) {
  constexpr const char* kVariable = "HYPERTOPO_EXPORT_NODE_LABELS";
  const char* value = std::getenv(kVariable);
  if (value == nullptr) return {};
  const std::string v = value;
  if (v == "true") {
    config.export_node_labels = true;
  } else if (v == "false") {
    config.export_node_labels = false;
  } else {
    return fail(ErrorCode::kInvalidArgument,
                std::string(kVariable) + ": must be true or false, not '" + v + "'");
  }
  return {};
}

std::expected<AgentConfig, Error> load_agent_config(const std::filesystem::path& path) {
  auto text = io::read_bounded_file(path, io::kConfigFileLimit);
  if (!text) return std::unexpected(text.error());
  auto config = parse_agent_config(*text, path.string());
  if (!config) return config;
  if (auto ok = apply_environment_overrides(*config); !ok) return std::unexpected(ok.error());
  return config;
}

ConfigChange diff_configs(const AgentConfig& before, const AgentConfig& after) {
  ConfigChange change;
  // Sources are identified by spec(); any difference in one (interval, enabled, credentials, inline
  // config) restarts it.
  std::map<std::string, std::pair<std::vector<SourceConfig>, std::vector<SourceConfig>>> by_spec;
  for (const auto& s : before.sources) by_spec[s.spec()].first.push_back(s);
  for (const auto& s : after.sources) by_spec[s.spec()].second.push_back(s);
  const bool root_changed = before.host_root != after.host_root;
  for (const auto& [spec, pair] : by_spec) {
    const auto& [old_list, new_list] = pair;
    const bool node_probe = !new_list.empty() ? new_list.front().role == SourceRole::kNodeProbe
                                              : old_list.front().role == SourceRole::kNodeProbe;
    if (old_list.empty()) {
      change.notes.push_back("sources: added " + spec);
    } else if (new_list.empty()) {
      change.notes.push_back("sources: removed " + spec);
    } else if (old_list != new_list) {
      change.notes.push_back("sources: changed " + spec);
    } else if (root_changed && node_probe) {
      change.notes.push_back("sources: " + spec + " reads hostRoot, which changed");
    } else {
      continue;
    }
    change.restarted_sources.push_back(spec);
  }

  auto note = [&](const std::string& key, const std::string& from, const std::string& to) {
    if (from != to) change.notes.push_back(key + ": " + from + " -> " + to);
  };
  auto list = [](const std::vector<std::string>& items) { return "[" + comma_list(items) + "]"; };
  auto selector = [](const std::map<std::string, std::string>& labels) {
    std::string out;
    for (const auto& [k, v] : labels) out += (out.empty() ? "" : ", ") + k + "=" + v;
    return "{" + out + "}";
  };
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  auto number = [](double d) {
    std::ostringstream s;
    s << d;
    return s.str();
  };

  note("hostRoot", before.host_root.string(), after.host_root.string());
  if (!same_builder(before.builder, after.builder) || before.node_selector != after.node_selector) {
    change.builder_changed = true;
    note("tierNames", list(before.builder.level_names), list(after.builder.level_names));
    note("source", before.builder.source, after.builder.source);
    note("hostDescriptionPattern", before.builder.host_description_pattern,
         after.builder.host_description_pattern);
    note("excludedDevicePatterns", list(before.builder.excluded_device_patterns),
         list(after.builder.excluded_device_patterns));
    note("excludedSwitchPatterns", list(before.builder.excluded_switch_patterns),
         list(after.builder.excluded_switch_patterns));
    note("firmwareDescriptionPatterns", list(before.builder.firmware_description_patterns),
         list(after.builder.firmware_description_patterns));
    if (before.builder.node_by_endpoint != after.builder.node_by_endpoint)
      change.notes.push_back("guidMap: " + std::to_string(before.builder.node_by_endpoint.size()) + " -> " +
                             std::to_string(after.builder.node_by_endpoint.size()) + " entries");
    note("nodeSelector.matchLabels", selector(before.node_selector), selector(after.node_selector));
  }
  note("guard.maxDeleteFraction", number(before.max_delete_fraction), number(after.max_delete_fraction));
  note("guard.minObjectsForGuard", std::to_string(before.min_objects_for_guard),
       std::to_string(after.min_objects_for_guard));
  if (before.lease_name != after.lease_name) change.needs_restart = true;
  note("leaderElection.leaseName", before.lease_name, after.lease_name);
  note("leaderElection.leaseDuration", format_ms(before.lease_duration), format_ms(after.lease_duration));
  note("leaderElection.renewDeadline", format_ms(before.renew_deadline), format_ms(after.renew_deadline));
  note("leaderElection.retryPeriod", format_ms(before.retry_period), format_ms(after.retry_period));
  note("reconcile.debounce", format_ms(before.debounce), format_ms(after.debounce));
  note("reconcile.resync", std::to_string(before.resync.count()) + "s",
       std::to_string(after.resync.count()) + "s");
  note("exports.nodeLabels.enabled", flag(before.export_node_labels), flag(after.export_node_labels));
  note("exports.nodeLabels.keyPrefix", before.node_label_prefix, after.node_label_prefix);
  note("exports.nodeLabels.topographCompatible", flag(before.topograph_labels), flag(after.topograph_labels));
  if (before.http_port != after.http_port) change.needs_restart = true;
  note("http.port", std::to_string(before.http_port), std::to_string(after.http_port));
  note("logLevel", before.log_level, after.log_level);
  return change;
}

}  // namespace hypertopo::agent
