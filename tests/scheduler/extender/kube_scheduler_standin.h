// tests/scheduler/extender/kube_scheduler_standin.h: kube-scheduler v1.26 driving our extender, for tests.
//
// There is no kube-scheduler here; this stand-in makes the calls a kube-scheduler profile with our
// extender makes, in the same order, against the loopback API server and the extender's HTTP routes.
// Copied from kubernetes/kubernetes v1.26:
//   - pkg/scheduler/schedule_one.go scheduleOne -> schedulePod: findNodesThatFitPod runs the framework's
//     Filter plugins over the nodes, keeps numFeasibleNodesToFind of them (percentageOfNodesToScore:
//     the gang profile sets 100, so every feasible node), then findNodesThatPassExtenders POSTs
//     ExtenderArgs{pod, nodenames} to the extender's filterVerb (pkg/scheduler/extender.go
//     HTTPExtender.Filter, nodeCacheCapable) and keeps the nodenames it returns; failedNodes become the
//     pod's FailedScheduling message. prioritizeNodes POSTs the kept names to the prioritizeVerb
//     (HTTPExtender.Prioritize) and scales each score by the extender's weight and
//     MaxNodeScore / MaxExtenderPriority; selectHost takes the highest total (ties: the first here,
//     a random one in kube-scheduler, which tests never rely on).
//   - the bind: DefaultBinder POSTs a Binding to pods/<name>/binding, which sets spec.nodeName; the
//     loopback store has no binding subresource, so the stand-in PUTs the pod with spec.nodeName set
//     (the watch event the extender sees is the same Pod update).
//   - a pod that fits nowhere stays in the unschedulable queue until a cluster event or its backoff
//     moves it back (pkg/scheduler/internal/queue). Two modes (`queue`):
//     kRetryEveryCycle: each cycle() retries every pending pod, in queue order (PrioritySort: higher
//     spec.priority first, then older first), as if an event had moved them all;
//     kV126: the queue of pkg/scheduler/internal/queue/scheduling_queue.go, v1.26, on the stand-in's
//     clock (advance()). A new pod is Add()ed to activeQ. A failed one, Unschedulable or an error
//     (an extender error included: schedule_one.go handleSchedulingFailure ->
//     AddUnschedulableIfNotPresent), is parked in unschedulablePods with the Filter plugins that
//     rejected a node (Diagnosis.UnschedulablePlugins; the extender is no plugin, so a pod only the
//     extender refused, or that got an extender error, has none) and is not tried again until
//     MoveAllToActiveOrBackoffQueue moves it: cycle() first diffs what kube-scheduler's informers
//     saw since the last cycle and raises the events eventhandlers.go raises (a Node added, a Node's
//     spec, labels, taints, allocatable or conditions changed (nodeSchedulingPropertiesChange), an
//     assigned Pod deleted); movePodsToActiveOrBackoffQueue moves a pod with no plugins on any such
//     event, else when a plugin of its registers for the event (EventsToRegister: NodeResourcesFit
//     on Node Add/Update and Pod Delete, NodeAffinity, NodeUnschedulable and TaintToleration on
//     Node Add/Update); preCheckForNode's fit check on NodeAdd is not modelled. A moved pod waits
//     out its backoff (1 s doubled per attempt, at most 10 s: calculateBackoffDuration) in
//     podBackoffQ; flushUnschedulablePodsLeftover moves a pod parked longer than
//     podMaxInUnschedulablePodsDuration (5 min) whatever happened, which flushed() counts. Events
//     during a pod's own attempt (moveRequestCycle) do not occur here: cycle() is one thread.
//     Later versions differ: with queueing hints (v1.28 beta, pkg/scheduler/internal/queue, since
//     v1.32 pkg/scheduler/backend/queue) determineSchedulingHintForInFlightPod sends a pod whose
//     failure no plugin claims (UnschedulablePlugins and PendingPlugins empty) to backoff at once,
//     "because this Pod may not be retried until the next flush".
// The framework's Filter plugins, from their own source: NodeUnschedulable (nodeunschedulable.go:
// spec.unschedulable unless the pod tolerates node.kubernetes.io/unschedulable:NoSchedule),
// NodeResourcesFit (noderesources/fit.go: requests of the pod plus those of the pods already on the
// node within allocatable, one pod slot), TaintToleration (tainttoleration.go: NoSchedule and
// NoExecute taints must be tolerated), NodeAffinity (component-helpers nodeaffinity.go: nodeSelector
// and required terms ORed, In and NotIn only here: the tests' pods use those).
// The kubelet's part: a bound pod is set Running (status), as the kubelet reports it.
// Preemption, when a pod fits nowhere (pkg/scheduler/framework/plugins/defaultpreemption and
// pkg/scheduler/framework/preemption/preemption.go, v1.26):
//   - PodEligibleToPreemptOthers: not with preemptionPolicy Never, nor while a lower-priority pod on
//     its nominated node is terminating;
//   - nodesWherePreemptionMightHelp: nodes whose failure is resolvable (NodeResourcesFit's
//     Insufficient/Too many pods, the extender's failedNodes; not NodeUnschedulable, NodeAffinity,
//     TaintToleration or the extender's failedAndUnresolvableNodes);
//   - DryRunPreemption + SelectVictimsOnNode on each: remove every lower-priority pod, check the pod
//     fits, reprieve the removed pods most important first (MoreImportantPod: priority, then the
//     earlier start), PDB-violating ones first (filterPodsWithPDBViolation); GetOffsetAndNumCandidates
//     caps the candidates at max(10% of nodes, 100) (the offset is random there, 0 here);
//   - callExtenders: POSTs {Pod, NodeNameToMetaVictims} to the preemptVerb (extender.go
//     ProcessPreemption, nodeCacheCapable), fails on a returned node without victims
//     ("expected at least one victim pod on node") or a victim UID not on that node
//     (convertPodUIDToPod), and takes the answer as the only candidates;
//   - SelectCandidate / pickOneNodeForPreemption: fewest PDB violations, lowest highest victim
//     priority, smallest priority sum, fewest victims, latest start of the highest-priority victims,
//     then the first;
//   - prepareCandidate: deletes the victims (the API server's graceful deletion sets
//     deletionTimestamp; finish_terminations() is the kubelet and API server completing it) and sets
//     the pod's status.nominatedNodeName. Pods nominated to a node count there for pods of lower or
//     equal priority (RunFilterPluginsWithNominatedPods).
//
//   KubeSchedulerStandIn scheduler(client, http, "/scheduler", "ml");
//   int bound = scheduler.cycle();                  // one pass over the pending pods
//   scheduler.failure("trainer-3");                 // its FailedScheduling text, "" when bound
//   scheduler.queue = KubeSchedulerStandIn::Queue::kV126;
//   scheduler.advance(std::chrono::minutes(5));     // the flush moves pods parked since then
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "k8s/client/kube_client.h"
#include "net/http_transport.h"
#include "scheduler/index/quantity.h"

