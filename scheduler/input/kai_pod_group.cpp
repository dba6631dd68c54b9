#include "scheduler/input/kai_pod_group.h"

#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

bool is_kai_pod_group(const json& item) {
  return item.is_object() && item.value("kind", "") == "PodGroup" && item.contains("apiVersion") &&
         item["apiVersion"].is_string() &&
         item["apiVersion"].get<std::string>().starts_with("scheduling.run.ai/");
}

std::expected<std::string, Error> string_at(const json& obj, const char* key, const std::string& where) {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return std::string();
  if (!obj[key].is_string())
    return fail(ErrorCode::kInvalidArgument, where + "." + key + " must be a string");
  return obj[key].get<std::string>();
}

struct TopologyConstraintLevels {
  std::string required;
  std::string preferred;
};

std::expected<TopologyConstraintLevels, Error> topology_constraint(const json& owner,
                                                                   const std::string& where) {
  TopologyConstraintLevels out;
  if (!owner.contains("topologyConstraint") || owner["topologyConstraint"].is_null()) return out;
  const json& tc = owner["topologyConstraint"];
  const std::string at = where + ".topologyConstraint";
  if (!tc.is_object()) return fail(ErrorCode::kInvalidArgument, at + " must be an object");
  auto req = string_at(tc, "requiredTopologyLevel", at);
  if (!req) return std::unexpected(req.error());
  auto pref = string_at(tc, "preferredTopologyLevel", at);
  if (!pref) return std::unexpected(pref.error());
  out.required = *req;
  out.preferred = *pref;
  return out;
}

std::string pod_group_name(const json& meta, const std::string& name) {
  const json* ns = meta.is_object() && meta.contains("namespace") ? &meta["namespace"] : nullptr;
  if (!ns || !ns->is_string() || ns->get<std::string>().empty()) return name;
  return ns->get<std::string>() + "/" + name;
}

// How deep the chain of `parent` names nests, each sub-group's depth found once (a sub-group whose
// parent's depth is known takes one more), so a chain of any length costs one pass and no native
// stack; deeper than kMaxSubGroupDepth is refused before anything walks the tree. A parent that is
// no sub-group is left to the placer's message; a cycle is refused here, as KAI's webhook does.
std::expected<void, Error> check_nesting(const std::vector<SubGroupRequest>& groups, const std::string& who) {
  std::map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < groups.size(); ++i) by_name.emplace(groups[i].name, i);
  std::vector<std::size_t> depth(groups.size(), 0);  // 0: not known yet
  std::vector<bool> on_chain(groups.size(), false);
  std::size_t deepest = 0, deepest_at = 0;
  std::vector<std::size_t> chain;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    chain.clear();
    std::size_t base = 0;
    for (std::size_t g = i; depth[g] == 0;) {
      if (on_chain[g]) {
        return fail(ErrorCode::kInvalidArgument, "PodGroup " + who + ": sub-group " + groups[g].name +
                                                     " is its own ancestor (a cycle of parents)");
      }
      on_chain[g] = true;
      chain.push_back(g);
      auto parent = groups[g].parent.empty() ? by_name.end() : by_name.find(groups[g].parent);
      if (parent == by_name.end()) break;
      g = parent->second;
      base = depth[g];
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      depth[*it] = ++base;
      on_chain[*it] = false;
      if (base > deepest) {
        deepest = base;
        deepest_at = *it;
      }
    }
  }
  if (deepest > kMaxSubGroupDepth) {
    return fail(ErrorCode::kInvalidArgument, "PodGroup " + who + ": spec.subGroups nest deeper than " +
                                                 std::to_string(kMaxSubGroupDepth) + " levels: sub-group " +
                                                 groups[deepest_at].name + " is " + std::to_string(deepest) +
                                                 " levels deep in its chain of parents");
  }
  return {};
}

}  // namespace

std::string gang_waits_for_pods(const std::string& key, std::size_t seen, std::int64_t count,
                                bool sub_groups) {
  return "gang " + key + ": " + (sub_groups ? "its PodGroup divides it into sub-groups and " : "") +
         std::to_string(seen) + " of its " + std::to_string(count) +
         " pods are seen so far; it is planned when all have come";
}

bool is_kai_pod_group_list(const json& doc) {
  if (!doc.is_object() || doc.value("kind", "") != "List" || !doc.contains("items") ||
      !doc["items"].is_array())
    return false;
  for (const auto& item : doc["items"])
    if (is_kai_pod_group(item)) return true;
  return false;
}

