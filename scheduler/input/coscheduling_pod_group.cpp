#include "scheduler/input/coscheduling_pod_group.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/json_fields.h"
#include "scheduler/index/quantity.h"
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
  auto check = coscheduling_min_resources(*group);
  if (!check) return std::unexpected(check.error().context(where));
  std::map<std::string, std::size_t> set_of;               // request_key -> pod set
  std::vector<std::pair<const json*, std::int32_t>> sets;  // each pod set's first Pod and its Pods
  std::vector<std::size_t> bound_sets;                     // the pod set of each bound Pod
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
    if (!str_at(object_at(*pod, "spec"), "nodeName").empty()) bound_sets.push_back(it->second);
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
  // Then minResources, against the cluster the caller reads (min_resources_gap), the group's bound
  // Pods' requests counted free as getNodeResource removes them.
  if (*check) {
    check->value().group = key;
    for (std::size_t k : bound_sets) {
      for (const auto& [name, amount] : out.request.pod_sets[k].per_pod) check->value().held[name] += amount;
      check->value().held["pods"] += 1;
    }
    out.min_resources = std::move(*check);
  }
  // Permit (core.go PodGroupManager.Permit): the gang binds once minMember Pods are placed; the
  // others join it as they come.
  if (out.request.pod_sets.size() == 1 && need < out.request.pod_sets.front().count &&
      !out.request.pod_sets.front().partitions)
    out.request.pod_sets.front().min_count = need;
  return out;
}

std::expected<std::optional<MinResourcesCheck>, Error> coscheduling_min_resources(const json& pod_group) {
  const json& spec = object_at(pod_group, "spec");
  if (!spec.contains("minResources") || spec["minResources"].is_null())
    return std::optional<MinResourcesCheck>();
  const json& listed = spec["minResources"];
  if (!listed.is_object()) return bad("spec.minResources", "must be a map of resource names to quantities");
  std::map<std::string, std::string> text;
  for (const auto& [name, quantity] : listed.items()) {
    if (quantity.is_string()) {
      text[name] = quantity.get<std::string>();
    } else if (quantity.is_number_integer()) {
      text[name] = std::to_string(quantity.get<std::int64_t>());
    } else {
      return bad("spec.minResources." + name, "must be a quantity, got " + quantity.dump());
    }
  }
  auto amounts = parse_resource_list(text);
  if (!amounts) return std::unexpected(amounts.error().context("spec.minResources"));
  MinResourcesCheck out;
  out.min_resources = std::move(*amounts);
  const json& min_member = spec.contains("minMember") ? spec["minMember"] : json();
  if (min_member.is_number_integer() && min_member.get<std::int64_t>() > 0 &&
      min_member.get<std::int64_t>() <= std::numeric_limits<std::int32_t>::max())
    out.min_member = static_cast<std::int32_t>(min_member.get<std::int64_t>());
  return std::optional<MinResourcesCheck>(std::move(out));
}

std::string min_resources_gap(const MinResourcesCheck& check, const TopologyIndex& index) {
  // PreFilter adds minMember "pods" to what it asks. A Node's "pods" room is its allocatable pods
  // less its pods; where no Node states any, the index counts none and nothing limits it here.
  ResourceAmounts want = check.min_resources;
  if (index.resource_id("pods") >= 0) want["pods"] = check.min_member;
  std::string gap;
  for (const auto& [name, amount] : want) {
    std::int64_t free = 0;
    if (const int r = index.resource_id(name); r >= 0) {
      for (int n = 0; std::cmp_less(n, index.nodes().size()); ++n)
        free += index.node_allocatable(n, r) - index.node_used(n, r);
    }
    if (auto it = check.held.find(name); it != check.held.end()) free += it->second;
    if (amount > free)
      gap += (gap.empty() ? "" : ", ") + name + " " + format_quantity(name, amount - free) + " short";
  }
  if (gap.empty()) return "";
  return "PodGroup " + check.group + ": the cluster's free resources do not reach its minResources (" + gap +
         "); the coscheduling plugin's PreFilter places none of its pods until they do";
}

}  // namespace hypertopo::scheduler
