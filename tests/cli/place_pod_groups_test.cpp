// PodGroups through both doors with the same objects: `place --job` given a List of the PodGroup and
// its Pods (and the running ones in --pods), against the extender fed the same objects (set_*
// calls, as its watches feed it) and asked for each pending pod in rank order as kube-scheduler asks
// (filter over every node, prioritize when more than one node is kept, the bind seen as a Pod
// update). KAI's (scheduling.run.ai/v2alpha2) and Volcano's (scheduling.volcano.sh/v1beta1) with
// fewer Pods than their minMember wait with the same sentence through both; the upstream one
// (scheduling.k8s.io/v1alpha2, Kubernetes 1.36: pods name it in spec.schedulingGroup.podGroupName,
// spec.schedulingConstraints.topology[0].key a node label) lands on the same nodes through both. `place
// --kubeconfig --pod-group NAMESPACE/NAME` reads such a PodGroup and its Pods from the loopback API server
// and answers as `place` does with the same objects as files.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "scheduler/extender/extender_service.h"
#include "tests/cli/cluster_objects.h"
#include "tests/cli/extender_door.h"
#include "tests/support/apiserver/loopback_apiserver.h"
#include "tests/support/fixtures.h"
#include "timing/clock.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;
using scheduler::ExtenderOptions;
using scheduler::ExtenderService;
using scheduler::PodGroupKind;
using testing::cluster_list;
using testing::gpu_node;
using testing::spine_of_two_leaves;

constexpr const char* kRack = "example.com/rack";

json pod(const std::string& name, int rank, const std::string& gpus, const json& labels,
         const json& annotations) {
  json meta{{"name", name},
            {"namespace", "ml"},
            {"uid", "uid-" + name},
            {"labels", labels},
            {"annotations", annotations}};
  meta["labels"]["batch.kubernetes.io/job-completion-index"] = std::to_string(rank);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", meta},
          {"spec",
           {{"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", gpus}}}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

json running(json p, const std::string& node) {
  p["spec"]["nodeName"] = node;
  p["status"]["phase"] = "Running";
  return p;
}

struct Answer {
  int code = -1;
  std::map<int, std::string> nodes;  // rank -> node, the pods not running yet
  std::string refusal;               // "" when every pod got a node
};

class PlacePodGroups : public ::testing::Test {
 protected:
  PlacePodGroups() {
    for (const char* n : {"a1", "a2", "a3", "a4"}) nodes_.push_back(gpu_node(n, {{kRack, "rack-a"}}));
    for (const char* n : {"b1", "b2", "b3", "b4"}) nodes_.push_back(gpu_node(n, {{kRack, "rack-b"}}));
  }

  std::string file(const std::string& name, const json& doc) {
    testing::write_text(dir_.path() / name, doc.dump(1));
    return (dir_.path() / name).string();
  }

  // `group` and its pods (`members`, pending or running) as one --job List; the running ones, and
  // `busy`, are the --pods list.
  Answer through_place(const json& group, const std::vector<json>& members, const std::vector<json>& busy) {
    json items = json::array({group});
    std::vector<json> pods = busy;
    for (const auto& m : members) {
      items.push_back(m);
      if (m["spec"].contains("nodeName")) pods.push_back(m);
    }
    const auto run = testing::run_captured(
        run_cli, {"place", "--nodes", file("nodes.json", cluster_list(nodes_)), "--topology",
                  file("hn.json", spine_of_two_leaves()), "--pods", file("pods.json", cluster_list(pods)),
                  "--job", file("job.json", cluster_list(items))});
    Answer out;
    out.code = run.code;
    const json doc = json::parse(run.out, nullptr, false);
    EXPECT_TRUE(doc.is_object()) << run.out << run.err;
    if (!doc.is_object()) return out;
    EXPECT_EQ(run.code, doc["fit"].get<bool>() ? 0 : 1) << run.out;
    if (!doc["fit"].get<bool>()) {
      out.refusal = doc["reason"].get<std::string>();
      return out;
    }
    for (const auto& a : doc["podSets"][0]["assignment"]) {
      if (a.value("bound", false)) continue;
      for (int i = 0; i < a["count"].get<int>(); ++i)
        out.nodes[a["firstRank"].get<int>() + i] = a["node"].get<std::string>();
    }
    return out;
  }

  // The pending pods of `members` are filtered one by one in rank order; each bind is seen as the
  // watch would deliver it before the next pod is asked for.
  Answer through_extender(const json& group, PodGroupKind kind, const std::vector<json>& members,
                          const std::vector<json>& busy) {
    ExtenderService svc(ExtenderOptions{.clock = std::make_shared<timing::ManualClock>()});
    const json hns = spine_of_two_leaves();
    EXPECT_TRUE(svc.set_hypernodes(hns["items"].get<std::vector<json>>()).has_value());
    EXPECT_TRUE(svc.set_nodes(nodes_.get<std::vector<json>>()).has_value());
    std::vector<json> pods = busy;
    for (const auto& m : members) pods.push_back(m);
    EXPECT_TRUE(svc.set_pods(pods).has_value());
    svc.set_pod_groups({group}, kind);
    json names = json::array();
    for (const auto& n : nodes_) names.push_back(n["metadata"]["name"]);
    Answer out;
    for (const auto& m : members) {
      if (m["spec"].contains("nodeName")) continue;
      EXPECT_TRUE(svc.upsert_pod(m).has_value());
    }
    for (json p : members) {
      if (p["spec"].contains("nodeName")) continue;
      const testing::ExtenderPick pick = testing::ask_extender(svc, p, names);
      EXPECT_EQ(pick.error, "");
      if (!pick.error.empty()) return out;
      if (pick.node.empty()) {
        out.refusal = pick.refusal;
        return out;
      }
      const std::string& chosen = pick.node;
      const int rank =
          std::stoi(p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"].get<std::string>());
      out.nodes[rank] = chosen;
      EXPECT_TRUE(svc.upsert_pod(running(p, chosen)).has_value());
    }
    return out;
  }

  json nodes_ = json::array();
  testing::TempDir dir_;
};

// KAI: PodGroup `serve` (minMember 4) in sub-groups decode and prefill, each inside one rack.
json kai_group(int min_member, bool sub_groups) {
  json spec{{"minMember", min_member}};
  if (sub_groups) {
    spec["subGroups"] = {{{"name", "decode"}, {"topologyConstraint", {{"requiredTopologyLevel", kRack}}}},
                         {{"name", "prefill"}, {"topologyConstraint", {{"requiredTopologyLevel", kRack}}}}};
  }
  return {{"apiVersion", "scheduling.run.ai/v2alpha2"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "serve"}, {"namespace", "ml"}}},
          {"spec", spec}};
}

