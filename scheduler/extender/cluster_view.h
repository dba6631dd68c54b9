// scheduler/extender/cluster_view.h: the extender's view of the cluster, one of its three parts.
//
// The extender is three parts: this cluster view (the objects the watches deliver and the
// TopologyIndex built from them), the gang book (gang_book.h: plans and their slots' state machine,
// gang_slot.h) and the verbs (filter, prioritize, preempt: extender_service.h). A normal pod's verbs
// read an immutable snapshot of the view (ViewSnapshot). The view knows nothing of plans: a pod event it
// applies comes back as a PodEvent that the service hands to the gang book, and after a rebuild of the index
// the gang book puts its reservations back (GangBook::ensure_index).
//
// What the view holds: HyperNodes and Nodes (by name), the pods that use a node (bound, not
// finished; by uid) with their gang and rank, pending gang pods' request documents (the sub-group
// planner reads a gang's pods from them), PodGroups' gang sizes and topology, and
// PodDisruptionBudgets. Pod events change the index's usage in place (kube-scheduler's cache does
// the same: AddPod/RemovePod); only topology changes (Nodes joining or leaving, a Node's capacity,
// labels, taints or schedulability, HyperNodes) mark it for a rebuild, done lazily by
// ensure_index(). Not thread-safe: its owner serializes every call; what other threads read goes
// through snapshot(), an immutable copy.
//
//   ClusterView view(options);
//   view.set_nodes(node_items); view.set_hypernodes(hypernode_items);
//   PodEvent e = *view.upsert_pod(pod_json);        // kBound: a gang book slot may bind
//   if (auto rebuilt = view.ensure_index(); rebuilt && *rebuilt) { /* reservations back */ }
//   bool ok = view.fits(view.index().find_node("n-1"), view.resolve(request), &pod_set);
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "errors/error.h"
#include "scheduler/index/topology_index.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/disruption_budget.h"
#include "scheduler/input/job_loader.h"
#include "scheduler/input/pod_group_kinds.h"
#include "scheduler/input/pod_request.h"
#include "scheduler/placement/job_request.h"
#include "scheduler/placement/victim_planner.h"

