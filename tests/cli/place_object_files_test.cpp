// `place` and `simulate` on the files users hand over, as they write them: what `discover -o yaml`
// prints (multi-document YAML) against `-o json` (one List), every kind `place` reads as
// multi-document YAML with comments, `---`, `...`, an empty document and a leading `---` against the
// JSON List form, a file of several kinds (a warning names the kind no flag reads), and the
// HyperNodes of examples/place written one per document.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "tests/cli/cluster_objects.h"
#include "tests/support/fixtures.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;
using testing::cluster_list;
using testing::exact_hypernode;
using testing::gpu_node;

// A JSON value as block-style YAML; strings stay JSON-quoted (valid YAML double-quoted scalars), so
// "8" is read back as the string it was.
std::string yaml_of(const json& v, int indent = 0) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  auto inline_value = [](const json& x) {
    if (x.is_object() && x.empty()) return std::string("{}");
    if (x.is_array() && x.empty()) return std::string("[]");
    return x.dump();
  };
  std::string out;
  if (v.is_object()) {
    for (const auto& [k, x] : v.items()) {
      out += pad + json(k).dump() + ":";
      out += x.is_structured() && !x.empty() ? "\n" + yaml_of(x, indent + 2) : " " + inline_value(x) + "\n";
    }
  } else {
    for (const auto& x : v) {
      out += pad + "-";
      out += x.is_structured() && !x.empty() ? "\n" + yaml_of(x, indent + 2) : " " + inline_value(x) + "\n";
    }
  }
  return out;
}

// Each item of a List in a document of its own, with the separators and comments people leave.
std::string documents_of(const json& list) {
  std::string out = "# written by hand, one object per document\n---\n";
  for (std::size_t i = 0; i < list["items"].size(); ++i) {
    if (i == 1) out += "---\n# an empty document: only this comment\n";
    out += (i == 0 ? "" : "---\n") + yaml_of(list["items"][i]);
    if (i == 0) out += "...\n";
  }
  return out;
}

class PlaceObjectFiles : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    testing::write_text(dir_.path() / name, text);
    return (dir_.path() / name).string();
  }
  static testing::CapturedRun run(std::vector<std::string> args) {
    return testing::run_captured(run_cli, args);
  }

  testing::TempDir dir_;
};

// The finding: `discover -o yaml > hypernodes.yaml` then `place --topology hypernodes.yaml` read one
// HyperNode of the tree; the JSON List gave the right answer. Both now give the same one.
TEST_F(PlaceObjectFiles, DiscoverYamlAndJsonOutputGiveTheSamePlacement) {
  auto yaml = run({"discover", "--source", "demo", "-o", "yaml"});
  auto list = run({"discover", "--source", "demo", "-o", "json"});
  ASSERT_EQ(yaml.code, 0) << yaml.err;
  ASSERT_EQ(list.code, 0) << list.err;
  ASSERT_GT(std::count(yaml.out.begin(), yaml.out.end(), '\n'), 0);
  const json hypernodes = json::parse(list.out);
  // The Nodes the tree names, 8 GPUs each.
  std::set<std::string> names;
  for (const auto& hn : hypernodes["items"]) {
    for (const auto& m : hn["spec"]["members"]) {
      if (m["type"] == "Node" && m["selector"].contains("exactMatch"))
        names.insert(m["selector"]["exactMatch"]["name"].get<std::string>());
    }
  }
  ASSERT_GE(names.size(), 64u);
  json nodes = json::array();
  for (const auto& n : names) nodes.push_back(gpu_node(n));
  const std::string nodes_file = write("nodes.json", cluster_list(nodes).dump());
  const std::string yaml_file = write("hypernodes.yaml", yaml.out);
  const std::string json_file = write("hypernodes.json", list.out);
  auto request = [&](int count) {
    return write(
        "job" + std::to_string(count) + ".json",
        json{{"apiVersion", "hypertopo.io/v1alpha1"},
             {"kind", "PlacementRequest"},
             {"name", "train"},
             {"podSets", {{{"name", "workers"}, {"count", count}, {"requests", {{"nvidia.com/gpu", "8"}}}}}}}
            .dump());
  };
  // More pods than one scalable unit holds: only the tree above the leaves has room for them.
  for (int count : {40, static_cast<int>(names.size()) + 1}) {
    const std::string job = request(count);
    auto from_yaml =
        run({"place", "--nodes", nodes_file, "--topology", yaml_file, "--job", job, "-o", "text"});
    auto from_json =
        run({"place", "--nodes", nodes_file, "--topology", json_file, "--job", job, "-o", "text"});
    EXPECT_EQ(from_yaml.code, count == 40 ? 0 : 1) << from_yaml.out << from_yaml.err;
    EXPECT_EQ(from_yaml.code, from_json.code);
    EXPECT_EQ(from_yaml.out, from_json.out);
    EXPECT_EQ(from_yaml.err, "") << from_yaml.err;
  }
}