namespace hypertopo::testing {

class KubeSchedulerStandIn {
 public:
  KubeSchedulerStandIn(k8s::KubeClient& client, net::HttpTransport& extender, std::string prefix,
                       std::string ns)
      : client_(client), extender_(extender), prefix_(std::move(prefix)), ns_(std::move(ns)) {}

  // Called after each binding, before the next pod is scheduled (a test waits there for the
  // extender's watch to see it, as kube-scheduler's next cycle would find it in its cache).
  std::function<void(const std::string& pod, const std::string& node)> after_bind;

  enum class Queue { kRetryEveryCycle, kV126 };
  Queue queue = Queue::kRetryEveryCycle;

  // The stand-in's clock (kV126): backoff and the unschedulable flush read it.
  void advance(std::chrono::milliseconds d) { now_ += d; }

  // One scheduling pass; returns how many pods were bound. kRetryEveryCycle: every pending pod;
  // kV126: the pods in activeQ once the events, finished backoffs and the flush have moved theirs.
  int cycle() {
    const auto pods = items(kPods, ns_);
    const auto nodes = items(kNodes, "");
    std::vector<nlohmann::json> pending;
    for (const auto& p : pods) {
      if (!str(obj(p, "spec"), "nodeName").empty() || obj(p, "metadata").contains("deletionTimestamp"))
        continue;
      if (str(obj(p, "status"), "phase") != "Pending" && !str(obj(p, "status"), "phase").empty()) continue;
      pending.push_back(p);
    }
    std::stable_sort(pending.begin(), pending.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return obj(a, "spec").value("priority", 0) > obj(b, "spec").value("priority", 0);
    });
    if (queue == Queue::kV126) {
      observe(pods, nodes);
      std::vector<nlohmann::json> popped;
      std::map<std::string, Queued> still;
      for (const auto& p : pending) {
        const std::string name = str(obj(p, "metadata"), "name");
        auto it = queued_.find(name);
        Queued q = it == queued_.end() ? Queued{.timestamp = now_} : it->second;  // Add(): activeQ
        if (q.state == State::kBackoff && backoff_done(q))
          q.state = State::kActive;  // flushBackoffQCompleted
        if (q.state == State::kUnschedulable && now_ - q.timestamp > kMaxInUnschedulable) {
          ++flushed_;  // flushUnschedulablePodsLeftover (UnschedulableTimeout: a wildcard event)
          q.state = backoff_done(q) ? State::kActive : State::kBackoff;
        }
        if (q.state == State::kActive) popped.push_back(p);
        still[name] = q;
      }
      queued_ = std::move(still);
      int bound = 0;
      for (const auto& pod : popped) {
        const std::string name = str(obj(pod, "metadata"), "name");
        Queued& q = queued_[name];
        ++q.attempts;
        if (schedule_one(pod, nodes)) {
          ++bound;
          queued_.erase(name);
          continue;
        }
        // AddUnschedulableIfNotPresent: the timestamp refreshed, parked in unschedulablePods.
        q.timestamp = now_;
        q.state = State::kUnschedulable;
        if (!last_error_) q.plugins = last_plugins_;  // handleSchedulingFailure sets them on a FitError only
        ++parked_;
      }
      return bound;
    }
    int bound = 0;
    for (const auto& pod : pending) {
      if (schedule_one(pod, nodes)) ++bound;
    }
    return bound;
  }

