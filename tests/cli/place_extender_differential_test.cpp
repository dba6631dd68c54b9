// `place` against the extender on generated clusters: one answer through both doors.
//
// A seeded generator (differential_case.h) makes a cluster of 2 to 4 tiers of HyperNodes over
// leaves of 1 to 5 Nodes, Nodes partly taken by other pods, some cordoned or tainted, some leaves
// FabricDegraded, and a gang whose pods are partly bound already: a Volcano Job (hard or soft,
// highestTierAllowed, elastic through minAvailable, a priority), or a PodGroup with its pods (KAI's
// with or without sub-groups and sometimes a leader of its own spec, the upstream
// scheduling.k8s.io/v1alpha2 one, Volcano's with subGroupPolicy, the coscheduling plugin's, which
// is sometimes short of its minMember or asks a minResources about the cluster's free GPUs). Each case goes
// through both doors with the same objects:
//   - `place` as the CLI: the HyperNodes, Nodes, every Pod and the Job (or a List of the PodGroup
//     and its pods) as files;
//   - the extender fed the objects its watch lists (ExtenderService set_* calls: HyperNodes, Nodes,
//     Pods, and the PodGroup, the one Volcano's job controller makes of a Job), then asked for each
//     pending pod in rank order as kube-scheduler asks (kube_scheduler_standin.h: the framework's
//     Filter plugins first, the extender's filter over the nodes they pass, prioritize when more
//     than one is kept, the highest score, the bind seen as a Pod update).
// Each pending rank must get the same node through both doors, or both must refuse it; where the
// pods of a sub-group (or of one spec) are interchangeable, the nodes each sub-group's pods get
// are compared as a multiset. The sentences differ (`place` words the whole job, the extender each
// pod), so only the outcome is compared; a mismatch prints the seed, the objects and both answers
// side by side.
// The extender is fed in process, not through the loopback API server and its HTTP routes: a case
// there costs seconds under ASan (GangLifecycleTest), and the cases must run in about a minute.
// The watch path and the HTTP verbs have their own tests (cluster_watcher_test, extender_http_test).
//
// Left out, and why:
//   - preemption: `place` answers a job that does not fit with the victims it would evict, where
//     kube-scheduler's PostFilter evicts and the pod binds in a later cycle (place_preemption_test
//     and the extender's preemption_test cover each door). Other pods here never have a priority
//     below the job's, so neither door preempts.
//   - bound pods of an elastic gang of several pod sets (Volcano's minSubGroups, a sub-group's
//     minMember below its pods): neither door plans one around its bound pods by sub-group
//     (around_bound.h plans_around_bound_by_groups), so the generator makes none. Sub-grouped gangs
//     and KAI gangs with a leader keep their bound ranks, planned by one rule at both doors
//     (around_bound.h place_gang_around_bound); a leader asking for more GPUs than its rank's room
//     is left pending.
//
// HYPERTOPO_DIFFERENTIAL_SEED=<seed> runs that one case alone and prints it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "scheduler/extender/cluster_view.h"
#include "scheduler/extender/extender_service.h"
#include "tests/cli/cluster_objects.h"
#include "tests/cli/differential_case.h"
#include "tests/cli/extender_door.h"
#include "tests/scheduler/extender/kube_scheduler_standin.h"
#include "tests/support/fixtures.h"
#include "timing/clock.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;
using scheduler::ExtenderOptions;
using scheduler::ExtenderService;
using testing::DifferentialCase;
using testing::GangKind;

// What a door gave the gang's pending pods. One slot per rank ("rank 3": its node, "" when refused)
// when each rank has its own slot in both doors' plans; else, for pods that are interchangeable
// (a sub-group's, or a KAI gang with a leader of its own spec), one entry per sub-group ("group
// decode", "group -" for the gang's own pods): its pods' nodes, sorted, "" for each refused.
// `refusal` is the first sentence given.
struct Answer {
  std::map<std::string, std::vector<std::string>> nodes;
  std::string refusal;
  bool broken = false;  // the door gave no answer at all (an error, not a refusal)
  bool operator==(const Answer& o) const { return !broken && !o.broken && nodes == o.nodes; }
  bool any_placed() const {
    for (const auto& [key, list] : nodes)
      for (const auto& n : list)
        if (!n.empty()) return true;
    return false;
  }
};

