// io/config_reader.h: strict reading of a config file's YAML, with one message for each mistake.
//
// Every config hypertopo reads (the agent's file, the builder config, the label topology, the RoCE
// switch hierarchy, the extender's file, the scheduler conf, each source's `config` block, the
// lines of a job trace) reports an unknown key, a wrong type or a value out of range the same way,
// naming the file and the key path:
//
//   config.yaml: sources[1].interval: must be greater than 0
//   extender.yaml: tls.certFlie: unknown key (known: certFile, keyFile, clientCAFile)
//
//   io::ConfigReader r("config.yaml");
//   if (auto ok = r.mapping(doc["http"], "http", {"port"}); !ok) return std::unexpected(ok.error());
//   auto port = r.integer(doc["http"]["port"], "http.port", 1, 65535);  // std::expected<long long, Error>
//   if (!port) return std::unexpected(port.error());
//
// A reader of JSON (a trace line) builds its messages with config_error() and unknown_key_error(),
// so that they read the same.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstddef>
#include <expected>
#include <string>
#include <vector>

#include "errors/error.h"

namespace hypertopo::io {

// "a.b" (or "b" at the top).
std::string key_path(const std::string& path, const std::string& key);
// "a[2]".
std::string indexed(const std::string& path, std::size_t index);
// "a, b, c".
std::string comma_list(const std::vector<std::string>& items);

// "<file>: <path>: <what>"; an empty file or path is left out.
std::string config_message(const std::string& file, const std::string& path, const std::string& what);
std::unexpected<Error> config_error(const std::string& file, const std::string& path, const std::string& what,
                                    ErrorCode code = ErrorCode::kInvalidArgument);
// "<file>: <path>: unknown key (known: a, b, c)"; `path` is that of the unknown key itself.
std::unexpected<Error> unknown_key_error(const std::string& file, const std::string& path,
                                         const std::vector<std::string>& known);

// Go-style duration ("1h30m", "90s", "250ms", "1.5h") or a plain number of seconds; not negative,
// at most about 31 years.
std::expected<std::chrono::milliseconds, Error> parse_duration(const std::string& text);

// The checks on the values of one file; every error is config_error(file, path, ...).
class ConfigReader {
 public:
  explicit ConfigReader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  std::unexpected<Error> bad(const std::string& path, const std::string& what) const;

  // Every key of the mapping `map` (at `path`) is one of `known`.
  std::expected<void, Error> only_keys(const YAML::Node& map, const std::vector<std::string>& known,
                                       const std::string& path) const;
  // A section that must be a mapping of `known` keys; absent or `key:` with no value is an empty one.
  std::expected<void, Error> mapping(const YAML::Node& node, const std::string& path,
                                     const std::vector<std::string>& known) const;

  std::expected<std::string, Error> text(const YAML::Node& node, const std::string& path) const;
  std::expected<std::string, Error> nonempty_text(const YAML::Node& node, const std::string& path) const;
  std::expected<std::vector<std::string>, Error> strings(const YAML::Node& node,
                                                         const std::string& path) const;
  std::expected<bool, Error> boolean(const YAML::Node& node, const std::string& path) const;
  std::expected<long long, Error> integer(const YAML::Node& node, const std::string& path, long long min,
                                          long long max) const;
  std::expected<double, Error> number(const YAML::Node& node, const std::string& path, double min,
                                      double max) const;
  std::expected<std::chrono::milliseconds, Error> duration(const YAML::Node& node,
                                                           const std::string& path) const;
  // A duration of whole seconds, > 0 (intervals, periods).
  std::expected<std::chrono::seconds, Error> period(const YAML::Node& node, const std::string& path) const;

 private:
  std::string file_;
};

}  // namespace hypertopo::io
