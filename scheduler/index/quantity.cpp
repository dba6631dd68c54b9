#include "scheduler/index/quantity.h"

#include <cctype>
#include <limits>

namespace hypertopo::scheduler {
namespace {

// 128-bit intermediates keep 30-digit mantissas times 2^60 exact before the range check.
__extension__ typedef __int128 Wide;

constexpr Wide kLimit = static_cast<Wide>(std::numeric_limits<std::int64_t>::max());

struct Suffix {
  std::string_view text;
  int power10;  // decimal exponent
  int power2;   // binary exponent (multiples of 10 for Ki, Mi, ...)
};

constexpr Suffix kSuffixes[] = {
    {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},
    {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"", 0, 0},
};

Error malformed(std::string_view resource, std::string_view text, std::string_view why) {
  return Error(ErrorCode::kParse, std::string(resource) + ": malformed quantity '" + std::string(text) +
                                      "' (" + std::string(why) + ")");
}

}  // namespace

bool counted_in_millis(std::string_view resource) { return resource == "cpu"; }

std::expected<std::int64_t, Error> parse_quantity(std::string_view resource, std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return std::unexpected(malformed(resource, text, "empty"));
  bool negative = false;
  if (s.front() == '+' || s.front() == '-') {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  Wide mantissa = 0;
  int power10 = 0;
  std::size_t digits = 0;
  bool seen_point = false;
  std::size_t i = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (seen_point) return std::unexpected(malformed(resource, text, "two decimal points"));
      seen_point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (++digits > 30) return std::unexpected(malformed(resource, text, "too many digits"));
    mantissa = mantissa * 10 + (c - '0');
    if (seen_point) --power10;
  }
  if (digits == 0) return std::unexpected(malformed(resource, text, "no digits"));
  std::string_view suffix = s.substr(i);
  int power2 = 0;
  if (!suffix.empty() && (suffix.front() == 'e' || suffix.front() == 'E') && suffix.size() > 1) {
    // Decimal exponent form: 1e3, 5E-2.
    std::string_view exp = suffix.substr(1);
    bool exp_negative = false;
    if (exp.front() == '+' || exp.front() == '-') {
      exp_negative = exp.front() == '-';
      exp.remove_prefix(1);
    }
    if (exp.empty() || exp.size() > 3) return std::unexpected(malformed(resource, text, "bad exponent"));
    int value = 0;
    for (char c : exp) {
      if (!std::isdigit(static_cast<unsigned char>(c))) {
        return std::unexpected(malformed(resource, text, "bad exponent"));
      }
      value = value * 10 + (c - '0');
    }
    power10 += exp_negative ? -value : value;
  } else {
    const Suffix* found = nullptr;
    for (const auto& candidate : kSuffixes) {
      if (candidate.text == suffix) {
        found = &candidate;
        break;
      }
    }
    if (found == nullptr) {
      return std::unexpected(malformed(resource, text, "unknown suffix '" + std::string(suffix) + "'"));
    }
    power10 += found->power10;
    power2 = found->power2;
  }
  if (negative && mantissa != 0) {
    return std::unexpected(malformed(resource, text, "negative amounts are not allowed"));
  }
  if (counted_in_millis(resource)) power10 += 3;
  if (power10 > 30) return std::unexpected(malformed(resource, text, "too large"));
  Wide value = mantissa;
  for (int k = 0; k < power2; ++k) {
    value *= 2;
    if (value > kLimit) return std::unexpected(malformed(resource, text, "too large"));
  }
  for (int k = 0; k < power10; ++k) {
    value *= 10;
    if (value > kLimit) return std::unexpected(malformed(resource, text, "too large"));
  }
  if (power10 < 0) {
    Wide divisor = 1;
    for (int k = 0; k < -power10 && divisor <= kLimit; ++k) divisor *= 10;
    // Round up like Quantity.Value(): a fraction of a unit still occupies a whole unit.
    value = (value + divisor - 1) / divisor;
  }
  if (value > kLimit) return std::unexpected(malformed(resource, text, "too large"));
  return static_cast<std::int64_t>(value);
}

std::expected<ResourceAmounts, Error> parse_resource_list(const std::map<std::string, std::string>& list) {
  ResourceAmounts out;
  for (const auto& [name, text] : list) {
    auto value = parse_quantity(name, text);
    if (!value) return std::unexpected(value.error());
    out[name] = *value;
  }
  return out;
}

std::string format_quantity(std::string_view resource, std::int64_t amount) {
  if (counted_in_millis(resource)) {
    if (amount % 1000 == 0) return std::to_string(amount / 1000);
    return std::to_string(amount) + "m";
  }
  static constexpr std::string_view kBinary[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};
  if (amount >= 1024) {
    for (int k = 0; k < 6; ++k) {
      std::int64_t unit = std::int64_t{1} << (10 * (6 - k));
      if (amount % unit == 0) return std::to_string(amount / unit) + std::string(kBinary[k]);
    }
  }
  return std::to_string(amount);
}

}  // namespace hypertopo::scheduler
