#include "discoverers/registry/source_config.h"

#include <algorithm>
#include <cmath>

namespace hypertopo::discoverers {

std::expected<void, Error> ConfigBlock::only(const std::vector<ConfigKey>& keys) const {
  if (!node_ || node_.IsNull()) return {};
  if (!node_.IsMap()) return at_.bad("", "must be a mapping");
  for (const auto& item : node_) {
    if (!item.first.IsScalar()) return at_.bad("", "keys must be strings");
    const std::string key = item.first.Scalar();
    if (std::none_of(keys.begin(), keys.end(), [&](const ConfigKey& k) { return k.name == key; })) {
      std::string known;
      for (const auto& k : keys) known += (known.empty() ? "" : ", ") + k.name;
      return at_.bad(key, "unknown key (known: " + (known.empty() ? std::string("none") : known) + ")");
    }
  }
  return {};
}

bool ConfigBlock::has(const char* key) const { return node_ && node_.IsMap() && node_[key]; }

YAML::Node ConfigBlock::child(const char* key) const { return has(key) ? node_[key] : YAML::Node(); }

ConfigAt ConfigBlock::at(const char* key) const { return {at_.file, at_.key(key)}; }

std::expected<std::optional<std::string>, Error> ConfigBlock::text(const char* key) const {
  if (!has(key)) return std::nullopt;
  const YAML::Node n = node_[key];
  if (!n.IsScalar() || n.Scalar().empty()) return at_.bad(key, "must be a non-empty string");
  return n.Scalar();
}

std::expected<std::string, Error> ConfigBlock::required_text(const char* key) const {
  auto t = text(key);
  if (!t) return std::unexpected(t.error());
  if (!*t) return at_.bad(key, "is required");
  return **t;
}

std::expected<std::optional<bool>, Error> ConfigBlock::boolean(const char* key) const {
  if (!has(key)) return std::nullopt;
  bool value = false;
  if (!node_[key].IsScalar() || !YAML::convert<bool>::decode(node_[key], value))
    return at_.bad(key, "must be true or false");
  return value;
}

std::expected<std::optional<double>, Error> ConfigBlock::number(const char* key, double min,
                                                                double max) const {
  if (!has(key)) return std::nullopt;
  double value = 0;
  if (!node_[key].IsScalar() || !YAML::convert<double>::decode(node_[key], value) || std::isnan(value) ||
      value < min || value > max) {
    char range[96];
    std::snprintf(range, sizeof range, "must be a number in [%g, %g]", min, max);
    return at_.bad(key, range);
  }
  return value;
}

std::expected<std::vector<std::string>, Error> ConfigBlock::strings(const char* key) const {
  std::vector<std::string> out;
  if (!has(key)) return out;
  const YAML::Node n = node_[key];
  if (!n.IsSequence()) return at_.bad(key, "must be a list of strings");
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar())
      return at_.bad(std::string(key) + "[" + std::to_string(i) + "]", "must be a string");
    out.push_back(n[i].Scalar());
  }
  return out;
}

}  // namespace hypertopo::discoverers