json kai_pod(const std::string& sub, int rank) {
  json labels = json::object();
  if (!sub.empty()) labels["kai.scheduler/subgroup-name"] = sub;
  return pod("serve-" + std::to_string(rank), rank, "4", labels, {{"pod-group-name", "serve"}});
}

TEST_F(PlacePodGroups, KaiGroupWithFewerPodsThanItsMinMemberWaitsWithTheExtendersSentence) {
  const json group = kai_group(4, /*sub_groups=*/true);
  const std::vector<json> members{kai_pod("decode", 0), kai_pod("prefill", 1)};
  const Answer place = through_place(group, members, {});
  const Answer ext = through_extender(group, PodGroupKind::kKai, members, {});
  const std::string expected =
      "gang ml/serve: its PodGroup divides it into sub-groups and 2 of its 4 pods are seen so far; it is "
      "planned when all have come";
  EXPECT_EQ(place.code, 1);
  EXPECT_EQ(place.refusal, expected);
  EXPECT_NE(ext.refusal.find(expected), std::string::npos) << ext.refusal;
  EXPECT_TRUE(ext.nodes.empty());
}

TEST_F(PlacePodGroups, KaiGroupWithoutSubGroupsWaitsForItsMinMemberAndFitsOnceTheyAreThere) {
  std::vector<json> members{kai_pod("", 0), kai_pod("", 1)};
  const Answer short_of = through_place(kai_group(3, false), members, {});
  EXPECT_EQ(short_of.code, 1);
  EXPECT_EQ(short_of.refusal,
            "gang ml/serve: 2 of its 3 pods are seen so far; it is planned when all have come");
  members.push_back(kai_pod("", 2));
  const Answer all_there = through_place(kai_group(3, false), members, {});
  EXPECT_EQ(all_there.code, 0) << all_there.refusal;
  EXPECT_EQ(all_there.nodes.size(), 3u);
  // minMember 0 or absent asks for one pod, as KAI's max(minMember, 1).
  EXPECT_EQ(through_place(kai_group(0, false), members, {}).code, 0);
}

