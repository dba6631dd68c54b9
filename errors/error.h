// errors/error.h: errors as values, with context.
//
// Every fallible operation in hypertopo returns `std::expected<T, Error>`. Each layer that passes an
// error up adds what it was doing, so the message an admin reads names the file, key or object at
// fault and the chain of work that led there.
//
//   std::expected<Tree, Error> load(const std::filesystem::path& p) {
//     auto text = read_file(p);
//     if (!text) return std::unexpected(text.error().context("while loading " + p.string()));
//     ...
//   }
//   // message(): "while loading fabric.out: line 12: expected a port line, found 'xyz'"
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace hypertopo {

enum class ErrorCode {
  kInvalidArgument,  // the caller's input (a flag, a config key) is wrong
  kParse,            // a file or response could not be parsed
  kNotFound,         // a file, object or device is missing
  kUnavailable,      // a dependency (simulator, server, library) cannot be reached; may pass
  kInvariant,        // a built result breaks a rule it must keep
  kConflict,         // an optimistic-concurrency or ownership conflict
  kPermission,       // authentication or authorization failed
  kInternal,
};

const char* to_string(ErrorCode code);

class Error {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns this error with "<what>: " put in front of the message.
  Error context(const std::string& what) const& { return Error(code_, what + ": " + message_); }
  Error context(const std::string& what) && {
    message_ = what + ": " + message_;
    return std::move(*this);
  }

 private:
  ErrorCode code_;
  std::string message_;
};

inline std::unexpected<Error> fail(ErrorCode code, std::string message) {
  return std::unexpected(Error(code, std::move(message)));
}

}  // namespace hypertopo
