// Preemption: the preemptVerb as kube-scheduler calls it, the PodDisruptionBudgets it respects, and
// the running pods a gang plan may evict (victim_planner.h).
//
// kube-scheduler (kubernetes/kubernetes v1.26+) calls the verb from its PostFilter plugin
// DefaultPreemption: pkg/scheduler/framework/preemption/preemption.go Evaluator.Preempt finds
// candidate nodes with their victims (DryRunPreemption, SelectVictimsOnNode), then callExtenders
// POSTs them (pkg/scheduler/extender.go HTTPExtender.ProcessPreemption: NodeNameToMetaVictims when
// nodeCacheCapable, else NodeNameToVictims) and takes the answer's nodes and victims as the only
// candidates; convertToVictims looks each victim UID up among the pods on that node in its cache (any
// node of the cluster, not only the ones it sent), and callExtenders refuses a node with no victim.
// SelectCandidate then picks one node, prepareCandidate deletes its victims and nominates the pod.
#include <algorithm>
#include <climits>
#include <set>
#include <tuple>

#include "io/json_reader.h"
#include "io/json_writer.h"
#include "scheduler/extender/extender_service.h"
#include "scheduler/extender/object_fields.h"
#include "scheduler/input/disruption_budget.h"
#include "scheduler/placement/volcano_score.h"

