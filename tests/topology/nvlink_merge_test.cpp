// NVLink domains merged into a fabric tree: placement under the lowest common fabric domain, tier
// policies for mixed clusters, and conflicts that are reported instead of guessed.
#include "topology/nvlink_merge.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace hypertopo::topology {
namespace {

constexpr const char* kRackA = "dc6e40c4-d722-4357-9ba6-5291dd461278.2";
constexpr const char* kRackB = "9c6f5af3-53bf-49b5-a436-b66766c413c3.4026";

// spine-1 (tier 2) over leaf-1 {gb-1, gb-2, h-1} and leaf-2 {gb-3, h-2}; spine-2 over leaf-3 {h-3}.
Tree two_spines() {
  Tree t;
  auto l1 = t.add_domain("leaf-1", 1, "leaf");
  t.domain(l1).nodes = {"gb-1", "gb-2", "h-1"};
  auto l2 = t.add_domain("leaf-2", 1, "leaf");
  t.domain(l2).nodes = {"gb-3", "h-2"};
  auto l3 = t.add_domain("leaf-3", 1, "leaf");
  t.domain(l3).nodes = {"h-3"};
  auto s1 = t.add_domain("spine-1", 2, "spine");
  t.attach(s1, l1);
  t.attach(s1, l2);
  auto s2 = t.add_domain("spine-2", 2, "spine");
  t.attach(s2, l3);
  return t;
}

const Domain& domain_named(const Tree& t, const std::string& name) {
  auto id = t.find(name);
  EXPECT_TRUE(id.has_value()) << name;
  return t.domain(id.value_or(0));
}

bool mentions(const std::vector<std::string>& lines, const std::string& a, const std::string& b) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
    return l.find(a) != std::string::npos && l.find(b) != std::string::npos;
  });
}

TEST(NvlinkMerge, CliqueInOneLeafBecomesTierOneUnderItAndEveryFabricTierShifts) {
  Tree t = two_spines();
  NvlinkMembership m;
  m.clique_by_node = {{"gb-1", kRackA}, {"gb-2", kRackA}};
  auto added = merge_nvlink_domains(t, m);
  ASSERT_TRUE(added.has_value()) << added.error().message();
  EXPECT_EQ(*added, 1u);
  ASSERT_TRUE(check_invariants(t).has_value()) << check_invariants(t).error().message();

  const Domain& nv = domain_named(t, nvlink_domain_name(kRackA));
  EXPECT_EQ(nv.tier, 1);
  EXPECT_EQ(nv.tier_name, "nvlink");
  EXPECT_EQ(nv.nodes, (std::vector<std::string>{"gb-1", "gb-2"}));
  EXPECT_EQ(nv.labels.at(kNvlinkCliqueLabel), kRackA);
  ASSERT_TRUE(nv.parent.has_value());
  EXPECT_EQ(t.domain(*nv.parent).name, "leaf-1");

  // leaf-1 keeps its H100 node as a direct member beside the NVLink domain.
  EXPECT_EQ(domain_named(t, "leaf-1").nodes, (std::vector<std::string>{"h-1"}));
  // Every leaf is tier 2 and every spine tier 3, with or without NVLink below (shift-everywhere).
  for (const auto* leaf : {"leaf-1", "leaf-2", "leaf-3"}) EXPECT_EQ(domain_named(t, leaf).tier, 2) << leaf;
  for (const auto* spine : {"spine-1", "spine-2"}) EXPECT_EQ(domain_named(t, spine).tier, 3) << spine;
  EXPECT_EQ(t.node_count(), 6u);
}

TEST(NvlinkMerge, ShiftBranchesMovesOnlyDomainsAboveAnNvlinkDomain) {
  Tree t = two_spines();
  NvlinkMembership m;
  m.clique_by_node = {{"gb-1", kRackA}, {"gb-2", kRackA}};
  NvlinkMergeOptions o;
  o.policy = NvlinkTierPolicy::kShiftBranches;
  ASSERT_TRUE(merge_nvlink_domains(t, m, o).has_value());
  ASSERT_TRUE(check_invariants(t).has_value()) << check_invariants(t).error().message();
  EXPECT_EQ(domain_named(t, "leaf-1").tier, 2);
  EXPECT_EQ(domain_named(t, "spine-1").tier, 3);
  EXPECT_EQ(domain_named(t, "leaf-2").tier, 1);
  EXPECT_EQ(domain_named(t, "leaf-3").tier, 1);
  EXPECT_EQ(domain_named(t, "spine-2").tier, 2);
}

TEST(NvlinkMerge, CliqueAcrossTwoLeavesGoesUnderTheirSpineAndIsReported) {
  Tree t = two_spines();
  NvlinkMembership m;
  m.clique_by_node = {{"gb-1", kRackA}, {"gb-2", kRackA}, {"gb-3", kRackA}};
  ASSERT_TRUE(merge_nvlink_domains(t, m).has_value());
  ASSERT_TRUE(check_invariants(t).has_value()) << check_invariants(t).error().message();
  const Domain& nv = domain_named(t, nvlink_domain_name(kRackA));
  EXPECT_EQ(t.domain(*nv.parent).name, "spine-1");
  EXPECT_EQ(domain_named(t, "leaf-2").nodes, (std::vector<std::string>{"h-2"}));
  EXPECT_TRUE(mentions(t.report.warnings, kRackA, "lowest common domain spine-1"))
      << t.report.warnings.size();
}