// Every kind `place` reads, as multi-document YAML, gives what the JSON List form gives.
TEST_F(PlaceObjectFiles, EveryInputAsMultiDocumentYamlReadsAsItsJsonList) {
  json node_items = json::array();
  for (const char* n : {"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"})
    node_items.push_back(gpu_node(n, {{"example.com/rack", std::string(1, n[0])}}));
  const json nodes = cluster_list(node_items);
  const json hypernodes = testing::spine_of_two_leaves();
  // a1 and a2 run 8 GPUs each: leaf-a has two hosts left.
  json pod_items = json::array();
  for (const char* n : {"a1", "a2"}) {
    pod_items.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", std::string("busy-") + n}, {"namespace", "default"}}},
         {"spec",
          {{"nodeName", n},
           {"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "8"}}}}}}}}}},
         {"status", {{"phase", "Running"}}}});
  }
  const json pods = cluster_list(pod_items);
  const json group{{"apiVersion", "scheduling.k8s.io/v1alpha2"},
                   {"kind", "PodGroup"},
                   {"metadata", {{"name", "trainer"}}},
                   {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", 3}}}}}}}};
  const json pod{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "trainer-0"}}},
      {"spec",
       {{"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "8"}}}}}}}}}}};
  const json job = cluster_list({group, pod});
  auto place = [&](const std::string& form, const std::vector<json>& docs, bool as_yaml) {
    std::vector<std::string> args{"place"};
    const char* flags[] = {"--nodes", "--pods", "--topology", "--job"};
    for (std::size_t i = 0; i < docs.size(); ++i) {
      const std::string name = form + std::to_string(i) + (as_yaml ? ".yaml" : ".json");
      args.push_back(flags[i]);
      args.push_back(write(name, as_yaml ? documents_of(docs[i]) : docs[i].dump()));
    }
    args.insert(args.end(), {"--semantics", "engine", "-o", "json"});
    return run(args);
  };
  auto yaml = place("y", {nodes, pods, hypernodes, job}, true);
  auto list = place("j", {nodes, pods, hypernodes, job}, false);
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(yaml.code, 0) << yaml.err;
  EXPECT_EQ(yaml.err, "");
  EXPECT_EQ(yaml.out, list.out);
  // Three 8-GPU pods, none on the hosts the running pods fill.
  const json placed = json::parse(list.out)["podSets"][0]["assignment"];
  ASSERT_EQ(placed.size(), 3u) << list.out;
  for (const auto& a : placed) {
    EXPECT_NE(a["node"], "a1") << list.out;
    EXPECT_NE(a["node"], "a2") << list.out;
  }

  // A Kueue Topology and a batch/v1 Job with Kueue's annotation, each one document among comments.
  const json topology{
      {"apiVersion", "kueue.x-k8s.io/v1beta2"},
      {"kind", "Topology"},
      {"metadata", {{"name", "default"}}},
      {"spec",
       {{"levels", {{{"nodeLabel", "example.com/rack"}}, {{"nodeLabel", "kubernetes.io/hostname"}}}}}}};
  const json batch{
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", "train"}}},
      {"spec",
       {{"parallelism", 2},
        {"template",
         {{"metadata", {{"annotations", {{"kueue.x-k8s.io/podset-required-topology", "example.com/rack"}}}}},
          {"spec",
           {{"containers",
             {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "8"}}}}}}}}}}}}}}};
  auto kueue = [&](bool as_yaml) {
    auto one = [&](const std::string& name, const json& obj) {
      return as_yaml ? write(name + ".yaml", "---\n# " + name + "\n" + yaml_of(obj) + "...\n---\n")
                     : write(name + ".json", obj.dump());
    };
    return run({"place", "--nodes",
                write(as_yaml ? "kn.yaml" : "kn.json", as_yaml ? documents_of(nodes) : nodes.dump()),
                "--pods", write(as_yaml ? "kp.yaml" : "kp.json", as_yaml ? documents_of(pods) : pods.dump()),
                "--topology", one("topology", topology), "--job", one("batch", batch), "-o", "json"});
  };
  auto kueue_yaml = kueue(true);
  auto kueue_json = kueue(false);
  ASSERT_EQ(kueue_json.code, 0) << kueue_json.err;
  EXPECT_EQ(kueue_yaml.code, 0) << kueue_yaml.err;
  EXPECT_EQ(kueue_yaml.out, kueue_json.out);
  EXPECT_NE(kueue_json.out.find("topologyAssignment"), std::string::npos) << kueue_json.out;
}