namespace hypertopo::scheduler {

using nlohmann::json;
using namespace fields;

namespace {

using OfferedVictims = ExtenderService::OfferedVictims;

std::expected<std::map<std::string, OfferedVictims>, Error> offered_victims(const json& args) {
  std::map<std::string, OfferedVictims> out;
  const json* meta = field(args, {"NodeNameToMetaVictims", "nodeNameToMetaVictims", "nodenametometavictims"});
  const json* full = field(args, {"NodeNameToVictims", "nodeNameToVictims", "nodenametovictims"});
  for (const json* map : {meta, full}) {
    if (!map) continue;
    if (!map->is_object())
      return fail(ErrorCode::kParse,
                  "ExtenderPreemptionArgs: the victims map must be an object keyed by node");
    for (const auto& [node, victims] : map->items()) {
      OfferedVictims v;
      if (victims.is_object()) {
        if (const json* n = field(victims, {"NumPDBViolations", "numPDBViolations"});
            n && n->is_number_integer())
          v.pdb_violations = n->get<std::int64_t>();
        if (const json* pods = field(victims, {"Pods", "pods"}); pods && pods->is_array()) {
          for (const auto& p : *pods) {
            // MetaPod{UID} or a whole v1.Pod.
            std::string uid = str_at(p, "UID");
            if (uid.empty()) uid = str_at(p, "uid");
            if (uid.empty()) uid = str_at(member(p, "metadata"), "uid");
            if (!uid.empty()) v.uids.push_back(std::move(uid));
          }
        }
      }
      out[node] = std::move(v);
    }
  }
  return out;
}

json meta_victims(const std::vector<std::string>& uids, std::int64_t violations) {
  json pods = json::array();
  for (const auto& uid : uids) pods.push_back({{"UID", uid}});
  return json{{"Pods", std::move(pods)}, {"NumPDBViolations", violations}};
}

}  // namespace

std::expected<json, Error> ExtenderService::preempt_gang(const json& pod, const std::string& key) {
  const json& spec = member(pod, "spec");
  PreemptionOptions options;
  if (const json* prio = field(spec, {"priority"}); prio && prio->is_number_integer())
    options.priority =
        static_cast<std::int32_t>(std::clamp<std::int64_t>(prio->get<std::int64_t>(), INT32_MIN, INT32_MAX));
  options.never = str_at(spec, "preemptionPolicy") == "Never";
  if (options.never) return json::object();
  book_.check_due();
  auto plan = book_.plan_for(pod, key, &options);
  if (!plan) {
    if (plan.error().code() != ErrorCode::kUnavailable) ++verb_counters_.errors;
    return json::object();  // no domain holds the gang even with victims: nothing to evict
  }
  GangPlan& p = **plan;
  p.last_activity = options_.clock->now();
  // The pod's slot: its rank's, else the first free one whose node still has victims to evict.
  std::vector<std::string> order;
  for (const auto& s : p.slots) {
    if (s.free() && !book_.pending_victims(p, s.node).empty()) order.push_back(s.node);
  }
  for (const auto& s : p.slots) {
    if (s.free()) order.push_back(s.node);
  }
  const std::vector<std::string_view> names(order.begin(), order.end());
  auto taken = book_.take_slot(p, pod, names);
  if (!taken) return json::object();
  const PlanSlot& slot = **taken;
  const auto pending = book_.pending_victims(p, slot.node);
  if (pending.empty()) return json::object();  // its node is free, or its victims are leaving
  std::vector<std::string> uids;
  std::int64_t violations = 0;
  for (const PlanVictim* v : pending) {
    uids.push_back(v->uid);
    violations += v->violates_budget ? 1 : 0;
  }
  return json{{slot.node, meta_victims(uids, violations)}};
}

json ExtenderService::preempt_normal(const json& pod, const std::map<std::string, OfferedVictims>& offered) {
  // Nodes a gang plan holds room on are not for a normal pod to take by eviction.
  std::set<std::string> planned;
  for (const auto& [key, p] : book_.plans()) {
    for (const auto& s : p.slots) {
      if (s.holds_reservation()) planned.insert(s.node);
    }
  }
  auto ps = pod_set_request(pod, 1, false);
  std::optional<NormalPodScorer> scorer;
  if (ps) scorer.emplace(view_.index(), ps->per_pod, options_.binpack);
  struct Candidate {
    std::string node;
    std::vector<std::string> uids;
    std::int64_t violations;
    bool breaks_gang;
    std::int64_t highest;
    double score;
  };
  std::vector<Candidate> kept;
  for (const auto& [node, v] : offered) {
    if (planned.contains(node)) continue;
    Candidate c{node, v.uids, v.pdb_violations, false, INT64_MIN, 0.0};
    for (const auto& uid : c.uids) {
      if (const ViewPod* victim = view_.pod(uid)) {
        c.breaks_gang = c.breaks_gang || !victim->gang.empty();
        c.highest = std::max<std::int64_t>(c.highest, victim->priority);
      }
    }
    const int id = view_.index().find_node(node);
    if (scorer && id >= 0 && options_.binpack.normal_pod_enable) c.score = scorer->score(id);
    kept.push_back(std::move(c));
  }
  // kube-scheduler then picks among what is left by its own order (fewest budget violations,
  // lowest highest victim priority, ...): the harm first here too, then the domain the pod would
  // fragment least, which is the one the binpack score ranks highest.
  json out = json::object();
  if (kept.empty()) return out;
  auto harm = [](const Candidate& c) { return std::tuple(c.violations, c.breaks_gang, c.highest); };
  auto least = std::min_element(kept.begin(), kept.end(),
                                [&](const Candidate& a, const Candidate& b) { return harm(a) < harm(b); });
  const auto least_harm = harm(*least);
  double best = -1.0;
  for (const auto& c : kept) {
    if (harm(c) == least_harm) best = std::max(best, c.score);
  }
  for (const auto& c : kept) {
    if (harm(c) == least_harm && c.score >= best - 1e-9) out[c.node] = meta_victims(c.uids, c.violations);
  }
  return out;
}

std::expected<json, Error> ExtenderService::preempt(const json& args) {
  if (!args.is_object()) return fail(ErrorCode::kParse, "ExtenderPreemptionArgs must be a JSON object");
  const json* pod = field(args, {"Pod", "pod"});
  if (!pod || !pod->is_object()) return fail(ErrorCode::kParse, "ExtenderPreemptionArgs.Pod is missing");
  auto offered = offered_victims(args);
  if (!offered) return std::unexpected(offered.error());
  if (std::string why = not_ready_reason(); !why.empty()) {
    std::lock_guard lock(mu_);
    ++verb_counters_.preempt_calls;
    ++verb_counters_.not_ready_calls;
    return fail(ErrorCode::kUnavailable, why);
  }
  std::lock_guard lock(mu_);
  ++verb_counters_.preempt_calls;
  if (auto ok = book_.ensure_index(); !ok) {
    ++verb_counters_.errors;
    return fail(ErrorCode::kUnavailable, ok.error().message());
  }
  auto key = view_.gang_key(*pod);
  if (!key) return std::unexpected(key.error());
  json result;
  if (*key) {
    auto r = preempt_gang(*pod, **key);
    if (!r) return std::unexpected(r.error());
    result = std::move(*r);
  } else {
    result = preempt_normal(*pod, *offered);
  }
  return json{{"NodeNameToMetaVictims", std::move(result)}};
}

std::expected<std::string, Error> ExtenderService::preempt_body(std::string_view body) {
  auto args = io::parse_json(body, "ExtenderPreemptionArgs");
  if (!args) return std::unexpected(args.error());
  auto out = preempt(*args);
  if (!out) return std::unexpected(out.error());
  return io::json_text(*out);
}

}  // namespace hypertopo::scheduler
