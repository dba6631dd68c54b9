// scheduler/index/node_affinity.h: the node-level constraints kube-scheduler checks before the extender.
//
// kube-scheduler's Filter plugins drop nodes before the extender sees them; a plan that puts a pod on
// a node they drop is never admitted. This header holds those checks with kube-scheduler's meaning:
//   - required node affinity, as k8s.io/component-helpers scheduling/corev1/nodeaffinity
//     (nodeaffinity.go: NodeSelector terms are ORed; within a term every matchExpression and every
//     matchField must hold; a term with neither matches nothing; a term that does not parse (an
//     operator unknown, In with no values, Gt with a value that is no integer) matches nothing while
//     the other terms still count; matchFields knows only metadata.name, with In or NotIn and exactly
//     one value);
//   - label operators as k8s.io/apimachinery pkg/labels/selector.go Requirement.Matches: In needs the
//     label with a listed value, NotIn holds when the label is absent or its value is not listed,
//     Exists/DoesNotExist test presence, Gt/Lt need the label and compare it as a base-10 int64;
//   - preferred node affinity, as the NodeAffinity plugin's Score: the sum of the weights of the
//     preferred terms the node matches;
//   - taints, as the TaintToleration plugin (pkg/scheduler/framework/plugins/tainttoleration):
//     NoSchedule and NoExecute taints must be tolerated to fit; untolerated PreferNoSchedule taints
//     are counted for the score, fewer is better.
//
//   NodeAffinity a;
//   a.required = {{.match_expressions = {{"pool", "NotIn", {"reserved"}}}}};
//   a.has_required = true;
//   bool ok = a.matches(node);                 // node: a NodeSpec
//   std::int64_t pref = a.preference(node);     // sum of matched preferred weights
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/index/cluster_model.h"

namespace hypertopo::scheduler {

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;  // key metadata.name only
  bool matches(const NodeSpec& node) const;
};

struct PreferredTerm {
  std::int32_t weight = 0;  // 1..100
  NodeSelectorTerm term;
};

struct NodeAffinity {
  // requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, ORed. has_required is set when
  // the pod states a required node selector at all: an empty term list then matches no node.
  bool has_required = false;
  std::vector<NodeSelectorTerm> required;
  std::vector<PreferredTerm> preferred;

  bool matches(const NodeSpec& node) const;
  std::int64_t preference(const NodeSpec& node) const;
  bool empty() const { return !has_required && preferred.empty(); }
};

// Whether a node passes a pod's node-level constraints (NodeUnschedulable, NotReady, nodeSelector and
// NodeAffinity, TaintToleration), and if not, the first that fails.
struct NodeConstraintCheck {
  enum class Kind { kPass, kUnschedulable, kNotReady, kAffinity, kTaint };
  Kind kind = Kind::kPass;
  const NodeTaint* taint = nullptr;  // with kTaint
  bool passed() const { return kind == Kind::kPass; }
  // kube-scheduler's own words for each plugin's reason ("node(s) didn't match Pod's node
  // affinity/selector", "node(s) had untolerated taint {key: value}", ...).
  std::string message() const;
};
NodeConstraintCheck check_node_constraints(const NodeSpec& node,
                                           const std::map<std::string, std::string>& selector,
                                           const NodeAffinity& affinity,
                                           const std::vector<Toleration>& tolerations);
// Whether a node takes a new pod that states no node constraints (no nodeSelector, affinity or
// toleration), and if not, why: cordoned, NotReady, or a NoSchedule/NoExecute taint. It is
// check_node_constraints for such a pod, the question placement and the extender ask of every node
// for a gang's pods; `status` leaves what it refuses out of the free blocks it reports.
NodeConstraintCheck check_node_for_any_pod(const NodeSpec& node);

// Untolerated PreferNoSchedule taints on the node (TaintToleration's score counts these).
int intolerable_prefer_no_schedule(const NodeSpec& node, const std::vector<Toleration>& tolerations);

}  // namespace hypertopo::scheduler
