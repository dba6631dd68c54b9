// io/json_fields.h: the tolerant readers of fields of JSON someone else wrote (Kubernetes objects,
// kube-scheduler's extender calls, a saved plan), one set for every reader in the project.
//
// kube-scheduler and the API server send objects whose optional fields may be absent or null, and
// files hold what a user wrote; these read a field or give an empty value, never throw. Which empty
// value a reader wants says what it does next: `member` walks a path (absent: {}), `value_or_null`
// tells an absent field from one of the wrong type (absent: null), `object_at` / `list_at` take only
// their type (anything else: {} / []), `str_at` takes only a string (anything else: ""), and
// `str_view_at` does so without a copy, for a reader that keeps views into a tree that outlives them.
//
//   std::string ns = str_at(member(pod, "metadata"), "namespace");
//   std::string_view uid = str_view_at(victim, "UID");                   // a view into `victim`
//   const json& allowed = value_or_null(status, "disruptionsAllowed");   // null, or what was written
//   for (const auto& c : list_at(spec, "containers")) ...
//   const json* nodes = field(args, {"nodes", "Nodes"});                 // the first present, or null
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace hypertopo::io {

// The string at `key`; "" when `obj` is not an object, or the field is absent or not a string.
inline std::string str_at(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// str_at as a view into `obj`'s own string, valid while `obj` lives and is not changed.
inline std::string_view str_view_at(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>())
                                            : std::string_view();
}

// The field as written (of any type); an empty object when `obj` is not an object or lacks it.
inline const nlohmann::json& member(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!obj.is_object()) return empty;
  auto it = obj.find(key);
  return it == obj.end() ? empty : *it;
}

// The field as written (of any type); null when `obj` is not an object or lacks it.
inline const nlohmann::json& value_or_null(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json null;
  if (!obj.is_object()) return null;
  auto it = obj.find(key);
  return it == obj.end() ? null : *it;
}

// The field when it is an object; an empty object otherwise.
inline const nlohmann::json& object_at(const nlohmann::json& obj, const char* key) {
  const nlohmann::json& v = member(obj, key);
  static const nlohmann::json empty = nlohmann::json::object();
  return v.is_object() ? v : empty;
}

// The field when it is a list; an empty list otherwise.
inline const nlohmann::json& list_at(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json empty = nlohmann::json::array();
  const nlohmann::json& v = value_or_null(obj, key);
  return v.is_array() ? v : empty;
}

// The first of `names` present and not null, or null. Go's encoding/json matches field names
// case-insensitively: kube-scheduler sends the json tags ("pod", "nodes", "nodenames"), older clients
// the Go names, so a reader lists both.
inline const nlohmann::json* field(const nlohmann::json& obj, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = obj.find(n);
    if (it != obj.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

}  // namespace hypertopo::io
