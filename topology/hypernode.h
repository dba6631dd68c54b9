// topology/hypernode.h: a Tree rendered as Volcano HyperNode objects.
//
// topology.volcano.sh/v1alpha1 HyperNode, cluster-scoped: spec.tier, spec.tierName, spec.members
// (Node members with exactMatch at the lowest tier of each branch, HyperNode members with exactMatch
// above), labels volcano.sh/network-topology-source and app.kubernetes.io/managed-by: hypertopo.
//
//   nlohmann::json list = render_hypernode_list(tree);   // a v1 List, for -o json
//   std::string yaml = render_hypernodes_yaml(tree);     // multi-document, for kubectl apply -f -
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "topology/tree.h"

namespace hypertopo::topology {

inline constexpr const char* kHyperNodeApiVersion = "topology.volcano.sh/v1alpha1";
inline constexpr const char* kSourceLabel = "volcano.sh/network-topology-source";
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "hypertopo";
// Comma-separated nodes of the domain whose own link (host to leaf) is degraded, sorted: placement
// gives them pods last. Present only while there is one, so a healthy tree renders as before.
inline constexpr const char* kDegradedMembersAnnotation = "hypertopo.io/degraded-members";

// One HyperNode object (no status: status.nodeCount is written through /status). A domain whose
// health pass found degraded host links carries kDegradedMembersAnnotation.
nlohmann::json render_hypernode(const Tree& tree, DomainId id);
// The value of kDegradedMembersAnnotation for a domain ("h3,h7"), empty when no member's own link
// is degraded.
std::string degraded_members(const Domain& domain);
// The status.nodeCount Volcano's hyperNode-controller writes for a HyperNode with this spec
// (volcano-sh/volcano pkg/controllers/hypernode/hypernode_handler.go, syncHyperNodeStatus /
// actualNodeCnt): the number of distinct member names, each exactMatch name whatever the member
// type (a spine with 3 leaf members counts 3, not the 24 hosts below). regexMatch / labelMatch
// members add the Nodes they select, which only the Node list knows; render_hypernode emits
// exactMatch only, so for our objects this is Volcano's whole value. Writing anything else starts a
// write war with that controller; the subtree total lives in our own outputs (Tree::nodes_under).
std::size_t volcano_exact_member_count(const nlohmann::json& spec);
// The metav1.Condition hypertopo keeps in a HyperNode's status.conditions for its fabric health:
// type FabricDegraded, status "True" (reason: the worst of DomainHealth, message: the bad links) or
// "False" (reason FabricHealthy). lastTransitionTime is set only when `transition_time` is given:
// whoever writes the condition knows when it changed, a rendering does not.
inline constexpr const char* kFabricDegradedCondition = "FabricDegraded";
nlohmann::json fabric_degraded_condition(const DomainHealth& health, std::string_view transition_time = {});
// Every domain, ordered by tier then name. Given `observed_at` (RFC 3339, when the fabric was
// seen), a degraded domain carries its FabricDegraded condition in status.conditions with that
// lastTransitionTime (for people and for `place`; the reconciler writes it through /status).
nlohmann::json render_hypernode_list(const Tree& tree, std::string_view observed_at = {});
// How many of those domains carry that condition (what render_hypernode_list would give a status),
// counted without rendering them.
std::size_t hypernodes_with_status(const Tree& tree, std::string_view observed_at);
// JSON -> YAML text (block style), used for -o yaml and for manifests on disk.
std::string json_to_yaml(const nlohmann::json& value);
// "---"-separated documents, one HyperNode each, same order as the list.
std::string render_hypernodes_yaml(const Tree& tree, std::string_view observed_at = {});

}  // namespace hypertopo::topology
