#include "net/url.h"

#include <algorithm>
#include <charconv>

namespace hypertopo::net {

std::string HttpUrl::server() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return std::string(tls ? "https://" : "http://") + (ipv6 ? "[" + host + "]" : host) + ":" + port;
}

std::expected<HttpUrl, Error> parse_http_url(std::string_view raw, const UrlReading& reading) {
  HttpUrl out;
  const std::string quoted = std::string(reading.what) + " '" + redact_url_password(raw) + "'";
  auto bad = [&](const std::string& what) { return fail(ErrorCode::kInvalidArgument, quoted + what); };
  std::string_view rest = raw;
  if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    out.tls = false;
    rest.remove_prefix(7);
  } else {
    return bad(" must start with https:// or http://" + std::string(reading.scheme_hint));
  }
  const auto end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  if (end != std::string_view::npos && rest[end] == '/') {
    std::string_view path = rest.substr(end);
    path = path.substr(0, path.find_first_of("?#"));
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    out.path = std::string(path);
  }
  if (authority.find('@') != std::string_view::npos)
    return bad(" must not carry credentials" + std::string(reading.credentials_hint));
  std::string_view port;
  if (authority.starts_with("[")) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return bad(": unclosed '[' in the host");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (after.starts_with(":")) {
      port = after.substr(1);
    } else if (!after.empty()) {
      return bad(": '" + std::string(after) + "' after the IPv6 address; expected :PORT");
    }
  } else {
    const auto colon = authority.find(':');
    if (colon != std::string_view::npos && authority.find(':', colon + 1) != std::string_view::npos)
      return bad(": an IPv6 address needs brackets, as in https://[fd00::1]:443");
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (out.host.empty()) return bad(" has no host");
  out.port = port.empty() ? (out.tls ? "443" : "80") : std::string(port);
  unsigned value = 0;
  const auto [ptr, ec] = std::from_chars(out.port.data(), out.port.data() + out.port.size(), value);
  if (ec != std::errc{} || ptr != out.port.data() + out.port.size() || value == 0 || value > 65535)
    return bad(": '" + out.port + "' is not a port number");
  return out;
}

std::string redact_url_password(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (;;) {
    const auto scheme = text.find("://");
    if (scheme == std::string_view::npos) break;
    const std::size_t authority = scheme + 3;
    const std::size_t end = std::min(text.find_first_of("/?#", authority), text.size());
    const std::size_t at = text.substr(0, end).rfind('@');
    const std::size_t colon = text.substr(0, end).find(':', authority);
    out.append(text.substr(0, authority));
    if (at != std::string_view::npos && at >= authority && colon != std::string_view::npos && colon < at) {
      out.append(text.substr(authority, colon + 1 - authority)).append("REDACTED");
      text.remove_prefix(at);
    } else {
      text.remove_prefix(authority);
    }
  }
  out.append(text);
  return out;
}

}  // namespace hypertopo::net
