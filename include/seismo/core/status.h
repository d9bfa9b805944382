// Status and Result<T>: the error-return types used everywhere in seismo.
//
// A Status is either OK or an error code with a human-readable message. A
// Result<T> holds a T or a non-OK Status, shaped like C++23 std::expected so it
// can be swapped for it later. Both are [[nodiscard]]: ignoring one is a bug.
// Exceptions are used only at start-up (config, siglists); a bad document is
// never an exception but a RejectReason (see reject.h).
//
// Threading: plain values, no shared state.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace seismo {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller passed something malformed (bad config, bad flag)
  kNotFound,            // a file, key or series does not exist
  kIoError,             // the OS refused a read, write, fsync or rename
  kCorrupt,             // stored data failed its checksum or format check
  kUnavailable,         // a peer (Kafka, HTTP receiver) did not answer
  kInternal,            // an invariant broke: a seismo bug
  kFailedPrecondition,  // the object can no longer do it (a fenced transactional producer)
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// The error half of a Result, so `return Unexpected(status)` reads like std::unexpected.
struct Unexpected {
  explicit Unexpected(Status s) : status(std::move(s)) {}
  Status status;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                // NOLINT(google-explicit-constructor)
  Result(Unexpected e) : v_(std::move(e.status)) {}        // NOLINT(google-explicit-constructor)
  Result(Status s) : v_(std::move(s)) {}                   // NOLINT(google-explicit-constructor); s must not be OK

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // Precondition: !has_value().
  const Status& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace seismo
