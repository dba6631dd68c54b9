#include "k8s/client/api_error.h"

#include <nlohmann/json.hpp>

namespace hypertopo::k8s {

ErrorCode error_code_for_status(int http_status) {
  switch (http_status) {
    case 400:
    case 422:
      return ErrorCode::kInvalidArgument;
    case 401:
    case 403:
      return ErrorCode::kPermission;
    case 404:
      return ErrorCode::kNotFound;
    case 409:
      return ErrorCode::kConflict;
    case 410:
    case 429:
      return ErrorCode::kUnavailable;
    default:
      break;
  }
  if (http_status >= 500 || http_status == 0) return ErrorCode::kUnavailable;
  if (http_status >= 400) return ErrorCode::kInvalidArgument;
  return ErrorCode::kInternal;
}

ApiError api_error_from_response(const std::string& what, int http_status, const std::string& body,
                                 std::chrono::seconds retry_after) {
  std::string reason;
  std::string message;
  auto status = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (status.is_object() && status.value("kind", "") == "Status") {
    if (status.contains("reason") && status["reason"].is_string()) reason = status["reason"];
    if (status.contains("message") && status["message"].is_string()) message = status["message"];
  } else {
    message = body.substr(0, 200);
  }
  std::string text = what + ": HTTP " + std::to_string(http_status);
  if (!reason.empty()) text += " " + reason;
  if (!message.empty()) text += ": " + message;
  return ApiError{Error(error_code_for_status(http_status), text), http_status, reason, message, retry_after};
}

}  // namespace hypertopo::k8s
