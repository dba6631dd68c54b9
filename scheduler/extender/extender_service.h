// scheduler/extender/extender_service.h: the kube-scheduler extender's logic, free of HTTP.
//
// Three parts: the cluster view (cluster_view.h: objects and the index), the gang book
// (gang_book.h: plans and their slots' state machine, gang_slot.h, behind a lock of its own) and
// the verbs of this class (filter, prioritize, preempt). Watch events go to the view, and what they
// mean for a gang's slots to the book, under the view's lock and the book's; each change moves the
// view's generation. A gang pod's verbs ask the book for its plan and slot, and preempt calls plan,
// under the same two locks. A normal pod's filter
// and prioritize take the view's snapshot of the current generation (ViewSnapshot: the index with
// the book's reservations on it), published when a verb asks and the generation moved, as
// kube-scheduler's UpdateSnapshot does at the start of a cycle, and read it with no lock held: a
// filter over 6,000 names never holds the watch behind it.
//
// Holds a cluster view (HyperNodes, Nodes, Pods, PodGroups) fed by ClusterWatcher or directly by
// tests, keeps a TopologyIndex of it, and answers the extender verbs with the JSON shapes of
// k8s.io/kube-scheduler/extender/v1 (ExtenderArgs in; ExtenderFilterResult or HostPriorityList out;
// both nodeCacheCapable modes: `nodenames` only, or full `nodes` objects). Pod events change the
// index's usage in place; only topology changes (Nodes joining or leaving, a Node's capacity,
// labels, taints or schedulability, HyperNodes) rebuild it, lazily.
//
// Gangs. A pod belongs to a gang when it carries the coscheduling label
// `scheduling.x-k8s.io/pod-group`, Volcano's annotation `scheduling.k8s.io/group-name`, our
// `hypertopo.io/gang` (label or annotation), or the upstream Workload API's spec.schedulingGroup /
// spec.workloadRef. Its size comes from `hypertopo.io/gang-size` (annotation), else Kueue's
// `kueue.x-k8s.io/pod-group-total-count`, else the PodGroup or Workload the pod names (PodGroupKind),
// else 1; a size below the pods' count makes an elastic gang. Its constraint is read off the pod's
// annotations (scheduler/input/pod_request.h), or for Volcano from its PodGroup's networkTopology.
// The first pod of a gang plans it with the PlacementEngine (around the gang's pods already bound,
// when there are: after a restart, for another replica's pods); each slot then lives as
// gang_slot.h says: a pod takes the slot of its rank (pod_request.h's rank keys; without one, the
// first free slot among the nodes offered), the slot is bound when the pod binds, released for the
// pod that replaces it when the pod goes away, and moved inside the gang's innermost constraint
// domain when its node fails or is not offered, waiting there with a reason when none has room.
// Plans expire after plan_ttl of inactivity (the injected Clock) and are cached in the state file,
// written off the request path. The slot's rank is the pod's rank hint, served by plans() with the
// domain path and as suggested annotations hypertopo.io/rank and hypertopo.io/domain-path.
// Normal pods: filter keeps the nodes the pod fits on; prioritize gives Volcano's fading-tier
// binpack score scaled to 0..MaxExtenderPriority (10), the best candidate getting 10.
//
//   ExtenderService svc({.binpack = cfg.binpack, .clock = clock, .state_file = "/var/lib/x.json"});
//   svc.set_hypernodes(hypernode_json_items); svc.upsert_node(node_json); svc.upsert_pod(pod_json);
//   auto reply = svc.filter(nlohmann::json::parse(body));   // ExtenderFilterResult JSON
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "errors/error.h"
#include "scheduler/extender/cluster_view.h"
#include "scheduler/extender/gang_book.h"
#include "scheduler/extender/gang_slot.h"
#include "scheduler/index/topology_index.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/pod_request.h"
#include "scheduler/placement/fabric_health_mode.h"
#include "scheduler/placement/job_request.h"
#include "scheduler/placement/victim_planner.h"
#include "scheduler/placement/volcano_score.h"
#include "telemetry/log.h"
#include "timing/clock.h"

