// tests/cli/differential_case.h: a seeded generator of clusters and gangs for comparing doors.
//
// One seed gives one case, the same on every run (std::mt19937_64 and libstdc++'s distributions):
// a tree of 2 to 4 tiers of HyperNodes (one or two tops, 2 or 3 children each, leaves of 1 to 5
// Nodes of 8 GPUs), other pods taking part of some Nodes (at a priority no lower than the job's),
// some Nodes cordoned or tainted, some leaves FabricDegraded, and a Volcano Job of 2 to 12 pods
// (hard or soft, highestTierAllowed 1..tiers, sometimes elastic through minAvailable, sometimes
// tolerating the taint) with some ranks already bound. The Job's pods and PodGroup are made as
// Volcano's job controller makes them (volcano-sh/volcano pkg/controllers/job/job_controller_util.go
// createJobPod: the group-name annotation, the job-name label, the task index;
// job_controller_actions.go createOrUpdatePodGroup: minMember from minAvailable, the Job's
// networkTopology). The same cluster may hold, instead, a PodGroup of another kind with its pods
// (GangKind: KAI's with or without sub-groups, the upstream scheduling.k8s.io/v1alpha2 one, Volcano's
// with subGroupPolicy, the coscheduling plugin's), its level a node label that names the tier (the
// coscheduling gang's: its pods' own topology annotations).
//
//   DifferentialCase c = differential_case(seed);                       // a Volcano Job
//   DifferentialCase k = differential_case(seed, GangKind::kKai);       // the same cluster, a KAI gang
//   place(c.nodes, c.hypernodes, c.pods, c.job);  extender(c.hypernodes, c.nodes, c.pods, c.pod_group);
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cluster_objects.h"

namespace hypertopo::testing {

// The gang's kind: what the job's controller makes and which PodGroup the extender watches.
//  - kVolcanoJob: a Volcano Job (batch.volcano.sh/v1alpha1) and the PodGroup its controller makes;
//  - kKai: a KAI-Scheduler PodGroup (scheduling.run.ai/v2alpha2) without sub-groups, its
//    topologyConstraint a node label's level, sometimes with a leader pod asking for other GPUs;
//  - kKaiSubGroups: the same with two sub-groups (kai.scheduler/subgroup-name), each under its own
//    required level;
//  - kUpstream: a scheduling.k8s.io/v1alpha2 PodGroup (Kubernetes 1.36 Workload API) whose pods name
//    it in spec.schedulingGroup.podGroupName, its schedulingConstraints.topology[0].key a node label;
//  - kVolcanoSubGroups: a Volcano PodGroup whose subGroupPolicy splits the pods into sub-groups of
//    subGroupSize by a replica label, each inside one leaf;
//  - kCoscheduling: a scheduling.x-k8s.io/v1alpha1 PodGroup (kubernetes-sigs/scheduler-plugins'
//    coscheduling plugin) of minMember (elastic: sometimes below its pods; sometimes above them, so
//    that it waits), sometimes with a minResources about the cluster's free GPUs, its pods naming it
//    in the label scheduling.x-k8s.io/pod-group and stating the gang's topology in their annotations
//    (hypertopo.io/network-topology-mode, highest-tier-allowed), now and then none.
enum class GangKind { kVolcanoJob, kKai, kKaiSubGroups, kUpstream, kVolcanoSubGroups, kCoscheduling };

inline const char* to_string(GangKind k) {
  switch (k) {
    case GangKind::kVolcanoJob:
      return "Volcano Job";
    case GangKind::kKai:
      return "KAI PodGroup";
    case GangKind::kKaiSubGroups:
      return "KAI PodGroup with sub-groups";
    case GangKind::kUpstream:
      return "scheduling.k8s.io/v1alpha2 PodGroup";
    case GangKind::kVolcanoSubGroups:
      return "Volcano PodGroup with subGroupPolicy";
    case GangKind::kCoscheduling:
      return "coscheduling PodGroup";
  }
  return "?";
}

// The node label that names a node's tier-t HyperNode (the level KAI's and the upstream PodGroup's
// constraints name; label_levels.h reads it as that tier).
inline std::string tier_label(int tier) { return "topo.example.com/tier-" + std::to_string(tier); }

struct DifferentialCase {
  std::uint64_t seed = 0;
  GangKind kind = GangKind::kVolcanoJob;
  int tiers = 2;
  std::vector<nlohmann::json> hypernodes, nodes;
  std::vector<nlohmann::json> pods;  // other pods, then the job's pods by rank (bound or pending)
  // `place --job`: the Volcano Job, or a List of the PodGroup and its pods; the PodGroup the
  // extender is given.
  nlohmann::json job, pod_group;
  // The sub-group of each rank ("" for none); a leader's GPUs (rank 0 asks for these, 0: as the
  // others), a sub-group's size (kVolcanoSubGroups) and level (kKaiSubGroups).
  std::vector<std::string> sub_group_of;
  int leader_gpus = 0, sub_group_size = 0, sub_group_tier = 0;
  // What describe() prints.
  std::string mode;  // "hard", "soft", or "none" (a coscheduling gang whose pods state no topology)
  int tier = 1, size = 0, min_available = 0, gpus = 0, priority = 0;
  int min_resources_gpus = 0;  // a coscheduling PodGroup's minResources GPUs (0: none)
  bool tolerates = false;
  std::map<int, std::string> bound;  // rank -> node
  std::vector<std::string> cordoned, tainted, degraded;
  std::map<std::string, int> used;  // node -> GPUs other pods take

