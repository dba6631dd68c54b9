#include "topology/exporters/slurm_topology.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/support/fixtures.h"
#include "tests/topology/exporters/exporter_trees.h"

namespace hypertopo::topology::exporters {
namespace {

// One parsed topology.conf line: SwitchName=... or BlockName=..., with its key=value fields.
struct ConfLine {
  std::string kind;  // SwitchName, BlockName, BlockSizes
  std::string name;
  std::map<std::string, std::string> fields;
};

std::vector<ConfLine> parse_conf(const std::string& text) {
  std::vector<ConfLine> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() == '#') continue;
    std::istringstream words(line);
    std::string word;
    ConfLine parsed;
    bool first = true;
    while (words >> word) {
      const auto eq = word.find('=');
      EXPECT_NE(eq, std::string::npos) << line;
      if (eq == std::string::npos) continue;
      if (first) {
        parsed.kind = word.substr(0, eq);
        parsed.name = word.substr(eq + 1);
        first = false;
      } else {
        parsed.fields[word.substr(0, eq)] = word.substr(eq + 1);
      }
    }
    out.push_back(parsed);
  }
  return out;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> expand(const std::string& list) {
  auto names = expand_hostlist(list);
  EXPECT_TRUE(names.has_value()) << list;
  return names ? *names : std::vector<std::string>{};
}

TEST(Hostlist, CompactsRunsKeepingPaddingAndExpandsBack) {
  const std::vector<std::string> names{"dgx007", "dgx001", "dgx002", "dgx003",
                                       "dgx004", "cpu9",   "cpu10",  "login"};
  const std::string compact = compact_hostlist(names);
  EXPECT_EQ(compact, "cpu[9-10],dgx[001-004,007],login");
  auto back = expand(compact);
  std::set<std::string> want(names.begin(), names.end());
  EXPECT_EQ(std::set<std::string>(back.begin(), back.end()), want);
  EXPECT_EQ(back.size(), names.size());
  EXPECT_EQ(compact_hostlist({"n1"}), "n1");
  EXPECT_FALSE(expand_hostlist("dgx[1-").has_value());
  EXPECT_FALSE(expand_hostlist("dgx[5-2]").has_value());
}

TEST(SlurmTree, ParsedBackEveryNodeOnceAndParentsMatchTheTree) {
  Tree t = testing::demo_tree();
  auto lines = parse_conf(render_slurm_tree_conf(t));
  ASSERT_EQ(lines.size(), t.size());
  std::map<std::string, std::string> parent_of;  // switch or node -> its switch
  std::set<std::string> defined;
  for (const auto& l : lines) {
    ASSERT_EQ(l.kind, "SwitchName");
    defined.insert(l.name);
    if (l.fields.contains("Switches")) {
      for (const auto& c : expand(l.fields.at("Switches"))) {
        EXPECT_FALSE(defined.contains(c)) << "child " << c << " defined before its parent " << l.name;
        EXPECT_TRUE(parent_of.emplace(c, l.name).second) << c << " has two parents";
      }
    }
    if (l.fields.contains("Nodes")) {
      for (const auto& n : expand(l.fields.at("Nodes"))) {
        EXPECT_TRUE(parent_of.emplace("node:" + n, l.name).second) << n << " listed twice";
      }
    }
  }
  std::size_t nodes = 0;
  for (DomainId id = 0; id < t.size(); ++id) {
    const Domain& d = t.domain(id);
    ASSERT_TRUE(defined.contains(d.name)) << d.name;
    if (d.parent) {
      EXPECT_EQ(parent_of.at(d.name), t.domain(*d.parent).name);
    } else {
      EXPECT_FALSE(parent_of.contains(d.name));
    }
    for (const auto& n : d.nodes) {
      EXPECT_EQ(parent_of.at("node:" + n), d.name);
      ++nodes;
    }
  }
  EXPECT_EQ(nodes, t.node_count());
}

TEST(SlurmTree, SameStructureAsTheSlurmFixture) {
  HT_REQUIRE_FIXTURE(path, "slurm/expected.slinky-oci-sim-tree.conf");
  auto expected = parse_conf(read_file(path));
  auto ours = parse_conf(render_slurm_tree_conf(testing::slurm_fixture_shaped_tree()));
  ASSERT_EQ(ours.size(), expected.size());
  // Same sequence of line shapes (Switches/Nodes, member counts), same node lists per leaf.
  for (std::size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].kind, expected[i].kind);
    EXPECT_EQ(ours[i].fields.contains("Switches"), expected[i].fields.contains("Switches")) << i;
    EXPECT_EQ(ours[i].fields.contains("Nodes"), expected[i].fields.contains("Nodes")) << i;
    for (const char* key : {"Switches", "Nodes"}) {
      if (!expected[i].fields.contains(key)) continue;
      EXPECT_EQ(expand(ours[i].fields.at(key)).size(), expand(expected[i].fields.at(key)).size()) << i;
    }
    if (expected[i].fields.contains("Nodes")) {
      EXPECT_EQ(ours[i].fields.at("Nodes"), expected[i].fields.at("Nodes"));
    }
  }
}

