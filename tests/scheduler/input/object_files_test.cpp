// Files of Kubernetes objects in every form a user hands them over (io/object_reader.h): one object,
// a List, multi-document YAML with comments, `...`, empty documents and a leading `---`, a JSON
// array, several kinds in one file; the cluster and job loaders read each the same way, name the
// document at fault, and leave the kinds they do not read for one warning.
#include <gtest/gtest.h>

#include "io/object_reader.h"
#include "scheduler/input/cluster_loader.h"
#include "scheduler/input/job_loader.h"
#include "tests/support/fixtures.h"

namespace hypertopo::scheduler {
namespace {

using nlohmann::json;

constexpr const char* kNodesYaml = R"(# two Nodes, as `kubectl get nodes n1 -o yaml` and a hand-written one
---
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {rack: r1}
status:
  allocatable: {cpu: "64", nvidia.com/gpu: "8"}
...
---
# nothing but a comment: an empty document
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
---
apiVersion: v1
kind: NodeList
items:
- metadata: {name: n2, labels: {rack: r2}}
  status: {allocatable: {cpu: "32", nvidia.com/gpu: "4"}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: more}
)";

class ObjectFiles : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& text) {
    testing::write_text(dir_.path() / name, text);
    return dir_.path() / name;
  }
  testing::TempDir dir_;
};

TEST(ObjectReader, EveryDocumentIsReadAndListsAreFlattenedWithTheirPlace) {
  auto file = io::parse_objects(kNodesYaml, "nodes.yaml");
  ASSERT_TRUE(file.has_value()) << file.error().message();
  // The comment-only document counts in the numbering but holds nothing.
  ASSERT_EQ(file->documents.size(), 4u);
  ASSERT_EQ(file->objects.size(), 4u);
  EXPECT_EQ(file->objects[0].kind, "Node");
  EXPECT_EQ(file->where(file->objects[0].origin), "document 1");
  EXPECT_EQ(file->objects[1].kind, "ConfigMap");
  EXPECT_EQ(file->where(file->objects[1].origin), "document 3");
  // An item of a NodeList without a kind is a Node.
  EXPECT_EQ(file->objects[2].kind, "Node");
  EXPECT_EQ(file->where(file->objects[2].origin), "document 4 items[0]");
  EXPECT_EQ(file->where(file->objects[3].origin), "document 5");
  EXPECT_EQ(file->kinds_summary(), "2 ConfigMap, 2 Node");

  // A JSON array of objects is a list; a JSON List of one document names items alone.
  auto array = io::parse_objects(R"([{"kind": "Node"}, {"kind": "Pod"}])", "a.json");
  ASSERT_TRUE(array.has_value());
  ASSERT_EQ(array->objects.size(), 2u);
  EXPECT_EQ(array->objects[1].kind, "Pod");
  EXPECT_EQ(array->where(array->objects[1].origin), "items[1]");

  // A document that is no object is named.
  auto scalar = io::parse_objects("kind: Node\n---\njust text\n", "x.yaml");
  ASSERT_FALSE(scalar.has_value());
  EXPECT_NE(scalar.error().message().find("x.yaml: document 2 is not an object"), std::string::npos)
      << scalar.error().message();
}

TEST(ObjectReader, TheLedgerNamesEachKindThatNoReaderOfTheFileTook) {
  auto file = io::parse_objects(kNodesYaml, "nodes.yaml");
  ASSERT_TRUE(file.has_value());
  io::ObjectLedger ledger;
  ledger.record(*file, {"Node", ""});
  EXPECT_EQ(ledger.warnings(),
            std::vector<std::string>{"nodes.yaml: 2 objects of kind ConfigMap ignored (document 3, 5)"});
  // A second reader of the same file that takes ConfigMaps leaves nothing to say.
  EXPECT_EQ(ledger.take("nodes.yaml", "ConfigMap").size(), 2u);
  EXPECT_TRUE(ledger.warnings().empty());
}

