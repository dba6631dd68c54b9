// scheduler/input/cluster_snapshot.h: what `place` and `simulate` read from a live cluster.
//
// The objects placement reads, listed as kubectl lists them and read by the same page readers as
// the extender's lists (cluster_loader.h: parse_node_pages, parse_pod_pages,
// parse_hypernode_pages), so the same objects give the same model whether they come from files or
// from the API server:
//   - Nodes and Pods: paged (kPageSize, the extender's page size), each page read and dropped
//     before the next is fetched, so a list of any length costs one page of JSON text; a Pod keeps
//     only what placement and preemption read (ListedPod).
//   - HyperNodes (topology.volcano.sh/v1alpha1); an absent CRD (404) is no HyperNodes, as the
//     extender treats it. Asked for (hypernode_objects), the objects themselves are kept as listed,
//     unread: `status` rebuilds its tree from them, ownership labels and FabricDegraded conditions
//     included, and names a HyperNode that does not read instead of failing; a topology asked for
//     beside them is read from the same list.
//   - Kueue Topologies (kueue.x-k8s.io v1beta2, then v1beta1), only when the cluster has no
//     HyperNodes: one Topology is the topology, several are an error asking for --topology.
//   - PriorityClasses (scheduling.k8s.io/v1) and PodDisruptionBudgets (policy/v1), whole.
//   - One PodGroup and its Pods, when asked (`place --pod-group NAMESPACE/NAME`): the PodGroup of
//     that name among the PodGroup kinds the extender's watcher lists, from the same table
//     (pod_group_kinds.h: scheduling.x-k8s.io/v1alpha1, scheduling.volcano.sh/v1beta1,
//     scheduling.k8s.io/v1alpha2, scheduling.run.ai/v2alpha2; the Workload kind is no PodGroup),
//     listed with a metadata.name field selector, and the Pods of its namespace that name it as that
//     kind's scheduler finds them (group_named: the label scheduling.x-k8s.io/pod-group, the
//     annotation scheduling.k8s.io/group-name, spec.schedulingGroup.podGroupName, the annotation
//     pod-group-name), pending or running, as one List in the shape a --job file gives it
//     (job_loader.h). A name no kind holds, or several kinds hold, is an error naming the PodGroup.
// Otherwise PodGroups are not read: the job and its PodGroup come from the --job file.
//
//   ClusterReadRequest what{.nodes = true, .pods = true, .topology = false};   // --topology given
//   auto snapshot = read_cluster(*client, what);
//   if (!snapshot) exit(snapshot.error().api ? 3 : 2);
//   PlaceInputs in{.job = "job.yaml"};
//   in.cluster = std::make_shared<const ClusterSnapshot>(std::move(*snapshot));
#pragma once

#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "errors/error.h"
#include "scheduler/index/cluster_model.h"
#include "scheduler/input/cluster_loader.h"

namespace hypertopo::k8s {
class KubeClient;
}  // namespace hypertopo::k8s

namespace hypertopo::scheduler {

// Objects a page, as the extender lists (scheduler/extender/cluster_watcher.h).
inline constexpr int kClusterPageSize = 500;

// Which kinds to read: a kind a file gives is not listed.
struct ClusterReadRequest {
  bool nodes = true;
  bool pods = true;
  bool disruption_budgets = true;  // with the Pods
  bool topology = true;
  bool hypernode_objects = false;  // the HyperNode objects as listed (ClusterSnapshot::hypernode_objects)
  bool priority_classes = true;
  std::string pod_group;  // "namespace/name": that PodGroup and its Pods; "" none
  int page_size = kClusterPageSize;
};

struct ClusterSnapshot {
  std::string source;  // where the cluster came from ("--kubeconfig k.yaml"), for messages
  bool has_nodes = false, has_pods = false, has_topology = false, has_priority_classes = false,
       has_hypernode_objects = false;
  std::vector<NodeSpec> nodes;
  std::vector<ListedPod> pods;  // bound and unfinished, as parse_pod_pages reads them
  TopologySource topology;
  std::string topology_from;                      // "HyperNodes", "Topology <name> (kueue.x-k8s.io/v1beta2)"
  std::vector<nlohmann::json> hypernode_objects;  // as listed, when asked; none without the CRD
  std::vector<nlohmann::json> priority_classes;
  std::vector<nlohmann::json> disruption_budgets;
  // The asked PodGroup (ClusterReadRequest::pod_group) and its Pods as a List; null when not asked.
  nlohmann::json pod_group;
  std::string pod_group_from;  // "PodGroup ml/train (scheduling.run.ai/v2alpha2) of the cluster (...)"
};

struct ClusterReadError {
  Error error;
  bool api = false;  // talking to the API server failed (not an object that does not read)
};

std::expected<ClusterSnapshot, ClusterReadError> read_cluster(k8s::KubeClient& client,
                                                              const ClusterReadRequest& request,
                                                              std::string source);

// The bound pods of a snapshot as load_pods gives them from a file of the same Pods.
std::vector<BoundPod> bound_pods(const ClusterSnapshot& snapshot);

}  // namespace hypertopo::scheduler
