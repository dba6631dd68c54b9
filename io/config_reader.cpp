#include "io/config_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace hypertopo::io {

using std::chrono::milliseconds;

std::string key_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : key.empty() ? path : path + "." + key;
}

std::string indexed(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string comma_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string config_message(const std::string& file, const std::string& path, const std::string& what) {
  std::string out = file;
  for (const std::string* part : {&path, &what}) {
    if (part->empty()) continue;
    out += (out.empty() ? "" : ": ") + *part;
  }
  return out;
}

std::unexpected<Error> config_error(const std::string& file, const std::string& path, const std::string& what,
                                    ErrorCode code) {
  return fail(code, config_message(file, path, what));
}

std::unexpected<Error> unknown_key_error(const std::string& file, const std::string& path,
                                         const std::vector<std::string>& known) {
  return config_error(
      file, path, "unknown key (known: " + (known.empty() ? std::string("none") : comma_list(known)) + ")");
}

std::unexpected<Error> ConfigReader::bad(const std::string& path, const std::string& what) const {
  return config_error(file_, path, what);
}

std::expected<void, Error> ConfigReader::only_keys(const YAML::Node& map,
                                                   const std::vector<std::string>& known,
                                                   const std::string& path) const {
  for (const auto& entry : map) {
    if (!entry.first.IsScalar()) return bad(path, "keys must be strings");
    const std::string& key = entry.first.Scalar();
    if (std::find(known.begin(), known.end(), key) == known.end())
      return unknown_key_error(file_, key_path(path, key), known);
  }
  return {};
}

std::expected<void, Error> ConfigReader::mapping(const YAML::Node& node, const std::string& path,
                                                 const std::vector<std::string>& known) const {
  if (!node || node.IsNull()) return {};
  if (!node.IsMap()) return bad(path, "must be a mapping");
  return only_keys(node, known, path);
}

std::expected<std::string, Error> ConfigReader::text(const YAML::Node& node, const std::string& path) const {
  if (!node || !node.IsScalar()) return bad(path, "must be a string");
  return node.Scalar();
}

std::expected<std::string, Error> ConfigReader::nonempty_text(const YAML::Node& node,
                                                              const std::string& path) const {
  auto t = text(node, path);
  if (t && t->empty()) return bad(path, "must not be empty");
  return t;
}

std::expected<std::vector<std::string>, Error> ConfigReader::strings(const YAML::Node& node,
                                                                     const std::string& path) const {
  if (!node || !node.IsSequence()) return bad(path, "must be a list of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    auto item = text(node[i], indexed(path, i));
    if (!item) return std::unexpected(item.error());
    out.push_back(std::move(*item));
  }
  return out;
}

std::expected<bool, Error> ConfigReader::boolean(const YAML::Node& node, const std::string& path) const {
  bool value = false;
  if (!node || !node.IsScalar() || !YAML::convert<bool>::decode(node, value))
    return bad(path, "must be true or false");
  return value;
}

std::expected<long long, Error> ConfigReader::integer(const YAML::Node& node, const std::string& path,
                                                      long long min, long long max) const {
  const std::string range =
      "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!node || !node.IsScalar()) return bad(path, range);
  const std::string& s = node.Scalar();
  long long value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < min || value > max) return bad(path, range);
  return value;
}

std::expected<double, Error> ConfigReader::number(const YAML::Node& node, const std::string& path, double min,
                                                  double max) const {
  double value = 0;
  if (!node || !node.IsScalar() || !YAML::convert<double>::decode(node, value) || std::isnan(value) ||
      value < min || value > max) {
    char range[96];
    std::snprintf(range, sizeof range, "must be a number in [%g, %g]", min, max);
    return bad(path, range);
  }
  return value;
}

std::expected<milliseconds, Error> ConfigReader::duration(const YAML::Node& node,
                                                          const std::string& path) const {
  if (!node || !node.IsScalar())
    return bad(path, "must be a duration (Go style: 90s, 5m, 1h30m, 500ms; or seconds)");
  auto d = parse_duration(node.Scalar());
  if (!d) return bad(path, d.error().message());
  return *d;
}

std::expected<std::chrono::seconds, Error> ConfigReader::period(const YAML::Node& node,
                                                                const std::string& path) const {
  auto d = duration(node, path);
  if (!d) return std::unexpected(d.error());
  if (d->count() <= 0) return bad(path, "must be greater than 0");
  if (d->count() % 1000 != 0) return bad(path, "must be a whole number of seconds");
  return std::chrono::duration_cast<std::chrono::seconds>(*d);
}

std::expected<milliseconds, Error> parse_duration(const std::string& text) {
  auto bad = [&] {
    return fail(ErrorCode::kInvalidArgument,
                "'" + text + "' is not a duration (Go style: 90s, 5m, 1h30m, 500ms; or a number of seconds)");
  };
  if (text.empty()) return bad();
  if (text.front() == '-') return fail(ErrorCode::kInvalidArgument, "'" + text + "' is negative");
  const char* p = text.data();
  const char* const end = text.data() + text.size();
  if (*p == '+') ++p;
  // A number and its fraction, as Go's time.ParseDuration reads them: kept as digits / 10^fraction
  // digits so that "0.25" times a unit is exact.
  long double digits = 0;
  long double scale = 1;
  auto read_number = [&] {
    const char* start = p;
    digits = 0;
    scale = 1;
    while (p < end && *p >= '0' && *p <= '9') digits = digits * 10 + (*p++ - '0');
    bool any = p != start;
    if (p < end && *p == '.') {
      ++p;
      const char* frac = p;
      while (p < end && *p >= '0' && *p <= '9') {
        digits = digits * 10 + (*p++ - '0');
        scale *= 10;
      }
      any = any || p != frac;
    }
    return any;
  };
  if (!read_number()) return bad();
  constexpr long double kMaxNanos = 1e18L;  // about 31 years; anything longer is a mistake
  if (p == end) {                           // a plain number: seconds
    if (digits * 1e9L / scale > kMaxNanos) return bad();
    return milliseconds(static_cast<long long>(std::llround(digits * 1000.0L / scale)));
  }
  long double nanos = 0;
  while (true) {
    static const std::pair<const char*, long double> kUnits[] = {
        {"ns", 1.0L}, {"us", 1e3L}, {"\xC2\xB5s", 1e3L}, {"\xCE\xBCs", 1e3L},
        {"ms", 1e6L}, {"s", 1e9L},  {"m", 60e9L},        {"h", 3600e9L}};
    const auto rest = std::string_view(p, static_cast<std::size_t>(end - p));
    const std::pair<const char*, long double>* unit = nullptr;
    for (const auto& u : kUnits) {
      const std::string_view name(u.first);
      // "ms" must win over "m": only take a one-letter unit when no longer one matches.
      if (rest.starts_with(name) && (unit == nullptr || name.size() > std::string_view(unit->first).size()))
        unit = &u;
    }
    if (unit == nullptr) return bad();
    p += std::string_view(unit->first).size();
    nanos += digits * unit->second / scale;
    if (nanos > kMaxNanos) return bad();
    if (p == end) break;
    if (!read_number()) return bad();
  }
  return milliseconds(static_cast<long long>(nanos / 1e6L));
}

}  // namespace hypertopo::io