  // kV126: attempts that ended parked in unschedulablePods, and pods the 5-minute flush moved.
  int parked() const { return parked_; }
  int flushed() const { return flushed_; }

  std::string failure(const std::string& pod) const {
    auto it = failures_.find(pod);
    return it == failures_.end() ? std::string() : it->second;
  }
  int extender_calls() const { return extender_calls_; }

  // The shipped config names preemptVerb: preempt; empty runs DefaultPreemption without the extender.
  std::string preempt_verb = "preempt";
  struct Preemption {
    std::string pod, node;
    std::vector<std::string> victims;
  };
  const std::vector<Preemption>& preemptions() const { return preemptions_; }
  int preempt_calls() const { return preempt_calls_; }
  // Completes the graceful deletions preemption began (the kubelet stops the containers, the API
  // server removes the objects).
  int finish_terminations() {
    int n = 0;
    for (const auto& p : items(kPods, ns_)) {
      if (!obj(p, "metadata").contains("deletionTimestamp")) continue;
      if (client_.delete_object(kPods, ns_, str(obj(p, "metadata"), "name"))) ++n;
    }
    return n;
  }

 private:
  inline static const k8s::Resource kPods{"", "v1", "pods", true};
  inline static const k8s::Resource kNodes{"", "v1", "nodes", false};
  inline static const k8s::Resource kBudgets{"policy", "v1", "poddisruptionbudgets", true};

  // obj[key] as an object, empty when absent (a created Pod has no status until the kubelet's).
  static const nlohmann::json& obj(const nlohmann::json& o, const char* key) {
    static const nlohmann::json empty = nlohmann::json::object();
    if (!o.is_object()) return empty;
    auto it = o.find(key);
    return it == o.end() || !it->is_object() ? empty : *it;
  }

  static std::string str(const nlohmann::json& obj, const char* key) {
    if (!obj.is_object()) return {};
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
  }

  std::vector<nlohmann::json> items(const k8s::Resource& r, const std::string& ns) {
    auto list = client_.list(r, ns);
    if (!list) return {};
    return list->items;
  }

  static std::map<std::string, std::int64_t> requests(const nlohmann::json& pod) {
    std::map<std::string, std::int64_t> out;
    for (const auto& c : obj(pod, "spec").value("containers", nlohmann::json::array())) {
      const auto req =
          c.value("resources", nlohmann::json::object()).value("requests", nlohmann::json::object());
      for (const auto& [k, v] : req.items()) {
        if (auto q = scheduler::parse_quantity(k, v.get<std::string>())) out[k] += *q;
      }
    }
    return out;
  }

