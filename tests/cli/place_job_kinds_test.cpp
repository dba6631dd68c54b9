// `place --job` with a Kubeflow MPIJob and a LeaderWorkerSet, as users hand them over: where each
// rank goes, the launcher's rank, one LeaderWorkerSet group per domain of its exclusive topology, the
// refusal of a group no domain holds, both kinds in a file of several documents; and the pods their
// controllers make (mpi-operator's, LWS's), asked of the extender one by one, get the nodes `place`
// gave their ranks, or are refused where `place` refuses the object.
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
#include "tests/scheduler/extender/kube_scheduler_standin.h"
#include "tests/support/fixtures.h"
#include "timing/clock.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;
using testing::cluster_list;
using testing::exact_hypernode;
using testing::gpu_node;

constexpr const char* kLeafLabel = "example.com/leaf";

class PlaceJobKinds : public ::testing::Test {
 protected:
  PlaceJobKinds() {
    json node_items = json::array();
    json hypernodes = json::array();
    json leaf_names = json::array();
    for (const char leaf : {'a', 'b', 'c'}) {
      std::vector<std::string> members;
      for (int i = 1; i <= 4; ++i) {
        const std::string name = std::string(1, leaf) + std::to_string(i);
        node_items.push_back(
            gpu_node(name, {{kLeafLabel, std::string("leaf-") + leaf}, {"example.com/spine", "spine"}}));
        nodes_.push_back(node_items.back());
        members.push_back(name);
      }
      hypernodes.push_back(exact_hypernode(std::string("leaf-") + leaf, 1, "Node", members));
      hypernodes_.push_back(hypernodes.back());
    }
    hypernodes.push_back(exact_hypernode("spine", 2, "HyperNode", {"leaf-a", "leaf-b", "leaf-c"}));
    hypernodes_.push_back(hypernodes.back());
    nodes_file_ = write("nodes.json", cluster_list(node_items).dump());
    topology_file_ = write("hn.json", cluster_list(hypernodes).dump());
  }

  std::string write(const std::string& name, const std::string& text) {
    testing::write_text(dir_.path() / name, text);
    return (dir_.path() / name).string();
  }
  testing::CapturedRun place(const std::string& job_file) {
    return testing::run_captured(run_cli, {"place", "--nodes", nodes_file_, "--topology", topology_file_,
                                           "--job", job_file, "-o", "json"});
  }

  // The node of each rank of each pod set of place's -o json answer.
  static std::map<std::string, std::vector<std::string>> ranks_of(const json& answer) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& ps : answer["podSets"]) {
      auto& nodes = out[ps["name"].get<std::string>()];
      for (const auto& a : ps["assignment"]) {
        const auto first = a["firstRank"].get<std::size_t>();
        const auto count = a["count"].get<std::size_t>();
        if (nodes.size() < first + count) nodes.resize(first + count);
        for (std::size_t r = first; r < first + count; ++r) nodes[r] = a["node"].get<std::string>();
      }
    }
    return out;
  }
  // The leaf of a node: its name's letter.
  static std::string leaf_of(const std::string& node) { return "leaf-" + node.substr(0, 1); }

  testing::TempDir dir_;
  std::vector<json> nodes_, hypernodes_;
  std::string nodes_file_, topology_file_;
};

json job_kinds_containers(const std::string& gpus) {
  json requests = {{"cpu", "1"}};
  if (!gpus.empty()) requests["nvidia.com/gpu"] = gpus;
  return json::array({{{"name", "main"}, {"image", "mpi"}, {"resources", {{"requests", requests}}}}});
}

// An MPIJob whose pods ask for one leaf (tier 1) through Volcano's pod annotations, as the
// PyTorchJob of place_object_files_test does.
json mpi_job_object(int workers, bool launcher_is_worker) {
  auto replica = [](int n) {
    const json annotations = {{"volcano.sh/network-topology-mode", "hard"},
                              {"volcano.sh/network-topology-highest-tier", "1"}};
    const json tmpl = {{"metadata", {{"annotations", annotations}}},
                       {"spec", {{"containers", job_kinds_containers("8")}}}};
    return json{{"replicas", n}, {"template", tmpl}};
  };
  json spec = {{"slotsPerWorker", 8},
               {"launcherCreationPolicy", "AtStartup"},
               {"runPolicy", {{"schedulingPolicy", {{"queue", "research"}}}}},
               {"mpiReplicaSpecs", {{"Launcher", replica(1)}, {"Worker", replica(workers)}}}};
  if (launcher_is_worker) spec["runLauncherAsWorker"] = true;
  return {{"apiVersion", "kubeflow.org/v2beta1"},
          {"kind", "MPIJob"},
          {"metadata", {{"name", "allreduce"}, {"namespace", "default"}}},
          {"spec", spec}};
}

