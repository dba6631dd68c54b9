// tests/topology/exporters/exporter_trees.h: trees the exporter tests share.
//
//   Tree t = slurm_fixture_shaped_tree();  // core -> 6 spines -> 12 leaves x 8 nodes (srv1101...)
//   Tree d = demo_tree();                  // the built-in demo fabric through the real builder
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "discoverers/demo/demo_fabric.h"
#include "topology/tree.h"
#include "topology/tree_builder.h"

namespace hypertopo::testing {

// The shape of ../shared/fixtures/slurm/expected.slinky-oci-sim-tree.conf: one core over 6 spines,
// 2 leaves per spine, 8 nodes per leaf named srv<spine><leaf><nn>.
inline topology::Tree slurm_fixture_shaped_tree() {
  topology::Tree t;
  auto core = t.add_domain("core", 3, "core");
  for (int s = 1; s <= 6; ++s) {
    auto spine = t.add_domain("spine-" + std::to_string(s), 2, "spine");
    t.attach(core, spine);
    for (int l = 1; l <= 2; ++l) {
      auto leaf = t.add_domain("leaf-" + std::to_string(s) + "-" + std::to_string(l), 1, "leaf");
      t.attach(spine, leaf);
      for (int n = 1; n <= 8; ++n) {
        t.domain(leaf).nodes.push_back("srv" + std::to_string(s) + std::to_string(l) + "0" +
                                       std::to_string(n));
      }
    }
  }
  return t;
}

inline topology::Tree demo_tree() {
  discoverers::DemoFabricSpec spec;
  auto graph = discoverers::generate_demo_fabric(spec);
  auto builder = topology::TreeBuilder::create(discoverers::demo_builder_options());
  EXPECT_TRUE(builder.has_value());
  auto tree = builder->build(graph);
  EXPECT_TRUE(tree.has_value()) << tree.error().message();
  return std::move(*tree);
}

}  // namespace hypertopo::testing
