// Builder config: every key, and errors that name the file and the key.
#include "topology/builder_config.h"

#include <gtest/gtest.h>

#include "tests/support/fixtures.h"

namespace hypertopo::topology {
namespace {

TEST(BuilderConfig, ReadsEveryKey) {
  auto o = parse_builder_config(R"(
source: hypertopo-ib
tierNames: [su, pod, core]
hostDescriptionPattern: '^(\S+)\s'
excludedDevicePatterns: ['mlx5_(8|9)']
excludedSwitchPatterns: [STORAGE]
guidMap: {"E09D7303007A4BD8": dgx-001}
)",
                                "discover.yaml");
  ASSERT_TRUE(o) << o.error().message();
  EXPECT_EQ(o->source, "hypertopo-ib");
  EXPECT_EQ(o->level_names, (std::vector<std::string>{"su", "pod", "core"}));
  EXPECT_EQ(o->host_description_pattern, "^(\\S+)\\s");
  EXPECT_EQ(o->excluded_device_patterns, (std::vector<std::string>{"mlx5_(8|9)"}));
  EXPECT_EQ(o->node_by_endpoint.at("0xe09d7303007a4bd8"), "dgx-001");
}

// A tier name becomes part of object names and labels: one that is not printable ASCII is refused
// at load, naming the file and the key, instead of failing later without either.
TEST(BuilderConfig, ATierNameThatIsNotPrintableAsciiIsRefusedNamingFileAndKey) {
  for (const std::string bad : {"sp\xc3\xafne", "tab\there"}) {
    auto loaded = parse_builder_config("tierNames: [leaf, \"" + bad + "\"]\n", "discover.yaml");
    ASSERT_FALSE(loaded) << bad;
    EXPECT_NE(loaded.error().message().find("discover.yaml"), std::string::npos) << loaded.error().message();
    EXPECT_NE(loaded.error().message().find("tierNames[1]"), std::string::npos) << loaded.error().message();
    EXPECT_NE(loaded.error().message().find("not printable ASCII"), std::string::npos)
        << loaded.error().message();
  }
  EXPECT_TRUE(parse_builder_config("tierNames: [leaf, spine, core]\n", "discover.yaml"));
}

TEST(BuilderConfig, KeepHostsAndAppliancePatternsAreTypedPatternLists) {
  auto o =
      parse_builder_config("keepHosts: [localhost, 'r-ufm.*']\nappliancePatterns: [ddn-sfa]\n", "d.yaml");
  ASSERT_TRUE(o) << o.error().message();
  EXPECT_EQ(o->keep_host_patterns, (std::vector<std::string>{"localhost", "r-ufm.*"}));
  EXPECT_EQ(o->appliance_patterns, (std::vector<std::string>{"ddn-sfa"}));

  auto type = parse_builder_config("keepHosts: true\n", "d.yaml");
  ASSERT_FALSE(type);
  EXPECT_NE(type.error().message().find("d.yaml: keepHosts: must be a list"), std::string::npos)
      << type.error().message();
  auto regex = parse_builder_config("keepHosts: [ok, '(']\n", "d.yaml");
  ASSERT_FALSE(regex);
  EXPECT_NE(regex.error().message().find("d.yaml: keepHosts"), std::string::npos) << regex.error().message();
  EXPECT_NE(regex.error().message().find("'('"), std::string::npos) << regex.error().message();
  auto appliance = parse_builder_config("appliancePatterns: ['[']\n", "d.yaml");
  ASSERT_FALSE(appliance);
  EXPECT_NE(appliance.error().message().find("d.yaml: appliancePatterns"), std::string::npos)
      << appliance.error().message();
}

TEST(BuilderConfig, ErrorsNameFileAndKey) {
  auto unknown = parse_builder_config("tierName: [a]\n", "d.yaml");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("d.yaml: tierName: unknown key"), std::string::npos);

  auto type = parse_builder_config("tierNames: leaf\n", "d.yaml");
  ASSERT_FALSE(type);
  EXPECT_NE(type.error().message().find("d.yaml: tierNames: must be a list"), std::string::npos);

  auto regex = parse_builder_config("excludedSwitchPatterns: ['(']\n", "d.yaml");
  ASSERT_FALSE(regex);
  EXPECT_NE(regex.error().message().find("d.yaml"), std::string::npos);
  EXPECT_NE(regex.error().message().find("'('"), std::string::npos);

  auto guid = parse_builder_config("guidMap: {zz: n1}\n", "d.yaml");
  ASSERT_FALSE(guid);
  EXPECT_NE(guid.error().message().find("guidMap.zz: not a GUID"), std::string::npos);

  auto yaml = parse_builder_config("a: [\n", "d.yaml");
  ASSERT_FALSE(yaml);
  EXPECT_NE(yaml.error().message().find("d.yaml:"), std::string::npos);

  EXPECT_FALSE(load_builder_config("/nonexistent/discover.yaml"));
}

TEST(BuilderConfig, GuidMapFile) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "map.txt",
                      "# guid node\n0xE09D7303007A4BD8 dgx-001\n\ne09d7303007a4bd9 dgx-002 # x\n");
  TreeBuilderOptions o;
  ASSERT_TRUE(load_guid_map(dir.path() / "map.txt", o));
  EXPECT_EQ(o.node_by_endpoint.size(), 2u);
  EXPECT_EQ(o.node_by_endpoint.at("0xe09d7303007a4bd9"), "dgx-002");
  testing::write_text(dir.path() / "bad.txt", "0x1 a\nnot-a-guid b\n");
  auto bad = load_guid_map(dir.path() / "bad.txt", o);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("bad.txt:2:"), std::string::npos);
}

}  // namespace
}  // namespace hypertopo::topology
