// Invariant checks and names: each rule Volcano's scheduler relies on has a tree that breaks it.
#include "topology/tree.h"

#include <gtest/gtest.h>

namespace hypertopo::topology {
namespace {

Tree two_level() {
  Tree t;
  auto a = t.add_domain("leaf-a", 1, "leaf");
  auto b = t.add_domain("leaf-b", 1, "leaf");
  auto top = t.add_domain("spine-x", 2, "spine");
  t.domain(a).nodes = {"n1", "n2"};
  t.domain(b).nodes = {"n3"};
  t.attach(top, a);
  t.attach(top, b);
  return t;
}

TEST(TreeInvariants, AcceptsAValidTree) {
  auto t = two_level();
  ASSERT_TRUE(check_invariants(t).has_value());
  EXPECT_EQ(t.node_count(), 3u);
  EXPECT_EQ(t.nodes_under(2), (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(t.roots(), std::vector<DomainId>{2});
  EXPECT_EQ(t.max_tier(), 2);
}

TEST(TreeInvariants, RejectsParentTierNotAboveChild) {
  auto t = two_level();
  t.domain(2).tier = 1;
  auto r = check_invariants(t);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("tier must be higher"), std::string::npos) << r.error().message();
}

TEST(TreeInvariants, RejectsTwoParents) {
  auto t = two_level();
  auto other = t.add_domain("spine-y", 2, "spine");
  t.domain(other).children.push_back(0);
  auto r = check_invariants(t);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("more than one parent"), std::string::npos) << r.error().message();
}

TEST(TreeInvariants, RejectsANodeInTwoLowestDomains) {
  auto t = two_level();
  t.domain(1).nodes.push_back("n1");
  auto r = check_invariants(t);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("node n1 is a member of both"), std::string::npos)
      << r.error().message();
}

TEST(TreeInvariants, RejectsBadAndDuplicateNames) {
  auto t = two_level();
  t.domain(0).name = "Leaf_A";
  EXPECT_FALSE(check_invariants(t));
  t.domain(0).name = "leaf-b";
  auto r = check_invariants(t);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("two domains are named"), std::string::npos);
}

TEST(TreeInvariants, RejectsEmptyDomainsAndCycles) {
  Tree t;
  t.add_domain("empty", 1, "leaf");
  EXPECT_FALSE(check_invariants(t));

  Tree c;
  auto a = c.add_domain("a", 2, "x");
  auto b = c.add_domain("b", 3, "x");
  c.domain(a).nodes = {"n"};
  c.attach(b, a);
  c.attach(a, b);  // a cycle: also a parent tier below its child
  EXPECT_FALSE(check_invariants(c));
}

TEST(TreeInvariants, RejectsAParentLinkThatIsNotMirrored) {
  auto t = two_level();
  t.domain(2).children.pop_back();  // leaf-b still names spine-x as parent
  auto r = check_invariants(t);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("leaf-b"), std::string::npos);
}

TEST(Names, Dns1123Subdomain) {
  EXPECT_TRUE(is_dns1123_subdomain("leaf-a09-p1-ibleaf-01-01"));
  EXPECT_TRUE(is_dns1123_subdomain("a.b-c.0"));
  EXPECT_FALSE(is_dns1123_subdomain(""));
  EXPECT_FALSE(is_dns1123_subdomain("-a"));
  EXPECT_FALSE(is_dns1123_subdomain("a-"));
  EXPECT_FALSE(is_dns1123_subdomain("a..b"));
  EXPECT_FALSE(is_dns1123_subdomain("a.-b"));
  EXPECT_FALSE(is_dns1123_subdomain("UPPER"));
  EXPECT_FALSE(is_dns1123_subdomain(std::string(254, 'a')));
  EXPECT_TRUE(is_dns1123_subdomain(std::string(253, 'a')));
}

TEST(Names, Sanitize) {
  EXPECT_EQ(sanitize_name("A09-P1-IBLEAF-01-01"), "a09-p1-ibleaf-01-01");
  EXPECT_EQ(sanitize_name("  Sun DCS 36 QDR switch  "), "sun-dcs-36-qdr-switch");
  EXPECT_EQ(sanitize_name("volcano.sh/torA2-1"), "volcano-sh-tora2-1");
  EXPECT_EQ(sanitize_name("***"), "");
}

TEST(TreeMerge, KeepsStructureAndReports) {
  auto a = two_level();
  Tree b;
  auto d = b.add_domain("leaf-c", 1, "leaf");
  b.domain(d).nodes = {"n9"};
  b.report.aggregation_nodes = 3;
  a.merge(std::move(b));
  ASSERT_TRUE(check_invariants(a));
  EXPECT_EQ(a.size(), 4u);
  EXPECT_EQ(a.report.aggregation_nodes, 3u);
  EXPECT_EQ(a.roots().size(), 2u);
}

}  // namespace
}  // namespace hypertopo::topology

namespace hypertopo::topology {
namespace {

TEST(Names, LongNamesAreCutWithAStableHash) {
  const std::string long_name = "leaf-" + std::string(80, 'a');
  auto a = fit_member_name(long_name);
  EXPECT_LE(a.size(), kMaxMemberNameLength);
  EXPECT_TRUE(is_dns1123_subdomain(a));
  EXPECT_EQ(a, fit_member_name(long_name));
  EXPECT_NE(a, fit_member_name(long_name + "b"));
  EXPECT_EQ(fit_member_name("short"), "short");
  Tree t;
  auto d = t.add_domain(long_name, 1, "leaf");
  t.domain(d).nodes = {"n"};
  EXPECT_FALSE(check_invariants(t));
}

}  // namespace
}  // namespace hypertopo::topology