TEST_F(PlacePodGroups, KaiMinMemberThatIsNotACountIsAnErrorNamingIt) {
  json group = kai_group(3, false);
  group["spec"]["minMember"] = "three";
  const auto run =
      testing::run_captured(run_cli, {"place", "--nodes", file("nodes.json", cluster_list(nodes_)),
                                      "--topology", file("hn.json", spine_of_two_leaves()), "--job",
                                      file("job.json", cluster_list(json::array({group, kai_pod("", 0)})))});
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("job.json"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("PodGroup serve: spec.minMember must be an integer"), std::string::npos) << run.err;
}

// The upstream PodGroup (Kubernetes 1.36, KEP-4671 gang and KEP-5732 topology): minCount pods, all
// on nodes sharing one value of the node label schedulingConstraints.topology[0].key. The field is
// in the published API as the issue names it (kubernetes/website
// content/en/docs/reference/kubernetes-api/workload-resources/workload-v1alpha2.md, PodGroupSpec
// schedulingConstraints behind the TopologyAwareWorkloadScheduling feature gate).
json upstream_group(int min_count) {
  return {{"apiVersion", "scheduling.k8s.io/v1alpha2"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "trainer-0"}, {"namespace", "ml"}}},
          {"spec",
           {{"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}},
            {"schedulingConstraints", {{"topology", {{{"key", kRack}}}}}}}}};
}

json upstream_pod(int rank, const std::string& gpus) {
  json p = pod("trainer-0-" + std::to_string(rank), rank, gpus, json::object(), json::object());
  p["spec"]["schedulingGroup"] = {{"podGroupName", "trainer-0"}};
  return p;
}

json busy_pod(const std::string& name, const std::string& node, const std::string& gpus) {
  return running(pod(name, 0, gpus, json::object(), json::object()), node);
}

TEST_F(PlacePodGroups, UpstreamGroupLandsOnTheSameNodesThroughBothDoors) {
  std::vector<json> members;
  for (int rank = 0; rank < 4; ++rank) members.push_back(upstream_pod(rank, "8"));
  // Rack a is half taken: the four 8-GPU pods fit only in rack b.
  const std::vector<json> busy{busy_pod("x1", "a1", "8"), busy_pod("x2", "a2", "4")};
  const Answer place = through_place(upstream_group(4), members, busy);
  const Answer ext = through_extender(upstream_group(4), PodGroupKind::kUpstream, members, busy);
  ASSERT_EQ(place.refusal, "");
  ASSERT_EQ(ext.refusal, "");
  ASSERT_EQ(place.nodes.size(), 4u);
  EXPECT_EQ(place.nodes, ext.nodes);
  for (const auto& [rank, node] : place.nodes) EXPECT_EQ(node[0], 'b') << rank << " on " << node;
}

TEST_F(PlacePodGroups, UpstreamGroupPartlyRunningIsPlannedAroundItsPodsAlikeThroughBothDoors) {
  std::vector<json> members{running(upstream_pod(0, "4"), "a3"), running(upstream_pod(1, "4"), "a3")};
  for (int rank = 2; rank < 6; ++rank) members.push_back(upstream_pod(rank, "4"));
  const std::vector<json> busy{busy_pod("x1", "a1", "8")};
  const Answer place = through_place(upstream_group(6), members, busy);
  const Answer ext = through_extender(upstream_group(6), PodGroupKind::kUpstream, members, busy);
  ASSERT_EQ(place.refusal, "");
  ASSERT_EQ(ext.refusal, "");
  ASSERT_EQ(place.nodes.size(), 4u);
  EXPECT_EQ(place.nodes, ext.nodes);
  // The rack of the running pods holds the rest: the key's domain is a required level.
  for (const auto& [rank, node] : place.nodes) EXPECT_EQ(node[0], 'a') << rank << " on " << node;
}

