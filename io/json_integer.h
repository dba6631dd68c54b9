// io/json_integer.h: an integer field of JSON someone else wrote, read within bounds. The tolerant
// readers of other fields are in io/json_fields.h; this one returns an error, since a count or size
// that is not a number, or out of range, must stop a reader rather than become a plausible value.
//
//   auto replicas = bounded_integer(task, "replicas", 1, "Job ml/train task worker", 1);
//   if (!replicas) return std::unexpected(replicas.error());   // names the key and what was written
#pragma once

#include <cstdint>
#include <expected>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "errors/error.h"

namespace hypertopo::io {

// The integer at `key` (a JSON integer, or a string holding only one) within [min, max]; absent or
// null: `fallback`. 2147483648 or -1 never wraps: an error names `where`, the key and the value.
std::expected<std::int64_t, Error> bounded_integer(
    const nlohmann::json& obj, const char* key, std::int64_t fallback, const std::string& where,
    std::int64_t min = 0, std::int64_t max = std::numeric_limits<std::int32_t>::max());

}  // namespace hypertopo::io
