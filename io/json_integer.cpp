#include "io/json_integer.h"

#include <charconv>
#include <optional>

#include "io/json_writer.h"

namespace hypertopo::io {

std::expected<std::int64_t, Error> bounded_integer(const nlohmann::json& obj, const char* key,
                                                   std::int64_t fallback, const std::string& where,
                                                   std::int64_t min, std::int64_t max) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  std::optional<std::int64_t> v;
  if (it->is_number_unsigned()) {
    // Out of range either way when past max; the message below says so.
    v = it->get<std::uint64_t>() <= static_cast<std::uint64_t>(max) ? it->get<std::int64_t>() : max + 1;
  } else if (it->is_number_integer()) {
    v = it->get<std::int64_t>();
  } else if (it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    std::int64_t n = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (!text.empty() && ec == std::errc() && ptr == text.data() + text.size()) v = n;
  }
  if (!v) {
    return fail(ErrorCode::kInvalidArgument,
                where + ": " + key + " must be an integer, got " + json_text(*it));
  }
  if (*v < min || *v > max) {
    return fail(ErrorCode::kInvalidArgument, where + ": " + key + " must be from " + std::to_string(min) +
                                                 " to " + std::to_string(max) + ", got " + json_text(*it));
  }
  return *v;
}

}  // namespace hypertopo::io