namespace hypertopo::scheduler {

inline constexpr std::int64_t kMaxExtenderPriority = 10;  // extender/v1 MaxExtenderPriority

struct ExtenderOptions {
  BinpackWeights binpack;
  // How gang plans treat FabricDegraded HyperNodes and nodes with a degraded own link.
  FabricHealthMode fabric_health = FabricHealthMode::kPreferHealthy;
  std::chrono::seconds plan_ttl{600};
  std::vector<std::string> gang_label_keys{"scheduling.x-k8s.io/pod-group", "hypertopo.io/gang"};
  // pod-group-name: KAI-Scheduler's pod grouper names the pod's scheduling.run.ai PodGroup there.
  std::vector<std::string> gang_annotation_keys{"scheduling.k8s.io/group-name", "hypertopo.io/gang",
                                                "pod-group-name"};
  std::filesystem::path state_file;  // empty: plans live in memory only
  // How long the plans must be quiet before the state file is written (off the request path).
  std::chrono::milliseconds state_debounce{200};
  std::shared_ptr<timing::Clock> clock;  // null: the system clock
  telemetry::Logger log;                 // empty: logfmt lines on stderr, info and above
  // Tests: called by a normal pod's filter with the snapshot it took, before it reads it (a test
  // holds a filter there while watch events go on).
  std::function<void(const ViewSnapshot&)> snapshot_taken;
};

// The verbs' own counts; the parts count the rest (ViewCounters, BookCounters).
struct VerbCounters {
  std::int64_t filter_calls = 0, prioritize_calls = 0, preempt_calls = 0;
  // filter/prioritize bodies read by the text path (the rest took the JSON tree path).
  std::int64_t text_path_calls = 0;
  // prioritize calls that reused the node ids their pod's filter call resolved.
  std::int64_t prioritize_reused_filter = 0;
  // Verb calls answered "view still filling" (before the first lists landed: the ready gate).
  std::int64_t not_ready_calls = 0;
  // Plans that could not be made for a reason other than room, index builds that failed.
  std::int64_t errors = 0;
};

// Every part's counters, each counted once by the part that owns it.
struct ExtenderCounters {
  VerbCounters verbs;
  ViewCounters view;
  BookCounters book;
  // Watch events and lists the view could not apply (an object that does not read), by resource
  // as kubectl names it ("nodes", "hypernodes.topology.volcano.sh").
  std::map<std::string, std::int64_t, std::less<>> watch_errors;
  // Internal errors of every part (index builds, plans, state files).
  std::int64_t errors() const { return verbs.errors + view.errors + book.errors; }
};

class ExtenderService {
 public:
  explicit ExtenderService(ExtenderOptions options);

  // Cluster view, as Kubernetes JSON objects. Each marks the index for a rebuild. A list that does
  // not read (an object malformed) is an error naming the object, and the view stays as it was.
  std::expected<void, Error> set_hypernodes(const std::vector<nlohmann::json>& hypernodes);
  std::expected<void, Error> upsert_hypernode(const nlohmann::json& hypernode);
  void remove_hypernode(const std::string& name);
  std::expected<void, Error> set_nodes(const std::vector<nlohmann::json>& nodes);
  std::expected<void, Error> upsert_node(const nlohmann::json& node);
  void remove_node(const std::string& name);
  std::expected<void, Error> set_pods(const std::vector<nlohmann::json>& pods);
  std::expected<void, Error> upsert_pod(const nlohmann::json& pod);
  void remove_pod(const nlohmann::json& pod);
  // The same lists as the API server's pages (k8s::KubeClient::list_pages), read with simdjson
  // straight into the view (scheduler/input/cluster_loader.h: parse_node_pages and so on): the same
  // view and the same errors as the forms above give for the same objects, at parser speed.
  std::expected<void, Error> set_hypernode_pages(std::span<const std::string> pages);
  std::expected<void, Error> set_node_pages(std::span<const std::string> pages);
  std::expected<void, Error> set_pod_pages(std::span<const std::string> pages);
  // PodGroups: their spec.minMember sizes the gangs whose pods name them: coscheduling's
  // (scheduling.x-k8s.io/v1alpha1, pod label scheduling.x-k8s.io/pod-group) and Volcano's
  // (scheduling.volcano.sh/v1beta1, pod annotation scheduling.k8s.io/group-name). A gang whose
  // minMember is below its pods' count is elastic: it starts with minMember pods in one domain and
  // the others join that domain as room appears.
  void set_pod_groups(const std::vector<nlohmann::json>& pod_groups,
                      PodGroupKind kind = PodGroupKind::kCoscheduling);
  void upsert_pod_group(const nlohmann::json& pod_group, PodGroupKind kind = PodGroupKind::kCoscheduling);
  void remove_pod_group(const nlohmann::json& pod_group, PodGroupKind kind = PodGroupKind::kCoscheduling);

  // PodDisruptionBudgets (policy/v1): preemption avoids breaking them (victim_planner.h).
  void set_disruption_budgets(const std::vector<nlohmann::json>& budgets);
  void upsert_disruption_budget(const nlohmann::json& budget);
  void remove_disruption_budget(const nlohmann::json& budget);

