// `hypertopo place` and `hypertopo simulate` as a user runs them, on Kubernetes objects written to
// files: exit status 0 (fits) / 1 (does not fit) / 2 (invalid input, one stderr line naming the
// file and the field), range-checked counts, wrong JSON types, inputs of the wrong kind, and the
// KEP-5732 PodGroup; and the examples of docs/placement.md, run as the doc writes them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "tests/support/fixtures.h"

namespace hypertopo::cli {
namespace {

using nlohmann::json;

// Two blocks of two racks of two 8-GPU hosts; rack values repeat across blocks (r1, r2), as in
// Kueue's own tests, so a rack is only known by its full path.
json nodes() {
  json items = json::array();
  for (int b = 1; b <= 2; ++b) {
    for (int r = 1; r <= 2; ++r) {
      for (int h = 1; h <= 2; ++h) {
        const std::string name =
            "b" + std::to_string(b) + "-r" + std::to_string(r) + "-h" + std::to_string(h);
        items.push_back({{"apiVersion", "v1"},
                         {"kind", "Node"},
                         {"metadata",
                          {{"name", name},
                           {"labels",
                            {{"example.com/block", "b" + std::to_string(b)},
                             {"example.com/rack", "r" + std::to_string(r)},
                             {"kubernetes.io/hostname", name}}}}},
                         {"status",
                          {{"allocatable", {{"cpu", "64"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}},
                           {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
      }
    }
  }
  return {{"apiVersion", "v1"}, {"kind", "NodeList"}, {"items", items}};
}

json topology(bool with_hosts) {
  json levels = {{{"nodeLabel", "example.com/block"}}, {{"nodeLabel", "example.com/rack"}}};
  if (with_hosts) levels.push_back({{"nodeLabel", "kubernetes.io/hostname"}});
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "Topology"},
          {"metadata", {{"name", "default"}}},
          {"spec", {{"levels", levels}}}};
}

json kueue_job(const json& parallelism, const json& annotations) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", "train"}}},
          {"spec",
           {{"parallelism", parallelism},
            {"template",
             {{"metadata", {{"annotations", annotations}}},
              {"spec",
               {{"containers",
                 {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "8"}}}}}}}}}}}}}}};
}

class PlaceCommandTest : public ::testing::Test {
 protected:
  std::string text_file(const std::string& name, const std::string& text) {
    testing::write_text(dir_.path() / name, text);
    return (dir_.path() / name).string();
  }
  std::string file(const std::string& name, const json& doc) { return text_file(name, doc.dump(1)); }

  testing::CapturedRun place(const json& job, std::vector<std::string> extra = {}, bool with_hosts = true) {
    std::vector<std::string> args{"place",
                                  "--nodes",
                                  file("nodes.json", nodes()),
                                  "--topology",
                                  file("topology.json", topology(with_hosts)),
                                  "--job",
                                  file("job.json", job)};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::run_captured(run_cli, args);
  }

