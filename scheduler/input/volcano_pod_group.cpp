#include "scheduler/input/volcano_pod_group.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/json_fields.h"
#include "scheduler/input/kai_pod_group.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

bool is_volcano_pod_group(const json& item) {
  return item.is_object() && item.value("kind", "") == "PodGroup" && item.contains("apiVersion") &&
         item["apiVersion"].is_string() &&
         item["apiVersion"].get<std::string>().starts_with("scheduling.volcano.sh/");
}

std::unexpected<Error> invalid_field(const std::string& where, const std::string& what) {
  return std::unexpected(Error(ErrorCode::kInvalidArgument, where + ": " + what));
}

struct NetworkTopologyLevels {
  std::string required;
  std::string preferred;
};

// networkTopology {mode, highestTierAllowed | highestTierName}: hard -> required, soft -> preferred.
std::expected<NetworkTopologyLevels, Error> network_topology(const json& owner, const std::string& where) {
  NetworkTopologyLevels out;
  if (!owner.contains("networkTopology") || owner["networkTopology"].is_null()) return out;
  const json& nt = owner["networkTopology"];
  const std::string at = where + ".networkTopology";
  if (!nt.is_object()) return invalid_field(at, "must be an object");
  const bool has_allowed = nt.contains("highestTierAllowed") && !nt["highestTierAllowed"].is_null();
  const bool has_name = nt.contains("highestTierName") && !nt["highestTierName"].is_null();
  if (has_allowed && has_name)
    return invalid_field(at, "highestTierAllowed and highestTierName are mutually exclusive");
  const json mode_value = nt.value("mode", json("hard"));
  if (!mode_value.is_string() || (mode_value != "hard" && mode_value != "soft"))
    return invalid_field(at + ".mode", "must be hard or soft");
  std::string level;
  if (has_allowed) {
    if (!nt["highestTierAllowed"].is_number_integer() || nt["highestTierAllowed"].get<std::int64_t>() < 0 ||
        nt["highestTierAllowed"].get<std::int64_t>() > 1000)
      return invalid_field(at + ".highestTierAllowed", "must be an integer in 0..1000");
    level = std::to_string(nt["highestTierAllowed"].get<std::int64_t>());
  } else if (has_name) {
    if (!nt["highestTierName"].is_string()) return invalid_field(at + ".highestTierName", "must be a string");
    level = nt["highestTierName"].get<std::string>();
  }
  (mode_value == "hard" ? out.required : out.preferred) = level;
  return out;
}

// An optional int32 field of at least 0, as the PodGroup CRD's schema admits it (format int32,
// minimum 0: volcano-sh/volcano config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml).
std::expected<std::optional<std::int32_t>, Error> count_field(const json& owner, const char* key,
                                                              const std::string& where) {
  if (!owner.contains(key) || owner[key].is_null()) return std::optional<std::int32_t>();
  const json& v = owner[key];
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > 2147483647u) ||
      (!v.is_number_unsigned() && (v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 2147483647)))
    return invalid_field(where + "." + key, "must be an integer in 0..2147483647, got " + v.dump());
  return std::optional<std::int32_t>(v.get<std::int32_t>());
}

// strconv.Atoi of a sub-group's first match value, 0 when it is not a number: Volcano's
// SubJobInfo.MatchIndex (pkg/scheduler/api/sub_job_info.go, NewSubJobInfo).
std::int64_t match_index(const std::string& value) {
  std::int64_t n = 0;
  const char* begin = value.data() + (value.starts_with('+') ? 1 : 0);
  auto [ptr, ec] = std::from_chars(begin, value.data() + value.size(), n);
  return ec == std::errc() && ptr == value.data() + value.size() && begin != ptr ? n : 0;
}

