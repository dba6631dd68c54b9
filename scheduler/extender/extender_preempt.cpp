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
#include <tuple>

#include "scheduler/extender/extender_service.h"
#include "scheduler/extender/object_fields.h"
#include "scheduler/input/disruption_budget.h"
#include "scheduler/placement/volcano_score.h"

namespace hypertopo::scheduler {

using nlohmann::json;
using namespace fields;

namespace {

using OfferedVictims = ExtenderService::OfferedVictims;
using PreemptedNode = ExtenderService::PreemptedNode;

// Both victims maps, NodeNameToMetaVictims first, in their order.
std::expected<std::vector<OfferedVictims>, Error> offered_victims(const json& args) {
  std::vector<OfferedVictims> out;
  const json* meta = field(args, {"NodeNameToMetaVictims", "nodeNameToMetaVictims", "nodenametometavictims"});
  const json* full = field(args, {"NodeNameToVictims", "nodeNameToVictims", "nodenametovictims"});
  for (const json* map : {meta, full}) {
    if (!map) continue;
    if (!map->is_object())
      return fail(ErrorCode::kParse,
                  "ExtenderPreemptionArgs: the victims map must be an object keyed by node");
    for (const auto& [node, victims] : map->items()) {
      OfferedVictims v{.node = node};
      if (victims.is_object()) {
        if (const json* n = field(victims, {"NumPDBViolations", "numPDBViolations"});
            n && n->is_number_integer())
          v.pdb_violations = n->get<std::int64_t>();
        if (const json* pods = field(victims, {"Pods", "pods"}); pods && pods->is_array()) {
          for (const auto& p : *pods) {
            // MetaPod{UID} or a whole v1.Pod.
            std::string_view uid = str_view_at(p, "UID");
            if (uid.empty()) uid = str_view_at(p, "uid");
            if (uid.empty()) uid = str_view_at(member(p, "metadata"), "uid");
            if (!uid.empty()) v.uids.push_back(uid);
          }
        }
      }
      out.push_back(std::move(v));
    }
  }
  return out;
}

json meta_victims_json(const PreemptedNode& n) {
  json pods = json::array();
  for (const auto& uid : n.uids) pods.push_back({{"UID", uid}});
  return json{{"Pods", std::move(pods)}, {"NumPDBViolations", n.pdb_violations}};
}

// Each node once, sorted: a node named twice (in both maps, or twice in one) keeps its last entry,
// as a map filled in that order would.
void unique_offered(std::vector<OfferedVictims>& offered) {
  std::stable_sort(offered.begin(), offered.end(),
                   [](const OfferedVictims& a, const OfferedVictims& b) { return a.node < b.node; });
  std::size_t kept = 0;
  for (std::size_t i = 0; i < offered.size(); ++i) {
    if (i + 1 < offered.size() && offered[i + 1].node == offered[i].node) continue;
    if (kept != i) offered[kept] = std::move(offered[i]);
    ++kept;
  }
  offered.resize(kept);
}

}  // namespace

std::expected<std::vector<PreemptedNode>, Error> ExtenderService::preempt_gang(const json& pod,
                                                                               const std::string& key) {
  const json& spec = member(pod, "spec");
  PreemptionOptions options;
  if (const json* prio = field(spec, {"priority"}); prio && prio->is_number_integer())
    options.priority =
        static_cast<std::int32_t>(std::clamp<std::int64_t>(prio->get<std::int64_t>(), INT32_MIN, INT32_MAX));
  options.never = str_at(spec, "preemptionPolicy") == "Never";
  if (options.never) return {};
  auto eviction = book_.preempt(pod, key, options);
  if (!eviction) {
    if (eviction.error().code() != ErrorCode::kUnavailable) count(&VerbCounters::errors);
    return {};  // no domain holds the gang even with victims: nothing to evict
  }
  std::vector<PreemptedNode> answer;
  if (*eviction) {
    answer.push_back({.node = std::move((*eviction)->node),
                      .uids = std::move((*eviction)->uids),
                      .pdb_violations = (*eviction)->pdb_violations});
  }
  return answer;
}

std::vector<PreemptedNode> ExtenderService::preempt_normal(const json& pod,
                                                           std::span<const OfferedVictims> offered) {
  auto ps = pod_set_request(pod, 1, false);
  std::optional<NormalPodScorer> scorer;
  if (ps) scorer.emplace(view_.index(), ps->per_pod, options_.binpack);
  struct Candidate {
    const OfferedVictims* offered;
    bool breaks_gang;
    std::int64_t highest;
    double score;
  };
  std::vector<Candidate> kept;
  kept.reserve(offered.size());
  std::string uid;
  for (const OfferedVictims& v : offered) {
    // Nodes a gang plan holds room on are not for a normal pod to take by eviction.
    if (book_.holds_reservation_on(std::string(v.node))) continue;
    Candidate c{&v, false, INT64_MIN, 0.0};
    for (std::string_view u : v.uids) {
      uid.assign(u);
      if (const ViewPod* victim = view_.pod(uid)) {
        c.breaks_gang = c.breaks_gang || !victim->gang.empty();
        c.highest = std::max<std::int64_t>(c.highest, victim->priority);
      }
    }
    const int id = view_.index().find_node(v.node);
    if (scorer && id >= 0 && options_.binpack.normal_pod_enable) c.score = scorer->score(id);
    kept.push_back(c);
  }
  // kube-scheduler then picks among what is left by its own order (fewest budget violations,
  // lowest highest victim priority, ...): the harm first here too, then the domain the pod would
  // fragment least, which is the one the binpack score ranks highest.
  std::vector<PreemptedNode> out;
  if (kept.empty()) return out;
  auto harm = [](const Candidate& c) {
    return std::tuple(c.offered->pdb_violations, c.breaks_gang, c.highest);
  };
  auto least = std::min_element(kept.begin(), kept.end(),
                                [&](const Candidate& a, const Candidate& b) { return harm(a) < harm(b); });
  const auto least_harm = harm(*least);
  double best = -1.0;
  for (const auto& c : kept) {
    if (harm(c) == least_harm) best = std::max(best, c.score);
  }
  for (const auto& c : kept) {
    if (harm(c) != least_harm || c.score < best - 1e-9) continue;
    out.push_back({.node = std::string(c.offered->node),
                   .uids = {c.offered->uids.begin(), c.offered->uids.end()},
                   .pdb_violations = c.offered->pdb_violations});
  }
  return out;
}

std::expected<std::vector<PreemptedNode>, Error> ExtenderService::preempt_pod(
    const json& pod, std::vector<OfferedVictims> offered) {
  if (std::string why = not_ready_reason(); !why.empty()) {
    count(&VerbCounters::preempt_calls);
    count(&VerbCounters::not_ready_calls);
    return fail(ErrorCode::kUnavailable, why);
  }
  count(&VerbCounters::preempt_calls);
  // Preemption plans gangs and reads the book: it works on the view and the book themselves.
  auto lock = change();
  if (auto ok = book_.ensure_index(); !ok) {
    count(&VerbCounters::errors);
    return fail(ErrorCode::kUnavailable, ok.error().message());
  }
  auto key = view_.gang_key(pod);
  if (!key) return std::unexpected(key.error());
  if (*key) return preempt_gang(pod, **key);
  unique_offered(offered);
  return preempt_normal(pod, offered);
}

std::expected<json, Error> ExtenderService::preempt(const json& args) {
  if (!args.is_object()) return fail(ErrorCode::kParse, "ExtenderPreemptionArgs must be a JSON object");
  const json* pod = field(args, {"Pod", "pod"});
  if (!pod || !pod->is_object()) return fail(ErrorCode::kParse, "ExtenderPreemptionArgs.Pod is missing");
  auto offered = offered_victims(args);
  if (!offered) return std::unexpected(offered.error());
  auto kept = preempt_pod(*pod, std::move(*offered));
  if (!kept) return std::unexpected(kept.error());
  json result = json::object();
  for (const PreemptedNode& n : *kept) result[n.node] = meta_victims_json(n);
  return json{{"NodeNameToMetaVictims", std::move(result)}};
}

}  // namespace hypertopo::scheduler
