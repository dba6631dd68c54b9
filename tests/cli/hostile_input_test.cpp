// Hostile input through the `hypertopo` entry point: each bad input ends in one clear line that
// names the file (and line or key) and a non-zero exit; nothing crashes, hangs or grows unbounded.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "io/bounded_file.h"
#include "io/yaml_reader.h"
#include "tests/support/fake_sysfs.h"
#include "tests/support/fixtures.h"
#include "tests/support/ufm/fake_ufm_server.h"
#include "tests/support/ufm/ufm_generator.h"
#include "text/user_pattern.h"
#include "topology/tree_builder.h"

namespace hypertopo::cli {
namespace {

using hypertopo::testing::TempDir;
using hypertopo::testing::write_text;

hypertopo::testing::CapturedRun run_hostile(std::vector<std::string> args) {
  return hypertopo::testing::run_captured(run_cli, std::move(args));
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A leaf (S-10) with three CAs under a spine (S-20). Descriptions are the caller's.
std::string two_switch_capture(const std::string& leaf, const std::string& spine, const std::string& ca3) {
  return "Switch 8 \"S-0000000000000010\" # \"" + leaf + "\" enhanced port 0 lid 1 lmc 0\n" +
         "[1] \"S-0000000000000020\"[1] # \"" + spine + "\" lid 2 4xNDR\n" +
         "[2] \"H-0000000000000100\"[1](0000000000000101) # \"host-a mlx5_0\" lid 3 4xNDR\n" +
         "[3] \"H-0000000000000200\"[1](0000000000000201) # \"host-b mlx5_0\" lid 4 4xNDR\n" +
         "[4] \"H-0000000000000300\"[1](0000000000000301) # \"" + ca3 + "\" lid 5 4xNDR\n\n" +
         "Switch 8 \"S-0000000000000020\" # \"" + spine + "\" enhanced port 0 lid 2 lmc 0\n" +
         "[1] \"S-0000000000000010\"[1] # \"" + leaf + "\" lid 1 4xNDR\n";
}

// --- regular expressions: RE2, linear time -------------------------------------------------------

TEST(HostilePatterns, NestedQuantifiersAndHugeInputsMatchInLinearTime) {
  // std::regex overflows the stack on the first and backtracks for minutes on the second.
  auto l = text::UserPattern::compile("^l+$");
  ASSERT_TRUE(l) << l.error();
  EXPECT_TRUE(l->matches_part(std::string(100'000, 'l')));
  auto nested = text::UserPattern::compile("^((a+)+)$");
  ASSERT_TRUE(nested) << nested.error();
  EXPECT_TRUE(nested->matches_whole(std::string(31, 'a')));
  EXPECT_FALSE(nested->matches_part(std::string(31, 'a') + "!"));
  EXPECT_FALSE(nested->matches_part(std::string(100'000, 'a') + "!"));
  auto invalid = text::UserPattern::compile("(?=look)ahead");
  ASSERT_FALSE(invalid);
  EXPECT_TRUE(contains(invalid.error(), "not a valid RE2 regular expression")) << invalid.error();
}

TEST(HostilePatterns, CustomHostPatternOnAFortyKilobyteDescription) {
  topology::TreeBuilderOptions options;
  options.host_description_pattern = R"(^(\S+) )";
  auto builder = topology::TreeBuilder::create(options);
  ASSERT_TRUE(builder) << builder.error().message();
  const std::string host(40'000, 'x');
  EXPECT_EQ(builder->host_from_description(host + " mlx5_0"), host);
}

TEST(HostilePatterns, DiscoverWithHostilePatternsAndDescriptions) {
  TempDir dir;
  const auto capture = dir.path() / "fabric.out";
  // A spine described by 100 KB of 'l', a leaf whose name makes '^((a+)+)$' backtrack, a CA whose
  // description is 40 KB: the parser keeps InfiniBand's 64 bytes, the patterns run in linear time.
  write_text(capture, two_switch_capture(std::string(31, 'a') + "!b", std::string(100'000, 'l'),
                                         std::string(40'000, 'x') + " mlx5_0"));
  const auto config = dir.path() / "discover.yaml";
  write_text(config,
             "hostDescriptionPattern: '^(\\S+) '\n"
             "excludedSwitchPatterns: ['^l+$', '^((a+)+)$']\n");
  auto r =
      run_hostile({"discover", "--source", "ibnetdiscover:" + capture.string(), "--config", config.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "3 node description(s) longer than InfiniBand's 64 bytes")) << r.err;
  EXPECT_TRUE(contains(r.err, "1 switch(es) excluded by name pattern")) << r.err;
  // The 64 'x' left of the CA's description have no space: no host, one unmapped endpoint.
  EXPECT_TRUE(contains(r.err, "1 unmapped endpoint(s)")) << r.err;
  EXPECT_TRUE(contains(r.out, "2 nodes")) << r.out;
}

TEST(HostilePatterns, InvalidRe2SyntaxNamesTheFileAndKey) {
  TempDir dir;
  const auto config = dir.path() / "agent.yaml";
  write_text(config, "sources:\n  - kind: demo\nexcludedSwitchPatterns: ['ok', '(a)\\1']\n");
  auto r = run_hostile({"agent", "--config", config.string(), "--check"});
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.err, config.string())) << r.err;
  EXPECT_TRUE(contains(r.err, "excludedSwitchPatterns[1] '(a)\\1': not a valid RE2")) << r.err;
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;

  const auto builder = dir.path() / "discover.yaml";
  write_text(builder, "hostDescriptionPattern: '^(?<host>\\S+)(?=\\s)'\n");
  auto d = run_hostile({"discover", "--source", "demo", "--config", builder.string()});
  EXPECT_EQ(d.code, 2);
  EXPECT_TRUE(contains(d.err, builder.string() + ": hostDescriptionPattern: ")) << d.err;
  EXPECT_EQ(count_lines(d.err), 1u) << d.err;
}

// --- YAML: aliases and nesting are bounded ------------------------------------------------------

// Nine levels of nine aliases: 81 aliases that expand to 9^9 scalars in whatever walks the tree.
std::string alias_bomb() {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level < 9; ++level) {
    const std::string prev = "*a" + std::to_string(level - 1);
    text += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) text += (i ? ", " : "") + prev;
    text += "]\n";
  }
  return text;
}

TEST(HostileYaml, AliasBombsAreRefusedBeforeAnyoneWalksThem) {
  auto bomb = io::load_yaml(alias_bomb(), "bomb.yaml");
  ASSERT_FALSE(bomb);
  EXPECT_TRUE(contains(bomb.error().message(), "bomb.yaml:")) << bomb.error().message();
  EXPECT_TRUE(contains(bomb.error().message(), "nodes with aliases expanded; refused"))
      << bomb.error().message();

  std::string many = "a: &a x\nb: [";
  for (int i = 0; i < 101; ++i) many += (i ? ", " : "") + std::string("*a");
  many += "]\n";
  auto aliases = io::load_yaml(many, "many.yaml");
  ASSERT_FALSE(aliases);
  EXPECT_TRUE(contains(aliases.error().message(), "many.yaml:2: more than 100 aliases"))
      << aliases.error().message();

  auto cycle = io::load_yaml("a: &a [x, *a]\n", "cycle.yaml");
  ASSERT_FALSE(cycle);
  EXPECT_TRUE(contains(cycle.error().message(), "cycle.yaml:1: an alias inside the node it refers to"))
      << cycle.error().message();

  // A few aliases, as hand-written configs use them, are fine.
  auto fine = io::load_yaml("base: &b {cpu: 1}\nx: *b\ny: *b\n", "ok.yaml");
  ASSERT_TRUE(fine) << fine.error().message();
  EXPECT_EQ((*fine)["y"]["cpu"].as<int>(), 1);

  auto deep = io::load_yaml(std::string(1000, '[') + std::string(1000, ']'), "deep.yaml");
  ASSERT_FALSE(deep);
  EXPECT_TRUE(contains(deep.error().message(), "deep.yaml:1: nested deeper than 128 levels"))
      << deep.error().message();
}

// yaml-cpp 0.7 loops forever when a document's first token cannot begin a node: a ',' outside a
// flow collection, or a '?' after a tagged block scalar (found by fuzzing). Each is refused with its
// line; a ',' inside a plain scalar or a flow collection is still YAML as before.
TEST(HostileYaml, ATokenThatCannotBeginANodeIsRefusedNotLoopedOn) {
  for (const std::string text : {",", ", a", "\"a\",", "'a' ,", "[a],", "!!str ,", "&x ,", "!t,", "&x,",
                                 "# c\n,", "--- ,", "a: b\n---\n\"x\",\n",
                                 // yaml-cpp ends a tag, an anchor or a quoted scalar at a quote.
                                 "!a\"b\",", "!\"b\",", "&a\"b\",", "\"a\"\"b\","}) {
    auto doc = io::load_yaml(text, "f.yaml");
    ASSERT_FALSE(doc) << text;
    EXPECT_TRUE(contains(doc.error().message(), "f.yaml:")) << doc.error().message();
    EXPECT_TRUE(contains(doc.error().message(),
                         "not valid YAML: ',' outside a flow collection where a node is "
                         "expected"))
        << doc.error().message();
    auto all = io::load_all_yaml(text, "f.yaml");
    ASSERT_FALSE(all) << text;
    EXPECT_EQ(all.error().message(), doc.error().message());
  }
  const std::vector<std::pair<std::string, int>> keys = {
      {"! |\n?\n", 2}, {"!>\n?\n>", 2}, {"!t |\n  x\n? ", 3}};
  for (const auto& [text, line] : keys) {
    auto doc = io::load_yaml(text, "f.yaml");
    ASSERT_FALSE(doc) << text;
    EXPECT_TRUE(contains(
        doc.error().message(),
        "f.yaml:" + std::to_string(line) + ": not valid YAML: unexpected '?' where a node is expected"))
        << doc.error().message();
  }
  // Inside a block mapping yaml-cpp itself stops at the ','.
  auto in_map = io::load_yaml("x: 1\ny: , 2", "f.yaml");
  ASSERT_FALSE(in_map);
  EXPECT_TRUE(contains(in_map.error().message(), "f.yaml:2: not valid YAML")) << in_map.error().message();
  auto nul = io::load_yaml(std::string("a: b\n\0\0,", 7), "f.yaml");
  ASSERT_FALSE(nul);
  EXPECT_TRUE(contains(nul.error().message(), "f.yaml:2: not valid YAML: a control character (byte 0)"))
      << nul.error().message();
  for (const char* text : {"a, b", "a ,", "x: [a, \"b\", {c: d}]", "x: don't, won't", "- a,\n- b",
                           "! |\n  x\n", "--- !!map\na: !!str b\n", "a: 1\n---\nb: 2\n...\n---\n"}) {
    auto doc = io::load_all_yaml(text, "f.yaml");
    EXPECT_TRUE(doc) << text << ": " << doc.error().message();
  }
}

// The same through the commands that read YAML: one line naming the file and line, a non-zero exit,
// and no wait (each of these inputs used to hang the command).
TEST(HostileYaml, CommandsRefuseTheLoopingInputsQuickly) {
  TempDir dir;
  for (const std::string text : {"\"a\",\n", "!t,\n", "! |\n?\n"}) {
    const auto job = (dir.path() / "job.yaml").string();
    write_text(job, text);
    auto p = run_hostile({"place", "--nodes", "examples/simulate/nodes.json", "--topology",
                          "examples/simulate/hypernodes.json", "--job", job});
    EXPECT_NE(p.code, 0) << text;
    EXPECT_TRUE(contains(p.err, job + ":")) << p.err;
    EXPECT_TRUE(contains(p.err, "not valid YAML: ")) << p.err;
    EXPECT_EQ(count_lines(p.err), 1u) << p.err;

    const auto agent = (dir.path() / "agent.yaml").string();
    write_text(agent, "sources:\n  - kind: demo\n---\n" + text);
    auto a = run_hostile({"agent", "--config", agent, "--check"});
    EXPECT_NE(a.code, 0) << text;
    EXPECT_TRUE(contains(a.err, agent + ":")) << a.err;
    EXPECT_TRUE(contains(a.err, "not valid YAML: ")) << a.err;
    EXPECT_EQ(count_lines(a.err), 1u) << a.err;
  }
}

TEST(HostileYaml, EveryYamlInputRefusesTheBomb) {
  TempDir dir;
  const auto bomb = (dir.path() / "bomb.yaml").string();
  write_text(bomb, alias_bomb());
  auto expect_refused = [&](std::vector<std::string> args) {
    auto r = run_hostile(args);
    EXPECT_NE(r.code, 0) << args[0];
    EXPECT_TRUE(contains(r.err, bomb + ":")) << args[0] << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "aliases expanded; refused")) << args[0] << ": " << r.err;
  };
  expect_refused({"place", "--nodes", "examples/simulate/nodes.json", "--topology",
                  "examples/simulate/hypernodes.json", "--job", bomb});
  expect_refused({"place", "--nodes", bomb, "--topology", bomb, "--job", bomb});
  expect_refused({"extender", "--config", bomb});
  expect_refused({"agent", "--config", bomb, "--check"});
  expect_refused({"discover", "--source", "demo", "--config", bomb});
  const auto nodes = (dir.path() / "nodes.json").string();
  write_text(nodes, R"({"kind":"NodeList","items":[{"kind":"Node","metadata":{"name":"n1"}}]})");
  expect_refused({"discover", "--source", "labels:" + bomb, "--nodes", nodes});

  // Inline in the agent's config: the labels source's own block.
  const auto agent = (dir.path() / "agent.yaml").string();
  std::string inline_bomb = "sources:\n  - kind: labels\n    config:\n";
  std::istringstream lines(alias_bomb());
  for (std::string line; std::getline(lines, line);) inline_bomb += "      " + line + "\n";
  write_text(agent, inline_bomb);
  auto r = run_hostile({"agent", "--config", agent, "--check"});
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.err, agent + ":")) << r.err;
  EXPECT_TRUE(contains(r.err, "aliases expanded; refused")) << r.err;

  // A NodeReport among the reports a leader reads.
  const auto reports = dir.path() / "reports";
  std::filesystem::create_directories(reports);
  write_text(reports / "node-1.yaml", alias_bomb());
  auto d = run_hostile({"discover", "--source", "reports:" + reports.string()});
  EXPECT_NE(d.code, 0);
  EXPECT_TRUE(contains(d.err, "node-1.yaml")) << d.err;
  EXPECT_TRUE(contains(d.err, "aliases expanded; refused")) << d.err;
}

// --- JSON: nesting is bounded --------------------------------------------------------------------

TEST(HostileJson, ADeepTraceLineIsAnErrorWithFileAndLine) {
  TempDir dir;
  const auto trace = (dir.path() / "jobs.jsonl").string();
  write_text(trace, "\n" + std::string(100'000, '[') + "\n");
  auto r = run_hostile({"simulate", "--nodes", "examples/simulate/nodes.json", "--topology",
                        "examples/simulate/hypernodes.json", "--trace", trace});
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.err, trace + ":2: nested deeper than 128 levels")) << r.err;

  const auto job = (dir.path() / "job.json").string();
  write_text(job, std::string(100'000, '[') + std::string(100'000, ']'));
  auto p = run_hostile({"place", "--nodes", "examples/simulate/nodes.json", "--topology",
                        "examples/simulate/hypernodes.json", "--job", job});
  EXPECT_NE(p.code, 0);
  EXPECT_TRUE(contains(p.err, job + ": nested deeper than 128 levels")) << p.err;
}

// Cluster files are read with simdjson; what it refuses is still one error naming the file, and a
// number it cannot hold (an integer past 64 bits) still places, as it did before.
TEST(HostileJson, ClusterFilesSimdjsonRefusesAreOneErrorOrPlaceAsBefore) {
  TempDir dir;
  const auto nodes = (dir.path() / "nodes.json").string();
  const auto job = (dir.path() / "job.json").string();
  const auto hypernodes = (dir.path() / "hypernodes.json").string();
  write_text(job, R"({"apiVersion": "hypertopo.io/v1alpha1", "kind": "PlacementRequest", "name": "one",
                      "podSets": [{"name": "w", "count": 1, "requests": {"nvidia.com/gpu": "8"}}]})");
  write_text(hypernodes, R"({"kind": "List", "items": [{"kind": "HyperNode", "metadata": {"name": "leaf"},
      "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": "gpu-1"}}}]}}]})");
  // `metadata` holds the name and these members.
  auto node_list = [](const std::string& metadata) {
    return R"({"kind": "NodeList", "items": [{"metadata": {"name": "gpu-1", )" + metadata +
           R"(}, "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110",
           "nvidia.com/gpu": "8"}}}]})";
  };
  auto place = [&] {
    return run_hostile({"place", "--nodes", nodes, "--topology", hypernodes, "--job", job});
  };
  for (const auto& [label, message] : std::vector<std::pair<std::string, std::string>>{
           {"\"r\xff\"", nodes + ": not valid JSON: "},
           {std::string(300, '[') + std::string(300, ']'), nodes + ": nested deeper than 128 levels"},
           {"1e400", nodes + ": not valid JSON: "},
           {"{\"a\": 1}", nodes + ": Node gpu-1 metadata: labels.rack must be a string"}}) {
    write_text(nodes, node_list(R"("labels": {"rack": )" + label + "}"));
    auto r = place();
    EXPECT_EQ(r.code, 2) << label;
    EXPECT_TRUE(contains(r.err, message)) << r.err;
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  }
  write_text(nodes, node_list(R"("labels": {"rack": "r1"})"));
  auto plain = place();
  EXPECT_EQ(plain.code, 0) << plain.err;
  write_text(nodes, node_list(R"("labels": {"rack": "r1"}, "generation": 18446744073709551616)"));
  auto wide = place();
  EXPECT_EQ(wide.code, plain.code) << wide.err;
  EXPECT_EQ(wide.out, plain.out);
}

