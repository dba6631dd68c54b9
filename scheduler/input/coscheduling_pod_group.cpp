#include "scheduler/input/coscheduling_pod_group.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "io/json_fields.h"
#include "scheduler/input/kai_pod_group.h"
#include "scheduler/input/pod_group_kinds.h"
#include "scheduler/input/pod_request.h"

namespace hypertopo::scheduler {
namespace {

using io::object_at;
using io::str_at;
using nlohmann::json;

bool is_coscheduling_pod_group(const json& item) {
  return item.is_object() && str_at(item, "kind") == "PodGroup" &&
         str_at(item, "apiVersion").starts_with("scheduling.x-k8s.io/");
}

std::unexpected<Error> bad(const std::string& where, const std::string& what) {
  return std::unexpected(Error(ErrorCode::kInvalidArgument, where + ": " + what));
}

// What makes two Pods of the group the same request: their spec but its node and the annotations the
// extender's pod reader takes a topology from (not the gang and rank marks, which differ by Pod).
std::string request_key(const json& pod) {
  json kept = json::object();
  for (const auto& [k, v] : object_at(object_at(pod, "metadata"), "annotations").items()) {
    if (read_by_pod_request(k) && std::ranges::find(gang_identity_keys(), k) == gang_identity_keys().end())
      kept[k] = v;
  }
  json spec = object_at(pod, "spec");
  spec.erase("nodeName");  // a bound Pod is one of the same set
  return spec.dump() + "\n" + kept.dump();
}

}  // namespace

bool is_coscheduling_pod_group_list(const json& doc) {
  if (!doc.is_object() || str_at(doc, "kind") != "List" || !doc.contains("items") || !doc["items"].is_array())
    return false;
  for (const auto& item : doc["items"])
    if (is_coscheduling_pod_group(item)) return true;
  return false;
}

std::expected<LoadedJob, Error> coscheduling_pod_group_list(const json& doc) {
  const json* group = nullptr;
  std::vector<const json*> pods;
  for (std::size_t i = 0; i < doc["items"].size(); ++i) {
    const json& item = doc["items"][i];
    if (is_coscheduling_pod_group(item)) {
      if (group) return bad("the List", "holds more than one coscheduling PodGroup");
      group = &item;
    } else if (item.is_object() && str_at(item, "kind") == "Pod") {
      pods.push_back(&item);
    } else {
      return bad("items[" + std::to_string(i) + "]",
                 "a List for a coscheduling PodGroup holds only the PodGroup and its Pods");
    }
  }
  const json& meta = object_at(*group, "metadata");
  LoadedJob out;
  out.format = "coscheduling";
  out.request.name = str_at(meta, "name");
  if (out.request.name.empty()) return bad("PodGroup metadata", "name is required");
  const std::string where = "PodGroup " + out.request.name;
  const std::string ns = str_at(meta, "namespace");
  const std::string key = ns.empty() ? out.request.name : ns + "/" + out.request.name;
  const json& spec = object_at(*group, "spec");
  // minMember (scheduler-plugins apis/scheduling/v1alpha1 PodGroupSpec.MinMember, int32): the
  // gang's quorum, as the extender sizes the gang by it (cluster_view.cpp group_sizes_of).
  const json min_member = spec.contains("minMember") ? spec["minMember"] : json();
  if (!min_member.is_number_integer() || min_member.get<std::int64_t>() < 1 ||
      min_member.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()) {
    return bad(where, "spec.minMember must be a whole number from 1 to 2147483647 (the gang's size), got " +
                          (min_member.is_null() ? std::string("none") : min_member.dump()));
  }
  const auto need = static_cast<std::int32_t>(min_member.get<std::int64_t>());
  if (pods.empty()) return bad(where, "the List holds none of its Pods (they carry the requests)");
  const PodGroupKindInfo& kind = pod_group_kind(PodGroupKind::kCoscheduling);
  std::map<std::string, std::size_t> set_of;               // request_key -> pod set
  std::vector<std::pair<const json*, std::int32_t>> sets;  // each pod set's first Pod and its Pods
  for (const json* pod : pods) {
    const std::string named = group_named(*pod, kind);
    const std::string who = "Pod " + str_at(object_at(*pod, "metadata"), "name");
    if (!named.empty() && named != out.request.name) {
      return bad(who, std::string("its label ") + kind.key + " names " + named +
                          ", not the List's PodGroup " + out.request.name);
    }
    auto [it, added] = set_of.emplace(request_key(*pod), sets.size());
    if (added) sets.emplace_back(pod, 0);
    ++sets[it->second].second;
  }
  for (const auto& [pod, count] : sets) {
    auto ps = pod_set_request(*pod, count, /*gang=*/true);
    if (!ps) return std::unexpected(ps.error());
    const std::size_t k = out.request.pod_sets.size();
    ps->name = out.request.name + (k == 0 ? "" : "-" + std::to_string(k));
    out.request.pod_sets.push_back(std::move(*ps));
  }
  // PreFilter (pkg/coscheduling/core/core.go PodGroupManager.PreFilter): fewer Pods with the label
  // than minMember and none of them is scheduled.
  if (std::cmp_less(pods.size(), need)) {
    out.waits = gang_waits_for_pods(key, pods.size(), need, false);
    return out;
  }
  // Permit (core.go PodGroupManager.Permit): the gang binds once minMember Pods are placed; the
  // others join it as they come.
  if (out.request.pod_sets.size() == 1 && need < out.request.pod_sets.front().count &&
      !out.request.pod_sets.front().partitions)
    out.request.pod_sets.front().min_count = need;
  return out;
}

}  // namespace hypertopo::scheduler
