// API writes of a 1,000-node, 8-rail fabric against the loopback API server (no real API server
// here; the loopback one counts every request it gets): first sync, unchanged second sync, one node
// added. The numbers are printed for the acceptance and asserted where they are rules.
#include <gtest/gtest.h>

#include <iostream>

#include "agent/reconciler/hypernode_reconciler.h"
#include "discoverers/demo/demo_fabric.h"
#include "tests/agent/reconciler/reconciler_harness.h"
#include "topology/tree_builder.h"

namespace hypertopo::agent {
namespace {

using ReconcileNumbers = ReconcilerHarness;

TEST_F(ReconcileNumbers, ThousandNodeEightRailFabric) {
  discoverers::DemoFabricSpec spec;
  spec.scalable_units = 40;
  spec.hosts_per_su = 25;
  spec.rails = 8;
  spec.sus_per_pod = 4;
  spec.firmware_default_cas = 0;
  auto graph = discoverers::generate_demo_fabric(spec);
  auto builder = topology::TreeBuilder::create(discoverers::demo_builder_options());
  ASSERT_TRUE(builder) << builder.error().message();
  auto built = builder->build(graph);
  ASSERT_TRUE(built) << built.error().message();
  topology::Tree tree = std::move(*built);
  ASSERT_EQ(tree.node_count(), 1000u);
  auto r = reconciler();

  auto first = r.reconcile(tree, true);
  ASSERT_TRUE(first) << first.error().message();
  ASSERT_EQ(first->failed, 0);
  EXPECT_EQ(static_cast<std::size_t>(first->created), tree.size());
  std::cout << "[reconcile-numbers] fabric: " << tree.node_count() << " nodes, " << spec.rails << " rails, "
            << tree.size() << " HyperNodes\n";
  std::cout << "[reconcile-numbers] first sync: " << server_->writes()
            << " writes (creates=" << server_->count("create") << ", status=" << first->writes["status/ok"]
            << ")\n";
  EXPECT_EQ(server_->writes(), first->write_attempts());

  server_->reset_counts();
  auto second = r.reconcile(tree, true);
  ASSERT_TRUE(second);
  std::cout << "[reconcile-numbers] unchanged second sync: " << server_->writes() << " writes ("
            << server_->requests() << " requests, all reads)\n";
  EXPECT_EQ(server_->writes(), 0);
  EXPECT_EQ(static_cast<std::size_t>(second->unchanged), tree.size());

  // One node joins the first scalable unit.
  topology::DomainId su = 0;
  for (topology::DomainId id = 0; id < tree.size(); ++id) {
    if (!tree.domain(id).nodes.empty()) {
      su = id;
      break;
    }
  }
  tree.domain(su).nodes.push_back("demo-added-node-0001");
  server_->reset_counts();
  auto third = r.reconcile(tree, true);
  ASSERT_TRUE(third);
  std::cout << "[reconcile-numbers] one node added: " << server_->writes() << " writes ("
            << third->summary_line() << "; spec updates=" << third->writes["update/ok"]
            << ", status=" << third->writes["status/ok"] << ")\n";
  // The SU's spec and its count; the domains above keep their members, so their counts stay
  // (Volcano counts members, not the hosts below them).
  EXPECT_EQ(server_->writes(), 2);
}

}  // namespace
}  // namespace hypertopo::agent