TEST_F(PlacePodGroups, UpstreamGroupWhoseRackIsFullRefusesAlikeThroughBothDoors) {
  std::vector<json> members{running(upstream_pod(0, "8"), "a3")};
  for (int rank = 1; rank < 4; ++rank) members.push_back(upstream_pod(rank, "8"));
  const std::vector<json> busy{busy_pod("x1", "a1", "8"), busy_pod("x2", "a2", "8")};
  const Answer place = through_place(upstream_group(4), members, busy);
  const Answer ext = through_extender(upstream_group(4), PodGroupKind::kUpstream, members, busy);
  EXPECT_EQ(place.code, 1);
  ASSERT_NE(place.refusal, "");
  const std::string head = place.refusal.substr(0, place.refusal.find(':'));
  EXPECT_EQ(head,
            "1 pods are bound in leaf-a and the other 3 do not fit inside leaf-a, the widest domain the "
            "gang's constraint allows");
  EXPECT_NE(ext.refusal.find(head), std::string::npos) << place.refusal << "\n" << ext.refusal;
}

TEST_F(PlacePodGroups, UpstreamGroupWithFewerPodsThanMinCountWaitsForThem) {
  const Answer place = through_place(upstream_group(4), {upstream_pod(0, "8"), upstream_pod(1, "8")}, {});
  EXPECT_EQ(place.code, 1);
  EXPECT_EQ(place.refusal,
            "gang ml/trainer-0: 2 of its 4 pods are seen so far; it is planned when all have come");
}

// Volcano: PodGroup `train` as its job controller makes it (no subGroupPolicy), its pods naming it
// in scheduling.k8s.io/group-name. Volcano's gang plugin finds a job with fewer pods than minMember
// not valid (volcano-sh/volcano pkg/scheduler/plugins/gang/gang.go, OnSessionOpen's validJobFn:
// JobInfo.ValidTaskNum() < MinAvailable, NotEnoughPodsReason) and framework/session.go openSession
// drops it from the session, so neither door places any of its pods until all have come.
json volcano_group(int min_member) {
  return {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "train"}, {"namespace", "ml"}}},
          {"spec",
           {{"minMember", min_member}, {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 1}}}}}};
}

json volcano_pod(int rank) {
  return pod("train-" + std::to_string(rank), rank, "8", json::object(),
             {{"scheduling.k8s.io/group-name", "train"}});
}

std::multiset<std::string> nodes_of(const Answer& a) {
  std::multiset<std::string> out;
  for (const auto& [rank, node] : a.nodes) out.insert(node);
  return out;
}

TEST_F(PlacePodGroups, VolcanoGroupWithFewerPodsThanItsMinMemberWaitsAlikeThroughBothDoors) {
  const std::vector<json> members{volcano_pod(0), volcano_pod(1)};
  const Answer place = through_place(volcano_group(4), members, {});
  const Answer ext = through_extender(volcano_group(4), PodGroupKind::kVolcano, members, {});
  const std::string expected =
      "gang ml/train: 2 of its 4 pods are seen so far; it is planned when all have come";
  EXPECT_EQ(place.code, 1);
  EXPECT_EQ(place.refusal, expected);
  EXPECT_NE(ext.refusal.find(expected), std::string::npos) << ext.refusal;
  EXPECT_TRUE(ext.nodes.empty());
}

TEST_F(PlacePodGroups, VolcanoGroupPartlyRunningCountsItsRunningPodsAmongThoseSeen) {
  // One pod of the gang runs (a restarted job's survivor), one is pending: 2 of 3.
  const std::vector<json> members{running(volcano_pod(0), "b1"), volcano_pod(1)};
  const Answer place = through_place(volcano_group(3), members, {});
  const Answer ext = through_extender(volcano_group(3), PodGroupKind::kVolcano, members, {});
  const std::string expected =
      "gang ml/train: 2 of its 3 pods are seen so far; it is planned when all have come";
  EXPECT_EQ(place.code, 1);
  EXPECT_EQ(place.refusal, expected);
  EXPECT_NE(ext.refusal.find(expected), std::string::npos) << ext.refusal;
}

