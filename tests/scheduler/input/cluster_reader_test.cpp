// The cluster reader is written once over io/json_view.h: simdjson's DOM and nlohmann::json must
// give it the same model and the same error, on the examples, on every shape it reads, and on
// documents it refuses. The files a user passes go the simdjson way unless simdjson refuses them.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "scheduler/input/cluster_loader.h"
#include "tests/support/fixtures.h"

namespace hypertopo::scheduler {
namespace {

using hypertopo::testing::TempDir;
using hypertopo::testing::write_text;
using nlohmann::json;

// Every field of the models as text, so that two models compare in one EXPECT_EQ and a difference
// shows where it is.
std::string describe(const ResourceAmounts& amounts) {
  std::ostringstream out;
  for (const auto& [k, v] : amounts) out << k << "=" << v << ",";
  return out.str();
}

std::string describe(const std::map<std::string, std::string>& map) {
  std::ostringstream out;
  for (const auto& [k, v] : map) out << k << "=" << v << ",";
  return out.str();
}

std::string describe(const std::vector<NodeSpec>& nodes) {
  std::ostringstream out;
  for (const auto& n : nodes) {
    out << n.name << " labels{" << describe(n.labels) << "} alloc{" << describe(n.allocatable) << "} taints{";
    for (const auto& t : n.taints) out << t.key << "=" << t.value << ":" << t.effect << ",";
    out << "} ready=" << n.ready << " unschedulable=" << n.unschedulable << "\n";
  }
  return out.str();
}

std::string describe(const std::vector<BoundPod>& pods) {
  std::ostringstream out;
  for (const auto& p : pods) out << p.name << "@" << p.node << " {" << describe(p.requests) << "}\n";
  return out.str();
}

std::string describe(const TopologySource& topology) {
  std::ostringstream out;
  out << "kind=" << static_cast<int>(topology.kind) << " levels " << topology.levels.name << ":";
  for (const auto& l : topology.levels.levels) out << l << ",";
  out << "\n";
  for (const auto& h : topology.hypernodes) {
    out << h.name << " tier=" << h.tier << " tierName=" << h.tier_name << "\n";
    for (const auto& m : h.members) {
      const auto& s = m.selector;
      out << "  type=" << static_cast<int>(m.type) << " kind=" << static_cast<int>(s.kind)
          << " exact=" << s.exact_name << " regex=" << s.regex_pattern << " labels{"
          << describe(s.match_labels) << "}";
      for (const auto& e : s.match_expressions) {
        out << " " << e.key << " " << e.op << " [";
        for (const auto& v : e.values) out << v << ",";
        out << "]";
      }
      out << "\n";
    }
  }
  return out.str();
}

template <class T>
std::string outcome(const std::expected<T, Error>& r) {
  return r ? "ok:\n" + describe(*r) : "error: " + r.error().message();
}

// The same text through both parsers: the outcomes (model or error message) must be equal.
struct BothWays {
  std::string nlohmann_way, simdjson_way;
};

template <class ParseJson, class ParseDom>
BothWays both_ways(const std::string& text, ParseJson parse_json, ParseDom parse_dom) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const simdjson::padded_string padded(text);
  EXPECT_EQ(parser.parse(padded).get(root), simdjson::SUCCESS) << text;
  return {outcome(parse_json(json::parse(text))), outcome(parse_dom(root))};
}

BothWays nodes_both_ways(const std::string& text) {
  return both_ways(
      text, [](const json& doc) { return parse_nodes(doc); },
      [](const simdjson::dom::element& doc) { return parse_nodes_dom(doc); });
}
BothWays pods_both_ways(const std::string& text) {
  return both_ways(
      text, [](const json& doc) { return parse_pods(doc); },
      [](const simdjson::dom::element& doc) { return parse_pods_dom(doc); });
}
BothWays topology_both_ways(const std::string& text) {
  return both_ways(
      text, [](const json& doc) { return parse_topology(doc); },
      [](const simdjson::dom::element& doc) { return parse_topology_dom(doc); });
}

TEST(ClusterReader, TheExamplesReadTheSameFromBothParsers) {
  const std::string place = "examples/place/", simulate = "examples/simulate/";
  for (const std::string& file : {place + "nodes.json", simulate + "nodes.json"}) {
    const auto way = nodes_both_ways(hypertopo::testing::read_text(file));
    EXPECT_TRUE(way.simdjson_way.starts_with("ok:")) << file << ": " << way.simdjson_way;
    EXPECT_EQ(way.simdjson_way, way.nlohmann_way) << file;
    EXPECT_EQ(outcome(load_nodes(file)), way.simdjson_way) << file;
  }
  const auto pods = pods_both_ways(hypertopo::testing::read_text(place + "pods.json"));
  EXPECT_TRUE(pods.simdjson_way.starts_with("ok:\n")) << pods.simdjson_way;
  EXPECT_EQ(pods.simdjson_way, pods.nlohmann_way);
  EXPECT_EQ(outcome(load_pods(place + "pods.json")), pods.simdjson_way);
  const auto hypernodes = topology_both_ways(hypertopo::testing::read_text(simulate + "hypernodes.json"));
  EXPECT_TRUE(hypernodes.simdjson_way.starts_with("ok:")) << hypernodes.simdjson_way;
  EXPECT_EQ(hypernodes.simdjson_way, hypernodes.nlohmann_way);
  EXPECT_EQ(outcome(load_topology(simulate + "hypernodes.json")), hypernodes.simdjson_way);
}

// Values that are not strings where strings are read (label values, quantities, expression
// values) print as nlohmann prints them; of duplicate keys the last counts, as in nlohmann.
TEST(ClusterReader, EveryShapeReadsTheSameFromBothParsers) {
  const auto nodes = nodes_both_ways(R"({"kind": "NodeList", "items": [
    {"metadata": {"name": "n1", "labels": {"z": "last", "a": "first", "a": "again", "rack": "r1"}},
     "spec": {"unschedulable": true, "taints": [{"key": "gpu", "value": "bad", "effect": "NoSchedule"}]},
     "status": {"allocatable": {"cpu": 64, "memory": "512Gi", "pods": 110, "nvidia.com/gpu": "8", "big": 1.5e3},
                "conditions": [{"type": "Ready", "status": "True"}, {"type": "Ready", "status": "False"}]}},
    {"kind": "Node", "metadata": {"name": "n2"}, "status": {"conditions": [{"type": "DiskPressure", "status": "True"}]}},
    {"metadata": {"name": "n3", "labels": {}}, "spec": null, "status": null}]})");
  EXPECT_TRUE(nodes.simdjson_way.starts_with("ok:")) << nodes.simdjson_way;
  EXPECT_NE(nodes.simdjson_way.find("a=again,rack=r1,z=last"), std::string::npos) << nodes.simdjson_way;
  EXPECT_NE(nodes.simdjson_way.find(",cpu=64000,"), std::string::npos) << nodes.simdjson_way;
  EXPECT_EQ(nodes.simdjson_way, nodes.nlohmann_way);

  const auto one = nodes_both_ways(R"({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "solo"}})");
  EXPECT_TRUE(one.simdjson_way.starts_with("ok:\nsolo ")) << one.simdjson_way;
  EXPECT_EQ(one.simdjson_way, one.nlohmann_way);

  const auto pods = pods_both_ways(R"({"kind": "List", "items": [
    {"metadata": {"name": "a", "namespace": "ml"}, "spec": {"nodeName": "n1",
      "containers": [{"name": "c1", "resources": {"requests": {"cpu": 1, "nvidia.com/gpu": "2"}}},
                     {"name": "c2", "resources": {"requests": {"cpu": "500m", "memory": 2.5e9}}}],
      "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "4"}}}],
      "overhead": {"cpu": "250m"}}, "status": {"phase": "Running"}},
    {"metadata": {"name": "done"}, "spec": {"nodeName": "n1"}, "status": {"phase": "Failed"}},
    {"metadata": null, "spec": {"nodeName": "n2", "containers": null}},
    {"metadata": {"name": "pending"}, "spec": {"containers": []}, "status": {"phase": "Pending"}}]})");
  EXPECT_TRUE(pods.simdjson_way.starts_with("ok:\nml/a@n1 {cpu=4250,memory=2500000000,nvidia.com/gpu=2,"))
      << pods.simdjson_way;
  EXPECT_EQ(pods.simdjson_way, pods.nlohmann_way);

  const auto hypernodes = topology_both_ways(R"({"kind": "HyperNodeList", "items": [
    {"metadata": {"name": "leaf-a"}, "spec": {"tier": "1", "tierName": "leaf",
      "members": [{"type": "Node", "selector": {"regexMatch": {"pattern": "^a-"}}}]}},
    {"metadata": {"name": "leaf-b"}, "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"labelMatch": {
      "matchLabels": {"rack": "b", "size": 3, "ratio": 0.25, "on": true, "off": null, "deep": {"k": [1, "x"]}},
      "matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100", 100, 1e2, -0.0, 18446744073709551615]},
                           {"key": "zone", "operator": "Exists", "values": null}]}}}]}},
    {"metadata": {"name": "spine"}, "spec": {"tier": 2, "tierName": "spine",
      "members": [{"type": "HyperNode", "selector": {"exactMatch": {"name": "leaf-a"}}},
                  {"type": "HyperNode", "selector": {"exactMatch": {"name": "leaf-b"}}}]}}]})");
  EXPECT_TRUE(hypernodes.simdjson_way.starts_with("ok:")) << hypernodes.simdjson_way;
  EXPECT_NE(hypernodes.simdjson_way.find(R"(deep={"k":[1,"x"]},off=null,on=true,rack=b,ratio=0.25,size=3,)"),
            std::string::npos)
      << hypernodes.simdjson_way;
  EXPECT_NE(hypernodes.simdjson_way.find("[a100,100,100.0,-0.0,18446744073709551615,]"), std::string::npos)
      << hypernodes.simdjson_way;
  EXPECT_EQ(hypernodes.simdjson_way, hypernodes.nlohmann_way);

  const auto levels = topology_both_ways(R"({"kind": "Topology", "metadata": {"name": "racks"},
    "spec": {"levels": [{"nodeLabel": "block"}, {"nodeLabel": "kubernetes.io/hostname"}]}})");
  EXPECT_EQ(levels.simdjson_way, "ok:\nkind=1 levels racks:block,kubernetes.io/hostname,\n");
  EXPECT_EQ(levels.simdjson_way, levels.nlohmann_way);
}

