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
//     moves it back (pkg/scheduler/internal/queue): each cycle() here is one such retry of every
//     pending pod, in queue order (PrioritySort: higher spec.priority first, then older first).
// The framework's Filter plugins, from their own source: NodeUnschedulable (nodeunschedulable.go:
// spec.unschedulable unless the pod tolerates node.kubernetes.io/unschedulable:NoSchedule),
// NodeResourcesFit (noderesources/fit.go: requests of the pod plus those of the pods already on the
// node within allocatable, one pod slot), TaintToleration (tainttoleration.go: NoSchedule and
// NoExecute taints must be tolerated), NodeAffinity (component-helpers nodeaffinity.go: nodeSelector
// and required terms ORed, In and NotIn only here: the tests' pods use those).
// The kubelet's part: a bound pod is set Running (status), as the kubelet reports it.
//
//   KubeSchedulerStandIn scheduler(client, http, "/scheduler", "ml");
//   int bound = scheduler.cycle();                  // one pass over the pending pods
//   scheduler.failure("trainer-3");                 // its FailedScheduling text, "" when bound
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
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

  // One scheduling pass over every pending pod; returns how many were bound.
  int cycle() {
    const auto pods = items(kPods, ns_);
    const auto nodes = items(kNodes, "");
    std::vector<nlohmann::json> queue;
    for (const auto& p : pods) {
      if (!str(obj(p, "spec"), "nodeName").empty() || obj(p, "metadata").contains("deletionTimestamp"))
        continue;
      if (str(obj(p, "status"), "phase") != "Pending" && !str(obj(p, "status"), "phase").empty()) continue;
      queue.push_back(p);
    }
    std::stable_sort(queue.begin(), queue.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return obj(a, "spec").value("priority", 0) > obj(b, "spec").value("priority", 0);
    });
    int bound = 0;
    for (const auto& pod : queue) {
      if (schedule_one(pod, nodes)) ++bound;
    }
    return bound;
  }

  std::string failure(const std::string& pod) const {
    auto it = failures_.find(pod);
    return it == failures_.end() ? std::string() : it->second;
  }
  int extender_calls() const { return extender_calls_; }

 private:
  inline static const k8s::Resource kPods{"", "v1", "pods", true};
  inline static const k8s::Resource kNodes{"", "v1", "nodes", false};

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

  // The framework's Filter plugins for one node; "" when it passes.
  std::string framework_filter(const nlohmann::json& pod, const nlohmann::json& node,
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
    for (const auto& p : pods_now) {
      const std::string phase = str(obj(p, "status"), "phase");
      if (str(obj(p, "spec"), "nodeName") != name || phase == "Succeeded" || phase == "Failed") continue;
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

  nlohmann::json post(const std::string& verb, const nlohmann::json& args) {
    ++extender_calls_;
    auto r = extender_.round_trip(
        {"POST", prefix_ + "/" + verb, {{"Content-Type", "application/json"}}, args.dump()},
        std::chrono::seconds(30), true);
    if (!r || r->status != 200) return nlohmann::json();
    return nlohmann::json::parse(r->body, nullptr, false);
  }

  bool schedule_one(const nlohmann::json& pod, const std::vector<nlohmann::json>& nodes) {
    const std::string name = str(obj(pod, "metadata"), "name");
    const auto pods_now = items(kPods, ns_);
    std::vector<std::string> feasible;
    std::map<std::string, int> framework_reasons;
    for (const auto& node : nodes) {
      const std::string why = framework_filter(pod, node, pods_now);
      if (why.empty()) {
        feasible.push_back(str(obj(node, "metadata"), "name"));
      } else {
        ++framework_reasons[why];
      }
    }
    auto unschedulable = [&](const std::string& extender_reason) {
      // schedule_one.go FitError.Error(): "0/N nodes are available: <count> <reason>, ...".
      std::string text = "0/" + std::to_string(nodes.size()) + " nodes are available:";
      for (const auto& [why, n] : framework_reasons) text += " " + std::to_string(n) + " " + why + ".";
      if (!extender_reason.empty()) text += " " + extender_reason;
      failures_[name] = text;
      return false;
    };
    if (feasible.empty()) return unschedulable("");
    const nlohmann::json filtered = post("filter", {{"pod", pod}, {"nodenames", feasible}});
    std::vector<std::string> kept;
    if (filtered.is_object() && filtered.contains("nodenames") && filtered["nodenames"].is_array())
      kept = filtered["nodenames"].get<std::vector<std::string>>();
    if (kept.empty()) {
      std::string reasons;
      if (filtered.is_object() && filtered.contains("failedNodes") && filtered["failedNodes"].is_object()) {
        std::map<std::string, int> counted;
        for (const auto& [n, why] : filtered["failedNodes"].items()) ++counted[why.get<std::string>()];
        for (const auto& [why, n] : counted) reasons += std::to_string(n) + " " + why + ". ";
      }
      if (filtered.is_object() && !str(filtered, "error").empty()) reasons += str(filtered, "error");
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
  int extender_calls_ = 0;
};

}  // namespace hypertopo::testing