  // Extender verbs. An error means the request itself is malformed (answer 400 with its message).
  std::expected<nlohmann::json, Error> filter(const nlohmann::json& args);
  std::expected<nlohmann::json, Error> prioritize(const nlohmann::json& args);
  // The same verbs on a request body as kube-scheduler POSTs it, answered as JSON text: the pod is
  // read as a tree, the `nodenames` list in place (simdjson; names are views into the parsed
  // body) and the answer is written without building a tree, so a call over 6,000 names allocates
  // no per-name objects. A body with full `nodes` objects (nodeCacheCapable: false) takes the
  // tree path. Errors as above; the answer is what filter()/prioritize() give, as text.
  std::expected<std::string, Error> filter_body(std::string_view body);
  std::expected<std::string, Error> prioritize_body(std::string_view body);
  // The preemptVerb: ExtenderPreemptionArgs in (Pod, and NodeNameToMetaVictims when
  // nodeCacheCapable, else NodeNameToVictims), ExtenderPreemptionResult out
  // ({"NodeNameToMetaVictims": {node: {"Pods": [{"UID"}], "NumPDBViolations"}}}). A gang pod gets
  // only its planned node with exactly the plan's victims still running there (the gang is planned
  // with victims when it fits nowhere: victim_planner.h), or nothing while they are leaving. A
  // normal pod keeps kube-scheduler's candidates minus nodes planned for gangs, those that break a
  // gang when others do not, and those whose domain it would fragment more (the binpack score).
  // preempt_body reads the body as filter_body does (simdjson; the victims' names and UIDs stay
  // views into the parsed body, only the pod becomes a tree) and writes the answer as text; any
  // other shape (a repeated or null Pod or victims key, a map that is not an object, a body simdjson
  // rejects or nested deeper than io::kMaxJsonDepth) takes the tree path, whose errors are the reference.
  std::expected<nlohmann::json, Error> preempt(const nlohmann::json& args);
  std::expected<std::string, Error> preempt_body(std::string_view body);
  // One candidate node's victims as kube-scheduler sent them: their UIDs and its budget violations,
  // views into the request.
  struct OfferedVictims {
    std::string_view node;
    std::vector<std::string_view> uids;
    std::int64_t pdb_violations = 0;
  };
  // One node of the answer and the victims to evict there.
  struct PreemptedNode {
    std::string node;
    std::vector<std::string> uids;
    std::int64_t pdb_violations = 0;
  };

  // {"gangs": [{"key", "jobDomain", "fabricHealth": [...], "slots": [{"rank", "node", "domainPath",
  //   "podUID", "bound", "annotations": {...}}]}]}
  nlohmann::json plans();
  // Loads plans from the state file (a missing file is no error).
  std::expected<void, Error> load_state();
  // Writes the state file now when the plans changed since it was last written (it is otherwise
  // written in the background, state_debounce after the plans go quiet, and on destruction).
  void flush_state();
  ~ExtenderService();
  ExtenderService(const ExtenderService&) = delete;
  ExtenderService& operator=(const ExtenderService&) = delete;
  // The ready gate. A service starts ready: tests and tools that fill the view themselves call the
  // verbs at once. A watcher that lists the cluster first calls expect_first_lists() with the kinds
  // it lists; until first_list_landed() was called for each, the verbs answer that the view is still
  // filling (filter: ExtenderFilterResult.error; prioritize and preempt: an ErrorCode::kUnavailable
  // error) instead of judging nodes against a partial view, where a Node not listed yet would read
  // as unknown. When the last list lands the index is built before the gate opens, so the first
  // verb call after it does not pay for the build. The gate opens once: a relist keeps the view
  // it replaces until the new list has read.
  void expect_first_lists(std::vector<std::string> kinds);
  void first_list_landed(std::string_view kind);
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  // "" when ready, else "extender view still filling: waiting for the first list of: nodes, pods".
  std::string not_ready_reason() const;

  // Checks every slot that holds a reservation (and expires idle plans): swaps or re-plans. The
  // verbs and Node events check only what may have changed (GangBook::check_due, node_changed).
  void check_plans();
  ExtenderCounters counters() const;
  // A watch event or list of `resource` ("nodes") the view could not apply: logged once, with
  // `what` naming the object, and counted (ExtenderCounters::watch_errors).
  void watch_error(std::string_view resource, const std::string& what);
  std::size_t node_count() const;
  // The view's generation: every change of the view or the book (watch events, gang verbs, plan
  // checks) moves it.
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // The snapshot of the current generation, published now when the last one is older (the index
  // built first when due: an index that does not build is the error). What a normal pod's verbs read.
  std::expected<std::shared_ptr<const ViewSnapshot>, Error> snapshot();

