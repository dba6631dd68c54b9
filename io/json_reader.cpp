#include "io/json_reader.h"

namespace hypertopo::io {

std::size_t json_depth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::expected<nlohmann::json, Error> parse_json(std::string_view text, const std::string& where,
                                                std::size_t max_depth) {
  if (json_depth(text, max_depth) > max_depth) {
    return fail(ErrorCode::kParse, where + ": nested deeper than " + std::to_string(max_depth) + " levels");
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return fail(ErrorCode::kParse, where + ": not valid JSON: " + e.what());
  } catch (const nlohmann::json::exception& e) {  // a number beyond double's range ("1e400")
    return fail(ErrorCode::kParse, where + ": not valid JSON: " + e.what());
  }
}

}  // namespace hypertopo::io
