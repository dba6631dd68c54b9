// topology/builder_config.h: the tree builder's settings as an admin writes them in YAML.
//
//   # discover.yaml
//   source: hypertopo                       # value of volcano.sh/network-topology-source
//   tierNames: [leaf, spine, core]          # name of each switch level, leaf first
//   hostDescriptionPattern: '^(\S+) \S+$'   # one capture group: the host in a node description
//   excludedDevicePatterns: ['mlx5_(8|9)']  # storage / management HCAs
//   excludedSwitchPatterns: ['STORAGE', 'MGMT']
//   guidMap: {"0xe09d7303007a4bd8": dgx-001}  # endpoint GUID -> node name
//   appliancePatterns: ['ufm', 'ddn-']       # without a Node list: hosts that are appliances
//   keepHosts: ['localhost', 'lab-ufm-.*']   # ... and hosts kept as compute nodes all the same
//
//   auto opts = load_builder_config("discover.yaml");   // std::expected<TreeBuilderOptions, Error>
//
// Unknown keys, wrong types and bad values are errors that name the file and the key, in the one
// format of io/config_reader.h ("discover.yaml: tierNames[1]: must be a string").
#pragma once

#include <expected>
#include <filesystem>
#include <string>
#include <vector>

#include "errors/error.h"
#include "topology/tree_builder.h"

namespace hypertopo::topology {

// The keys above, in that order (the agent's file accepts them too).
const std::vector<std::string>& builder_config_keys();

std::expected<TreeBuilderOptions, Error> load_builder_config(const std::filesystem::path& path,
                                                             TreeBuilderOptions base = {});
std::expected<TreeBuilderOptions, Error> parse_builder_config(const std::string& yaml_text,
                                                              const std::string& name,
                                                              TreeBuilderOptions base = {});

// Reads "<guid> <node>" lines ('#' comments) into options.node_by_endpoint.
std::expected<void, Error> load_guid_map(const std::filesystem::path& path, TreeBuilderOptions& options);

}  // namespace hypertopo::topology