std::map<std::string, std::string> labels_of(const json& pod) {
  std::map<std::string, std::string> out;
  const json meta = pod.value("metadata", json::object());
  const json labels = meta.value("labels", json::object());
  if (!labels.is_object()) return out;
  for (const auto& [k, v] : labels.items())
    if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

// A metav1.LabelSelector: matchLabels, and matchExpressions with In, NotIn, Exists, DoesNotExist.
std::expected<bool, Error> selects(const json& selector, const std::map<std::string, std::string>& labels,
                                   const std::string& where) {
  if (selector.is_null()) return true;
  if (!selector.is_object()) return invalid_field(where, "must be an object");
  if (selector.contains("matchLabels")) {
    if (!selector["matchLabels"].is_object())
      return invalid_field(where + ".matchLabels", "must be an object");
    for (const auto& [k, v] : selector["matchLabels"].items()) {
      if (!v.is_string()) return invalid_field(where + ".matchLabels." + k, "must be a string");
      auto it = labels.find(k);
      if (it == labels.end() || it->second != v.get<std::string>()) return false;
    }
  }
  if (selector.contains("matchExpressions")) {
    const json& exprs = selector["matchExpressions"];
    if (!exprs.is_array()) return invalid_field(where + ".matchExpressions", "must be a list");
    for (std::size_t i = 0; i < exprs.size(); ++i) {
      const std::string at = where + ".matchExpressions[" + std::to_string(i) + "]";
      const json& e = exprs[i];
      if (!e.is_object() || !e.contains("key") || !e["key"].is_string() || !e.contains("operator") ||
          !e["operator"].is_string())
        return invalid_field(at, "needs key and operator");
      const std::string key = e["key"], op = e["operator"];
      std::vector<std::string> values;
      for (const auto& v : e.value("values", json::array())) {
        if (!v.is_string()) return invalid_field(at + ".values", "must be strings");
        values.push_back(v);
      }
      auto it = labels.find(key);
      const bool has = it != labels.end();
      const bool in = has && std::find(values.begin(), values.end(), it->second) != values.end();
      if (op == "In" && !in) return false;
      if (op == "NotIn" && in) return false;
      if (op == "Exists" && !has) return false;
      if (op == "DoesNotExist" && has) return false;
      if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist")
        return invalid_field(at + ".operator", "must be In, NotIn, Exists or DoesNotExist");
    }
  }
  return true;
}

// A subGroupPolicy entry's name ("policy-<i>" when it has none) and matchLabelKeys.
struct Policy {
  std::string name;
  std::vector<std::string> keys;
};

std::expected<Policy, Error> read_policy(const json& p, std::size_t i, const std::string& at) {
  if (!p.is_object()) return invalid_field(at, "must be an object");
  Policy out{"policy-" + std::to_string(i), {}};
  if (p.contains("name") && !p["name"].is_null()) {
    if (!p["name"].is_string() || p["name"].get<std::string>().empty())
      return invalid_field(at + ".name", "must be a non-empty string");
    out.name = p["name"].get<std::string>();
  }
  const json keys = p.value("matchLabelKeys", json::array());
  if (!keys.is_array()) return invalid_field(at + ".matchLabelKeys", "must be a list");
  for (const auto& k : keys) {
    if (!k.is_string()) return invalid_field(at + ".matchLabelKeys", "must be strings");
    out.keys.push_back(k);
  }
  return out;
}

// The sub-group the policy puts a pod with `labels` in, with Volcano's sub-job id (policy and
// values) and match index; nullopt when the policy does not take the pod. Volcano forms a sub-group
// only from a value of every matchLabelKeys key: a pod its labelSelector does not match, a pod
// missing a key (or with an empty value), and every pod of a policy without keys go on to the next
// policy and else stay with the job itself (pkg/scheduler/api/sub_job_info.go
// getSubJobMatchValues, api/job_info.go getOrCreateSubJob).
struct PolicyMatch {
  std::string sub;  // "workers/3"
  std::pair<std::int64_t, std::string> order;
};

std::expected<std::optional<PolicyMatch>, Error> policy_match(
    const json& p, const Policy& policy, const std::map<std::string, std::string>& labels,
    const std::string& at) {
  auto match = selects(p.value("labelSelector", json()), labels, at + ".labelSelector");
  if (!match) return std::unexpected(match.error());
  if (!*match || policy.keys.empty()) return std::optional<PolicyMatch>();
  PolicyMatch out{policy.name, {0, policy.name + "-"}};
  for (std::size_t k = 0; k < policy.keys.size(); ++k) {
    auto it = labels.find(policy.keys[k]);
    if (it == labels.end() || it->second.empty()) return std::optional<PolicyMatch>();
    out.sub += "/" + it->second;
    out.order.second += (k == 0 ? "" : "-") + it->second;
    if (k == 0) out.order.first = match_index(it->second);
  }
  return std::optional<PolicyMatch>(std::move(out));
}

}  // namespace

bool is_volcano_pod_group_list(const json& doc) {
  if (!doc.is_object() || doc.value("kind", "") != "List" || !doc.contains("items") ||
      !doc["items"].is_array())
    return false;
  for (const auto& item : doc["items"])
    if (is_volcano_pod_group(item)) return true;
  return false;
}

