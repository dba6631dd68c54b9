// topology/label_rules.h: Kubernetes' rules for label keys and values, checked where we read them.
//
// Every object we write carries labels built from what admins configure (the source value, the
// node-label key prefix). The API server would refuse each object with a bad one, one by one, long
// after the config was accepted: these checks refuse the config instead, naming what is wrong.
//
//   if (auto why = label_value_error(source)) return fail(kInvalidArgument, file + ": source: " + *why);
//   if (auto why = label_key_error(prefix + "1")) ...   // "hypertopo.io/tier-" + tier number
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hypertopo::topology {

// k8s.io/apimachinery/pkg/util/validation's IsValidLabelValue and IsQualifiedName: nullopt when
// `text` is valid, else why not. A value is empty or at most 63 of [A-Za-z0-9._-], starting and
// ending alphanumeric; a key is such a name of 1 to 63 characters, optionally after a DNS-1123
// subdomain and '/'.
std::optional<std::string> label_value_error(std::string_view text);
std::optional<std::string> label_key_error(std::string_view text);

}  // namespace hypertopo::topology