// The launcher is no MPI rank of its own: worker i has replica-index i and the launcher, with no
// index, takes the slot after them, in the same leaf. With runLauncherAsWorker it is rank 0.
TEST_F(PlaceJobKinds, AnMPIJobsWorkersTakeTheirIndexesAndTheLauncherItsSlot) {
  auto fits = place(write("mpi.json", mpi_job_object(3, false).dump()));
  ASSERT_EQ(fits.code, 0) << fits.out << fits.err;
  const json answer = json::parse(fits.out);
  ASSERT_EQ(answer["podSets"].size(), 2u) << fits.out;
  EXPECT_EQ(answer["podSets"][0]["name"], "Worker");
  EXPECT_EQ(answer["podSets"][1]["name"], "Launcher");
  auto ranks = ranks_of(answer);
  ASSERT_EQ(ranks["Worker"].size(), 3u);
  ASSERT_EQ(ranks["Launcher"].size(), 1u);
  std::set<std::string> nodes(ranks["Worker"].begin(), ranks["Worker"].end());
  nodes.insert(ranks["Launcher"][0]);
  EXPECT_EQ(nodes.size(), 4u) << "an 8-GPU pod per node: " << fits.out;
  std::set<std::string> leaves;
  for (const auto& n : nodes) leaves.insert(leaf_of(n));
  EXPECT_EQ(leaves.size(), 1u) << fits.out;

  auto first = place(write("mpi-launcher-worker.json", mpi_job_object(3, true).dump()));
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  const json answer2 = json::parse(first.out);
  EXPECT_EQ(answer2["podSets"][0]["name"], "Launcher");
  EXPECT_EQ(answer2["podSets"][1]["name"], "Worker");

  // Five 8-GPU pods (4 workers and the launcher) fit in no leaf of four nodes.
  auto too_big = place(write("mpi-too-big.json", mpi_job_object(4, false).dump()));
  EXPECT_EQ(too_big.code, 1) << too_big.out << too_big.err;
  EXPECT_NE((too_big.out + too_big.err).find("allreduce"), std::string::npos) << too_big.out << too_big.err;

  json bad = mpi_job_object(2, false);
  bad["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2;
  auto two_launchers = place(write("mpi-bad.json", bad.dump()));
  EXPECT_EQ(two_launchers.code, 2);
  EXPECT_NE(
      two_launchers.err.find("MPIJob allreduce spec.mpiReplicaSpecs.Launcher: replicas must be from 1 to 1"),
      std::string::npos)
      << two_launchers.err;

  // The gang is placed under one constraint: a Launcher asking for another tier than its Workers is
  // refused, naming the job, as a PyTorchJob's Master and Worker are.
  json split = mpi_job_object(2, false);
  split["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["metadata"]["annotations"]
       ["volcano.sh/network-topology-highest-tier"] = "2";
  auto two_constraints = place(write("mpi-two-constraints.json", split.dump()));
  EXPECT_EQ(two_constraints.code, 2);
  EXPECT_NE(two_constraints.err.find("MPIJob allreduce: the Launcher and Worker templates ask for different "
                                     "topology; the gang is placed under one constraint"),
            std::string::npos)
      << two_constraints.err;
}

json lws_object(int replicas, int size, const std::string& gpus, const std::string& exclusive) {
  json pod_template = {{"metadata", {{"labels", {{"app", "serve"}}}}},
                       {"spec", {{"containers", job_kinds_containers(gpus)}}}};
  json doc = {{"apiVersion", "leaderworkerset.x-k8s.io/v1"},
              {"kind", "LeaderWorkerSet"},
              {"metadata", {{"name", "serve"}, {"namespace", "default"}}},
              {"spec",
               {{"replicas", replicas},
                {"leaderWorkerTemplate", {{"size", size}, {"workerTemplate", pod_template}}}}}};
  if (!exclusive.empty())
    doc["metadata"]["annotations"] = {{"leaderworkerset.sigs.k8s.io/exclusive-topology", exclusive}};
  return doc;
}

// Each group's pods in one leaf of the exclusive-topology key and no two groups in one leaf, though
// a group of four 2-GPU pods fits on one node; without the annotation the groups pack together.
TEST_F(PlaceJobKinds, ALeaderWorkerSetsGroupsTakeOneLeafEachUnderExclusiveTopology) {
  auto fits = place(write("lws.json", lws_object(2, 4, "2", kLeafLabel).dump()));
  ASSERT_EQ(fits.code, 0) << fits.out << fits.err;
  auto ranks = ranks_of(json::parse(fits.out));
  ASSERT_EQ(ranks.size(), 2u) << fits.out;
  std::map<std::string, std::set<std::string>> leaves;  // group -> its leaves
  for (const auto& [group, nodes] : ranks) {
    ASSERT_EQ(nodes.size(), 4u) << fits.out;
    for (const auto& n : nodes) leaves[group].insert(leaf_of(n));
  }
  ASSERT_EQ(leaves["serve-0"].size(), 1u) << fits.out;
  ASSERT_EQ(leaves["serve-1"].size(), 1u) << fits.out;
  EXPECT_NE(*leaves["serve-0"].begin(), *leaves["serve-1"].begin()) << "one group per leaf: " << fits.out;

  auto together = place(write("lws-shared.json", lws_object(2, 4, "2", "").dump()));
  ASSERT_EQ(together.code, 0) << together.out << together.err;
  std::set<std::string> shared;
  for (const auto& [group, nodes] : ranks_of(json::parse(together.out)))
    for (const auto& n : nodes) shared.insert(leaf_of(n));
  EXPECT_EQ(shared.size(), 1u) << "without exclusive topology both groups pack into one leaf: "
                               << together.out;

  // A fourth group finds no leaf of its own among three.
  auto crowded = place(write("lws-four.json", lws_object(4, 4, "2", kLeafLabel).dump()));
  EXPECT_EQ(crowded.code, 1) << crowded.out << crowded.err;
  const std::string said = crowded.out + crowded.err;
  EXPECT_NE(said.find("serve-3"), std::string::npos) << said;
  EXPECT_NE(said.find("one group per domain"), std::string::npos) << said;
}

// subGroupSize 2 splits a group of four into the leader with worker 1 and workers 2 and 3 (LWS's
// getSubGroupIndex). The group is exclusive on the spine's label, and with
// subgroup-exclusive-topology on the leaf label each sub-group takes a leaf of its own, where
// without it the four 2-GPU pods share one node.
TEST_F(PlaceJobKinds, ALeaderWorkerSetsSubGroupsTakeOneLeafEach) {
  json doc = lws_object(1, 4, "2", "example.com/spine");
  doc["spec"]["leaderWorkerTemplate"]["subGroupPolicy"] = {{"subGroupSize", 2}};
  auto packed = place(write("lws-sub-packed.json", doc.dump()));
  ASSERT_EQ(packed.code, 0) << packed.out << packed.err;
  std::set<std::string> nodes;
  for (const auto& [set, ranks] : ranks_of(json::parse(packed.out)))
    for (const auto& n : ranks) nodes.insert(n);
  EXPECT_EQ(nodes.size(), 1u) << packed.out;

  doc["metadata"]["annotations"]["leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"] = kLeafLabel;
  auto spread = place(write("lws-sub.json", doc.dump()));
  ASSERT_EQ(spread.code, 0) << spread.out << spread.err;
  auto ranks = ranks_of(json::parse(spread.out));
  ASSERT_EQ(ranks.size(), 2u) << spread.out;
  const auto& first = ranks["serve-0-subgroup-0"];
  const auto& second = ranks["serve-0-subgroup-1"];
  ASSERT_EQ(first.size(), 2u) << spread.out;
  ASSERT_EQ(second.size(), 2u) << spread.out;
  EXPECT_EQ(leaf_of(first[0]), leaf_of(first[1])) << spread.out;
  EXPECT_EQ(leaf_of(second[0]), leaf_of(second[1])) << spread.out;
  EXPECT_NE(leaf_of(first[0]), leaf_of(second[0])) << "one sub-group per leaf: " << spread.out;
}

// A group of five 8-GPU pods fits in no leaf of four nodes: refused, naming the group; the leader
// of its own template (no GPU) is a pod set of its own, with the workers after it.
TEST_F(PlaceJobKinds, ALeaderWorkerSetGroupThatNoLeafHoldsIsRefused) {
  json doc = lws_object(1, 5, "8", kLeafLabel);
  doc["spec"]["leaderWorkerTemplate"]["leaderTemplate"] = {
      {"spec", {{"containers", job_kinds_containers("")}}}};
  auto fits = place(write("lws-leader.json", doc.dump()));
  ASSERT_EQ(fits.code, 0) << fits.out << fits.err;
  auto ranks = ranks_of(json::parse(fits.out));
  ASSERT_EQ(ranks["serve-0-leader"].size(), 1u) << fits.out;
  ASSERT_EQ(ranks["serve-0-workers"].size(), 4u) << fits.out;
  std::set<std::string> leaves{leaf_of(ranks["serve-0-leader"][0])};
  for (const auto& n : ranks["serve-0-workers"]) leaves.insert(leaf_of(n));
  EXPECT_EQ(leaves.size(), 1u) << fits.out;

  auto too_big = place(write("lws-big.json", lws_object(1, 5, "8", kLeafLabel).dump()));
  EXPECT_EQ(too_big.code, 1) << too_big.out << too_big.err;
  // The level is named as the object wrote it, not as the tier the index resolved it to (1).
  const std::string said = too_big.out + too_big.err;
  EXPECT_NE(said.find("sub-group serve-0: no domain at example.com/leaf holds its 5 pods (no domain has the "
                      "free resources)"),
            std::string::npos)
      << said;
}

// exclusive-topology may name any node label (kubernetes-sigs/lws pkg/webhooks/pod_webhook.go
// SetExclusiveAffinities puts the key as it is in the leader's pod (anti-)affinity topologyKey), and
// kubernetes.io/hostname is one group per node: three groups of two 2-GPU pods take three nodes,
// each group whole on its node, where without the annotation they share one; a thirteenth group
// finds no node of its own among twelve and is refused naming the key.
TEST_F(PlaceJobKinds, ALeaderWorkerSetExclusiveOnTheHostnameTakesOneNodePerGroup) {
  auto fits = place(write("lws-host.json", lws_object(3, 2, "2", "kubernetes.io/hostname").dump()));
  ASSERT_EQ(fits.code, 0) << fits.out << fits.err;
  auto ranks = ranks_of(json::parse(fits.out));
  ASSERT_EQ(ranks.size(), 3u) << fits.out;
  std::set<std::string> nodes;
  for (const auto& [group, group_nodes] : ranks) {
    ASSERT_EQ(group_nodes.size(), 2u) << fits.out;
    EXPECT_EQ(group_nodes[0], group_nodes[1]) << group << " on one node: " << fits.out;
    nodes.insert(group_nodes[0]);
  }
  EXPECT_EQ(nodes.size(), 3u) << "one group per node: " << fits.out;

  auto shared = place(write("lws-host-shared.json", lws_object(3, 2, "2", "").dump()));
  ASSERT_EQ(shared.code, 0) << shared.out << shared.err;
  std::set<std::string> packed;
  for (const auto& [group, group_nodes] : ranks_of(json::parse(shared.out)))
    packed.insert(group_nodes.begin(), group_nodes.end());
  EXPECT_LT(packed.size(), 3u) << "without the annotation the groups pack: " << shared.out;

  auto crowded = place(write("lws-host-13.json", lws_object(13, 2, "2", "kubernetes.io/hostname").dump()));
  EXPECT_EQ(crowded.code, 1) << crowded.out << crowded.err;
  const std::string said = crowded.out + crowded.err;
  EXPECT_NE(
      said.find("sub-group serve-12: no node (level kubernetes.io/hostname) holds its 2 pods apart from "
                "those its exclusive siblings hold (one group per node)"),
      std::string::npos)
      << said;
}

// The templates' topology annotations are read as the extender reads them from the group's pods
// (pod_request.h pod_set_request): Kueue's podset-required-topology on the workerTemplate keeps
// each group in one leaf, so a group of six 6-GPU pods (one a node) that no leaf of four nodes
// holds is refused, naming the label, where without it the group spans two leaves; a preferred
// topology packs a group of four into one leaf.
TEST_F(PlaceJobKinds, ALeaderWorkerSetsTemplateTopologyAnnotationsBindEachGroup) {
  json spread = lws_object(1, 6, "6", "");
  auto wide = place(write("lws-tmpl-none.json", spread.dump()));
  ASSERT_EQ(wide.code, 0) << wide.out << wide.err;
  auto wide_ranks = ranks_of(json::parse(wide.out));
  std::set<std::string> leaves;
  for (const auto& n : wide_ranks["serve-0"]) leaves.insert(leaf_of(n));
  EXPECT_EQ(leaves.size(), 2u) << wide.out;

  json required = spread;
  required["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["annotations"] = {
      {"kueue.x-k8s.io/podset-required-topology", kLeafLabel}};
  auto refused = place(write("lws-tmpl-required.json", required.dump()));
  EXPECT_EQ(refused.code, 1) << refused.out << refused.err;
  EXPECT_NE(
      (refused.out + refused.err).find("sub-group serve-0: no domain at example.com/leaf holds its 6 pods"),
      std::string::npos)
      << refused.out << refused.err;

  json preferred = lws_object(2, 4, "6", "");
  preferred["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["annotations"] = {
      {"kueue.x-k8s.io/podset-preferred-topology", kLeafLabel}};
  auto packed = place(write("lws-tmpl-preferred.json", preferred.dump()));
  ASSERT_EQ(packed.code, 0) << packed.out << packed.err;
  for (const auto& [group, nodes] : ranks_of(json::parse(packed.out))) {
    std::set<std::string> group_leaves;
    for (const auto& n : nodes) group_leaves.insert(leaf_of(n));
    EXPECT_EQ(group_leaves.size(), 1u) << group << ": " << packed.out;
  }

  // A leader asking for another level than its workers is refused: a group has one constraint.
  json split = required;
  split["spec"]["leaderWorkerTemplate"]["leaderTemplate"] = {
      {"metadata", {{"annotations", {{"kueue.x-k8s.io/podset-required-topology", "example.com/spine"}}}}},
      {"spec", {{"containers", job_kinds_containers("6")}}}};
  auto two = place(write("lws-tmpl-split.json", split.dump()));
  EXPECT_EQ(two.code, 2) << two.out << two.err;
  EXPECT_NE(two.err.find("LeaderWorkerSet serve: the leaderTemplate and workerTemplate ask for different "
                         "topology"),
            std::string::npos)
      << two.err;
}

// Both kinds in a file of several documents beside objects place does not read; an unknown kind's
// refusal lists them.
TEST_F(PlaceJobKinds, BothKindsAreReadFromAFileOfSeveralDocuments) {
  const json config_map = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "hosts"}}}};
  for (const json& job : {mpi_job_object(3, true), lws_object(2, 4, "2", kLeafLabel)}) {
    const std::string file = write("multi-" + job["kind"].get<std::string>() + ".yaml",
                                   "# the job and what the controller needs beside it\n" + config_map.dump() +
                                       "\n---\n" + job.dump() + "\n");
    auto run = place(file);
    ASSERT_EQ(run.code, 0) << job["kind"] << run.out << run.err;
    int pods = 0;
    const json answer = json::parse(run.out);
    for (const auto& ps : answer["podSets"])
      for (const auto& a : ps["assignment"]) pods += a["count"].get<int>();
    EXPECT_EQ(pods, job["kind"] == "MPIJob" ? 4 : 8) << run.out;
    EXPECT_NE(run.err.find("1 object of kind ConfigMap ignored"), std::string::npos) << run.err;
  }
  auto unknown =
      place(write("unknown.json", json{{"apiVersion", "example.com/v1"}, {"kind", "Thing"}}.dump()));
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("MPIJob, LeaderWorkerSet"), std::string::npos) << unknown.err;
}

