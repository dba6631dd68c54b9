#include "errors/error.h"

namespace hypertopo {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kParse:
      return "parse error";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInvariant:
      return "invariant violated";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kPermission:
      return "permission denied";
    case ErrorCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

}  // namespace hypertopo
