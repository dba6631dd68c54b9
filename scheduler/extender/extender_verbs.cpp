// The extender verbs as kube-scheduler calls them (k8s.io/kube-scheduler/extender/v1).
#include <algorithm>
#include <cmath>

#include "scheduler/extender/extender_service.h"
#include "scheduler/extender/object_fields.h"
#include "scheduler/input/pod_request.h"

namespace hypertopo::scheduler {

using nlohmann::json;
using namespace fields;

std::expected<std::vector<std::string>, Error> ExtenderService::candidates(const json& args) const {
  std::vector<std::string> out;
  if (const json* names = field(args, {"nodenames", "NodeNames", "nodeNames"})) {
    if (!names->is_array())
      return fail(ErrorCode::kParse, "ExtenderArgs.nodenames must be a list of strings");
    out.reserve(names->size());
    for (const auto& n : *names) {
      if (!n.is_string()) return fail(ErrorCode::kParse, "ExtenderArgs.nodenames must be a list of strings");
      out.push_back(n.get<std::string>());
    }
    return out;
  }
  if (const json* nodes = field(args, {"nodes", "Nodes"})) {
    const json* items = nodes->is_object() ? field(*nodes, {"items", "Items"}) : nullptr;
    if (!items || !items->is_array())
      return fail(ErrorCode::kParse, "ExtenderArgs.nodes must be a NodeList with items");
    out.reserve(items->size());
    for (const auto& n : *items) {
      const std::string name = str_at(member(n, "metadata"), "name");
      if (name.empty()) return fail(ErrorCode::kParse, "ExtenderArgs.nodes.items[] without metadata.name");
      out.push_back(name);
    }
    return out;
  }
  return fail(ErrorCode::kParse, "ExtenderArgs has neither nodenames nor nodes");
}

namespace {

std::vector<std::string_view> views_of(const std::vector<std::string>& names) {
  return std::vector<std::string_view>(names.begin(), names.end());
}

}  // namespace

std::expected<ExtenderService::FilterOutcome, Error> ExtenderService::filter_names(
    const json& pod, std::span<const std::string_view> names) {
  if (!pod.is_object()) return fail(ErrorCode::kParse, "ExtenderArgs.pod is missing");
  // kube-scheduler v1.26 (pkg/scheduler/extender.go HTTPExtender.Filter) turns result.Error into the
  // scheduling attempt's error, so the pod's event says why; a failedNodes entry per node would read
  // as a verdict on nodes this extender has not listed yet.
  if (std::string why = not_ready_reason(); !why.empty()) {
    count(&VerbCounters::filter_calls);
    count(&VerbCounters::not_ready_calls);
    return FilterOutcome{.reason = {}, .reasons = {}, .error = std::move(why)};
  }
  count(&VerbCounters::filter_calls);
  FilterOutcome out;
  out.reason.assign(names.size(), -1);
  auto index_error = [&](const Error& e) {
    count(&VerbCounters::errors);
    out.error = e.message();
    out.reason.clear();
    return out;
  };
  auto key = view_.gang_key(pod);  // reads the pod and the options alone
  if (!key) return std::unexpected(key.error());
  if (*key) {
    // A gang pod's filter moves its slot: it works on the book and the view themselves.
    auto lock = change();
    if (auto ok = book_.ensure_index(); !ok) return index_error(ok.error());
    filter_gang(pod, **key, names, out);
    return out;
  }
  // A normal pod: the snapshot, read with no lock held.
  auto snap = snapshot();
  if (!snap) return index_error(snap.error());
  const ViewSnapshot& view = **snap;
  if (options_.snapshot_taken) options_.snapshot_taken(view);
  auto ps = pod_set_request(pod, 1, false);
  if (!ps) return std::unexpected(ps.error());
  out.reasons = {"node not in the extender's cluster view",
                 "pod does not fit (resources, taints, selector or node state)"};
  std::vector<int> ids(names.size(), -1);
  const ClusterView::ResolvedRequest request = ClusterView::resolve(view.index, ps->per_pod);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const int id = view.index.find_node(names[i]);
    ids[i] = id;
    if (id < 0) {
      out.reason[i] = 0;
    } else if (!ClusterView::fits(view.index, id, request, &*ps)) {
      out.reason[i] = 1;
    }
  }
  keep_filtered(str_at(member(pod, "metadata"), "uid"), view.index_build, names, ids, out.reason);
  return out;
}

// A gang pod: only the node of its slot in the gang's plan passes (GangBook::admit).
void ExtenderService::filter_gang(const json& pod, const std::string& key,
                                  std::span<const std::string_view> names, FilterOutcome& out) {
  const Admission admitted = book_.admit(pod, key, names);
  if (admitted.error) count(&VerbCounters::errors);
  out.reasons.push_back(admitted.reason);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (admitted.node.empty() || names[i] != admitted.node) out.reason[i] = 0;
  }
}

void ExtenderService::keep_filtered(const std::string& pod_uid, std::int64_t index_build,
                                    std::span<const std::string_view> names, std::span<const int> ids,
                                    std::span<const std::int32_t> reason) {
  std::lock_guard lock(verb_mu_);
  kept_.pod_uid = pod_uid;
  kept_.index_build = index_build;
  kept_.names.clear();
  kept_.ends.clear();
  kept_.ids.clear();
  if (pod_uid.empty()) return;  // nothing to match the prioritize call by
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (reason[i] >= 0) continue;
    kept_.names += names[i];
    kept_.ends.push_back(static_cast<std::uint32_t>(kept_.names.size()));
    kept_.ids.push_back(ids[i]);
  }
}

