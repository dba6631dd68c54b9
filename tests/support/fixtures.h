// tests/support/fixtures.h: where tests find shared sample data and scratch space.
//
// The real samples live in ../shared/fixtures beside the checkout (never copied into the project).
// A user's clone may not have them: then the test skips with a message. Under CI=true they are
// promised, so a missing fixture fails the test instead.
//
//   TEST(Parser, RealCapture) {
//     HT_REQUIRE_FIXTURE(path, "ibnetdiscover/topograph-example.out");
//     auto graph = parse_ibnetdiscover_file(path);
//   }
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace hypertopo::testing {

// ../shared/fixtures relative to the source tree, or $HYPERTOPO_FIXTURES when set.
std::filesystem::path fixtures_dir();
// The full path of one fixture, or nullopt when it is absent.
std::optional<std::filesystem::path> find_fixture(const std::string& relative);
bool running_in_ci();
// Something a test needs is absent: skip with `why`, or fail under CI=true.
std::string missing_message(const std::string& what);
// A fresh temporary directory, removed when the object goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string read_text(const std::filesystem::path& path);

// A command-line entry point run in-process with std::cout and std::cerr captured.
struct CapturedRun {
  int code = -1;
  std::string out;
  std::string err;
};
// Calls main_like("hypertopo", args...) and returns its exit code and output.
CapturedRun run_captured(int (*main_like)(int, char**), std::vector<std::string> args);
void write_text(const std::filesystem::path& path, const std::string& text);

}  // namespace hypertopo::testing

// Binds `var` to the fixture's path, or skips (fails under CI=true) when it is absent.
#define HT_REQUIRE_FIXTURE(var, relative)                                                        \
  auto var##_found = ::hypertopo::testing::find_fixture(relative);                               \
  if (!var##_found) {                                                                            \
    if (::hypertopo::testing::running_in_ci()) {                                                 \
      FAIL() << ::hypertopo::testing::missing_message(std::string("fixture ") + (relative));     \
    }                                                                                            \
    GTEST_SKIP() << ::hypertopo::testing::missing_message(std::string("fixture ") + (relative)); \
  }                                                                                              \
  const std::filesystem::path var = *var##_found

// Skips (fails under CI=true) when `condition` is false.
#define HT_REQUIRE(condition, what)                              \
  if (!(condition)) {                                            \
    if (::hypertopo::testing::running_in_ci()) {                 \
      FAIL() << ::hypertopo::testing::missing_message(what);     \
    }                                                            \
    GTEST_SKIP() << ::hypertopo::testing::missing_message(what); \
  }
