// FabricGraph's one namespace of vertex ids, whichever way vertices come in: looked up
// (add_switch / add_endpoint) or added as known-new (add_new_vertex, the UFM graph's way).
#include "topology/fabric_graph.h"

#include <gtest/gtest.h>

namespace hypertopo::topology {
namespace {

TEST(FabricGraph, VerticesAddedAsNewAreFoundAndMergedLikeLookedUpOnes) {
  FabricGraph g;
  const VertexId leaf = g.add_switch("0x248a070300f88fe0", "leaf-1");
  const VertexId hca = g.add_new_vertex(VertexKind::kEndpoint, "0xb8599f03000a77d0", "");
  const VertexId spine = g.add_new_vertex(VertexKind::kEndpoint, "0x248a070300f88fe1", "");
  ASSERT_EQ(g.vertex_count(), 3u);
  EXPECT_EQ(g.find("0x248a070300f88fe0"), leaf);
  EXPECT_EQ(g.find("0xb8599f03000a77d0"), hca);
  EXPECT_FALSE(g.find("0xb8599f03000a77d1").has_value());

  // A vertex added as new is the one a later lookup by id merges into: it takes the description
  // it lacked and becomes a switch when declared one.
  EXPECT_EQ(g.add_endpoint("0xb8599f03000a77d0", "node-1 mlx5_0"), hca);
  EXPECT_EQ(g.vertex(hca).description, "node-1 mlx5_0");
  EXPECT_EQ(g.add_switch("0x248a070300f88fe1", "spine-1"), spine);
  EXPECT_EQ(g.vertex(spine).kind, VertexKind::kSwitch);
  EXPECT_EQ(g.vertex(spine).description, "spine-1");
  EXPECT_EQ(g.vertex_count(), 3u);

  // Copies and moves keep the index: lookups in them name the same vertices.
  FabricGraph copy = g;
  const VertexId more = copy.add_new_vertex(VertexKind::kSwitch, "0x248a070300f88fe2", "core-1");
  EXPECT_EQ(copy.find("0x248a070300f88fe2"), more);
  EXPECT_EQ(copy.find("0xb8599f03000a77d0"), hca);
  EXPECT_FALSE(g.find("0x248a070300f88fe2").has_value());
  FabricGraph moved = std::move(copy);
  EXPECT_EQ(moved.add_switch("0x248a070300f88fe2", ""), more);
  EXPECT_EQ(moved.vertex_count(), 4u);
}

TEST(FabricGraph, ARepeatedNewIdLeavesLookupsOnTheFirstVertex) {
  FabricGraph g;
  const VertexId first = g.add_new_vertex(VertexKind::kSwitch, "sw", "first");
  g.add_new_vertex(VertexKind::kSwitch, "sw", "second");
  EXPECT_EQ(g.find("sw"), first);
  EXPECT_EQ(g.add_switch("sw", "third"), first);
  EXPECT_EQ(g.vertex_count(), 2u);
}

}  // namespace
}  // namespace hypertopo::topology