TEST(ClusterReader, RefusedDocumentsGiveTheSameMessageFromBothParsers) {
  const std::vector<std::pair<std::string, std::string>> bad_nodes = {
      {R"([1])", "expected a NodeList (kubectl get nodes -o json) or a Node"},
      {R"({"kind": 3})", "the document: kind must be a string, got number"},
      {R"({"kind": "NodeList"})",
       "expected a NodeList with items (kubectl get nodes -o json), got kind 'NodeList'"},
      {R"({"items": [{"metadata": {"name": "n1", "labels": {"b": 1, "a": [2]}}}]})",
       "Node n1 metadata: labels.a must be a string"},
      {R"({"items": [{"metadata": {"name": 5}}]})", "items[0] metadata: name must be a string, got number"},
      {R"({"items": [{"metadata": {"name": "n1"}, "spec": {"unschedulable": "yes"}}]})",
       "Node n1 spec: unschedulable must be true or false, got string"},
      {R"({"items": [{"metadata": {"name": "n1"}, "spec": {"taints": [{"key": {}}]}}]})",
       "Node n1 spec.taints[0]: key must be a string, got object"},
      {R"({"items": [{"metadata": {"name": "n1"}, "status": {"conditions": [{"type": "Ready", "status": true}]}}]})",
       "Node n1 status.conditions[0]: status must be a string, got boolean"},
      {R"({"items": [{"metadata": {"name": "n1"}, "status": {"allocatable": {"memory": "30GB"}}},
                     {"metadata": {}}]})",
       "items[1] has no metadata.name"},
      {R"({"items": [{"metadata": {"name": "n1"}, "status": {"allocatable": {"memory": "30GB"}}}]})",
       "node n1 status.allocatable: memory: malformed quantity '30GB' (unknown suffix 'GB')"},
      {R"({"items": [{"kind": "Pod", "metadata": {"name": "n1"}}]})",
       "items[0] has kind 'Pod', expected Node"},
  };
  for (const auto& [text, message] : bad_nodes) {
    const auto way = nodes_both_ways(text);
    EXPECT_EQ(way.simdjson_way, "error: " + message) << text;
    EXPECT_EQ(way.simdjson_way, way.nlohmann_way) << text;
  }
  const std::vector<std::pair<std::string, std::string>> bad_pods = {
      {R"({"kind": "Deployment", "items": []})",
       "expected a PodList with items (kubectl get pods -o json) or a Pod, got kind 'Deployment'"},
      {R"({"items": [[]]})", "items[0]: a Pod must be an object"},
      {R"({"items": [{"kind": "Node"}]})", "items[0]: expected kind Pod, got 'Node'"},
      {R"({"items": [{"metadata": {"name": "p", "namespace": "x"}, "spec": {"nodeName": ["n1"]}}]})",
       "pod x/p spec: nodeName must be a string, got array"},
      {R"({"items": [{"metadata": {"name": "p"}, "spec": {"nodeName": "n1", "containers": [{"name": "c",
          "resources": {"requests": {"nvidia.com/gpu": "500m"}}}]}}]})",
       "pod /p container c resources.requests: nvidia.com/gpu: '500m' is a fraction of a device; extended "
       "resources are whole numbers"},
      {R"({"items": [{"metadata": {"name": "p"}, "spec": {"nodeName": "n1", "initContainers": [7]}}]})",
       "pod /p init container  must be an object"},
      {R"({"items": [{"metadata": {"name": "p"}, "spec": {"nodeName": "n1", "overhead": {"cpu": "lots"}}}]})",
       "pod /p overhead: cpu: malformed quantity 'lots'"},
  };
  for (const auto& [text, message] : bad_pods) {
    const auto way = pods_both_ways(text);
    EXPECT_TRUE(way.simdjson_way.starts_with("error: " + message)) << text << "\n" << way.simdjson_way;
    EXPECT_EQ(way.simdjson_way, way.nlohmann_way) << text;
  }
  const std::string member =
      R"({"kind": "HyperNode", "metadata": {"name": "h"}, "spec": {"tier": 1, "members": [)";
  const std::vector<std::pair<std::string, std::string>> bad_topologies = {
      {R"({"kind": "Topology", "spec": {"levels": []}})", "Topology default: no spec.levels"},
      {R"({"kind": "Topology", "spec": {"levels": [{"nodeLabel": ""}]}})",
       "Topology default: spec.levels[0].nodeLabel is required"},
      {R"({"kind": "Topology", "spec": {"levels": {}}})",
       "Topology default spec: levels must be a list, got object"},
      {R"({"kind": "Things"})",
       "expected kind Topology, HyperNode or a list of HyperNodes, got kind 'Things'"},
      {R"({"items": [{"spec": {}}]})", "items[0]: HyperNode without metadata.name"},
      {R"({"kind": "HyperNode", "metadata": {"name": "h"}, "spec": {"tier": 1.5, "members": []}})",
       "HyperNode h: spec.tier must be an integer, got 1.5"},
      {R"({"kind": "HyperNode", "metadata": {"name": "h"}, "spec": {"tier": "x1", "members": []}})",
       "HyperNode h: spec.tier 'x1' is not an integer"},
      // The CRD's int32 (minimum 0): never wrapped into range.
      {R"({"kind": "HyperNode", "metadata": {"name": "h"}, "spec": {"tier": 4294967297, "members": []}})",
       "HyperNode h: spec.tier must be an integer from 0 to 2147483646, got 4294967297"},
      {R"({"kind": "HyperNode", "metadata": {"name": "h"}, "spec": {"tier": 9223372036854775809, "members": []}})",
       "HyperNode h: spec.tier must be an integer from 0 to 2147483646, got 9223372036854775809"},
      // The top int32 leaves the cluster, one tier above every HyperNode, no tier of its own.
      {R"({"kind": "HyperNode", "metadata": {"name": "h"}, "spec": {"tier": 2147483647, "members": []}})",
       "HyperNode h: spec.tier must be an integer from 0 to 2147483646, got 2147483647"},
      {R"({"kind": "HyperNode", "metadata": {"name": "h"}, "spec": {"tier": "-5", "members": []}})",
       "HyperNode h: spec.tier must be an integer from 0 to 2147483646, got '-5'"},
      {R"({"kind": "HyperNode", "metadata": {"name": "h"}, "spec": {"tier": 1, "members": {}}})",
       "HyperNode h: spec.members must list at least one member"},
      {member + R"({"type": "Pod"}]}})",
       "HyperNode h spec.members[0]: type must be Node or HyperNode, got 'Pod'"},
      {member + R"({"type": "Node", "selector": {}}]}})",
       "HyperNode h spec.members[0]: selector needs exactly one of exactMatch, regexMatch, labelMatch"},
      {member + R"({"type": "Node", "selector": {"labelMatch": "rack=a"}}]}})",
       "HyperNode h spec.members[0]: selector.labelMatch must be an object"},
      {member + R"({"type": "Node", "selector": {"labelMatch": {"matchExpressions": {"key": "a"}}}}]}})",
       "HyperNode h spec.members[0]: selector.labelMatch.matchExpressions must be a list"},
      {member + R"({"type": "Node", "selector": {"labelMatch": {"matchExpressions": ["a"]}}}]}})",
       "HyperNode h spec.members[0]: selector.labelMatch.matchExpressions entries must be objects"},
      {member + R"({"type": "Node", "selector": {"labelMatch": {"matchExpressions": [{"key": "a",
          "operator": "In", "values": "b"}]}}}]}})",
       "HyperNode h spec.members[0]: matchExpressions values must be a list"},
      {member + R"({"type": "Node", "selector": {"labelMatch": {"matchExpressions": [{"key": "a",
          "operator": "Gt"}]}}}]}})",
       "HyperNode h spec.members[0]: unknown matchExpressions operator 'Gt'"},
  };
  for (const auto& [text, message] : bad_topologies) {
    const auto way = topology_both_ways(text);
    EXPECT_EQ(way.simdjson_way, "error: " + message) << text;
    EXPECT_EQ(way.simdjson_way, way.nlohmann_way) << text;
  }
}

