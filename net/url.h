// net/url.h: the one reader of http(s) URLs, for the API server, UFM and anything else we call.
//
// A URL names a scheme (https, or http where the caller allows clear text), a host (a name, an IPv4
// address, or an IPv6 address in brackets), an optional port (the scheme's default otherwise) and an
// optional path prefix that requests go under. Credentials in a URL are refused: they would end up
// in logs, shell history and process lists; every message quotes the URL with its password redacted.
//
//   auto url = parse_http_url("https://ufm.example:8443/ufmRest/", {.what = "UFM URL"});
//   url->host == "ufm.example"; url->port == "8443"; url->path == "/ufmRest";
//   url->server() == "https://ufm.example:8443"
#pragma once

#include <expected>
#include <string>
#include <string_view>

#include "errors/error.h"

namespace hypertopo::net {

struct HttpUrl {
  bool tls = true;
  std::string host;  // IPv6 without brackets
  std::string port;  // "443" or "80" when the URL gives none
  std::string path;  // "" or "/prefix", without a trailing slash
  // "https://host:port" (an IPv6 host in brackets): what messages name, never credentials.
  std::string server() const;
  std::string origin() const { return server() + path; }
};

struct UrlReading {
  std::string_view what = "URL";      // names the URL in messages: "UFM URL", "the server URL"
  std::string_view scheme_hint;       // appended to the scheme error: ": expected ufm:https://HOST"
  std::string_view credentials_hint;  // appended to the credentials error: "; put them in ..."
};

std::expected<HttpUrl, Error> parse_http_url(std::string_view url, const UrlReading& reading = {});

// "https://user:pw@host" -> "https://user:REDACTED@host", for every URL in `text`: a password
// somebody wrote into a URL must not reach an error or a log line.
std::string redact_url_password(std::string_view text);

}  // namespace hypertopo::net
