// ErrorIs: what it accepts, what it rejects, and that a failure shows the
// message.
#include "runtime/core/testing/error_matchers.h"

#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchlight {
namespace {

using ::testing::Not;
using ::torchlight::testing::ErrorIs;

Result<int> missing_method() {
  return Status::error(Error::kNotFound, "the program has no method 'fwd' (it has forward)");
}

// What gtest would print after "Actual: <value>, " for a mismatch.
template <typename T, typename M>
std::string explanation(const T& value, const M& matcher) {
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(::testing::ExplainMatchResult(matcher, value, &listener));
  return listener.str();
}

TEST(ErrorIsTest, MatchesCodeAndSubstring) {
  EXPECT_THAT(missing_method(), ErrorIs(Error::kNotFound));
  EXPECT_THAT(missing_method(), ErrorIs(Error::kNotFound, "no method 'fwd'"));
  EXPECT_THAT(missing_method(), Not(ErrorIs(Error::kInvalidProgram)));
  EXPECT_THAT(missing_method(), Not(ErrorIs(Error::kNotFound, "no method 'forward'")));

  const Status status = Status::error(Error::kInvalidArgument, "index %d is out of range", 4);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "index 4"));
  EXPECT_THAT(status, Not(ErrorIs(Error::kInvalidType, "index 4")));
  EXPECT_THAT(Error::kOutOfResources, ErrorIs(Error::kOutOfResources, "OutOfResources"));
}

TEST(ErrorIsTest, CodeOnlyStatusMatchesItsCodeName) {
  const Status bare = Error::kOperatorMissing;
  EXPECT_THAT(bare, ErrorIs(Error::kOperatorMissing, "OperatorMissing"));
  EXPECT_THAT(Status(), ErrorIs(Error::kOk));
  EXPECT_THAT(Status(), Not(ErrorIs(Error::kInternal)));
}

TEST(ErrorIsTest, ValueIsNotAnError) {
  Result<int> value = 3;
  EXPECT_THAT(value, Not(ErrorIs(Error::kNotFound)));
  EXPECT_THAT(value, ErrorIs(Error::kOk));
  Result<std::unique_ptr<int>> move_only = std::make_unique<int>(1);
  EXPECT_THAT(move_only, Not(ErrorIs(Error::kInternal)));
}

TEST(ErrorIsTest, FailureExplainsWithTheMessage) {
  EXPECT_EQ(explanation(missing_method(), ErrorIs(Error::kInvalidProgram)),
            "which is NotFound: \"the program has no method 'fwd' (it has forward)\"");
  const Status status = Status::error(Error::kInvalidType, "input 0: expected Float, got Int");
  EXPECT_EQ(explanation(status, ErrorIs(Error::kInvalidType, "Long")),
            "which is InvalidType: \"input 0: expected Float, got Int\"");
}

TEST(ErrorIsTest, DescribesCodeAndSubstring) {
  EXPECT_EQ(::testing::DescribeMatcher<Status>(ErrorIs(Error::kNotFound, "fwd")),
            "is error NotFound with a message containing \"fwd\"");
  EXPECT_EQ(::testing::DescribeMatcher<Status>(ErrorIs(Error::kNotFound), /*negation=*/true),
            "is not error NotFound");
}

TEST(ErrorIsTest, PrintsStatusAndResultReadably) {
  EXPECT_EQ(::testing::PrintToString(Status::error(Error::kAccessFailed, "read failed")),
            "AccessFailed \"read failed\"");
  EXPECT_EQ(::testing::PrintToString(Status()), "Ok");
  EXPECT_EQ(::testing::PrintToString(missing_method()),
            "NotFound \"the program has no method 'fwd' (it has forward)\"");
  EXPECT_EQ(::testing::PrintToString(Result<int>(1)), "Ok (a value)");
}

}  // namespace
}  // namespace torchlight