TEST_F(ObjectFiles, NodesFromEveryDocumentWithTheOtherKindsInOneWarning) {
  io::ObjectLedger ledger;
  auto nodes = load_nodes(write("nodes.yaml", kNodesYaml), &ledger);
  ASSERT_TRUE(nodes.has_value()) << nodes.error().message();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].name, "n1");
  EXPECT_EQ((*nodes)[1].name, "n2");
  EXPECT_EQ((*nodes)[1].allocatable.at("nvidia.com/gpu"), 4);
  const auto warnings = ledger.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(warnings[0].ends_with("nodes.yaml: 2 objects of kind ConfigMap ignored (document 3, 5)"))
      << warnings[0];

  // The same Nodes as one JSON List read the same.
  json list{{"kind", "List"},
            {"items",
             {{{"kind", "Node"},
               {"metadata", {{"name", "n1"}, {"labels", {{"rack", "r1"}}}}},
               {"status", {{"allocatable", {{"cpu", "64"}, {"nvidia.com/gpu", "8"}}}}}},
              {{"kind", "Node"},
               {"metadata", {{"name", "n2"}, {"labels", {{"rack", "r2"}}}}},
               {"status", {{"allocatable", {{"cpu", "32"}, {"nvidia.com/gpu", "4"}}}}}}}}};
  auto from_json = load_nodes(write("nodes.json", list.dump()));
  ASSERT_TRUE(from_json.has_value()) << from_json.error().message();
  ASSERT_EQ(from_json->size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ((*from_json)[i].name, (*nodes)[i].name);
    EXPECT_EQ((*from_json)[i].labels, (*nodes)[i].labels);
    EXPECT_EQ((*from_json)[i].allocatable, (*nodes)[i].allocatable);
  }
}

TEST_F(ObjectFiles, AnErrorNamesTheDocumentAtFault) {
  auto nodes = load_nodes(write("nodes.yaml", "kind: Node\nmetadata: {name: a}\n---\n---\nkind: Node\n"));
  ASSERT_FALSE(nodes.has_value());
  EXPECT_NE(nodes.error().message().find("nodes.yaml: document 3 has no metadata.name"), std::string::npos)
      << nodes.error().message();
  // In a JSON List of several kinds, the item keeps its own index.
  auto mixed = load_nodes(write("mixed.json", R"({"kind": "List", "items": [{"kind": "ConfigMap"},
      {"kind": "Node", "metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "many"}}}]})"));
  ASSERT_FALSE(mixed.has_value());
  EXPECT_NE(mixed.error().message().find("mixed.json: node a status.allocatable: cpu"), std::string::npos)
      << mixed.error().message();
  auto none = load_nodes(write("none.yaml", "kind: ConfigMap\n---\nkind: Secret\n"));
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().message(), (dir_.path() / "none.yaml").string() +
                                        ": no Node among its 2 documents (it holds 1 ConfigMap, 1 Secret)");
  // A file of one object of another kind keeps today's message.
  auto other = load_nodes(write("other.yaml", "kind: ConfigMap\n"));
  ASSERT_FALSE(other.has_value());
  EXPECT_NE(other.error().message().find("expected a NodeList with items"), std::string::npos);
}

