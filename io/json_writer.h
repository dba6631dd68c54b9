// io/json_writer.h: JSON text out, whatever bytes its strings hold.
//
// Names and values reach our JSON from places that do not promise UTF-8: a node name in a file, a
// label value in a Latin-1 config, a switch description. nlohmann's plain dump() throws
// type_error.316 on such a string, which would end `-o json` (or a request body, or an error
// message) after the same data printed fine as YAML. Every writer goes through json_text, which
// replaces each invalid byte with U+FFFD, as text::valid_utf8 does for the data we read ourselves.
//
//   std::cout << io::json_text(report, 2) << "\n";   // {"node": "dgx-01 \uFFFD"}
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace hypertopo::io {

// `value` serialised; indent < 0: one line (dump()'s default), otherwise pretty with that indent.
inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace hypertopo::io
