// io/durable_file: a file replaced whole or not at all, never through a planted link, private, and a
// file that does not read set aside. The full disk is a 64 KiB tmpfs mounted in a temporary
// directory; where mounting is not allowed, a file size limit (RLIMIT_FSIZE, with SIGXFSZ ignored)
// makes the same writes fail.
#include "io/durable_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"

namespace hypertopo::io {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(DurableFile, ReplacesTheFileWholeWithMode0600AndLeavesNoTemporaryFile) {
  testing::TempDir dir;
  const fs::path state = dir.path() / "state.json";
  const mode_t old_mask = ::umask(0);  // a permissive umask must not widen the mode
  auto first = write_file_durably(state, "{\"plans\":[]}\n");
  ::umask(old_mask);
  ASSERT_TRUE(first.has_value()) << first.error().message();
  ASSERT_TRUE(write_file_durably(state, "{\"plans\":[1]}\n").has_value());
  EXPECT_EQ(testing::read_text(state), "{\"plans\":[1]}\n");
  struct stat st {};
  ASSERT_EQ(::stat(state.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"state.json"});
}

TEST(DurableFile, APlantedSymlinkIsNeverWrittenThrough) {
  testing::TempDir dir;
  const fs::path victim = dir.path() / "victim";
  testing::write_text(victim, "precious\n");
  const fs::path state = dir.path() / "state.json";
  // The names a writer with a fixed temporary name would use, each a link to the victim.
  for (const char* name : {"state.json.tmp", ".state.json.tmp", "state.json~", ".state.json.XXXXXX"}) {
    fs::create_symlink(victim, dir.path() / name);
  }
  ASSERT_TRUE(write_file_durably(state, "new\n").has_value());
  EXPECT_EQ(testing::read_text(victim), "precious\n");
  EXPECT_EQ(testing::read_text(state), "new\n");
  // The target itself a link: replaced by a file, the link's target untouched.
  const fs::path linked = dir.path() / "linked.json";
  fs::create_symlink(victim, linked);
  ASSERT_TRUE(write_file_durably(linked, "mine\n").has_value());
  EXPECT_FALSE(fs::is_symlink(linked));
  EXPECT_EQ(testing::read_text(linked), "mine\n");
  EXPECT_EQ(testing::read_text(victim), "precious\n");
}

// A 64 KiB tmpfs at `dir`, unmounted when it goes away; mounted() false where not allowed.
class TinyFilesystem {
 public:
  explicit TinyFilesystem(const fs::path& dir) : dir_(dir) {
    mounted_ = ::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700") == 0;
  }
  ~TinyFilesystem() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }

 private:
  fs::path dir_;
  bool mounted_ = false;
};

// Writes over 16 KiB fail (EFBIG) while it lives: the stand-in for a full disk without a mount.
class FileSizeLimit {
 public:
  FileSizeLimit() {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit small{16 * 1024, saved_.rlim_max};
    ::setrlimit(RLIMIT_FSIZE, &small);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  sighandler_t old_handler_ = SIG_DFL;
};

TEST(DurableFile, AFullDiskKeepsTheOldFileAndTheErrorNamesIt) {
  testing::TempDir temp;
  const fs::path dir = temp.path() / "disk";
  fs::create_directories(dir);
  TinyFilesystem disk(dir);
  if (!disk.mounted())
    std::printf("[durable-file] no tmpfs mount here: a file size limit stands in for the full disk\n");
  const fs::path state = dir / "state.json";
  const std::string old_text = "{\"plans\":[\"old\"]}\n";
  ASSERT_TRUE(write_file_durably(state, old_text).has_value());
  const std::string big(200 * 1024, 'x');  // over 64 KiB of disk, over the 16 KiB limit
  std::expected<void, Error> failed;
  if (disk.mounted()) {
    failed = write_file_durably(state, big);
  } else {
    FileSizeLimit limit;
    failed = write_file_durably(state, big);
  }
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().message().find(state.string()), std::string::npos) << failed.error().message();
  EXPECT_NE(failed.error().message().find("old file is kept"), std::string::npos) << failed.error().message();
  EXPECT_EQ(testing::read_text(state), old_text);
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"state.json"});
  // Room again: the next write lands.
  ASSERT_TRUE(write_file_durably(state, "{\"plans\":[\"new\"]}\n").has_value());
  EXPECT_EQ(testing::read_text(state), "{\"plans\":[\"new\"]}\n");
}

TEST(DurableFile, AnUnwritableDirectoryIsAnErrorNamingTheFile) {
  const auto failed = write_file_durably("/proc/hypertopo-no-such-dir/state.json", "x");
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().message().find("/proc/hypertopo-no-such-dir/state.json"), std::string::npos);
}

TEST(DurableFile, SetAsideKeepsTheFileUnderATimestampedNameAndNeverReplacesOne) {
  testing::TempDir dir;
  const fs::path state = dir.path() / "state.json";
  testing::write_text(state, "not json");
  auto first = set_aside(state);
  ASSERT_TRUE(first.has_value()) << first.error().message();
  EXPECT_FALSE(fs::exists(state));
  EXPECT_EQ(first->parent_path(), dir.path());
  EXPECT_EQ(first->filename().string().rfind("state.json.corrupt-", 0), 0u) << *first;
  EXPECT_EQ(testing::read_text(*first), "not json");
  testing::write_text(state, "also not json");
  auto second = set_aside(state);
  ASSERT_TRUE(second.has_value()) << second.error().message();
  EXPECT_NE(*second, *first);
  EXPECT_EQ(testing::read_text(*first), "not json");
  EXPECT_EQ(testing::read_text(*second), "also not json");
}

}  // namespace
}  // namespace hypertopo::io