// One file of several kinds for several flags: each flag takes its kinds, and only the kind that no
// flag reads is named, once, with its documents.
TEST_F(PlaceObjectFiles, AKindNoFlagReadsIsNamedInOneWarning) {
  const json hypernodes = testing::spine_of_two_leaves();
  std::string cluster = "---\n";
  std::vector<json> objects;
  for (const char* n : {"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"}) objects.push_back(gpu_node(n));
  objects.insert(objects.begin() + 2,
                 json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "x"}}}});
  for (const auto& hn : hypernodes["items"]) objects.push_back(hn);
  objects.insert(objects.begin() + 6,
                 json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "y"}}}});
  for (std::size_t i = 0; i < objects.size(); ++i) cluster += (i ? "---\n" : "") + yaml_of(objects[i]);
  const std::string file = write("cluster.yaml", cluster);
  const std::string job = write("job.json", json{{"apiVersion", "hypertopo.io/v1alpha1"},
                                                 {"kind", "PlacementRequest"},
                                                 {"name", "t"},
                                                 {"podSets",
                                                  {{{"name", "w"},
                                                    {"count", 6},
                                                    {"requests", {{"nvidia.com/gpu", "8"}}},
                                                    {"topology", {{"mode", "required"}, {"level", "2"}}}}}}}
                                                .dump());
  auto placed = run({"place", "--nodes", file, "--topology", file, "--job", job, "-o", "text"});
  EXPECT_EQ(placed.code, 0) << placed.err;
  EXPECT_EQ(placed.err,
            "hypertopo place: warning: " + file + ": 2 objects of kind ConfigMap ignored (document 3, 7)\n");
  EXPECT_NE(placed.out.find("6 pods, tier 2, domain spine"), std::string::npos) << placed.out;

  // simulate reads the same file the same way.
  const std::string trace = write(
      "trace.jsonl",
      json{{"time", 0}, {"job", "a"}, {"duration", 10}, {"arrive", json::parse(testing::read_text(job))}}
              .dump() +
          "\n");
  auto sim = run({"simulate", "--nodes", file, "--topology", file, "--trace", trace, "-o", "json",
                  "--progress-every", "0"});
  ASSERT_EQ(sim.code, 0) << sim.err;
  EXPECT_NE(sim.err.find("hypertopo simulate: warning: " + file +
                         ": 2 objects of kind ConfigMap ignored (document 3, 7)"),
            std::string::npos)
      << sim.err;
  EXPECT_EQ(json::parse(sim.out)["policies"][0]["admitted"], 1) << sim.out;
}

