// `hypertopo agent --config FILE`: the file's top level (its known keys, hostRoot, the builder's
// keys handed to the builder's own parser), the sections in order, and the environment overrides.
#include "agent/config/agent_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>

#include "agent/config/config_sections.h"
#include "io/bounded_file.h"
#include "io/config_reader.h"
#include "io/yaml_reader.h"
#include "topology/builder_config.h"

namespace hypertopo::agent {
namespace {

const std::vector<std::string> kTopLevelKeys = {"hostRoot",     "sources",  "networkTopologyDiscovery",
                                                "nodeSelector", "guard",    "leaderElection",
                                                "reconcile",    "exports",  "http",
                                                "logLevel",     "apiClient"};

// The sections in the order the file documents them; the first bad one is reported.
std::expected<void, Error> read_sections(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c) {
  if (const YAML::Node n = root["hostRoot"]) {
    auto root_dir = r.nonempty_text(n, "hostRoot");
    if (!root_dir) return std::unexpected(root_dir.error());
    c.host_root = *root_dir;
  }
  using Section = std::expected<void, Error> (*)(const io::ConfigReader&, const YAML::Node&, AgentConfig&);
  for (Section read_section :
       {sections::read_sources, sections::read_node_selector, sections::read_guard,
        sections::read_leader_election, sections::read_reconcile, sections::read_exports, sections::read_http,
        sections::read_log_level, sections::read_api_client}) {
    if (auto ok = read_section(r, root, c); !ok) return ok;
  }
  return {};
}

}  // namespace

std::expected<AgentConfig, Error> parse_agent_config(const std::string& yaml_text, const std::string& name) {
  auto loaded = io::load_yaml(yaml_text, name);
  if (!loaded) return std::unexpected(loaded.error());
  YAML::Node root = *loaded;
  if (!root.IsMap()) return fail(ErrorCode::kInvalidArgument, name + ": expected a mapping at the top level");
  const io::ConfigReader r(name);
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
    if (auto ok = read_sections(r, root, config); !ok) return std::unexpected(ok.error());
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

}  // namespace hypertopo::agent
