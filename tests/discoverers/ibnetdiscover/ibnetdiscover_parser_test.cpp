// The ibnetdiscover parser on every public capture, on broken input, and on mutated input (run
// under ASan/UBSan by scripts/test.sh: a crash or an out-of-bounds read fails the run).
#include "discoverers/ibnetdiscover/ibnetdiscover_parser.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include "tests/support/fixtures.h"
#include "topology/tree_builder.h"

namespace hypertopo::discoverers {
namespace {

using topology::VertexKind;

std::vector<std::filesystem::path> capture_fixtures() {
  std::vector<std::filesystem::path> out;
  auto dir = testing::fixtures_dir() / "ibnetdiscover";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(IbnetdiscoverParser, EveryPublicCaptureParsesAndBuildsAValidTree) {
  auto files = capture_fixtures();
  HT_REQUIRE(!files.empty(), "fixtures ibnetdiscover/*");
  auto builder = topology::TreeBuilder::create();
  ASSERT_TRUE(builder);
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    auto parsed = parse_ibnetdiscover_file(f);
    ASSERT_TRUE(parsed) << parsed.error().message();
    EXPECT_GT(parsed->graph.vertex_count(), 0u);
    auto tree = builder->build(parsed->graph);
    ASSERT_TRUE(tree) << tree.error().message();
    EXPECT_TRUE(topology::check_invariants(*tree));
  }
}

TEST(IbnetdiscoverParser, CaptureDetails) {
  HT_REQUIRE_FIXTURE(stderr_capture, "ibnetdiscover/ibtopotool-3.topo");
  auto parsed = parse_ibnetdiscover_file(stderr_capture);
  ASSERT_TRUE(parsed) << parsed.error().message();
  // The first line is a umad timeout that ibnetdiscover printed to stderr: a warning, not data.
  ASSERT_FALSE(parsed->warnings.empty());
  EXPECT_NE(parsed->warnings[0].find("ibtopotool-3.topo:1: ignored a diagnostic line"), std::string::npos)
      << parsed->warnings[0];
  // Self-loops are reported and never become neighbours.
  bool self_loop_reported = false;
  for (const auto& w : parsed->warnings) self_loop_reported |= w.find("self-loop") != std::string::npos;
  EXPECT_TRUE(self_loop_reported);
  auto sw = parsed->graph.find("0xe41d2d030003e470");
  ASSERT_TRUE(sw);
  for (auto n : parsed->graph.neighbors(*sw)) EXPECT_NE(n, *sw);
  // A CA port named by its port GUID, owned by its node GUID.
  auto ca = parsed->graph.find("0x0002c903003421b2");
  ASSERT_TRUE(ca);
  EXPECT_EQ(parsed->graph.vertex(*ca).node_guid, "0x0002c903003421b0");
  EXPECT_EQ(parsed->graph.vertex(*ca).port, 2);
  EXPECT_EQ(parsed->graph.vertex(*ca).description, "r-ufm111 HCA-1");
}

TEST(IbnetdiscoverParser, ParallelLinksAreKeptAndEachCableCountedOnce) {
  const char* text = R"(
switchguid=0x10(10)
Switch	8 "S-0000000000000010"		# "MF0;LEAF-1:MQM9790/U1" enhanced port 0 lid 1 lmc 0
[1]	"S-0000000000000020"[1]		# "MF0;SPINE-1:MQM9790/U1" lid 2 4xNDR
[2]	"S-0000000000000020"[2]		# "MF0;SPINE-1:MQM9790/U1" lid 2 4xNDR
[3]	"H-0000000000000100"[1](0000000000000101) 		# "n1 mlx5_0" lid 3 4xNDR

switchguid=0x20(20)
Switch	8 "S-0000000000000020"		# "MF0;SPINE-1:MQM9790/U1" enhanced port 0 lid 2 lmc 0
[1]	"S-0000000000000010"[1]		# "MF0;LEAF-1:MQM9790/U1" lid 1 4xNDR
[2]	"S-0000000000000010"[2]		# "MF0;LEAF-1:MQM9790/U1" lid 1 4xNDR

caguid=0x100
Ca	1 "H-0000000000000100"		# "n1 mlx5_0"
[1](0000000000000101) 	"S-0000000000000010"[3]		# lid 3 lmc 0 "MF0;LEAF-1:MQM9790/U1" lid 1 4xNDR   
)";
  auto parsed = parse_ibnetdiscover(text, "inline");
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->switches, 2u);
  EXPECT_EQ(parsed->cas, 1u);
  EXPECT_EQ(parsed->graph.links().size(), 3u);  // two parallel inter-switch cables and one HCA cable
  auto ca = parsed->graph.find("0x0000000000000101");
  ASSERT_TRUE(ca);
  EXPECT_EQ(parsed->graph.links().back().rate, "4xNDR");
}

