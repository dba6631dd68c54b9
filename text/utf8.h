// text/utf8.h: text from hardware and files made valid UTF-8 before JSON carries it.
//
// A node description is whatever bytes an admin or firmware put there, and a config file may be in
// Latin-1. JSON (and so every Kubernetes object, and `-o json`) must be UTF-8: nlohmann's dump()
// throws on anything else. Invalid sequences become U+FFFD, as nlohmann's error_handler_t::replace
// and Go's strings.ToValidUTF8 do, so the rest of the text survives.
//
//   report.node_description = text::valid_utf8(raw);   // "dgx-01 \xff" -> "dgx-01 \uFFFD"
#pragma once

#include <string>
#include <string_view>

namespace hypertopo::text {

// `in` unchanged when it is valid UTF-8; otherwise each invalid byte replaced by U+FFFD.
std::string valid_utf8(std::string_view in);

}  // namespace hypertopo::text
