#include "tests/cli/headless_browser.h"

#include <fcntl.h>
#include <png.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/support/fixtures.h"

extern char** environ;

namespace hypertopo::testing {

std::optional<std::filesystem::path> find_chromium() {
  if (const char* set = std::getenv("HYPERTOPO_CHROMIUM"); set != nullptr && *set != '\0') {
    if (::access(set, X_OK) == 0) return std::filesystem::path(set);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    for (const char* name : {"chromium", "chromium-browser"}) {
      const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return std::nullopt;
}

std::vector<std::string> BrowserRun::uncaught_errors() const {
  std::vector<std::string> out;
  for (const auto& line : console) {
    if (line.find("Uncaught") != std::string::npos || line.find("Refused to") != std::string::npos)
      out.push_back(line);
  }
  return out;
}

BrowserRun open_in_chromium(const std::filesystem::path& chromium, const std::filesystem::path& scratch,
                            const std::filesystem::path& page, const BrowserOptions& options) {
  BrowserRun run;
  const std::filesystem::path out_file = scratch / "chromium.out";
  const std::filesystem::path err_file = scratch / "chromium.err";
  std::string url = "file://" + std::filesystem::absolute(page).string();
  if (!options.fragment.empty()) url += "#" + options.fragment;
  // --no-sandbox: the tests run as root in containers, where Chromium's sandbox cannot start; the
  // page is the project's own file. A private profile; no network services, no first-run work.
  // `timeout` bounds a browser that never returns.
  std::vector<std::string> args = {
      "timeout",
      "120",
      chromium.string(),
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-extensions",
      "--disable-background-networking",
      "--disable-sync",
      "--user-data-dir=" + (scratch / "chromium-profile").string(),
      "--window-size=" + std::to_string(options.width) + "," + std::to_string(options.height),
      "--enable-logging=stderr",
      "--v=0"};
  if (options.screenshot.empty()) {
    args.push_back("--dump-dom");
  } else {
    args.push_back("--screenshot=" + options.screenshot.string());
  }
  args.push_back(url);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, "timeout", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    run.log = "could not start chromium";
    return run;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.dom = read_text(out_file);
  run.log = read_text(err_file);
  std::istringstream lines(run.log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(":CONSOLE") != std::string::npos || line.find("CONSOLE(") != std::string::npos)
      run.console.push_back(line);
  }
  return run;
}

std::optional<std::string> body_attribute(const std::string& dom, const std::string& attribute) {
  const std::size_t body = dom.find("<body");
  if (body == std::string::npos) return std::nullopt;
  const std::size_t end = dom.find('>', body);
  const std::string tag = dom.substr(body, end - body);
  const std::string key = " " + attribute + "=\"";
  const std::size_t at = tag.find(key);
  if (at == std::string::npos) return std::nullopt;
  const std::size_t value = at + key.size();
  return tag.substr(value, tag.find('"', value) - value);
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::size_t RgbImage::count(unsigned char r, unsigned char g, unsigned char b) const {
  std::size_t n = 0;
  for (std::size_t i = 0; i + 2 < rgb.size(); i += 3) {
    if (rgb[i] == r && rgb[i + 1] == g && rgb[i + 2] == b) ++n;
  }
  return n;
}

std::optional<RgbImage> read_png(const std::filesystem::path& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) return std::nullopt;
  image.format = PNG_FORMAT_RGB;
  RgbImage out;
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) {
    png_image_free(&image);
    return std::nullopt;
  }
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  return out;
}

}  // namespace hypertopo::testing