  static bool tolerates(const nlohmann::json& pod, const std::string& key, const std::string& value,
                        const std::string& effect) {
    for (const auto& t : obj(pod, "spec").value("tolerations", nlohmann::json::array())) {
      if (!str(t, "effect").empty() && str(t, "effect") != effect) continue;
      if (!str(t, "key").empty() && str(t, "key") != key) continue;
      if (str(t, "operator") == "Exists" || str(t, "value") == value) return true;
    }
    return false;
  }

  static bool affinity_matches(const nlohmann::json& pod, const nlohmann::json& labels) {
    const auto selector = obj(pod, "spec").value("nodeSelector", nlohmann::json::object());
    for (const auto& [k, v] : selector.items()) {
      if (!labels.contains(k) || labels[k] != v) return false;
    }
    const auto na = obj(pod, "spec")
                        .value("affinity", nlohmann::json::object())
                        .value("nodeAffinity", nlohmann::json::object());
    if (!na.contains("requiredDuringSchedulingIgnoredDuringExecution")) return true;
    const auto terms = na["requiredDuringSchedulingIgnoredDuringExecution"].value("nodeSelectorTerms",
                                                                                  nlohmann::json::array());
    for (const auto& term : terms) {
      bool all = true;
      for (const auto& e : term.value("matchExpressions", nlohmann::json::array())) {
        const std::string key = str(e, "key");
        const bool has = labels.contains(key);
        const auto values = e.value("values", nlohmann::json::array());
        const bool listed = has && std::find(values.begin(), values.end(), labels[key]) != values.end();
        if (str(e, "operator") == "In" && !listed) all = false;
        if (str(e, "operator") == "NotIn" && listed) all = false;
      }
      if (all) return true;
    }
    return false;
  }

  // The v1.26 queue's state of a pending pod (kV126).
  enum class State { kActive, kBackoff, kUnschedulable };
  struct Queued {
    State state = State::kActive;
    std::chrono::milliseconds timestamp{0};  // when it was added or last parked
    int attempts = 0;
    std::set<std::string> plugins;  // UnschedulablePlugins
  };
  static constexpr std::chrono::milliseconds kMaxInUnschedulable{5 * 60 * 1000};

  bool backoff_done(const Queued& q) const {
    std::chrono::milliseconds backoff{1000};
    for (int i = 1; i < q.attempts && backoff < std::chrono::milliseconds(10000); ++i) backoff *= 2;
    return q.timestamp + std::min(backoff, std::chrono::milliseconds(10000)) <= now_;
  }

  // The informers' view since the last cycle, as eventhandlers.go turns it into queue moves.
  void observe(const std::vector<nlohmann::json>& pods, const std::vector<nlohmann::json>& nodes) {
    std::map<std::string, nlohmann::json> nodes_now;
    for (const auto& n : nodes) {
      // nodeSchedulingPropertiesChange: what a heartbeat does not change.
      nlohmann::json props = {
          {"spec", obj(n, "spec")},
          {"labels", obj(n, "metadata").value("labels", nlohmann::json::object())},
          {"allocatable", obj(n, "status").value("allocatable", nlohmann::json::object())},
          {"conditions", nlohmann::json::array()}};
      for (const auto& c : obj(n, "status").value("conditions", nlohmann::json::array()))
        props["conditions"].push_back({{"type", str(c, "type")}, {"status", str(c, "status")}});
      nodes_now[str(obj(n, "metadata"), "name")] = std::move(props);
    }
    std::set<std::string> assigned_now;
    for (const auto& p : pods) {
      if (!str(obj(p, "spec"), "nodeName").empty()) assigned_now.insert(str(obj(p, "metadata"), "name"));
    }
    if (observed_) {
      for (const auto& [name, props] : nodes_now) {
        auto it = seen_nodes_.find(name);
        if (it == seen_nodes_.end())
          move_all("Node", true);
        else if (it->second != props)
          move_all("Node", false);
      }
      for (const auto& name : seen_assigned_) {
        if (!assigned_now.contains(name)) move_all("Pod", false);
      }
    }
    observed_ = true;
    seen_nodes_ = std::move(nodes_now);
    seen_assigned_ = std::move(assigned_now);
  }

