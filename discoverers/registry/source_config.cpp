#include "discoverers/registry/source_config.h"

#include "io/config_reader.h"
#include "io/size_and_duration.h"

namespace hypertopo::discoverers {
namespace {

std::vector<std::string> names_of(const std::vector<ConfigKey>& keys) {
  std::vector<std::string> names;
  for (const auto& k : keys) names.push_back(k.name);
  return names;
}

}  // namespace

std::expected<void, Error> ConfigBlock::only(const std::vector<ConfigKey>& keys) const {
  return io::ConfigReader(at_.file).mapping(node_, at_.path, names_of(keys));
}

bool ConfigBlock::has(const char* key) const { return node_ && node_.IsMap() && node_[key]; }

YAML::Node ConfigBlock::child(const char* key) const { return has(key) ? node_[key] : YAML::Node(); }

ConfigAt ConfigBlock::at(const char* key) const { return {at_.file, at_.key(key)}; }

std::expected<std::optional<std::string>, Error> ConfigBlock::text(const char* key) const {
  if (!has(key)) return std::nullopt;
  auto t = io::ConfigReader(at_.file).nonempty_text(node_[key], at_.key(key));
  if (!t) return std::unexpected(t.error());
  return std::move(*t);
}

std::expected<std::string, Error> ConfigBlock::required_text(const char* key) const {
  auto t = text(key);
  if (!t) return std::unexpected(t.error());
  if (!*t) return at_.bad(key, "is required");
  return **t;
}

std::expected<std::optional<bool>, Error> ConfigBlock::boolean(const char* key) const {
  if (!has(key)) return std::nullopt;
  auto b = io::ConfigReader(at_.file).boolean(node_[key], at_.key(key));
  if (!b) return std::unexpected(b.error());
  return *b;
}

std::expected<std::optional<double>, Error> ConfigBlock::number(const char* key, double min,
                                                                double max) const {
  if (!has(key)) return std::nullopt;
  auto n = io::ConfigReader(at_.file).number(node_[key], at_.key(key), min, max);
  if (!n) return std::unexpected(n.error());
  return *n;
}

std::expected<std::optional<std::chrono::milliseconds>, Error> ConfigBlock::duration(
    const char* key, std::chrono::milliseconds min, std::chrono::milliseconds max) const {
  if (!has(key)) return std::nullopt;
  auto d = io::ConfigReader(at_.file).duration(node_[key], at_.key(key));
  if (!d) return std::unexpected(d.error());
  if (*d < min || *d > max)
    return at_.bad(key, "must be from " + io::format_duration(min) + " to " + io::format_duration(max));
  return *d;
}

std::expected<std::optional<std::uint64_t>, Error> ConfigBlock::byte_size(const char* key, std::uint64_t min,
                                                                          std::uint64_t max) const {
  if (!has(key)) return std::nullopt;
  const YAML::Node value = node_[key];
  if (!value.IsScalar()) return at_.bad(key, "must be a size (bytes, or a quantity: 512Mi, 2Gi, 1G)");
  auto n = io::parse_byte_size(value.Scalar());
  if (!n) return at_.bad(key, n.error().message());
  if (*n < min || *n > max)
    return at_.bad(key, "must be from " + io::format_byte_size(min) + " to " + io::format_byte_size(max));
  return *n;
}

std::expected<std::vector<std::string>, Error> ConfigBlock::strings(const char* key) const {
  if (!has(key)) return std::vector<std::string>{};
  return io::ConfigReader(at_.file).strings(node_[key], at_.key(key));
}

}  // namespace hypertopo::discoverers