TEST(IbnetdiscoverParser, PortsReportFormat) {
  HT_REQUIRE_FIXTURE(report, "ibnetdiscover/ibnetdiscover-p-ports-report-ibsim.txt");
  auto parsed = parse_ibnetdiscover_file(report);
  ASSERT_TRUE(parsed) << parsed->warnings.size();
  EXPECT_EQ(parsed->graph.endpoint_count(), 8u);
  EXPECT_EQ(parsed->graph.switch_count(), 4u);
  auto tree = topology::TreeBuilder::create()->build(parsed->graph);
  ASSERT_TRUE(tree);
  // gpu01/gpu02 share the su1 rail leaves, gpu03/gpu04 the su2 ones: two tier-1 domains.
  ASSERT_EQ(tree->size(), 2u);
  EXPECT_EQ(tree->domain(0).nodes, (std::vector<std::string>{"hxa-gpu01", "hxa-gpu02"}));
}

// A file is read in pieces of 1 MiB: lines cut between two pieces, and a last line without its
// newline, read as they read in one text.
TEST(IbnetdiscoverParser, AFileReadInPiecesGivesTheGraphOfItsWholeText) {
  std::string text;
  char line[160];
  for (int leaf = 0; leaf < 400; ++leaf) {
    std::snprintf(line, sizeof line,
                  "switchguid=0x%x\nSwitch\t41 \"S-%016x\"\t\t# \"MF0;leaf-%03d:MQM9700/U1\" lid %d\n",
                  0x1000 + leaf, 0x1000 + leaf, leaf, leaf);
    text += line;
    for (int port = 1; port <= 40; ++port) {
      const int host = leaf * 40 + port - 1;
      std::snprintf(line, sizeof line, "[%d]\t\"H-%016x\"[1](%016x) \t\t# \"host%05d mlx5_0\" lid %d 4xNDR\n",
                    port, 0x100000 + 2 * host, 0x100001 + 2 * host, host, host);
      text += line;
    }
    text += "\n";
  }
  text.pop_back();
  text.pop_back();                               // the last port line ends the file without its newline
  ASSERT_GT(text.size(), std::size_t{1} << 20);  // more than one piece
  testing::TempDir dir;
  const auto path = dir.path() / "fabric.out";
  std::ofstream(path, std::ios::binary) << text;
  auto from_file = parse_ibnetdiscover_file(path);
  auto from_text = parse_ibnetdiscover(text, path.string());
  ASSERT_TRUE(from_file) << from_file.error().message();
  ASSERT_TRUE(from_text) << from_text.error().message();
  EXPECT_EQ(from_file->warnings, from_text->warnings);
  EXPECT_EQ(from_file->switches, 400u);
  EXPECT_EQ(from_file->cas, 0u);  // the hosts are named by the switches' port lines only
  ASSERT_EQ(from_file->graph.vertex_count(), 400u + 16000u);
  ASSERT_EQ(from_file->graph.vertex_count(), from_text->graph.vertex_count());
  ASSERT_EQ(from_file->graph.links().size(), 16000u);
  for (topology::VertexId v = 0; v < from_file->graph.vertex_count(); ++v) {
    const auto& a = from_file->graph.vertex(v);
    const auto& b = from_text->graph.vertex(v);
    ASSERT_EQ(a.id, b.id);
    ASSERT_EQ(a.description, b.description);
    ASSERT_EQ(a.node_guid, b.node_guid);
  }
  const auto last = from_file->graph.find("0x0000000000107cff");  // host 15999's port
  ASSERT_TRUE(last);
  EXPECT_EQ(from_file->graph.vertex(*last).description, "host15999 mlx5_0");
  EXPECT_EQ(from_file->graph.vertex(*last).node_guid, "0x0000000000107cfe");
  EXPECT_EQ(from_file->graph.links().back().rate, "4xNDR");
}

