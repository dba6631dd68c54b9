// scheduler/extender/object_fields.h: the extender's names for the project's tolerant JSON readers
// (io/json_fields.h), and two helpers of its own.
//
//   std::string ns = str_at(member(pod, "metadata"), "namespace");
//   std::string who = pod_label(pod);   // "ns/name"
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/json_fields.h"

namespace hypertopo::scheduler::fields {

using io::field;
using io::member;
using io::str_at;
using io::str_view_at;
using nlohmann::json;

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