namespace hypertopo::scheduler {

// Where a gang's size comes from: coscheduling's PodGroup (scheduling.x-k8s.io/v1alpha1,
// spec.minMember), Volcano's (scheduling.volcano.sh/v1beta1, spec.minMember), the upstream PodGroup
// (scheduling.k8s.io/v1alpha2, spec.schedulingPolicy.gang.minCount; pods name it in
// spec.schedulingGroup.podGroupName) and the upstream Workload (scheduling.k8s.io/v1alpha1,
// spec.podGroups[].policy.gang.minCount; pods name it in spec.workloadRef) and KAI-Scheduler's
// (scheduling.run.ai/v2alpha2, spec.minMember; pods name it in the annotation pod-group-name).
// A PodGroup's topology becomes the gang's constraint unless its pods state their own: Volcano's
// spec.networkTopology, KAI's spec.topologyConstraint (requiredTopologyLevel,
// preferredTopologyLevel) and the upstream spec.schedulingConstraints.topology[0].key (KEP-5732: all
// pods on nodes sharing that label's value; a required level named by that label). The kinds, their
// resources and how a pod names its group are one table with `place` (scheduler/input/pod_group_kinds.h).

// How the view recognises gangs.
struct ViewOptions {
  std::vector<std::string> gang_label_keys{"scheduling.x-k8s.io/pod-group", "hypertopo.io/gang"};
  // pod-group-name: KAI-Scheduler's pod grouper names the pod's scheduling.run.ai PodGroup there.
  std::vector<std::string> gang_annotation_keys{"scheduling.k8s.io/group-name", "hypertopo.io/gang",
                                                "pod-group-name"};
};

// A pod that uses a node, as the view keeps it.
struct ViewPod {
  std::string uid, name, ns, node;
  ResourceAmounts requests;
  std::string gang;               // namespace/name of its gang, "" for a normal pod
  std::optional<PodIndex> index;  // its rank key, when it has one
  std::int32_t priority = 0;
  bool terminating = false;
  std::string start_time;
  std::map<std::string, std::string> labels;
};

// What a pod event means for the gang book (gang_slot.h's transitions).
struct PodEvent {
  enum class Kind {
    kNone,       // nothing a slot follows (a pending pod, a request change)
    kBound,      // the pod is bound and running: its slot binds
    kGone,       // deleted, failed, evicted or terminating: its slot is released for its replacement
    kSucceeded,  // its slot is done
  };
  Kind kind = Kind::kNone;
  std::string uid;
  const ViewPod* pod = nullptr;  // kBound: the pod as the view holds it now
};

// A gang read from its PodGroup with its pods, as `place` reads them (a KAI PodGroup, a
// scheduling.k8s.io one, a Volcano one with spec.subGroupPolicy): the PodGroup and the request
// documents of the gang's pending pods, which the readers (scheduler/input/kai_pod_group.h,
// volcano_pod_group.h, job_loader.h) take as one List.
struct GroupedGang {
  PodGroupKind kind = PodGroupKind::kKai;
  const nlohmann::json* pod_group = nullptr;
  std::vector<const nlohmann::json*> pending;  // request documents (request_source), by uid order
};

struct ViewCounters {
  std::int64_t index_rebuilds = 0;
  // Pod events applied to the index in place (bindings, deletions, request changes): no rebuild.
  std::int64_t index_pod_updates = 0;
  // Watch events applied (Pods, Nodes, HyperNodes, PodGroups, budgets), whatever they changed.
  std::int64_t watch_events = 0;
  // Objects that did not read (a PodDisruptionBudget whose selector is not an object, ...).
  std::int64_t errors = 0;
};

// What a plan keeps of a pod to read its request again after a restart: its annotations, labels
// and the parts of its spec that placement reads (resources, nodeSelector, affinity, tolerations,
// overhead); no env values, no volumes.
nlohmann::json request_source(const nlohmann::json& pod);

// What a normal pod's filter and prioritize read of the view, as of one generation of it: the
// role of kube-scheduler's Snapshot (pkg/scheduler/internal/cache/snapshot.go), which
// Cache.UpdateSnapshot (pkg/scheduler/internal/cache/cache.go) brings up to date at the start of a
// scheduling cycle only when the cache's generation moved. Immutable once published: a verb reads
// it with no lock while watch events change the view. The index shares its build's tree, nodes and
// names with the view's (TopologyIndex::Shape, immutable between topology rebuilds) and holds its
// own copy of the usage, the gang book's reservations included.
struct ViewSnapshot {
  std::uint64_t generation = 0;   // the view's changes it includes (ExtenderService::generation())
  std::int64_t index_build = -1;  // node ids hold for this build (ClusterView::index_build())
  TopologyIndex index;
};

class ClusterView {
 public:
  explicit ClusterView(ViewOptions options = {});

  // Objects as Kubernetes JSON (or the API server's list pages, read with simdjson). A list that
  // does not read is an error naming the object, and the view stays as it was.
  std::expected<void, Error> set_hypernodes(const std::vector<nlohmann::json>& hypernodes);
  std::expected<void, Error> set_hypernode_pages(std::span<const std::string> pages);
  std::expected<void, Error> upsert_hypernode(const nlohmann::json& hypernode);
  void remove_hypernode(const std::string& name);
  std::expected<void, Error> set_nodes(const std::vector<nlohmann::json>& nodes);
  std::expected<void, Error> set_node_pages(std::span<const std::string> pages);
  // True when the Node changed in something the view reads; false for a heartbeat (a status update
  // of lastHeartbeatTime or resourceVersion alone), which touches nothing.
  std::expected<bool, Error> upsert_node(const nlohmann::json& node);
  void remove_node(const std::string& name);
  // A relist replaces every pod; the gang book then resyncs its slots against pods().
  std::expected<void, Error> set_pods(const std::vector<nlohmann::json>& pods);
  std::expected<void, Error> set_pod_pages(std::span<const std::string> pages);
  std::expected<PodEvent, Error> upsert_pod(const nlohmann::json& pod);
  PodEvent remove_pod(const nlohmann::json& pod);

