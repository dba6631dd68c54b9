// scheduler/input/cluster_loader.h: kubectl output -> the scheduler's cluster model.
//
// Reads `kubectl get nodes -o json`, `kubectl get pods -o json`, `kubectl get hypernodes -o json`
// (or one HyperNode) and a Kueue `Topology` object, in JSON or YAML, into the plain structs of
// scheduler/index/cluster_model.h. Quantities are parsed exactly; a malformed one is an error that
// names the object and the resource. This is the only scheduler code that knows Kubernetes shapes.
//
// A file may hold one object, a List, several YAML documents or several kinds (io/object_reader.h):
// each load_* reads the kinds it reads, from every document, and leaves the others in the ledger
// the caller gives, which names them in a warning unless another reader of the file takes them.
// An error names the file and, where it holds several documents, the document.
//
// JSON files are parsed with simdjson (a 6,000-node cluster in about 30 ms of CPU); what it refuses
// (invalid UTF-8, nesting past io::kMaxJsonDepth, integers beyond 64 bits) is read the nlohmann
// way, accepted or refused as before. One reader, written over io/json_view.h, serves both
// parsers: parse_nodes and parse_nodes_dom (simdjson's DOM), and so on, give the same model and
// the same errors for the same text.
//
//   io::ObjectLedger ledger;
//   auto nodes = load_nodes("nodes.json", &ledger);
//   auto topology = load_topology("hypernodes.yaml", &ledger);   // HyperNodes or a Kueue Topology
//   auto index = build_index(*topology, *nodes, *load_pods("pods.json"));
#pragma once

#include <expected>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "errors/error.h"
#include "k8s/objects/node_list.h"
#include "scheduler/index/cluster_model.h"
#include "scheduler/index/topology_index.h"
#include "topology/exporters/capacity_dot.h"

namespace simdjson::dom {
class element;
}  // namespace simdjson::dom

namespace hypertopo::io {
class ObjectLedger;
}  // namespace hypertopo::io

