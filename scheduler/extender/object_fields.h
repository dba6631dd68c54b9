// scheduler/extender/object_fields.h: tolerant readers of Kubernetes JSON the extender's parts share.
//
// kube-scheduler and the API server send objects whose optional fields may be absent or null; these
// read a field or give an empty value, never throw.
//
//   std::string ns = str_at(member(pod, "metadata"), "namespace");
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hypertopo::scheduler::fields {

using nlohmann::json;

inline std::string str_at(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

inline const json& member(const json& obj, const char* key) {
  static const json empty = json::object();
  if (!obj.is_object()) return empty;
  auto it = obj.find(key);
  return it == obj.end() ? empty : *it;
}

// Go's encoding/json matches field names case-insensitively; kube-scheduler sends the json tags
// ("pod", "nodes", "nodenames"), older clients the Go names. Accept both.
inline const json* field(const json& obj, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = obj.find(n);
    if (it != obj.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

inline std::string join_path(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& p : path) out += (out.empty() ? "" : "/") + p;
  return out;
}

inline std::string pod_label(const json& pod) {
  const json& meta = member(pod, "metadata");
  return str_at(meta, "namespace") + "/" + str_at(meta, "name");
}

}  // namespace hypertopo::scheduler::fields
