// cli/cluster_input.h: the live cluster as an input of `place` and `simulate`.
//
// The kinds no file flag gives are listed from the cluster that --kubeconfig / --context name, found
// as kubectl finds it (cluster_flags.h resolve_cluster). The cluster is read only when a required
// kind has no file (--nodes, --topology; status's HyperNode objects), a PodGroup is asked of it (place
// --pod-group) or
// --kubeconfig / --context is given; with every file given and neither flag, the command reads files
// alone, as before.
//
//   auto cluster = read_cluster_inputs("--nodes", flags, {.nodes = nodes_file.empty(), ...});
//   if (!cluster) { std::cerr << cluster.error().message; return cluster.error().exit_code; }
//   in.cluster = *cluster;   // null: files only
#pragma once

#include <expected>
#include <memory>
#include <string>

#include "cli/cluster_flags.h"
#include "scheduler/input/cluster_snapshot.h"

namespace hypertopo::cli {

struct ClusterInputFailure {
  int exit_code = 2;  // 2: no cluster found, or an object that does not read; 3: talking to it failed
  std::string message;
};

// `missing`: the flag to name when no file and no cluster gives a required kind ("--nodes"); "" when
// the command reads the cluster alone (`status`): the error is then where the kubeconfig was sought.
std::expected<std::shared_ptr<const scheduler::ClusterSnapshot>, ClusterInputFailure> read_cluster_inputs(
    const std::string& missing, const ClusterFlags& flags, const scheduler::ClusterReadRequest& want);

// The help of --kubeconfig and --context for commands that read the cluster's objects.
inline constexpr const char* kReadKubeconfigHelp =
    "kubeconfig file of the cluster whose Nodes, Pods, HyperNodes, PriorityClasses and "
    "PodDisruptionBudgets are read where no file flag gives them (default: as kubectl: $KUBECONFIG, "
    "then ~/.kube/config, then the pod's service account)";
inline constexpr const char* kReadContextHelp = "kubeconfig context (default: its current-context)";

}  // namespace hypertopo::cli