  // MoveAllToActiveOrBackoffQueue for a Node Add/Update or an assigned Pod's Delete.
  void move_all(const std::string& resource, bool /*add*/) {
    for (auto& [name, q] : queued_) {
      if (q.state != State::kUnschedulable) continue;
      bool matches = q.plugins.empty();
      for (const auto& plugin : q.plugins) {
        if (resource == "Node" || plugin == "NodeResourcesFit") matches = true;
      }
      if (!matches) continue;
      q.state = backoff_done(q) ? State::kActive : State::kBackoff;
    }
  }

  // The Filter plugin that gives each reason framework_filter() writes.
  static std::string plugin_of(const std::string& why) {
    if (why.starts_with("node(s) were unschedulable")) return "NodeUnschedulable";
    if (why.starts_with("node(s) didn't match")) return "NodeAffinity";
    if (why.starts_with("node(s) had untolerated taint")) return "TaintToleration";
    return "NodeResourcesFit";
  }

 public:
  // The framework's Filter plugins for one node (pods_now: every pod, bound or nominated); "" when it
  // passes, else the reason the plugin gives.
  static std::string framework_filter(const nlohmann::json& pod, const nlohmann::json& node,
                                      const std::vector<nlohmann::json>& pods_now) {
    const auto& spec = obj(node, "spec");
    if (spec.value("unschedulable", false) &&
        !tolerates(pod, "node.kubernetes.io/unschedulable", "", "NoSchedule"))
      return "node(s) were unschedulable";
    const auto labels = obj(node, "metadata").value("labels", nlohmann::json::object());
    if (!affinity_matches(pod, labels)) return "node(s) didn't match Pod's node affinity/selector";
    for (const auto& t : spec.value("taints", nlohmann::json::array())) {
      const std::string effect = str(t, "effect");
      if ((effect == "NoSchedule" || effect == "NoExecute") &&
          !tolerates(pod, str(t, "key"), str(t, "value"), effect))
        return "node(s) had untolerated taint {" + str(t, "key") + ": " + str(t, "value") + "}";
    }
    const std::string name = str(obj(node, "metadata"), "name");
    std::map<std::string, std::int64_t> used;
    std::int64_t pods_on = 0;
    const std::string uid = str(obj(pod, "metadata"), "uid");
    for (const auto& p : pods_now) {
      const std::string phase = str(obj(p, "status"), "phase");
      const bool here = str(obj(p, "spec"), "nodeName") == name;
      // A pending pod nominated here by preemption holds its room against pods of no higher priority.
      const bool nominated = str(obj(p, "spec"), "nodeName").empty() &&
                             str(obj(p, "status"), "nominatedNodeName") == name &&
                             str(obj(p, "metadata"), "uid") != uid && priority(p) >= priority(pod);
      if ((!here && !nominated) || phase == "Succeeded" || phase == "Failed") continue;
      ++pods_on;
      for (const auto& [k, v] : requests(p)) used[k] += v;
    }
    const auto alloc = obj(node, "status").value("allocatable", nlohmann::json::object());
    if (alloc.contains("pods")) {
      if (auto cap = scheduler::parse_quantity("pods", alloc["pods"].get<std::string>());
          cap && pods_on + 1 > *cap)
        return "Too many pods";
    }
    for (const auto& [k, v] : requests(pod)) {
      if (v == 0) continue;
      std::int64_t cap = 0;
      if (alloc.contains(k)) {
        if (auto q = scheduler::parse_quantity(k, alloc[k].get<std::string>())) cap = *q;
      }
      if (used[k] + v > cap) return "Insufficient " + k;
    }
    return {};
  }

 private:
  nlohmann::json post(const std::string& verb, const nlohmann::json& args) {
    ++extender_calls_;
    auto r = extender_.round_trip(
        {"POST", prefix_ + "/" + verb, {{"Content-Type", "application/json"}}, args.dump()},
        std::chrono::seconds(30), true);
    if (!r || r->status != 200) return nlohmann::json();
    return nlohmann::json::parse(r->body, nullptr, false);
  }

  static std::int64_t priority(const nlohmann::json& pod) { return obj(pod, "spec").value("priority", 0); }

  // NodeResourcesFit's failures can be resolved by removing pods; the other plugins' cannot.
  static bool resolvable(const std::string& why) {
    return why.starts_with("Insufficient") || why == "Too many pods";
  }