void expect_error(std::string_view text, const std::string& expected) {
  auto parsed = parse_ibnetdiscover(text, "in.out");
  ASSERT_FALSE(parsed) << "accepted: " << text.substr(0, 60);
  EXPECT_NE(parsed.error().message().find(expected), std::string::npos) << parsed.error().message();
}

TEST(IbnetdiscoverParser, BrokenInputGivesALineNumberedError) {
  expect_error("", "in.out: no switches or CAs found");
  expect_error("# only comments\n\n", "no switches or CAs found");
  expect_error(std::string("Switch 8 \"S-10\"\0\x01\x02", 18), "in.out:1: binary data");
  expect_error("[1] \"S-10\"[2]\n", "in.out:1: a port line before any Switch/Ca header");
  expect_error("Switch 8 \"S-10\" # \"a\"\n[1] \"S-20\n", "in.out:2: port line without a valid");
  expect_error("Switch 8 \"S-10\" # \"a\"\n[1]\n", "in.out:2: port line ends after the port number");
  expect_error("Switch 8 \"S-10\" # \"a\"\n[1] \"S-20\"[2] # \"trunc",
               "in.out:2: peer description is not closed");
  expect_error("Switch 8 \"S-xyz\" # \"a\"\n", "in.out:1: Switch header without a valid");
  expect_error("Switch 8 \"S-10\" # \"a\"\ngarbage here 123\n", "in.out:2: unrecognised line");
  expect_error("CA 5 1 0xzz 4x SDR\n", "in.out:1: ports-report line with an invalid GUID");
}

TEST(IbnetdiscoverParser, MissingFileDirectoryAndStdin) {
  auto missing = parse_ibnetdiscover_file("/nonexistent/fabric.out");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("/nonexistent/fabric.out: cannot open"), std::string::npos);
  testing::TempDir dir;
  auto directory = parse_ibnetdiscover_file(dir.path());
  ASSERT_FALSE(directory);
  EXPECT_NE(directory.error().message().find("is a directory"), std::string::npos);
  std::istringstream in("Ca 1 \"H-0000000000000100\" # \"n1 mlx5_0\"\n");
  auto from_stdin = parse_ibnetdiscover_file("-", &in);
  ASSERT_TRUE(from_stdin) << from_stdin.error().message();
  EXPECT_EQ(from_stdin->cas, 1u);
}

// Mutations of real captures (truncation, byte flips, dropped and duplicated lines): the parser
// either accepts or fails with "<name>:<line>:" or a whole-file message; it never crashes.
TEST(IbnetdiscoverParser, SurvivesMutatedCaptures) {
  auto files = capture_fixtures();
  HT_REQUIRE(!files.empty(), "fixtures ibnetdiscover/*");
  std::mt19937 rng(20261122);
  const std::regex located(R"(^mut(:\d+:|: no switches).*)");
  int accepted = 0, rejected = 0;
  for (const auto& f : files) {
    const std::string original = testing::read_text(f);
    for (int round = 0; round < 150; ++round) {
      std::string text = original;
      switch (round % 4) {
        case 0:
          text.resize(rng() % (text.size() + 1));
          break;
        case 1:
          for (int k = 0; k < 8; ++k) text[rng() % text.size()] = static_cast<char>(rng() % 256);
          break;
        case 2: {
          auto a = rng() % text.size();
          text.erase(a, std::min<std::size_t>(rng() % 400, text.size() - a));
          break;
        }
        default: {
          auto a = rng() % text.size();
          text.insert(a, text.substr(rng() % text.size(), 200));
          break;
        }
      }
      auto parsed = parse_ibnetdiscover(text, "mut");
      if (parsed) {
        ++accepted;
        auto tree = topology::TreeBuilder::create()->build(parsed->graph);
        ASSERT_TRUE(tree) << tree.error().message();
      } else {
        ++rejected;
        ASSERT_TRUE(std::regex_match(parsed.error().message(), located)) << parsed.error().message();
      }
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace hypertopo::discoverers