namespace hypertopo::scheduler {

// A file of one document in JSON or YAML, as JSON (YAML scalars typed as YAML 1.2 core would: ints,
// floats, bools). A YAML file of several documents is an error, never read as its first.
std::expected<nlohmann::json, Error> read_document(const std::filesystem::path& path);

std::expected<std::vector<NodeSpec>, Error> parse_nodes(const nlohmann::json& doc);
std::expected<std::vector<NodeSpec>, Error> parse_nodes_dom(const simdjson::dom::element& doc);
std::expected<std::vector<NodeSpec>, Error> load_nodes(const std::filesystem::path& path,
                                                       io::ObjectLedger* ledger = nullptr);

// Pods bound to a node and not finished (phase not Succeeded/Failed); effective requests are
// max(sum of containers, largest init container) plus the pod overhead.
std::expected<std::vector<BoundPod>, Error> parse_pods(const nlohmann::json& doc);
std::expected<std::vector<BoundPod>, Error> parse_pods_dom(const simdjson::dom::element& doc);
// What those pods request of `resource` (a GPU: nvidia.com/gpu), summed per node name: the one rule
// for GPUs in use, shared by placement and the capacity picture (`discover -o dot`, `status`).
// Requests only, as kube-scheduler counts them; a fraction of a GPU is an error naming the pod.
std::expected<std::map<std::string, std::int64_t>, Error> requested_per_node(const nlohmann::json& pods,
                                                                             std::string_view resource);
std::expected<std::vector<BoundPod>, Error> load_pods(const std::filesystem::path& path,
                                                      io::ObjectLedger* ledger = nullptr);

// The capacity picture's input: each Node's allocatable `resource` (read as placement reads it) and
// the requests of its bound pods (requested_per_node). Errors name the node whose allocatable is not
// a whole count.
std::expected<topology::exporters::GpuUsage, Error> gpu_usage_per_node(
    const k8s::NodeList& nodes, const std::map<std::string, std::int64_t>& used_per_node,
    std::string_view resource);
// The same picture of Nodes as placement has read them (NodeSpec::allocatable, canonical amounts).
topology::exporters::GpuUsage gpu_usage_per_node(std::span<const NodeSpec> nodes,
                                                 const std::map<std::string, std::int64_t>& used_per_node,
                                                 std::string_view resource);

struct TopologySource {
  enum class Kind { kHyperNodes, kLevels };
  Kind kind = Kind::kHyperNodes;
  std::vector<HyperNodeSpec> hypernodes;
  LevelTopologySpec levels;
};

std::expected<TopologySource, Error> parse_topology(const nlohmann::json& doc);
std::expected<TopologySource, Error> parse_topology_dom(const simdjson::dom::element& doc);
// HyperNodes from every document of the file, or one Kueue Topology.
std::expected<TopologySource, Error> load_topology(const std::filesystem::path& path,
                                                   io::ObjectLedger* ledger = nullptr);

// Lists as the API server sends them, a page at a time (k8s::KubeClient::list_pages): the items of
// every page read as one list, with simdjson, without a tree of nlohmann objects. When simdjson
// refuses a page (invalid UTF-8, nesting past io::kMaxJsonDepth, an integer beyond 64 bits), every
// page is parsed as k8s::KubeClient::list parses it (nlohmann, no depth limit), accepted or refused
// as there. A page that is not an object with an `items` array is an error. The *_items forms read
// a list's items already parsed; both forms give the same results and errors for the same objects.
// Nodes are read as parse_nodes reads a NodeList's items, HyperNodes as parse_topology reads a list.
std::expected<std::vector<NodeSpec>, Error> parse_node_pages(std::span<const std::string> pages);
std::expected<std::vector<NodeSpec>, Error> parse_node_items(std::span<const nlohmann::json> items);
std::expected<std::vector<HyperNodeSpec>, Error> parse_hypernode_pages(std::span<const std::string> pages);
std::expected<std::vector<HyperNodeSpec>, Error> parse_hypernode_items(std::span<const nlohmann::json> items);

// A bound, unfinished pod of a list (as parse_pods reads it) with its identity: uid, namespace and
// name as metadata gives them (empty when absent). An error names the pod ("Pod ns/name: ...").
struct ListedPod {
  std::string uid;
  std::string ns;
  std::string name;
  BoundPod bound;
  // The pod's labels and annotations among gang_identity_keys() (pod_request.h), labels first:
  // which gang a bound pod is in and its rank, for planning around it.
  std::map<std::string, std::string> gang_marks;
  // What preemption reads: spec.priority (0 when unset), metadata.deletionTimestamp set,
  // status.startTime, and the labels PodDisruptionBudgets select on; spec.priorityClassName and
  // whether spec.priority was set, for a pod the API server has not admitted (a file written by hand).
  std::int32_t priority = 0;
  bool priority_set = false;
  std::string priority_class;
  bool terminating = false;
  std::string start_time;
  std::map<std::string, std::string> labels;
};
// requested_per_node's sum over pods already read: BoundPods (parse_pods, load_pods) or the bound
// pods of a live cluster as listed (ClusterSnapshot::pods), which are not copied.
std::map<std::string, std::int64_t> requested_per_node(std::span<const BoundPod> pods,
                                                       std::string_view resource);
std::map<std::string, std::int64_t> requested_per_node(std::span<const ListedPod> pods,
                                                       std::string_view resource);
// The bound, unfinished pods of a list. With `pending`, also the JSON text of each pod that waits to
// be scheduled and names a gang (a gang key, spec.schedulingGroup or spec.workloadRef): the members
// a gang's quorum counts before kube-scheduler asks for them.
std::expected<std::vector<ListedPod>, Error> parse_pod_pages(std::span<const std::string> pages,
                                                             std::vector<std::string>* pending = nullptr);
std::expected<std::vector<ListedPod>, Error> parse_pod_items(std::span<const nlohmann::json> items,
                                                             std::vector<std::string>* pending = nullptr);
// The Pods of a file (any form load_pods reads), each with its identity; objects of other kinds
// are passed over (load_pods has named them).
std::expected<std::vector<ListedPod>, Error> load_listed_pods(const std::filesystem::path& path);

std::expected<TopologyIndex, Error> build_index(const TopologySource& topology, std::vector<NodeSpec> nodes,
                                                const std::vector<BoundPod>& pods);

}  // namespace hypertopo::scheduler
