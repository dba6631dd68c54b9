// KAI nested PodGroups (scheduling.run.ai/v2alpha2 spec.subGroups) through `hypertopo place`, as a
// user hands them over: a List with the PodGroup and its Pods, each Pod naming its sub-group in the
// kai.scheduler/subgroup-name label.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.h"
#include "tests/support/fixtures.h"

namespace hypertopo::testing {
namespace {

using nlohmann::json;

// Two zones of two racks of two 4-GPU nodes; zone-a's rack a1 has one node busy.
class KaiWorld {
 public:
  KaiWorld() {
    for (const char* zone : {"a", "b"}) {
      for (int r = 1; r <= 2; ++r) {
        for (int n = 1; n <= 2; ++n) {
          const std::string rack = std::string(zone) + std::to_string(r);
          node("n-" + rack + "-" + std::to_string(n), std::string("zone-") + zone, "rack-" + rack);
        }
      }
    }
    busy("n-a1-1", 4);
  }
  void node(const std::string& name, const std::string& zone, const std::string& rack) {
    nodes_.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Node"},
         {"metadata",
          {{"name", name},
           {"labels", {{"kubernetes.io/hostname", name}, {"topo/zone", zone}, {"topo/rack", rack}}}}},
         {"spec", json::object()},
         {"status",
          {{"allocatable", {{"nvidia.com/gpu", "4"}, {"pods", "110"}}},
           {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
  }
  void busy(const std::string& node, int gpus) {
    json pod = pod_json("hog-" + node, "", gpus);
    pod["metadata"].erase("annotations");
    pod["spec"]["nodeName"] = node;
    pod["status"]["phase"] = "Running";
    bound_.push_back(pod);
  }
  static json pod_json(const std::string& name, const std::string& sub_group, int gpus) {
    json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}, {"namespace", "serve"}, {"annotations", {{"pod-group-name", "llm"}}}}},
        {"spec",
         {{"containers",
           json::array({{{"name", "main"},
                         {"resources", {{"requests", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}},
        {"status", {{"phase", "Pending"}}}};
    if (!sub_group.empty()) pod["metadata"]["labels"] = {{"kai.scheduler/subgroup-name", sub_group}};
    return pod;
  }
  static json group_list(const json& spec, const std::vector<json>& pods, const std::string& name = "llm") {
    json items = json::array();
    items.push_back({{"apiVersion", "scheduling.run.ai/v2alpha2"},
                     {"kind", "PodGroup"},
                     {"metadata", {{"name", name}, {"namespace", "serve"}}},
                     {"spec", spec}});
    for (auto p : pods) {
      p["metadata"]["annotations"]["pod-group-name"] = name;
      items.push_back(p);
    }
    return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
  }
  // `hypertopo simulate` over these nodes with a trace of (time, job, duration, the job's List).
  CapturedRun simulate(const std::vector<std::tuple<int, std::string, int, json>>& events) {
    std::string trace;
    for (const auto& [time, id, duration, job] : events)
      trace += json{{"time", time}, {"job", id}, {"duration", duration}, {"arrive", job}}.dump() + "\n";
    write_text(dir_.path() / "trace.jsonl", trace);
    write_text(dir_.path() / "sim-nodes.json", json{{"kind", "NodeList"}, {"items", nodes_}}.dump());
    write_text(dir_.path() / "sim-topology.json", topology().dump());
    return run_captured(cli::run_cli, {"simulate", "--nodes", (dir_.path() / "sim-nodes.json").string(),
                                       "--topology", (dir_.path() / "sim-topology.json").string(), "--trace",
                                       (dir_.path() / "trace.jsonl").string(), "-o", "json"});
  }
  static json topology() {
    return {{"apiVersion", "kai.scheduler/v1alpha1"},
            {"kind", "Topology"},
            {"metadata", {{"name", "dc"}}},
            {"spec", {{"levels", {{{"nodeLabel", "topo/zone"}}, {{"nodeLabel", "topo/rack"}}}}}}};
  }
  CapturedRun place(const json& spec, const std::vector<json>& pods) {
    json items = json::array();
    items.push_back({{"apiVersion", "scheduling.run.ai/v2alpha2"},
                     {"kind", "PodGroup"},
                     {"metadata", {{"name", "llm"}, {"namespace", "serve"}}},
                     {"spec", spec}});
    for (const auto& p : pods) items.push_back(p);
    const json topology = {
        {"apiVersion", "kai.scheduler/v1alpha1"},
        {"kind", "Topology"},
        {"metadata", {{"name", "dc"}}},
        {"spec", {{"levels", {{{"nodeLabel", "topo/zone"}}, {{"nodeLabel", "topo/rack"}}}}}}};
    const auto write = [&](const std::string& file, const json& doc) {
      write_text(dir_.path() / file, doc.dump());
      return (dir_.path() / file).string();
    };
    return run_captured(cli::run_cli,
                        {"place", "--nodes", write("nodes.json", {{"kind", "NodeList"}, {"items", nodes_}}),
                         "--topology", write("topology.json", topology), "--pods",
                         write("pods.json", {{"kind", "PodList"}, {"items", bound_}}), "--job",
                         write("job.json", {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}})});
  }

 private:
  TempDir dir_;
  std::vector<json> nodes_;
  std::vector<json> bound_;
};

// Pod set name -> node -> pods.
std::map<std::string, std::map<std::string, int>> where(const CapturedRun& run) {
  std::map<std::string, std::map<std::string, int>> out;
  const json result = json::parse(run.out);
  for (const auto& ps : result["podSets"])
    for (const auto& a : ps["assignment"]) out[ps["name"]][a["node"]] += a["count"].get<int>();
  return out;
}

// A serving job: two replicas, each a prefill and a decode sub-group that must share a rack, the
// replica inside one zone. Zone a cannot hold both replicas (rack a1 lost a node), so both go to
// zone b, one replica per rack, each sub-group packed on one node.
TEST(KaiSubGroups, NestedPodGroupPlacesEachReplicaInOneRackOfOneZone) {
  KaiWorld w;
  const json spec = {{"minMember", 8},
                     {"topologyConstraint", {{"topology", "dc"}, {"requiredTopologyLevel", "topo/zone"}}},
                     {"subGroups",
                      {{{"name", "replica-1"},
                        {"topologyConstraint", {{"topology", "dc"}, {"requiredTopologyLevel", "topo/rack"}}}},
                       {{"name", "replica-2"},
                        {"topologyConstraint", {{"topology", "dc"}, {"requiredTopologyLevel", "topo/rack"}}}},
                       {{"name", "prefill-1"}, {"parent", "replica-1"}, {"minMember", 2}},
                       {{"name", "decode-1"}, {"parent", "replica-1"}, {"minMember", 2}},
                       {{"name", "prefill-2"}, {"parent", "replica-2"}, {"minMember", 2}},
                       {{"name", "decode-2"}, {"parent", "replica-2"}, {"minMember", 2}}}}};
  std::vector<json> pods;
  for (const char* sg : {"prefill-1", "decode-1", "prefill-2", "decode-2"})
    for (int i = 0; i < 2; ++i)
      pods.push_back(KaiWorld::pod_json(std::string(sg) + "-" + std::to_string(i), sg, 2));
  const CapturedRun run = w.place(spec, pods);
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const auto got = where(run);
  ASSERT_EQ(got.size(), 4u) << run.out;
  // Each sub-group's two 2-GPU pods fill one node; a replica's two sub-groups fill one rack.
  EXPECT_EQ(got.at("prefill-1"), (std::map<std::string, int>{{"n-b1-1", 2}})) << run.out;
  EXPECT_EQ(got.at("decode-1"), (std::map<std::string, int>{{"n-b1-2", 2}})) << run.out;
  EXPECT_EQ(got.at("prefill-2"), (std::map<std::string, int>{{"n-b2-1", 2}})) << run.out;
  EXPECT_EQ(got.at("decode-2"), (std::map<std::string, int>{{"n-b2-2", 2}})) << run.out;
}

// The same job with a third replica cannot fit in one zone: nothing is placed and the reason names
// the job's level.
TEST(KaiSubGroups, JobThatNoZoneHoldsStaysPendingAndSaysWhy) {
  KaiWorld w;
  json sub_groups = json::array();
  std::vector<json> pods;
  for (int r = 1; r <= 3; ++r) {
    const std::string name = "replica-" + std::to_string(r);
    sub_groups.push_back({{"name", name}, {"topologyConstraint", {{"requiredTopologyLevel", "topo/rack"}}}});
    for (int i = 0; i < 2; ++i) pods.push_back(KaiWorld::pod_json(name + "-" + std::to_string(i), name, 4));
  }
  const json spec = {{"topologyConstraint", {{"requiredTopologyLevel", "topo/zone"}}},
                     {"subGroups", sub_groups}};
  const CapturedRun run = w.place(spec, pods);
  ASSERT_EQ(run.code, 1) << run.err << run.out;
  const json result = json::parse(run.out);
  EXPECT_FALSE(result["fit"].get<bool>());
  EXPECT_NE(result["reason"].get<std::string>().find("topo/zone"), std::string::npos) << run.out;
}

// An elastic sub-group (minMember below its pods) starts with what fits once every minimum is in.
TEST(KaiSubGroups, ElasticSubGroupStartsWithItsMinimum) {
  KaiWorld w;
  for (const char* n : {"n-a1-2", "n-a2-1", "n-a2-2", "n-b1-1", "n-b1-2", "n-b2-1"}) w.busy(n, 4);
  // One free node (n-b2-2, 4 GPUs): the sub-group asks for 3 pods of 2 GPUs, at least 2.
  const json spec = {{"subGroups", {{{"name", "workers"}, {"minMember", 2}}}}};
  std::vector<json> pods;
  for (int i = 0; i < 3; ++i) pods.push_back(KaiWorld::pod_json("w-" + std::to_string(i), "workers", 2));
  const CapturedRun run = w.place(spec, pods);
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const json result = json::parse(run.out);
  EXPECT_EQ(where(run).at("workers"), (std::map<std::string, int>{{"n-b2-2", 2}})) << run.out;
  EXPECT_NE(result["reason"].get<std::string>().find("placed 2 of 3 pods"), std::string::npos) << run.out;
}

// `hypertopo simulate` replays nested PodGroups too: two serving jobs of two rack-bound replicas
// each, the second arriving while the first runs, both admitted at once (one zone each).
TEST(KaiSubGroups, SimulateAdmitsNestedPodGroups) {
  KaiWorld w;
  auto job = [](const std::string& name) {
    const json spec = {
        {"topologyConstraint", {{"requiredTopologyLevel", "topo/zone"}}},
        {"subGroups",
         {{{"name", "r1"}, {"topologyConstraint", {{"requiredTopologyLevel", "topo/rack"}}}},
          {{"name", "r2"}, {"topologyConstraint", {{"requiredTopologyLevel", "topo/rack"}}}}}}};
    std::vector<json> pods;
    for (const char* sg : {"r1", "r2"})
      for (int i = 0; i < 2; ++i) pods.push_back(KaiWorld::pod_json(name + sg + std::to_string(i), sg, 2));
    return KaiWorld::group_list(spec, pods, name);
  };
  const CapturedRun run =
      w.simulate({{0, "serve-a", 100, job("serve-a")}, {10, "serve-b", 100, job("serve-b")}});
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const json engine = json::parse(run.out)["policies"][0];
  EXPECT_EQ(engine["policy"], "topology-aware") << run.out;
  EXPECT_EQ(engine["admitted"], 2) << run.out;
  EXPECT_EQ(engine["waitMaxSeconds"], 0) << run.out;
}

TEST(KaiSubGroups, ParentThatIsNoSubGroupIsRefusedNamingIt) {
  KaiWorld w;
  const json spec = {{"subGroups", {{{"name", "decode"}, {"parent", "replica-9"}}}}};
  const CapturedRun run = w.place(spec, {KaiWorld::pod_json("d-0", "decode", 1)});
  EXPECT_EQ(run.code, 2) << run.out;
  EXPECT_NE(run.err.find("replica-9"), std::string::npos) << run.err;
}

TEST(KaiSubGroups, CycleOfParentsIsRefused) {
  KaiWorld w;
  const json spec = {{"subGroups", {{{"name", "a"}, {"parent", "b"}}, {{"name", "b"}, {"parent", "a"}}}}};
  const CapturedRun run = w.place(spec, {KaiWorld::pod_json("p-0", "a", 1)});
  EXPECT_EQ(run.code, 2) << run.out;
  EXPECT_NE(run.err.find("cycle"), std::string::npos) << run.err;
}

TEST(KaiSubGroups, PodNamingAnUndeclaredSubGroupIsRefused) {
  KaiWorld w;
  const json spec = {{"subGroups", {{{"name", "decode"}}}}};
  const CapturedRun run = w.place(spec, {KaiWorld::pod_json("p-0", "prefill", 1)});
  EXPECT_EQ(run.code, 2) << run.out;
  EXPECT_NE(run.err.find("kai.scheduler/subgroup-name=prefill"), std::string::npos) << run.err;
}

TEST(KaiSubGroups, UnknownLevelIsRefusedNamingTheSubGroup) {
  KaiWorld w;
  const json spec = {
      {"subGroups", {{{"name", "decode"}, {"topologyConstraint", {{"requiredTopologyLevel", "topo/row"}}}}}}};
  const CapturedRun run = w.place(spec, {KaiWorld::pod_json("p-0", "decode", 1)});
  EXPECT_EQ(run.code, 2) << run.out;
  EXPECT_NE(run.err.find("sub-group decode"), std::string::npos) << run.err;
}

// A batch/v1 Job with KAI's topology annotations and no PodGroup of its own (KAI's pod grouper
// makes one from them) is placed in KAI's order, as kai-alloc-21 ("Bin Packing - Pack Top-Most
// domain first") places its PodGroup: spine2 holds two of the five 1-GPU nodes, spine1 three, so the
// pod's request over free GPUs is higher in spine2 (1/2 against 1/3) and KAI packs it first; the
// pod lands in its rack4 although rack1 alone (one free node) is the fuller rack by binpack.
TEST(KaiSubGroups, BatchJobWithKaiAnnotationsPlacesInKaisOrder) {
  const std::vector<std::tuple<std::string, std::string, std::string>> nodes{{"node0", "spine1", "rack1"},
                                                                             {"node1", "spine1", "rack2"},
                                                                             {"node2", "spine1", "rack3"},
                                                                             {"node3", "spine2", "rack4"},
                                                                             {"node4", "spine2", "rack4"}};
  json items = json::array();
  for (const auto& [name, spine, rack] : nodes) {
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata",
                      {{"name", name},
                       {"labels",
                        {{"kubernetes.io/hostname", name},
                         {"k8s.io/zone", "zone1"},
                         {"k8s.io/spine", spine},
                         {"k8s.io/rack", rack}}}}},
                     {"spec", json::object()},
                     {"status",
                      {{"allocatable", {{"nvidia.com/gpu", "1"}, {"pods", "110"}}},
                       {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
  }
  const json topology = {{"apiVersion", "kai.scheduler/v1alpha1"},
                         {"kind", "Topology"},
                         {"metadata", {{"name", "cluster-topology"}}},
                         {"spec",
                          {{"levels",
                            {{{"nodeLabel", "k8s.io/zone"}},
                             {{"nodeLabel", "k8s.io/spine"}},
                             {{"nodeLabel", "k8s.io/rack"}}}}}}};
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", "pending-job0"}, {"namespace", "default"}}}};
  job["metadata"]["annotations"] = {{"kai.scheduler/topology", "cluster-topology"},
                                    {"kai.scheduler/topology-preferred-placement", "k8s.io/rack"}};
  job["spec"]["parallelism"] = 1;
  job["spec"]["template"]["spec"]["containers"] =
      json::array({{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "1"}}}}}}});
  TempDir dir;
  const auto write = [&](const std::string& file, const json& doc) {
    write_text(dir.path() / file, doc.dump());
    return (dir.path() / file).string();
  };
  const CapturedRun run = run_captured(
      cli::run_cli, {"place", "--nodes", write("nodes.json", {{"kind", "NodeList"}, {"items", items}}),
                     "--topology", write("topology.json", topology), "--job", write("job.json", job)});
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  const auto got = where(run);
  ASSERT_EQ(got.size(), 1u) << run.out;
  const auto& placed = got.begin()->second;
  ASSERT_EQ(placed.size(), 1u) << run.out;
  const std::string node = placed.begin()->first;
  EXPECT_TRUE(node == "node3" || node == "node4") << "KAI packs spine2's rack4 first; got " << node << "\n"
                                                  << run.out;
}

}  // namespace
}  // namespace hypertopo::testing
