// tests/cli/headless_browser.h: a page opened in Debian's headless Chromium, as a person opens it.
//
// The page is loaded from a file (with an optional URL fragment) in a window of a fixed size; what
// comes back is the DOM after the page's scripts ran (--dump-dom), the lines the page logged to the
// console (uncaught errors among them), and optionally a PNG screenshot. Chromium runs in a private
// profile directory under the caller's temporary directory, without the network.
//
//   HT_REQUIRE_CHROMIUM(browser);  // skips without chromium; fails under CI=true
//   BrowserRun run = open_in_chromium(browser, dir.path(), page, {.fragment = "expand=all"});
//   EXPECT_TRUE(run.uncaught_errors().empty());
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"

namespace hypertopo::testing {

// The chromium binary on $PATH ($HYPERTOPO_CHROMIUM first when set), or nullopt.
std::optional<std::filesystem::path> find_chromium();

struct BrowserOptions {
  std::string fragment;  // after '#', as the user's URL would have it
  int width = 1280;
  int height = 800;
  std::filesystem::path screenshot;  // empty: no screenshot
};

struct BrowserRun {
  int code = -1;
  std::string dom;                   // the document after the scripts ran
  std::vector<std::string> console;  // the page's console lines ("...:CONSOLE:...")
  std::string log;                   // everything chromium wrote on stderr
  // Console lines of uncaught exceptions and refused loads (the page's policy forbids fetches).
  std::vector<std::string> uncaught_errors() const;
};

BrowserRun open_in_chromium(const std::filesystem::path& chromium, const std::filesystem::path& scratch,
                            const std::filesystem::path& page, const BrowserOptions& options = {});

// The value of `attribute` on the <body> of a dumped document, or nullopt when it has none.
std::optional<std::string> body_attribute(const std::string& dom, const std::string& attribute);

// How many times `what` occurs in `text`.
std::size_t count_of(const std::string& text, const std::string& what);

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<unsigned char> rgb;  // width * height * 3
  std::size_t count(unsigned char r, unsigned char g, unsigned char b) const;
};
// A PNG file decoded with libpng, or nullopt when it is not one.
std::optional<RgbImage> read_png(const std::filesystem::path& path);

}  // namespace hypertopo::testing

// Binds `var` to the chromium binary, or skips the test with a message (fails it under CI=true,
// where scripts/setup.sh --tests has installed chromium).
#define HT_REQUIRE_CHROMIUM(var)                                                                        \
  const auto var##_found = ::hypertopo::testing::find_chromium();                                       \
  if (!var##_found) {                                                                                   \
    const char* var##_why =                                                                             \
        "chromium is not installed (Debian's chromium package; scripts/setup.sh --tests installs it), " \
        "so the page is not opened in a browser";                                                       \
    if (::hypertopo::testing::running_in_ci()) FAIL() << var##_why << "; CI=true requires it";          \
    GTEST_SKIP() << var##_why;                                                                          \
  }                                                                                                     \
  const std::filesystem::path var = *var##_found
