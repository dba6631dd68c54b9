// Loaders (HyperNodes, Kueue Topology, pods, every job format), the scheduler config with Volcano's
// defaults and clamping, and the `place` session end to end on small files.
#include <gtest/gtest.h>

#include "scheduler/config/volcano_config.h"
#include "scheduler/index/quantity.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/job_loader.h"
#include "scheduler/input/placement_session.h"
#include "tests/support/fixtures.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

TEST(SchedulerConfig, DefaultsAndClamping) {
  const std::string conf = R"(
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: gang
- plugins:
  - name: network-topology-aware
    arguments:
      weight: -3
      hypernode.binpack.cpu: 4
      hypernode.binpack.memory: -1
      hypernode.binpack.resources: "nvidia.com/gpu, rdma/hca"
      hypernode.binpack.resources.nvidia.com/gpu: 10
      hypernode.binpack.normal-pod.fading: -0.5
)";
  auto cfg = parse_scheduler_config(conf, "volcano-scheduler.conf");
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message();
  EXPECT_TRUE(cfg->plugin_enabled);
  EXPECT_EQ(cfg->binpack.weight, 1);  // negative -> 1
  EXPECT_EQ(cfg->binpack.resources["cpu"], 4);
  EXPECT_EQ(cfg->binpack.resources["memory"], 1);  // negative -> 1
  EXPECT_EQ(cfg->binpack.resources["nvidia.com/gpu"], 10);
  EXPECT_EQ(cfg->binpack.resources["rdma/hca"], 1);  // listed without a weight -> 1
  EXPECT_DOUBLE_EQ(cfg->binpack.fading, 0.8);        // negative -> 0.8
  EXPECT_TRUE(cfg->binpack.normal_pod_enable);

  auto plain = parse_scheduler_config("actions: allocate\ntiers: []\n", "x");
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->plugin_enabled);
  EXPECT_EQ(plain->binpack.resources, (std::map<std::string, std::int64_t>{{"cpu", 1}, {"memory", 1}}));
  EXPECT_DOUBLE_EQ(plain->binpack.fading, 0.8);

  auto configmap = parse_scheduler_config(
      "apiVersion: v1\nkind: ConfigMap\ndata:\n  volcano-scheduler.conf: |\n    tiers:\n    - plugins:\n"
      "      - name: network-topology-aware\n        arguments:\n          weight: 5\n",
      "cm.yaml");
  ASSERT_TRUE(configmap.has_value()) << configmap.error().message();
  EXPECT_EQ(configmap->binpack.weight, 5);

  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"hypertopo: 3\n", "x: hypertopo: must be a mapping"},
           {"hypertopo: {maxPodsPerJob: 0}\n",
            "x: hypertopo.maxPodsPerJob: must be an integer in [1, 1000000]"},
           {"hypertopo: {profile: slurm}\n",
            "x: hypertopo.profile: must be volcano or kueue, got 'slurm'"}}) {
    auto wrong = parse_scheduler_config(text, "x");
    ASSERT_FALSE(wrong.has_value()) << text;
    EXPECT_EQ(wrong.error().message(), message) << text;
  }
  // Volcano loads a file with a key it does not know, and keeps a weight's default when the value
  // is no integer: so do we, with a warning naming the key.
  auto bad = parse_scheduler_config(
      "tierz: []\ntiers:\n- plugins:\n  - name: network-topology-aware\n    arguments:\n      weight: "
      "heavy\n",
      "bad.conf");
  ASSERT_TRUE(bad.has_value()) << bad.error().message();
  EXPECT_EQ(bad->binpack.weight, 1);
  ASSERT_EQ(bad->warnings.size(), 2u);
  EXPECT_EQ(bad->warnings[0].rfind("bad.conf: tierz: ignored", 0), 0u) << bad->warnings[0];
  EXPECT_EQ(
      bad->warnings[1].rfind("bad.conf: tiers[0].plugins[0].arguments.weight: Volcano takes integers only, "
                             "got a string 'heavy'; keeping 1",
                             0),
      0u)
      << bad->warnings[1];
}

