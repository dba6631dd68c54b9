#include "topology/exporters/capacity_dot.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "tests/support/fixtures.h"
#include "tests/topology/exporters/exporter_trees.h"

namespace hypertopo::topology::exporters {
namespace {

// Every node of the tree with `gpus` allocatable and the `used` counts (as
// scheduler::gpu_usage_per_node gives them; that function is tested in tests/scheduler).
GpuUsage gpu_usage(const Tree& t, std::int64_t gpus, const std::map<std::string, std::int64_t>& used) {
  GpuUsage usage;
  for (DomainId id = 0; id < t.size(); ++id) {
    for (const auto& n : t.domain(id).nodes) {
      auto it = used.find(n);
      usage[n] = {.allocatable = gpus, .used = it == used.end() ? 0 : it->second};
    }
  }
  return usage;
}

TEST(GpuUsage, DomainTotalsSumTheNodesUnderTheDomain) {
  Tree t = testing::slurm_fixture_shaped_tree();
  const GpuUsage usage = gpu_usage(t, 8, {{"srv1101", 8}, {"srv1102", 4}});
  auto leaf = *t.find("leaf-1-1");
  auto totals = domain_gpu_totals(t, leaf, usage);
  EXPECT_EQ(totals.allocatable, 64);
  EXPECT_EQ(totals.used, 12);
  EXPECT_EQ(totals.free(), 52);
  EXPECT_EQ(domain_gpu_totals(t, *t.find("core"), usage).allocatable, 96 * 8);
}

TEST(CapacityDot, ColouredWithLegendOrPlainWithoutData) {
  Tree t = testing::slurm_fixture_shaped_tree();
  std::map<std::string, std::int64_t> used;
  for (int n = 1; n <= 8; ++n) used["srv110" + std::to_string(n)] = 8;
  const std::string dot = render_capacity_dot(t, gpu_usage(t, 8, used));
  EXPECT_NE(dot.find("cluster_legend"), std::string::npos);
  // Graphviz line breaks inside labels stay "\n" (an escaped "\\n" would print literally).
  EXPECT_NE(dot.find("leaf-1-1\\nleaf (tier 1)\\n8 nodes"), std::string::npos) << dot.substr(0, 600);
  EXPECT_EQ(dot.find("\\\\n"), std::string::npos);
  EXPECT_NE(dot.find("GPUs 64/64 used\", fillcolor=\"#e06666\""), std::string::npos) << "full leaf is red";
  EXPECT_NE(dot.find("GPUs 0/64 used\", fillcolor=\"#93c47d\""), std::string::npos) << "idle leaf is green";
  const std::string plain = render_capacity_dot(t, {});
  EXPECT_EQ(plain.find("cluster_legend"), std::string::npos);
  EXPECT_EQ(plain.find("GPUs"), std::string::npos);
}

// A degraded domain keeps its GPU fill and gets the warning frame and its reason; without GPU
// data it is filled in the warning colour. A legend entry explains the frame.
TEST(CapacityDot, DegradedDomainsAreFramedWithTheirReason) {
  Tree t = testing::slurm_fixture_shaped_tree();
  const auto leaf = *t.find("leaf-1-1");
  t.domain(leaf).health.assessed = true;
  t.domain(leaf).health.bad_links.push_back(
      {.reason = HealthReason::kMissingUplinks, .end_a = "leaf-1-1", .end_b = "spine-2", .uplink = true});
  const std::string plain = render_capacity_dot(t, {});
  const auto at = plain.find("\"d:leaf-1-1\" [label=");
  ASSERT_NE(at, std::string::npos) << plain;
  const std::string line = plain.substr(at, plain.find('\n', at) - at);
  EXPECT_NE(line.find("DEGRADED MissingUplinks"), std::string::npos) << line;
  EXPECT_NE(line.find("color=\"#d94801\", penwidth=3, fillcolor=\"#fdae61\""), std::string::npos) << line;
  EXPECT_NE(plain.find("cluster_health"), std::string::npos);
  const std::string other = plain.substr(plain.find("\"d:leaf-1-2\" [label="), 80);
  EXPECT_EQ(other.substr(0, other.find('\n')).find("DEGRADED"), std::string::npos) << other;

  const std::string coloured = render_capacity_dot(t, gpu_usage(t, 8, {}));
  const auto c = coloured.find("\"d:leaf-1-1\" [label=");
  const std::string cline = coloured.substr(c, coloured.find('\n', c) - c);
  EXPECT_NE(cline.find("fillcolor=\"#93c47d\", color=\"#d94801\", penwidth=3"), std::string::npos) << cline;

  // The legend's swatch looks like the degraded boxes: the same frame; the warning fill where they
  // have it, none where their fill is the GPU use (never a colour of the use legend).
  auto swatch = [](const std::string& dot) {
    const auto s = dot.find("\"legend:degraded\" [label=");
    return s == std::string::npos ? std::string() : dot.substr(s, dot.find('\n', s) - s);
  };
  EXPECT_NE(swatch(plain).find("color=\"#d94801\", penwidth=3, fillcolor=\"#fdae61\""), std::string::npos)
      << swatch(plain);
  const std::string coloured_swatch = swatch(coloured);
  EXPECT_NE(coloured_swatch.find("color=\"#d94801\", penwidth=3, fillcolor=\"#ffffff\""), std::string::npos)
      << coloured_swatch;
  for (const char* use : {"#93c47d", "#ffd966", "#f6b26b", "#e06666", "#d9d9d9", "#fdae61"})
    EXPECT_EQ(coloured_swatch.find(use), std::string::npos) << use << " in " << coloured_swatch;
}

TEST(CapacityDot, RendersWithGraphviz) {
  HT_REQUIRE(std::system("command -v dot >/dev/null 2>&1") == 0, "graphviz 'dot'");
  Tree t = testing::demo_tree();
  const GpuUsage usage = gpu_usage(t, 8, {{t.nodes_under(0).front(), 6}});
  const auto dir = std::filesystem::temp_directory_path() / ("ht-dot-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  testing::write_text(dir / "tree.dot", render_capacity_dot(t, usage));
  const std::string cmd = "dot -Tsvg " + (dir / "tree.dot").string() + " -o " + (dir / "tree.svg").string();
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_GT(std::filesystem::file_size(dir / "tree.svg"), 1000u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hypertopo::topology::exporters
