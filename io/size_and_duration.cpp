#include "io/size_and_duration.h"

#include <cmath>
#include <utility>

namespace hypertopo::io {

namespace {

struct Suffix {
  std::string_view name;
  long double factor;
};

constexpr Suffix kSuffixes[] = {{"Ki", 1024.0L},
                                {"Mi", 1024.0L * 1024},
                                {"Gi", 1024.0L * 1024 * 1024},
                                {"Ti", 1024.0L * 1024 * 1024 * 1024},
                                {"Pi", 1024.0L * 1024 * 1024 * 1024 * 1024},
                                {"Ei", 1024.0L * 1024 * 1024 * 1024 * 1024 * 1024},
                                {"k", 1e3L},
                                {"M", 1e6L},
                                {"G", 1e9L},
                                {"T", 1e12L},
                                {"P", 1e15L},
                                {"E", 1e18L},
                                {"", 1.0L}};

}  // namespace

std::expected<std::uint64_t, Error> parse_byte_size(std::string_view text) {
  // Quoted back at most this much: a message stays one readable line whatever was given.
  const std::string shown = text.size() > 40 ? std::string(text.substr(0, 40)) + "..." : std::string(text);
  auto bad = [&] {
    return fail(ErrorCode::kInvalidArgument,
                "'" + shown + "' is not a size (bytes, or a quantity: 512Mi, 2Gi, 1G)");
  };
  if (!text.empty() && text.front() == '-')
    return fail(ErrorCode::kInvalidArgument, "'" + shown + "' is negative");
  std::size_t i = 0;
  if (i < text.size() && text[i] == '+') ++i;
  long double digits = 0, scale = 1;
  bool any = false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, any = true)
    digits = digits * 10 + (text[i] - '0');
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, any = true) {
      digits = digits * 10 + (text[i] - '0');
      scale *= 10;
    }
  }
  if (!any) return bad();
  const std::string_view suffix = text.substr(i);
  for (const auto& s : kSuffixes) {
    if (s.name != suffix) continue;
    const long double bytes = digits * s.factor / scale;
    constexpr long double kMax = 9223372036854775807.0L;  // 8 EiB - 1
    if (bytes > kMax) return fail(ErrorCode::kInvalidArgument, "'" + shown + "' is more than 8Ei bytes");
    if (bytes != std::floor(bytes))
      return fail(ErrorCode::kInvalidArgument, "'" + shown + "' is not a whole number of bytes");
    return static_cast<std::uint64_t>(bytes);
  }
  return bad();
}

std::string format_byte_size(std::uint64_t bytes) {
  if (bytes == 0) return "0";
  static constexpr std::pair<const char*, std::uint64_t> kUnits[] = {{"Ei", 1ULL << 60},
                                                                     {"Pi", 1ULL << 50},
                                                                     {"Ti", 1ULL << 40},
                                                                     {"Gi", 1ULL << 30},
                                                                     {"Mi", 1ULL << 20},
                                                                     {"Ki", 1ULL << 10},
                                                                     {"E", 1000000000000000000ULL},
                                                                     {"P", 1000000000000000ULL},
                                                                     {"T", 1000000000000ULL},
                                                                     {"G", 1000000000ULL},
                                                                     {"M", 1000000ULL},
                                                                     {"k", 1000ULL}};
  for (const auto& [name, factor] : kUnits) {
    if (bytes % factor == 0) return std::to_string(bytes / factor) + name;
  }
  return std::to_string(bytes);
}

std::string format_duration(std::chrono::milliseconds d) {
  long long ms = d.count();
  std::string out;
  for (const auto& [unit, size] :
       {std::pair{"h", 3600000LL}, std::pair{"m", 60000LL}, std::pair{"s", 1000LL}}) {
    if (ms >= size) {
      out += std::to_string(ms / size) + unit;
      ms %= size;
    }
  }
  if (ms > 0 || out.empty()) out += std::to_string(ms) + "ms";
  return out;
}

}  // namespace hypertopo::io
