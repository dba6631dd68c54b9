#include "topology/builder_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "io/bounded_file.h"
#include "io/yaml_reader.h"
#include "topology/label_rules.h"

namespace hypertopo::topology {
namespace {

std::expected<std::vector<std::string>, Error> string_list(const YAML::Node& node, const std::string& where) {
  if (!node.IsSequence()) return fail(ErrorCode::kInvalidArgument, where + ": must be a list of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    if (!node[i].IsScalar()) {
      return fail(ErrorCode::kInvalidArgument, where + "[" + std::to_string(i) + "]: must be a string");
    }
    out.push_back(node[i].as<std::string>());
  }
  return out;
}

std::expected<TreeBuilderOptions, Error> parse_builder_document(const YAML::Node& root,
                                                                const std::string& name,
                                                                TreeBuilderOptions o) {
  if (root.IsNull()) return o;
  if (!root.IsMap()) return fail(ErrorCode::kInvalidArgument, name + ": expected a mapping at the top level");
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    const std::string where = name + ": " + key;
    if (key == "source") {
      if (!v.IsScalar()) return fail(ErrorCode::kInvalidArgument, where + ": must be a string");
      o.source = v.as<std::string>();
      // It becomes the value of volcano.sh/network-topology-source on every object we write.
      if (o.source.empty()) return fail(ErrorCode::kInvalidArgument, where + ": must not be empty");
      if (auto why = label_value_error(o.source))
        return fail(ErrorCode::kInvalidArgument, where + ": " + *why);
    } else if (key == "tierNames") {
      auto l = string_list(v, where);
      if (!l) return std::unexpected(l.error());
      // Two levels of one name would make highestTierName (and Kueue's levels) ambiguous.
      std::set<std::string> seen;
      for (std::size_t i = 0; i < l->size(); ++i) {
        const std::string& t = (*l)[i];
        if (t.empty() || t.size() > 253) {
          return fail(ErrorCode::kInvalidArgument,
                      where + "[" + std::to_string(i) + "]: must be 1 to 253 characters");
        }
        if (!seen.insert(t).second) {
          return fail(ErrorCode::kInvalidArgument,
                      where + "[" + std::to_string(i) + "]: '" + t + "' is named twice");
        }
      }
      o.level_names = *l;
    } else if (key == "hostDescriptionPattern") {
      if (!v.IsScalar()) return fail(ErrorCode::kInvalidArgument, where + ": must be a string");
      o.host_description_pattern = v.as<std::string>();
      auto p = text::UserPattern::compile(o.host_description_pattern);
      if (!p)
        return fail(ErrorCode::kInvalidArgument,
                    where + ": '" + o.host_description_pattern + "': " + p.error());
      if (p->group_count() < 1) {
        return fail(ErrorCode::kInvalidArgument, where + ": '" + o.host_description_pattern +
                                                     "' needs one capture group for the host name");
      }
    } else if (key == "excludedDevicePatterns" || key == "excludedSwitchPatterns" ||
               key == "firmwareDescriptionPatterns") {
      auto l = string_list(v, where);
      if (!l) return std::unexpected(l.error());
      if (auto p = text::compile_patterns(*l, where, {.case_insensitive = true}); !p) {
        return fail(ErrorCode::kInvalidArgument, p.error());
      }
      (key == "excludedDevicePatterns"   ? o.excluded_device_patterns
       : key == "excludedSwitchPatterns" ? o.excluded_switch_patterns
                                         : o.firmware_description_patterns) = *l;
    } else if (key == "guidMap") {
      if (!v.IsMap()) return fail(ErrorCode::kInvalidArgument, where + ": must map GUIDs to node names");
      for (const auto& g : v) {
        auto guid = normalize_guid(g.first.as<std::string>());
        if (!guid) {
          return fail(ErrorCode::kInvalidArgument, where + "." + g.first.as<std::string>() + ": not a GUID");
        }
        if (!g.second.IsScalar())
          return fail(ErrorCode::kInvalidArgument, where + "." + *guid + ": must be a node name");
        o.node_by_endpoint[*guid] = g.second.as<std::string>();
      }
    } else {
      return fail(
          ErrorCode::kInvalidArgument,
          where +
              ": unknown key (known: source, tierNames, hostDescriptionPattern, excludedDevicePatterns, "
              "excludedSwitchPatterns, firmwareDescriptionPatterns, guidMap)");
    }
  }
  // Patterns are compiled here so that a bad one is reported against this file.
  if (auto b = TreeBuilder::create(o); !b) return std::unexpected(b.error().context(name));
  return o;
}

}  // namespace

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