// An MPIJob's runPolicy.schedulingPolicy.priorityClass is its pods' class where their templates name
// none (mpi-operator pkg/controller/podgroup.go, calculatePriorityClassName), as a PyTorchJob's is:
// a launcher-only MPIJob of that class on a full cluster evicts a pod of priority 0, and a class no
// PriorityClass defines is an error naming the field. (The queue is Volcano's or Kueue's quota,
// which neither door plans.)
TEST_F(PlaceJobKinds, AnMPIJobsRunPolicyPriorityClassIsItsPodsClass) {
  json pods = json::array();
  for (const auto& node : nodes_) {
    const std::string name = node["metadata"]["name"];
    pods.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", "low-" + name}, {"namespace", "batch"}, {"uid", "u-" + name}}},
         {"spec", {{"nodeName", name}, {"priority", 0}, {"containers", job_kinds_containers("8")}}},
         {"status", {{"phase", "Running"}}}});
  }
  pods.push_back({{"apiVersion", "scheduling.k8s.io/v1"},
                  {"kind", "PriorityClass"},
                  {"metadata", {{"name", "train-high"}}},
                  {"value", 100000}});
  const std::string pods_file = write("full.json", cluster_list(pods).dump());
  json job = mpi_job_object(1, false);
  job["spec"]["mpiReplicaSpecs"].erase("Worker");
  job["spec"]["runPolicy"]["schedulingPolicy"]["priorityClass"] = "train-high";
  auto run =
      testing::run_captured(run_cli, {"place", "--nodes", nodes_file_, "--topology", topology_file_, "--pods",
                                      pods_file, "--job", write("mpi-class.json", job.dump()), "-o", "json"});
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const json answer = json::parse(run.out);
  EXPECT_EQ(answer["preemption"]["priority"], 100000) << run.out;
  ASSERT_EQ(answer["preemption"]["victims"].size(), 1u) << run.out;
  EXPECT_EQ(answer["preemption"]["victims"][0]["priority"], 0) << run.out;

  job["spec"]["runPolicy"]["schedulingPolicy"]["priorityClass"] = "no-such-class";
  auto unknown = testing::run_captured(
      run_cli, {"place", "--nodes", nodes_file_, "--topology", topology_file_, "--pods", pods_file, "--job",
                write("mpi-no-class.json", job.dump()), "-o", "json"});
  EXPECT_EQ(unknown.code, 2) << unknown.out << unknown.err;
  EXPECT_NE(
      unknown.err.find("MPIJob allreduce spec.runPolicy.schedulingPolicy: priorityClassName 'no-such-class' "
                       "matches no PriorityClass"),
      std::string::npos)
      << unknown.err;
}

