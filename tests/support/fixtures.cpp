#include "tests/support/fixtures.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

namespace hypertopo::testing {

std::filesystem::path fixtures_dir() {
  if (const char* env = std::getenv("HYPERTOPO_FIXTURES"); env != nullptr && *env != '\0') return env;
  return std::filesystem::path(HYPERTOPO_SOURCE_DIR) / ".." / "shared" / "fixtures";
}

std::optional<std::filesystem::path> find_fixture(const std::string& relative) {
  auto p = fixtures_dir() / relative;
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) return std::nullopt;
  return p;
}

bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

std::string missing_message(const std::string& what) {
  return what + " is not available here (" + fixtures_dir().string() +
         "); CI=true promises it, elsewhere the test is skipped";
}

TempDir::TempDir() {
  std::random_device rd;
  auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = base / ("hypertopo-test-" + std::to_string(rd()));
    std::error_code ec;
    if (std::filesystem::create_directory(candidate, ec)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory under " + base.string());
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

CapturedRun run_captured(int (*main_like)(int, char**), std::vector<std::string> args) {
  args.insert(args.begin(), "hypertopo");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  CapturedRun r;
  r.code = main_like(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace hypertopo::testing