TEST(SlurmBlock, SameBlocksInProximityOrderAsTheSlurmFixture) {
  HT_REQUIRE_FIXTURE(path, "slurm/expected.slinky-dra-block.conf");
  auto expected = parse_conf(read_file(path));
  auto ours = parse_conf(render_slurm_block_conf(testing::slurm_fixture_shaped_tree()));
  ASSERT_EQ(ours.size(), expected.size());
  for (std::size_t i = 0; i + 1 < ours.size(); ++i) {
    EXPECT_EQ(ours[i].kind, "BlockName");
    EXPECT_EQ(ours[i].fields.at("Nodes"), expected[i].fields.at("Nodes")) << i;
  }
  ASSERT_EQ(ours.back().kind, "BlockSizes");
  ASSERT_EQ(expected.back().kind, "BlockSizes");
  // Same base block size; every aggregate a power-of-two multiple of it.
  const std::string ours_sizes = ours.back().name;
  EXPECT_EQ(ours_sizes.substr(0, ours_sizes.find(',')),
            expected.back().name.substr(0, expected.back().name.find(',')));
  const auto sizes = slurm_block_sizes(testing::slurm_fixture_shaped_tree());
  ASSERT_FALSE(sizes.empty());
  for (std::size_t s : sizes) {
    EXPECT_EQ(s % sizes.front(), 0u);
    const std::size_t m = s / sizes.front();
    EXPECT_EQ(m & (m - 1), 0u) << s;
  }
}

TEST(SlurmBlock, NvlinkDomainsAreTheBlocksWhenPresent) {
  Tree t;
  auto leaf = t.add_domain("leaf-1", 2, "leaf");
  for (int i = 0; i < 2; ++i) {
    auto nvl = t.add_domain("nvl-" + std::to_string(i), 1, "nvlink");
    t.attach(leaf, nvl);
    for (int n = 0; n < 4; ++n) t.domain(nvl).nodes.push_back("gb" + std::to_string(i) + std::to_string(n));
  }
  auto blocks = slurm_blocks(t);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(t.domain(blocks[0]).name, "nvl-0");
  EXPECT_EQ(slurm_block_sizes(t), (std::vector<std::size_t>{4, 8}));
}

TEST(SlurmYaml, TreeAndBlockTopologiesMatchTheConf) {
  Tree t = testing::slurm_fixture_shaped_tree();
  YAML::Node doc = YAML::Load(render_slurm_topology_yaml(t));
  ASSERT_TRUE(doc.IsSequence());
  ASSERT_EQ(doc.size(), 2u);
  EXPECT_EQ(doc[0]["topology"].as<std::string>(), "fabric");
  EXPECT_TRUE(doc[0]["cluster_default"].as<bool>());
  const auto switches = doc[0]["tree"]["switches"];
  ASSERT_EQ(switches.size(), t.size());
  std::set<std::string> nodes;
  for (const auto& s : switches) {
    if (s["nodes"]) {
      for (const auto& n : expand(s["nodes"].as<std::string>())) EXPECT_TRUE(nodes.insert(n).second) << n;
    }
  }
  EXPECT_EQ(nodes.size(), t.node_count());
  const auto block = doc[1]["block"];
  EXPECT_EQ(block["block_sizes"][0].as<std::size_t>(), 8u);
  EXPECT_EQ(block["blocks"].size(), 12u);
  EXPECT_EQ(block["blocks"][0]["nodes"].as<std::string>(), "srv[1101-1108]");
}

}  // namespace
}  // namespace hypertopo::topology::exporters
