// discoverers/labels/label_tree.h: HyperNodes from node labels, as Volcano's label discoverer makes them.
//
// For each topology type the label just above the node level is tier 1, the one above it tier 2, and
// so on; a tier-k domain is one value of that tier's label, its tierName the label KEY (or the level's
// explicit tierName), and the object carries `<label key>: <value>`. A type with a nodeSelector only
// takes the nodes that match it; nodes no type takes are out of scope and not reported. A node's walk starts
// at tier 1 and stops at the first label it lacks: a node without the tier-1 label joins no HyperNode of that
// type, one without the tier-2 label joins only its tier-1 domain (Volcano's semantics). Such nodes are
// listed in the report. Domains are identified by label value per tier (again as Volcano does), so a tier-k
// value whose nodes name two different tier-(k+1) values is a conflict, reported as an error, never guessed.
//
//   auto config = load_label_config("labels.yaml");
//   auto tree = build_label_tree(*config, *node_list);   // std::expected<topology::Tree, Error>
//   for (const auto& w : tree->report.warnings) std::cerr << w << "\n";
#pragma once

#include <cstddef>
#include <expected>
#include <string>

#include "discoverers/labels/label_config.h"
#include "errors/error.h"
#include "k8s/objects/node_list.h"
#include "topology/tree.h"

namespace hypertopo::discoverers::labels {

// HyperNodes are referenced by name from their parent's members, and Volcano's admission policy
// requires those names to be Kubernetes qualified names: at most 63 characters.
inline constexpr std::size_t kMaxDomainNameLength = 63;

// Set (to the type's name) on the objects of types written in the newer Volcano form, as Volcano does.
inline constexpr const char* kProfileLabel = "volcano.sh/network-topology-profile";

// "<type>-tier<k>-<value>", lower-cased to a DNS-1123 name. Where that loses information (upper case,
// characters outside [a-z0-9-], an empty value) or runs past kMaxDomainNameLength, a stable 8-hex
// hash of the raw type and value is appended (after shortening), so names depend only on what the
// domain is and never on which other values exist.
std::string label_domain_name(const std::string& type, int tier, const std::string& value);

std::expected<topology::Tree, Error> build_label_tree(const LabelConfig& config, const k8s::NodeList& nodes);

}  // namespace hypertopo::discoverers::labels
