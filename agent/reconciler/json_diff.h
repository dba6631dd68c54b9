// agent/reconciler/json_diff.h: what differs between two JSON values, field by field, as `kubectl
// diff` shows it to an admin before a write.
//
// Objects are compared key by key and arrays index by index; a scalar, or a value whose type
// changed, is one change with its old and its new value. A field present on one side only is a
// change from or to "absent" (never a sentinel such as -1): an object field that appears or goes is
// listed key by key, an array item, an array or a scalar whole. At most `limit` changes are kept; the rest
// are counted in `omitted`, so one rewritten HyperNode of 500 members prints a screenful, not a book.
//
//   JsonDiff diff;
//   diff_json(&stored["spec"], &wanted["spec"], "spec", 20, diff);
//   for (const auto& c : diff.changes) std::cout << c.path << ": " << describe_value(c.old_value)
//                                                << " -> " << describe_value(c.new_value) << "\n";
//   // spec.members[3].selector.exactMatch.name: "gpu-a" -> "gpu-b"
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hypertopo::agent {

struct FieldChange {
  std::string path;                         // spec.members[3].selector.exactMatch.name
  std::optional<nlohmann::json> old_value;  // nullopt: absent
  std::optional<nlohmann::json> new_value;  // nullopt: absent
};

struct JsonDiff {
  std::vector<FieldChange> changes;
  std::size_t omitted = 0;  // changes found beyond the limit
  bool empty() const { return changes.empty() && omitted == 0; }
};

// Appends what differs from `old_value` to `new_value` (null pointers: absent) under `path` to
// `into`, keeping at most `limit` changes in `into` in all; several calls may share one JsonDiff.
void diff_json(const nlohmann::json* old_value, const nlohmann::json* new_value, const std::string& path,
               std::size_t limit, JsonDiff& into);

// `path` followed by the object key `key`: ".key", or ["key"] when the key is not a plain word
// (label keys such as volcano.sh/network-topology-source).
std::string child_path(const std::string& path, std::string_view key);

// The value as JSON text on one line ("absent" for nullopt), cut to `max_chars` with "...".
std::string describe_value(const std::optional<nlohmann::json>& value, std::size_t max_chars = 120);

// {"path": ..., "old": value, "new": value}, a side that is absent left out (a JSON null is a value).
nlohmann::json to_json(const FieldChange& change);

}  // namespace hypertopo::agent