  // pkg/scheduler/util MoreImportantPod.
  static bool more_important(const nlohmann::json& a, const nlohmann::json& b) {
    if (priority(a) != priority(b)) return priority(a) > priority(b);
    const std::string sa = str(obj(a, "status"), "startTime"), sb = str(obj(b, "status"), "startTime");
    if (sa.empty() != sb.empty()) return !sa.empty();
    return sa < sb;
  }

  struct Victims {
    std::vector<nlohmann::json> pods;  // most important first
    std::int64_t pdb_violations = 0;
  };

  // defaultpreemption SelectVictimsOnNode.
  std::optional<Victims> select_victims(const nlohmann::json& pod, const nlohmann::json& node,
                                        const std::vector<nlohmann::json>& pods_now,
                                        const std::vector<nlohmann::json>& pdbs) {
    const std::string name = str(obj(node, "metadata"), "name");
    // Only the pods bound or nominated here count in framework_filter() for this node: the others
    // are left out of `remaining` instead of being copied once per candidate node.
    std::vector<nlohmann::json> remaining, potential;
    for (const auto& p : pods_now) {
      const std::string bound_to = str(obj(p, "spec"), "nodeName");
      if (bound_to == name && priority(p) < priority(pod))
        potential.push_back(p);
      else if (bound_to == name || str(obj(p, "status"), "nominatedNodeName") == name)
        remaining.push_back(p);
    }
    if (potential.empty() || !framework_filter(pod, node, remaining).empty()) return std::nullopt;
    std::stable_sort(potential.begin(), potential.end(), more_important);
    // filterPodsWithPDBViolation: status.disruptionsAllowed decremented per matching pod not in
    // status.disruptedPods; an empty selector matches nothing.
    std::vector<std::int64_t> allowed;
    for (const auto& b : pdbs) allowed.push_back(obj(b, "status").value("disruptionsAllowed", 0));
    std::vector<nlohmann::json> violating, other;
    for (const auto& p : potential) {
      bool violates = false;
      const auto labels = obj(p, "metadata").value("labels", nlohmann::json::object());
      for (std::size_t i = 0; i < pdbs.size() && !labels.empty(); ++i) {
        const auto match =
            obj(obj(pdbs[i], "spec"), "selector").value("matchLabels", nlohmann::json::object());
        if (match.empty() ||
            str(obj(pdbs[i], "metadata"), "namespace") != str(obj(p, "metadata"), "namespace"))
          continue;
        bool all = true;
        for (const auto& [k, v] : match.items()) all = all && labels.contains(k) && labels[k] == v;
        if (!all) continue;
        if (obj(obj(pdbs[i], "status"), "disruptedPods").contains(str(obj(p, "metadata"), "name"))) continue;
        if (--allowed[i] < 0) violates = true;
      }
      (violates ? violating : other).push_back(p);
    }
    Victims out;
    auto reprieve = [&](const std::vector<nlohmann::json>& list, bool violates) {
      for (const auto& p : list) {
        remaining.push_back(p);
        if (framework_filter(pod, node, remaining).empty()) continue;
        remaining.pop_back();
        out.pods.push_back(p);
        if (violates) ++out.pdb_violations;
      }
    };
    reprieve(violating, true);
    reprieve(other, false);
    return out;
  }