// --- files: bounded, regular --------------------------------------------------------------------

TEST(HostileFiles, DevZeroFifosAndHugeFilesAreOneErrorEach) {
  TempDir dir;
  const auto fifo = (dir.path() / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto huge = (dir.path() / "huge.yaml").string();
  {
    write_text(huge, "");
    std::filesystem::resize_file(huge, std::size_t{5} << 20);  // sparse: no disk used
  }
  const auto capture = dir.path() / "fabric.out";
  write_text(capture, two_switch_capture("leaf", "spine", "host-c mlx5_0"));
  // A mounted Secret's files are symbolic links; one that leads to a device is refused.
  const auto credentials = dir.path() / "ufm-credentials";
  std::filesystem::create_directories(credentials);
  std::filesystem::create_symlink("/dev/zero", credentials / "token");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"discover", "--source", "ibnetdiscover:/dev/zero"},
       "/dev/zero: is a character device, not a regular file"},
      {{"discover", "--source", "ibnetdiscover:" + fifo}, fifo + ": is a FIFO, not a regular file"},
      {{"discover", "--source", "demo", "--config", "/dev/zero"}, "/dev/zero: is a character device"},
      {{"discover", "--source", "demo", "--config", fifo}, fifo + ": is a FIFO"},
      {{"discover", "--source", "demo", "--config", huge}, huge + ": larger than the 4 MiB limit"},
      {{"discover", "--source", "ibnetdiscover:" + capture.string(), "--guid-map", "/dev/zero"},
       "/dev/zero: is a character device"},
      {{"agent", "--config", fifo, "--check"}, fifo + ": is a FIFO"},
      {{"place", "--nodes", "/dev/zero", "--topology", "/dev/zero", "--job", "/dev/zero"},
       "/dev/zero: is a character device"},
      {{"extender", "--config", fifo}, fifo + ": is a FIFO"},
      {{"discover", "--source", "ufm:https://ufm.example", "--ufm-credentials", credentials.string()},
       "UFM token: " + (credentials / "token").string() + ": is a character device"},
  };
  for (const auto& c : cases) {
    auto r = run_hostile(c.args);
    EXPECT_NE(r.code, 0) << c.args[1] << " " << c.args.back();
    EXPECT_TRUE(contains(r.err, c.message)) << r.err;
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  }
}