  // Exit 2 with exactly one stderr line that names `field`.
  static void expect_invalid(const testing::CapturedRun& run, const std::string& field) {
    EXPECT_EQ(run.code, 2) << run.out << run.err;
    EXPECT_NE(run.err.find(field), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(run.err.find("json.exception"), std::string::npos) << run.err;
  }

  testing::TempDir dir_;
};

TEST_F(PlaceCommandTest, ExitCodesAreFitsDoesNotFitAndInvalid) {
  const json rack{{"kueue.x-k8s.io/podset-required-topology", "example.com/rack"}};
  auto fits = place(kueue_job(2, rack));
  EXPECT_EQ(fits.code, 0) << fits.err;
  auto too_big = place(kueue_job(3, rack));  // a rack holds two 8-GPU pods
  EXPECT_EQ(too_big.code, 1) << too_big.err;
  const json out = json::parse(too_big.out);
  EXPECT_FALSE(out["fit"].get<bool>());
  EXPECT_EQ(out["reason"], "pod set main: topology \"default\" allows to fit only 2 out of 3 pod(s)");
  expect_invalid(place(kueue_job(4, {{"kueue.x-k8s.io/podset-slice-required-topology", "example.com/rack"}})),
                 "kueue.x-k8s.io/podset-slice-size");
  // A level the Topology does not have: Kueue rejects the request.
  expect_invalid(place(kueue_job(2, {{"kueue.x-k8s.io/podset-required-topology", "example.com/zone"}})),
                 "podset-required-topology");
}

TEST_F(PlaceCommandTest, DomainsBelowTheHostAreReportedByTheirFullPathNeverAsANode) {
  auto run =
      place(kueue_job(4, {{"kueue.x-k8s.io/podset-required-topology", "example.com/block"}}), {}, false);
  ASSERT_EQ(run.code, 0) << run.err;
  const json ps = json::parse(run.out)["podSets"][0];
  ASSERT_EQ(ps["assignment"].size(), 2u) << ps.dump();
  for (const auto& a : ps["assignment"]) {
    EXPECT_FALSE(a.contains("node")) << a.dump();
    ASSERT_EQ(a["domain"].size(), 2u);
    EXPECT_EQ(a["domain"][0], ps["assignment"][0]["domain"][0]);  // one block
    EXPECT_EQ(a["nodes"].size(), 2u);
    for (const auto& n : a["nodes"]) {
      const std::string name = n;
      EXPECT_EQ(name.substr(0, 5),
                a["domain"][0].get<std::string>() + "-" + a["domain"][1].get<std::string>());
    }
  }
  EXPECT_EQ(ps["topologyAssignment"]["levels"].size(), 2u);
}

TEST_F(PlaceCommandTest, AJobWithoutTasAnnotationsOnATopologyIsKueuesImpliedRequest) {
  auto run = place(kueue_job(3, json::object()), {"--timings"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.err.find("timings (kueue)"), std::string::npos) << run.err;
  // Each step of the call has its own figure, in the order they run.
  std::size_t at = run.err.find("timings (kueue)");
  for (const char* step : {": read ", " ms, parse ", " ms, index ", " ms, place ", " ms, write "}) {
    const std::size_t next = run.err.find(step, at);
    ASSERT_NE(next, std::string::npos) << step << " in " << run.err;
    at = next;
  }
  const json ps = json::parse(run.out)["podSets"][0];
  EXPECT_EQ(ps["topologyAssignment"]["levels"], json::array({"kubernetes.io/hostname"}));
  std::int64_t pods = 0;
  for (const auto& a : ps["assignment"]) pods += a["count"].get<std::int64_t>();
  EXPECT_EQ(pods, 3);
}

TEST_F(PlaceCommandTest, EveryCountIsRangeChecked) {
  const json rack{{"kueue.x-k8s.io/podset-required-topology", "example.com/rack"}};
  for (const json& bad : {json(0), json(-1), json(2147483648LL), json("1e3")})
    expect_invalid(place(kueue_job(bad, rack)), "parallelism");
  for (const std::string bad : {"3", "1e100", "8x", "0", "-2"}) {
    expect_invalid(place(kueue_job(16, {{"kueue.x-k8s.io/podset-required-topology", "example.com/block"},
                                        {"kueue.x-k8s.io/podset-slice-required-topology", "example.com/rack"},
                                        {"kueue.x-k8s.io/podset-slice-size", bad}})),
                   "podset-slice-size");
  }
  // A slice constraint without its size (found by fuzzing: it was divided by).
  for (const std::string bad :
       {R"([{"topology": "example.com/rack"}])", R"([{"topology": "r", "size": null}])",
        R"([{"topology": "r", "size": 0}])"}) {
    expect_invalid(place(kueue_job(16, {{"kueue.x-k8s.io/podset-required-topology", "example.com/block"},
                                        {"kueue.x-k8s.io/podset-slice-required-topology-constraints", bad}})),
                   "size");
  }
  const json volcano{
      {"apiVersion", "batch.volcano.sh/v1alpha1"},
      {"kind", "Job"},
      {"metadata", {{"name", "v"}}},
      {"spec",
       {{"tasks",
         {{{"name", "w"},
           {"replicas", 4},
           {"partitionPolicy", {{"totalPartitions", 4294967297LL}, {"partitionSize", 1}}}}}}}}};
  expect_invalid(place(volcano), "totalPartitions");
  json kaiwo{
      {"apiVersion", "kaiwo.silogen.ai/v1alpha1"},
      {"kind", "KaiwoJob"},
      {"metadata", {{"name", "k"}}},
      {"spec", {{"gpuVendor", "nvidia"}, {"ray", true}, {"replicas", 4294967300LL}, {"gpusPerReplica", 8}}}};
  expect_invalid(place(kaiwo), "replicas");
  kaiwo["spec"] = {{"gpuVendor", "nvidia"}, {"gpus", -8}};
  expect_invalid(place(kaiwo), "gpus");
}

TEST_F(PlaceCommandTest, AssumedGpusPerNodeBeyondAnyNodeIsRefused) {
  auto run = testing::run_captured(run_cli, {"discover", "--source", "demo", "-o", "dot",
                                             "--assume-gpus-per-node", "99999999999999999999"});
  EXPECT_NE(run.code, 0) << run.out;
  EXPECT_NE(run.err.find("--assume-gpus-per-node"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("GPUs"), std::string::npos);
}

TEST_F(PlaceCommandTest, WrongJsonTypesNameTheFileAndTheKey) {
  const json kaiwo{{"apiVersion", "kaiwo.silogen.ai/v1alpha1"},
                   {"kind", "KaiwoJob"},
                   {"metadata", {{"name", "k"}}},
                   {"spec", {{"gpuVendor", "nvidia"}, {"ray", "yes"}, {"gpus", 8}}}};
  auto ray = place(kaiwo);
  expect_invalid(ray, "ray");
  EXPECT_NE(ray.err.find("job.json"), std::string::npos) << ray.err;
  expect_invalid(
      place(json{{"kind", "PlacementRequest"}, {"name", json::array()}, {"podSets", {{{"count", 1}}}}}),
      "name");
  json bad_nodes = nodes();
  bad_nodes["items"][0]["kind"] = json::array();
  auto run = testing::run_captured(run_cli, {"place", "--nodes", file("bad-nodes.json", bad_nodes),
                                             "--topology", file("topology.json", topology(true)), "--job",
                                             file("job.json", kueue_job(1, json::object()))});
  expect_invalid(run, "kind");
  EXPECT_NE(run.err.find("bad-nodes.json"), std::string::npos) << run.err;
  json bad_containers = kueue_job(1, json::object());
  bad_containers["spec"]["template"]["spec"]["containers"] = "main";
  expect_invalid(place(bad_containers), "containers");
}

TEST_F(PlaceCommandTest, PodsThatAreNotAPodListAndUnknownOwnSchedulerConfigKeysAreErrors) {
  const json job = kueue_job(1, json::object());
  for (const std::string text : {"just some text\n", "[1, 2]\n", R"({"kind": "NodeList", "items": []})"}) {
    expect_invalid(place(job, {"--pods", text_file("pods.txt", text)}), "pods.txt");
    auto sim =
        testing::run_captured(run_cli, {"simulate", "--nodes", file("nodes.json", nodes()), "--topology",
                                        file("topology.json", topology(true)), "--trace",
                                        text_file("trace.jsonl", ""), "--pods", text_file("pods.txt", text)});
    EXPECT_EQ(sim.code, 2) << sim.out << sim.err;
    EXPECT_NE(sim.err.find("pods.txt"), std::string::npos) << sim.err;
  }
  // Volcano loads a conf with a key it does not know (yaml.v2 drops it): a warning names the key.
  auto unknown = place(
      job, {"--scheduler-config", text_file("sched.yaml", "actions: \"enqueue, allocate\"\ntierz: []\n")});
  EXPECT_EQ(unknown.code, 0) << unknown.err;
  EXPECT_NE(unknown.err.find("sched.yaml: tierz: ignored"), std::string::npos) << unknown.err;
  expect_invalid(place(job, {"--scheduler-config", text_file("sched.yaml", "hypertopo: {profil: kueue}\n")}),
                 "hypertopo.profil");
}

// --scheduler-config is read as every file of objects is: Volcano's ConfigMap among other YAML
// documents (an apply file, `kubectl get deploy,cm -o yaml` split by ---) or in a List is found and
// read, and what else the file holds is named in a warning; place and simulate read it alike.
TEST_F(PlaceCommandTest, ASchedulerConfigMapAmongOtherDocumentsOrInAListIsRead) {
  auto manifests = [](const std::string& limit) {
    return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: volcano-scheduler}\n---\n"
           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: volcano-scheduler-configmap}\ndata:\n"
           "  volcano-scheduler.conf: |\n    hypertopo: {maxPodsPerJob: " +
           limit + "}\n    tierz: []\n";
  };
  const json job = kueue_job(2, json::object());
  const std::string sched = text_file("sched.yaml", manifests("4"));
  auto read = place(job, {"--scheduler-config", sched});
  EXPECT_EQ(read.code, 0) << read.err;
  EXPECT_NE(read.err.find("sched.yaml: document 2 data.volcano-scheduler.conf: tierz: ignored"),
            std::string::npos)
      << read.err;
  EXPECT_NE(read.err.find("sched.yaml: 1 object of kind Deployment ignored (document 1)"), std::string::npos)
      << read.err;
  // The conf's own limit is what place applies: the ConfigMap of document 2 was read, not skipped.
  auto limited = place(job, {"--scheduler-config", text_file("sched.yaml", manifests("1"))});
  EXPECT_NE(limited.code, 0);
  EXPECT_NE(limited.err.find("above hypertopo.maxPodsPerJob 1"), std::string::npos) << limited.err;

  // A List holding the ConfigMap (`kubectl get cm -o json` of one name gives the object, of several a List).
  const json list{{"apiVersion", "v1"},
                  {"kind", "List"},
                  {"items",
                   {{{"apiVersion", "v1"},
                     {"kind", "ConfigMap"},
                     {"metadata", {{"name", "volcano-scheduler-configmap"}}},
                     {"data", {{"volcano-scheduler.conf", "tierz: []\n"}}}}}}};
  auto from_list = place(job, {"--scheduler-config", file("sched.json", list)});
  EXPECT_EQ(from_list.code, 0) << from_list.err;
  EXPECT_NE(from_list.err.find("sched.json: items[0] data.volcano-scheduler.conf: tierz: ignored"),
            std::string::npos)
      << from_list.err;

  // simulate reads the same file the same way.
  auto sim = testing::run_captured(run_cli, {"simulate", "--nodes", file("nodes.json", nodes()), "--topology",
                                             file("topology.json", topology(true)), "--trace",
                                             text_file("trace.jsonl", ""), "--scheduler-config", sched});
  EXPECT_EQ(sim.code, 0) << sim.out << sim.err;
  EXPECT_NE(sim.err.find("sched.yaml: document 2 data.volcano-scheduler.conf: tierz: ignored"),
            std::string::npos)
      << sim.err;
  EXPECT_NE(sim.err.find("sched.yaml: 1 object of kind Deployment ignored (document 1)"), std::string::npos)
      << sim.err;

  // Two ConfigMaps that carry a conf, or none, are an error naming the file and what it holds.
  expect_invalid(
      place(job, {"--scheduler-config",
                  text_file("two.yaml", manifests("4") + "---\n" +
                                            manifests("4").substr(manifests("4").find("apiVersion: v1")))}),
      "two.yaml: document 3: a second ConfigMap with volcano-scheduler.conf");
  expect_invalid(
      place(job, {"--scheduler-config", text_file("none.yaml", "kind: Deployment\n---\nkind: Service\n")}),
      "none.yaml: expected a volcano-scheduler.conf or a ConfigMap with data.volcano-scheduler.conf; "
      "the file holds 1 Deployment, 1 Service");
}

TEST_F(PlaceCommandTest, AKep5732PodGroupIsPlacedInsideOneDomainOfItsTopologyKey) {
  const json group{{"apiVersion", "scheduling.k8s.io/v1alpha2"},
                   {"kind", "PodGroup"},
                   {"metadata", {{"name", "trainer"}}},
                   {"spec",
                    {{"schedulingPolicy", {{"gang", {{"minCount", 2}}}}},
                     {"schedulingConstraints", {{"topology", {{{"key", "example.com/rack"}}}}}}}}};
  const json pod{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "trainer-0"}}},
      {"spec",
       {{"containers", {{{"name", "main"}, {"resources", {{"requests", {{"nvidia.com/gpu", "8"}}}}}}}}}}};
  auto run = place(json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", {group, pod}}});
  ASSERT_EQ(run.code, 0) << run.err;
  const json ps = json::parse(run.out)["podSets"][0];
  ASSERT_EQ(ps["assignment"].size(), 2u) << ps.dump();
  const std::string a = ps["assignment"][0]["node"], b = ps["assignment"][1]["node"];
  EXPECT_EQ(a.substr(0, 5), b.substr(0, 5)) << "one rack: " << a << " " << b;
  // Three pods of 8 GPUs cannot share a rack of two hosts.
  json three = group;
  three["spec"]["schedulingPolicy"]["gang"]["minCount"] = 3;
  EXPECT_EQ(place(json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", {three, pod}}}).code, 1);
  // simulate reads the same PodGroup as a trace arrival: both placed, one rack each.
  const json arrive{{"apiVersion", "v1"}, {"kind", "List"}, {"items", {group, pod}}};
  std::string trace;
  for (const char* id : {"a", "b"})
    trace += json{{"time", 0}, {"job", id}, {"duration", 10}, {"arrive", arrive}}.dump() + "\n";
  auto sim = testing::run_captured(run_cli, {"simulate", "--nodes", file("nodes.json", nodes()), "--topology",
                                             file("topology.json", topology(true)), "--trace",
                                             text_file("trace.jsonl", trace), "-o", "json"});
  ASSERT_EQ(sim.code, 0) << sim.err;
  const json report = json::parse(sim.out);
  EXPECT_EQ(report["policies"][0]["admitted"], 2) << sim.out;
  EXPECT_EQ(report["policies"][0]["waitMaxSeconds"], 0) << sim.out;
  json two_levels = group;
  two_levels["spec"]["schedulingConstraints"]["topology"].push_back({{"key", "example.com/block"}});
  expect_invalid(place(two_levels), "schedulingConstraints.topology");
}

// docs/placement.md shows `place` on the files of examples/place/: every such command is run as
// the doc writes it, and what it prints must be the JSON (and exit code) the doc shows under it.
// HyperNode spec.tier is the CRD's int32 (minimum 0): 2^32 + 1 is refused naming the HyperNode,
// never read as tier 1.
TEST_F(PlaceCommandTest, AHyperNodeTierBeyondInt32IsRefusedNotWrapped) {
  for (const json& tier : {json(4294967297LL), json(-1), json("4294967297")}) {
    const json hypernodes{
        {"apiVersion", "v1"},
        {"kind", "List"},
        {"items",
         {{{"apiVersion", "topology.volcano.sh/v1alpha1"},
           {"kind", "HyperNode"},
           {"metadata", {{"name", "rack-1"}}},
           {"spec",
            {{"tier", tier},
             {"members", {{{"type", "Node"}, {"selector", {{"exactMatch", {{"name", "b1-r1-h1"}}}}}}}}}}}}}};
    auto run = testing::run_captured(run_cli, {"place", "--nodes", file("nodes.json", nodes()), "--topology",
                                               file("hypernodes.json", hypernodes), "--job",
                                               file("job.json", kueue_job(1, json::object()))});
    EXPECT_EQ(run.code, 2) << tier << run.err;
    EXPECT_NE(run.err.find("HyperNode rack-1: spec.tier"), std::string::npos) << tier << run.err;
  }
}

// A HyperNode's name and tier name are whatever its writer chose: `place -o text` spells out the
// control characters in them, so an ESC sequence never reaches the terminal; `-o json` keeps them.
TEST_F(PlaceCommandTest, TextOutputSpellsOutControlCharactersInDomainNames) {
  json members = json::array();
  for (const char* node :
       {"b1-r1-h1", "b1-r1-h2", "b1-r2-h1", "b1-r2-h2", "b2-r1-h1", "b2-r1-h2", "b2-r2-h1", "b2-r2-h2"})
    members.push_back({{"type", "Node"}, {"selector", {{"exactMatch", {{"name", node}}}}}});
  const std::string evil = "rack\x1b]0;evil\x07\x1b[2J";
  const json hypernodes{{"apiVersion", "v1"},
                        {"kind", "List"},
                        {"items",
                         {{{"apiVersion", "topology.volcano.sh/v1alpha1"},
                           {"kind", "HyperNode"},
                           {"metadata", {{"name", evil}}},
                           {"spec", {{"tier", 1}, {"tierName", "leaf\x1b[31m"}, {"members", members}}}}}}};
  const std::vector<std::string> args = {"place",
                                         "--nodes",
                                         file("nodes.json", nodes()),
                                         "--topology",
                                         file("evil.json", hypernodes),
                                         "--job",
                                         file("job.json", kueue_job(2, json::object())),
                                         "--semantics",
                                         "engine"};
  std::vector<std::string> text_args = args;
  text_args.insert(text_args.end(), {"-o", "text"});
  auto run = testing::run_captured(run_cli, text_args);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find('\x07'), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("rack\\x1b]0;evil\\x07\\x1b[2J"), std::string::npos) << run.out;

  std::vector<std::string> json_args = args;
  json_args.insert(json_args.end(), {"-o", "json"});
  auto as_json = testing::run_captured(run_cli, json_args);
  ASSERT_EQ(as_json.code, 0) << as_json.err;
  EXPECT_NE(as_json.out.find(json(evil).dump()), std::string::npos) << as_json.out;
}

// A HyperNode chain thousands of tiers deep: `-o text` indents by depth only so far, so its size
// grows with the depth, not with its square (30,000 tiers printed 900 MB).
// A chain of `tiers` HyperNodes d1 (the leaf, holding the nodes) .. d<tiers>, each the only
// member of the next.
json hypernode_chain(int tiers) {
  json items = json::array();
  json leaf_members = json::array();
  for (const char* node :
       {"b1-r1-h1", "b1-r1-h2", "b1-r2-h1", "b1-r2-h2", "b2-r1-h1", "b2-r1-h2", "b2-r2-h1", "b2-r2-h2"}) {
    leaf_members.push_back({{"type", "Node"}, {"selector", {{"exactMatch", {{"name", node}}}}}});
  }
  for (int t = 1; t <= tiers; ++t) {
    json members =
        t == 1 ? leaf_members
               : json::array({{{"type", "HyperNode"},
                               {"selector", {{"exactMatch", {{"name", "d" + std::to_string(t - 1)}}}}}}});
    items.push_back({{"apiVersion", "topology.volcano.sh/v1alpha1"},
                     {"kind", "HyperNode"},
                     {"metadata", {{"name", "d" + std::to_string(t)}}},
                     {"spec", {{"tier", t}, {"members", members}}}});
  }
  return json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
}

TEST_F(PlaceCommandTest, TextOutputOfTheDeepestTreeAllowedStaysLinearInItsDepth) {
  // HyperNodes nest at most 64 deep (the index refuses deeper chains by name).
  constexpr int kTiers = 64;
  auto run = testing::run_captured(
      run_cli, {"place", "--nodes", file("nodes.json", nodes()), "--topology",
                file("deep.json", hypernode_chain(kTiers)), "--job",
                file("job.json", kueue_job(2, json::object())), "-o", "text", "--semantics", "engine"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("d" + std::to_string(kTiers) + "\n"), std::string::npos) << run.out.substr(0, 1500);
  EXPECT_NE(run.out.find("[" + std::to_string(kTiers) + "] d1\n"), std::string::npos);
  // About 65 bytes a line today (4.2 KB); indenting every level would add 2 * (1 + ... + 64) = 4,160
  // bytes more (8.3 KB).
  EXPECT_LT(run.out.size(), std::size_t{64 * 100}) << run.out.size();
}

TEST_F(PlaceCommandTest, AnAbsurdlyDeepTreeIsRefusedNamingItsDepth) {
  auto run = testing::run_captured(
      run_cli, {"place", "--nodes", file("nodes.json", nodes()), "--topology",
                file("deep.json", hypernode_chain(2000)), "--job",
                file("job.json", kueue_job(2, json::object())), "-o", "text", "--semantics", "engine"});
  EXPECT_EQ(run.code, 2) << run.err << run.out;
  EXPECT_NE(run.err.find(" is nested 2000 HyperNodes deep"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("at most 64 deep"), std::string::npos) << run.err;
}

// On an idle cluster whose nodes each hold a pod, a gang whose partitions no rack holds is told so,
// with what the largest rack holds; "no node has room" is kept for nodes that hold no pod.
TEST_F(PlaceCommandTest, APartitionNoRackHoldsIsNotCalledNoRoomOnNodes) {
  auto request = [](const std::string& gpus) {
    return json{{"apiVersion", "hypertopo.io/v1alpha1"},
                {"kind", "PlacementRequest"},
                {"name", "big"},
                {"podSets",
                 {{{"name", "trainer"},
                   {"count", 8},
                   {"requests", {{"nvidia.com/gpu", gpus}}},
                   {"topology", {{"mode", "required"}, {"level", "example.com/block"}}},
                   {"partitions", {{"total", 2}, {"size", 4}, {"level", "example.com/rack"}}}}}}};
  };
  auto idle = place(request("8"), {"-o", "text", "--semantics", "engine"});
  EXPECT_EQ(idle.code, 1) << idle.err;
  EXPECT_NE(idle.out.find("no domain at tier 1 holds a slice of 4: the largest, "), std::string::npos)
      << idle.out;
  EXPECT_NE(idle.out.find(", holds 2 pods"), std::string::npos) << idle.out;
  EXPECT_EQ(idle.out.find("no node has room"), std::string::npos) << idle.out;
  auto too_large = place(request("9"), {"-o", "text", "--semantics", "engine"});
  EXPECT_EQ(too_large.code, 1) << too_large.err;
  EXPECT_NE(too_large.out.find("no node has room for one pod"), std::string::npos) << too_large.out;
}

TEST(PlacementDoc, TheExamplesShowWhatPlacePrints) {
  const std::filesystem::path root(HYPERTOPO_SOURCE_DIR);
  const std::string doc = testing::read_text(root / "docs" / "placement.md");
  const std::string prompt = "$ hypertopo place ";
  const std::string exit_marker = "\n# exit code ";
  std::size_t checked = 0;
  for (std::size_t at = doc.find(prompt); at != std::string::npos; at = doc.find(prompt, at + 1)) {
    const std::size_t eol = doc.find('\n', at);
    ASSERT_NE(eol, std::string::npos);
    const std::string command = doc.substr(at, eol - at);
    if (command.find(" examples/place/") == std::string::npos) continue;
    std::istringstream words(command.substr(2));
    std::vector<std::string> args;
    std::string word;
    words >> word;  // hypertopo
    while (words >> word) args.push_back(word.starts_with("examples/") ? (root / word).string() : word);
    const std::size_t end = doc.find(exit_marker, eol);
    ASSERT_NE(end, std::string::npos) << command << ": no \"# exit code\" line after it";
    const std::string shown = doc.substr(eol + 1, end - eol - 1);
    const int shown_code = std::stoi(doc.substr(end + exit_marker.size(), 3));
    auto run = testing::run_captured(run_cli, args);
    EXPECT_EQ(run.code, shown_code) << command << "\n" << run.err;
    const json documented = json::parse(shown, nullptr, false);
    if (!documented.is_discarded()) {
      EXPECT_EQ(json::parse(run.out, nullptr, false), documented) << command << "\nprints:\n" << run.out;
    } else {
      // Text, or an error: what the terminal shows, with the paths as the doc writes them.
      std::string printed = run.out + run.err;
      for (std::size_t p = printed.find(root.string() + "/"); p != std::string::npos;
           p = printed.find(root.string() + "/", p))
        printed.erase(p, root.string().size() + 1);
      while (!printed.empty() && printed.back() == '\n') printed.pop_back();
      std::string expected = shown;
      while (!expected.empty() && expected.back() == '\n') expected.pop_back();
      EXPECT_EQ(printed, expected) << command;
    }
    ++checked;
  }
  // Every transcript of the page names its files in examples/: none is left out.
  std::size_t commands = 0;
  for (std::size_t at = doc.find(prompt); at != std::string::npos; at = doc.find(prompt, at + 1)) ++commands;
  EXPECT_EQ(checked, commands) << "a `$ hypertopo place` example names files outside examples/";
}

}  // namespace
}  // namespace hypertopo::cli