std::expected<LoadedJob, Error> kai_pod_group_list(const json& doc) {
  const json* group = nullptr;
  std::vector<const json*> pods;
  for (std::size_t i = 0; i < doc["items"].size(); ++i) {
    const json& item = doc["items"][i];
    if (is_kai_pod_group(item)) {
      if (group) return fail(ErrorCode::kInvalidArgument, "the List holds more than one KAI PodGroup");
      group = &item;
    } else if (item.is_object() && item.value("kind", "") == "Pod") {
      pods.push_back(&item);
    } else {
      return fail(ErrorCode::kInvalidArgument, "items[" + std::to_string(i) +
                                                   "]: a List for a KAI PodGroup holds only the PodGroup "
                                                   "and its Pods");
    }
  }
  const json meta = group->value("metadata", json::object());
  auto name = string_at(meta, "name", "PodGroup metadata");
  if (!name) return std::unexpected(name.error());
  LoadedJob out;
  out.format = "kai";
  out.request.name = *name;
  const std::string where = "PodGroup " + *name;
  const json spec = group->value("spec", json::object());
  if (!spec.is_object()) return fail(ErrorCode::kInvalidArgument, where + ": spec must be an object");
  auto root = topology_constraint(spec, where + " spec");
  if (!root) return std::unexpected(root.error());
  out.request.job_required = root->required;
  out.request.job_preferred = root->preferred;
  std::set<std::string> declared;
  if (spec.contains("subGroups") && !spec["subGroups"].is_null()) {
    if (!spec["subGroups"].is_array())
      return fail(ErrorCode::kInvalidArgument, where + ": spec.subGroups must be a list");
    for (std::size_t i = 0; i < spec["subGroups"].size(); ++i) {
      const json& sg = spec["subGroups"][i];
      const std::string at = where + " spec.subGroups[" + std::to_string(i) + "]";
      if (!sg.is_object()) return fail(ErrorCode::kInvalidArgument, at + " must be an object");
      SubGroupRequest r;
      auto sg_name = string_at(sg, "name", at);
      if (!sg_name) return std::unexpected(sg_name.error());
      if (sg_name->empty()) return fail(ErrorCode::kInvalidArgument, at + ".name is required");
      r.name = *sg_name;
      auto parent = string_at(sg, "parent", at);
      if (!parent) return std::unexpected(parent.error());
      r.parent = *parent;
      if (sg.contains("minMember") && !sg["minMember"].is_null()) {
        if (!sg["minMember"].is_number_integer() || sg["minMember"].get<std::int64_t>() < 0 ||
            sg["minMember"].get<std::int64_t>() > 1'000'000) {
          return fail(ErrorCode::kInvalidArgument, at + ".minMember must be an integer in 0..1000000");
        }
        r.min_member = sg["minMember"].get<std::int32_t>();
      }
      auto levels = topology_constraint(sg, at);
      if (!levels) return std::unexpected(levels.error());
      r.required = levels->required;
      r.preferred = levels->preferred;
      declared.insert(r.name);
      out.request.sub_groups.push_back(std::move(r));
    }
  }
  if (auto ok = check_nesting(out.request.sub_groups, pod_group_name(meta, *name)); !ok)
    return std::unexpected(ok.error());
  if (pods.empty())
    return fail(ErrorCode::kInvalidArgument,
                where + ": the List holds none of its Pods (they carry the requests)");
  if (spec.contains("minMember") && !spec["minMember"].is_null()) {
    const json& min = spec["minMember"];
    if (!min.is_number_integer() || min.get<std::int64_t>() < 0 ||
        min.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()) {
      return fail(ErrorCode::kInvalidArgument,
                  where + ": spec.minMember must be an integer in 0..2147483647");
    }
    if (const auto need = min.get<std::int64_t>(); need > static_cast<std::int64_t>(pods.size())) {
      out.waits = gang_waits_for_pods(pod_group_name(meta, *name), pods.size(), need,
                                      !out.request.sub_groups.empty());
    }
  }
  // Pods of one sub-group with the same spec form one pod set, in the order they first appear.
  std::map<std::pair<std::string, std::string>, std::size_t> set_of;
  for (const json* pod : pods) {
    const json pmeta = pod->value("metadata", json::object());
    auto pod_name = string_at(pmeta, "name", "Pod metadata");
    if (!pod_name) return std::unexpected(pod_name.error());
    const std::string pwhere = "Pod " + *pod_name;
    auto owner = string_at(pmeta.value("annotations", json::object()), kKaiPodGroupAnnotation,
                           pwhere + " metadata.annotations");
    if (!owner) return std::unexpected(owner.error());
    if (!owner->empty() && *owner != *name) {
      return fail(ErrorCode::kInvalidArgument, pwhere + ": its " + kKaiPodGroupAnnotation +
                                                   " annotation names " + *owner + ", not " + *name);
    }
    auto sub =
        string_at(pmeta.value("labels", json::object()), kKaiSubGroupLabel, pwhere + " metadata.labels");
    if (!sub) return std::unexpected(sub.error());
    if (!sub->empty() && !declared.contains(*sub)) {
      return fail(ErrorCode::kInvalidArgument,
                  pwhere + ": label " + kKaiSubGroupLabel + "=" + *sub + " names no sub-group of " + where);
    }
    json pspec = pod->value("spec", json::object());
    // A pod already bound is of the pod set of its pending peers: its node is no part of its request.
    if (pspec.is_object()) pspec.erase("nodeName");
    const auto key = std::make_pair(*sub, pspec.dump());
    auto it = set_of.find(key);
    if (it != set_of.end()) {
      ++out.request.pod_sets[it->second].count;
      continue;
    }
    PodSetRequest ps;
    if (auto ok = read_pod_spec(pspec, ps, pwhere); !ok) return std::unexpected(ok.error());
    ps.sub_group = *sub;
    ps.count = 1;
    ps.name = (sub->empty() ? *name : *sub);
    std::size_t same = 0;
    for (const auto& other : out.request.pod_sets)
      if (other.sub_group == *sub) ++same;
    if (same > 0) ps.name += "-" + std::to_string(same);
    set_of.emplace(key, out.request.pod_sets.size());
    out.request.pod_sets.push_back(std::move(ps));
  }
  // Without sub-groups the PodGroup's constraint binds each of its pods, as KAI's annotations on a
  // workload's pods do (job_loader.cpp topology_annotations): a required level is the widest the
  // pods may spread over, a preferred one how close to keep them. A gang of one spec then has the
  // constraint its pods plan around when some run already, at both doors (around_bound.h).
  if (out.request.sub_groups.empty()) {
    for (auto& ps : out.request.pod_sets) {
      if (!out.request.job_required.empty()) {
        ps.mode = TopologyMode::kRequired;
        ps.level = out.request.job_required;
      } else if (!out.request.job_preferred.empty()) {
        ps.mode = TopologyMode::kPreferred;
        ps.level = out.request.job_preferred;
      }
    }
  }
  return out;
}

}  // namespace hypertopo::scheduler
