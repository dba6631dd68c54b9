// agent/config/config_sections.h: the readers of the agent config's sections, each defined in the
// file named beside it; parse_agent_config (agent_config.cpp) calls them in the file's order. Not
// part of the agent's interface: that is agent_config.h.
#pragma once

#include <yaml-cpp/yaml.h>

#include <expected>

#include "agent/config/agent_config.h"
#include "errors/error.h"
#include "io/config_reader.h"

namespace hypertopo::agent::sections {

// config_sources.cpp: `sources`, or Volcano's `networkTopologyDiscovery`, into c.sources.
std::expected<void, Error> read_sources(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c);

// config_runtime.cpp: how the agent runs and on which nodes.
std::expected<void, Error> read_node_selector(const io::ConfigReader& r, const YAML::Node& root,
                                              AgentConfig& c);
std::expected<void, Error> read_guard(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c);
std::expected<void, Error> read_leader_election(const io::ConfigReader& r, const YAML::Node& root,
                                                AgentConfig& c);
std::expected<void, Error> read_reconcile(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c);
std::expected<void, Error> read_http(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c);
std::expected<void, Error> read_log_level(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c);
std::expected<void, Error> read_api_client(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c);

// config_exports.cpp: `exports`, what the leader publishes besides HyperNodes.
std::expected<void, Error> read_exports(const io::ConfigReader& r, const YAML::Node& root, AgentConfig& c);

}  // namespace hypertopo::agent::sections