// A kind is whatever the file says: the warning that names it spells out its control characters.
TEST_F(PlaceObjectFiles, TheWarningSpellsOutControlCharactersInAKindName) {
  std::string cluster;
  for (const char* n : {"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"})
    cluster += yaml_of(gpu_node(n)) + "---\n";
  const json hypernodes = testing::spine_of_two_leaves();
  for (const auto& hn : hypernodes["items"]) cluster += yaml_of(hn) + "---\n";
  // JSON is YAML: the kind's ESC travels as the \u001b escape of a double-quoted scalar.
  cluster +=
      json{{"apiVersion", "v1"}, {"kind", "Evil\x1b[2J\x1b]0;owned\x07"}, {"metadata", {{"name", "z"}}}}
          .dump() +
      "\n";
  const std::string file = write("evil.yaml", cluster);
  const std::string job = write(
      "job.json", json{{"apiVersion", "hypertopo.io/v1alpha1"},
                       {"kind", "PlacementRequest"},
                       {"name", "t"},
                       {"podSets", {{{"name", "w"}, {"count", 2}, {"requests", {{"nvidia.com/gpu", "8"}}}}}}}
                      .dump());
  auto placed = run({"place", "--nodes", file, "--topology", file, "--job", job, "-o", "text"});
  EXPECT_EQ(placed.code, 0) << placed.err;
  EXPECT_NE(placed.err.find("kind Evil\\x1b[2J\\x1b]0;owned\\x07 ignored"), std::string::npos) << placed.err;
  EXPECT_EQ(placed.err.find('\x1b'), std::string::npos) << placed.err;
}

// examples/place/hypernodes.yaml is a List; written one HyperNode per document (as `discover -o yaml`
// and `kubectl get -o yaml` users keep it), the example of docs/placement.md answers the same.
TEST_F(PlaceObjectFiles, TheExampleHyperNodesOnePerDocumentAnswerAsTheList) {
  const std::filesystem::path examples = std::filesystem::path(HYPERTOPO_SOURCE_DIR) / "examples" / "place";
  std::istringstream in(testing::read_text(examples / "hypernodes.yaml"));
  std::string line, split;
  std::size_t documents = 0;
  bool in_items = false;
  while (std::getline(in, line)) {
    if (line == "items:") {
      in_items = true;
    } else if (in_items && line.starts_with("- ")) {
      split += (documents++ % 2 ? "---\n" : "---\n# leaf or spine\n") + line.substr(2) + "\n";
    } else if (in_items && line.starts_with("  ")) {
      split += line.substr(2) + "\n";
    }
  }
  ASSERT_GE(documents, 6u);
  const std::string multi = write("hypernodes.yaml", split);
  auto place = [&](const std::string& topology) {
    return run({"place", "--nodes", (examples / "nodes.json").string(), "--pods",
                (examples / "pods.json").string(), "--topology", topology, "--job",
                (examples / "request.json").string(), "-o", "text"});
  };
  auto from_list = place((examples / "hypernodes.yaml").string());
  auto from_documents = place(multi);
  ASSERT_EQ(from_list.code, 0) << from_list.err;
  EXPECT_EQ(from_documents.code, 0) << from_documents.err;
  EXPECT_EQ(from_documents.out, from_list.out);
  EXPECT_NE(from_list.out.find("tier 2"), std::string::npos) << from_list.out;
}

