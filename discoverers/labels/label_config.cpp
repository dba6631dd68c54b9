#include "discoverers/labels/label_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "io/bounded_file.h"
#include "io/config_reader.h"
#include "io/yaml_reader.h"

namespace hypertopo::discoverers::labels {
namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
}

// A Kubernetes label key: [DNS-1123 subdomain prefix "/"] name, the name at most 63 characters of
// alphanumerics, '-', '_' and '.', alphanumeric at both ends. A key that breaks this can never be on
// a node, so a config naming one is wrong.
bool is_label_key(const std::string& key) {
  auto name_ok = [](std::string_view n) {
    return !n.empty() && n.size() <= 63 && std::isalnum(static_cast<unsigned char>(n.front())) != 0 &&
           std::isalnum(static_cast<unsigned char>(n.back())) != 0 &&
           std::all_of(n.begin(), n.end(), is_name_char);
  };
  const auto slash = key.find('/');
  if (slash == std::string::npos) return name_ok(key);
  std::string_view prefix(key.data(), slash);
  std::string_view name(key.data() + slash + 1, key.size() - slash - 1);
  if (prefix.empty() || prefix.size() > 253 || name.find('/') != std::string_view::npos) return false;
  auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_alnum(prefix.front()) || !lower_alnum(prefix.back())) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    const char c = prefix[i];
    if (!lower_alnum(c) && c != '-' && c != '.') return false;
    if (c == '.' && (!lower_alnum(prefix[i - 1]) || !lower_alnum(prefix[i + 1]))) return false;
  }
  return name_ok(name);
}

std::unexpected<Error> bad(const std::string& file, const std::string& key, const std::string& what) {
  return io::config_error(file, key, what);
}

using io::key_path;

bool is_text(const YAML::Node& n) { return n.IsScalar(); }

std::expected<void, Error> only_keys(const YAML::Node& map, const std::vector<std::string>& known,
                                     const std::string& file, const std::string& path) {
  return io::ConfigReader(file).only_keys(map, known, path);
}

// One list of levels (top to bottom, the node-level label last) into a type.
std::expected<LabelTopologyType, Error> parse_levels(const std::string& type_name, const YAML::Node& list,
                                                     const std::string& file, const std::string& path,
                                                     bool last_is_always_node_level,
                                                     bool tier_names_allowed) {
  if (!list.IsSequence()) return bad(file, path, "must be a list of {nodeLabel: KEY}, top level first");
  LabelTopologyType type;
  type.name = type_name;
  std::set<std::string> seen;
  std::vector<std::string> keys;
  std::vector<std::string> tier_names;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    const YAML::Node& entry = list[i];
    if (!entry.IsMap()) return bad(file, at, "must be a mapping with a nodeLabel");
    const std::vector<std::string> allowed = tier_names_allowed
                                                 ? std::vector<std::string>{"nodeLabel", "tierName"}
                                                 : std::vector<std::string>{"nodeLabel"};
    if (auto ok = only_keys(entry, allowed, file, at); !ok) return std::unexpected(ok.error());
    std::string tier_name;
    if (const YAML::Node t = entry["tierName"]) {
      auto name = io::ConfigReader(file).text(t, at + ".tierName");
      if (!name) return std::unexpected(name.error());
      tier_name = *name;
      // The CRD's limit on spec.tierName.
      if (tier_name.empty() || tier_name.size() > 253)
        return bad(file, at + ".tierName", "must be 1 to 253 characters");
    }
    tier_names.push_back(tier_name);
    const YAML::Node label = entry["nodeLabel"];
    if (!label) return bad(file, at + ".nodeLabel", "is required");
    auto text = io::ConfigReader(file).text(label, at + ".nodeLabel");
    if (!text) return std::unexpected(text.error());
    const std::string& key = *text;
    if (!is_label_key(key)) return bad(file, at + ".nodeLabel", "'" + key + "' is not a valid label key");
    if (!seen.insert(key).second) return bad(file, at + ".nodeLabel", "'" + key + "' is listed twice");
    keys.push_back(key);
  }
  if (keys.empty()) return bad(file, path, "must list at least one level above the node-level label");
  if (last_is_always_node_level || keys.back() == kHostnameLabel) {
    type.node_label = keys.back();
    keys.pop_back();
    tier_names.pop_back();
  }
  if (keys.empty()) {
    return bad(file, path,
               "lists only the node-level label '" + type.node_label + "'; add the levels above it");
  }
  type.levels = std::move(keys);
  type.tier_names = std::move(tier_names);
  return type;
}