TEST_F(PlacePodGroups, VolcanoGroupIsPlacedAlikeOnceItsMinMemberPodsAreThere) {
  std::vector<json> members;
  for (int rank = 0; rank < 4; ++rank) members.push_back(volcano_pod(rank));
  // Rack a is half taken: the four 8-GPU pods fit only in rack b.
  const std::vector<json> busy{busy_pod("x1", "a1", "8")};
  const Answer place = through_place(volcano_group(4), members, busy);
  const Answer ext = through_extender(volcano_group(4), PodGroupKind::kVolcano, members, busy);
  ASSERT_EQ(place.refusal, "");
  ASSERT_EQ(ext.refusal, "");
  ASSERT_EQ(place.nodes.size(), 4u);
  EXPECT_EQ(nodes_of(place), nodes_of(ext));
  // minMember below the pods (an elastic job) starts as soon as its minimum is there.
  const Answer elastic =
      through_place(volcano_group(2), {volcano_pod(0), volcano_pod(1), volcano_pod(2)}, {});
  EXPECT_EQ(elastic.code, 0) << elastic.refusal;
}

TEST_F(PlacePodGroups, APodOfTheListNamingAnotherGroupIsAnErrorNamingIt) {
  json stray = upstream_pod(1, "8");
  stray["spec"]["schedulingGroup"]["podGroupName"] = "trainer-1";
  const auto run = testing::run_captured(
      run_cli,
      {"place", "--nodes", file("nodes.json", cluster_list(nodes_)), "--topology",
       file("hn.json", spine_of_two_leaves()), "--job",
       file("job.json", cluster_list(json::array({upstream_group(2), upstream_pod(0, "8"), stray})))});
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("Pod trainer-0-1: spec.schedulingGroup.podGroupName names trainer-1, not the List's "
                         "PodGroup trainer-0"),
            std::string::npos)
      << run.err;
}

// Coscheduling (kubernetes-sigs/scheduler-plugins, scheduling.x-k8s.io/v1alpha1): PodGroup `train`,
// its pods naming it in the label scheduling.x-k8s.io/pod-group and stating the gang's topology in
// their own annotations (the PodGroup has none). minResources and scheduleTimeoutSeconds place no pod.
json cosched_group(int min_member) {
  return {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "train"}, {"namespace", "ml"}}},
          {"spec",
           {{"minMember", min_member},
            {"minResources", {{"nvidia.com/gpu", std::to_string(4 * min_member)}}},
            {"scheduleTimeoutSeconds", 30}}}};
}

json cosched_pod(int rank, const std::string& group = "train") {
  return pod(group + "-" + std::to_string(rank), rank, "4", {{"scheduling.x-k8s.io/pod-group", group}},
             {{"hypertopo.io/network-topology-mode", "hard"}, {"hypertopo.io/highest-tier-allowed", "1"}});
}

TEST_F(PlacePodGroups, CoschedulingGroupLandsOnTheSameNodesThroughBothDoors) {
  std::vector<json> members;
  for (int rank = 0; rank < 6; ++rank) members.push_back(cosched_pod(rank));
  // Six 4-GPU pods inside one leaf: leaf-a keeps 12 GPUs free (a1 and a2 taken, a3 half), too few.
  const std::vector<json> busy{busy_pod("x1", "a1", "8"), busy_pod("x2", "a2", "8"),
                               busy_pod("x3", "a3", "4")};
  const Answer place = through_place(cosched_group(6), members, busy);
  const Answer ext = through_extender(cosched_group(6), PodGroupKind::kCoscheduling, members, busy);
  ASSERT_EQ(place.refusal, "");
  ASSERT_EQ(ext.refusal, "");
  ASSERT_EQ(place.nodes.size(), 6u);
  EXPECT_EQ(place.nodes, ext.nodes);
  std::map<std::string, int> per_node;
  for (const auto& [rank, node] : place.nodes) ++per_node[node];
  EXPECT_EQ(per_node.size(), 3u);
  for (const auto& [node, n] : per_node) {
    EXPECT_EQ(node[0], 'b') << node;
    EXPECT_EQ(n, 2) << node;
  }
}

