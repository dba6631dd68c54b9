#include "topology/builder_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "io/bounded_file.h"
#include "io/config_reader.h"
#include "io/yaml_reader.h"
#include "topology/label_rules.h"

namespace hypertopo::topology {
namespace {

std::expected<TreeBuilderOptions, Error> parse_builder_document(const YAML::Node& root,
                                                                const std::string& name,
                                                                TreeBuilderOptions o) {
  if (root.IsNull()) return o;
  if (!root.IsMap()) return fail(ErrorCode::kInvalidArgument, name + ": expected a mapping at the top level");
  const io::ConfigReader r(name);
  if (auto ok = r.only_keys(root, builder_config_keys(), ""); !ok) return std::unexpected(ok.error());
  for (const auto& kv : root) {
    const std::string& key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (key == "source") {
      auto source = r.nonempty_text(v, key);
      if (!source) return std::unexpected(source.error());
      // It becomes the value of volcano.sh/network-topology-source on every object we write.
      if (auto why = label_value_error(*source)) return r.bad(key, *why);
      o.source = *source;
    } else if (key == "tierNames") {
      auto l = r.strings(v, key);
      if (!l) return std::unexpected(l.error());
      // Two levels of one name would make highestTierName (and Kueue's levels) ambiguous.
      std::set<std::string> seen;
      for (std::size_t i = 0; i < l->size(); ++i) {
        const std::string& t = (*l)[i];
        if (t.empty() || t.size() > 253) return r.bad(io::indexed(key, i), "must be 1 to 253 characters");
        // A tier name becomes part of HyperNode names, spec.tierName and the level names others read:
        // printable ASCII only, refused here rather than failing later without the file and key.
        for (const char c : t) {
          const auto byte = static_cast<unsigned char>(c);
          if (byte < 0x20 || byte > 0x7e) {
            return r.bad(io::indexed(key, i), "'" + t +
                                                  "' has a character that is not printable ASCII (byte 0x" +
                                                  std::string(1, "0123456789abcdef"[byte >> 4]) +
                                                  std::string(1, "0123456789abcdef"[byte & 15]) + ")");
          }
        }
        if (!seen.insert(t).second) return r.bad(io::indexed(key, i), "'" + t + "' is named twice");
      }
      o.level_names = *l;
    } else if (key == "hostDescriptionPattern") {
      auto pattern = r.text(v, key);
      if (!pattern) return std::unexpected(pattern.error());
      o.host_description_pattern = *pattern;
      auto p = text::UserPattern::compile(*pattern);
      if (!p) return r.bad(key, "'" + *pattern + "': " + p.error());
      if (p->group_count() < 1)
        return r.bad(key, "'" + *pattern + "' needs one capture group for the host name");
    } else if (key == "excludedDevicePatterns" || key == "excludedSwitchPatterns" ||
               key == "firmwareDescriptionPatterns" || key == "appliancePatterns" || key == "keepHosts") {
      auto l = r.strings(v, key);
      if (!l) return std::unexpected(l.error());
      if (auto p = text::compile_patterns(*l, io::config_message(name, key, ""), {.case_insensitive = true});
          !p)
        return fail(ErrorCode::kInvalidArgument, p.error());
      (key == "excludedDevicePatterns"        ? o.excluded_device_patterns
       : key == "excludedSwitchPatterns"      ? o.excluded_switch_patterns
       : key == "firmwareDescriptionPatterns" ? o.firmware_description_patterns
       : key == "appliancePatterns"           ? o.appliance_patterns
                                              : o.keep_host_patterns) = *l;
    } else if (key == "guidMap") {
      if (!v.IsMap()) return r.bad(key, "must map GUIDs to node names");
      for (const auto& g : v) {
        // A key that is no scalar throws here; parse_builder_config reports it with its line.
        const std::string text = g.first.as<std::string>();
        auto guid = normalize_guid(text);
        if (!guid) return r.bad(io::key_path(key, text), "not a GUID");
        auto node = r.text(g.second, io::key_path(key, *guid));
        if (!node) return r.bad(io::key_path(key, *guid), "must be a node name");
        o.node_by_endpoint[*guid] = *node;
      }
    }
  }
  // Patterns are compiled here so that a bad one is reported against this file.
  if (auto b = TreeBuilder::create(o); !b) return std::unexpected(b.error().context(name));
  return o;
}

}  // namespace

const std::vector<std::string>& builder_config_keys() {
  static const std::vector<std::string> keys = {"source",
                                                "tierNames",
                                                "hostDescriptionPattern",
                                                "excludedDevicePatterns",
                                                "excludedSwitchPatterns",
                                                "firmwareDescriptionPatterns",
                                                "guidMap",
                                                "appliancePatterns",
                                                "keepHosts"};
  return keys;
}

std::expected<TreeBuilderOptions, Error> parse_builder_config(const std::string& text,
                                                              const std::string& name, TreeBuilderOptions o) {
  auto loaded = io::load_yaml(text, name);
  if (!loaded) return std::unexpected(loaded.error());
  try {
    return parse_builder_document(*loaded, name, std::move(o));
  } catch (const YAML::Exception& e) {
    // A conversion the checks did not foresee (a mapping used as a key, a list as a name).
    return fail(ErrorCode::kInvalidArgument,
                name + ":" + std::to_string(e.mark.line + 1) + ": wrong type: " + e.msg);
  }
}

std::expected<TreeBuilderOptions, Error> load_builder_config(const std::filesystem::path& path,
                                                             TreeBuilderOptions base) {
  auto text = io::read_bounded_file(path, io::kConfigFileLimit);
  if (!text) return std::unexpected(text.error());
  return parse_builder_config(*text, path.string(), std::move(base));
}

std::expected<void, Error> load_guid_map(const std::filesystem::path& path, TreeBuilderOptions& options) {
  auto text = io::read_bounded_file(path, io::kDataFileLimit);
  if (!text) return std::unexpected(text.error());
  std::istringstream in(std::move(*text));
  std::string line;
  std::size_t n = 0;
  std::map<std::string, std::size_t> line_of;  // GUID -> the line that mapped it
  while (std::getline(in, line)) {
    ++n;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string guid, node, extra;
    if (!(fields >> guid)) continue;
    if (!(fields >> node) || (fields >> extra)) {
      return fail(ErrorCode::kParse,
                  path.string() + ":" + std::to_string(n) + ": expected '<guid> <node name>'");
    }
    auto g = normalize_guid(guid);
    if (!g)
      return fail(ErrorCode::kParse,
                  path.string() + ":" + std::to_string(n) + ": '" + guid + "' is not a GUID");
    // A GUID listed twice for two nodes: whichever won, one node would get the other's HCA.
    if (auto [seen, first] = line_of.try_emplace(*g, n); !first && options.node_by_endpoint[*g] != node) {
      return fail(ErrorCode::kParse, path.string() + ":" + std::to_string(n) + ": GUID " + guid +
                                         " is mapped to " + node + " here and to " +
                                         options.node_by_endpoint[*g] + " on line " +
                                         std::to_string(seen->second));
    }
    options.node_by_endpoint[*g] = node;
  }
  return {};
}

}  // namespace hypertopo::topology