std::string rank_key(int rank) { return "rank " + std::to_string(rank); }
std::string group_key(const std::string& sub) { return "group " + (sub.empty() ? std::string("-") : sub); }

// Every pending pod's entry, none placed yet.
Answer unplaced(const DifferentialCase& c, const std::string& node) {
  Answer out;
  for (int rank : c.pending_ranks()) {
    if (c.per_rank()) {
      out.nodes[rank_key(rank)] = {node};
    } else {
      out.nodes[group_key(c.sub_group_of[static_cast<std::size_t>(rank)])].push_back(node);
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& nodes) {
  std::string out;
  for (const auto& n : nodes) out += (out.empty() ? "" : ",") + (n.empty() ? std::string("-") : n);
  return out;
}

// The two answers side by side, one line per rank or sub-group, the differing ones marked.
std::string diff(const Answer& place, const Answer& ext) {
  std::ostringstream out;
  std::set<std::string> keys;
  for (const auto& [k, v] : place.nodes) keys.insert(k);
  for (const auto& [k, v] : ext.nodes) keys.insert(k);
  for (const auto& k : keys) {
    const auto p = place.nodes.find(k);
    const auto e = ext.nodes.find(k);
    const std::string pv = p == place.nodes.end() ? "(none)" : join(p->second);
    const std::string ev = e == ext.nodes.end() ? "(none)" : join(e->second);
    out << "\n    " << (pv == ev ? "  " : "! ") << k << ": place " << pv << " | extender " << ev;
  }
  out << "\n  place's reason:    " << (place.refusal.empty() ? "-" : place.refusal);
  out << "\n  extender's reason: " << (ext.refusal.empty() ? "-" : ext.refusal);
  return out.str();
}

Answer through_place(const DifferentialCase& c, const testing::TempDir& dir) {
  auto file = [&](const std::string& name, const json& doc) {
    testing::write_text(dir.path() / name, doc.dump());
    return (dir.path() / name).string();
  };
  const auto run = testing::run_captured(
      run_cli, {"place", "--nodes", file("nodes.json", testing::cluster_list(c.nodes)), "--topology",
                file("hn.json", testing::cluster_list(c.hypernodes)), "--pods",
                file("pods.json", testing::cluster_list(c.pods)), "--job", file("job.json", c.job)});
  const json doc = json::parse(run.out, nullptr, false);
  if (!doc.is_object() || !doc.contains("fit")) {
    Answer out = unplaced(c, "?");
    out.refusal = "no answer: exit " + std::to_string(run.code) + " " + run.err;
    out.broken = true;
    return out;
  }
  Answer out = unplaced(c, "");
  out.refusal = doc.value("reason", std::string());
  if (!doc["fit"].get<bool>()) return out;
  if (c.per_rank()) {
    for (const auto& a : doc["podSets"][0]["assignment"]) {
      if (a.value("bound", false)) continue;
      for (int i = 0; i < a["count"].get<int>(); ++i)
        out.nodes[rank_key(a["firstRank"].get<int>() + i)] = {a["node"]};
    }
    return out;
  }
  // A pod set is named after its sub-group (the gang's name for its own pods), "-<k>" added for
  // the k-th other spec among them (kai_pod_group.h, volcano_pod_group.h).
  std::map<std::string, std::vector<std::string>> placed;
  for (const auto& ps : doc["podSets"]) {
    const std::string name = ps.value("name", std::string());
    std::string group = "?" + name;
    for (const auto& sub : c.sub_group_of) {
      const std::string base = sub.empty() ? c.pod_group["metadata"]["name"].get<std::string>() : sub;
      if (name == base || name.starts_with(base + "-")) group = sub;
    }
    for (const auto& a : ps["assignment"]) {
      if (a.value("bound", false)) continue;
      for (int i = 0; i < a["count"].get<int>(); ++i) placed[group_key(group)].push_back(a["node"]);
    }
  }
  for (auto& [key, list] : placed) {
    std::vector<std::string>& mine = out.nodes[key];
    const std::size_t pending = mine.size();
    list.resize(std::max(pending, list.size()));  // the refused ones: ""
    std::sort(list.begin(), list.end());
    mine = list;
  }
  return out;
}

scheduler::PodGroupKind pod_group_kind(const DifferentialCase& c) {
  switch (c.kind) {
    case GangKind::kKai:
    case GangKind::kKaiSubGroups:
      return scheduler::PodGroupKind::kKai;
    case GangKind::kUpstream:
      return scheduler::PodGroupKind::kUpstream;
    case GangKind::kCoscheduling:
      return scheduler::PodGroupKind::kCoscheduling;
    case GangKind::kVolcanoJob:
    case GangKind::kVolcanoSubGroups:
      break;
  }
  return scheduler::PodGroupKind::kVolcano;
}

Answer through_extender(const DifferentialCase& c) {
  ExtenderService svc(ExtenderOptions{.clock = std::make_shared<timing::ManualClock>()});
  auto failed = [&](const std::string& what) {
    Answer out = unplaced(c, "?");
    out.refusal = "extender: " + what;
    out.broken = true;
    return out;
  };
  // What the watch's first lists bring (cluster_watcher.cpp relist).
  if (auto r = svc.set_hypernodes(c.hypernodes); !r) return failed(r.error().message());
  if (auto r = svc.set_nodes(c.nodes); !r) return failed(r.error().message());
  if (auto r = svc.set_pods(c.pods); !r) return failed(r.error().message());
  svc.set_pod_groups({c.pod_group}, pod_group_kind(c));
  // The job controller's pending pods, as the watch delivers them once created: Volcano places none
  // of the gang's pods before minMember of them exist, and neither does the extender.
  for (int rank : c.pending_ranks()) {
    if (auto r = svc.upsert_pod(c.pods[c.pod_position(rank)]); !r) return failed(r.error().message());
  }
  Answer out;
  auto give = [&](int rank, const std::string& node) {
    if (c.per_rank()) {
      out.nodes[rank_key(rank)] = {node};
    } else {
      out.nodes[group_key(c.sub_group_of[static_cast<std::size_t>(rank)])].push_back(node);
    }
  };
  std::vector<json> pods_now = c.pods;
  for (int rank : c.pending_ranks()) {
    json& pod = pods_now[c.pod_position(rank)];
    // kube-scheduler: the framework's Filter plugins, then the extender's filter on the survivors.
    json names = json::array();
    for (const auto& node : c.nodes) {
      if (testing::KubeSchedulerStandIn::framework_filter(pod, node, pods_now).empty())
        names.push_back(node["metadata"]["name"]);
    }
    if (names.empty()) {
      give(rank, "");
      if (out.refusal.empty()) out.refusal = "no node passes the framework's filters";
      continue;
    }
    const testing::ExtenderPick pick = testing::ask_extender(svc, pod, names);
    if (!pick.error.empty()) return failed(pick.error);
    if (pick.node.empty()) {
      give(rank, "");
      if (out.refusal.empty()) out.refusal = pick.refusal;
      continue;
    }
    const std::string& chosen = pick.node;
    give(rank, chosen);
    pod["spec"]["nodeName"] = chosen;
    pod["status"]["phase"] = "Running";
    if (auto r = svc.upsert_pod(pod); !r) return failed(r.error().message());
  }
  for (auto& [key, list] : out.nodes) std::sort(list.begin(), list.end());
  return out;
}

// Seeds 0x5eed0000 + i are Volcano Jobs (the cases this test began with, unchanged); seeds from
// 0x5eed1000 on are the PodGroup kinds in turn, so a seed alone names its case.
constexpr std::uint64_t kFirstSeed = 0x5eed0000u, kFirstPodGroupSeed = 0x5eed1000u;
constexpr int kVolcanoJobCases = 300, kPodGroupCases = 120;

GangKind kind_of(std::uint64_t seed) {
  if (seed < kFirstPodGroupSeed) return GangKind::kVolcanoJob;
  constexpr GangKind kinds[] = {GangKind::kKai, GangKind::kKaiSubGroups, GangKind::kUpstream,
                                GangKind::kVolcanoSubGroups, GangKind::kCoscheduling};
  return kinds[(seed - kFirstPodGroupSeed) % std::size(kinds)];
}

TEST(PlaceExtenderDifferential, EveryGeneratedCaseGetsTheSameNodesOrRefusalThroughBothDoors) {
  std::vector<std::uint64_t> seeds;
  if (const char* one = std::getenv("HYPERTOPO_DIFFERENTIAL_SEED")) {
    seeds.push_back(std::strtoull(one, nullptr, 0));
  } else {
    for (int i = 0; i < kVolcanoJobCases; ++i) seeds.push_back(kFirstSeed + static_cast<std::uint64_t>(i));
    for (int i = 0; i < kPodGroupCases; ++i)
      seeds.push_back(kFirstPodGroupSeed + static_cast<std::uint64_t>(i));
  }
  testing::TempDir dir;
  int same = 0, placed = 0, refused = 0, bound = 0;
  // Coscheduling gangs refused at both doors before any planning: short of pods, of minResources.
  int short_of_pods = 0, short_of_resources = 0;
  std::map<GangKind, std::pair<int, int>> by_kind;  // kind -> (same, cases)
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t seed : seeds) {
    const DifferentialCase c = testing::differential_case(seed, kind_of(seed));
    if (seeds.size() == 1) std::cout << c.describe() << "\n";
    const Answer place = through_place(c, dir);
    const Answer ext = through_extender(c);
    ++by_kind[c.kind].second;
    if (place == ext) {
      ++same;
      ++by_kind[c.kind].first;
      ++(place.any_placed() ? placed : refused);
      bound += c.bound_count() > 0 ? 1 : 0;
      if (c.kind == GangKind::kCoscheduling && !place.any_placed()) {
        short_of_pods += place.refusal.find("pods are seen so far") != std::string::npos ? 1 : 0;
        short_of_resources +=
            place.refusal.find("do not reach its minResources") != std::string::npos ? 1 : 0;
      }
      continue;
    }
    ADD_FAILURE() << "seed " << seed << " (HYPERTOPO_DIFFERENTIAL_SEED=" << seed << "): " << c.describe()
                  << diff(place, ext);
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  std::cout << "place = extender: " << same << "/" << seeds.size() << "\n";
  std::cout << "  (" << placed << " placed, " << refused << " refused, " << bound << " with bound pods; "
            << ms << " ms; coscheduling short of minMember " << short_of_pods << ", of minResources "
            << short_of_resources << ")\n";
  for (const auto& [kind, counts] : by_kind)
    std::cout << "  " << testing::to_string(kind) << ": " << counts.first << "/" << counts.second << "\n";
  EXPECT_EQ(same, static_cast<int>(seeds.size()));
  if (seeds.size() > 1) {
    // The generator must exercise both outcomes and the bound gangs, or the comparison says little.
    EXPECT_GT(placed, static_cast<int>(seeds.size()) / 5);
    EXPECT_GT(refused, static_cast<int>(seeds.size()) / 20);
    EXPECT_GT(bound, static_cast<int>(seeds.size()) / 10);
    EXPECT_GT(short_of_pods, 0);
    EXPECT_GT(short_of_resources, 0);
  }
}

// leaf-a {a1} and leaf-b {b1, b2} of 8-GPU nodes under one spine: two tiers.
void two_leaves(DifferentialCase& c) {
  c.tiers = 2;
  c.nodes = {testing::gpu_node("a1"), testing::gpu_node("b1"), testing::gpu_node("b2")};
  c.hypernodes = {testing::exact_hypernode("leaf-a", 1, "Node", {"a1"}),
                  testing::exact_hypernode("leaf-b", 1, "Node", {"b1", "b2"}),
                  testing::exact_hypernode("spine", 2, "HyperNode", {"leaf-a", "leaf-b"})};
}

// Volcano places an elastic gang for its minimum alone and grows the rest around it
// (pkg/scheduler/actions/allocate/allocate.go: allocateResourcesForTasks stops at JobReady, the job
// is put back for the others), so a hard tier-1 gang of 5 with minAvailable 1 stays in the leaf its
// first pod took, even where another leaf would hold all five. `place` once chose that other leaf.
TEST(PlaceExtenderDifferential, AnElasticGangIsPlacedForItsMinimumAndGrowsInsideItsLeafAlike) {
  DifferentialCase c;
  two_leaves(c);
  c.mode = "hard";
  c.tier = 1;
  c.size = 5;
  c.min_available = 1;
  c.gpus = 2;
  testing::add_volcano_job(c, {});
  testing::TempDir dir;
  const Answer place = through_place(c, dir);
  const Answer ext = through_extender(c);
  EXPECT_EQ(place.nodes, ext.nodes) << diff(place, ext);
  // The minimum's leaf is leaf-a (the fuller domain the binpack score prefers for one pod): four
  // pods fill a1 and the fifth waits there, though leaf-b would hold all five.
  const std::map<std::string, std::vector<std::string>> expected{
      {"rank 0", {"a1"}}, {"rank 1", {"a1"}}, {"rank 2", {"a1"}}, {"rank 3", {"a1"}}, {"rank 4", {""}}};
  EXPECT_EQ(place.nodes, expected) << diff(place, ext);
  EXPECT_NE(place.refusal.find("placed 4 of 5 pods (minAvailable 1)"), std::string::npos) << place.refusal;
}

// A coscheduling PodGroup (scheduling.x-k8s.io/v1alpha1) of `pods` pods of 4 GPUs, hard inside
// tier 2, over leaf-a {a1} and leaf-b {b1, b2} (8 GPUs each) under one spine; `used` GPUs taken on
// b1 by another pod; rank 0 bound on a1 when `one_bound`.
DifferentialCase coscheduling_case(int pods, int min_member, const std::string& min_gpus, int used,
                                   bool one_bound = false) {
  DifferentialCase c;
  c.kind = GangKind::kCoscheduling;
  two_leaves(c);
  c.mode = "hard";
  c.tier = 2;
  c.size = pods;
  c.min_available = min_member;
  c.gpus = 4;
  c.sub_group_of.assign(static_cast<std::size_t>(pods), "");
  if (used > 0) {
    c.used["b1"] = used;
    c.pods.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", "x-b1"}, {"namespace", "other"}, {"uid", "uid-x-b1"}}},
         {"spec",
          {{"nodeName", "b1"},
           {"containers", {{{"name", "c"}, {"resources", testing::differential::gpu_requests(used)}}}}}},
         {"status", {{"phase", "Running"}}}});
  }
  json spec{{"minMember", min_member}};
  if (!min_gpus.empty()) spec["minResources"] = {{"nvidia.com/gpu", min_gpus}};
  c.pod_group = {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                 {"kind", "PodGroup"},
                 {"metadata", {{"name", "train"}, {"namespace", "ml"}, {"uid", "uid-pg-train"}}},
                 {"spec", spec}};
  json items = json::array({c.pod_group});
  for (int rank = 0; rank < pods; ++rank) {
    json pod{
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata",
         {{"name", "train-" + std::to_string(rank)},
          {"namespace", "ml"},
          {"uid", "uid-train-" + std::to_string(rank)},
          {"labels",
           {{"scheduling.x-k8s.io/pod-group", "train"},
            {"batch.kubernetes.io/job-completion-index", std::to_string(rank)}}},
          {"annotations",
           {{"hypertopo.io/network-topology-mode", "hard"}, {"hypertopo.io/highest-tier-allowed", "2"}}}}},
        {"spec", testing::differential::job_pod_spec(c)},
        {"status", {{"phase", "Pending"}}}};
    if (one_bound && rank == 0) {
      c.bound[0] = "a1";
      pod["spec"]["nodeName"] = "a1";
      pod["status"]["phase"] = "Running";
    }
    items.push_back(pod);
    c.pods.push_back(std::move(pod));
  }
  c.job = testing::cluster_list(std::move(items));
  return c;
}

