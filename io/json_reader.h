// io/json_reader.h: parsing JSON that someone else wrote, with bounded nesting.
//
// A line of 100,000 '[' is valid JSON to a parser that keeps its own stack, and then overflows the
// native stack of whatever walks or destroys the value recursively. parse_json measures the
// nesting first (one pass, no allocation) and refuses a document deeper than any real Kubernetes
// object, trace line or report.
//
//   auto doc = io::parse_json(line, "trace.jsonl:12");   // std::expected<nlohmann::json, Error>
//   if (!doc) return std::unexpected(doc.error());        // "trace.jsonl:12: nested deeper than 128 levels"
#pragma once

#include <cstddef>
#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "errors/error.h"

namespace hypertopo::io {

inline constexpr std::size_t kMaxJsonDepth = 128;

// The deepest nesting of arrays and objects in `text` (strings skipped); stops counting past `limit`.
std::size_t json_depth(std::string_view text, std::size_t limit = kMaxJsonDepth);

// `text` as JSON. `where` (a file, or "file:line") starts every error.
std::expected<nlohmann::json, Error> parse_json(std::string_view text, const std::string& where,
                                                std::size_t max_depth = kMaxJsonDepth);

}  // namespace hypertopo::io