TEST_F(PlacePodGroups, CoschedulingGroupPartlyRunningIsPlannedAroundItsPodsAlikeThroughBothDoors) {
  std::vector<json> members{running(cosched_pod(0), "b2"), running(cosched_pod(1), "b2")};
  for (int rank = 2; rank < 5; ++rank) members.push_back(cosched_pod(rank));
  const Answer place = through_place(cosched_group(5), members, {});
  const Answer ext = through_extender(cosched_group(5), PodGroupKind::kCoscheduling, members, {});
  ASSERT_EQ(place.refusal, "");
  ASSERT_EQ(ext.refusal, "");
  EXPECT_EQ(place.nodes, ext.nodes);
  ASSERT_EQ(place.nodes.size(), 3u);
  for (const auto& [rank, node] : place.nodes) {
    EXPECT_GE(rank, 2);
    EXPECT_EQ(node[0], 'b') << rank << " on " << node;  // the running pods' leaf, the pods' tier 1
  }
}

TEST_F(PlacePodGroups, CoschedulingGroupWithFewerPodsThanMinMemberWaitsForThem) {
  // The plugin's PreFilter rejects every pod of the group while fewer than minMember exist
  // (pkg/coscheduling/core/core.go PodGroupManager.PreFilter).
  const Answer place = through_place(cosched_group(4), {cosched_pod(0), cosched_pod(1)}, {});
  EXPECT_EQ(place.code, 1);
  EXPECT_EQ(place.refusal,
            "gang ml/train: 2 of its 4 pods are seen so far; it is planned when all have come");
}

TEST_F(PlacePodGroups, CoschedulingPodLabelledForAnotherGroupIsAnErrorNamingIt) {
  const auto run = testing::run_captured(
      run_cli, {"place", "--nodes", file("nodes.json", cluster_list(nodes_)), "--topology",
                file("hn.json", spine_of_two_leaves()), "--job",
                file("job.json",
                     cluster_list(json::array({cosched_group(2), cosched_pod(0), cosched_pod(1, "eval")})))});
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(
      run.err.find(
          "Pod eval-1: its label scheduling.x-k8s.io/pod-group names eval, not the List's PodGroup train"),
      std::string::npos)
      << run.err;
}

// `place --pod-group`: the gang is a PodGroup of the cluster, read with its Pods from the loopback API
// server as the extender's watcher lists them; the answer is the one the same objects give as files.
class PlacePodGroupFromCluster : public PlacePodGroups {
 protected:
  void SetUp() override {
    auto started = server_.start();
    ASSERT_TRUE(started) << started.error().message();
    for (const auto& n : nodes_) {
      create("/api/v1/nodes", n);
      // Status is written through /status, as the kubelet writes it: a create drops it.
      auto r = server_.store().handle(
          {.method = "PUT",
           .path = "/api/v1/nodes/" + n["metadata"]["name"].get<std::string>() + "/status",
           .body = n.dump()});
      ASSERT_EQ(r.status, 200) << r.body;
    }
    const json hns = spine_of_two_leaves();
    for (const auto& h : hns["items"]) create("/apis/topology.volcano.sh/v1alpha1/hypernodes", h);
    kubeconfig_ = file(
        "kubeconfig",
        "apiVersion: v1\nkind: Config\nclusters:\n- name: loop\n  cluster:\n    server: " + server_.url() +
            "\nusers:\n- name: me\n  user:\n    token: t0ken\ncontexts:\n- name: loop\n  "
            "context:\n    cluster: loop\n    user: me\ncurrent-context: loop\n");
  }

  std::string file(const std::string& name, const std::string& text) {
    testing::write_text(dir_.path() / name, text);
    return (dir_.path() / name).string();
  }
  using PlacePodGroups::file;

  void create(const std::string& path, const json& object) {
    auto r = server_.store().handle({.method = "POST", .path = path, .body = object.dump()});
    ASSERT_EQ(r.status, 201) << path << ": " << r.body;
  }

  // The PodGroup (at `group_path`), its members and `busy` made in the cluster; then `place
  // --pod-group ml/<name>` against it and `place` with the same objects as files.
  std::pair<testing::CapturedRun, testing::CapturedRun> both(const std::string& group_path, const json& group,
                                                             const std::vector<json>& members,
                                                             const std::vector<json>& busy) {
    create(group_path, group);
    json items = json::array({group});
    std::vector<json> pods = busy;
    for (const auto& m : members) {
      items.push_back(m);
      pods.push_back(m);
    }
    for (const auto& p : pods) create("/api/v1/namespaces/ml/pods", p);
    const std::string name = group["metadata"]["name"];
    auto live =
        testing::run_captured(run_cli, {"place", "--kubeconfig", kubeconfig_, "--pod-group", "ml/" + name});
    auto files = testing::run_captured(
        run_cli, {"place", "--nodes", file("nodes.json", cluster_list(nodes_)), "--topology",
                  file("hn.json", spine_of_two_leaves()), "--pods", file("pods.json", cluster_list(pods)),
                  "--job", file("job.json", cluster_list(items))});
    return {live, files};
  }