  int bound_count() const { return static_cast<int>(bound.size()); }
  std::vector<int> pending_ranks() const {
    std::vector<int> out;
    for (int r = 0; r < size; ++r)
      if (!bound.contains(r)) out.push_back(r);
    return out;
  }
  std::size_t pod_position(int rank) const { return pods.size() - static_cast<std::size_t>(size - rank); }
  // Whether each rank is its own slot in both doors' plans (one pod set, indexed pods), else the
  // pods of a sub-group (or of one spec) are interchangeable and compared as a multiset.
  bool per_rank() const {
    return kind == GangKind::kVolcanoJob || kind == GangKind::kUpstream || kind == GangKind::kCoscheduling ||
           (kind == GangKind::kKai && leader_gpus == 0);
  }

  std::string describe() const {
    std::ostringstream out;
    out << to_string(kind) << "; tiers " << tiers << ", " << nodes.size() << " nodes;";
    for (const auto& h : hypernodes) {
      out << " " << h["metadata"]["name"].get<std::string>() << "{";
      for (const auto& m : h["spec"]["members"])
        out << m["selector"]["exactMatch"]["name"].get<std::string>() << " ";
      out << "}";
    }
    out << "; used:";
    for (const auto& [n, g] : used) out << " " << n << "=" << g;
    out << "; cordoned:";
    for (const auto& n : cordoned) out << " " << n;
    out << "; tainted:";
    for (const auto& n : tainted) out << " " << n;
    out << "; degraded:";
    for (const auto& n : degraded) out << " " << n;
    out << "; job " << mode << " tier " << tier << " size " << size << " minAvailable " << min_available
        << " gpus " << gpus << " priority " << priority << (tolerates ? " tolerating" : "");
    if (leader_gpus > 0) out << " leader gpus " << leader_gpus;
    if (min_resources_gpus > 0) out << " minResources gpus " << min_resources_gpus;
    if (sub_group_size > 0) out << " sub-groups of " << sub_group_size;
    if (sub_group_tier > 0) out << " sub-groups at tier " << sub_group_tier;
    out << "; bound:";
    for (const auto& [r, n] : bound) out << " " << r << "@" << n;
    return out.str();
  }
};

namespace differential {

inline nlohmann::json gpu_requests(int gpus) {
  return {{"requests", {{"nvidia.com/gpu", std::to_string(gpus)}}},
          {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}};
}

inline nlohmann::json job_pod_spec(const DifferentialCase& c, int gpus = 0) {
  nlohmann::json spec{
      {"containers", {{{"name", "main"}, {"resources", gpu_requests(gpus > 0 ? gpus : c.gpus)}}}}};
  if (c.tolerates)
    spec["tolerations"] = {
        {{"key", "dedicated"}, {"operator", "Equal"}, {"value", "infra"}, {"effect", "NoSchedule"}}};
  return spec;
}

}  // namespace differential

inline void add_volcano_job(DifferentialCase& c, std::vector<nlohmann::json> others);
inline void add_pod_group(DifferentialCase& c, std::vector<nlohmann::json> others, std::mt19937_64& rng);

// Every draw of a Volcano Job's case comes first, in the same order for every kind, so a seed gives
// the same cluster whatever the kind, and the Volcano Job cases stay as they were before the other
// kinds came; a PodGroup's own choices are drawn after.
inline DifferentialCase differential_case(std::uint64_t seed, GangKind kind = GangKind::kVolcanoJob) {
  using nlohmann::json;
  DifferentialCase c;
  c.seed = seed;
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };

  // The tree, built top down; leaves get their Nodes as they are reached.
  c.tiers = pick(2, 4);
  std::vector<std::string> leaves;
  std::map<std::string, std::vector<std::string>> leaf_nodes;
  int node_count = 0;
  std::vector<json> hns;
  auto build = [&](auto& self, const std::string& name, int tier) -> void {
    std::vector<std::string> members;
    if (tier == 1) {
      const int n = pick(1, 5);
      for (int i = 0; i < n; ++i) {
        const std::string node = "n" + std::to_string(node_count++);
        members.push_back(node);
        c.nodes.push_back(gpu_node(node));
      }
      leaves.push_back(name);
      leaf_nodes[name] = members;
      json h = exact_hypernode(name, 1, "Node", members);
      if (chance(0.15)) {
        // hypertopo's fabric health writer's condition (status.conditions, metav1.Condition).
        h["status"] = {{"conditions",
                        {{{"type", "FabricDegraded"},
                          {"status", "True"},
                          {"reason", "LinkDown"},
                          {"message", "a link is down"}}}}};
        c.degraded.push_back(name);
      }
      hns.push_back(std::move(h));
      return;
    }
    // Fewer children at the upper tiers of a deep tree keep the cluster small.
    const int children = c.tiers == 4 && tier >= 3 ? 2 : pick(2, 3);
    for (int i = 0; i < children; ++i) {
      const std::string child = name + "-" + std::to_string(i);
      self(self, child, tier - 1);
      members.push_back(child);
    }
    hns.push_back(exact_hypernode(name, tier, "HyperNode", members));
  };
  const int tops = chance(0.2) ? 2 : 1;
  for (int t = 0; t < tops; ++t) build(build, "s" + std::to_string(t), c.tiers);
  c.hypernodes = std::move(hns);

  // The job.
  c.mode = chance(0.6) ? "hard" : "soft";
  c.tier = pick(1, c.tiers);
  c.gpus = std::vector<int>{1, 2, 4, 8}[static_cast<std::size_t>(pick(0, 3))];
  c.size = pick(2, 12);
  c.min_available = chance(0.25) ? pick(1, c.size - 1) : c.size;
  c.priority = chance(0.5) ? 0 : pick(1, 3) * 100;
  c.tolerates = chance(0.3);

  // Nodes: cordoned, tainted, partly used by other pods (at the job's priority or above).
  std::vector<json> others;
  for (auto& n : c.nodes) {
    const std::string name = n["metadata"]["name"];
    if (chance(0.08)) {
      n["spec"]["unschedulable"] = true;
      n["spec"]["taints"] = {{{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}}};
      c.cordoned.push_back(name);
    } else if (chance(0.1)) {
      n["spec"]["taints"] = {{{"key", "dedicated"}, {"value", "infra"}, {"effect", "NoSchedule"}}};
      c.tainted.push_back(name);
    }
    if (chance(0.35)) {
      const int g = std::vector<int>{1, 2, 4, 6, 8}[static_cast<std::size_t>(pick(0, 4))];
      c.used[name] = g;
      json pod{{"apiVersion", "v1"},
               {"kind", "Pod"},
               {"metadata", {{"name", "x-" + name}, {"namespace", "other"}, {"uid", "uid-x-" + name}}},
               {"spec",
                {{"nodeName", name},
                 {"priority", c.priority + pick(0, 2) * 50},
                 {"containers", {{{"name", "c"}, {"resources", differential::gpu_requests(g)}}}}}},
               {"status", {{"phase", "Running"}}}};
      others.push_back(std::move(pod));
    }
  }