 private:
  // The view's lock and the book's, held by every call that reads or changes them together; the
  // generation moves when a change releases them.
  struct Changing {
    Changing(ExtenderService& s, bool moves)
        : service(s), moves_generation(moves), view(s.mu_), book(s.book_.lock()) {}
    ~Changing() {
      if (moves_generation) service.generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    Changing(const Changing&) = delete;
    Changing& operator=(const Changing&) = delete;
    ExtenderService& service;
    bool moves_generation;
    std::unique_lock<std::mutex> view;
    std::unique_lock<std::mutex> book;
  };
  Changing change() { return Changing(*this, true); }
  Changing read() const { return Changing(const_cast<ExtenderService&>(*this), false); }
  void count(std::int64_t VerbCounters::*field);
  // The verbs on a pod and candidate names, whatever the request's encoding. reason[i] < 0: names[i]
  // passes; otherwise reasons[reason[i]] says why not. A non-empty `error` fails every node.
  struct FilterOutcome {
    std::vector<std::int32_t> reason;
    std::vector<std::string> reasons;
    std::string error;
  };
  std::expected<FilterOutcome, Error> filter_names(const nlohmann::json& pod,
                                                   std::span<const std::string_view> names);
  void filter_gang(const nlohmann::json& pod, const std::string& key, std::span<const std::string_view> names,
                   FilterOutcome& out);
  void count_text_path();
  std::expected<std::vector<std::int64_t>, Error> prioritize_names(const nlohmann::json& pod,
                                                                   std::span<const std::string_view> names);
  // The preemptVerb on a pod and its candidates in the order the request lists them (a node named
  // twice keeps its last entry): the nodes kept, sorted by node.
  std::expected<std::vector<PreemptedNode>, Error> preempt_pod(const nlohmann::json& pod,
                                                               std::vector<OfferedVictims> offered);
  std::expected<std::vector<PreemptedNode>, Error> preempt_gang(const nlohmann::json& pod,
                                                                const std::string& key);
  std::vector<PreemptedNode> preempt_normal(const nlohmann::json& pod,
                                            std::span<const OfferedVictims> offered);
  std::expected<std::vector<std::string>, Error> candidates(const nlohmann::json& args) const;

  // kube-scheduler calls prioritize right after filter for the same pod, with the names filter
  // kept, in the order it kept them. The last normal pod's kept names and their node ids are held
  // so that prioritize compares names in a row instead of hashing each one again. Node ids hold for
  // one index build only.
  struct KeptNodes {
    std::string pod_uid;
    std::int64_t index_build = -1;
    std::string names;                // back to back
    std::vector<std::uint32_t> ends;  // name i is names[ends[i-1], ends[i])
    std::vector<int> ids;
  };
  void keep_filtered(const std::string& pod_uid, std::int64_t index_build,
                     std::span<const std::string_view> names, std::span<const int> ids,
                     std::span<const std::int32_t> reason);
  // The node id of each name (-1: not in the snapshot's index), from kept_ when the names are those
  // filter kept for this pod on the same index build.
  std::vector<int> node_ids(const ViewSnapshot& snap, const std::string& pod_uid,
                            std::span<const std::string_view> names);

  ExtenderOptions options_;
  mutable std::mutex mu_;  // the view (and, with the book's own lock, what the book does to it)
  ClusterView view_;
  GangBook book_;
  std::atomic<std::uint64_t> generation_{0};
  // The last snapshot published; verbs on many threads read it.
  mutable std::mutex snapshot_mu_;
  std::shared_ptr<const ViewSnapshot> snapshot_;
  // The verbs' own state apart from the view: the last filter's kept names and the counts.
  mutable std::mutex verb_mu_;
  KeptNodes kept_;
  // The verbs' own counts (the parts count the rest): filter, prioritize and preempt calls, errors,
  // text-path calls, prioritize calls that reused their filter's node ids.
  VerbCounters verb_counters_;
  std::map<std::string, std::int64_t, std::less<>> watch_errors_;
  // The ready gate, apart from mu_: /readyz and the verbs' check must not wait behind a list being
  // read into the view. ready_ is written under ready_mu_ and read without it on the verbs' path.
  mutable std::mutex ready_mu_;
  std::vector<std::string> waiting_for_;
  std::atomic<bool> ready_{true};
};

}  // namespace hypertopo::scheduler
