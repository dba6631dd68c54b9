// net/header_credentials.h: credentials that go into an HTTP Authorization header, checked and built
// in one place for every client (the API server's bearer token, UFM's token and basic auth, NetQ's
// login token and NMX's basic auth).
//
// A token is sent as it is: a control character in it (a CR or LF would add a header of the token's
// choosing) is refused, as Go's net/http refuses such a header value
// (golang.org/x/net/http/httpguts ValidHeaderFieldValue) before client-go sends it. The message names
// where the token came from and the byte's position, never the token.
//
//   if (auto ok = check_header_token(token, "the bearer token file " + path); !ok) return ...;
//   request.headers.emplace_back("Authorization", basic_authorization(user, password));
#pragma once

#include <expected>
#include <string>
#include <string_view>

#include "errors/error.h"

namespace hypertopo::net {

// Fails (kInvalidArgument) when `token` holds a byte below 0x20 or 0x7f; `source` starts the message.
std::expected<void, Error> check_header_token(std::string_view token, const std::string& source);

// "Basic " + base64(user ":" password) (RFC 7617, padded base64 of RFC 4648).
std::string basic_authorization(std::string_view user, std::string_view password);

}  // namespace hypertopo::net
