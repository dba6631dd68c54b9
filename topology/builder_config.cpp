#include "topology/builder_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

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

}  // namespace

std::expected<TreeBuilderOptions, Error> parse_builder_config(const std::string& text,
                                                              const std::string& name, TreeBuilderOptions o) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse,
                name + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (root.IsNull()) return o;
  if (!root.IsMap()) return fail(ErrorCode::kInvalidArgument, name + ": expected a mapping at the top level");
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    const std::string where = name + ": " + key;
    if (key == "source") {
      if (!v.IsScalar()) return fail(ErrorCode::kInvalidArgument, where + ": must be a string");
      o.source = v.as<std::string>();
      if (o.source.empty() || o.source.size() > 63) {
        return fail(ErrorCode::kInvalidArgument, where + ": must be 1 to 63 characters (a label value)");
      }
    } else if (key == "tierNames") {
      auto l = string_list(v, where);
      if (!l) return std::unexpected(l.error());
      o.level_names = *l;
    } else if (key == "hostDescriptionPattern") {
      if (!v.IsScalar()) return fail(ErrorCode::kInvalidArgument, where + ": must be a string");
      o.host_description_pattern = v.as<std::string>();
    } else if (key == "excludedDevicePatterns" || key == "excludedSwitchPatterns" ||
               key == "firmwareDescriptionPatterns") {
      auto l = string_list(v, where);
      if (!l) return std::unexpected(l.error());
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

std::expected<TreeBuilderOptions, Error> load_builder_config(const std::filesystem::path& path,
                                                             TreeBuilderOptions base) {
  std::ifstream in(path);
  if (!in) return fail(ErrorCode::kNotFound, path.string() + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_builder_config(ss.str(), path.string(), std::move(base));
}

std::expected<void, Error> load_guid_map(const std::filesystem::path& path, TreeBuilderOptions& options) {
  std::ifstream in(path);
  if (!in) return fail(ErrorCode::kNotFound, path.string() + ": cannot open");
  std::string line;
  std::size_t n = 0;
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
    options.node_by_endpoint[*g] = node;
  }
  return {};
}

}  // namespace hypertopo::topology
