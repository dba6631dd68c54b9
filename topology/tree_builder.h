// topology/tree_builder.h: the tier rule, from a FabricGraph to a Tree.
//
// A switch's level is its hop distance from the nearest compute host (leaf = 1, spine = 2, core =
// 3). Two hosts share a tier-k domain when they are connected using only switches of level <= k;
// hosts with several rails bridge their rail leaves, so a rail-optimised scalable unit is one tier-1
// domain. A level is emitted as a tier only where it merges something, and emitted tiers are
// numbered 1, 2, ... from the bottom. Names come from the domain's anchor switch (the
// lexicographically smallest switch of that level in the domain), never from list position.
//
//   TreeBuilderOptions opts;                 // defaults: rdma-ndd "%h %d" descriptions
//   opts.excluded_device_patterns = {"mlx5_[89]"};
//   auto builder = TreeBuilder::create(opts);       // std::expected<TreeBuilder, Error>
//   auto tree = builder->build(graph);               // std::expected<Tree, Error>
//   if (tree) print(tree->report.unmapped_endpoints.size());
#pragma once

#include <expected>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "errors/error.h"
#include "text/user_pattern.h"
#include "topology/fabric_graph.h"
#include "topology/tree.h"

namespace hypertopo::topology {

struct TreeBuilderOptions {
  // Endpoint id (normalised GUID or MAC) -> Kubernetes node name. Wins over descriptions.
  std::unordered_map<std::string, std::string> node_by_endpoint;
  // When set, only these hosts are compute nodes; other hosts are excluded and listed.
  std::optional<std::set<std::string>> known_nodes;
  // RE2 regular expression with one capture group for the host name, applied to node descriptions.
  // Default: rdma-ndd's "%h %d" (host, a space, the device).
  std::string host_description_pattern = R"(^\s*([A-Za-z0-9][A-Za-z0-9_.-]*)\s+\S+\s*$)";
  // Endpoints whose device name (from the description or the source) matches are storage or
  // management HCAs, never compute.
  std::vector<std::string> excluded_device_patterns;
  // Switches whose name matches are cut out of the fabric (storage / management fabrics).
  std::vector<std::string> excluded_switch_patterns;
  // Without known_nodes (no Node list says which hosts are nodes), a host is set aside, not made a
  // node, when its name is a generic default (localhost, ubuntu, ...) or a switch's name, or when its
  // name or an HCA's node description matches one of these appliance patterns (case-insensitive,
  // anywhere in the text): a UFM server ("b11-p1-cufm-02", "ufm-01") by default. All of them are
  // named in one warning.
  std::vector<std::string> appliance_patterns = {R"((^|[^a-z0-9])c?ufm([^a-z]|$))"};
  // Host names (whole name, case-insensitive) that stay compute nodes whatever the rule above says.
  std::vector<std::string> keep_host_patterns;
  // Descriptions that are firmware defaults, not host names (matched case-insensitively).
  std::vector<std::string> firmware_description_patterns = {R"(^MT\d+\b.*)", R"(.*Mellanox Technologies.*)",
                                                            R"(^ConnectX.*)", R"(.*NVIDIA.*Technologies.*)"};
  // Tier name for each switch level (1 = leaf). Levels beyond the list are "tier-<level>".
  std::vector<std::string> level_names = {"leaf", "spine", "core"};
  // Value of volcano.sh/network-topology-source on the objects.
  std::string source = "hypertopo";
  // Run the fabric health pass (fabric_health.h) on the built tree: Domain::health.
  bool assess_health = true;
};

// Switch name used for domain names: the description's system part ("MF0;A09-P1-IBLEAF-01:MQM9701/U1"
// -> "a09-p1-ibleaf-01"), or the GUID when the description is a firmware default or not unique.
std::string switch_display_name(const Vertex& sw);

class TreeBuilder {
 public:
  // Fails when a pattern in the options is not a valid regular expression (the error names it).
  static std::expected<TreeBuilder, Error> create(TreeBuilderOptions options = {});
  std::expected<Tree, Error> build(const FabricGraph& graph) const;
  const TreeBuilderOptions& options() const { return options_; }

  // The host a description names, per host_description_pattern; nullopt for firmware defaults.
  std::optional<std::string> host_from_description(std::string_view description) const;

 private:
  TreeBuilder() = default;
  bool is_firmware_description(std::string_view description) const;

  TreeBuilderOptions options_;
  bool default_host_pattern_ = true;
  bool default_firmware_patterns_ = true;
  std::optional<text::UserPattern> host_pattern_;
  std::vector<text::UserPattern> device_patterns_;
  std::vector<text::UserPattern> switch_patterns_;
  std::vector<text::UserPattern> firmware_patterns_;
  std::vector<text::UserPattern> appliance_patterns_;
  std::vector<text::UserPattern> keep_patterns_;
};

// Compiles a TreeBuilderOptions pattern list (case-insensitive), naming the offending pattern on error.
std::expected<std::vector<text::UserPattern>, Error> compile_patterns(
    const std::vector<std::string>& patterns, const std::string& what);

}  // namespace hypertopo::topology