// The older Workload (scheduling.k8s.io/v1alpha1, KEP-4671) names its gangs in spec.podGroups with
// no pods of their own: --job refuses it, naming the kind and the PodGroup (v1alpha2, KEP-5832) to
// give instead, which it reads.
TEST_F(PlaceJobKinds, AWorkloadIsRefusedNamingThePodGroupToGiveInstead) {
  const json workload = {
      {"apiVersion", "scheduling.k8s.io/v1alpha1"},
      {"kind", "Workload"},
      {"metadata", {{"name", "train"}, {"namespace", "default"}}},
      {"spec",
       {{"podGroups", json::array({{{"name", "workers"}, {"policy", {{"gang", {{"minCount", 4}}}}}}})}}}};
  auto refused = place(write("workload.json", workload.dump()));
  EXPECT_EQ(refused.code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("a Workload (scheduling.k8s.io/v1alpha1) is not a job --job places: its "
                             "spec.podGroups hold no pods; give a scheduling.k8s.io/v1alpha2 PodGroup"),
            std::string::npos)
      << refused.err;

  const json pod_group = {
      {"apiVersion", "scheduling.k8s.io/v1alpha2"},
      {"kind", "PodGroup"},
      {"metadata", {{"name", "train"}, {"namespace", "default"}}},
      {"spec",
       {{"schedulingPolicy", {{"gang", {{"minCount", 4}}}}},
        {"schedulingConstraints", {{"topology", json::array({{{"key", kLeafLabel}}})}}}}}};
  auto placed = place(write("pod-group.json", pod_group.dump()));
  ASSERT_EQ(placed.code, 0) << placed.out << placed.err;
  std::set<std::string> leaves;
  for (const auto& [set, nodes] : ranks_of(json::parse(placed.out)))
    for (const auto& n : nodes) leaves.insert(leaf_of(n));
  EXPECT_EQ(leaves.size(), 1u) << placed.out;
}

