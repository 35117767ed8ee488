// remainder and fmod: sign rules, integer zero divisors, MIN % -1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

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

constexpr ScalarType kI64 = ScalarType::kLong;
constexpr ScalarType kF32 = ScalarType::kFloat;

Status binary(KernelFunction fn, const char* name, TestTensor& a, TestTensor& b,
              TestTensor& out) {
  KernelArgs args{a.evalue(), b.evalue(), out.evalue(), EValue()};
  return run_kernel(fn, name, args);
}

TEST(OpRemainderTest, SignFollowsTheDivisorMatchesTorch) {
  TestTensor a(kI64, {4}, {-7, 7, -7, 7});
  TestTensor b(kI64, {4}, {3, -3, -3, 3});
  TestTensor out(kI64, {4});
  ASSERT_TRUE(binary(&remainder_tensor_out, "aten::remainder.Tensor_out", a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(2, -2, -1, 1));

  TestTensor fa(kF32, {4}, {-7, 7, 1, 5});
  TestTensor fb(kF32, {4}, {3, -3, -INFINITY, 0});
  TestTensor fout(kF32, {4});
  ASSERT_TRUE(binary(&remainder_tensor_out, "aten::remainder.Tensor_out", fa, fb, fout).ok());
  EXPECT_EQ(fout.get(0), 2);
  EXPECT_EQ(fout.get(1), -2);
  EXPECT_EQ(fout.get(2), -INFINITY);
  EXPECT_TRUE(std::isnan(fout.get(3)));
}

TEST(OpFmodTest, SignFollowsTheDividendMatchesTorch) {
  TestTensor a(kI64, {4}, {-7, 7, -7, 7});
  TestTensor b(kI64, {4}, {3, -3, -3, 3});
  TestTensor out(kI64, {4});
  ASSERT_TRUE(binary(&fmod_tensor_out, "aten::fmod.Tensor_out", a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(-1, 1, -1, 1));
}

TEST(OpRemainderTest, MinModMinusOneIsZero) {
  const double kMin64 = -9223372036854775808.0;
  TestTensor a(kI64, {1}, {kMin64});
  TestTensor b(kI64, {1}, {-1});
  TestTensor out(kI64, {1});
  ASSERT_TRUE(binary(&remainder_tensor_out, "aten::remainder.Tensor_out", a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0));
  ASSERT_TRUE(binary(&fmod_tensor_out, "aten::fmod.Tensor_out", a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0));
}

TEST(OpRemainderTest, IntegerZeroDivisorFailsNamingOperatorAndArgument) {
  TestTensor a(ScalarType::kShort, {2}, {5, 6});
  TestTensor b(ScalarType::kShort, {2, 1}, {1, 0});
  TestTensor out(ScalarType::kShort, {2, 2});
  const Status status = binary(&remainder_tensor_out, "aten::remainder.Tensor_out", a, b, out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "aten::remainder.Tensor_out"));
  EXPECT_THAT(status.message(), HasSubstr("'other'"));

  const Status fmod_status = binary(&fmod_tensor_out, "aten::fmod.Tensor_out", a, b, out);
  EXPECT_THAT(fmod_status, ErrorIs(Error::kInvalidArgument, "aten::fmod.Tensor_out"));
}

TEST(OpRemainderTest, ScalarZeroFailsForIntegersButNotFloats) {
  TestTensor a(ScalarType::kInt, {2}, {5, 6});
  TestTensor out(ScalarType::kInt, {2});
  KernelArgs args{a.evalue(), EValue(int64_t{0}), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&remainder_scalar_out, "aten::remainder.Scalar_out", args),
              ErrorIs(Error::kInvalidArgument, "integer division by zero"));
  KernelArgs fmod_args{a.evalue(), EValue(int64_t{0}), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&fmod_scalar_out, "aten::fmod.Scalar_out", fmod_args),
              ErrorIs(Error::kInvalidArgument, "integer division by zero"));

  // A float Scalar makes the result float32: x % 0.0 is NaN, not an error.
  TestTensor fout(kF32, {2});
  KernelArgs float_args{a.evalue(), EValue(0.0), fout.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&remainder_scalar_out, "aten::remainder.Scalar_out", float_args).ok());
  EXPECT_TRUE(std::isnan(fout.get(0)));
}

TEST(OpRemainderTest, BoolFails) {
  TestTensor a(ScalarType::kBool, {1}, {1});
  TestTensor out(ScalarType::kBool, {1});
  const Status status = binary(&remainder_tensor_out, "aten::remainder.Tensor_out", a, a, out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "'self'"));
}

}  // namespace
}  // namespace torchlight::portable