TEST(ClusterLoader, HyperNodeListWithEverySelector) {
  json doc = json::parse(R"({"kind": "List", "items": [
    {"kind": "HyperNode", "metadata": {"name": "leaf-a"}, "spec": {"tier": 1, "tierName": "leaf",
      "members": [{"type": "Node", "selector": {"regexMatch": {"pattern": "^a-"}}}]}},
    {"kind": "HyperNode", "metadata": {"name": "leaf-b"}, "spec": {"tier": "1",
      "members": [{"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "b"},
        "matchExpressions": [{"key": "gpu", "operator": "Exists"}]}}}]}},
    {"kind": "HyperNode", "metadata": {"name": "spine"}, "spec": {"tier": 2, "tierName": "spine",
      "members": [{"type": "HyperNode", "selector": {"exactMatch": {"name": "leaf-a"}}},
                  {"type": "HyperNode", "selector": {"exactMatch": {"name": "leaf-b"}}}]}}]})");
  auto topology = parse_topology(doc);
  ASSERT_TRUE(topology.has_value()) << topology.error().message();
  ASSERT_EQ(topology->hypernodes.size(), 3u);
  EXPECT_EQ(topology->hypernodes[1].tier, 1);
  EXPECT_EQ(topology->hypernodes[1].members[0].selector.match_expressions[0].op, "Exists");

  json bad = json::parse(R"({"kind": "HyperNode", "metadata": {"name": "x"}, "spec": {"tier": 1,
    "members": [{"type": "Node", "selector": {"exactMatch": {"name": "a"}, "regexMatch": {"pattern": "b"}}}]}})");
  auto err = parse_topology(bad);
  ASSERT_FALSE(err.has_value());
  EXPECT_NE(err.error().message().find("HyperNode x spec.members[0]: selector needs exactly one"),
            std::string::npos);
}

TEST(ClusterLoader, KueueTopologyNodesAndPods) {
  auto topology = parse_topology(json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Topology",
    "metadata": {"name": "default"}, "spec": {"levels": [{"nodeLabel": "block"}, {"nodeLabel": "kubernetes.io/hostname"}]}})"));
  ASSERT_TRUE(topology.has_value());
  EXPECT_EQ(topology->kind, TopologySource::Kind::kLevels);
  EXPECT_EQ(topology->levels.levels, (std::vector<std::string>{"block", "kubernetes.io/hostname"}));

  auto nodes = parse_nodes(json::parse(R"({"kind": "NodeList", "items": [{"metadata": {"name": "n1",
    "labels": {"block": "b1", "kubernetes.io/hostname": "n1"}}, "status": {"allocatable": {"cpu": "7500m",
    "memory": "30Gi", "pods": "110", "nvidia.com/gpu": "8"}, "conditions": [{"type": "Ready", "status": "True"}]}}]})"));
  ASSERT_TRUE(nodes.has_value()) << nodes.error().message();
  EXPECT_EQ(nodes->at(0).allocatable.at("cpu"), 7500);
  EXPECT_EQ(nodes->at(0).allocatable.at("memory"), 30LL << 30);

  auto bad_nodes = parse_nodes(json::parse(
      R"({"kind": "NodeList", "items": [{"metadata": {"name": "n1"}, "status": {"allocatable": {"memory": "30GB"}}}]})"));
  ASSERT_FALSE(bad_nodes.has_value());
  EXPECT_NE(bad_nodes.error().message().find("node n1 status.allocatable: memory: malformed quantity '30GB'"),
            std::string::npos)
      << bad_nodes.error().message();

  auto pods = parse_pods(json::parse(R"({"kind": "PodList", "items": [
    {"metadata": {"name": "a", "namespace": "ml"}, "spec": {"nodeName": "n1",
      "containers": [{"name": "c1", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "2"}}},
                     {"name": "c2", "resources": {"requests": {"cpu": "500m"}}}],
      "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "4"}}}]}, "status": {"phase": "Running"}},
    {"metadata": {"name": "done"}, "spec": {"nodeName": "n1", "containers": []}, "status": {"phase": "Succeeded"}},
    {"metadata": {"name": "pending"}, "spec": {"containers": []}, "status": {"phase": "Pending"}}]})"));
  ASSERT_TRUE(pods.has_value()) << pods.error().message();
  ASSERT_EQ(pods->size(), 1u);
  EXPECT_EQ(pods->at(0).requests.at("cpu"), 4000);  // max(1.5 cores of containers, 4 of the init container)
  EXPECT_EQ(pods->at(0).requests.at("nvidia.com/gpu"), 2);
}

