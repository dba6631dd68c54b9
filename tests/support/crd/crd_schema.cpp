#include "tests/support/crd/crd_schema.h"

#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>

namespace hypertopo::testing {

using nlohmann::json;

// One CEL rule of a CRD (x-kubernetes-validations), known by its text and checked by hand. `self` is
// the value the rule is attached to; a rule only runs when that value is present.
struct CelRule {
  const char* id;
  const char* expression;  // compared with all whitespace removed
  std::function<bool(const json& self)> holds;
};

struct SchemaNode {
  std::string location;  // where in the CRD, for load errors
  std::string type;      // "" when the schema leaves it open
  std::map<std::string, std::shared_ptr<const SchemaNode>> properties;
  std::shared_ptr<const SchemaNode> items;
  std::shared_ptr<const SchemaNode> additional_properties;
  bool additional_properties_allowed = false;  // `additionalProperties: true`
  std::vector<std::string> required;
  std::optional<double> minimum;
  std::optional<double> maximum;
  bool exclusive_minimum = false;
  bool exclusive_maximum = false;
  std::optional<double> multiple_of;
  std::optional<std::size_t> min_length, max_length, min_items, max_items, min_properties, max_properties;
  std::string pattern;
  // The API server checks `pattern` with Go's regexp (RE2 syntax, unanchored search:
  // k8s.io/kube-openapi pkg/validation/validate/values.go, Pattern), not ECMAScript's.
  std::shared_ptr<const re2::RE2> pattern_re;
  std::vector<json> enum_values;
  std::string format;
  bool nullable = false;
  bool preserve_unknown_fields = false;
  bool int_or_string = false;
  std::string list_type;  // atomic | set | map
  std::vector<std::string> list_map_keys;
  struct AttachedRule {
    const CelRule* rule;
    std::string message;
  };
  std::vector<AttachedRule> rules;
};

namespace {

// ---------------------------------------------------------------------------------------------
// Name rules of the API machinery (k8s.io/apimachinery/pkg/util/validation), written out.

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool is_dns1123_subdomain_text(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    std::string part = s.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty() || !is_lower_alnum(part.front()) || !is_lower_alnum(part.back())) return false;
    for (char c : part) {
      if (!is_lower_alnum(c) && c != '-') return false;
    }
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most `limit` characters.
bool is_qualified_part(const std::string& s, std::size_t limit) {
  if (s.empty() || s.size() > limit) return false;
  if (!is_alnum(s.front()) || !is_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

std::string type_of(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

std::string shown(const json& v) {
  std::string text = v.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

std::string strip_spaces(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) == 0) out.push_back(c);
  }
  return out;
}

std::string field_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
std::string map_path(const std::string& path, const std::string& key) { return path + "[" + key + "]"; }
std::string index_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
std::string shown_path(const std::string& path) { return path.empty() ? "<root>" : path; }

// 8 rather than 8.0, as the API server prints integral bounds.
std::string number_text(double x) {
  if (x == static_cast<double>(static_cast<long long>(x))) return std::to_string(static_cast<long long>(x));
  return json(x).dump();
}

std::size_t code_points(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// RFC 3339 date-time, as the API server's strfmt accepts it.
bool is_date_time(const std::string& s) {
  static const std::regex re(
      R"(^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$)");
  std::smatch m;
  if (!std::regex_match(s, m, re)) return false;
  int month = std::stoi(m[2]), day = std::stoi(m[3]), hour = std::stoi(m[4]), minute = std::stoi(m[5]),
      second = std::stoi(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return false;
  if (m[9].matched && (std::stoi(m[9]) > 23 || std::stoi(m[10]) > 59)) return false;
  return true;
}

bool is_date(const std::string& s) {
  static const std::regex re(R"(^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$)");
  return std::regex_match(s, re);
}

bool is_uuid(const std::string& s) {
  static const std::regex re(
      R"(^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$)");
  return std::regex_match(s, re);
}

// ---------------------------------------------------------------------------------------------
// The CRD's CEL rules, by intent.

bool has_field(const json& self, const char* key) { return self.is_object() && self.contains(key); }

int selector_kinds(const json& selector) {
  return static_cast<int>(has_field(selector, "exactMatch")) +
         static_cast<int>(has_field(selector, "regexMatch")) +
         static_cast<int>(has_field(selector, "labelMatch"));
}

const std::vector<CelRule>& known_cel_rules() {
  static const std::vector<CelRule> rules = {
      {"selector-has-a-kind", "has(self.exactMatch) || has(self.regexMatch) || has(self.labelMatch)",
       [](const json& self) { return selector_kinds(self) >= 1; }},
      {"selector-has-at-most-one-kind",
       "(has(self.exactMatch) ? 1 : 0) + (has(self.regexMatch) ? 1 : 0) + (has(self.labelMatch) ? 1 : 0) <= "
       "1",
       [](const json& self) { return selector_kinds(self) <= 1; }},
  };
  return rules;
}

// ---------------------------------------------------------------------------------------------
// Loading the schema.

struct LoadError {
  std::string message;
};

[[noreturn]] void load_fail(const std::string& where, const std::string& what) {
  throw LoadError{where + ": " + what};
}

template <typename T>
T scalar(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar()) load_fail(where, "expected a scalar");
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    load_fail(where, "cannot read '" + n.Scalar() + "'");
  }
}

json enum_value(const YAML::Node& n, const std::string& type, const std::string& where) {
  if (type == "integer") return scalar<long long>(n, where);
  if (type == "number") return scalar<double>(n, where);
  if (type == "boolean") return scalar<bool>(n, where);
  return scalar<std::string>(n, where);
}

std::shared_ptr<const SchemaNode> parse_schema(const YAML::Node& n, const std::string& where,
                                               std::vector<std::string>& cel_found) {
  if (!n.IsMap()) load_fail(where, "a schema must be a mapping");
  auto node = std::make_shared<SchemaNode>();
  node->location = where;
  // Read `type` first: enum values are typed by it.
  if (n["type"]) node->type = scalar<std::string>(n["type"], where + ".type");
  static const std::set<std::string> supported_types = {"object",  "array",  "string",
                                                        "integer", "number", "boolean"};
  if (!node->type.empty() && !supported_types.contains(node->type)) {
    load_fail(where + ".type", "unsupported type '" + node->type + "'");
  }
  for (const auto& entry : n) {
    const auto key = entry.first.as<std::string>();
    const YAML::Node& value = entry.second;
    const std::string at = where + "." + key;
    if (key == "type" || key == "description" || key == "title" || key == "default" || key == "example" ||
        key == "externalDocs" || key == "x-kubernetes-map-type") {
      // Documentation and defaulting: nothing to check on an incoming object.
    } else if (key == "properties") {
      if (!value.IsMap()) load_fail(at, "expected a mapping");
      for (const auto& prop : value) {
        auto name = prop.first.as<std::string>();
        node->properties[name] = parse_schema(prop.second, at + "." + name, cel_found);
      }
    } else if (key == "items") {
      node->items = parse_schema(value, at, cel_found);
    } else if (key == "additionalProperties") {
      if (value.IsScalar()) {
        node->additional_properties_allowed = scalar<bool>(value, at);
      } else {
        node->additional_properties = parse_schema(value, at, cel_found);
      }
    } else if (key == "required") {
      if (!value.IsSequence()) load_fail(at, "expected a list");
      for (const auto& r : value) node->required.push_back(scalar<std::string>(r, at));
    } else if (key == "minimum") {
      node->minimum = scalar<double>(value, at);
    } else if (key == "maximum") {
      node->maximum = scalar<double>(value, at);
    } else if (key == "exclusiveMinimum") {
      node->exclusive_minimum = scalar<bool>(value, at);
    } else if (key == "exclusiveMaximum") {
      node->exclusive_maximum = scalar<bool>(value, at);
    } else if (key == "multipleOf") {
      node->multiple_of = scalar<double>(value, at);
    } else if (key == "minLength") {
      node->min_length = scalar<std::size_t>(value, at);
    } else if (key == "maxLength") {
      node->max_length = scalar<std::size_t>(value, at);
    } else if (key == "minItems") {
      node->min_items = scalar<std::size_t>(value, at);
    } else if (key == "maxItems") {
      node->max_items = scalar<std::size_t>(value, at);
    } else if (key == "minProperties") {
      node->min_properties = scalar<std::size_t>(value, at);
    } else if (key == "maxProperties") {
      node->max_properties = scalar<std::size_t>(value, at);
    } else if (key == "pattern") {
      node->pattern = scalar<std::string>(value, at);
      re2::RE2::Options options;
      options.set_log_errors(false);
      node->pattern_re = std::make_shared<const re2::RE2>(node->pattern, options);
      if (!node->pattern_re->ok()) load_fail(at, "pattern does not compile: " + node->pattern_re->error());
    } else if (key == "enum") {
      if (!value.IsSequence()) load_fail(at, "expected a list");
      for (const auto& e : value) node->enum_values.push_back(enum_value(e, node->type, at));
    } else if (key == "format") {
      node->format = scalar<std::string>(value, at);
    } else if (key == "nullable") {
      node->nullable = scalar<bool>(value, at);
    } else if (key == "x-kubernetes-preserve-unknown-fields") {
      node->preserve_unknown_fields = scalar<bool>(value, at);
    } else if (key == "x-kubernetes-int-or-string") {
      node->int_or_string = scalar<bool>(value, at);
    } else if (key == "x-kubernetes-list-type") {
      node->list_type = scalar<std::string>(value, at);
      if (node->list_type != "atomic" && node->list_type != "set" && node->list_type != "map") {
        load_fail(at, "unknown list type '" + node->list_type + "'");
      }
    } else if (key == "x-kubernetes-list-map-keys") {
      if (!value.IsSequence()) load_fail(at, "expected a list");
      for (const auto& k : value) node->list_map_keys.push_back(scalar<std::string>(k, at));
    } else if (key == "x-kubernetes-validations") {
      if (!value.IsSequence()) load_fail(at, "expected a list");
      for (std::size_t i = 0; i < value.size(); ++i) {
        const std::string rule_at = at + "[" + std::to_string(i) + "]";
        const YAML::Node& r = value[i];
        if (!r.IsMap() || !r["rule"]) load_fail(rule_at, "a validation needs a 'rule'");
        const auto text = scalar<std::string>(r["rule"], rule_at + ".rule");
        const auto wanted = strip_spaces(text);
        const CelRule* found = nullptr;
        for (const auto& known : known_cel_rules()) {
          if (strip_spaces(known.expression) == wanted) found = &known;
        }
        if (found == nullptr) load_fail(rule_at, "CEL rule not implemented by this validator: " + text);
        std::string message =
            r["message"] ? scalar<std::string>(r["message"], rule_at + ".message") : "failed rule: " + text;
        node->rules.push_back({found, message});
        cel_found.push_back(where + ": " + found->id);
      }
    } else {
      // A keyword this validator does not know could carry a constraint; refuse rather than ignore.
      load_fail(at, "unsupported schema keyword '" + key + "'");
    }
  }
  return node;
}

std::optional<YAML::Node> find_document(const std::vector<YAML::Node>& docs, const std::string& kind) {
  for (const auto& d : docs) {
    if (d.IsMap() && d["kind"] && d["kind"].IsScalar() && d["kind"].Scalar() == kind) return d;
  }
  return std::nullopt;
}

std::expected<std::vector<YAML::Node>, std::string> load_documents(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::unexpected(path.string() + ": no such file");
  try {
    return YAML::LoadAllFromFile(path.string());
  } catch (const YAML::Exception& e) {
    return std::unexpected(path.string() + ": not valid YAML: " + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Validation.

void validate_value(const SchemaNode& s, const json& v, const std::string& path,
                    std::vector<std::string>& errors);

void validate_object(const SchemaNode& s, const json& v, const std::string& path,
                     std::vector<std::string>& errors) {
  if (s.min_properties && v.size() < *s.min_properties) {
    errors.push_back(shown_path(path) + ": must have at least " + std::to_string(*s.min_properties) +
                     " properties");
  }
  if (s.max_properties && v.size() > *s.max_properties) {
    errors.push_back(shown_path(path) + ": must have at most " + std::to_string(*s.max_properties) +
                     " properties");
  }
  for (const auto& r : s.required) {
    if (!v.contains(r)) errors.push_back(field_path(path, r) + ": Required value");
  }
  for (const auto& [key, value] : v.items()) {
    if (auto p = s.properties.find(key); p != s.properties.end()) {
      validate_value(*p->second, value, field_path(path, key), errors);
    } else if (s.additional_properties) {
      validate_value(*s.additional_properties, value, map_path(path, key), errors);
    } else if (!s.additional_properties_allowed && !s.preserve_unknown_fields) {
      // Structural schemas prune unknown fields; `kubectl apply` (strict field validation) rejects them.
      errors.push_back(field_path(path, key) + ": unknown field \"" + key + "\"");
    }
  }
}

void validate_array(const SchemaNode& s, const json& v, const std::string& path,
                    std::vector<std::string>& errors) {
  if (s.min_items && v.size() < *s.min_items) {
    errors.push_back(shown_path(path) + ": Invalid value: " + std::to_string(v.size()) +
                     " items: must have at least " + std::to_string(*s.min_items) + " items");
  }
  if (s.max_items && v.size() > *s.max_items) {
    errors.push_back(shown_path(path) + ": Too many: " + std::to_string(v.size()) + ": must have at most " +
                     std::to_string(*s.max_items) + " items");
  }
  if (s.list_type == "set") {
    for (std::size_t i = 0; i < v.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (v[i] == v[j]) errors.push_back(index_path(path, i) + ": Duplicate value: " + shown(v[i]));
      }
    }
  } else if (s.list_type == "map") {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < v.size(); ++i) {
      json key = json::object();
      for (const auto& k : s.list_map_keys) key[k] = v[i].is_object() && v[i].contains(k) ? v[i][k] : json();
      if (!seen.insert(key.dump()).second)
        errors.push_back(index_path(path, i) + ": Duplicate value: " + key.dump());
    }
  }
  if (s.items) {
    for (std::size_t i = 0; i < v.size(); ++i) validate_value(*s.items, v[i], index_path(path, i), errors);
  }
}

void validate_string(const SchemaNode& s, const std::string& text, const std::string& path,
                     std::vector<std::string>& errors) {
  const std::size_t length = code_points(text);
  if (s.min_length && length < *s.min_length) {
    errors.push_back(shown_path(path) + ": Invalid value: \"" + text + "\": should be at least " +
                     std::to_string(*s.min_length) + " chars long");
  }
  if (s.max_length && length > *s.max_length) {
    errors.push_back(shown_path(path) + ": Too long: may not be more than " + std::to_string(*s.max_length) +
                     " bytes (is " + std::to_string(length) + ")");
  }
  if (s.pattern_re && !re2::RE2::PartialMatch(text, *s.pattern_re)) {
    errors.push_back(shown_path(path) + ": Invalid value: \"" + text + "\": should match '" + s.pattern +
                     "'");
  }
  bool format_ok = true;
  if (s.format == "date-time")
    format_ok = is_date_time(text);
  else if (s.format == "date")
    format_ok = is_date(text);
  else if (s.format == "uuid")
    format_ok = is_uuid(text);
  // Other formats are not checked by the API server either (unknown formats are ignored).
  if (!format_ok) {
    errors.push_back(shown_path(path) + ": Invalid value: \"" + text + "\": must be in " + s.format +
                     " format");
  }
}

void validate_number(const SchemaNode& s, const json& v, const std::string& path,
                     std::vector<std::string>& errors) {
  const double x = v.get<double>();
  if (s.minimum && (x < *s.minimum || (s.exclusive_minimum && x == *s.minimum))) {
    errors.push_back(shown_path(path) + ": Invalid value: " + v.dump() +
                     ": should be greater than or equal to " + number_text(*s.minimum));
  }
  if (s.maximum && (x > *s.maximum || (s.exclusive_maximum && x == *s.maximum))) {
    errors.push_back(shown_path(path) + ": Invalid value: " + v.dump() +
                     ": should be less than or equal to " + number_text(*s.maximum));
  }
  if (s.multiple_of && *s.multiple_of != 0) {
    const double q = x / *s.multiple_of;
    if (q != static_cast<double>(static_cast<long long>(q))) {
      errors.push_back(shown_path(path) + ": Invalid value: " + v.dump() + ": should be a multiple of " +
                       number_text(*s.multiple_of));
    }
  }
  if (v.is_number_unsigned() && (s.format == "int64" || s.format == "int32")) {
    const auto u = v.get<std::uint64_t>();
    const std::uint64_t limit = s.format == "int64" ? static_cast<std::uint64_t>(INT64_MAX) : INT32_MAX;
    if (u > limit)
      errors.push_back(shown_path(path) + ": Invalid value: " + v.dump() + ": out of " + s.format + " range");
  } else if (v.is_number_integer() && s.format == "int32") {
    const auto i = v.get<std::int64_t>();
    if (i < INT32_MIN || i > INT32_MAX) {
      errors.push_back(shown_path(path) + ": Invalid value: " + v.dump() + ": out of int32 range");
    }
  }
}

bool type_matches(const std::string& type, const json& v) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer();  // 1.0 decodes as a float and is refused
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  return true;
}

void validate_value(const SchemaNode& s, const json& v, const std::string& path,
                    std::vector<std::string>& errors) {
  if (v.is_null()) {
    if (!s.nullable) errors.push_back(shown_path(path) + ": Invalid value: \"null\": must not be null");
    return;
  }
  if (s.int_or_string) {
    if (!v.is_number_integer() && !v.is_string()) {
      errors.push_back(shown_path(path) + ": Invalid value: \"" + type_of(v) +
                       "\": must be an integer or a string");
      return;
    }
  } else if (!type_matches(s.type, v)) {
    errors.push_back(shown_path(path) + ": Invalid value: \"" + type_of(v) + "\": " + shown_path(path) +
                     " in body must be of type " + s.type + ": \"" + type_of(v) + "\"");
    return;
  }
  if (!s.enum_values.empty() &&
      std::find(s.enum_values.begin(), s.enum_values.end(), v) == s.enum_values.end()) {
    std::string supported;
    for (const auto& e : s.enum_values) supported += (supported.empty() ? "" : ", ") + e.dump();
    errors.push_back(shown_path(path) + ": Unsupported value: " + shown(v) +
                     ": supported values: " + supported);
  }
  if (v.is_object())
    validate_object(s, v, path, errors);
  else if (v.is_array())
    validate_array(s, v, path, errors);
  else if (v.is_string())
    validate_string(s, v.get<std::string>(), path, errors);
  else if (v.is_number())
    validate_number(s, v, path, errors);
  for (const auto& r : s.rules) {
    if (!r.rule->holds(v)) errors.push_back(shown_path(path) + ": Invalid value: \"object\": " + r.message);
  }
}

void validate_string_map(const json& v, const std::string& path, bool values_are_label_values,
                         std::vector<std::string>& errors) {
  if (!v.is_object()) {
    errors.push_back(path + ": Invalid value: \"" + type_of(v) + "\": must be a map of strings");
    return;
  }
  std::size_t total = 0;
  for (const auto& [key, value] : v.items()) {
    if (!is_qualified_name(key)) {
      errors.push_back(
          map_path(path, key) + ": Invalid value: \"" + key +
          "\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', start and end "
          "with an alphanumeric character, name part at most 63 characters, optional DNS-1123 prefix");
    }
    if (!value.is_string()) {
      errors.push_back(map_path(path, key) + ": Invalid value: \"" + type_of(value) + "\": must be a string");
      continue;
    }
    const auto text = value.get<std::string>();
    total += key.size() + text.size();
    if (values_are_label_values && !is_label_value(text)) {
      errors.push_back(
          map_path(path, key) + ": Invalid value: \"" + text +
          "\": a label value must be at most 63 characters, empty or alphanumeric at both ends with "
          "'-', '_' or '.' inside");
    }
  }
  if (!values_are_label_values && total > 256 * 1024) {
    errors.push_back(path + ": Too long: must have at most 262144 bytes");
  }
}

// What the API server checks on every object's metadata (ValidateObjectMeta) before any schema.
void validate_object_meta(const json& object, std::vector<std::string>& errors) {
  auto it = object.find("metadata");
  if (it == object.end()) {
    errors.push_back("metadata.name: Required value: name or generateName is required");
    return;
  }
  const json& meta = *it;
  if (!meta.is_object()) {
    errors.push_back("metadata: Invalid value: \"" + type_of(meta) + "\": must be an object");
    return;
  }
  static const std::set<std::string> known = {"name",
                                              "generateName",
                                              "namespace",
                                              "selfLink",
                                              "uid",
                                              "resourceVersion",
                                              "generation",
                                              "creationTimestamp",
                                              "deletionTimestamp",
                                              "deletionGracePeriodSeconds",
                                              "labels",
                                              "annotations",
                                              "ownerReferences",
                                              "finalizers",
                                              "managedFields"};
  for (const auto& [key, value] : meta.items()) {
    if (!known.contains(key)) errors.push_back("metadata." + key + ": unknown field \"" + key + "\"");
  }
  const bool has_name = meta.contains("name");
  if (!has_name && !meta.contains("generateName")) {
    errors.push_back("metadata.name: Required value: name or generateName is required");
  }
  if (has_name) {
    const json& name = meta["name"];
    if (!name.is_string()) {
      errors.push_back("metadata.name: Invalid value: \"" + type_of(name) + "\": must be a string");
    } else if (!is_dns1123_subdomain_text(name.get<std::string>())) {
      errors.push_back(
          "metadata.name: Invalid value: \"" + name.get<std::string>() +
          "\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
          "or '.', and must start and end with an alphanumeric character (at most 253 characters)");
    }
  }
  for (const char* text_field : {"generateName", "namespace", "resourceVersion", "uid"}) {
    if (meta.contains(text_field) && !meta[text_field].is_string()) {
      errors.push_back(std::string("metadata.") + text_field + ": must be a string");
    }
  }
  if (meta.contains("labels")) validate_string_map(meta["labels"], "metadata.labels", true, errors);
  if (meta.contains("annotations"))
    validate_string_map(meta["annotations"], "metadata.annotations", false, errors);
  if (meta.contains("finalizers")) {
    const json& f = meta["finalizers"];
    if (!f.is_array() || !std::all_of(f.begin(), f.end(), [](const json& x) { return x.is_string(); })) {
      errors.push_back("metadata.finalizers: must be a list of strings");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The admission policy's validations, by intent. Each returns its failures as paths; a member that
// an expression cannot evaluate (no selector) is a failure too, since failurePolicy is Fail.

struct PolicyCheck {
  const char* id;
  const char* expression;
  // Appends "<path>" (or "<path> (reason)") for each place the object fails.
  std::function<void(const json& object, std::vector<std::string>& where)> check;
};

// spec.members when the object has them, else nullptr (most rules then hold trivially).
const json* members_of(const json& object) {
  if (!object.is_object() || !object.contains("spec") || !object["spec"].is_object()) return nullptr;
  const json& spec = object["spec"];
  if (!spec.contains("members")) return nullptr;
  return &spec["members"];
}

constexpr const char* kCannotEvaluate =
    " (the expression cannot be evaluated: no selector; failurePolicy Fail denies)";

// Runs `each(member_path, selector)` for every member; a member with no selector object is a failure.
void for_each_selector(const json& object, std::vector<std::string>& where,
                       const std::function<void(const std::string&, const json&)>& each) {
  const json* members = members_of(object);
  if (members == nullptr || !members->is_array() || members->empty()) return;
  for (std::size_t i = 0; i < members->size(); ++i) {
    const std::string at = "spec.members[" + std::to_string(i) + "]";
    const json& m = (*members)[i];
    if (!m.is_object() || !m.contains("selector") || !m["selector"].is_object()) {
      where.push_back(at + ".selector" + kCannotEvaluate);
      continue;
    }
    each(at + ".selector", m["selector"]);
  }
}

// Runs `each(path, text)` for every member's selector.<kind>.<field> where that kind is set.
void for_each_selector_text(const json& object, std::vector<std::string>& where, const char* kind,
                            const char* field,
                            const std::function<void(const std::string&, const std::string&)>& each) {
  for_each_selector(object, where, [&](const std::string& at, const json& selector) {
    if (!selector.contains(kind)) return;
    const json& k = selector[kind];
    const std::string path = at + "." + kind + "." + field;
    if (!k.is_object() || !k.contains(field) || !k[field].is_string()) {
      where.push_back(path + " (the expression cannot be evaluated: no " + field + ")");
      return;
    }
    each(path, k[field].get<std::string>());
  });
}

void balanced(const json& object, std::vector<std::string>& where, char open, char close) {
  for_each_selector_text(object, where, "regexMatch", "pattern",
                         [&](const std::string& at, const std::string& p) {
                           if (p.find(open) == std::string::npos)
                             return;  // the rule only looks at patterns holding an opener
                           if (std::count(p.begin(), p.end(), open) != std::count(p.begin(), p.end(), close))
                             where.push_back(at);
                         });
}

const std::vector<PolicyCheck>& known_policy_checks() {
  static const std::vector<PolicyCheck> checks = {
      {"members-present", "has(object.spec) && has(object.spec.members) && size(object.spec.members) > 0",
       [](const json& object, std::vector<std::string>& where) {
         const json* m = members_of(object);
         if (m == nullptr || !m->is_array() || m->empty()) where.push_back("spec.members");
       }},
      {"selector-has-a-kind",
       "!has(object.spec) || !has(object.spec.members) || size(object.spec.members) == 0 || "
       "variables.membersWithSelectorCounts.all(count, count >= 1)",
       [](const json& object, std::vector<std::string>& where) {
         for_each_selector(object, where, [&](const std::string& at, const json& s) {
           if (selector_kinds(s) < 1) where.push_back(at);
         });
       }},
      {"selector-has-at-most-one-kind",
       "!has(object.spec) || !has(object.spec.members) || size(object.spec.members) == 0 || "
       "variables.membersWithSelectorCounts.all(count, count <= 1)",
       [](const json& object, std::vector<std::string>& where) {
         for_each_selector(object, where, [&](const std::string& at, const json& s) {
           if (selector_kinds(s) > 1) where.push_back(at);
         });
       }},
      {"exact-match-name-not-empty",
       "!has(object.spec) || !has(object.spec.members) || size(object.spec.members) == 0 || "
       "object.spec.members.filter(member, has(member.selector.exactMatch))"
       ".all(member, member.selector.exactMatch.name != \"\")",
       [](const json& object, std::vector<std::string>& where) {
         for_each_selector_text(object, where, "exactMatch", "name",
                                [&](const std::string& at, const std::string& n) {
                                  if (n.empty()) where.push_back(at);
                                });
       }},
      {"exact-match-name-qualified",
       "!has(object.spec) || !has(object.spec.members) || size(object.spec.members) == 0 || "
       "variables.exactMatchNames.all(name, !format.qualifiedName().validate(name).hasValue())",
       [](const json& object, std::vector<std::string>& where) {
         for_each_selector_text(object, where, "exactMatch", "name",
                                [&](const std::string& at, const std::string& n) {
                                  if (!is_qualified_name(n)) where.push_back(at);
                                });
       }},
      {"regex-match-pattern-not-empty",
       "!has(object.spec) || !has(object.spec.members) || size(object.spec.members) == 0 || "
       "object.spec.members.filter(member, has(member.selector.regexMatch))"
       ".all(member, member.selector.regexMatch.pattern != \"\")",
       [](const json& object, std::vector<std::string>& where) {
         for_each_selector_text(object, where, "regexMatch", "pattern",
                                [&](const std::string& at, const std::string& p) {
                                  if (p.empty()) where.push_back(at);
                                });
       }},
      {"regex-match-parentheses-balanced",
       "!has(object.spec) || !has(object.spec.members) || size(object.spec.members) == 0 || "
       "variables.regexMatchPatterns.all(pattern, !pattern.contains('(') || "
       "(pattern.split('(').size() == pattern.split(')').size()))",
       [](const json& object, std::vector<std::string>& where) { balanced(object, where, '(', ')'); }},
      {"regex-match-brackets-balanced",
       "!has(object.spec) || !has(object.spec.members) || size(object.spec.members) == 0 || "
       "variables.regexMatchPatterns.all(pattern, !pattern.contains('[') || "
       "(pattern.split('[').size() == pattern.split(']').size()))",
       [](const json& object, std::vector<std::string>& where) { balanced(object, where, '[', ']'); }},
      {"regex-match-braces-balanced",
       "!has(object.spec) || !has(object.spec.members) || size(object.spec.members) == 0 || "
       "variables.regexMatchPatterns.all(pattern, !pattern.contains('{') || "
       "(pattern.split('{').size() == pattern.split('}').size()))",
       [](const json& object, std::vector<std::string>& where) { balanced(object, where, '{', '}'); }},
  };
  return checks;
}

// The policy's variables, which the checks above fold in; a changed definition changes their meaning.
const std::vector<std::pair<std::string, std::string>>& known_policy_variables() {
  static const std::vector<std::pair<std::string, std::string>> variables = {
      {"membersWithSelectorCounts",
       "has(object.spec) && has(object.spec.members) ? object.spec.members.map(member, "
       "(has(member.selector.exactMatch) ? 1 : 0) + (has(member.selector.regexMatch) ? 1 : 0) + "
       "(has(member.selector.labelMatch) ? 1 : 0)) : []"},
      {"exactMatchNames",
       "has(object.spec) && has(object.spec.members) ? object.spec.members.filter(member, "
       "has(member.selector.exactMatch)).map(member, member.selector.exactMatch.name) : []"},
      {"regexMatchPatterns",
       "has(object.spec) && has(object.spec.members) ? object.spec.members.filter(member, "
       "has(member.selector.regexMatch)).map(member, member.selector.regexMatch.pattern) : []"},
  };
  return variables;
}

}  // namespace

bool is_qualified_name(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) return is_qualified_part(text, 63);
  if (text.find('/', slash + 1) != std::string::npos) return false;
  return is_dns1123_subdomain_text(text.substr(0, slash)) && is_qualified_part(text.substr(slash + 1), 63);
}

bool is_label_value(const std::string& text) { return text.empty() || is_qualified_part(text, 63); }

std::expected<CrdSchema, std::string> load_crd_schema(const std::filesystem::path& path,
                                                      const std::string& version) {
  auto docs = load_documents(path);
  if (!docs) return std::unexpected(docs.error());
  const std::string file = path.filename().string();
  auto crd = find_document(*docs, "CustomResourceDefinition");
  if (!crd) return std::unexpected(file + ": no CustomResourceDefinition document");
  try {
    const YAML::Node spec = (*crd)["spec"];
    if (!spec.IsMap()) load_fail(file, "spec: missing");
    CrdSchema schema;
    schema.group_ = scalar<std::string>(spec["group"], file + ": spec.group");
    schema.kind_ = scalar<std::string>(spec["names"]["kind"], file + ": spec.names.kind");
    schema.namespaced_ = scalar<std::string>(spec["scope"], file + ": spec.scope") == "Namespaced";
    schema.version_ = version;
    const YAML::Node versions = spec["versions"];
    if (!versions.IsSequence()) load_fail(file, "spec.versions: expected a list");
    for (std::size_t i = 0; i < versions.size(); ++i) {
      if (!versions[i]["name"] || versions[i]["name"].Scalar() != version) continue;
      const YAML::Node s = versions[i]["schema"]["openAPIV3Schema"];
      const std::string where = file + ": spec.versions[" + std::to_string(i) + "].schema.openAPIV3Schema";
      if (!s) load_fail(where, "missing");
      schema.root_ = parse_schema(s, where, schema.cel_rules_);
      return schema;
    }
    return std::unexpected(file + ": spec.versions: no version named '" + version + "'");
  } catch (const LoadError& e) {
    return std::unexpected(e.message);
  }
}

std::vector<std::string> validate_against_crd(const CrdSchema& schema, const nlohmann::json& object) {
  std::vector<std::string> errors;
  if (!object.is_object()) return {"<root>: Invalid value: \"" + type_of(object) + "\": must be an object"};
  const std::string want_api = schema.group_ + "/" + schema.version_;
  if (!object.contains("apiVersion"))
    errors.push_back("apiVersion: Required value");
  else if (object["apiVersion"] != want_api) {
    errors.push_back("apiVersion: Invalid value: " + shown(object["apiVersion"]) + ": must be \"" + want_api +
                     "\"");
  }
  if (!object.contains("kind"))
    errors.push_back("kind: Required value");
  else if (object["kind"] != schema.kind_) {
    errors.push_back("kind: Invalid value: " + shown(object["kind"]) + ": must be \"" + schema.kind_ + "\"");
  }
  validate_object_meta(object, errors);
  // TypeMeta and ObjectMeta are the API server's own (checked above); metadata is not the schema's
  // empty `type: object`.
  json rest = object;
  rest.erase("metadata");
  rest.erase("apiVersion");
  rest.erase("kind");
  validate_value(*schema.root_, rest, "", errors);
  return errors;
}

std::expected<AdmissionPolicy, std::string> load_admission_policy(const std::filesystem::path& path) {
  auto docs = load_documents(path);
  if (!docs) return std::unexpected(docs.error());
  const std::string file = path.filename().string();
  auto doc = find_document(*docs, "ValidatingAdmissionPolicy");
  if (!doc) return std::unexpected(file + ": no ValidatingAdmissionPolicy document");
  try {
    AdmissionPolicy policy;
    policy.name_ = scalar<std::string>((*doc)["metadata"]["name"], file + ": metadata.name");
    const YAML::Node spec = (*doc)["spec"];
    if (spec["failurePolicy"] && spec["failurePolicy"].Scalar() != "Fail") {
      // The checks below report unevaluable members as failures, which is only right under Fail.
      load_fail(file + ": spec.failurePolicy", "only Fail is implemented");
    }
    if (const YAML::Node vars = spec["variables"]) {
      for (std::size_t i = 0; i < vars.size(); ++i) {
        const std::string at = file + ": spec.variables[" + std::to_string(i) + "]";
        const auto name = scalar<std::string>(vars[i]["name"], at + ".name");
        const auto expr = strip_spaces(scalar<std::string>(vars[i]["expression"], at + ".expression"));
        const auto& known = known_policy_variables();
        auto it = std::find_if(known.begin(), known.end(), [&](const auto& kv) { return kv.first == name; });
        if (it == known.end() || strip_spaces(it->second) != expr) {
          load_fail(at, "variable '" + name + "' is not the definition this validator implements");
        }
      }
    }
    const YAML::Node validations = spec["validations"];
    if (!validations.IsSequence()) load_fail(file + ": spec.validations", "expected a list");
    for (std::size_t i = 0; i < validations.size(); ++i) {
      const std::string at = file + ": spec.validations[" + std::to_string(i) + "]";
      const auto text = scalar<std::string>(validations[i]["expression"], at + ".expression");
      const auto wanted = strip_spaces(text);
      const auto& checks = known_policy_checks();
      auto it = std::find_if(checks.begin(), checks.end(),
                             [&](const PolicyCheck& c) { return strip_spaces(c.expression) == wanted; });
      if (it == checks.end()) load_fail(at, "expression not implemented by this validator: " + text);
      policy.rules_.push_back(it->id);
      policy.messages_.push_back(validations[i]["message"] ? validations[i]["message"].Scalar()
                                                           : std::string("failed expression: ") + text);
    }
    return policy;
  } catch (const LoadError& e) {
    return std::unexpected(e.message);
  }
}

std::vector<std::string> validate_against_policy(const AdmissionPolicy& policy,
                                                 const nlohmann::json& object) {
  std::vector<std::string> errors;
  const auto& checks = known_policy_checks();
  for (std::size_t i = 0; i < policy.rules_.size(); ++i) {
    auto it = std::find_if(checks.begin(), checks.end(),
                           [&](const PolicyCheck& c) { return c.id == policy.rules_[i]; });
    std::vector<std::string> where;
    it->check(object, where);
    for (const auto& w : where) errors.push_back(w + ": " + policy.messages_[i]);
  }
  return errors;
}

}  // namespace hypertopo::testing