TEST(HostileFiles, StandardInputIsCapped) {
  std::istringstream big(std::string(2048, 'x'));
  auto r = io::read_bounded_stream(big, "<stdin>", 1024);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "<stdin>: larger than the 1 KiB limit");
  std::istringstream small("abc");
  EXPECT_EQ(io::read_bounded_stream(small, "<stdin>", 1024).value_or(""), "abc");
}

TEST(HostileFiles, AFifoAsSysfsNodeDescDoesNotHangTheProbe) {
  TempDir root;
  hypertopo::testing::FakeHca hca{
      .name = "mlx5_0",
      .node_guid = "a088:c203:00a1:b000",
      .sys_image_guid = "a088:c203:00a1:b000",
      .ports = {hypertopo::testing::FakePort{.gid0 = "fe80:0000:0000:0000:a088:c203:00a1:b000"}}};
  hypertopo::testing::write_fake_hca(root.path(), hca);
  const auto desc = root.path() / "sys/class/infiniband/mlx5_0/node_desc";
  ASSERT_EQ(::mkfifo(desc.c_str(), 0600), 0);
  auto r = run_hostile(
      {"probe", "--source", "ib-local", "--root", root.path().string(), "--node-name", "n1", "-o", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "node_desc: is a FIFO, not a regular file")) << r.err;
}