std::vector<int> ExtenderService::node_ids(const ViewSnapshot& snap, const std::string& pod_uid,
                                           std::span<const std::string_view> names) {
  std::unique_lock lock(verb_mu_);
  const bool same_pod = !pod_uid.empty() && pod_uid == kept_.pod_uid && kept_.index_build == snap.index_build;
  if (same_pod && names.size() == kept_.ids.size()) {
    std::uint32_t begin = 0;
    bool same_names = true;
    for (std::size_t i = 0; i < names.size() && same_names; ++i) {
      const std::string_view kept(kept_.names.data() + begin, kept_.ends[i] - begin);
      same_names = names[i] == kept;
      begin = kept_.ends[i];
    }
    if (same_names) {
      ++verb_counters_.prioritize_reused_filter;
      return kept_.ids;
    }
  }
  lock.unlock();
  std::vector<int> ids(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) ids[i] = snap.index.find_node(names[i]);
  return ids;
}

std::expected<json, Error> ExtenderService::filter(const json& args) {
  if (!args.is_object()) return fail(ErrorCode::kParse, "ExtenderArgs must be a JSON object");
  const json* pod = field(args, {"pod", "Pod"});
  if (!pod || !pod->is_object()) return fail(ErrorCode::kParse, "ExtenderArgs.pod is missing");
  auto names = candidates(args);
  if (!names) return std::unexpected(names.error());
  const bool by_name = field(args, {"nodenames", "NodeNames", "nodeNames"}) != nullptr;
  const std::vector<std::string_view> views = views_of(*names);
  auto outcome = filter_names(*pod, views);
  if (!outcome) return std::unexpected(outcome.error());
  if (!outcome->error.empty()) return json{{"error", outcome->error}};
  json failed = json::object();
  for (std::size_t i = 0; i < names->size(); ++i) {
    if (outcome->reason[i] >= 0) failed[(*names)[i]] = outcome->reasons[outcome->reason[i]];
  }
  json result{{"failedNodes", failed}, {"error", ""}};
  if (by_name) {
    json kept = json::array();
    for (std::size_t i = 0; i < names->size(); ++i) {
      if (outcome->reason[i] < 0) kept.push_back((*names)[i]);
    }
    result["nodenames"] = std::move(kept);
  } else {
    const json& items = *field(*field(args, {"nodes", "Nodes"}), {"items", "Items"});
    json kept = json::array();
    for (std::size_t i = 0; i < names->size(); ++i) {
      if (outcome->reason[i] < 0) kept.push_back(items[i]);
    }
    result["nodes"] = json{
        {"apiVersion", "v1"}, {"kind", "NodeList"}, {"metadata", json::object()}, {"items", std::move(kept)}};
  }
  return result;
}

std::expected<std::vector<std::int64_t>, Error> ExtenderService::prioritize_names(
    const json& pod, std::span<const std::string_view> names) {
  if (!pod.is_object()) return fail(ErrorCode::kParse, "ExtenderArgs.pod is missing");
  if (std::string why = not_ready_reason(); !why.empty()) {
    count(&VerbCounters::prioritize_calls);
    count(&VerbCounters::not_ready_calls);
    return fail(ErrorCode::kUnavailable, why);
  }
  count(&VerbCounters::prioritize_calls);
  std::vector<std::int64_t> scores(names.size(), 0);
  auto key = view_.gang_key(pod);  // reads the pod and the options alone
  if (!key) return std::unexpected(key.error());
  if (*key) {
    // Gang pods: the planned node of this pod's slot scores the maximum, every other node zero.
    auto lock = read();
    if (auto ok = book_.ensure_index(); !ok) return std::unexpected(ok.error());
    const std::string planned = book_.node_of(**key, str_at(member(pod, "metadata"), "uid"));
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!planned.empty() && names[i] == planned) scores[i] = kMaxExtenderPriority;
    }
    return scores;
  }
  auto snap = snapshot();
  if (!snap) return std::unexpected(snap.error());
  const ViewSnapshot& view = **snap;
  auto ps = pod_set_request(pod, 1, false);
  if (!ps) return std::unexpected(ps.error());
  // Volcano's score is in [0, 1] but small on a large, empty domain; extender scores are integers
  // 0..10, so the best candidate gets the maximum and the others keep their ratio to it.
  std::vector<double> raw(names.size(), 0.0);
  double best = 0.0;
  NormalPodScorer scorer(view.index, ps->per_pod, options_.binpack);
  const std::vector<int> ids = node_ids(view, str_at(member(pod, "metadata"), "uid"), names);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const int id = ids[i];
    if (id >= 0 && options_.binpack.normal_pod_enable) raw[i] = scorer.score(id);
    best = std::max(best, raw[i]);
  }
  if (best <= 0) return scores;
  for (std::size_t i = 0; i < names.size(); ++i) {
    scores[i] = std::clamp<std::int64_t>(
        std::llround(raw[i] / best * static_cast<double>(kMaxExtenderPriority)), 0, kMaxExtenderPriority);
  }
  return scores;
}

std::expected<json, Error> ExtenderService::prioritize(const json& args) {
  if (!args.is_object()) return fail(ErrorCode::kParse, "ExtenderArgs must be a JSON object");
  const json* pod = field(args, {"pod", "Pod"});
  if (!pod || !pod->is_object()) return fail(ErrorCode::kParse, "ExtenderArgs.pod is missing");
  auto names = candidates(args);
  if (!names) return std::unexpected(names.error());
  auto scores = prioritize_names(*pod, views_of(*names));
  if (!scores) return std::unexpected(scores.error());
  json out = json::array();
  for (std::size_t i = 0; i < names->size(); ++i)
    out.push_back({{"host", (*names)[i]}, {"score", (*scores)[i]}});
  return out;
}

}  // namespace hypertopo::scheduler