  void set_pod_groups(const std::vector<nlohmann::json>& pod_groups, PodGroupKind kind);
  void upsert_pod_group(const nlohmann::json& pod_group, PodGroupKind kind);
  void remove_pod_group(const nlohmann::json& pod_group, PodGroupKind kind);

  void set_disruption_budgets(const std::vector<nlohmann::json>& budgets);
  void upsert_disruption_budget(const nlohmann::json& budget);
  void remove_disruption_budget(const nlohmann::json& budget);

  // Builds the index when the topology changed since the last build; true when it did (every
  // reservation made on the old index must be made again on the new one). An error names what
  // does not build and leaves the old index in place.
  std::expected<bool, Error> ensure_index();
  // Built and current: pod events and reservations may change it in place.
  bool index_current() const { return index_.has_value() && !dirty_; }
  TopologyIndex& index() { return *index_; }
  const TopologyIndex& index() const { return *index_; }
  // The number of index builds so far (node ids hold for one build).
  std::int64_t index_build() const { return counters_.index_rebuilds; }
  // The index as it is now (built and current), for readers on other threads: a copy that shares
  // the build's tree and copies the usage arrays (at 20,000 nodes and 32,000 HyperNodes, a few MB).
  std::shared_ptr<const ViewSnapshot> snapshot(std::uint64_t generation) const {
    return std::make_shared<const ViewSnapshot>(
        ViewSnapshot{.generation = generation, .index_build = index_build(), .index = *index_});
  }

  // Gangs: the key of a pod's gang (namespace/name; none for a normal pod), its size, and the
  // topology its PodGroup states (as the pod annotations that say the same; empty when none).
  std::expected<std::optional<std::string>, Error> gang_key(const nlohmann::json& pod) const;
  // `from`, when given: the kind of PodGroup whose minimum gave the size (nullopt: none did).
  std::expected<std::int32_t, Error> gang_size(const nlohmann::json& pod, const std::string& key,
                                               std::optional<PodGroupKind>* from = nullptr) const;
  // The gang's pods the view holds: bound and not terminating, or pending (watched or filtered).
  std::size_t gang_members_seen(const std::string& key) const;
  const std::map<std::string, std::string>* group_topology(const std::string& key) const;
  // A coscheduling PodGroup's spec.minResources (coscheduling_pod_group.h), its `held` empty; null
  // when it sets none.
  const MinResourcesCheck* group_min_resources(const std::string& key) const {
    auto it = min_resources_.find(key);
    return it == min_resources_.end() ? nullptr : &it->second;
  }
  // The gang's PodGroup when the gang is read with its pods (GroupedGang), with its pending pods'
  // documents.
  // `with_pending` false: the PodGroup alone (which sub-group a pod joins needs no other pod).
  std::optional<GroupedGang> grouped_gang(const std::string& key, bool with_pending = true) const;
  bool grouped(const std::string& key) const { return grouped_.contains(key); }
  // Remembers a pending gang pod's request document (kube-scheduler's filter call carries the pod;
  // the watch may not have delivered it yet).
  // `replace` false: a pod already noted is kept as it is (kube-scheduler filters a pending pod again
  // and again; its watch events bring what changes).
  void note_pending(const nlohmann::json& pod, const std::string& key, bool replace = true);

  const std::map<std::string, ViewPod>& pods() const { return pods_; }
  const ViewPod* pod(const std::string& uid) const;
  const NodeSpec* node(const std::string& name) const;
  std::size_t node_count() const { return nodes_.size(); }