// The pods mpi-operator makes of an MPIJob (pkg/controller/mpi_job_controller.go newWorker and
// newLauncherPodTemplate: training.kubeflow.org/job-role, replica-index; the scheduler-plugins
// PodGroup label scheduling.x-k8s.io/pod-group and its PodGroup of minMember workers + 1,
// podgroup.go), asked of the extender one at a time as kube-scheduler asks, get the nodes `place`
// gives their ranks: the launcher its slot after the workers, or rank 0 with runLauncherAsWorker.
TEST_F(PlaceJobKinds, TheExtenderGivesAnMPIJobsPodsTheNodesPlaceGivesTheirRanks) {
  for (bool launcher_is_worker : {false, true}) {
    SCOPED_TRACE(launcher_is_worker ? "runLauncherAsWorker" : "launcher apart");
    const json job = mpi_job_object(3, launcher_is_worker);
    auto placed = place(write("agree.json", job.dump()));
    ASSERT_EQ(placed.code, 0) << placed.out << placed.err;
    auto ranks = ranks_of(json::parse(placed.out));

    auto pod = [&](const std::string& type, int index) {
      const json& rs = job["spec"]["mpiReplicaSpecs"][type];
      const bool launcher = type == "Launcher";
      json labels = {{"training.kubeflow.org/operator-name", "mpi-operator"},
                     {"training.kubeflow.org/job-name", "allreduce"},
                     {"training.kubeflow.org/job-role", launcher ? "launcher" : "worker"},
                     {"scheduling.x-k8s.io/pod-group", "allreduce"}};
      if (!launcher)
        labels["training.kubeflow.org/replica-index"] = std::to_string(index + (launcher_is_worker ? 1 : 0));
      if (launcher && launcher_is_worker) labels["training.kubeflow.org/replica-index"] = "0";
      json spec = rs["template"]["spec"];
      spec["schedulerName"] = "hypertopo";
      return json{
          {"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", launcher ? "allreduce-launcher-x7k2p" : "allreduce-worker-" + std::to_string(index)},
            {"namespace", "default"},
            {"uid", launcher ? "uid-launcher" : "uid-worker-" + std::to_string(index)},
            {"labels", labels},
            {"annotations", rs["template"]["metadata"]["annotations"]}}},
          {"spec", spec},
          {"status", {{"phase", "Pending"}}}};
    };
    // kube-scheduler's order: the launcher first when it is rank 0, else after the workers (its
    // pod, made by a Job, comes last in the queue here, the case where it takes the slot left).
    std::vector<std::pair<json, std::string>> asks;  // pod, the node place gave it
    if (launcher_is_worker) asks.emplace_back(pod("Launcher", 0), ranks["Launcher"].at(0));
    for (int i = 0; i < 3; ++i)
      asks.emplace_back(pod("Worker", i), ranks["Worker"].at(static_cast<std::size_t>(i)));
    if (!launcher_is_worker) asks.emplace_back(pod("Launcher", 0), ranks["Launcher"].at(0));

    scheduler::ExtenderService svc(
        scheduler::ExtenderOptions{.clock = std::make_shared<timing::ManualClock>()});
    ASSERT_TRUE(svc.set_hypernodes(hypernodes_));
    ASSERT_TRUE(svc.set_nodes(nodes_));
    std::vector<json> pods_now;
    for (const auto& [p, unused] : asks) pods_now.push_back(p);
    ASSERT_TRUE(svc.set_pods(pods_now));
    svc.set_pod_groups({json{{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                             {"kind", "PodGroup"},
                             {"metadata", {{"name", "allreduce"}, {"namespace", "default"}}},
                             {"spec", {{"minMember", 4}}}}});
    for (std::size_t i = 0; i < asks.size(); ++i) {
      json& p = pods_now[i];
      json names = json::array();
      for (const auto& node : nodes_)
        if (testing::KubeSchedulerStandIn::framework_filter(p, node, pods_now).empty())
          names.push_back(node["metadata"]["name"]);
      const testing::ExtenderPick pick = testing::ask_extender(svc, p, names);
      ASSERT_TRUE(pick.error.empty()) << pick.error;
      EXPECT_EQ(pick.node, asks[i].second)
          << p["metadata"]["name"] << ": " << pick.refusal << "\nplace: " << placed.out;
      if (pick.node.empty()) continue;
      p["spec"]["nodeName"] = pick.node;
      p["status"]["phase"] = "Running";
      ASSERT_TRUE(svc.upsert_pod(p));
    }
  }
}