  // Bound ranks: the gang started in one leaf (or, now and then, anywhere), where room was left.
  if (chance(0.35)) {
    const std::string leaf = leaves[static_cast<std::size_t>(pick(0, static_cast<int>(leaves.size()) - 1))];
    const int want = pick(1, std::max(1, c.size - 1));
    std::map<std::string, int> free;
    for (const auto& n : c.nodes) {
      const std::string name = n["metadata"]["name"];
      free[name] = 8 - (c.used.contains(name) ? c.used.at(name) : 0);
    }
    std::vector<int> ranks;
    for (int r = 0; r < c.size; ++r) ranks.push_back(r);
    std::shuffle(ranks.begin(), ranks.end(), rng);
    const bool scattered = chance(0.2);
    for (int k = 0; k < want; ++k) {
      std::vector<std::string> room;
      for (const auto& [name, f] : free) {
        const bool in_leaf = std::ranges::find(leaf_nodes[leaf], name) != leaf_nodes[leaf].end();
        if (f >= c.gpus && (scattered || in_leaf)) room.push_back(name);
      }
      if (room.empty()) break;
      const std::string node = room[static_cast<std::size_t>(pick(0, static_cast<int>(room.size()) - 1))];
      free[node] -= c.gpus;
      c.bound[ranks[static_cast<std::size_t>(k)]] = node;
    }
  }

  c.kind = kind;
  if (kind == GangKind::kVolcanoJob) {
    add_volcano_job(c, std::move(others));
  } else {
    add_pod_group(c, std::move(others), rng);
  }
  return c;
}

// The Volcano Job of c's fields (mode, tier, size, min_available, gpus, priority, tolerates, bound)
// and what its controller makes of it: its PodGroup and pods, after `others` in c.pods.
inline void add_volcano_job(DifferentialCase& c, std::vector<nlohmann::json> others) {
  using nlohmann::json;
  const json topology{{"mode", c.mode}, {"highestTierAllowed", c.tier}};
  json template_spec = differential::job_pod_spec(c);
  c.job = {
      {"apiVersion", "batch.volcano.sh/v1alpha1"},
      {"kind", "Job"},
      {"metadata", {{"name", "train"}, {"namespace", "ml"}}},
      {"spec",
       {{"minAvailable", c.min_available},
        {"networkTopology", topology},
        {"tasks", {{{"name", "worker"}, {"replicas", c.size}, {"template", {{"spec", template_spec}}}}}}}}};
  c.pod_group = {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                 {"kind", "PodGroup"},
                 {"metadata", {{"name", "train"}, {"namespace", "ml"}, {"uid", "uid-pg-train"}}},
                 {"spec", {{"minMember", c.min_available}, {"networkTopology", topology}}},
                 {"status", {{"phase", "Inqueue"}}}};
  c.pods = std::move(others);
  c.sub_group_of.assign(static_cast<std::size_t>(c.size), "");
  for (int rank = 0; rank < c.size; ++rank) {
    json spec = template_spec;
    spec["priority"] = c.priority;
    json pod{{"apiVersion", "v1"},
             {"kind", "Pod"},
             {"metadata",
              {{"name", "train-worker-" + std::to_string(rank)},
               {"namespace", "ml"},
               {"uid", "uid-train-" + std::to_string(rank)},
               {"labels", {{"volcano.sh/job-name", "train"}, {"volcano.sh/task-spec", "worker"}}},
               {"annotations",
                {{"scheduling.k8s.io/group-name", "train"},
                 {"volcano.sh/job-name", "train"},
                 {"volcano.sh/task-spec", "worker"},
                 {"volcano.sh/task-index", std::to_string(rank)}}}}},
             {"spec", spec},
             {"status", {{"phase", "Pending"}}}};
    if (auto it = c.bound.find(rank); it != c.bound.end()) {
      pod["spec"]["nodeName"] = it->second;
      pod["status"]["phase"] = "Running";
    }
    c.pods.push_back(std::move(pod));
  }
}

