#include "kernels/portable/util/kernel_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::KernelArgs;
using kernel_test::TestTensor;
using ::testing::HasSubstr;

constexpr ArgSpec kSpecs[] = {
    {"self", ArgType::kTensor},
    {"weight", ArgType::kOptionalTensor},
    {"alpha", ArgType::kScalar},
    {"dims", ArgType::kOptionalIntList},
    {"out", ArgType::kReturn},
};

TEST(KernelArgsTest, AcceptsMatchingArguments) {
  TestTensor t(ScalarType::kFloat, {2});
  int64_t dim_values[] = {0};
  EValue dim0(dim_values[0]);
  EValue* dim_items[] = {&dim0};
  int64_t scratch[1];
  KernelArgs args{t.evalue(), EValue(), EValue(2.5),
                  EValue(BoxedList<int64_t>(dim_items, scratch, 1)), EValue()};
  EXPECT_TRUE(check_args(args.span(), kSpecs).ok());
  args[1] = t.evalue();
  args[2] = EValue(true);
  args[3] = EValue();
  EXPECT_TRUE(check_args(args.span(), kSpecs).ok());
  args[1] = EValue(Tensor());  // An undefined tensor is None for an optional.
  EXPECT_TRUE(check_args(args.span(), kSpecs).ok());
}

TEST(KernelArgsTest, CountMismatchListsTheSchema) {
  TestTensor t(ScalarType::kFloat, {2});
  KernelArgs args{t.evalue(), EValue()};
  Status s = check_args(args.span(), kSpecs);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "expected 5 arguments (self, weight, alpha, dims, out), got 2"));
  EXPECT_STREQ(s.message(), "expected 5 arguments (self, weight, alpha, dims, out), got 2");
}

TEST(KernelArgsTest, TagMismatchNamesArgumentAndTypes) {
  TestTensor t(ScalarType::kFloat, {2});
  KernelArgs args{t.evalue(), EValue(), t.evalue(), EValue(), EValue()};
  Status s = check_args(args.span(), kSpecs);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "argument 'alpha' must be a Scalar, got Tensor"));
  EXPECT_STREQ(s.message(), "argument 'alpha' must be a Scalar, got Tensor");

  KernelArgs args2{t.evalue(), EValue(int64_t{1}), EValue(1.0), EValue(), EValue()};
  EXPECT_STREQ(check_args(args2.span(), kSpecs).message(),
               "argument 'weight' must be a Tensor?, got Int");
}

TEST(KernelArgsTest, NullAndUndefinedTensorFail) {
  TestTensor t(ScalarType::kFloat, {2});
  KernelArgs args{t.evalue(), EValue(), EValue(1.0), EValue(), EValue()};
  args.set_null(4);
  Status s = check_args(args.span(), kSpecs);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "argument 4 ('out') is missing"));

  KernelArgs undefined{EValue(Tensor()), EValue(), EValue(1.0), EValue(), EValue()};
  EXPECT_STREQ(check_args(undefined.span(), kSpecs).message(),
               "argument 'self' is an undefined tensor");
}

TEST(KernelArgsTest, MatchesEachType) {
  EXPECT_TRUE(matches(EValue(int64_t{1}), ArgType::kScalar));
  EXPECT_TRUE(matches(EValue(), ArgType::kOptionalScalar));
  EXPECT_FALSE(matches(EValue(), ArgType::kScalar));
  EXPECT_TRUE(matches(EValue(int64_t{1}), ArgType::kInt));
  EXPECT_FALSE(matches(EValue(1.0), ArgType::kInt));
  EXPECT_TRUE(matches(EValue(), ArgType::kOptionalInt));
  EXPECT_TRUE(matches(EValue(1.0), ArgType::kDouble));
  EXPECT_TRUE(matches(EValue(false), ArgType::kBool));
  EXPECT_TRUE(matches(EValue(std::string_view("mean")), ArgType::kString));
  EXPECT_TRUE(matches(EValue(), ArgType::kOptionalIntList));
  EXPECT_FALSE(matches(EValue(), ArgType::kIntList));
  EXPECT_TRUE(matches(EValue(1.0), ArgType::kReturn));
  EXPECT_STREQ(to_string(ArgType::kOptionalTensorList), "Tensor?[]");
}

TEST(KernelArgsTest, SetReturnWritesTheSlot) {
  TestTensor t(ScalarType::kFloat, {2});
  KernelArgs args{t.evalue(), EValue()};
  set_return(args.span(), 1, *args.span()[0]);
  ASSERT_TRUE(args[1].is_tensor());
  EXPECT_EQ(args[1].to_tensor().impl(), &t.impl());
  // Aliased slots (out and return are one value) stay intact.
  args.alias(1, 0);
  set_return(args.span(), 1, *args.span()[0]);
  EXPECT_EQ(args[0].to_tensor().impl(), &t.impl());
}

}  // namespace
}  // namespace torchlight::portable