// The pods LWS makes of one group (leader <name>-0, workers <name>-0-<w>: worker-index labels,
// leaderworkerset.sigs.k8s.io/size and exclusive-topology annotations, pod_webhook.go and
// pod_controller.go; the group a gang through scheduler-plugins' PodGroup label) asked of the
// extender one at a time get the nodes `place` gives their ranks: a group of four inside a leaf, a
// group of five that no leaf holds refused by both doors (the extender once spread it over two
// leaves, where kube-scheduler could not bind the workers the leader's leaf holds them to), and the
// same five placed by both inside the spine when the exclusive topology is the spine's label.
//
// exclusive-topology kubernetes.io/hostname holds a group on one node at both doors (two 4-GPU pods
// on one node, three refused), and a workerTemplate's Kueue podset-required-topology, which the
// pods carry, binds the group as exclusive-topology does.
TEST_F(PlaceJobKinds, TheExtenderKeepsALeaderWorkerSetGroupInOneDomainAsPlaceDoes) {
  struct Case {
    int size;
    std::string key;          // exclusive-topology
    std::string gpus;         // per pod
    std::string kueue_level;  // the workerTemplate's podset-required-topology
    bool fits;
  };
  for (const auto& [size, key, gpus, kueue_level, fits] : std::vector<Case>{
           {4, kLeafLabel, "8", "", true},
           {5, kLeafLabel, "8", "", false},
           {5, "example.com/spine", "8", "", true},
           {2, "kubernetes.io/hostname", "4", "", true},
           {3, "kubernetes.io/hostname", "4", "", false},
           {4, "", "8", kLeafLabel, true},
           {5, "", "8", kLeafLabel, false},
       }) {
    SCOPED_TRACE("size " + std::to_string(size) + " in one domain of " + key + kueue_level);
    json doc = lws_object(1, size, gpus, key);
    if (!kueue_level.empty()) {
      doc["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["annotations"] = {
          {"kueue.x-k8s.io/podset-required-topology", kueue_level}};
    }
    auto placed = place(write("lws-agree.json", doc.dump()));
    ASSERT_EQ(placed.code, fits ? 0 : 1) << placed.out << placed.err;
    auto ranks = fits ? ranks_of(json::parse(placed.out)) : std::map<std::string, std::vector<std::string>>{};

    std::vector<json> pods;
    for (int w = 0; w < size; ++w) {
      json spec = doc["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"];
      spec["schedulerName"] = "hypertopo";
      const std::string name = w == 0 ? "serve-0" : "serve-0-" + std::to_string(w);
      json annotations = {{"leaderworkerset.sigs.k8s.io/size", std::to_string(size)}};
      if (!key.empty()) annotations["leaderworkerset.sigs.k8s.io/exclusive-topology"] = key;
      if (!kueue_level.empty()) annotations["kueue.x-k8s.io/podset-required-topology"] = kueue_level;
      pods.push_back({{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata",
                       {{"name", name},
                        {"namespace", "default"},
                        {"uid", "uid-" + name},
                        {"labels",
                         {{"leaderworkerset.sigs.k8s.io/name", "serve"},
                          {"leaderworkerset.sigs.k8s.io/group-index", "0"},
                          {"leaderworkerset.sigs.k8s.io/worker-index", std::to_string(w)},
                          {"leaderworkerset.sigs.k8s.io/group-key", "3f2a"},
                          {"scheduling.x-k8s.io/pod-group", "serve-0"}}},
                        {"annotations", annotations}}},
                      {"spec", spec},
                      {"status", {{"phase", "Pending"}}}});
    }
    scheduler::ExtenderService svc(
        scheduler::ExtenderOptions{.clock = std::make_shared<timing::ManualClock>()});
    ASSERT_TRUE(svc.set_hypernodes(hypernodes_));
    ASSERT_TRUE(svc.set_nodes(nodes_));
    ASSERT_TRUE(svc.set_pods(pods));
    svc.set_pod_groups({json{{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                             {"kind", "PodGroup"},
                             {"metadata", {{"name", "serve-0"}, {"namespace", "default"}}},
                             {"spec", {{"minMember", size}}}}});
    int bound = 0;
    for (std::size_t w = 0; w < pods.size(); ++w) {
      json& p = pods[w];
      json names = json::array();
      for (const auto& node : nodes_)
        if (testing::KubeSchedulerStandIn::framework_filter(p, node, pods).empty())
          names.push_back(node["metadata"]["name"]);
      const testing::ExtenderPick pick = testing::ask_extender(svc, p, names);
      ASSERT_TRUE(pick.error.empty()) << pick.error;
      if (fits) {
        EXPECT_EQ(pick.node, ranks["serve-0"].at(w))
            << p["metadata"]["name"] << ": " << pick.refusal << "\nplace: " << placed.out;
      }
      if (pick.node.empty()) continue;
      ++bound;
      p["spec"]["nodeName"] = pick.node;
      p["status"]["phase"] = "Running";
      ASSERT_TRUE(svc.upsert_pod(p));
    }
    EXPECT_EQ(bound, fits ? size : 0);
  }
}

}  // namespace
}  // namespace hypertopo::cli
