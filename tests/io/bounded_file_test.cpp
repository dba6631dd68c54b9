// io/bounded_file: a whole file within its cap, read straight into the string with room spare past
// the text for a parser that reads ahead; a file whose stat size is not its content (procfs) read to
// its end; anything over the cap or not a regular file refused; the same file in pieces of a reused
// buffer, checked the same way.
#include "io/bounded_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "tests/support/fixtures.h"

namespace hypertopo::io {
namespace {

namespace fs = std::filesystem;

std::string pattern(std::size_t bytes) {
  std::string out(bytes, '\0');
  for (std::size_t i = 0; i < bytes; ++i) out[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  return out;
}

fs::path write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(BoundedFileTest, AFileOfManyPagesIsReadWholeWithRoomPastItsEnd) {
  testing::TempDir dir;
  // Sizes around a page and a read's length, and one past what one read returns.
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{4096},
                            std::size_t{65536}, std::size_t{65537}, std::size_t{3'000'017}}) {
    const std::string text = pattern(bytes);
    auto read = read_bounded_file(write_file(dir.path() / "f.json", text), kDataFileLimit);
    ASSERT_TRUE(read) << read.error().message();
    EXPECT_EQ(*read, text) << bytes;
    EXPECT_GE(read->capacity(), read->size() + kReadAheadRoom) << bytes;
  }
}

TEST(BoundedFileTest, TheCapIsInclusive) {
  testing::TempDir dir;
  const auto at_cap = write_file(dir.path() / "at", pattern(1000));
  auto read = read_bounded_file(at_cap, 1000);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(read->size(), 1000u);
  const auto over = write_file(dir.path() / "over", pattern(1001));
  auto refused = read_bounded_file(over, 1000);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message(), over.string() + ": larger than the 1000 bytes limit");
}

TEST(BoundedFileTest, AProcFileIsReadToItsEndThoughStatSaysNothing) {
  struct stat st {};
  ASSERT_EQ(::stat("/proc/self/status", &st), 0);
  ASSERT_EQ(st.st_size, 0);  // procfs: the size stat gives is not the content's
  auto read = read_bounded_file("/proc/self/status", kConfigFileLimit);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_TRUE(read->starts_with("Name:")) << *read;
  EXPECT_NE(read->find("\nVmRSS:"), std::string::npos) << *read;  // past the first lines
  EXPECT_TRUE(read->ends_with("\n"));
  auto capped = read_bounded_file("/proc/self/status", 100);
  ASSERT_FALSE(capped);
  EXPECT_NE(capped.error().message().find("larger than the 100 bytes limit"), std::string::npos);
}

TEST(BoundedFileTest, WhatIsNotARegularFileIsRefused) {
  testing::TempDir dir;
  auto directory = read_bounded_file(dir.path(), kDataFileLimit);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().message(), dir.path().string() + ": is a directory, not a regular file");
  auto missing = read_bounded_file(dir.path() / "none", kDataFileLimit);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

TEST(BoundedFileTest, PiecesOfAFileAreHandedOnInOrderAndCheckedAsAWholeFileIs) {
  testing::TempDir dir;
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{4096}, std::size_t{300'007}}) {
    const std::string text = pattern(bytes);
    std::string joined;
    std::size_t pieces = 0, largest = 0, size = 12345;
    auto read = read_bounded_file_pieces(
        write_file(dir.path() / "f.out", text), kDataFileLimit, 65536,
        [&](std::string_view piece) -> std::expected<void, Error> {
          ++pieces;
          largest = std::max(largest, piece.size());
          joined.append(piece);
          return {};
        },
        &size);
    ASSERT_TRUE(read) << read.error().message();
    EXPECT_EQ(joined, text) << bytes;
    EXPECT_EQ(size, bytes);
    EXPECT_LE(largest, 65536u);
    EXPECT_GE(pieces, (bytes + 65535) / 65536) << bytes;
  }
  // What the reader of the pieces refuses stops the reading and is the answer.
  std::size_t calls = 0;
  auto stopped = read_bounded_file_pieces(write_file(dir.path() / "g.out", pattern(200'000)), kDataFileLimit,
                                          1000, [&](std::string_view) -> std::expected<void, Error> {
                                            ++calls;
                                            return fail(ErrorCode::kParse, "g.out:1: no");
                                          });
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().message(), "g.out:1: no");
  EXPECT_EQ(calls, 1u);
  auto keep = [](std::string_view) -> std::expected<void, Error> { return {}; };
  const auto over = write_file(dir.path() / "over", pattern(1001));
  auto refused = read_bounded_file_pieces(over, 1000, 100, keep);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message(), over.string() + ": larger than the 1000 bytes limit");
  auto directory = read_bounded_file_pieces(dir.path(), kDataFileLimit, 100, keep);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().message(), dir.path().string() + ": is a directory, not a regular file");
  auto capped = read_bounded_file_pieces("/proc/self/status", 100, 64, keep);
  ASSERT_FALSE(capped);
  EXPECT_NE(capped.error().message().find("larger than the 100 bytes limit"), std::string::npos);
}

}  // namespace
}  // namespace hypertopo::io
