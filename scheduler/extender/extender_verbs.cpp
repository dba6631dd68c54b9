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

std::expected<json, Error> ExtenderService::filter(const json& args) {
  if (!args.is_object()) return fail(ErrorCode::kParse, "ExtenderArgs must be a JSON object");
  const json* pod = field(args, {"pod", "Pod"});
  if (!pod || !pod->is_object()) return fail(ErrorCode::kParse, "ExtenderArgs.pod is missing");
  auto names = candidates(args);
  if (!names) return std::unexpected(names.error());
  const bool by_name = field(args, {"nodenames", "NodeNames", "nodeNames"}) != nullptr;

  std::lock_guard lock(mu_);
  ++counters_.filter_calls;
  if (auto ok = ensure_index(); !ok) {
    ++counters_.errors;
    return json{{"error", ok.error().message()}};
  }
  std::vector<char> pass(names->size(), 0);
  json failed = json::object();
  auto key = gang_key(*pod);
  if (!key) return std::unexpected(key.error());
  if (*key) {
    check_plans_locked();
    auto plan = plan_for(*pod, **key);
    if (!plan) {
      if (plan.error().code() != ErrorCode::kUnavailable) ++counters_.errors;
      for (const auto& n : *names) failed[n] = plan.error().message();
    } else {
      GangPlan& p = **plan;
      p.last_activity = options_.clock->now();
      auto taken = take_slot(p, *pod, *names);
      if (!taken && taken.error().code() != ErrorCode::kUnavailable) ++counters_.errors;
      PlanSlot* mine = taken ? *taken : nullptr;
      const std::string why =
          mine ? "gang " + p.key + ": rank " + std::to_string(mine->rank) + " is planned on " + mine->node
               : taken.error().message();
      for (std::size_t i = 0; i < names->size(); ++i) {
        if (mine && (*names)[i] == mine->node) {
          pass[i] = 1;
        } else {
          failed[(*names)[i]] = why;
        }
      }
    }
  } else {
    auto ps = pod_set_request(*pod, 1, false);
    if (!ps) return std::unexpected(ps.error());
    for (std::size_t i = 0; i < names->size(); ++i) {
      const int id = index_->find_node((*names)[i]);
      if (id >= 0 && fits(id, ps->per_pod, &*ps)) {
        pass[i] = 1;
      } else {
        failed[(*names)[i]] = id < 0 ? "node not in the extender's cluster view"
                                     : "pod does not fit (resources, taints, selector or node state)";
      }
    }
  }
  json result{{"failedNodes", failed}, {"error", ""}};
  if (by_name) {
    json out = json::array();
    for (std::size_t i = 0; i < names->size(); ++i) {
      if (pass[i]) out.push_back((*names)[i]);
    }
    result["nodenames"] = std::move(out);
  } else {
    const json& items = *field(*field(args, {"nodes", "Nodes"}), {"items", "Items"});
    json kept = json::array();
    for (std::size_t i = 0; i < names->size(); ++i) {
      if (pass[i]) kept.push_back(items[i]);
    }
    result["nodes"] = json{
        {"apiVersion", "v1"}, {"kind", "NodeList"}, {"metadata", json::object()}, {"items", std::move(kept)}};
  }
  return result;
}

std::expected<json, Error> ExtenderService::prioritize(const json& args) {
  if (!args.is_object()) return fail(ErrorCode::kParse, "ExtenderArgs must be a JSON object");
  const json* pod = field(args, {"pod", "Pod"});
  if (!pod || !pod->is_object()) return fail(ErrorCode::kParse, "ExtenderArgs.pod is missing");
  auto names = candidates(args);
  if (!names) return std::unexpected(names.error());
  std::lock_guard lock(mu_);
  ++counters_.prioritize_calls;
  if (auto ok = ensure_index(); !ok) return std::unexpected(ok.error());
  json out = json::array();
  auto key = gang_key(*pod);
  if (!key) return std::unexpected(key.error());
  if (*key) {
    // Gang pods: the planned node of this pod's slot scores the maximum, every other node zero.
    const std::string uid = str_at(member(*pod, "metadata"), "uid");
    std::string planned;
    if (auto it = plans_.find(**key); it != plans_.end()) {
      for (const auto& s : it->second.slots) {
        if (!uid.empty() && s.pod_uid == uid) planned = s.node;
      }
    }
    for (const auto& n : *names)
      out.push_back({{"host", n}, {"score", n == planned ? kMaxExtenderPriority : 0}});
    return out;
  }
  auto ps = pod_set_request(*pod, 1, false);
  if (!ps) return std::unexpected(ps.error());
  // Volcano's score is in [0, 1] but small on a large, empty domain; extender scores are integers
  // 0..10, so the best candidate gets the maximum and the others keep their ratio to it.
  std::vector<double> raw(names->size(), 0.0);
  double best = 0.0;
  for (std::size_t i = 0; i < names->size(); ++i) {
    const int id = index_->find_node((*names)[i]);
    if (id >= 0 && options_.binpack.normal_pod_enable)
      raw[i] = normal_pod_node_score(*index_, id, ps->per_pod, options_.binpack);
    best = std::max(best, raw[i]);
  }
  for (std::size_t i = 0; i < names->size(); ++i) {
    const std::int64_t score =
        best > 0 ? std::clamp<std::int64_t>(
                       std::llround(raw[i] / best * static_cast<double>(kMaxExtenderPriority)), 0,
                       kMaxExtenderPriority)
                 : 0;
    out.push_back({{"host", (*names)[i]}, {"score", score}});
  }
  return out;
}

}  // namespace hypertopo::scheduler