// The PriorityClasses and PodDisruptionBudget beside the Pods in a multi-document --pods file are
// read for preemption as from the List `kubectl get pods,pdb,priorityclasses -A -o json` writes.
TEST_F(PlaceObjectFiles, PreemptionReadsClassesAndBudgetsFromEveryDocument) {
  json node_items = json::array();
  for (const char* n : {"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"}) node_items.push_back(gpu_node(n));
  json items = json::array();
  auto priority_class = [](const std::string& name, int value) {
    return json{{"apiVersion", "scheduling.k8s.io/v1"},
                {"kind", "PriorityClass"},
                {"metadata", {{"name", name}}},
                {"value", value}};
  };
  items.push_back(priority_class("batch-low", 10));
  for (const auto& n : node_items) {
    const std::string node = n["metadata"]["name"];
    items.push_back(
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", "low-" + node}, {"namespace", "jobs"}, {"labels", {{"app", "low"}}}}},
         {"spec",
          {{"nodeName", node},
           {"priorityClassName", "batch-low"},
           {"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "8"}}}}}}}}}},
         {"status", {{"phase", "Running"}}}});
  }
  items.push_back(priority_class("train-high", 1000));
  items.push_back({{"apiVersion", "policy/v1"},
                   {"kind", "PodDisruptionBudget"},
                   {"metadata", {{"name", "low"}, {"namespace", "jobs"}}},
                   {"spec", {{"minAvailable", 8}, {"selector", {{"matchLabels", {{"app", "low"}}}}}}}});
  const json pods = cluster_list(items);
  const std::string nodes = write("nodes.json", cluster_list(node_items).dump());
  const std::string topology = write("hn.json", testing::spine_of_two_leaves().dump());
  const std::string job = write("job.json", json{{"apiVersion", "hypertopo.io/v1alpha1"},
                                                 {"kind", "PlacementRequest"},
                                                 {"name", "train"},
                                                 {"priorityClassName", "train-high"},
                                                 {"podSets",
                                                  {{{"name", "w"},
                                                    {"count", 2},
                                                    {"requests", {{"nvidia.com/gpu", "8"}}},
                                                    {"topology", {{"mode", "required"}, {"level", "1"}}}}}}}
                                                .dump());
  auto place = [&](const std::string& pods_file) {
    return run(
        {"place", "--nodes", nodes, "--pods", pods_file, "--topology", topology, "--job", job, "-o", "json"});
  };
  auto from_list = place(write("pods.json", pods.dump()));
  auto from_documents = place(write("pods.yaml", documents_of(pods)));
  ASSERT_EQ(from_list.code, 0) << from_list.out << from_list.err;
  EXPECT_EQ(from_documents.code, 0) << from_documents.out << from_documents.err;
  EXPECT_EQ(from_documents.out, from_list.out);
  EXPECT_EQ(from_documents.err, "");
  const json preemption = json::parse(from_list.out)["preemption"];
  EXPECT_EQ(preemption["priority"], 1000) << from_list.out;
  ASSERT_EQ(preemption["victims"].size(), 2u) << from_list.out;
  EXPECT_GT(preemption["cost"]["budgetViolations"].get<int>(), 0) << from_list.out;  // the budget was read
}

// discover's --nodes reads every document too, and names what it leaves.
TEST_F(PlaceObjectFiles, DiscoverNodesFromMultiDocumentYaml) {
  auto list = run({"discover", "--source", "demo", "-o", "json"});
  ASSERT_EQ(list.code, 0) << list.err;
  json nodes = json::array();
  const json discovered = json::parse(list.out);
  for (const auto& hn : discovered["items"]) {
    for (const auto& m : hn["spec"]["members"]) {
      if (m["type"] == "Node" && m["selector"].contains("exactMatch") && nodes.size() < 40)
        nodes.push_back(gpu_node(m["selector"]["exactMatch"]["name"]));
    }
  }
  json with_map = nodes;
  with_map.insert(with_map.begin() + 1,
                  json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "x"}}}});
  const std::string yaml_file = write("nodes.yaml", documents_of(cluster_list(with_map)));
  const std::string json_file = write("nodes.json", cluster_list(nodes).dump());
  auto from_yaml = run({"discover", "--source", "demo", "--nodes", yaml_file, "-o", "json"});
  auto from_json = run({"discover", "--source", "demo", "--nodes", json_file, "-o", "json"});
  ASSERT_EQ(from_json.code, 0) << from_json.err;
  ASSERT_EQ(from_yaml.code, 0) << from_yaml.err;
  // The answers differ only in the time each was observed.
  auto without_times = [](std::string text) {
    for (auto at = text.find("\"lastTransitionTime\""); at != std::string::npos;
         at = text.find("\"lastTransitionTime\"", at + 1))
      text.erase(at, text.find('\n', at) - at);
    return text;
  };
  EXPECT_EQ(without_times(from_yaml.out), without_times(from_json.out));
  EXPECT_LT(from_json.out.size(), list.out.size());  // the other hosts are left out
  EXPECT_NE(from_yaml.err.find("hypertopo: warning: --nodes: " + yaml_file +
                               ": 1 object of kind ConfigMap ignored (document 3)"),
            std::string::npos)
      << from_yaml.err;
}

