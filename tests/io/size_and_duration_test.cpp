// io/size_and_duration.h: Kubernetes quantities and byte counts in, one readable line for anything
// else; durations written back the way parse_duration reads them.
#include "io/size_and_duration.h"

#include <gtest/gtest.h>

#include <string>

#include "io/config_reader.h"

namespace hypertopo::io {
namespace {

TEST(ByteSize, PlainCountsAndKubernetesQuantities) {
  EXPECT_EQ(parse_byte_size("4096").value(), 4096u);
  EXPECT_EQ(parse_byte_size("512Mi").value(), 512ull << 20);
  EXPECT_EQ(parse_byte_size("2Gi").value(), 2ull << 30);
  EXPECT_EQ(parse_byte_size("1Ki").value(), 1024u);
  EXPECT_EQ(parse_byte_size("1.5Gi").value(), 3ull << 29);
  EXPECT_EQ(parse_byte_size("1G").value(), 1000000000u);
  EXPECT_EQ(parse_byte_size("1.5G").value(), 1500000000u);
  EXPECT_EQ(parse_byte_size("64k").value(), 64000u);
  EXPECT_EQ(parse_byte_size("+7").value(), 7u);
  EXPECT_EQ(parse_byte_size("7Ei").value(), 7ull << 60);
}

TEST(ByteSize, RefusesGarbageInOneShortLine) {
  EXPECT_EQ(parse_byte_size("12XB").error().message(),
            "'12XB' is not a size (bytes, or a quantity: 512Mi, 2Gi, 1G)");
  EXPECT_EQ(parse_byte_size("").error().message(), "'' is not a size (bytes, or a quantity: 512Mi, 2Gi, 1G)");
  EXPECT_EQ(parse_byte_size("Mi").error().message(),
            "'Mi' is not a size (bytes, or a quantity: 512Mi, 2Gi, 1G)");
  EXPECT_EQ(parse_byte_size("512 Mi").error().message(),
            "'512 Mi' is not a size (bytes, or a quantity: 512Mi, 2Gi, 1G)");
  EXPECT_EQ(parse_byte_size("512mi").error().message(),
            "'512mi' is not a size (bytes, or a quantity: 512Mi, 2Gi, 1G)");
  EXPECT_EQ(parse_byte_size("-1Mi").error().message(), "'-1Mi' is negative");
  EXPECT_EQ(parse_byte_size("0.5").error().message(), "'0.5' is not a whole number of bytes");
  EXPECT_EQ(parse_byte_size("9Ei").error().message(), "'9Ei' is more than 8Ei bytes");
  // 300 digits are quoted as their first 40.
  const std::string huge(300, '9');
  const std::string message = parse_byte_size(huge).error().message();
  EXPECT_EQ(message, "'" + huge.substr(0, 40) + "...' is more than 8Ei bytes");
}

TEST(ByteSize, FormatsTheShortestExactForm) {
  EXPECT_EQ(format_byte_size(512ull << 20), "512Mi");
  EXPECT_EQ(format_byte_size(64ull << 30), "64Gi");
  EXPECT_EQ(format_byte_size(1000000000), "1G");
  EXPECT_EQ(format_byte_size(1500), "1500");
  EXPECT_EQ(format_byte_size(0), "0");
  for (std::uint64_t n : {1ull, 1023ull, 1024ull, 3ull << 29, 1500000000ull, 123456789ull})
    EXPECT_EQ(parse_byte_size(format_byte_size(n)).value(), n) << n;
}

TEST(DurationText, GoStyleLargestUnitFirstAndReadBackTheSame) {
  using std::chrono::milliseconds;
  EXPECT_EQ(format_duration(milliseconds(5400000)), "1h30m");
  EXPECT_EQ(format_duration(milliseconds(30000)), "30s");
  EXPECT_EQ(format_duration(milliseconds(250)), "250ms");
  EXPECT_EQ(format_duration(milliseconds(0)), "0ms");
  EXPECT_EQ(format_duration(milliseconds(3661001)), "1h1m1s1ms");
  for (long long ms : {1LL, 999LL, 60000LL, 86400000LL, 3661001LL})
    EXPECT_EQ(parse_duration(format_duration(milliseconds(ms))).value(), milliseconds(ms)) << ms;
}

}  // namespace
}  // namespace hypertopo::io
