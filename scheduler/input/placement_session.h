// scheduler/input/placement_session.h: one `hypertopo place` answer, from files to a report.
//
// Loads nodes, pods, the topology (HyperNodes or a Kueue Topology), the job and the scheduler
// config; builds the index; places the job with the engine, or with the exact Kueue algorithm when
// the semantics are `kueue` (auto: a batch/v1 Job on a Kueue Topology; without TAS annotations it
// is "implied" unconstrained, as Kueue treats it); and renders the result as JSON, YAML or a text
// tree (docs/placement.md). The CLI only parses flags.
//
// An Error means the request is invalid (exit 2); a report with fit false means it does not fit
// now (exit 1). Under Kueue semantics each pod set also carries Kueue's own
// `topologyAssignment` {levels, domains: [{values, count}]}; an assignment entry names a `node`
// only when the lowest level is kubernetes.io/hostname, otherwise the `domain` by its full path
// and the `nodes` its pods may use. Under engine semantics a pod set whose placement fabric health
// shaped (a FabricDegraded HyperNode avoided or used, a node with a degraded own link) carries
// `fabricHealth`: one sentence each, printed by -o text under the pod set.
//
// Preemption (engine semantics, a job of one pod set): when the job fits nowhere as the cluster is
// and running pods of lower priority exist, the job is planned with victims
// (scheduler/placement/victim_planner.h). Priorities are read as the API server's Priority
// admission fills them (kubernetes/kubernetes plugin/pkg/admission/priority/admission.go): a
// running pod's spec.priority, else its spec.priorityClassName, else the globalDefault class with
// the lowest value, else 0; the job's pod template's priorityClassName first (admission computes
// the value from it), then its spec.priority. PriorityClasses (scheduling.k8s.io/v1) come from
// `priority_classes` and from the nodes and pods lists (`kubectl get pods,pdb,priorityclasses -A
// -o json`), plus the two built-in system classes; PodDisruptionBudgets (policy/v1) from the pods
// list. A class that resolves nowhere is an error naming it and the object. A fit with victims
// sets `preemption` in the result: the domain, the victims (namespace, name, node, priority,
// violatesBudget, gang), the gangs broken and the cost that chose them.
//
//   PlaceInputs in{.nodes = "nodes.json", .topology = "hn.json", .job = "job.yaml"};
//   auto report = run_placement(in);
//   if (report) std::cout << render_report(*report, "json");
#pragma once

#include <expected>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "errors/error.h"

namespace hypertopo::scheduler {

struct ClusterSnapshot;

struct PlaceInputs {
  std::filesystem::path nodes;
  std::filesystem::path topology;
  std::filesystem::path job;  // empty: the PodGroup `cluster` holds (place --pod-group)
  std::optional<std::filesystem::path> pods;
  std::optional<std::filesystem::path> scheduler_config;
  std::string semantics = "auto";  // auto | engine | kueue
  // Kueue only: the ResourceFlavor (its spec.nodeLabels narrow the nodes, as in Kueue's TAS cache)
  // and Kueue's feature gates as its --feature-gates flag writes them ("TASBalancedPlacement=true").
  std::optional<std::filesystem::path> resource_flavor;
  std::string kueue_feature_gates;
  // prefer-healthy | exclude | ignore (--fabric-health); empty: the scheduler config's
  // hypertopo.fabricHealth, else prefer-healthy. Engine semantics only: Kueue's algorithm has none.
  std::string fabric_health;
  // PriorityClasses: one, or a List of them (--priority-classes).
  std::optional<std::filesystem::path> priority_classes;
  // A live cluster's objects (cluster_snapshot.h): each kind it holds is read from it unless a file
  // gives that kind (nodes, topology empty; pods, priority_classes unset), a what-if on a changed one.
  // Its PodDisruptionBudgets go with its Pods.
  std::shared_ptr<const ClusterSnapshot> cluster;
};

struct PlacementReport {
  // {"fit", "reason", "podSets": [{"name", "assignment", "domains", "tier"}], "preemption" (a fit
  // with victims only)}
  nlohmann::json result;
  std::string semantics;  // what actually ran: engine | kueue
  // Objects in the input files that no flag reads ("nodes.yaml: 1 object of kind ConfigMap ignored
  // (document 3)"), then the scheduler config's (SchedulerConfig::warnings).
  std::vector<std::string> warnings;
  // read: the input files' bytes; parse: the rest of taking the input in (objects, job, config).
  double read_ms = 0, parse_ms = 0, index_ms = 0, place_ms = 0;
  double preempt_ms = -1;  // planning with victims; -1: it did not run
};

std::expected<PlacementReport, Error> run_placement(const PlaceInputs& inputs);

// format: json | yaml | text
std::string render_report(const PlacementReport& report, const std::string& format);

}  // namespace hypertopo::scheduler