// A Kubeflow PyTorchJob, which the extender ranks as one gang, is placed by `place` as that gang:
// the Master (rank 0), then the Workers, all inside one domain of the tier their pods' annotations
// allow.
TEST_F(PlaceObjectFiles, APyTorchJobIsPlacedAsOneGang) {
  json node_items = json::array();
  for (const char* n : {"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"}) node_items.push_back(gpu_node(n));
  const std::string nodes = write("nodes.json", cluster_list(node_items).dump());
  const std::string topology = write("hn.json", testing::spine_of_two_leaves().dump());
  auto replica = [](int replicas) {
    return json{{"replicas", replicas},
                {"template",
                 {{"metadata",
                   {{"annotations",
                     {{"volcano.sh/network-topology-mode", "hard"},
                      {"volcano.sh/network-topology-highest-tier", "1"}}}}},
                  {"spec",
                   {{"containers",
                     {{{"name", "pytorch"}, {"resources", {{"requests", {{"nvidia.com/gpu", "8"}}}}}}}}}}}}};
  };
  auto job = [&](int workers) {
    return write(
        "pytorch" + std::to_string(workers) + ".yaml",
        yaml_of(json{
            {"apiVersion", "kubeflow.org/v1"},
            {"kind", "PyTorchJob"},
            {"metadata", {{"name", "ddp"}}},
            {"spec", {{"pytorchReplicaSpecs", {{"Master", replica(1)}, {"Worker", replica(workers)}}}}}}));
  };
  auto fits = run({"place", "--nodes", nodes, "--topology", topology, "--job", job(3), "-o", "json"});
  ASSERT_EQ(fits.code, 0) << fits.out << fits.err;
  const json pod_sets = json::parse(fits.out)["podSets"];
  ASSERT_EQ(pod_sets.size(), 2u) << fits.out;
  EXPECT_EQ(pod_sets[0]["name"], "Master");
  EXPECT_EQ(pod_sets[1]["name"], "Worker");
  std::set<char> leaves;
  int pods = 0;
  for (const auto& ps : pod_sets) {
    for (const auto& a : ps["assignment"]) {
      leaves.insert(a["node"].get<std::string>().front());
      pods += a["count"].get<int>();
    }
  }
  EXPECT_EQ(pods, 4);
  EXPECT_EQ(leaves.size(), 1u) << "one leaf: " << fits.out;
  // Five 8-GPU pods fit in no leaf of four hosts.
  auto too_big = run({"place", "--nodes", nodes, "--topology", topology, "--job", job(4), "-o", "json"});
  EXPECT_EQ(too_big.code, 1) << too_big.out << too_big.err;
  auto bad = run({"place", "--nodes", nodes, "--topology", topology, "--job",
                  write("bad.json", json{{"apiVersion", "kubeflow.org/v1"},
                                         {"kind", "PyTorchJob"},
                                         {"metadata", {{"name", "ddp"}}},
                                         {"spec", {{"pytorchReplicaSpecs", {{"Launcher", replica(1)}}}}}}
                                        .dump())});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("PyTorchJob ddp: spec.pytorchReplicaSpecs.Launcher"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace hypertopo::cli
