// div and floor_divide: the paths the conformance cases cannot reach (torch
// itself crashes on int64 MIN // -1) and the error messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kI32 = ScalarType::kInt;
constexpr ScalarType kI64 = ScalarType::kLong;
constexpr ScalarType kF32 = ScalarType::kFloat;

Status div_mode(TestTensor& self, TestTensor& other, const EValue& mode, TestTensor& out) {
  KernelArgs args{self.evalue(), other.evalue(), mode, out.evalue(), EValue()};
  return run_kernel(&div_out_mode, "aten::div.out_mode", args);
}

Status div_scalar_mode(TestTensor& self, const EValue& other, const EValue& mode,
                       TestTensor& out) {
  KernelArgs args{self.evalue(), other, mode, out.evalue(), EValue()};
  return run_kernel(&div_scalar_mode_out, "aten::div.Scalar_mode_out", args);
}

TEST(OpDivTest, TrueDivisionOfIntegersIsFloat32MatchesTorch) {
  TestTensor a(kI32, {3}, {1, 0, -7});
  TestTensor b(kI32, {3}, {0, 0, 2});
  TestTensor out(kF32, {3});
  KernelArgs args{a.evalue(), b.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&div_out, "aten::div.out", args).ok());
  EXPECT_EQ(out.get(0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(out.get(1)));
  EXPECT_EQ(out.get(2), -3.5);
}

TEST(OpDivTest, TrueDivisionIntoIntOutFails) {
  TestTensor a(kI32, {1}, {1});
  TestTensor out(kI32, {1});
  KernelArgs args{a.evalue(), a.evalue(), out.evalue(), EValue()};
  const Status status = run_kernel(&div_out, "aten::div.out", args);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "aten::div.out"));
  EXPECT_THAT(status.message(), HasSubstr("'out'"));
}

TEST(OpDivTest, RoundingModesOnIntegersMatchTorch) {
  TestTensor a(kI64, {4}, {-7, 7, 7, -7});
  TestTensor b(kI64, {4}, {2, -2, 2, -2});
  TestTensor out(kI64, {4});
  ASSERT_TRUE(div_mode(a, b, EValue("trunc"), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(-3, -3, 3, 3));
  ASSERT_TRUE(div_mode(a, b, EValue("floor"), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(-4, -4, 3, 3));
}

TEST(OpDivTest, NoneRoundingModeIsTrueDivision) {
  TestTensor a(kI32, {1}, {1});
  TestTensor b(kI32, {1}, {2});
  TestTensor out(kF32, {1});
  ASSERT_TRUE(div_mode(a, b, EValue(), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0.5));
}

TEST(OpDivTest, IntegerDivisionByZeroIsAnErrorNamingOther) {
  for (const char* mode : {"trunc", "floor"}) {
    TestTensor a(kI32, {3}, {1, 2, 3});
    TestTensor b(kI32, {3}, {1, 0, 1});
    TestTensor out(kI32, {3});
    const Status status = div_mode(a, b, EValue(mode), out);
    EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "aten::div.out_mode")) << mode;
    EXPECT_THAT(status.message(), HasSubstr("division by zero"));
    EXPECT_THAT(status.message(), HasSubstr("'other'"));
  }
}

TEST(OpDivTest, ZeroDivisorAfterConversionToTheCommonDtypeIsAnError) {
  // A 0-d int64 256 does not widen int8: it converts to int8 0.
  TestTensor a(ScalarType::kChar, {2}, {1, 2});
  TestTensor b(kI64, {}, {256});
  TestTensor out(ScalarType::kChar, {2});
  EXPECT_THAT(div_mode(a, b, EValue("trunc"), out),
              ErrorIs(Error::kInvalidArgument,
                      "integer division by zero: argument 'other' has a zero"));
}

TEST(OpDivTest, ZeroDivisorWithEmptyResultIsFine) {
  TestTensor a(kI32, {0});
  TestTensor b(kI32, {1}, {0});
  TestTensor out(kI32, {0});
  EXPECT_TRUE(div_mode(a, b, EValue("floor"), out).ok());
}

TEST(OpDivTest, ScalarZeroDivisorIsAnError) {
  TestTensor a(kI32, {2}, {1, 2});
  TestTensor out(kI32, {2});
  const Status status = div_scalar_mode(a, EValue(int64_t{0}), EValue("floor"), out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "aten::div.Scalar_mode_out"));
  EXPECT_THAT(status.message(), HasSubstr("'other'"));
}

TEST(OpDivTest, FloatDivisionByZeroIsIeee) {
  TestTensor a(kF32, {3}, {5, -5, 0});
  TestTensor b(kF32, {3}, {0, 0, 0});
  TestTensor out(kF32, {3});
  ASSERT_TRUE(div_mode(a, b, EValue("floor"), out).ok());
  EXPECT_EQ(out.get(0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(out.get(1), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(out.get(2)));
}

TEST(OpDivTest, MinDividedByMinusOneWrapsInsteadOfTrapping) {
  // torch crashes with SIGFPE for int64; int8 gives -128 (wrapped).
  const double kMin64 = -9223372036854775808.0;
  for (const char* mode : {"trunc", "floor"}) {
    TestTensor a(kI64, {2}, {kMin64, 6});
    TestTensor b(kI64, {2}, {-1, -1});
    TestTensor out(kI64, {2});
    ASSERT_TRUE(div_mode(a, b, EValue(mode), out).ok()) << mode;
    EXPECT_THAT(out.values(), ElementsAre(kMin64, -6)) << mode;

    TestTensor c(kI32, {1}, {-2147483648.0});
    TestTensor d(kI32, {1}, {-1});
    TestTensor out32(kI32, {1});
    ASSERT_TRUE(div_mode(c, d, EValue(mode), out32).ok()) << mode;
    EXPECT_THAT(out32.values(), ElementsAre(-2147483648.0)) << mode;
  }
}

TEST(OpDivTest, UnknownRoundingModeFails) {
  TestTensor a(kF32, {1}, {1});
  TestTensor out(kF32, {1});
  const Status status = div_mode(a, a, EValue("round"), out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "'rounding_mode'"));
  EXPECT_THAT(status.message(), HasSubstr("'round'"));
}

TEST(OpDivTest, RoundedDivisionOfBoolFails) {
  TestTensor a(ScalarType::kBool, {1}, {1});
  TestTensor out(ScalarType::kBool, {1});
  const Status status = div_mode(a, a, EValue("trunc"), out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "'self'"));
  EXPECT_THAT(status.message(), HasSubstr("bool"));
}

TEST(OpDivTest, ScalarOverloadsNeedTheExactOutDtype) {
  TestTensor a(kI32, {1}, {3});
  TestTensor out(ScalarType::kDouble, {1});
  KernelArgs args{a.evalue(), EValue(int64_t{2}), out.evalue(), EValue()};
  const Status status = run_kernel(&div_scalar_out, "aten::div.Scalar_out", args);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "expected the result dtype float32"));
}

TEST(OpFloorDivideTest, IntegersRoundDownAndZeroFails) {
  TestTensor a(kI32, {2}, {-7, 7});
  TestTensor b(kI32, {2}, {2, 2});
  TestTensor out(kI32, {2});
  KernelArgs args{a.evalue(), b.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&floor_divide_out, "aten::floor_divide.out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(-4, 3));

  TestTensor zero(kI32, {1}, {0});
  KernelArgs zero_args{a.evalue(), zero.evalue(), out.evalue(), EValue()};
  const Status status = run_kernel(&floor_divide_out, "aten::floor_divide.out", zero_args);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "aten::floor_divide.out"));
}

}  // namespace
}  // namespace torchlight::portable
