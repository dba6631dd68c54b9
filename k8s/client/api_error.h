// k8s/client/api_error.h: what went wrong talking to the API server.
//
// Carries the HTTP status and the Status object's reason and message as the server wrote them, plus
// a hypertopo::Error whose code follows the status (404 kNotFound, 409 kConflict, 401/403
// kPermission, 429/5xx/410/timeouts/cut connections kUnavailable, 400/422 kInvalidArgument, a body
// that is not JSON kParse) and whose message says which request failed.
//
//   auto node = client.get(kNodes, "", "gpu-7");
//   if (!node && node.error().not_found()) { ... }
//   if (!node) return std::unexpected(node.error().error.context("while reading gpu-7"));
#pragma once

#include <chrono>
#include <expected>
#include <string>

#include "errors/error.h"

namespace hypertopo::k8s {

struct ApiError {
  Error error;
  int http_status = 0;  // 0 when no HTTP answer came (connect failure, timeout, cut stream)
  std::string reason;   // Status.reason: NotFound, AlreadyExists, Conflict, Expired, Unauthorized...
  std::string message;  // Status.message
  std::chrono::seconds retry_after{0};  // the Retry-After header, when the server sent one

  ErrorCode code() const { return error.code(); }
  bool not_found() const { return http_status == 404; }
  bool already_exists() const { return http_status == 409 && reason == "AlreadyExists"; }
  // A stale resourceVersion or a failed precondition: refetch and try again.
  bool conflict() const { return http_status == 409 && reason != "AlreadyExists"; }
  // The resourceVersion (watch) or continue token (list) is too old: list again from scratch.
  bool gone() const { return http_status == 410; }
  // The caller's stop token fired before the request (or its next attempt) went out: nothing was sent
  // since (a leader that lost its Lease must not write).
  bool cancelled() const { return http_status == 0 && reason == "Cancelled"; }
};

template <typename T>
using ApiResult = std::expected<T, ApiError>;

// The ErrorCode an HTTP status maps to.
ErrorCode error_code_for_status(int http_status);

// Builds the error for a non-2xx answer. `body` is parsed as a Status object when it is one.
ApiError api_error_from_response(const std::string& what, int http_status, const std::string& body,
                                 std::chrono::seconds retry_after = std::chrono::seconds(0));

}  // namespace hypertopo::k8s
