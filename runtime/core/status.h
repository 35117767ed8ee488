// Status: an error code plus a full sentence saying what failed.
//
// The message lives in a fixed inline buffer, so building and returning a
// Status never touches the heap, and Release builds keep the facts (which
// file, value, operator; expected vs actual) that a bare code would lose.
//
// Builds for the smallest devices may define TORCHLIGHT_NO_ERROR_MESSAGES=1
// (CMake: -DTORCHLIGHT_ERROR_MESSAGES=OFF): error() and with_context() then
// keep only the code, and the format strings and printf code drop out of the
// binary (bench/core_size.sh measures both).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"

namespace torchlight {

class [[nodiscard]] Status {
 public:
  /// Longest message kept, including the terminating NUL; longer is cut.
  static constexpr size_t kMaxMessage = 384;

  /// Success.
  Status() : code_(Error::kOk) { message_[0] = '\0'; }
  /// A code with no message beyond its name. Implicit so `return Error::kOk`
  /// and `return Error::kX` read naturally.
  Status(Error code) : code_(code) { message_[0] = '\0'; }  // NOLINT

#if TORCHLIGHT_NO_ERROR_MESSAGES
  template <typename... Args>
  static Status error(Error code, const char* /*format*/, const Args&... /*args*/) {
    return Status(code);
  }
#else
  /// A code plus a printf-style message.
  static Status error(Error code, const char* format, ...)
      __attribute__((format(printf, 2, 3)));
#endif

  bool ok() const { return code_ == Error::kOk; }
  Error code() const { return code_; }

  /// The message; the code's name when none was given. Never null.
  const char* message() const;

  /// Puts context in front of the message: "loading 'forward': <message>".
  /// When the result does not fit, the contexts are cut in the middle
  /// ("outer...inner: ") and the root cause (the message given to `error`)
  /// is always kept whole: it is the part that says what actually failed.
  /// Returns *this so callers can write `return s.with_context(...)`.
#if TORCHLIGHT_NO_ERROR_MESSAGES
  template <typename... Args>
  Status& with_context(const char* /*format*/, const Args&... /*args*/) {
    return *this;
  }
#else
  Status& with_context(const char* format, ...)
      __attribute__((format(printf, 2, 3)));
#endif

 private:
  Error code_;
  // Length of the root cause, the tail of message_ that contexts never cut;
  // 0 while message_ is empty (the root cause is then the code's name).
  uint16_t root_length_ = 0;
  char message_[kMaxMessage];
};

/// Compare with a bare code, as code written for upstream's `Error`-returning
/// calls does: `if (module.load() != Error::Ok)`.
inline bool operator==(const Status& status, Error code) { return status.code() == code; }
inline bool operator!=(const Status& status, Error code) { return status.code() != code; }
inline bool operator==(Error code, const Status& status) { return status.code() == code; }
inline bool operator!=(Error code, const Status& status) { return status.code() != code; }

}  // namespace torchlight