// The newer Volcano form of one type: {nodeSelector: {matchLabels: {...}}, levels: [...]}.
std::expected<LabelTopologyType, Error> parse_profile(const std::string& type_name, const YAML::Node& map,
                                                      const std::string& file, const std::string& path) {
  if (auto ok = only_keys(map, {"levels", "nodeSelector"}, file, path); !ok)
    return std::unexpected(ok.error());
  // The type's name becomes a label value on every object it produces.
  const bool value_ok = type_name.size() <= 63 && !type_name.empty() &&
                        std::isalnum(static_cast<unsigned char>(type_name.front())) != 0 &&
                        std::isalnum(static_cast<unsigned char>(type_name.back())) != 0 &&
                        std::all_of(type_name.begin(), type_name.end(), is_name_char);
  if (!value_ok)
    return bad(file, path, "a topology type with levels must be named as a label value (<= 63 characters)");
  if (!map["levels"]) return bad(file, key_path(path, "levels"), "is required");
  auto type = parse_levels(type_name, map["levels"], file, key_path(path, "levels"),
                           /*last_is_always_node_level=*/true, /*tier_names_allowed=*/true);
  if (!type) return type;
  type->profile_label = true;
  if (const YAML::Node selector = map["nodeSelector"]) {
    const std::string at = key_path(path, "nodeSelector");
    if (!selector.IsMap()) return bad(file, at, "must be a mapping with matchLabels");
    if (auto ok = only_keys(selector, {"matchLabels"}, file, at); !ok) return std::unexpected(ok.error());
    const YAML::Node match = selector["matchLabels"];
    if (match) {
      if (!match.IsMap()) return bad(file, at + ".matchLabels", "must be a mapping of label key to value");
      for (const auto& kv : match) {
        const auto key = kv.first.as<std::string>();
        if (!is_label_key(key))
          return bad(file, at + ".matchLabels", "'" + key + "' is not a valid label key");
        auto value = io::ConfigReader(file).text(kv.second, at + ".matchLabels." + key);
        if (!value) return std::unexpected(value.error());
        type->node_selector[key] = *value;
      }
    }
  }
  return type;
}

// networkTopologyTypes: {<type>: [{nodeLabel}, ...], ...}
std::expected<LabelConfig, Error> parse_types_map(const YAML::Node& types, const std::string& file,
                                                  const std::string& path) {
  if (!types.IsMap()) return bad(file, path, "must be a mapping of topology type to its list of levels");
  if (types.size() == 0) return bad(file, path, "names no topology type");
  LabelConfig config;
  for (const auto& entry : types) {
    const auto name = entry.first.as<std::string>();
    // Volcano lists the hostname label last by convention and drops it whatever it is.
    auto type = entry.second.IsMap()
                    ? parse_profile(name, entry.second, file, key_path(path, name))
                    : parse_levels(name, entry.second, file, key_path(path, name),
                                   /*last_is_always_node_level=*/true, /*tier_names_allowed=*/false);
    if (!type) return std::unexpected(type.error());
    // Volcano takes the last entry for the node level whatever it is: a topology label listed last
    // (the three EKS layers, say) silently loses its tier.
    if (type->node_label != kHostnameLabel) {
      config.notes.push_back(
          io::config_message(file, key_path(path, name),
                             "the last entry '" + type->node_label +
                                 "' is taken as the node level and dropped, as Volcano does, "
                                 "so its tier is lost; list " +
                                 kHostnameLabel + " last"));
    }
    config.types.push_back(std::move(*type));
  }
  return config;
}

