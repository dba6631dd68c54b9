// io/json_view.h: one read-only face for a JSON value, whichever parser made it.
//
// A reader written once as a template over a view gives the same answer from nlohmann::json (YAML
// turned into JSON, objects the API client already holds) and from simdjson's DOM (large files read
// at parser speed). The simdjson view answers exactly as the nlohmann one would for the same text:
// of duplicate keys the last one counts, fields() come sorted by key, numbers print as nlohmann
// prints them. A view never owns its value: the json or the simdjson parser must outlive it.
//
//   template <class View> std::string name_of(const View& obj) {
//     auto meta = obj.find("metadata");
//     auto name = meta ? meta->find("name") : std::nullopt;
//     return name && name->is_string() ? std::string(name->string()) : "";
//   }
//   name_of(io::NlohmannView(json));              // the same answer ...
//   name_of(io::SimdjsonView(parser.parse(text)));  // ... from either parser
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/json_writer.h"

namespace hypertopo::io {

class NlohmannView {
 public:
  explicit NlohmannView(const nlohmann::json& value) : v_(&value) {}

  bool is_null() const { return v_->is_null(); }
  bool is_object() const { return v_->is_object(); }
  bool is_array() const { return v_->is_array(); }
  bool is_string() const { return v_->is_string(); }
  bool is_integer() const { return v_->is_number_integer(); }
  bool is_boolean() const { return v_->is_boolean(); }
  const char* type_name() const { return v_->type_name(); }

  // The value under `key`; nothing when this is not an object or has no such key.
  std::optional<NlohmannView> find(std::string_view key) const {
    if (!v_->is_object()) return std::nullopt;
    auto it = v_->find(key);
    if (it == v_->end()) return std::nullopt;
    return NlohmannView(*it);
  }
  std::string_view string() const { return v_->get_ref<const std::string&>(); }
  // An integer as nlohmann's get<std::int64_t>() gives it (a value above INT64_MAX wraps).
  std::int64_t integer() const { return v_->get<std::int64_t>(); }
  bool boolean() const { return v_->get<bool>(); }

  // An array's elements; anything else has none.
  std::vector<NlohmannView> elements() const {
    std::vector<NlohmannView> out;
    if (!v_->is_array()) return out;
    out.reserve(v_->size());
    for (const auto& e : *v_) out.emplace_back(e);
    return out;
  }
  // An object's fields, sorted by key.
  std::vector<std::pair<std::string_view, NlohmannView>> fields() const {
    std::vector<std::pair<std::string_view, NlohmannView>> out;
    if (!v_->is_object()) return out;
    out.reserve(v_->size());
    for (const auto& [k, v] : v_->items()) out.emplace_back(k, NlohmannView(v));
    return out;
  }
  // A string as it is; anything else as one line of JSON.
  std::string text() const { return v_->is_string() ? v_->get<std::string>() : json_text(*v_); }

 private:
  const nlohmann::json* v_;
};

class SimdjsonView {
 public:
  explicit SimdjsonView(simdjson::dom::element value) : v_(value) {}

  bool is_null() const { return v_.is_null(); }
  bool is_object() const { return v_.is_object(); }
  bool is_array() const { return v_.is_array(); }
  bool is_string() const { return v_.is_string(); }
  bool is_integer() const {
    return v_.type() == simdjson::dom::element_type::INT64 ||
           v_.type() == simdjson::dom::element_type::UINT64;
  }
  bool is_boolean() const { return v_.is_bool(); }
  // nlohmann's names, so that messages read the same from either parser.
  const char* type_name() const {
    switch (v_.type()) {
      case simdjson::dom::element_type::ARRAY:
        return "array";
      case simdjson::dom::element_type::OBJECT:
        return "object";
      case simdjson::dom::element_type::STRING:
        return "string";
      case simdjson::dom::element_type::BOOL:
        return "boolean";
      case simdjson::dom::element_type::NULL_VALUE:
        return "null";
      default:
        return "number";
    }
  }

  // The last field named `key`, as nlohmann keeps the last of duplicate keys.
  std::optional<SimdjsonView> find(std::string_view key) const {
    simdjson::dom::object obj;
    if (v_.get_object().get(obj)) return std::nullopt;
    std::optional<SimdjsonView> out;
    for (auto field : obj) {
      if (field.key == key) out = SimdjsonView(field.value);
    }
    return out;
  }
  std::string_view string() const { return v_.get_string().value_unsafe(); }
  std::int64_t integer() const {
    if (v_.type() == simdjson::dom::element_type::UINT64)
      return static_cast<std::int64_t>(v_.get_uint64().value_unsafe());
    return v_.get_int64().value_unsafe();
  }
  bool boolean() const { return v_.get_bool().value_unsafe(); }

  std::vector<SimdjsonView> elements() const {
    std::vector<SimdjsonView> out;
    simdjson::dom::array arr;
    if (v_.get_array().get(arr)) return out;
    out.reserve(arr.size());
    for (auto e : arr) out.emplace_back(e);
    return out;
  }
  // Sorted by key, the last of duplicate keys kept: nlohmann's order and choice.
  std::vector<std::pair<std::string_view, SimdjsonView>> fields() const {
    std::vector<std::pair<std::string_view, SimdjsonView>> out;
    simdjson::dom::object obj;
    if (v_.get_object().get(obj)) return out;
    out.reserve(obj.size());
    bool sorted = true;
    for (auto field : obj) {
      if (!out.empty() && !(out.back().first < field.key)) sorted = false;
      out.emplace_back(field.key, SimdjsonView(field.value));
    }
    if (sorted) return out;
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    // Of equal keys the stable sort keeps file order: keep the last of each run.
    std::vector<std::pair<std::string_view, SimdjsonView>> unique;
    unique.reserve(out.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (i + 1 < out.size() && out[i + 1].first == out[i].first) continue;
      unique.push_back(out[i]);
    }
    return unique;
  }
  std::string text() const {
    switch (v_.type()) {
      case simdjson::dom::element_type::STRING:
        return std::string(string());
      case simdjson::dom::element_type::INT64:
        return std::to_string(v_.get_int64().value_unsafe());
      case simdjson::dom::element_type::UINT64:
        return std::to_string(v_.get_uint64().value_unsafe());
      default:
        return json_text(to_json());
    }
  }
  // The value as nlohmann would have parsed it (for printing numbers, objects and arrays alike).
  nlohmann::json to_json() const {
    switch (v_.type()) {
      case simdjson::dom::element_type::ARRAY: {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& e : elements()) out.push_back(e.to_json());
        return out;
      }
      case simdjson::dom::element_type::OBJECT: {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [k, v] : fields()) out[std::string(k)] = v.to_json();
        return out;
      }
      case simdjson::dom::element_type::STRING:
        return std::string(string());
      case simdjson::dom::element_type::INT64:
        return v_.get_int64().value_unsafe();
      case simdjson::dom::element_type::UINT64:
        return v_.get_uint64().value_unsafe();
      case simdjson::dom::element_type::DOUBLE:
        return v_.get_double().value_unsafe();
      case simdjson::dom::element_type::BOOL:
        return v_.get_bool().value_unsafe();
      default:
        return nullptr;
    }
  }

 private:
  simdjson::dom::element v_;
};

}  // namespace hypertopo::io