// --- text that is not UTF-8 ----------------------------------------------------------------------

TEST(HostileText, NonUtf8NodeDescriptionsAndConfigsStillGiveJson) {
  TempDir root;
  hypertopo::testing::FakeHca hca{
      .name = "mlx5_0",
      .node_guid = "a088:c203:00a1:b000",
      .sys_image_guid = "a088:c203:00a1:b000",
      .node_desc = "dgx-01 \xff\xfe mlx5_0",
      .ports = {hypertopo::testing::FakePort{.gid0 = "fe80:0000:0000:0000:a088:c203:00a1:b000"}}};
  hypertopo::testing::write_fake_hca(root.path(), hca);
  auto probe = run_hostile(
      {"probe", "--source", "ib-local", "--root", root.path().string(), "--node-name", "n1", "-o", "json"});
  ASSERT_EQ(probe.code, 0) << probe.err;
  EXPECT_TRUE(contains(probe.out, "dgx-01 \xEF\xBF\xBD\xEF\xBF\xBD mlx5_0")) << probe.out;
  EXPECT_FALSE(nlohmann::json::parse(probe.out, nullptr, false).is_discarded());

  TempDir dir;
  const auto capture = dir.path() / "fabric.out";
  write_text(capture, two_switch_capture("leaf-\xe9", "spine", "host-c mlx5_0"));
  auto d = run_hostile({"discover", "--source", "ibnetdiscover:" + capture.string(), "-o", "json"});
  ASSERT_EQ(d.code, 0) << d.err;
  auto list = nlohmann::json::parse(d.out, nullptr, false);
  ASSERT_FALSE(list.is_discarded()) << d.out;
  // A tier name becomes a HyperNode's spec.tierName and a label value: one that is not printable
  // ASCII is refused at load, naming the file and the key, not replaced.
  const auto config = dir.path() / "discover.yaml";
  write_text(config, "tierNames: [\"r\xe9seau\", spine]\n");
  auto bad = run_hostile({"discover", "--source", "ibnetdiscover:" + capture.string(), "--config",
                          config.string(), "-o", "json"});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find(config.string() + ": tierNames[0]:"), std::string::npos) << bad.err;
}

