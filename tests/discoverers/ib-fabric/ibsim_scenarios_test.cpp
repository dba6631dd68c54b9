// Live scenarios: generated fabrics simulated by ibsim, walked through umad2sim, checked against the
// structure they were generated with. Skips when ibsim is absent (fails under CI=true).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "discoverers/ib-fabric/fabric_walk.h"
#include "discoverers/ib-fabric/ibsim_netfile.h"
#include "discoverers/ib-fabric/simulated_fabric.h"
#include "discoverers/ibnetdiscover/ibnetdiscover_parser.h"
#include "tests/support/fixtures.h"
#include "tests/support/ibsim/ibsim_fabrics.h"
#include "topology/tree_builder.h"

namespace hypertopo::testing {
namespace {

namespace ibf = discoverers::ib_fabric;
using topology::FabricGraph;

const std::vector<std::string> kWalker = {HT_IB_WALKER};

#define HT_REQUIRE_SIMULATOR() \
  HT_REQUIRE(ibf::simulator_missing().empty(), "ibsim: " + ibf::simulator_missing())

struct Simulation {
  std::unique_ptr<ibf::SimulatedFabric> sim;
  ibf::IbsimNetfileSummary netfile;
};

Simulation simulate(const GeneratedFabric& fabric, const ibf::IbsimNetfileOptions& options = {},
                    const ibf::SimulatorOptions& simulator = {}) {
  std::ostringstream text;
  auto summary = ibf::write_ibsim_netfile(fabric.graph, text, options);
  EXPECT_TRUE(summary.has_value()) << (summary ? "" : summary.error().message());
  if (!summary) return {};
  auto sim = ibf::SimulatedFabric::start(text.str(), simulator);
  EXPECT_TRUE(sim.has_value()) << (sim ? "" : sim.error().message());
  if (!sim) return {};
  return {std::move(*sim), std::move(*summary)};
}

FabricGraph walk(ibf::SimulatedFabric& sim) {
  auto graph = sim.walk(kWalker);
  EXPECT_TRUE(graph.has_value()) << (graph ? "" : graph.error().message());
  return graph ? std::move(*graph) : FabricGraph{};
}

topology::Tree build(const FabricGraph& graph, const topology::TreeBuilderOptions& options) {
  auto builder = topology::TreeBuilder::create(options);
  EXPECT_TRUE(builder.has_value()) << (builder ? "" : builder.error().message());
  if (!builder) return {};
  auto tree = builder->build(graph);
  EXPECT_TRUE(tree.has_value()) << (tree ? "" : tree.error().message());
  return tree ? std::move(*tree) : topology::Tree{};
}

std::map<std::string, std::string> descriptions(const FabricGraph& g) {
  std::map<std::string, std::string> out;
  for (const auto& v : g.vertices()) out[v.id] = v.description;
  return out;
}

struct Scenario {
  std::string name;
  GeneratedFabric (*make)();
};

class GeneratedFabricLive : public ::testing::TestWithParam<Scenario> {};

TEST_P(GeneratedFabricLive, WalkFindsTheGeneratedFabricAndItsTiers) {
  HT_REQUIRE_SIMULATOR();
  GeneratedFabric fabric = GetParam().make();
  auto sim = simulate(fabric);
  ASSERT_TRUE(sim.sim);
  FabricGraph walked = walk(*sim.sim);

  EXPECT_EQ(walked.switch_count(), fabric.switches);
  EXPECT_EQ(walked.endpoint_count(), fabric.endpoints);
  EXPECT_EQ(walked.links().size(), fabric.links);
  EXPECT_EQ(canonical_links(walked), canonical_links(fabric.graph));
  EXPECT_EQ(descriptions(walked), descriptions(fabric.graph));
  for (const auto& l : walked.links()) EXPECT_EQ(l.rate, "4xQDR") << "ibsim simulates NDR links as QDR";

  topology::Tree tree = build(walked, fabric.builder);
  EXPECT_EQ(tier_structure(tree), fabric.tiers);
  for (const auto& storage : fabric.storage_hosts) {
    for (topology::DomainId d = 0; d < tree.size(); ++d) {
      auto hosts = tree.nodes_under(d);
      EXPECT_FALSE(std::binary_search(hosts.begin(), hosts.end(), storage))
          << storage << " in " << tree.domain(d).name;
    }
  }

  // Replay: the recorded cache gives the identical graph with no walk.
  auto replayed = ibf::load_fabric_cache(sim.sim->last_cache());
  ASSERT_TRUE(replayed.has_value()) << replayed.error().message();
  EXPECT_EQ(canonical_links(*replayed), canonical_links(walked));
  ASSERT_EQ(replayed->vertex_count(), walked.vertex_count());
  for (topology::VertexId v = 0; v < walked.vertex_count(); ++v) {
    EXPECT_EQ(replayed->vertex(v).id, walked.vertex(v).id);
    EXPECT_EQ(replayed->vertex(v).description, walked.vertex(v).description);
    EXPECT_EQ(replayed->vertex(v).system_guid, walked.vertex(v).system_guid);
    EXPECT_EQ(replayed->vertex(v).kind, walked.vertex(v).kind);
  }
  for (std::size_t i = 0; i < walked.links().size(); ++i)
    EXPECT_EQ(replayed->links()[i].rate, walked.links()[i].rate);
}

INSTANTIATE_TEST_SUITE_P(
    Fabrics, GeneratedFabricLive,
    ::testing::Values(
        Scenario{"TwoLevelFatTree",
                 [] { return two_level_fat_tree({.leaves = 4, .hosts_per_leaf = 3, .spines = 2}); }},
        Scenario{"ThreeLevelFatTreeWithPods", [] { return three_level_fat_tree({}); }},
        Scenario{"RailOptimisedSuperPod",
                 [] { return rail_optimised_superpod({.scalable_units = 3, .hosts_per_su = 4}); }},
        Scenario{"StorageLeaf", [] { return storage_leaf_fabric({}); }}),
    [](const ::testing::TestParamInfo<Scenario>& p) { return p.param.name; });

// A recording that cannot be written (here: a directory already holds the name, as a local user's
// `mkdir` in a shared /tmp once did) costs the recording, never the walk.
TEST(LiveWalkRecording, ARecordingThatFailsKeepsTheWalk) {
  HT_REQUIRE_SIMULATOR();
  GeneratedFabric fabric = two_level_fat_tree({.leaves = 2, .hosts_per_leaf = 2, .spines = 1});
  auto sim = simulate(fabric);
  ASSERT_TRUE(sim.sim);
  sim.sim->set_record_walks(false);
  TempDir dir;
  const auto blocked = dir.path() / "walk.ibnd";
  std::filesystem::create_directories(blocked / "taken");
  std::vector<std::string> walker = kWalker;
  walker.insert(walker.end(), {"--cache", blocked.string()});
  auto walked = sim.sim->walk(walker);
  ASSERT_TRUE(walked.has_value()) << walked.error().message();
  EXPECT_EQ(walked->switch_count(), fabric.switches);
  EXPECT_EQ(walked->endpoint_count(), fabric.endpoints);
  EXPECT_TRUE(std::filesystem::is_directory(blocked / "taken"))
      << "the walk must not remove what it did not write";
}

// The same tiers from a stock ibnetdiscover capture, a live walk and a replayed cache.
TEST(RailOptimisedSuperPod, SameTiersFromCaptureWalkAndCache) {
  HT_REQUIRE_SIMULATOR();
  GeneratedFabric fabric =
      rail_optimised_superpod({.scalable_units = 2, .hosts_per_su = 4, .rails = 8, .spines = 4});
  auto sim = simulate(fabric);
  ASSERT_TRUE(sim.sim);
  FabricGraph walked = walk(*sim.sim);
  auto replayed = ibf::load_fabric_cache(sim.sim->last_cache());
  ASSERT_TRUE(replayed.has_value()) << replayed.error().message();
  auto capture = sim.sim->capture_ibnetdiscover();
  ASSERT_TRUE(capture.has_value()) << capture.error().message();
  auto parsed = discoverers::parse_ibnetdiscover(*capture, "ibnetdiscover on ibsim");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message();

  EXPECT_EQ(parsed->graph.switch_count(), fabric.switches);
  EXPECT_EQ(parsed->graph.endpoint_count(), fabric.endpoints);
  EXPECT_EQ(canonical_links(parsed->graph), canonical_links(walked));
  auto expected = fabric.tiers;
  EXPECT_EQ(tier_structure(build(walked, fabric.builder)), expected);
  EXPECT_EQ(tier_structure(build(*replayed, fabric.builder)), expected);
  EXPECT_EQ(tier_structure(build(parsed->graph, fabric.builder)), expected);
}

// Domain name -> its hosts.
std::map<std::string, std::vector<std::string>> domains_by_name(const topology::Tree& tree) {
  std::map<std::string, std::vector<std::string>> out;
  for (topology::DomainId d = 0; d < tree.size(); ++d) out[tree.domain(d).name] = tree.nodes_under(d);
  return out;
}

std::set<std::string> changed_domains(const topology::Tree& before, const topology::Tree& after) {
  auto a = domains_by_name(before);
  auto b = domains_by_name(after);
  std::set<std::string> changed;
  for (const auto& [name, hosts] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second != hosts) changed.insert(name);
  }
  for (const auto& [name, hosts] : b) {
    if (!a.contains(name)) changed.insert(name);
  }
  return changed;
}

std::string tier1_domain_of(const topology::Tree& tree, const std::string& host) {
  for (topology::DomainId d = 0; d < tree.size(); ++d) {
    const auto& dom = tree.domain(d);
    if (dom.tier == 1 && std::binary_search(dom.nodes.begin(), dom.nodes.end(), host)) return dom.name;
  }
  return "";
}

std::string top_domain(const topology::Tree& tree) {
  for (topology::DomainId d = 0; d < tree.size(); ++d) {
    if (tree.domain(d).tier == tree.max_tier()) return tree.domain(d).name;
  }
  return "";
}

TEST(FabricChange, CablesPulledAndMovedChangeExactlyTheDomainsThatHoldThem) {
  HT_REQUIRE_SIMULATOR();
  GeneratedFabric fabric = two_level_fat_tree({.leaves = 3, .hosts_per_leaf = 3, .spines = 2});
  auto sim = simulate(fabric, {.min_switch_ports = 8});
  ASSERT_TRUE(sim.sim);
  topology::Tree t0 = build(walk(*sim.sim), fabric.builder);
  ASSERT_EQ(tier_structure(t0), fabric.tiers);

  // The generator cables leaf N's hosts on ports 1..3 and its spines on ports 4..5. The walker
  // attaches at the first CA (ft2-l01-h01), so the host moved around is the second one.
  const std::string moved = "ft2-l01-h02";
  auto node_id_of_switch = [&](const std::string& name) {
    for (const auto& v : fabric.graph.vertices()) {
      if (v.description == "MF0;" + name + ":MQM9700/U1") return sim.netfile.node_ids.at(v.id);
    }
    return std::string();
  };
  auto node_id_of_host = [&](const std::string& host) {
    for (const auto& v : fabric.graph.vertices()) {
      if (v.description == host + " mlx5_0") return sim.netfile.node_ids.at(v.id);
    }
    return std::string();
  };
  const std::string leaf1 = node_id_of_switch("FT2-LEAF-01");
  const std::string leaf2 = node_id_of_switch("FT2-LEAF-02");
  const std::string leaf3 = node_id_of_switch("FT2-LEAF-03");
  const std::string hca = node_id_of_host(moved);
  ASSERT_FALSE(leaf1.empty() || leaf2.empty() || leaf3.empty() || hca.empty());

  // 1. A spine uplink goes down: every host still reaches every other; nothing changes.
  ASSERT_TRUE(sim.sim->unlink(leaf3, 4).has_value());
  topology::Tree t1 = build(walk(*sim.sim), fabric.builder);
  EXPECT_TRUE(changed_domains(t0, t1).empty());

  // 2. A host is recabled from leaf 1 to leaf 2: only those two leaf domains change.
  ASSERT_TRUE(sim.sim->unlink(leaf1, 2).has_value());
  auto relinked = sim.sim->link(leaf2, 6, hca, 1);
  ASSERT_TRUE(relinked.has_value()) << relinked.error().message();
  topology::Tree t2 = build(walk(*sim.sim), fabric.builder);
  const std::string before = tier1_domain_of(t0, moved);
  const std::string after = tier1_domain_of(t2, moved);
  EXPECT_NE(before, after);
  EXPECT_EQ(changed_domains(t0, t2), (std::set<std::string>{before, after}));

  // 3. The host's cable is pulled: it leaves its leaf domain and the top domain, nothing else.
  ASSERT_TRUE(sim.sim->unlink(leaf2, 6).has_value());
  topology::Tree t3 = build(walk(*sim.sim), fabric.builder);
  EXPECT_EQ(tier1_domain_of(t3, moved), "");
  EXPECT_EQ(changed_domains(t2, t3), (std::set<std::string>{after, top_domain(t2)}));
  EXPECT_EQ(t3.node_count(), t0.node_count() - 1);

  // 4. A console command naming an unknown node is refused, not ignored.
  auto refused = sim.sim->unlink("S-ffffffffffffffff", 1);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message().find("not found"), std::string::npos) << refused.error().message();
}

// A second, different fabric in the same test process: each simulator has its own socket.
TEST(FabricChange, TwoSimulatorsSideBySideStayApart) {
  HT_REQUIRE_SIMULATOR();
  GeneratedFabric small = two_level_fat_tree({.leaves = 2, .hosts_per_leaf = 2, .spines = 1});
  GeneratedFabric pods = three_level_fat_tree({});
  auto a = simulate(small);
  auto b = simulate(pods);
  ASSERT_TRUE(a.sim && b.sim);
  EXPECT_NE(a.sim->socket_name(), b.sim->socket_name());
  EXPECT_EQ(tier_structure(build(walk(*a.sim), small.builder)), small.tiers);
  EXPECT_EQ(tier_structure(build(walk(*b.sim), pods.builder)), pods.tiers);
}

}  // namespace
}  // namespace hypertopo::testing