// The PodGroup of c's fields and its pods, after `others` in c.pods, for every kind but kVolcanoJob;
// `rng` draws what only a PodGroup has (a leader, sub-groups). Each Node is labelled with the names
// of the HyperNodes above it (tier_label), the level KAI's and the upstream constraints name. A
// gang of several pod sets (sub-groups, a leader) keeps the bound ranks drawn for it: both doors
// plan its rest around them by one rule (scheduler/placement/around_bound.h
// place_gang_around_bound). A leader asking for more GPUs than the room its rank was bound in is not
// bound.
inline void add_pod_group(DifferentialCase& c, std::vector<nlohmann::json> others, std::mt19937_64& rng) {
  using nlohmann::json;
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  std::map<std::string, std::pair<std::string, int>> parent;  // member -> (HyperNode, its tier)
  for (const auto& h : c.hypernodes) {
    for (const auto& m : h["spec"]["members"])
      parent[m["selector"]["exactMatch"]["name"].get<std::string>()] = {h["metadata"]["name"],
                                                                        h["spec"]["tier"].get<int>()};
  }
  for (auto& n : c.nodes) {
    for (auto it = parent.find(n["metadata"]["name"].get<std::string>()); it != parent.end();
         it = parent.find(it->second.first))
      n["metadata"]["labels"][tier_label(it->second.second)] = it->second.first;
  }
  const bool sub_grouped = c.kind == GangKind::kKaiSubGroups || c.kind == GangKind::kVolcanoSubGroups;
  if (sub_grouped || c.kind == GangKind::kUpstream) c.min_available = c.size;
  const json meta{{"name", "train"}, {"namespace", "ml"}, {"uid", "uid-pg-train"}};
  c.sub_group_of.assign(static_cast<std::size_t>(c.size), "");
  switch (c.kind) {
    case GangKind::kKai: {
      if (chance(0.35)) {
        const std::vector<int> other{1, 2, 4, 8};
        do c.leader_gpus = other[static_cast<std::size_t>(pick(0, 3))];
        while (c.leader_gpus == c.gpus);
        if (c.leader_gpus > c.gpus) c.bound.erase(0);  // its node was chosen with room for c.gpus
      }
      [[fallthrough]];
    }
    case GangKind::kKaiSubGroups: {
      json spec{{"minMember", c.min_available}};
      json constraint{{"topology", "default"}};
      constraint[c.mode == "hard" ? "requiredTopologyLevel" : "preferredTopologyLevel"] = tier_label(c.tier);
      spec["topologyConstraint"] = constraint;
      if (c.kind == GangKind::kKaiSubGroups) {
        c.sub_group_tier = pick(1, c.tier);
        spec["subGroups"] = json::array();
        for (const char* name : {"decode", "prefill"}) {
          spec["subGroups"].push_back(
              {{"name", name},
               {"topologyConstraint", {{"requiredTopologyLevel", tier_label(c.sub_group_tier)}}}});
        }
        for (int r = 0; r < c.size; ++r)
          c.sub_group_of[static_cast<std::size_t>(r)] = r < c.size / 2 ? "decode" : "prefill";
      }
      c.pod_group = {{"apiVersion", "scheduling.run.ai/v2alpha2"},
                     {"kind", "PodGroup"},
                     {"metadata", meta},
                     {"spec", spec}};
      break;
    }
    case GangKind::kUpstream: {
      json spec{{"schedulingPolicy", {{"gang", {{"minCount", c.size}}}}}};
      if (c.mode == "hard") spec["schedulingConstraints"] = {{"topology", {{{"key", tier_label(c.tier)}}}}};
      c.pod_group = {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
                     {"kind", "PodGroup"},
                     {"metadata", meta},
                     {"spec", spec}};
      break;
    }
    case GangKind::kVolcanoSubGroups: {
      std::vector<int> divisors;
      for (int k = 1; k <= c.size; ++k)
        if (c.size % k == 0) divisors.push_back(k);
      c.sub_group_size = divisors[static_cast<std::size_t>(pick(0, static_cast<int>(divisors.size()) - 1))];
      c.sub_group_tier = pick(1, c.tier);
      const json topology{{"mode", c.mode}, {"highestTierAllowed", c.tier}};
      c.pod_group = {
          {"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", meta},
          {"spec",
           {{"minMember", c.size},
            {"networkTopology", topology},
            {"subGroupPolicy",
             {{{"name", "workers"},
               {"subGroupSize", c.sub_group_size},
               {"labelSelector", {{"matchLabels", {{"example.com/role", "worker"}}}}},
               {"matchLabelKeys", {"example.com/replica"}},
               {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", c.sub_group_tier}}}}}}}},
          {"status", {{"phase", "Inqueue"}}}};
      for (int r = 0; r < c.size; ++r)
        c.sub_group_of[static_cast<std::size_t>(r)] = "workers/" + std::to_string(r / c.sub_group_size);
      break;
    }
    case GangKind::kCoscheduling: {
      // scheduler-plugins apis/scheduling/v1alpha1 PodGroupSpec: minMember (elastic when below the
      // pods, coscheduling's Permit letting the rest join), minResources and scheduleTimeoutSeconds,
      // which place no pod. The pods' topology is their own (pod_request.h annotations).
      // Some have fewer pods than minMember (PreFilter rejects them all), and some a minResources
      // about the cluster's free GPUs, the gang's own bound pods counted free
      // (CheckClusterResource), so that it falls short or just holds.
      if (chance(0.2)) c.mode = "none";
      if (chance(0.15)) c.min_available = c.size + pick(1, 3);
      json spec{{"minMember", c.min_available}, {"scheduleTimeoutSeconds", 60}};
      if (chance(0.3)) {
        int free = 0;
        for (const auto& n : c.nodes) {
          const std::string name = n["metadata"]["name"];
          free += 8 - (c.used.contains(name) ? c.used.at(name) : 0);
        }
        c.min_resources_gpus = std::max(1, free + pick(-4, 4));
      } else if (chance(0.4)) {
        c.min_resources_gpus = c.min_available * c.gpus;
      }
      if (c.min_resources_gpus > 0)
        spec["minResources"] = {{"nvidia.com/gpu", std::to_string(c.min_resources_gpus)}, {"cpu", "1"}};
      c.pod_group = {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                     {"kind", "PodGroup"},
                     {"metadata", meta},
                     {"spec", spec}};
      break;
    }
    case GangKind::kVolcanoJob:
      break;
  }
  c.pods = std::move(others);
  json items = json::array({c.pod_group});
  for (int rank = 0; rank < c.size; ++rank) {
    json spec = differential::job_pod_spec(c, rank == 0 ? c.leader_gpus : 0);
    spec["priority"] = c.priority;
    json labels{{"batch.kubernetes.io/job-completion-index", std::to_string(rank)}};
    json annotations = json::object();
    const std::string& sub = c.sub_group_of[static_cast<std::size_t>(rank)];
    switch (c.kind) {
      case GangKind::kKai:
      case GangKind::kKaiSubGroups:
        annotations["pod-group-name"] = "train";
        if (!sub.empty()) labels["kai.scheduler/subgroup-name"] = sub;
        break;
      case GangKind::kUpstream:
        spec["schedulingGroup"] = {{"podGroupName", "train"}};
        break;
      case GangKind::kVolcanoSubGroups:
        annotations["scheduling.k8s.io/group-name"] = "train";
        labels["example.com/role"] = "worker";
        labels["example.com/replica"] = std::to_string(rank / c.sub_group_size);
        break;
      case GangKind::kCoscheduling:
        labels["scheduling.x-k8s.io/pod-group"] = "train";
        if (c.mode != "none") {
          annotations["hypertopo.io/network-topology-mode"] = c.mode;
          annotations["hypertopo.io/highest-tier-allowed"] = std::to_string(c.tier);
        }
        break;
      case GangKind::kVolcanoJob:
        break;
    }
    json pod{{"apiVersion", "v1"},
             {"kind", "Pod"},
             {"metadata",
              {{"name", "train-" + std::to_string(rank)},
               {"namespace", "ml"},
               {"uid", "uid-train-" + std::to_string(rank)},
               {"labels", labels},
               {"annotations", annotations}}},
             {"spec", spec},
             {"status", {{"phase", "Pending"}}}};
    if (auto it = c.bound.find(rank); it != c.bound.end()) {
      pod["spec"]["nodeName"] = it->second;
      pod["status"]["phase"] = "Running";
    }
    items.push_back(pod);
    c.pods.push_back(std::move(pod));
  }
  c.job = cluster_list(std::move(items));
}

}  // namespace hypertopo::testing