  // PostFilter: DefaultPreemption with the extender's preemptVerb.
  void preempt(const nlohmann::json& pod, const std::vector<nlohmann::json>& nodes,
               const std::vector<nlohmann::json>& pods_now, const std::set<std::string>& resolvable_nodes) {
    if (str(obj(pod, "spec"), "preemptionPolicy") == "Never") return;
    const std::string nominated = str(obj(pod, "status"), "nominatedNodeName");
    if (!nominated.empty()) {
      for (const auto& p : pods_now) {
        if (str(obj(p, "spec"), "nodeName") == nominated &&
            obj(p, "metadata").contains("deletionTimestamp") && priority(p) < priority(pod))
          return;  // "not eligible due to a terminating pod on the nominated node"
      }
    }
    const auto pdbs = items(kBudgets, ns_);
    std::size_t num_candidates = std::max<std::size_t>(nodes.size() / 10, 100);
    num_candidates = std::min(num_candidates, nodes.size());
    // In the order found from the random offset: pickOneNodeForPreemption's ties fall to Go's map
    // order there, which is random too.
    std::vector<std::pair<std::string, Victims>> candidates;
    const std::size_t offset = nodes.empty() ? 0 : rng_() % nodes.size();  // rand.Int31n(numNodes)
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const auto& node = nodes[(offset + k) % nodes.size()];
      if (candidates.size() >= num_candidates) break;
      const std::string name = str(obj(node, "metadata"), "name");
      if (!resolvable_nodes.contains(name)) continue;
      if (auto v = select_victims(pod, node, pods_now, pdbs)) candidates.emplace_back(name, std::move(*v));
    }
    if (candidates.empty()) return;
    if (!preempt_verb.empty()) {
      nlohmann::json meta = nlohmann::json::object();
      for (const auto& [node, v] : candidates) {
        nlohmann::json uids = nlohmann::json::array();
        for (const auto& p : v.pods) uids.push_back({{"UID", str(obj(p, "metadata"), "uid")}});
        meta[node] = {{"Pods", uids}, {"NumPDBViolations", v.pdb_violations}};
      }
      ++preempt_calls_;
      const nlohmann::json result = post(preempt_verb, {{"Pod", pod}, {"NodeNameToMetaVictims", meta}});
      std::vector<std::pair<std::string, Victims>> narrowed;
      const nlohmann::json answer =
          result.is_object() ? result.value("NodeNameToMetaVictims", nlohmann::json()) : nlohmann::json();
      if (answer.is_object()) {
        for (const auto& [node, mv] : answer.items()) {
          Victims v;
          v.pdb_violations = mv.value("NumPDBViolations", std::int64_t{0});
          for (const auto& mp : mv.value("Pods", nlohmann::json::array())) {
            const std::string uid = str(mp, "UID");
            const nlohmann::json* found = nullptr;
            for (const auto& p : pods_now) {
              if (str(obj(p, "metadata"), "uid") == uid && str(obj(p, "spec"), "nodeName") == node)
                found = &p;
            }
            if (!found) {
              preempt_errors_.push_back("extender claims to preempt pod (UID: " + uid + ") on node: " + node +
                                        ", but the pod is not found on that node");
              return;
            }
            v.pods.push_back(*found);
          }
          if (v.pods.empty()) {
            preempt_errors_.push_back("expected at least one victim pod on node \"" + node + "\"");
            return;
          }
          narrowed.emplace_back(node, std::move(v));
        }
      }
      candidates = std::move(narrowed);
      if (candidates.empty()) return;
    }
    // pickOneNodeForPreemption.
    auto key = [](const Victims& v) {
      std::int64_t highest = v.pods.empty() ? INT64_MIN : priority(v.pods.front()), sum = 0;
      std::string earliest;
      for (const auto& p : v.pods) {
        sum += priority(p) + 2147483648LL;
        if (priority(p) == highest) {
          const std::string t = str(obj(p, "status"), "startTime");
          if (earliest.empty() || t < earliest) earliest = t;
        }
      }
      return std::tuple(v.pdb_violations, highest, sum, static_cast<std::int64_t>(v.pods.size()), earliest);
    };
    const std::pair<std::string, Victims>* best = nullptr;
    for (const auto& c : candidates) {
      if (!best) {
        best = &c;
        continue;
      }
      auto a = key(c.second), b = key(best->second);
      // The latest start wins on the fifth criterion.
      if (std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a), std::get<3>(a)) <
              std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b), std::get<3>(b)) ||
          (std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a), std::get<3>(a)) ==
               std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b), std::get<3>(b)) &&
           std::get<4>(a) > std::get<4>(b)))
        best = &c;
    }
    Preemption record{str(obj(pod, "metadata"), "name"), best->first, {}};
    for (const auto& victim : best->second.pods) {
      nlohmann::json terminating = victim;
      terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
      (void)client_.update(kPods, ns_, terminating);
      record.victims.push_back(str(obj(victim, "metadata"), "name"));
    }
    nlohmann::json nominated_pod = pod;
    nominated_pod["status"]["nominatedNodeName"] = best->first;
    (void)client_.update_status(kPods, ns_, nominated_pod);
    preemptions_.push_back(std::move(record));
  }

  bool schedule_one(const nlohmann::json& pod, const std::vector<nlohmann::json>& nodes) {
    const std::string name = str(obj(pod, "metadata"), "name");
    const auto pods_now = items(kPods, ns_);
    last_plugins_.clear();
    last_error_ = false;
    std::vector<std::string> feasible;
    std::map<std::string, int> framework_reasons;
    std::set<std::string> resolvable_nodes;
    for (const auto& node : nodes) {
      const std::string why = framework_filter(pod, node, pods_now);
      if (why.empty()) {
        feasible.push_back(str(obj(node, "metadata"), "name"));
      } else {
        ++framework_reasons[why];
        last_plugins_.insert(plugin_of(why));
        if (resolvable(why)) resolvable_nodes.insert(str(obj(node, "metadata"), "name"));
      }
    }
    auto unschedulable = [&](const std::string& extender_reason) {
      // schedule_one.go FitError.Error(): "0/N nodes are available: <count> <reason>, ...".
      std::string text = "0/" + std::to_string(nodes.size()) + " nodes are available:";
      for (const auto& [why, n] : framework_reasons) text += " " + std::to_string(n) + " " + why + ".";
      if (!extender_reason.empty()) text += " " + extender_reason;
      failures_[name] = text;
      preempt(pod, nodes, pods_now, resolvable_nodes);
      return false;
    };
    if (feasible.empty()) return unschedulable("");
    const nlohmann::json filtered = post("filter", {{"pod", pod}, {"nodenames", feasible}});
    // extender.go HTTPExtender.Filter: a status but 200 (send) or a result.Error is the attempt's
    // error, not a FitError: no PostFilter (preemption) runs, the error is the pod's event text.
    if (!filtered.is_object() || !str(filtered, "error").empty()) {
      last_error_ = true;
      failures_[name] = filtered.is_object() ? str(filtered, "error")
                                             : "failed filter with extender at URL " + prefix_ + "/filter";
      return false;
    }
    std::vector<std::string> kept;
    if (filtered.is_object() && filtered.contains("nodenames") && filtered["nodenames"].is_array())
      kept = filtered["nodenames"].get<std::vector<std::string>>();
    if (kept.empty()) {
      std::string reasons;
      if (filtered.is_object() && filtered.contains("failedNodes") && filtered["failedNodes"].is_object()) {
        std::map<std::string, int> counted;
        for (const auto& [n, why] : filtered["failedNodes"].items()) {
          ++counted[why.get<std::string>()];
          resolvable_nodes.insert(n);
        }
        for (const auto& [why, n] : counted) reasons += std::to_string(n) + " " + why + ". ";
      }
      return unschedulable(reasons);
    }
    std::string host = kept.front();
    if (kept.size() > 1) {
      const nlohmann::json scores = post("prioritize", {{"pod", pod}, {"nodenames", kept}});
      std::int64_t best = -1;
      if (scores.is_array()) {
        for (const auto& s : scores) {
          if (s.value("score", std::int64_t{0}) > best) {
            best = s.value("score", std::int64_t{0});
            host = str(s, "host");
          }
        }
      }
    }
    nlohmann::json updated = pod;
    updated["spec"]["nodeName"] = host;
    auto put = client_.update(kPods, ns_, updated);
    if (!put) return unschedulable("bind failed");
    nlohmann::json running = *put;
    running["status"]["phase"] = "Running";
    (void)client_.update_status(kPods, ns_, running);
    failures_.erase(name);
    if (after_bind) after_bind(name, host);
    return true;
  }

  k8s::KubeClient& client_;
  net::HttpTransport& extender_;
  std::string prefix_;
  std::string ns_;
  std::map<std::string, std::string> failures_;
  // kV126's queue: the pending pods' state, the clock, what the informers saw last cycle.
  std::map<std::string, Queued> queued_;
  std::chrono::milliseconds now_{0};
  bool observed_ = false;
  std::map<std::string, nlohmann::json> seen_nodes_;
  std::set<std::string> seen_assigned_;
  std::set<std::string> last_plugins_;
  bool last_error_ = false;
  int parked_ = 0, flushed_ = 0;
  int extender_calls_ = 0;
  int preempt_calls_ = 0;
  std::minstd_rand rng_{1};  // a fixed seed: the same offsets in every run
  std::vector<Preemption> preemptions_;

 public:
  std::vector<std::string> preempt_errors_;
};

}  // namespace hypertopo::testing