  testing::LoopbackApiServer server_{testing::LoopbackApiServerOptions{.bearer_token = "t0ken"}};
  std::string kubeconfig_;
};

TEST_F(PlacePodGroupFromCluster, AnUpstreamGroupPartlyRunningIsPlacedAsTheSameObjectsInFilesPlaceIt) {
  std::vector<json> members{running(upstream_pod(0, "4"), "a3"), running(upstream_pod(1, "4"), "a3")};
  for (int rank = 2; rank < 6; ++rank) members.push_back(upstream_pod(rank, "4"));
  const std::size_t before = server_.request_log().size();
  const auto [live, files] = both("/apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups",
                                  upstream_group(6), members, {busy_pod("x1", "a1", "8")});
  EXPECT_EQ(live.code, 0) << live.out << live.err;
  EXPECT_EQ(live.code, files.code);
  EXPECT_EQ(live.out, files.out);
  const json doc = json::parse(live.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << live.out;
  EXPECT_EQ(doc["podSets"][0]["bound"], 2) << live.out;
  EXPECT_EQ(doc["podSets"][0]["domains"], json::array({"leaf-a"})) << live.out;
  // The PodGroup is listed by name in its namespace, kind by kind, as the extender's watcher lists
  // PodGroups; the Pods of its namespace likewise.
  std::vector<std::string> lists;
  const auto log = server_.request_log();
  for (std::size_t i = before; i < log.size(); ++i)
    if (log[i].verb == "list" && log[i].path.find("/namespaces/ml/") != std::string::npos)
      lists.push_back(log[i].path);
  EXPECT_EQ(lists, (std::vector<std::string>{"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ml/podgroups",
                                             "/apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups",
                                             "/apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups",
                                             "/apis/scheduling.run.ai/v2alpha2/namespaces/ml/podgroups",
                                             "/api/v1/namespaces/ml/pods"}));
}

TEST_F(PlacePodGroupFromCluster, AKaiGroupShortOfItsMinMemberWaitsAsThroughAFile) {
  const auto [live, files] = both("/apis/scheduling.run.ai/v2alpha2/namespaces/ml/podgroups",
                                  kai_group(4, true), {kai_pod("decode", 0), kai_pod("prefill", 1)}, {});
  EXPECT_EQ(live.code, 1) << live.out << live.err;
  EXPECT_EQ(live.out, files.out);
  EXPECT_EQ(
      json::parse(live.out)["reason"],
      "gang ml/serve: its PodGroup divides it into sub-groups and 2 of its 4 pods are seen so far; it is "
      "planned when all have come");
}

TEST_F(PlacePodGroupFromCluster, AVolcanoGroupIsReadWithThePodsItsAnnotationNames) {
  // Volcano's job controller names the PodGroup in each pod's scheduling.k8s.io/group-name; the
  // PodGroup's networkTopology binds the gang (hard: one tier-1 HyperNode).
  const json group{
      {"apiVersion", "scheduling.volcano.sh/v1beta1"},
      {"kind", "PodGroup"},
      {"metadata", {{"name", "train"}, {"namespace", "ml"}}},
      {"spec", {{"minMember", 4}, {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 1}}}}}};
  std::vector<json> members;
  for (int rank = 0; rank < 4; ++rank)
    members.push_back(pod("train-" + std::to_string(rank), rank, "8", json::object(),
                          {{"scheduling.k8s.io/group-name", "train"}}));
  // A pod of another gang in the namespace is not one of its.
  const json other = pod("other-0", 0, "8", json::object(), {{"scheduling.k8s.io/group-name", "other"}});
  create("/api/v1/namespaces/ml/pods", other);
  const auto [live, files] = both("/apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups", group,
                                  members, {busy_pod("x1", "a1", "8")});
  EXPECT_EQ(live.code, 0) << live.out << live.err;
  EXPECT_EQ(live.out, files.out);
  const json doc = json::parse(live.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << live.out;
  EXPECT_EQ(doc["podSets"][0]["domains"], json::array({"leaf-b"})) << live.out;
}