// `config: {networkTopologyTypes: ...}`, the label source's own section.
std::expected<LabelConfig, Error> parse_config_section(const YAML::Node& section, const std::string& file,
                                                       const std::string& path) {
  if (!section.IsMap()) return bad(file, path, "must be a mapping with networkTopologyTypes");
  if (auto ok = only_keys(section, {"networkTopologyTypes"}, file, path); !ok)
    return std::unexpected(ok.error());
  if (!section["networkTopologyTypes"])
    return bad(file, key_path(path, "networkTopologyTypes"), "is required");
  return parse_types_map(section["networkTopologyTypes"], file, key_path(path, "networkTopologyTypes"));
}

// Volcano's controller config: the entry with `source: label`.
std::expected<LabelConfig, Error> parse_discovery_list(const YAML::Node& list, const std::string& file) {
  const std::string path = "networkTopologyDiscovery";
  if (!list.IsSequence()) return bad(file, path, "must be a list of discovery sources");
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!list[i].IsMap()) return bad(file, at, "must be a mapping");
    const YAML::Node source = list[i]["source"];
    if (!source || !is_text(source)) return bad(file, at + ".source", "must be a string");
    if (source.as<std::string>() != "label") continue;
    if (found)
      return bad(file, at, "a second 'source: label' entry (the first is [" + std::to_string(*found) + "])");
    found = i;
  }
  if (!found) return bad(file, path, "has no entry with 'source: label'");
  const std::string at = path + "[" + std::to_string(*found) + "]";
  const YAML::Node entry = list[*found];
  if (auto ok = only_keys(entry, {"source", "enabled", "interval", "credentials", "config"}, file, at); !ok) {
    return std::unexpected(ok.error());
  }
  if (!entry["config"]) return bad(file, at + ".config", "is required (it holds networkTopologyTypes)");
  auto config = parse_config_section(entry["config"], file, at + ".config");
  if (!config) return config;
  if (const YAML::Node enabled = entry["enabled"]) {
    auto on = io::ConfigReader(file).boolean(enabled, at + ".enabled");
    if (!on) return std::unexpected(on.error());
    if (!*on) {
      config->notes.push_back(file + ": " + at +
                              " has 'enabled: false'; it is used because a labels source was asked for");
    }
  }
  return config;
}

// A Kueue Topology object: spec.levels[].nodeLabel, highest first.
std::expected<LabelTopologyType, Error> parse_kueue_topology(const YAML::Node& doc, const std::string& file,
                                                             const std::string& where) {
  const YAML::Node name = doc["metadata"] ? doc["metadata"]["name"] : YAML::Node();
  if (!name || !is_text(name)) return bad(file, where + "metadata.name", "must be a string");
  const YAML::Node spec = doc["spec"];
  if (!spec || !spec.IsMap()) return bad(file, where + "spec", "must be a mapping with levels");
  if (!spec["levels"]) return bad(file, where + "spec.levels", "is required");
  // Kueue's lowest level need not be the hostname; only a hostname level is the node level.
  return parse_levels(name.as<std::string>(), spec["levels"], file, where + "spec.levels",
                      /*last_is_always_node_level=*/false, /*tier_names_allowed=*/false);
}

bool is_kueue_topology(const YAML::Node& doc) {
  return doc.IsMap() && doc["kind"] && is_text(doc["kind"]) && doc["kind"].as<std::string>() == "Topology";
}

std::expected<LabelConfig, Error> finish(LabelConfig config, const std::string& file) {
  std::sort(config.types.begin(), config.types.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  for (std::size_t i = 1; i < config.types.size(); ++i) {
    if (config.types[i].name == config.types[i - 1].name) {
      return bad(file, config.types[i].name, "topology type named twice");
    }
  }
  return config;
}

}  // namespace