// The coscheduling plugin's PreFilter rejects every pod of a PodGroup while fewer pods carry its
// label than minMember (kubernetes-sigs/scheduler-plugins pkg/coscheduling/core/core.go
// PodGroupManager.PreFilter): `place` waits (exit 1) and the extender's filter fails every node,
// both with one sentence naming the group and the counts.
TEST(PlaceExtenderDifferential, ACoschedulingGroupShortOfItsMinMemberWaitsAtBothDoorsWithOneSentence) {
  const DifferentialCase c = coscheduling_case(2, 4, "", 0);
  testing::TempDir dir;
  const Answer place = through_place(c, dir);
  const Answer ext = through_extender(c);
  EXPECT_EQ(place, ext) << diff(place, ext);
  EXPECT_FALSE(place.any_placed());
  const std::string why = "gang ml/train: 2 of its 4 pods are seen so far; it is planned when all have come";
  EXPECT_EQ(place.refusal, why);
  EXPECT_EQ(ext.refusal, why);
  // Every node the extender is offered fails with it.
  ExtenderService svc(ExtenderOptions{.clock = std::make_shared<timing::ManualClock>()});
  ASSERT_TRUE(svc.set_hypernodes(c.hypernodes));
  ASSERT_TRUE(svc.set_nodes(c.nodes));
  ASSERT_TRUE(svc.set_pods(c.pods));
  svc.set_pod_groups({c.pod_group}, scheduler::PodGroupKind::kCoscheduling);
  for (int rank : c.pending_ranks()) ASSERT_TRUE(svc.upsert_pod(c.pods[c.pod_position(rank)]));
  auto kept = svc.filter({{"pod", c.pods[0]}, {"nodenames", {"a1", "b1", "b2"}}});
  ASSERT_TRUE(kept) << kept.error().message();
  EXPECT_TRUE(!kept->contains("nodenames") || (*kept)["nodenames"].empty()) << kept->dump();
  ASSERT_TRUE(kept->contains("failedNodes")) << kept->dump();
  EXPECT_EQ((*kept)["failedNodes"].size(), 3u) << kept->dump();
  for (const auto& [node, reason] : (*kept)["failedNodes"].items()) EXPECT_EQ(reason, why) << node;
}