TEST_F(ObjectFiles, HyperNodesFromEveryDocumentOrOneTopologyNeverBoth) {
  const std::string leaf =
      "kind: HyperNode\nmetadata: {name: leaf-%}\n"
      "spec: {tier: 1, tierName: leaf, members: [{type: Node, selector: {exactMatch: "
      "{name: n%}}}]}\n";
  auto doc = [&](char c) {
    std::string s = leaf;
    for (auto at = s.find('%'); at != std::string::npos; at = s.find('%')) s[at] = c;
    return s;
  };
  const std::string spine =
      "kind: HyperNode\nmetadata: {name: spine}\nspec: {tier: 2, tierName: spine, "
      "members: [{type: HyperNode, selector: {regexMatch: {pattern: \"^leaf-\"}}}]}\n";
  auto topology = load_topology(write("hn.yaml", "---\n" + doc('1') + "---\n" + doc('2') + "---\n" + spine));
  ASSERT_TRUE(topology.has_value()) << topology.error().message();
  ASSERT_EQ(topology->hypernodes.size(), 3u);
  EXPECT_EQ(topology->hypernodes[2].tier_name, "spine");

  const std::string levels =
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: t}\n"
      "spec: {levels: [{nodeLabel: rack}]}\n";
  auto kueue =
      load_topology(write("t.yaml", "# the Topology and a ConfigMap\n---\nkind: ConfigMap\n---\n" + levels));
  ASSERT_TRUE(kueue.has_value()) << kueue.error().message();
  EXPECT_EQ(kueue->kind, TopologySource::Kind::kLevels);
  EXPECT_EQ(kueue->levels.levels, std::vector<std::string>{"rack"});

  auto both = load_topology(write("both.yaml", levels + "---\n" + doc('1')));
  ASSERT_FALSE(both.has_value());
  EXPECT_NE(both.error().message().find("a Topology (document 1) and HyperNodes (document 2)"),
            std::string::npos)
      << both.error().message();
}

TEST_F(ObjectFiles, AJobFileOfSeveralDocuments) {
  const std::string group =
      "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g}\n"
      "spec: {schedulingPolicy: {gang: {minCount: 3}}}\n";
  const std::string pod =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: g-0}\n"
      "spec: {containers: [{name: main, resources: {requests: {nvidia.com/gpu: \"2\"}}}]}\n";
  // A PodGroup and its Pod in documents of their own read as the List that holds them.
  io::ObjectLedger ledger;
  auto gang = load_job(write("gang.yaml", group + "---\n" + pod + "---\nkind: ConfigMap\n"), {}, &ledger);
  ASSERT_TRUE(gang.has_value()) << gang.error().message();
  ASSERT_EQ(gang->request.pod_sets.size(), 1u);
  EXPECT_EQ(gang->request.pod_sets[0].count, 3);
  EXPECT_EQ(gang->request.pod_sets[0].per_pod.at("nvidia.com/gpu"), 2);
  EXPECT_EQ(ledger.warnings().size(), 1u);

  const std::string job =
      "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 2\n"
      "  template: {spec: {containers: [{name: c}]}}\n";
  auto one = load_job(write("job.yaml", "# the Job\n---\n" + job + "---\nkind: ConfigMap\n"), {});
  ASSERT_TRUE(one.has_value()) << one.error().message();
  EXPECT_EQ(one->request.pod_sets[0].count, 2);

  auto two = load_job(write("two.yaml", job + "---\n" + job), {});
  ASSERT_FALSE(two.has_value());
  EXPECT_NE(two.error().message().find("a job in each of document 1, document 2; --job places one"),
            std::string::npos)
      << two.error().message();
  auto mixed = load_job(write("mixed.yaml", job + "---\n" + group), {});
  ASSERT_FALSE(mixed.has_value());
  EXPECT_NE(mixed.error().message().find("a Job (document 1) and PodGroups or Pods (document 2)"),
            std::string::npos)
      << mixed.error().message();
  // A document at fault is named.
  auto bad = load_job(write("bad.yaml", "kind: ConfigMap\n---\n" + group + "---\nkind: Pod\nspec: 3\n"), {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("document 2, document 3 read as one List"), std::string::npos)
      << bad.error().message();
}

TEST_F(ObjectFiles, ADocumentReaderRefusesSeveralDocumentsRatherThanReadTheFirst) {
  auto doc = read_document(write("two.yaml", "kind: A\n---\nkind: B\n"));
  ASSERT_FALSE(doc.has_value());
  EXPECT_NE(doc.error().message().find("2 YAML documents where one object is expected"), std::string::npos);
  auto one = read_document(write("one.yaml", "---\n# c\nkind: A\n...\n"));
  ASSERT_TRUE(one.has_value()) << one.error().message();
  EXPECT_EQ((*one)["kind"], "A");
}

}  // namespace
}  // namespace hypertopo::scheduler
