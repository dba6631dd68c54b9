// discoverers/registry/source_config.h: reading one source's YAML config block into its struct.
//
// Every source's parse_config uses these, so every source reports a bad value the same way, naming
// the file and the key ("config.yaml: sources[1].caFile: must be a string"), and rejects keys it
// does not know (listing the ones it does). The checks are io::ConfigReader's (io/config_reader.h),
// the same as for every other config file.
//
//   ConfigBlock block(yaml, at);
//   if (auto ok = block.only(kUfmKeys); !ok) return std::unexpected(ok.error());
//   auto ca = block.text("caFile");               // std::expected<std::optional<std::string>, Error>
//   if (!ca) return std::unexpected(ca.error());
//   if (*ca) config.ca_file = **ca;
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "discoverers/registry/discoverer.h"
#include "errors/error.h"

namespace hypertopo::discoverers {

class ConfigBlock {
 public:
  // `node` is a mapping, or null for "every default".
  ConfigBlock(YAML::Node node, ConfigAt at) : node_(std::move(node)), at_(std::move(at)) {}

  // A mapping (or null) whose keys are all in `keys`.
  std::expected<void, Error> only(const std::vector<ConfigKey>& keys) const;
  bool has(const char* key) const;
  YAML::Node child(const char* key) const;
  ConfigAt at(const char* key) const;  // the place of a nested block

  std::expected<std::optional<std::string>, Error> text(const char* key) const;  // non-empty string
  std::expected<std::optional<bool>, Error> boolean(const char* key) const;
  std::expected<std::optional<double>, Error> number(const char* key, double min, double max) const;
  // "30s", "10m", "1h30m" or a number of seconds (io::parse_duration), within [min, max].
  std::expected<std::optional<std::chrono::milliseconds>, Error> duration(
      const char* key, std::chrono::milliseconds min, std::chrono::milliseconds max) const;
  // "512Mi", "2Gi", "1G" or a number of bytes (io::parse_byte_size), within [min, max].
  std::expected<std::optional<std::uint64_t>, Error> byte_size(const char* key, std::uint64_t min,
                                                               std::uint64_t max) const;
  std::expected<std::vector<std::string>, Error> strings(const char* key) const;  // a list of strings
  // Required: the error names the key.
  std::expected<std::string, Error> required_text(const char* key) const;

  const ConfigAt& where() const { return at_; }

 private:
  YAML::Node node_;
  ConfigAt at_;
};

// A source whose config is one required string key (a file, a directory): the parser for the
// YAML block and the one for the command line's ARG, both filling `field` of `Config`.
template <typename Config>
ConfigParser single_key_parser(std::vector<ConfigKey> keys, std::string Config::*field) {
  return [keys = std::move(keys), field](const YAML::Node& node,
                                         const ConfigAt& at) -> std::expected<SettingsPtr, Error> {
    ConfigBlock block(node, at);
    if (auto ok = block.only(keys); !ok) return std::unexpected(ok.error());
    auto value = block.required_text(keys.front().name.c_str());
    if (!value) return std::unexpected(value.error());
    auto c = std::make_shared<Config>();
    (*c).*field = *value;
    return c;
  };
}

template <typename Config>
ArgParser single_arg_parser(std::string usage, std::string Config::*field) {
  return [usage = std::move(usage), field](const std::string& arg) -> std::expected<SettingsPtr, Error> {
    if (arg.empty()) return fail(ErrorCode::kInvalidArgument, "needs " + usage);
    auto c = std::make_shared<Config>();
    (*c).*field = arg;
    return c;
  };
}

}  // namespace hypertopo::discoverers
