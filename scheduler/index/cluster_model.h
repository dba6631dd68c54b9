// scheduler/index/cluster_model.h: the cluster as the scheduler sees it, free of Kubernetes client code.
//
// Loaders (scheduler/input) turn kubectl JSON into these plain structs; the TopologyIndex and the
// PlacementEngine read only these. Amounts are canonical integers (see quantity.h).
//
//   NodeSpec node{.name = "n1", .labels = {{"kubernetes.io/hostname", "n1"}},
//                 .allocatable = {{"cpu", 64000}, {"pods", 110}, {"nvidia.com/gpu", 8}}};
//   HyperNodeSpec rack{.name = "rack-1", .tier = 1,
//                      .members = {{HyperNodeMember::Type::kNode, MemberSelector::exact("n1")}}};
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/index/quantity.h"

namespace hypertopo::scheduler {

struct NodeTaint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
};

struct Toleration {
  std::string key;
  std::string op = "Equal";  // Equal or Exists
  std::string value;
  std::string effect;  // empty = every effect
  bool tolerates(const NodeTaint& taint) const;
};

struct NodeSpec {
  std::string name;
  std::map<std::string, std::string> labels;
  ResourceAmounts allocatable;
  std::vector<NodeTaint> taints;
  bool ready = true;
  bool unschedulable = false;
};

// A pod already bound to a node: its requests (plus pods: 1) count as used on that node.
struct BoundPod {
  std::string name;
  std::string node;
  ResourceAmounts requests;
};

struct LabelRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
};

// Exactly one of the three Volcano selector kinds.
struct MemberSelector {
  enum class Kind { kExact, kRegex, kLabel };
  Kind kind = Kind::kExact;
  std::string exact_name;
  std::string regex_pattern;
  std::map<std::string, std::string> match_labels;
  std::vector<LabelRequirement> match_expressions;

  static MemberSelector exact(std::string name) {
    MemberSelector s;
    s.exact_name = std::move(name);
    return s;
  }
  bool matches_labels(const std::map<std::string, std::string>& labels) const;
};

struct HyperNodeMember {
  enum class Type { kNode, kHyperNode };
  Type type = Type::kNode;
  MemberSelector selector;
};

// What a HyperNode says of its fabric health: its FabricDegraded condition (status.conditions, as
// hypertopo's reconciler writes it) and the member nodes whose own link is degraded (the annotation
// hypertopo.io/degraded-members, written beside the condition). Placement reads it to put degraded
// domains and nodes last (scheduler/placement/fabric_health_mode.h).
struct DomainFabricHealth {
  bool degraded = false;  // FabricDegraded is "True"
  std::string reason;     // DegradedLinkWidth, DegradedLinkSpeed, MissingUplinks, LinkDown, LinkFlapping
  std::string message;    // the bad links, by port pair
  std::vector<std::string> degraded_members;  // member node names whose own (host) link is degraded
};

inline constexpr const char* kFabricDegradedConditionType = "FabricDegraded";
inline constexpr const char* kDegradedMembersAnnotation = "hypertopo.io/degraded-members";

struct HyperNodeSpec {
  std::string name;
  int tier = 0;
  std::string tier_name;
  std::vector<HyperNodeMember> members;
  DomainFabricHealth health;
};

// A Kueue Topology: node label keys, highest level first.
struct LevelTopologySpec {
  std::string name = "default";
  std::vector<std::string> levels;
};

inline constexpr const char* kHostnameLabel = "kubernetes.io/hostname";

}  // namespace hypertopo::scheduler
