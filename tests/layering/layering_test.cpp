// The folders' layering, checked on every build: a folder includes only folders below it (or its
// peers where the table allows). The table is the architecture's dependency picture:
//
//   cmd -> cli -> agent -> discoverers, scheduler -> topology, k8s -> net -> io, telemetry -> errors, ...
//
// topology and k8s are peers that never include each other (the tree knows no Kubernetes objects;
// the client knows no tree), and so are discoverers and scheduler. tests/ and bench/ may include
// anything.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"

namespace hypertopo {
namespace {

namespace fs = std::filesystem;

// Rank of each production folder; a file may include folders of a lower rank and its own folder.
const std::map<std::string, int>& layer_ranks() {
  static const std::map<std::string, int> ranks = {
      {"errors", 0}, {"text", 0},     {"timing", 0}, {"io", 1},          {"telemetry", 1},
      {"net", 2},    {"topology", 3}, {"k8s", 3},    {"discoverers", 4}, {"scheduler", 4},
      {"agent", 5},  {"cli", 6},      {"cmd", 7},
  };
  return ranks;
}

struct Violation {
  std::string file;  // relative to the root
  int line = 0;
  std::string include;
};

std::string top_folder(const std::string& relative) { return relative.substr(0, relative.find('/')); }

// Every `#include "folder/..."` in the production folders under `root` that goes upwards or sideways.
std::vector<Violation> layering_violations(const fs::path& root) {
  std::vector<Violation> found;
  const auto& ranks = layer_ranks();
  for (const auto& [folder, rank] : ranks) {
    if (!fs::is_directory(root / folder)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      std::ifstream in(entry.path());
      std::string text;
      int line_no = 0;
      while (std::getline(in, text)) {
        ++line_no;
        const auto hash = text.find_first_not_of(" \t");
        if (hash == std::string::npos || text.compare(hash, 10, "#include \"") != 0) continue;
        const std::string target = text.substr(hash + 10, text.find('"', hash + 10) - hash - 10);
        const auto it = ranks.find(top_folder(target));
        if (it == ranks.end() || it->first == folder) continue;  // a system header or the own folder
        if (it->second >= rank) found.push_back({fs::relative(entry.path(), root).string(), line_no, target});
      }
    }
  }
  return found;
}

std::string describe(const std::vector<Violation>& violations) {
  std::string out;
  for (const auto& v : violations)
    out += v.file + ":" + std::to_string(v.line) + " includes " + v.include + "\n";
  return out;
}

TEST(Layering, NoFolderIncludesAFolderAboveOrBesideIt) {
  const fs::path root = HYPERTOPO_SOURCE_DIR;
  ASSERT_TRUE(fs::is_directory(root / "topology")) << root;
  const auto violations = layering_violations(root);
  EXPECT_TRUE(violations.empty()) << "wrong-way includes (see the table in " << __FILE__ << "):\n"
                                  << describe(violations);
}

// The check finds what it is for: a planted include from a lower folder into a higher or peer one.
TEST(Layering, APlantedWrongIncludeIsFound) {
  testing::TempDir dir;
  const fs::path root = dir.path();
  fs::create_directories(root / "scheduler/placement");
  fs::create_directories(root / "topology");
  fs::create_directories(root / "k8s/objects");
  std::ofstream(root / "scheduler/placement/engine.cpp")
      << "#include \"scheduler/placement/engine.h\"\n#include \"topology/tree.h\"\n#include <vector>\n"
      << "#include \"agent/runtime/agent_daemon.h\"\n";
  std::ofstream(root / "topology/tree.cpp")
      << "#include \"errors/error.h\"\n  #include \"k8s/objects/node_list.h\"\n";
  std::ofstream(root / "k8s/objects/node_list.h") << "#include \"net/url.h\"\n";
  const auto violations = layering_violations(root);
  ASSERT_EQ(violations.size(), 2u) << describe(violations);
  const std::string text = describe(violations);
  EXPECT_NE(text.find("scheduler/placement/engine.cpp:4 includes agent/runtime/agent_daemon.h"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("topology/tree.cpp:2 includes k8s/objects/node_list.h"), std::string::npos) << text;
}

}  // namespace
}  // namespace hypertopo