// What simdjson refuses is read as before: nlohmann's verdict and message, naming the file.
TEST(ClusterReader, FilesSimdjsonRefusesAreReadTheCheckedWay) {
  TempDir dir;
  const auto path = dir.path() / "nodes.json";
  const std::string path_text = path.string();
  auto node_with_label = [](const std::string& value) {
    return R"({"kind": "NodeList", "items": [{"metadata": {"name": "n1", "labels": {"x": )" + value + "}}}]}";
  };
  // An integer beyond 64 bits: nlohmann keeps it as a double, so the file reads as before.
  write_text(path, R"({"kind": "NodeList", "metadata": {"generation": 18446744073709551616},
                       "items": [{"metadata": {"name": "n1"}}]})");
  auto big = load_nodes(path);
  ASSERT_TRUE(big) << big.error().message();
  EXPECT_EQ(big->at(0).name, "n1");
  const auto hypernodes = dir.path() / "hypernodes.json";
  write_text(hypernodes, R"({"kind": "HyperNode", "metadata": {"name": "h"}, "spec": {"tier": 1, "members": [
      {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"x": 18446744073709551616}}}}]}})");
  auto wide = load_topology(hypernodes);
  ASSERT_TRUE(wide) << wide.error().message();
  EXPECT_EQ(wide->hypernodes.at(0).members.at(0).selector.match_labels.at("x"), "1.8446744073709552e+19");

  write_text(path, node_with_label("1e400"));
  auto huge = load_nodes(path);
  ASSERT_FALSE(huge);
  EXPECT_TRUE(huge.error().message().starts_with(path_text + ": not valid JSON: ")) << huge.error().message();

  write_text(path, node_with_label("\"gpu-\xff\""));
  auto not_utf8 = load_nodes(path);
  ASSERT_FALSE(not_utf8);
  EXPECT_TRUE(not_utf8.error().message().starts_with(path_text + ": not valid JSON: "))
      << not_utf8.error().message();

  write_text(path, node_with_label(std::string(200, '[') + std::string(200, ']')));
  auto deep = load_nodes(path);
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().message(), path_text + ": nested deeper than 128 levels");

  // At the depth limit exactly (five levels of list and objects around the label) both take it.
  write_text(path, node_with_label(std::string(123, '[') + std::string(123, ']')));
  auto limit = load_nodes(path);
  ASSERT_FALSE(limit);
  EXPECT_EQ(limit.error().message(), path_text + ": Node n1 metadata: labels.x must be a string");
  write_text(path, node_with_label(std::string(124, '[') + std::string(124, ']')));
  auto past = load_nodes(path);
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().message(), path_text + ": nested deeper than 128 levels");

  // A reader's error names the file, whichever parser read it.
  write_text(path, R"({"kind": "NodeList", "items": [{"metadata": {"name": "n1"}, "spec": {"taints": 1}}]})");
  auto typed = load_nodes(path);
  ASSERT_FALSE(typed);
  EXPECT_EQ(typed.error().message(), path_text + ": Node n1 spec: taints must be a list, got number");
}

}  // namespace
}  // namespace hypertopo::scheduler
