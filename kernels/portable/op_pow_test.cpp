// pow: integer rules (negative exponents, overflow checks, wrapping) and the
// shortcuts for exponents 0 and 1.
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

Status pow_scalar_exp(TestTensor& self, const EValue& exponent, TestTensor& out) {
  KernelArgs args{self.evalue(), exponent, out.evalue(), EValue()};
  return run_kernel(&pow_tensor_scalar_out, "aten::pow.Tensor_Scalar_out", args);
}

TEST(OpPowTest, NegativeIntegerExponentsOnIntegerTensorsMatchTorch) {
  TestTensor base(ScalarType::kInt, {5}, {-1, -1, 1, 2, 0});
  TestTensor exponent(ScalarType::kInt, {5}, {-3, -2, -5, -1, -1});
  TestTensor out(ScalarType::kInt, {5});
  KernelArgs args{base.evalue(), exponent.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&pow_tensor_tensor_out, "aten::pow.Tensor_Tensor_out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(-1, 1, 1, 0, 0));
}

TEST(OpPowTest, IntegerPowersWrapMatchesTorch) {
  TestTensor base(ScalarType::kChar, {3}, {1, 2, 3});
  TestTensor out(ScalarType::kChar, {3});
  ASSERT_TRUE(pow_scalar_exp(base, EValue(int64_t{7}), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, -128, -117));

  TestTensor big(ScalarType::kLong, {1}, {3});
  TestTensor big_out(ScalarType::kLong, {1});
  ASSERT_TRUE(pow_scalar_exp(big, EValue(int64_t{41}), big_out).ok());  // 3^41 wraps int64.
  // 3^41 mod 2^64, as int64 (Python: 3**41 % 2**64 - 2**64).
  EXPECT_EQ(big_out.get(0), static_cast<double>(INT64_C(-420491770248316829)));
}

TEST(OpPowTest, NegativeIntegerScalarExponentOnIntegersFails) {
  for (ScalarType type : {ScalarType::kInt, ScalarType::kBool}) {
    TestTensor base(type, {2}, {1, 1});
    TestTensor out(ScalarType::kLong, {2});
    const Status status = pow_scalar_exp(base, EValue(int64_t{-1}), out);
    EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "aten::pow.Tensor_Scalar_out"))
        << to_string(type);
    EXPECT_THAT(status.message(), HasSubstr("'exponent'"));
  }
}

TEST(OpPowTest, ExponentThatOverflowsTheIntegerDtypeFails) {
  TestTensor base(ScalarType::kChar, {2}, {1, 2});
  TestTensor out(ScalarType::kChar, {2});
  const Status status = pow_scalar_exp(base, EValue(int64_t{300}), out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "'exponent'"));
}

TEST(OpPowTest, ExponentsZeroAndOneAreShortcutsEvenForBool) {
  TestTensor base(ScalarType::kBool, {2}, {1, 0});
  TestTensor out_long(ScalarType::kLong, {2});
  ASSERT_TRUE(pow_scalar_exp(base, EValue(int64_t{0}), out_long).ok());
  EXPECT_THAT(out_long.values(), ElementsAre(1, 1));
  TestTensor out_bool(ScalarType::kBool, {2});
  ASSERT_TRUE(pow_scalar_exp(base, EValue(true), out_bool).ok());
  EXPECT_THAT(out_bool.values(), ElementsAre(1, 0));
  // bool ** 2 is int64.
  ASSERT_TRUE(pow_scalar_exp(base, EValue(int64_t{2}), out_long).ok());
  EXPECT_THAT(out_long.values(), ElementsAre(1, 0));
}

TEST(OpPowTest, BoolToBoolFails) {
  TestTensor base(ScalarType::kBool, {1}, {1});
  TestTensor out(ScalarType::kBool, {1});
  KernelArgs args{base.evalue(), base.evalue(), out.evalue(), EValue()};
  const Status status = run_kernel(&pow_tensor_tensor_out, "aten::pow.Tensor_Tensor_out", args);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "bool"));
}

TEST(OpPowTest, ScalarBaseWrapsIntoTheTensorDtypeMatchesTorch) {
  TestTensor exponent(ScalarType::kChar, {3}, {1, 2, -3});
  TestTensor out(ScalarType::kChar, {3});
  KernelArgs args{EValue(int64_t{300}), exponent.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&pow_scalar_out, "aten::pow.Scalar_out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(44, -112, 0));

  KernelArgs one_args{EValue(int64_t{1}), exponent.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&pow_scalar_out, "aten::pow.Scalar_out", one_args).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 1, 1));
}

TEST(OpPowTest, HalfPowerOfMinusInfinityIsNanForFloat32MatchesTorch) {
  TestTensor base(ScalarType::kFloat, {3}, {-INFINITY, 4, 0.25});
  TestTensor out(ScalarType::kFloat, {3});
  ASSERT_TRUE(pow_scalar_exp(base, EValue(0.5), out).ok());
  EXPECT_TRUE(std::isnan(out.get(0)));
  EXPECT_EQ(out.get(1), 2);
  EXPECT_EQ(out.get(2), 0.5);
}

}  // namespace
}  // namespace torchlight::portable
