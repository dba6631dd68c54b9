#include "net/header_credentials.h"

namespace hypertopo::net {

std::expected<void, Error> check_header_token(std::string_view token, const std::string& source) {
  for (std::size_t i = 0; i < token.size(); ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c < 0x20 || c == 0x7f) {
      return fail(ErrorCode::kInvalidArgument, source + ": the token holds a control character (byte " +
                                                   std::to_string(c) + " at offset " + std::to_string(i) +
                                                   "); it would be sent as an HTTP header");
    }
  }
  return {};
}

std::string basic_authorization(std::string_view user, std::string_view password) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::string in = std::string(user) + ":" + std::string(password);
  std::string out = "Basic ";
  unsigned bits = 0;
  int count = 0;
  for (unsigned char c : in) {
    bits = (bits << 8) | c;
    count += 8;
    while (count >= 6) {
      count -= 6;
      out += kAlphabet[(bits >> count) & 63];
    }
  }
  if (count > 0) out += kAlphabet[(bits << (6 - count)) & 63];
  while ((out.size() - 6) % 4) out += '=';
  return out;
}

}  // namespace hypertopo::net