std::expected<LabelConfig, Error> parse_label_config(const YAML::Node& doc, const std::string& file) {
  if (!doc.IsMap()) {
    return fail(ErrorCode::kInvalidArgument,
                file +
                    ": expected a mapping (networkTopologyDiscovery, config, networkTopologyTypes or a Kueue "
                    "Topology)");
  }
  if (is_kueue_topology(doc)) {
    auto type = parse_kueue_topology(doc, file, "");
    if (!type) return std::unexpected(type.error());
    LabelConfig config;
    config.types.push_back(std::move(*type));
    return finish(std::move(config), file);
  }
  if (doc["networkTopologyDiscovery"]) {
    auto config = parse_discovery_list(doc["networkTopologyDiscovery"], file);
    if (!config) return config;
    return finish(std::move(*config), file);
  }
  if (doc["networkTopologyTypes"]) {
    if (auto ok = only_keys(doc, {"networkTopologyTypes"}, file, ""); !ok) return std::unexpected(ok.error());
    auto config = parse_types_map(doc["networkTopologyTypes"], file, "networkTopologyTypes");
    if (!config) return config;
    return finish(std::move(*config), file);
  }
  if (doc["config"]) {
    auto config = parse_config_section(doc["config"], file, "config");
    if (!config) return config;
    std::string others;
    for (const auto& entry : doc) {
      const auto key = entry.first.as<std::string>();
      if (key != "config") others += (others.empty() ? "" : ", ") + key;
    }
    if (!others.empty())
      config->notes.push_back(file + ": ignored top-level keys beside 'config': " + others);
    return finish(std::move(*config), file);
  }
  return fail(ErrorCode::kInvalidArgument,
              file +
                  ": none of networkTopologyDiscovery, config, networkTopologyTypes, or a Kueue Topology "
                  "(kind: Topology) found");
}

static std::expected<LabelConfig, Error> parse_label_documents(const std::vector<YAML::Node>& docs,
                                                               const std::string& file);

std::expected<LabelConfig, Error> parse_label_config(const std::string& yaml_text, const std::string& file) {
  std::vector<YAML::Node> docs;
  auto loaded = io::load_all_yaml(yaml_text, file);
  if (!loaded) return std::unexpected(loaded.error());
  for (auto& d : *loaded) {
    if (!d.IsNull()) docs.push_back(std::move(d));
  }
  if (docs.empty())
    return fail(ErrorCode::kInvalidArgument, file + ": empty; expected a label topology config");
  try {
    return parse_label_documents(docs, file);
  } catch (const YAML::Exception& e) {
    // A conversion the checks did not foresee (a mapping used as a key, a list as a name).
    return fail(ErrorCode::kInvalidArgument,
                file + ":" + std::to_string(e.mark.line + 1) + ": wrong type: " + e.msg);
  }
}

static std::expected<LabelConfig, Error> parse_label_documents(const std::vector<YAML::Node>& docs,
                                                               const std::string& file) {
  if (docs.size() == 1) return parse_label_config(docs.front(), file);
  // Several documents: one Kueue Topology each (kubectl get topologies -o yaml split by ---).
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (!is_kueue_topology(docs[i])) {
      return bad(file, "document " + std::to_string(i + 1),
                 "several documents must each be a Kueue Topology");
    }
  }
  LabelConfig config;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const std::string where = "document " + std::to_string(i + 1) + ": ";
    auto type = parse_kueue_topology(docs[i], file, where);
    if (!type) return std::unexpected(type.error());
    config.types.push_back(std::move(*type));
  }
  return finish(std::move(config), file);
}

std::expected<LabelConfig, Error> parse_label_types(const YAML::Node& types, const std::string& file,
                                                    const std::string& path) {
  try {
    auto config = parse_types_map(types, file, path);
    if (!config) return config;
    return finish(std::move(*config), file);
  } catch (const YAML::Exception& e) {
    // A conversion the checks did not foresee (a mapping used as a key, a list as a name).
    return io::config_error(file, path, "wrong type: " + e.msg);
  }
}

std::expected<LabelConfig, Error> load_label_config(const std::filesystem::path& path) {
  auto text = io::read_bounded_file(path, io::kConfigFileLimit);
  if (!text) return std::unexpected(text.error().context("label topology config"));
  return parse_label_config(*text, path.string());
}

}  // namespace hypertopo::discoverers::labels
