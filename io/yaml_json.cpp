#include "io/yaml_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

namespace hypertopo::io {
namespace {

bool tagged_as_string(const YAML::Node& node) {
  const std::string& tag = node.Tag();
  return tag == "!" || tag == "tag:yaml.org,2002:str";  // "!": quoted in the file
}

nlohmann::json scalar_to_json(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (tagged_as_string(node)) return text;
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (text[0] != '-') {
    std::uint64_t u = 0;
    if (auto [p, ec] = std::from_chars(begin, end, u); ec == std::errc() && p == end) return u;
  } else {
    std::int64_t i = 0;
    if (auto [p, ec] = std::from_chars(begin, end, i); ec == std::errc() && p == end) return i;
  }
  double d = 0;
  if (auto [p, ec] = std::from_chars(begin, end, d); ec == std::errc() && p == end && std::isfinite(d))
    return d;
  return text;
}

}  // namespace

nlohmann::json yaml_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : node) out[kv.first.Scalar()] = yaml_to_json(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(yaml_to_json(item));
      return out;
    }
    case YAML::NodeType::Scalar:
      return scalar_to_json(node);
    default:
      return nullptr;
  }
}

}  // namespace hypertopo::io