// The capacity picture reads a Node's allocatable GPUs with placement's quantity rule: whole
// counts in any spelling the API server may write (one rule with placement); a word is an error
// naming the node.
TEST(ClusterLoader, GpuUsagePerNodeReadsAllocatableAsPlacementDoes) {
  k8s::NodeList nodes;
  nodes.items.push_back({.name = "n1", .allocatable = {{"nvidia.com/gpu", "8"}}});
  nodes.items.push_back({.name = "n2", .allocatable = {{"nvidia.com/gpu", "4000m"}}});
  nodes.items.push_back({.name = "cpu-only"});
  auto usage = gpu_usage_per_node(nodes, {{"n1", 6}, {"gone", 8}}, "nvidia.com/gpu");
  ASSERT_TRUE(usage.has_value()) << usage.error().message();
  EXPECT_EQ(usage->at("n1").allocatable, 8);
  EXPECT_EQ(usage->at("n1").used, 6);
  EXPECT_EQ(usage->at("n2").allocatable, 4);
  EXPECT_EQ(usage->at("cpu-only").allocatable, 0);
  EXPECT_FALSE(usage->contains("gone"));

  nodes.items[1].allocatable["nvidia.com/gpu"] = "eight";
  auto refused = gpu_usage_per_node(nodes, {}, "nvidia.com/gpu");
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message().find("node n2 status.allocatable"), std::string::npos)
      << refused.error().message();
  // The picture counts what placement counts: the same text gives the same number in both.
  nodes.items[1].allocatable["nvidia.com/gpu"] = "1500m";
  auto index_view = parse_quantity("nvidia.com/gpu", "1500m");
  ASSERT_TRUE(index_view.has_value());
  auto same = gpu_usage_per_node(nodes, {}, "nvidia.com/gpu");
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->at("n2").allocatable, *index_view);
}