// With spec.minResources, PreFilter then sums every Node's allocatable less its pods' requests, the
// group's own pods counted free (core.go CheckClusterResource, getNodeResource): 24 GPUs less 6
// taken leave 18, so 18 let the gang be planned and 19 refuse it at both doors, naming the gap.
TEST(PlaceExtenderDifferential, ACoschedulingGroupsMinResourcesAreCheckedAgainstTheClusterAtBothDoors) {
  testing::TempDir dir;
  {
    const DifferentialCase c = coscheduling_case(3, 3, "18", 6);
    const Answer place = through_place(c, dir);
    const Answer ext = through_extender(c);
    EXPECT_EQ(place, ext) << diff(place, ext);
    EXPECT_TRUE(place.any_placed()) << diff(place, ext);
  }
  {
    const DifferentialCase c = coscheduling_case(3, 3, "19", 6);
    const Answer place = through_place(c, dir);
    const Answer ext = through_extender(c);
    EXPECT_EQ(place, ext) << diff(place, ext);
    EXPECT_FALSE(place.any_placed());
    const std::string why =
        "PodGroup ml/train: the cluster's free resources do not reach its minResources (nvidia.com/gpu 1 "
        "short); the coscheduling plugin's PreFilter places none of its pods until they do";
    EXPECT_EQ(place.refusal, why);
    EXPECT_EQ(ext.refusal, why);
  }
  {
    // Its own bound pod's 4 GPUs count as free: 14 free on the Nodes and 4 held reach 18.
    const DifferentialCase c = coscheduling_case(3, 3, "18", 6, /*one_bound=*/true);
    const Answer place = through_place(c, dir);
    const Answer ext = through_extender(c);
    EXPECT_EQ(place, ext) << diff(place, ext);
    EXPECT_TRUE(place.any_placed()) << diff(place, ext);
  }
}

}  // namespace
}  // namespace hypertopo::cli
