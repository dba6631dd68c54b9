// scheduler/placement/kueue_failure_messages.h: Kueue's failure strings, byte for byte.
//
// A pod set that does not fit is reported with the message Kueue's TAS snapshot writes
// (kubernetes-sigs/kueue, tas_flavor_snapshot.go), so a user comparing `hypertopo place` with a
// Workload's status sees the same words: how many pods or slices fit out of how many, per slice
// layer when the request has several, and which nodes were left out and why (nodeSelector, an
// untolerated taint, a resource). kueue_request_fault tells the messages that mean "the request is
// invalid" (exit 2, naming the annotation) from those that mean "does not fit now" (exit 1).
//
//   KueueExclusions excluded;
//   excluded.total_nodes = 4;
//   excluded.taints[kueue_taint_string(taint)]++;
//   kueue_not_fit_message("default", 3, 4, 1, excluded);
//   // topology "default" allows to fit only 3 out of 4 pod(s). Total nodes: 4; excluded: taint ...
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/index/cluster_model.h"

namespace hypertopo::scheduler {

// Go's %q for the plain label-ish strings that reach messages.
std::string kueue_quoted(const std::string& s);

// A taint as Kueue names it in its exclusion counts: key[=value]:effect.
std::string kueue_taint_string(const NodeTaint& t);

// Why nodes were left out of one attempt, counted per reason.
struct KueueExclusions {
  int total_nodes = 0;
  int node_selector = 0;
  std::map<std::string, int> taints;
  std::map<std::string, int> resources;  // the resource that limits a node to 0 pods
  bool any() const { return node_selector > 0 || !taints.empty() || !resources.empty(); }
  // "nodeSelector: 1, resource \"cpu\": 2, taint \"k=v:NoSchedule\": 1", reasons sorted.
  std::string format() const;
};

// `topology "T" doesn't allow to fit any of N pod(s)` / `allows to fit only F out of N slice(s)`,
// with the exclusions when there are any.
std::string kueue_not_fit_message(const std::string& topology_name, std::int32_t fit, std::int32_t total,
                                  std::int32_t slice_size, const KueueExclusions& excluded);

// One slice layer's count in the best domain of the level searched.
struct KueueLayerFit {
  std::string topology;  // the layer's level label key
  std::int32_t fit = 0;
  std::int32_t total = 0;
};

// `topology "T" doesn't allow to fit; 1/2 slice(s) fit on level L; ...`; nullopt layers when the
// level searched has no domain (then the message stops after "fit").
std::string kueue_multi_layer_message(const std::string& topology_name,
                                      const std::optional<std::vector<KueueLayerFit>>& layers,
                                      const KueueExclusions& excluded);

inline constexpr const char* kKueueBalancedNoDomainSet =
    "TAS Balanced Placement: Cannot find optimal domain set to fit the request";
inline constexpr const char* kKueueBalancedBelowThreshold =
    "TAS Balanced Placement: Not enough slices to meet the threshold";
inline constexpr const char* kKueueBalancedNotAllPlaced =
    "TAS Balanced Placement: Not all slices or leaders could be placed";

// A failure of KueueTopologySnapshot::find_assignments that means the request itself is invalid (a
// level the Topology does not have, a slice layer above the pod set's level, a slice size missing):
// the annotation at fault. nullopt for failures that mean "does not fit now".
std::optional<std::string> kueue_request_fault(const std::string& failure);

}  // namespace hypertopo::scheduler
