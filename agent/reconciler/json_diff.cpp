#include "agent/reconciler/json_diff.h"

#include <algorithm>
#include <cctype>

namespace hypertopo::agent {

using nlohmann::json;

namespace {

void add(JsonDiff& into, std::size_t limit, const std::string& path, const json* old_value,
         const json* new_value) {
  if (into.changes.size() >= limit) {
    ++into.omitted;
    return;
  }
  FieldChange change{path, std::nullopt, std::nullopt};
  if (old_value != nullptr) change.old_value = *old_value;
  if (new_value != nullptr) change.new_value = *new_value;
  into.changes.push_back(std::move(change));
}

}  // namespace

std::string child_path(const std::string& path, std::string_view key) {
  const bool plain = !key.empty() && std::ranges::all_of(key, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  if (plain) return path.empty() ? std::string(key) : path + "." + std::string(key);
  return path + "[" + json(std::string(key)).dump() + "]";
}

namespace {

// `element`: the values are an array's items, shown whole when one side lacks them (a member added
// is one line, not one per field).
void diff_at(const json* old_value, const json* new_value, const std::string& path, std::size_t limit,
             JsonDiff& into, bool element) {
  if (old_value == nullptr && new_value == nullptr) return;
  // An object on one side only is listed key by key, so that a created object's fields have paths.
  const json* object_side = old_value == nullptr ? new_value : new_value == nullptr ? old_value : nullptr;
  if (!element && object_side != nullptr && object_side->is_object() && !object_side->empty()) {
    for (const auto& [key, value] : object_side->items()) {
      diff_at(old_value ? &value : nullptr, new_value ? &value : nullptr, child_path(path, key), limit, into,
              false);
    }
    return;
  }
  if (old_value == nullptr || new_value == nullptr) return add(into, limit, path, old_value, new_value);
  if (old_value->is_object() && new_value->is_object()) {
    // nlohmann's objects iterate in key order: one merge walk over both.
    auto a = old_value->begin();
    auto b = new_value->begin();
    while (a != old_value->end() || b != new_value->end()) {
      if (b == new_value->end() || (a != old_value->end() && a.key() < b.key())) {
        diff_at(&a.value(), nullptr, child_path(path, a.key()), limit, into, false);
        ++a;
      } else if (a == old_value->end() || b.key() < a.key()) {
        diff_at(nullptr, &b.value(), child_path(path, b.key()), limit, into, false);
        ++b;
      } else {
        diff_at(&a.value(), &b.value(), child_path(path, a.key()), limit, into, false);
        ++a;
        ++b;
      }
    }
    return;
  }
  if (old_value->is_array() && new_value->is_array()) {
    const std::size_t n = std::max(old_value->size(), new_value->size());
    for (std::size_t i = 0; i < n; ++i) {
      diff_at(i < old_value->size() ? &(*old_value)[i] : nullptr,
              i < new_value->size() ? &(*new_value)[i] : nullptr, path + "[" + std::to_string(i) + "]", limit,
              into, true);
    }
    return;
  }
  // Scalars, or a change of type. nlohmann compares 1 and 1.0 equal, as the API server would.
  if (*old_value != *new_value) add(into, limit, path, old_value, new_value);
}

}  // namespace

void diff_json(const json* old_value, const json* new_value, const std::string& path, std::size_t limit,
               JsonDiff& into) {
  diff_at(old_value, new_value, path, limit, into, false);
}

std::string describe_value(const std::optional<json>& value, std::size_t max_chars) {
  if (!value) return "absent";
  std::string text = value->dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > max_chars) {
    text.resize(max_chars);
    text += "...";
  }
  return text;
}

json to_json(const FieldChange& change) {
  json out = {{"path", change.path}};
  if (change.old_value) out["old"] = *change.old_value;
  if (change.new_value) out["new"] = *change.new_value;
  return out;
}

}  // namespace hypertopo::agent