// A node name, a tier name and a file name that are not UTF-8 (YAML and file systems take any
// bytes) reach the JSON that place and simulate print: the invalid bytes become U+FFFD.
TEST(HostileText, NonUtf8NamesInPlaceAndSimulateStillGiveJson) {
  TempDir dir;
  const std::string odd_node = "gpu-\xff-1";
  std::string nodes = "apiVersion: v1\nkind: List\nitems:\n";
  for (const std::string& name : {odd_node, std::string("gpu-2")}) {
    nodes +=
        "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: \"" + name +
        "\"\n  status:\n    allocatable: {cpu: \"64\", memory: 512Gi, pods: \"110\", nvidia.com/gpu: \"8\"}\n"
        "    conditions: [{type: Ready, status: \"True\"}]\n";
  }
  write_text(dir.path() / "nodes.yaml", nodes);
  write_text(dir.path() / "hypernodes.yaml",
             "apiVersion: v1\nkind: List\nitems:\n"
             "- apiVersion: topology.volcano.sh/v1alpha1\n  kind: HyperNode\n  metadata: {name: leaf-a}\n"
             "  spec:\n    tier: 1\n    tierName: \"le\xff"
             "af\"\n    members:\n"
             "    - {type: Node, selector: {exactMatch: {name: \"" +
                 odd_node + "\"}}}\n    - {type: Node, selector: {exactMatch: {name: gpu-2}}}\n");
  const std::string request =
      R"({"apiVersion": "hypertopo.io/v1alpha1", "kind": "PlacementRequest", "name": "two",
          "podSets": [{"name": "worker", "count": 2, "requests": {"nvidia.com/gpu": "8"}}]})";
  write_text(dir.path() / "job.json", request);
  const std::string nodes_file = (dir.path() / "nodes.yaml").string();
  const std::string topology_file = (dir.path() / "hypernodes.yaml").string();

  for (const char* format : {"json", "yaml"}) {
    auto p = run_hostile({"place", "--nodes", nodes_file, "--topology", topology_file, "--job",
                          (dir.path() / "job.json").string(), "-o", format});
    ASSERT_EQ(p.code, 0) << format << ": " << p.err;
    if (std::string(format) == "yaml") continue;
    auto placed = nlohmann::json::parse(p.out, nullptr, false);
    ASSERT_FALSE(placed.is_discarded()) << p.out;
    std::vector<std::string> assigned;
    for (const auto& a : placed["podSets"][0]["assignment"]) assigned.push_back(a["node"]);
    std::sort(assigned.begin(), assigned.end());
    EXPECT_EQ(assigned, (std::vector<std::string>{"gpu-2", "gpu-\xEF\xBF\xBD-1"})) << p.out;
  }

  const std::string trace = (dir.path() / "jobs-\xfe.jsonl").string();
  write_text(trace, R"({"time": 0, "job": "two", "duration": 60, "arrive": )" +
                        nlohmann::json::parse(request).dump() + "}\n");
  auto s = run_hostile(
      {"simulate", "--nodes", nodes_file, "--topology", topology_file, "--trace", trace, "-o", "json"});
  ASSERT_EQ(s.code, 0) << s.err;
  auto report = nlohmann::json::parse(s.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << s.out;
  EXPECT_EQ(report["trace"], (dir.path() / "jobs-\xEF\xBF\xBD.jsonl").string()) << s.out;
  EXPECT_EQ(report["cluster"]["nodes"], 2) << s.out;
  bool odd_tier = false;
  for (const auto& t : report["cluster"]["tiers"])
    odd_tier = odd_tier || t["name"] ==
                               "le\xEF\xBF\xBD"
                               "af";
  EXPECT_TRUE(odd_tier) << s.out;
  EXPECT_EQ(report["policies"][0]["admitted"], 1) << s.out;
}

TEST(HostileText, WrongTypesInAConfigNameTheFileAndKey) {
  TempDir dir;
  const auto config = (dir.path() / "discover.yaml").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tierNames: yes\n", config + ": tierNames: must be a list of strings"},
      {"source: []\n", config + ": source: must be a string"},
      {"guidMap: {[a]: b}\n", config + ":1: wrong type"},
      {"excludedSwitchPatterns: [{a: 1}]\n", config + ": excludedSwitchPatterns[0]: must be a string"},
  };
  for (const auto& [text, message] : cases) {
    write_text(config, text);
    auto r = run_hostile({"discover", "--source", "demo", "--config", config});
    EXPECT_EQ(r.code, 2) << text;
    EXPECT_TRUE(contains(r.err, message)) << text << r.err;
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  }
}