  // A request with the index's resource ids looked up once (a filter asks of thousands of nodes).
  struct ResolvedRequest {
    std::vector<std::pair<int, std::int64_t>> amounts;  // (resource id, amount), amounts > 0
    int pods = -1;         // the "pods" resource when the request does not name it: one slot
    bool unknown = false;  // a resource no node has: fits nowhere
  };
  ResolvedRequest resolve(const ResourceAmounts& request) const { return resolve(*index_, request); }
  // Node `node` of the index has room for the request and passes kube-scheduler's node filters
  // for the pod set `ps` (readiness, cordon, selector and affinity, taints; without `ps` only
  // NoSchedule/NoExecute taints are checked).
  bool fits(int node, const ResolvedRequest& request, const PodSetRequest* ps) const {
    return fits(*index_, node, request, ps);
  }
  // The same on any copy of the index (a ViewSnapshot's, read on another thread): they read
  // nothing of the view itself (view_snapshot.cpp).
  static ResolvedRequest resolve(const TopologyIndex& index, const ResourceAmounts& request);
  static bool fits(const TopologyIndex& index, int node, const ResolvedRequest& request,
                   const PodSetRequest* ps);
  // The node can still take a pod of `ps`: it is in the view and kube-scheduler's own node filters
  // (NodeUnschedulable, NodeAffinity and nodeSelector, TaintToleration, readiness) pass it.
  bool node_usable_for(const PodSetRequest& ps, const std::string& name) const;
  // The same, as the sentence kube-scheduler's filters would give ("is NotReady", ...).
  std::string why_unusable(const PodSetRequest& ps, const std::string& name) const;

  // Preemption: the running pods as the victim planner sees them, and the budgets.
  std::vector<PreemptionCandidate> preemption_candidates() const;
  std::vector<DisruptionBudget> disruption_budgets() const;
  // The pod `uid` no longer runs on `node` (gone, terminating, or moved).
  bool leaving(const std::string& uid, const std::string& node) const;

  const ViewCounters& counters() const { return counters_; }

 private:
  ViewPod pod_info(ListedPod&& pod) const;
  void identify(const nlohmann::json& pod, ViewPod& info) const;
  void forget_pod_group(const nlohmann::json& pod_group, PodGroupKind kind);
  void remember_min_resources(const nlohmann::json& pod_group, PodGroupKind kind);
  void replace_hypernodes(std::vector<HyperNodeSpec> hypernodes);
  void replace_nodes(std::vector<NodeSpec> nodes);
  void replace_pods(std::vector<ListedPod> pods, std::span<const std::string> waiting);
  void count_pod(const ViewPod& pod, int sign);

  ViewOptions options_;
  std::map<std::string, HyperNodeSpec> hypernodes_;
  std::map<std::string, NodeSpec> nodes_;
  std::map<std::string, ViewPod> pods_;  // by uid
  // Pending gang pods' request documents and their gang, by uid (bounded by the pending pods).
  std::map<std::string, std::pair<std::string, nlohmann::json>> pending_;
  std::optional<TopologyIndex> index_;
  bool dirty_ = true;
  // Gang sizes by where they come from: namespace/name (a Workload's: namespace/workload/podGroup).
  std::map<PodGroupKind, std::map<std::string, std::int32_t>> group_sizes_;
  // PodGroups' topology, as the pod annotations that say the same (by gang key).
  std::map<std::string, std::map<std::string, std::string>> group_topology_;
  // PodGroups that divide their gang into sub-groups, by gang key.
  std::map<std::string, std::pair<PodGroupKind, nlohmann::json>> grouped_;
  // Coscheduling PodGroups' minResources, by gang key.
  std::map<std::string, MinResourcesCheck> min_resources_;
  std::map<std::string, DisruptionBudget> budgets_;  // by namespace/name
  ViewCounters counters_;
};

}  // namespace hypertopo::scheduler