TEST(NvlinkMerge, LeafLeftEmptyIsDropped) {
  Tree t;
  auto l1 = t.add_domain("leaf-1", 1, "leaf");
  t.domain(l1).nodes = {"gb-1"};
  auto l2 = t.add_domain("leaf-2", 1, "leaf");
  t.domain(l2).nodes = {"gb-2", "h-1"};
  auto s = t.add_domain("spine-1", 2, "spine");
  t.attach(s, l1);
  t.attach(s, l2);
  NvlinkMembership m;
  m.clique_by_node = {{"gb-1", kRackA}, {"gb-2", kRackA}};
  ASSERT_TRUE(merge_nvlink_domains(t, m).has_value());
  ASSERT_TRUE(check_invariants(t).has_value()) << check_invariants(t).error().message();
  EXPECT_FALSE(t.find("leaf-1").has_value());  // it held only gb-1, now in the NVLink domain
  EXPECT_EQ(domain_named(t, "leaf-2").nodes, (std::vector<std::string>{"h-1"}));
  EXPECT_EQ(t.domain(*domain_named(t, nvlink_domain_name(kRackA)).parent).name, "spine-1");
}

TEST(NvlinkMerge, CliqueSpanningSeparateRootsIsReportedAndLeftAlone) {
  Tree t = two_spines();
  NvlinkMembership m;
  m.clique_by_node = {{"gb-1", kRackA}, {"h-3", kRackA}, {"gb-3", kRackB}};
  auto added = merge_nvlink_domains(t, m);
  ASSERT_TRUE(added.has_value());
  EXPECT_EQ(*added, 1u);  // only kRackB
  ASSERT_TRUE(check_invariants(t).has_value()) << check_invariants(t).error().message();
  EXPECT_FALSE(t.find(nvlink_domain_name(kRackA)).has_value());
  EXPECT_EQ(domain_named(t, "leaf-1").nodes, (std::vector<std::string>{"gb-1", "gb-2", "h-1"}));
  EXPECT_EQ(domain_named(t, "leaf-3").nodes, (std::vector<std::string>{"h-3"}));
  EXPECT_TRUE(mentions(t.report.warnings, kRackA, "share no parent")) << t.report.warnings.size();
  EXPECT_TRUE(mentions(t.report.warnings, "gb-1", "h-3"));
}

TEST(NvlinkMerge, NodesOutsideTheFabricJoinThroughTheirNvlinkDomain) {
  Tree t = two_spines();
  NvlinkMembership m;
  m.clique_by_node = {{"gb-1", kRackA}, {"gb-9", kRackA}, {"x-1", kRackB}};
  m.warnings = {"node gb-7: its GPUs name different NVLink cliques"};
  ASSERT_TRUE(merge_nvlink_domains(t, m).has_value());
  ASSERT_TRUE(check_invariants(t).has_value()) << check_invariants(t).error().message();
  EXPECT_EQ(domain_named(t, nvlink_domain_name(kRackA)).nodes, (std::vector<std::string>{"gb-1", "gb-9"}));
  EXPECT_TRUE(mentions(t.report.warnings, kRackA, "gb-9"));
  // A clique no fabric domain knows stands alone as a root.
  EXPECT_FALSE(domain_named(t, nvlink_domain_name(kRackB)).parent.has_value());
  EXPECT_TRUE(mentions(t.report.warnings, "gb-7", "different NVLink cliques"));
}

TEST(NvlinkMerge, WithoutCliquesOrWhenDisabledTheTreeIsUnchanged) {
  Tree t = two_spines();
  auto added = merge_nvlink_domains(t, {});
  ASSERT_TRUE(added.has_value());
  EXPECT_EQ(*added, 0u);
  EXPECT_EQ(domain_named(t, "leaf-1").tier, 1);

  NvlinkMembership m;
  m.clique_by_node = {{"gb-1", kRackA}};
  NvlinkMergeOptions off;
  off.enabled = false;
  ASSERT_EQ(merge_nvlink_domains(t, m, off).value_or(99), 0u);
  EXPECT_EQ(t.size(), 5u);
  EXPECT_EQ(domain_named(t, "spine-1").tier, 2);
}

TEST(NvlinkMerge, NamesAreDns1123AndPoliciesParse) {
  EXPECT_EQ(nvlink_domain_name(kRackA), "nvlink-dc6e40c4-d722-4357-9ba6-5291dd461278-2");
  EXPECT_TRUE(is_dns1123_subdomain(nvlink_domain_name(std::string(80, 'A'))));
  EXPECT_LE(nvlink_domain_name(std::string(80, 'a')).size(), kMaxMemberNameLength);
  EXPECT_EQ(parse_nvlink_tier_policy("shift-branches").value(), NvlinkTierPolicy::kShiftBranches);
  EXPECT_EQ(std::string(to_string(NvlinkTierPolicy::kShiftEverywhere)), "shift-everywhere");
  auto bad = parse_nvlink_tier_policy("keep");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("'keep'"), std::string::npos);
}

}  // namespace
}  // namespace hypertopo::topology