// --- ibnetdiscover captures that contradict themselves --------------------------------------------

TEST(HostileCapture, ATruncatedCaptureFailsNamingTheMissingSwitch) {
  TempDir dir;
  const auto capture = dir.path() / "cut.out";
  std::string whole = two_switch_capture("leaf", "spine", "host-c mlx5_0");
  write_text(capture, whole.substr(0, whole.find("\n\n")));  // the spine's block never came
  auto r = run_hostile({"discover", "--source", "ibnetdiscover:" + capture.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(
      contains(r.err, capture.string() + ":2: 1 switch(es) are named by port lines but never described"))
      << r.err;
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
}

TEST(HostileCapture, ConflictsFailAndRepeatsWarnOnce) {
  TempDir dir;
  const auto capture = dir.path() / "fabric.out";
  const std::string base = two_switch_capture("leaf", "spine", "host-c mlx5_0");
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {base + "\nCa 1 \"H-0000000000000100\" # \"host-a mlx5_0\"\n\nCa 1 \"H-0000000000000100\" # \"host-z "
              "mlx5_0\"\n",
       "fabric.out:12: GUID H-0000000000000100 names two nodes"},
      {base + "[1] \"H-0000000000000900\"[1](0000000000000901) # \"host-q mlx5_0\" lid 9 4xNDR\n",
       "fabric.out:9: port [1] of S-0x0000000000000020 is cabled to H-0x0000000000000900[1] here and to "
       "S-0x0000000000000010[1] on line 8"},
      {base + "[4294967297] \"H-0000000000000900\"[1] # \"host-q mlx5_0\" lid 9 4xNDR\n",
       "fabric.out:9: port number 4294967297 is out of range (0-255)"},
  };
  for (const auto& c : cases) {
    write_text(capture, c.text);
    auto r = run_hostile({"discover", "--source", "ibnetdiscover:" + capture.string()});
    EXPECT_EQ(r.code, 2) << c.message;
    EXPECT_TRUE(contains(r.err, c.message)) << r.err;
  }

  // A capture that repeats the spine's block 2,000 times: one line about it, with the count.
  std::string repeated = base;
  const std::string spine_block = base.substr(base.find("\n\n") + 1);
  for (int i = 0; i < 2000; ++i) repeated += "\n" + spine_block;
  write_text(capture, repeated);
  auto r = run_hostile({"discover", "--source", "ibnetdiscover:" + capture.string()});
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
  EXPECT_TRUE(
      contains(r.err, "appears twice; the later block is merged into the first (and 1999 more like it)"))
      << r.err.substr(0, 2000);
  EXPECT_LT(count_lines(r.err), 10u) << r.err.substr(0, 2000);
}

TEST(HostileCapture, GuidMapAndAnnotationConflicts) {
  TempDir dir;
  const auto capture = dir.path() / "fabric.out";
  write_text(capture, two_switch_capture("leaf", "spine", "host-c mlx5_0"));
  const auto map = dir.path() / "guids.txt";
  write_text(map, "0x0000000000000101 node-a\n0x0000000000000201 node-b\n0x101 node-c\n");
  auto r =
      run_hostile({"discover", "--source", "ibnetdiscover:" + capture.string(), "--guid-map", map.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(
      contains(r.err, map.string() + ":3: GUID 0x101 is mapped to node-c here and to node-a on line 1"))
      << r.err;

  const auto nodes = dir.path() / "nodes.json";
  write_text(nodes, R"({"kind":"NodeList","items":[
    {"kind":"Node","metadata":{"name":"host-a"}},
    {"kind":"Node","metadata":{"name":"host-b","annotations":{"hypertopo.io/ib-port-guids":"0xzz, 0x0000000000000201, guid"}}}]})");
  auto n =
      run_hostile({"discover", "--source", "ibnetdiscover:" + capture.string(), "--nodes", nodes.string()});
  EXPECT_EQ(n.code, 0) << n.err;
  EXPECT_TRUE(contains(n.err,
                       "2 entr(ies) of hypertopo.io/ib-port-guids annotations are not GUIDs and were "
                       "ignored (first: node host-b: '0xzz')"))
      << n.err;
}

// --- UFM answers that hold no fabric --------------------------------------------------------------

// A UFM that answers, but with no fabric in it (no port, a page short of its count, text that is not
// JSON), failed as an unreachable one does: exit 3 of the command contract, not 2, which is for the
// caller's own input.
TEST(HostileUfm, AnEmptyAnswerOrAMissingPageIsAnError) {
  TempDir dir;
  write_text(dir.path() / "creds" / "token", "t0ken\n");
  hypertopo::testing::FakeUfmServer server;
  server.set_token("t0ken");
  server.set_records("ports", {});
  server.set_records("links", {});
  ASSERT_TRUE(server.start().has_value());
  write_text(dir.path() / "ca.pem", server.ca_pem());
  const std::vector<std::string> ufm = {"discover",
                                        "--source",
                                        "ufm:" + server.url(),
                                        "--ufm-credentials",
                                        (dir.path() / "creds").string(),
                                        "--ufm-ca",
                                        (dir.path() / "ca.pem").string()};
  auto empty = run_hostile(ufm);
  EXPECT_EQ(empty.code, 3);
  EXPECT_TRUE(contains(empty.err, "resources/ports returned no ports")) << empty.err;

  auto fabric =
      hypertopo::testing::generate_ufm_fabric({.pods = 1, .leaves_per_pod = 2, .hosts_per_leaf = 2});
  server.set_records("ports", fabric.ports);
  server.set_records("links", fabric.links);
  server.script({.status = 200, .body = R"({"total_resources": 999999999, "data": []})"});
  auto paged = ufm;
  paged.insert(paged.end(), {"--ufm-page-size", "20"});
  auto missing = run_hostile(paged);
  EXPECT_EQ(missing.code, 3);
  EXPECT_TRUE(contains(missing.err, "total_resources is 999999999 but the answer ends after 0 record(s)"))
      << missing.err;

  server.script({.status = 200, .body = "<html>maintenance</html>"});
  auto garbage = run_hostile(ufm);
  EXPECT_EQ(garbage.code, 3);
  EXPECT_TRUE(contains(garbage.err, "hypertopo discover: error: ")) << garbage.err;
  EXPECT_TRUE(contains(garbage.err, "/resources/ports: not valid JSON")) << garbage.err;
}

// --- a pod list that is not one -------------------------------------------------------------------

// `discover -o dot --pods` counts the GPUs bound pods use: text, a JSON array or another kind of
// list is an error naming the file, never "no pods" (place and simulate: PlaceCommandTest).
TEST(HostilePods, DiscoverDotRefusesPodsThatAreNotAPodList) {
  TempDir dir;
  const auto pods = (dir.path() / "pods.txt").string();
  for (const std::string text : {"just some text\n", "[1, 2]\n", R"({"kind": "NodeList", "items": []})"}) {
    write_text(pods, text);
    auto r = run_hostile(
        {"discover", "--source", "demo", "-o", "dot", "--assume-gpus-per-node", "8", "--pods", pods});
    EXPECT_NE(r.code, 0) << text << r.out;
    // After the discovery's own warnings, one error naming the file.
    EXPECT_TRUE(contains(r.err, "error: --pods: " + pods + ":")) << r.err;
    EXPECT_EQ(r.out, "") << text;
  }
}

// --- a full disk ---------------------------------------------------------------------------------

// run_cli with standard output on /dev/full, as `hypertopo ... > /dev/full` has it.
hypertopo::testing::CapturedRun run_to_full_disk(std::vector<std::string> args) {
  args.insert(args.begin(), "hypertopo");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::filebuf full;
  if (!full.open("/dev/full", std::ios::out)) return {};
  std::ostringstream err;
  auto* old_out = std::cout.rdbuf(&full);
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  hypertopo::testing::CapturedRun r;
  r.code = run_cli(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  std::cout.clear();
  r.err = err.str();
  return r;
}

TEST(HostileOutput, AFullDiskIsAnError) {
  HT_REQUIRE(std::filesystem::exists("/dev/full"), "/dev/full");
  TempDir dir;
  // The first arrival of the example trace, as a job file of its own.
  const auto job = dir.path() / "job.json";
  {
    std::istringstream trace(hypertopo::testing::read_text("examples/simulate/jobs.jsonl"));
    std::string first;
    std::getline(trace, first);
    write_text(job, nlohmann::json::parse(first)["arrive"].dump());
  }
  const std::vector<std::vector<std::string>> commands = {
      {"discover", "--source", "demo"},
      {"discover", "--source", "demo", "-o", "json"},
      {"place", "--nodes", "examples/simulate/nodes.json", "--topology", "examples/simulate/hypernodes.json",
       "--job", job.string()},
      {"simulate", "--nodes", "examples/simulate/nodes.json", "--topology",
       "examples/simulate/hypernodes.json", "--trace", "examples/simulate/jobs.jsonl"},
  };
  for (const auto& c : commands) {
    auto r = run_to_full_disk(c);
    EXPECT_NE(r.code, 0) << c[0];
    EXPECT_TRUE(contains(r.err, "hypertopo " + c[0] + ": error: cannot write the output"))
        << c[0] << ": " << r.err;
  }
  TempDir root;
  hypertopo::testing::write_fake_hca(
      root.path(),
      {.name = "mlx5_0", .node_guid = "a088:c203:00a1:b000", .node_desc = "n1 mlx5_0", .ports = {{}}});
  auto probe = run_to_full_disk(
      {"probe", "--source", "ib-local", "--root", root.path().string(), "--node-name", "n1"});
  EXPECT_NE(probe.code, 0);
  EXPECT_TRUE(contains(probe.err, "cannot write the output: No space left on device")) << probe.err;
}

// --- labels -------------------------------------------------------------------------------------

TEST(HostileLabels, KubernetesRulesForKeysValuesAndUniqueTierNames) {
  TempDir dir;
  const auto config = (dir.path() / "discover.yaml").string();
  write_text(config, "source: my source\n");
  auto source = run_hostile({"discover", "--source", "demo", "--config", config});
  EXPECT_EQ(source.code, 2);
  EXPECT_TRUE(contains(source.err, config + ": source: 'my source' is not a Kubernetes label value"))
      << source.err;

  write_text(config, "tierNames: [leaf, leaf]\n");
  auto tiers = run_hostile({"discover", "--source", "demo", "--config", config});
  EXPECT_EQ(tiers.code, 2);
  EXPECT_TRUE(contains(tiers.err, config + ": tierNames[1]: 'leaf' is named twice")) << tiers.err;

  auto prefix =
      run_hostile({"discover", "--source", "demo", "-o", "labels", "--label-prefix", "bad prefix!/"});
  EXPECT_EQ(prefix.code, 2);
  EXPECT_TRUE(contains(prefix.err, "--label-prefix: 'bad prefix!/1' is not a Kubernetes label key"))
      << prefix.err;

  const auto kubeconfig = (dir.path() / "kubeconfig").string();
  write_text(kubeconfig, "");
  auto label =
      run_hostile({"apply", "--source", "demo", "--kubeconfig", kubeconfig, "--source-label", "bad value!"});
  EXPECT_EQ(label.code, 2);
  EXPECT_TRUE(contains(label.err, "--source-label: 'bad value!' is not a Kubernetes label value"))
      << label.err;

  auto fine =
      run_hostile({"discover", "--source", "demo", "-o", "labels", "--label-prefix", "example.com/rack-"});
  EXPECT_EQ(fine.code, 0) << fine.err;
  EXPECT_TRUE(contains(fine.out, "example.com/rack-1")) << fine.out;
}

// --- one message format for every config file ----------------------------------------------------

// Each config a user hands the CLI, with one key misspelt: the error is the same line everywhere,
// "<file>: <key.path>: unknown key (known: ...)" (io/config_reader.h).
struct UnknownKeyCase {
  std::string name;
  std::string file;               // written into a temporary folder
  std::string text;               // its content, with one unknown key
  std::vector<std::string> args;  // "@file" is the file's path, "@job" a valid placement request
  std::string where;              // what follows the path: "" or a line (":1" for a trace)
  std::string key_path;           // of the unknown key
  std::string known;              // the keys listed as known
};

class UnknownConfigKey : public ::testing::TestWithParam<UnknownKeyCase> {};

TEST_P(UnknownConfigKey, TheErrorNamesTheFileTheKeyPathAndTheKnownKeys) {
  const UnknownKeyCase& c = GetParam();
  TempDir dir;
  const std::string file = (dir.path() / c.file).string();
  write_text(file, c.text);
  const std::string job = (dir.path() / "job.json").string();
  write_text(job, R"({"apiVersion": "hypertopo.io/v1alpha1", "kind": "PlacementRequest", "name": "two",
                      "podSets": [{"name": "worker", "count": 2, "requests": {"nvidia.com/gpu": "8"}}]})");
  std::vector<std::string> args = c.args;
  for (auto& a : args) {
    if (auto at = a.find("@file"); at != std::string::npos) a.replace(at, 5, file);
    if (a == "@job") a = job;
  }
  auto r = run_hostile(args);
  EXPECT_NE(r.code, 0) << r.out;
  const std::string expected = file + c.where + ": " + c.key_path + ": unknown key (known: " + c.known + ")";
  EXPECT_TRUE(contains(r.err, expected)) << "expected: " << expected << "\nstderr: " << r.err;
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    EveryConfig, UnknownConfigKey,
    ::testing::Values(
        UnknownKeyCase{
            "BuilderConfig",
            "discover.yaml",
            "tierNames: [leaf]\ntierName: [spine]\n",
            {"discover", "--source", "demo", "--config", "@file"},
            "",
            "tierName",
            "source, tierNames, hostDescriptionPattern, excludedDevicePatterns, excludedSwitchPatterns, "
            "firmwareDescriptionPatterns, guidMap, appliancePatterns, keepHosts"},
        UnknownKeyCase{"LabelConfig",
                       "labels.yaml",
                       "networkTopologyTypes:\n  rack: [{nodeLabel: rack, tier: 1}, {nodeLabel: "
                       "kubernetes.io/hostname}]\n",
                       {"discover", "--source", "labels:@file", "--nodes", "examples/simulate/nodes.json"},
                       "",
                       "networkTopologyTypes.rack[0].tier",
                       "nodeLabel"},
        UnknownKeyCase{
            "LabelsInTheAgentConfig",
            "config.yaml",
            "sources:\n- kind: labels\n  config:\n    networkTopologyTypes:\n      rack: [{nodeLabel: "
            "rack, tier: 1}, {nodeLabel: kubernetes.io/hostname}]\n",
            {"agent", "--config", "@file", "--check"},
            "",
            "sources[0].config.networkTopologyTypes.rack[0].tier",
            "nodeLabel"},
        UnknownKeyCase{"RoceHierarchy",
                       "hierarchy.yaml",
                       "rules:\n- {pattern: 'leaf-(\\d+)', parent: spine, weight: 2}\n",
                       {"discover", "--source", "roce:@file"},
                       "",
                       "rules[0].weight",
                       "pattern, parent"},
        UnknownKeyCase{"ExtenderConfig",
                       "extender.yaml",
                       "listen: 127.0.0.1:0\ntls: {certFile: a.crt, keyFlie: a.key}\n",
                       {"extender", "--config", "@file"},
                       "",
                       "tls.keyFlie",
                       "certFile, keyFile, clientCAFile"},
        UnknownKeyCase{"SchedulerConfig",
                       "volcano-scheduler.conf",
                       "tiers: []\nhypertopo: {profil: kueue}\n",
                       {"place", "--nodes", "examples/simulate/nodes.json", "--topology",
                        "examples/simulate/hypernodes.json", "--job", "@job", "--scheduler-config", "@file"},
                       "",
                       "hypertopo.profil",
                       "profile, maxPodsPerJob, fabricHealth"},
        UnknownKeyCase{"TraceLine",
                       "jobs.jsonl",
                       R"({"time": 0, "job": "a", "duration": 1, "arive": {}})"
                       "\n",
                       {"simulate", "--nodes", "examples/simulate/nodes.json", "--topology",
                        "examples/simulate/hypernodes.json", "--trace", "@file"},
                       ":1",
                       "arive",
                       "time, job, arrive, duration, priority, preemptionPolicy"}),
    [](const ::testing::TestParamInfo<UnknownKeyCase>& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace hypertopo::cli
