#include "text/terminal_safe.h"

#include <cstdio>

namespace hypertopo::text {

namespace {

void spell(std::string& out, const char* format, unsigned value) {
  char buf[8];
  std::snprintf(buf, sizeof buf, format, value);
  out += buf;
}

}  // namespace

std::string terminal_safe(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto c = static_cast<unsigned char>(in[i]);
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      spell(out, "\\x%02x", c);
    } else if (c == 0xc2 && i + 1 < in.size() && static_cast<unsigned char>(in[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(in[i + 1]) <= 0x9f) {
      // A C1 control in UTF-8 (U+009B is CSI to a terminal that takes 8-bit controls).
      spell(out, "\\u%04x", static_cast<unsigned char>(in[++i]));
    } else if (c >= 0x80 && c <= 0x9f && (i == 0 || static_cast<unsigned char>(in[i - 1]) < 0x80)) {
      // The same control as a lone byte (not the continuation of a UTF-8 sequence).
      spell(out, "\\x%02x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace hypertopo::text
