#include "topology/label_rules.h"

#include <algorithm>

#include "topology/tree.h"

namespace hypertopo::topology {
namespace {

bool label_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.';
}
bool alphanumeric(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// The part of a key after the prefix, and every value: the same character rules.
std::optional<std::string> label_name_error(std::string_view text, bool may_be_empty) {
  if (text.empty()) return may_be_empty ? std::nullopt : std::optional<std::string>("must not be empty");
  if (text.size() > 63) return "must be at most 63 characters";
  if (!std::all_of(text.begin(), text.end(), label_name_char))
    return "may hold only letters, digits, '-', '_' and '.'";
  if (!alphanumeric(text.front()) || !alphanumeric(text.back()))
    return "must start and end with a letter or digit";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> label_value_error(std::string_view text) {
  auto why = label_name_error(text, true);
  if (why) return "'" + std::string(text) + "' is not a Kubernetes label value: it " + *why;
  return std::nullopt;
}

std::optional<std::string> label_key_error(std::string_view text) {
  std::string_view name = text;
  if (auto slash = text.find('/'); slash != std::string_view::npos) {
    std::string_view prefix = text.substr(0, slash);
    name = text.substr(slash + 1);
    if (!is_dns1123_subdomain(prefix)) {
      return "'" + std::string(text) + "' is not a Kubernetes label key: its prefix '" + std::string(prefix) +
             "' is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.')";
    }
  }
  if (auto why = label_name_error(name, false)) {
    return "'" + std::string(text) + "' is not a Kubernetes label key: its name " + *why;
  }
  return std::nullopt;
}

}  // namespace hypertopo::topology