TEST_F(PlacePodGroupFromCluster,
       ACoschedulingGroupIsReadWithThePodsItsLabelNamesAndPlannedAroundTheRunningOnes) {
  std::vector<json> members{running(cosched_pod(0), "b2"), running(cosched_pod(1), "b2")};
  for (int rank = 2; rank < 5; ++rank) members.push_back(cosched_pod(rank));
  // Pods of another coscheduling group in the namespace are not of this gang.
  create("/api/v1/namespaces/ml/pods", cosched_pod(0, "eval"));
  create("/api/v1/namespaces/ml/pods", running(cosched_pod(1, "eval"), "a4"));
  const auto [live, files] = both("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ml/podgroups",
                                  cosched_group(5), members, {busy_pod("x1", "b1", "8")});
  EXPECT_EQ(live.code, 0) << live.out << live.err;
  EXPECT_EQ(live.out, files.out);
  const json doc = json::parse(live.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << live.out;
  EXPECT_EQ(doc["podSets"][0]["bound"], 2) << live.out;
  EXPECT_EQ(doc["podSets"][0]["domains"], json::array({"leaf-b"})) << live.out;
  // Ranks 2-4 on leaf-b's nodes with room (b1 is full): b2's last 8 GPUs, then b3 or b4.
  std::map<int, std::string> placed;
  for (const auto& a : doc["podSets"][0]["assignment"]) {
    if (a.value("bound", false)) continue;
    for (int i = 0; i < a["count"].get<int>(); ++i) placed[a["firstRank"].get<int>() + i] = a["node"];
  }
  ASSERT_EQ(placed.size(), 3u) << live.out;
  for (const auto& [rank, node] : placed) {
    EXPECT_GE(rank, 2) << live.out;
    EXPECT_TRUE(node == "b2" || node == "b3" || node == "b4") << rank << " on " << node;
  }
}

TEST_F(PlacePodGroupFromCluster, ACoschedulingGroupShortOfItsMinMemberWaitsAsThroughAFile) {
  const auto [live, files] = both("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ml/podgroups",
                                  cosched_group(4), {cosched_pod(0), running(cosched_pod(1), "a2")}, {});
  EXPECT_EQ(live.code, 1) << live.out << live.err;
  EXPECT_EQ(live.out, files.out);
  EXPECT_EQ(json::parse(live.out)["reason"],
            "gang ml/train: 2 of its 4 pods are seen so far; it is planned when all have come");
}

TEST_F(PlacePodGroupFromCluster, APodGroupTheClusterDoesNotHoldIsAnErrorNamingIt) {
  auto r =
      testing::run_captured(run_cli, {"place", "--kubeconfig", kubeconfig_, "--pod-group", "ml/nowhere"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("PodGroup ml/nowhere not found in the cluster (--kubeconfig " + kubeconfig_ +
                       ") among podgroups.scheduling.x-k8s.io, podgroups.scheduling.volcano.sh, "
                       "podgroups.scheduling.k8s.io, podgroups.scheduling.run.ai"),
            std::string::npos)
      << r.err;
  r = testing::run_captured(run_cli, {"place", "--kubeconfig", kubeconfig_, "--pod-group", "nowhere"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--pod-group 'nowhere': expected NAMESPACE/NAME"), std::string::npos) << r.err;
}

TEST_F(PlacePodGroupFromCluster, TheGangIsGivenOnceAsAFileOrAPodGroup) {
  const std::string job =
      file("job.json", cluster_list(json::array({upstream_group(1), upstream_pod(0, "8")})));
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"place", "--kubeconfig", kubeconfig_},
           {"place", "--kubeconfig", kubeconfig_, "--job", job, "--pod-group", "ml/trainer-0"}}) {
    auto r = testing::run_captured(run_cli, args);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.err.find("--job, --pod-group: give the gang as one of them"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace hypertopo::cli
