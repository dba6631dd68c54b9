// FuzzCorpus.<name>: every corpus file of a target through the target, under ASan/UBSan (see
// fuzz_target.h). The in-repo corpus must exist; the shared fixtures are skipped (failed under
// CI=true) when absent, as every fixture test does.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "tests/fuzz/fuzz_target.h"
#include "tests/support/fixtures.h"

namespace hypertopo::fuzzing {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> files_under(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (fs::is_regular_file(root, ec)) return {root};
  if (!fs::is_directory(root, ec)) return out;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

void replay_corpus(const char* name, const char* corpus, TargetFunction target) {
  std::size_t in_repo = 0, from_fixtures = 0;
  std::vector<std::string> missing;
  std::string_view rest = corpus;
  const auto started = std::chrono::steady_clock::now();
  while (!rest.empty()) {
    const auto semicolon = rest.find('|');
    const std::string entry(rest.substr(0, semicolon));
    rest = semicolon == std::string_view::npos ? std::string_view{} : rest.substr(semicolon + 1);
    if (entry.empty()) continue;
    const bool fixture = entry.starts_with("fixtures/");
    const fs::path root =
        fixture ? testing::fixtures_dir() / entry.substr(9) : fs::path(HYPERTOPO_SOURCE_DIR) / entry;
    const auto files = files_under(root);
    if (files.empty()) missing.push_back(root.string());
    for (const auto& file : files) {
      SCOPED_TRACE(file.string());
      target(read_bytes(file));
      ++(fixture ? from_fixtures : in_repo);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("[fuzz-replay] %s: %zu in-repo input(s), %zu fixture input(s) in %.2fs\n", name, in_repo,
              from_fixtures, seconds);
  EXPECT_GT(in_repo, 0u) << name << ": no in-repo corpus (tests/fuzz/corpus/" << name << ")";
  for (const auto& m : missing) {
    if (m.find(testing::fixtures_dir().string()) == 0) {
      if (testing::running_in_ci())
        ADD_FAILURE() << testing::missing_message("fixture corpus " + m);
      else
        std::printf("[fuzz-replay] %s: %s\n", name, testing::missing_message("fixture corpus " + m).c_str());
    } else {
      ADD_FAILURE() << name << ": corpus entry " << m << " has no file";
    }
  }
}

}  // namespace hypertopo::fuzzing
