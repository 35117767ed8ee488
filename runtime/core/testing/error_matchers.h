// ErrorIs(code, substring): a gtest matcher for Status, Result<T> and Error
// that checks the error code and, when `substring` is given, that the
// message contains it. A failure prints the whole message, so a test that
// gets the wrong error shows why instead of two enum values.
//
//   EXPECT_THAT(program.load_method("nope"), ErrorIs(Error::kNotFound, "nope"));
//
// Also gives gtest a readable PrintTo for Status and Result<T>.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include <gmock/gmock.h>

#include "runtime/core/error.h"
#include "runtime/core/result.h"
#include "runtime/core/status.h"

namespace torchlight {

inline void PrintTo(const Status& status, std::ostream* os) {
  *os << to_string(status.code());
  if (!status.ok()) *os << " \"" << status.message() << "\"";
}

template <typename T>
void PrintTo(const Result<T>& result, std::ostream* os) {
  if (result.ok()) {
    *os << "Ok (a value)";
  } else {
    PrintTo(result.status(), os);
  }
}

namespace testing {

class ErrorIsMatcher {
 public:
  ErrorIsMatcher(Error code, std::string substring)
      : code_(code), substring_(std::move(substring)) {}

  bool MatchAndExplain(const Status& status, ::testing::MatchResultListener* listener) const {
    return match(status.code(), status.message(), listener);
  }
  template <typename T>
  bool MatchAndExplain(const Result<T>& result, ::testing::MatchResultListener* listener) const {
    return match(result.error(), result.status().message(), listener);
  }
  bool MatchAndExplain(Error code, ::testing::MatchResultListener* listener) const {
    return match(code, to_string(code), listener);
  }

  void DescribeTo(std::ostream* os) const {
    *os << "is error " << to_string(code_);
    if (!substring_.empty()) *os << " with a message containing \"" << substring_ << "\"";
  }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "is not error " << to_string(code_);
    if (!substring_.empty()) *os << " with a message containing \"" << substring_ << "\"";
  }

 private:
  bool match(Error code, std::string_view message,
             ::testing::MatchResultListener* listener) const {
    *listener << "which is " << to_string(code) << ": \"" << message << "\"";
    return code == code_ && message.find(substring_) != std::string_view::npos;
  }

  Error code_;
  std::string substring_;
};

/// Matches a Status, Result<T> or Error with code `code` whose message
/// contains `substring` (any message when empty).
inline ::testing::PolymorphicMatcher<ErrorIsMatcher> ErrorIs(Error code,
                                                             std::string substring = "") {
  return ::testing::MakePolymorphicMatcher(ErrorIsMatcher(code, std::move(substring)));
}

}  // namespace testing
}  // namespace torchlight
