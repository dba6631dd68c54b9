// HyperNode rendering: the object shape Volcano reads, and YAML that stays typed for YAML 1.1 readers.
#include "topology/hypernode.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace hypertopo::topology {
namespace {

Tree sample() {
  Tree t;
  t.source = "hypertopo";
  auto a = t.add_domain("leaf-0x2c5eab0300b87b40", 1, "leaf");
  auto b = t.add_domain("leaf-b", 1, "leaf");
  auto top = t.add_domain("spine-x", 2, "spine");
  t.domain(a).nodes = {"n2", "n1"};
  t.domain(b).nodes = {"true"};
  t.domain(top).labels["example.com/rack"] = "r1";
  t.attach(top, b);
  t.attach(top, a);
  return t;
}

TEST(HyperNodeRender, LowestTierHasNodeMembersAboveHyperNodeMembers) {
  auto t = sample();
  auto leaf = render_hypernode(t, 0);
  EXPECT_EQ(leaf["apiVersion"], "topology.volcano.sh/v1alpha1");
  EXPECT_EQ(leaf["kind"], "HyperNode");
  EXPECT_EQ(leaf["metadata"]["name"], "leaf-0x2c5eab0300b87b40");
  EXPECT_EQ(leaf["metadata"]["labels"]["volcano.sh/network-topology-source"], "hypertopo");
  EXPECT_EQ(leaf["metadata"]["labels"]["app.kubernetes.io/managed-by"], "hypertopo");
  EXPECT_EQ(leaf["spec"]["tier"], 1);
  EXPECT_EQ(leaf["spec"]["tierName"], "leaf");
  ASSERT_EQ(leaf["spec"]["members"].size(), 2u);
  EXPECT_EQ(leaf["spec"]["members"][0]["type"], "Node");
  EXPECT_EQ(leaf["spec"]["members"][0]["selector"]["exactMatch"]["name"], "n1");  // sorted
  EXPECT_FALSE(leaf.contains("status"));

  auto top = render_hypernode(t, 2);
  EXPECT_EQ(top["metadata"]["labels"]["example.com/rack"], "r1");
  ASSERT_EQ(top["spec"]["members"].size(), 2u);
  EXPECT_EQ(top["spec"]["members"][0]["type"], "HyperNode");
  EXPECT_EQ(top["spec"]["members"][0]["selector"]["exactMatch"]["name"], "leaf-0x2c5eab0300b87b40");
  EXPECT_EQ(top["spec"]["members"][0]["selector"].size(), 1u);
}

TEST(HyperNodeRender, ListIsAV1ListOrderedByTierThenName) {
  auto list = render_hypernode_list(sample());
  EXPECT_EQ(list["apiVersion"], "v1");
  EXPECT_EQ(list["kind"], "List");
  ASSERT_EQ(list["items"].size(), 3u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "leaf-0x2c5eab0300b87b40");
  EXPECT_EQ(list["items"][1]["metadata"]["name"], "leaf-b");
  EXPECT_EQ(list["items"][2]["metadata"]["name"], "spine-x");
}

TEST(HyperNodeRender, YamlDocumentsRoundTripWithTypesKept) {
  auto t = sample();
  auto text = render_hypernodes_yaml(t);
  auto docs = YAML::LoadAll(text);
  ASSERT_EQ(docs.size(), 3u);
  auto list = render_hypernode_list(t);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const auto& item = list["items"][i];
    EXPECT_EQ(docs[i]["metadata"]["name"].as<std::string>(), item["metadata"]["name"].get<std::string>());
    EXPECT_EQ(docs[i]["spec"]["tier"].as<int>(), item["spec"]["tier"].get<int>());
    EXPECT_EQ(docs[i]["spec"]["members"].size(), item["spec"]["members"].size());
  }
  // Strings that a YAML 1.1 reader would turn into numbers or booleans are quoted.
  EXPECT_NE(text.find("\"leaf-0x2c5eab0300b87b40\""), std::string::npos);
  EXPECT_NE(text.find("name: \"true\""), std::string::npos);
  EXPECT_NE(text.find("tier: 2"), std::string::npos);
}

}  // namespace
}  // namespace hypertopo::topology