std::expected<LoadedJob, Error> volcano_pod_group_list(const json& doc) {
  const json* group = nullptr;
  std::vector<const json*> pods;
  for (std::size_t i = 0; i < doc["items"].size(); ++i) {
    const json& item = doc["items"][i];
    if (is_volcano_pod_group(item)) {
      if (group) return invalid_field("the List", "holds more than one Volcano PodGroup");
      group = &item;
    } else if (item.is_object() && item.value("kind", "") == "Pod") {
      pods.push_back(&item);
    } else {
      return invalid_field("items[" + std::to_string(i) + "]",
                           "a List for a Volcano PodGroup holds only the PodGroup and its Pods");
    }
  }
  const json meta = group->value("metadata", json::object());
  if (!meta.contains("name") || !meta["name"].is_string())
    return invalid_field("PodGroup metadata", "name is required");
  LoadedJob out;
  out.format = "volcano";
  out.request.name = meta["name"];
  const std::string where = "PodGroup " + out.request.name;
  const json spec = group->value("spec", json::object());
  if (!spec.is_object()) return invalid_field(where, "spec must be an object");
  // minMember: the pods the gang needs (Volcano's JobInfo.MinAvailable; absent = 0, as in Volcano).
  auto min_member = count_field(spec, "minMember", where + " spec");
  if (!min_member) return std::unexpected(min_member.error());
  out.request.min_pods = min_member->value_or(0);
  auto job_levels = network_topology(spec, where + " spec");
  if (!job_levels) return std::unexpected(job_levels.error());
  out.request.job_required = job_levels->required;
  out.request.job_preferred = job_levels->preferred;
  if (pods.empty()) return invalid_field(where, "the List holds none of its Pods (they carry the requests)");
  // Which sub-group each pod joins: the first policy whose selector matches it, split by the values
  // of the policy's matchLabelKeys.
  std::vector<std::string> sub_of(pods.size());
  const json policies = spec.value("subGroupPolicy", json::array());
  if (!policies.is_array()) return invalid_field(where, "spec.subGroupPolicy must be a list");
  std::map<std::string, std::size_t> members;  // sub-group -> pods
  std::map<std::string, std::int64_t> size_of;
  // Volcano's sub-job order (pkg/scheduler/framework/session_plugins.go SubJobOrderFn without
  // ordering plugins): the first match value as a number, then the sub-job's id (policy and values).
  std::map<std::string, std::pair<std::int64_t, std::string>> order_key;
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const json& p = policies[i];
    const std::string at = where + " spec.subGroupPolicy[" + std::to_string(i) + "]";
    auto policy = read_policy(p, i, at);
    if (!policy) return std::unexpected(policy.error());
    const std::string& name = policy->name;
    auto levels = network_topology(p, at);
    if (!levels) return std::unexpected(levels.error());
    std::int64_t size = 0;
    if (p.contains("subGroupSize") && !p["subGroupSize"].is_null()) {
      if (!p["subGroupSize"].is_number_integer() || p["subGroupSize"].get<std::int64_t>() < 1 ||
          p["subGroupSize"].get<std::int64_t>() > 1'000'000)
        return invalid_field(at + ".subGroupSize", "must be an integer in 1..1000000");
      size = p["subGroupSize"].get<std::int64_t>();
    }
    // minSubGroups: that many sub-groups of this policy start the gang; the rest are placed where
    // they fit (volcano-sh/apis pkg/apis/scheduling/v1beta1/types.go SubGroupPolicySpec; absent = 0,
    // as Volcano's api/job_info.go SetPodGroup reads it).
    auto min_sub_groups = count_field(p, "minSubGroups", at);
    if (!min_sub_groups) return std::unexpected(min_sub_groups.error());
    out.request.min_sub_groups[name] = min_sub_groups->value_or(0);
    for (std::size_t j = 0; j < pods.size(); ++j) {
      if (!sub_of[j].empty()) continue;
      auto match = policy_match(p, *policy, labels_of(*pods[j]), at);
      if (!match) return std::unexpected(match.error());
      if (!*match) continue;
      const std::string& sub = (*match)->sub;
      if (!members.contains(sub)) {
        SubGroupRequest r;
        r.name = sub;
        r.policy = name;
        r.required = levels->required;
        r.preferred = levels->preferred;
        out.request.sub_groups.push_back(r);
        size_of[sub] = size;
        order_key[sub] = (*match)->order;
      }
      ++members[sub];
      sub_of[j] = sub;
    }
  }
  std::stable_sort(out.request.sub_groups.begin(), out.request.sub_groups.end(),
                   [&](const SubGroupRequest& a, const SubGroupRequest& b) {
                     return order_key.at(a.name) < order_key.at(b.name);
                   });
  for (const auto& [sub, n] : members) {
    if (size_of[sub] > 0 && static_cast<std::int64_t>(n) != size_of[sub]) {
      return invalid_field(where, "sub-group " + sub + " has " + std::to_string(n) +
                                      " pods, its subGroupSize is " + std::to_string(size_of[sub]));
    }
  }
  std::map<std::pair<std::string, std::string>, std::size_t> set_of;
  for (std::size_t j = 0; j < pods.size(); ++j) {
    const json& pod = *pods[j];
    const json pmeta = pod.value("metadata", json::object());
    const std::string pod_name = pmeta.contains("name") && pmeta["name"].is_string()
                                     ? pmeta["name"].get<std::string>()
                                     : std::string();
    const std::string pwhere = "Pod " + pod_name;
    const json annotations = pmeta.value("annotations", json::object());
    if (annotations.is_object() && annotations.contains(kVolcanoGroupNameAnnotation) &&
        annotations[kVolcanoGroupNameAnnotation] != out.request.name) {
      return invalid_field(
          pwhere, std::string("its ") + kVolcanoGroupNameAnnotation + " annotation names another PodGroup");
    }
    json pspec = pod.value("spec", json::object());
    // A pod already bound is of the pod set of its pending peers: its node is no part of its request
    // (as the KAI reader reads it, kai_pod_group.cpp).
    if (pspec.is_object()) pspec.erase("nodeName");
    const auto key = std::make_pair(sub_of[j], pspec.dump());
    if (auto it = set_of.find(key); it != set_of.end()) {
      ++out.request.pod_sets[it->second].count;
      continue;
    }
    PodSetRequest ps;
    if (auto ok = read_pod_spec(pspec, ps, pwhere); !ok) return std::unexpected(ok.error());
    ps.sub_group = sub_of[j];
    ps.count = 1;
    ps.name = sub_of[j].empty() ? out.request.name : sub_of[j];
    std::size_t same = 0;
    for (const auto& other : out.request.pod_sets)
      if (other.sub_group == sub_of[j]) ++same;
    if (same > 0) ps.name += "-" + std::to_string(same);
    set_of.emplace(key, out.request.pod_sets.size());
    out.request.pod_sets.push_back(std::move(ps));
  }
  // Fewer pods than minMember: Volcano's gang plugin finds the job not valid (volcano-sh/volcano
  // pkg/scheduler/plugins/gang/gang.go, OnSessionOpen's validJobFn: JobInfo.ValidTaskNum(), the
  // pods pending, allocated, bound, running or succeeded in api/job_info.go, below MinAvailable is
  // NotEnoughPodsReason), and framework/session.go openSession drops such a job from the session:
  // none of its pods is placed, with or without subGroupPolicy.
  if (const std::int32_t need = out.request.min_pods.value_or(0); std::cmp_less(pods.size(), need)) {
    const std::string ns = io::str_at(meta, "namespace");
    out.waits = gang_waits_for_pods(ns.empty() ? out.request.name : ns + "/" + out.request.name, pods.size(),
                                    need, !out.request.sub_groups.empty());
  }
  return out;
}

std::expected<std::string, Error> volcano_sub_group_of(const json& pod_group,
                                                       const std::map<std::string, std::string>& labels) {
  const std::string where = "PodGroup " + pod_group.value("metadata", json::object()).value("name", "");
  const json spec = pod_group.value("spec", json::object());
  const json policies = spec.is_object() ? spec.value("subGroupPolicy", json::array()) : json::array();
  if (!policies.is_array()) return invalid_field(where, "spec.subGroupPolicy must be a list");
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const json& p = policies[i];
    const std::string at = where + " spec.subGroupPolicy[" + std::to_string(i) + "]";
    auto policy = read_policy(p, i, at);
    if (!policy) return std::unexpected(policy.error());
    auto match = policy_match(p, *policy, labels, at);
    if (!match) return std::unexpected(match.error());
    if (*match) return (*match)->sub;
  }
  return std::string();
}

}  // namespace hypertopo::scheduler