TEST(JobLoader, VolcanoJobWithPartitions) {
  auto job = parse_job(json::parse(R"({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
    "metadata": {"name": "llm"}, "spec": {"networkTopology": {"mode": "hard", "highestTierAllowed": 3},
    "tasks": [{"name": "worker", "replicas": 8, "partitionPolicy": {"totalPartitions": 2, "partitionSize": 4,
      "minPartitions": 1, "networkTopology": {"mode": "hard", "highestTierName": "leaf"}},
      "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "8"}}}]}}}]}})"),
                       {});
  ASSERT_TRUE(job.has_value()) << job.error().message();
  const auto& ps = job->request.pod_sets.at(0);
  EXPECT_EQ(job->format, "volcano");
  EXPECT_EQ(ps.count, 8);
  EXPECT_EQ(ps.mode, TopologyMode::kRequired);
  EXPECT_EQ(ps.level, "3");
  // The job-level networkTopology also binds the tasks together.
  EXPECT_EQ(job->request.mode, TopologyMode::kRequired);
  EXPECT_EQ(job->request.level, "3");
  ASSERT_TRUE(ps.partitions.has_value());
  EXPECT_EQ(ps.partitions->level, "leaf");
  EXPECT_EQ(ps.partitions->min, 1);
  EXPECT_EQ(ps.per_pod.at("nvidia.com/gpu"), 8);

  auto mismatch = parse_job(json::parse(R"({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
    "metadata": {"name": "llm"}, "spec": {"tasks": [{"name": "w", "replicas": 9,
    "partitionPolicy": {"totalPartitions": 2, "partitionSize": 4}}]}})"),
                            {});
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_NE(mismatch.error().message().find("replicas 9 != totalPartitions 2 x partitionSize 4"),
            std::string::npos);

  auto both = parse_job(json::parse(R"({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
    "metadata": {"name": "x"}, "spec": {"networkTopology": {"mode": "hard", "highestTierAllowed": 2,
    "highestTierName": "spine"}, "tasks": [{"name": "w", "replicas": 1}]}})"),
                        {});
  ASSERT_FALSE(both.has_value());
  EXPECT_NE(both.error().message().find("mutually exclusive"), std::string::npos);
}

TEST(JobLoader, BatchJobWithKueueAnnotationsAndKaiwo) {
  auto job = parse_job(json::parse(R"({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "seed"},
    "spec": {"parallelism": 64, "template": {"metadata": {"annotations": {
      "kueue.x-k8s.io/podset-required-topology": "block",
      "kueue.x-k8s.io/podset-slice-required-topology-constraints":
        "[{\"topology\": \"rack\", \"size\": 16}, {\"topology\": \"nvswitch\", \"size\": 4}, {\"topology\": \"kubernetes.io/hostname\", \"size\": 2}]"}},
      "spec": {"nodeSelector": {"pool": "h100"}, "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "4", "cpu": "16"}}}]}}}})"),
                       {});
  ASSERT_TRUE(job.has_value()) << job.error().message();
  const auto& ps = job->request.pod_sets.at(0);
  EXPECT_EQ(job->format, "kueue");
  EXPECT_EQ(ps.count, 64);
  EXPECT_EQ(ps.level, "block");
  ASSERT_EQ(ps.slices.size(), 3u);
  EXPECT_EQ(ps.slices[2].size, 2);
  EXPECT_EQ(ps.node_selector.at("pool"), "h100");
  EXPECT_EQ(ps.per_pod.at("cpu"), 16000);

  NodeSpec amd;
  amd.name = "a";
  amd.allocatable = {{"amd.com/gpu", 8}};
  NodeSpec small = amd;
  small.name = "b";
  small.allocatable = {{"amd.com/gpu", 4}};
  auto kaiwo = parse_job(json::parse(R"({"apiVersion": "kaiwo.silogen.ai/v1alpha1", "kind": "KaiwoJob",
    "metadata": {"name": "ray"}, "spec": {"gpus": 10, "ray": true, "preferredTopologyLabel": "rack"}})"),
                         {amd, small});
  ASSERT_TRUE(kaiwo.has_value()) << kaiwo.error().message();
  // ceil(10 / 4 GPUs on the smallest AMD node) = 3 replicas of 10 / 3 = 3 GPUs.
  EXPECT_EQ(kaiwo->request.pod_sets[0].count, 3);
  EXPECT_EQ(kaiwo->request.pod_sets[0].per_pod.at("amd.com/gpu"), 3);
  EXPECT_EQ(kaiwo->request.pod_sets[0].mode, TopologyMode::kPreferred);
  // User replicas x gpusPerReplica win when they fit the cluster's 12 GPUs.
  EXPECT_EQ(kaiwo_replicas(10, 2, 6, 12, 4).value().replicas, 2);
  EXPECT_EQ(kaiwo_replicas(10, 4, 6, 12, 4).value().replicas, 3);  // 24 > 12: the rule applies
}

TEST(PlacementSession, PlacesANeutralRequestFromFiles) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "nodes.json", R"({"kind": "NodeList", "items": [
    {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "8", "pods": "110", "nvidia.com/gpu": "8"}}},
    {"metadata": {"name": "n2"}, "status": {"allocatable": {"cpu": "8", "pods": "110", "nvidia.com/gpu": "8"}}},
    {"metadata": {"name": "n3"}, "status": {"allocatable": {"cpu": "8", "pods": "110", "nvidia.com/gpu": "8"}}}]})");
  testing::write_text(dir.path() / "hn.yaml", R"(kind: List
items:
- kind: HyperNode
  metadata: {name: leaf-1}
  spec: {tier: 1, tierName: leaf, members: [{type: Node, selector: {regexMatch: {pattern: "^n[12]$"}}}]}
- kind: HyperNode
  metadata: {name: leaf-2}
  spec: {tier: 1, tierName: leaf, members: [{type: Node, selector: {exactMatch: {name: n3}}}]}
)");
  testing::write_text(dir.path() / "job.json",
                      R"({"apiVersion": "hypertopo.io/v1alpha1", "kind": "PlacementRequest",
    "name": "demo", "podSets": [{"name": "w", "count": 12, "requests": {"nvidia.com/gpu": "1"},
    "topology": {"mode": "required", "level": "leaf"}}]})");
  PlaceInputs in;
  in.nodes = dir.path() / "nodes.json";
  in.topology = dir.path() / "hn.yaml";
  in.job = dir.path() / "job.json";
  auto report = run_placement(in);
  ASSERT_TRUE(report.has_value()) << report.error().message();
  const json& r = report->result;
  EXPECT_TRUE(r["fit"].get<bool>());
  EXPECT_EQ(r["podSets"][0]["domains"], json::array({"leaf-1"}));
  EXPECT_EQ(r["podSets"][0]["tier"], 1);
  EXPECT_EQ(r["podSets"][0]["assignment"][0]["node"], "n1");
  EXPECT_EQ(r["podSets"][0]["assignment"][0]["count"], 8);
  EXPECT_EQ(r["podSets"][0]["assignment"][1]["count"], 4);
  EXPECT_NE(render_report(*report, "text").find("leaf-1"), std::string::npos);
  EXPECT_NE(render_report(*report, "yaml").find("fit: true"), std::string::npos);

  testing::write_text(dir.path() / "bad.json",
                      R"({"kind": "PlacementRequest", "podSets": [{"name": "w", "count": 2,
    "requests": {"nvidia.com/gpu": "1"}, "topology": {"mode": "required", "level": "rack"}}]})");
  in.job = dir.path() / "bad.json";
  auto bad = run_placement(in);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("unknown tier or level 'rack'"), std::string::npos)
      << bad.error().message();
}

}  // namespace
}  // namespace hypertopo::scheduler
