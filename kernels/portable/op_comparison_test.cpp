// Comparisons, logical and bitwise ops: promotion of Scalars, out dtypes and
// the dtype errors.
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

Status run_scalar(KernelFunction fn, const char* name, TestTensor& self, const EValue& other,
                  TestTensor& out) {
  KernelArgs args{self.evalue(), other, out.evalue(), EValue()};
  return run_kernel(fn, name, args);
}

Status run_binary(KernelFunction fn, const char* name, TestTensor& self, TestTensor& other,
                  TestTensor& out) {
  KernelArgs args{self.evalue(), other.evalue(), out.evalue(), EValue()};
  return run_kernel(fn, name, args);
}

TEST(OpComparisonTest, ScalarConvertsToTheCommonDtypeMatchesTorch) {
  // int8 == 300 compares with 300 wrapped to int8 (44).
  TestTensor a(ScalarType::kChar, {2}, {44, 45});
  TestTensor out(ScalarType::kBool, {2});
  ASSERT_TRUE(run_scalar(&eq_scalar_out, "aten::eq.Scalar_out", a, EValue(int64_t{300}), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 0));

  // An integer tensor against a float Scalar compares in float32.
  TestTensor b(ScalarType::kInt, {2}, {1, 2});
  ASSERT_TRUE(run_scalar(&lt_scalar_out, "aten::lt.Scalar_out", b, EValue(1.5), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 0));
}

TEST(OpComparisonTest, NanIsUnequalToEverything) {
  TestTensor a(ScalarType::kFloat, {2}, {NAN, 1});
  TestTensor out(ScalarType::kBool, {2});
  ASSERT_TRUE(run_binary(&eq_tensor_out, "aten::eq.Tensor_out", a, a, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0, 1));
  ASSERT_TRUE(run_binary(&ne_tensor_out, "aten::ne.Tensor_out", a, a, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 0));
}

TEST(OpComparisonTest, ResultGoesIntoAnyOutDtypeAsZeroOrOne) {
  TestTensor a(ScalarType::kFloat, {3}, {1, 2, 3});
  TestTensor b(ScalarType::kLong, {1}, {2});
  TestTensor out(ScalarType::kDouble, {3});
  ASSERT_TRUE(run_binary(&ge_tensor_out, "aten::ge.Tensor_out", a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0, 1, 1));
}

TEST(OpComparisonTest, MismatchedShapesFailNamingTheOperator) {
  TestTensor a(ScalarType::kFloat, {2, 3});
  TestTensor b(ScalarType::kFloat, {4});
  TestTensor out(ScalarType::kBool, {2, 3});
  const Status status = run_binary(&gt_tensor_out, "aten::gt.Tensor_out", a, b, out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "aten::gt.Tensor_out"));
  EXPECT_THAT(status.message(), HasSubstr("'other'"));
}

TEST(OpLogicalTest, NonzeroIsTrueAcrossDtypes) {
  TestTensor a(ScalarType::kFloat, {4}, {0.5, 0, NAN, 0});
  TestTensor b(ScalarType::kChar, {4}, {0, 3, 1, 0});
  TestTensor out(ScalarType::kBool, {4});
  ASSERT_TRUE(run_binary(&logical_xor_out, "aten::logical_xor.out", a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 1, 0, 0));
  ASSERT_TRUE(run_binary(&logical_and_out, "aten::logical_and.out", a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0, 0, 1, 0));
  TestTensor out_float(ScalarType::kFloat, {4});
  KernelArgs args{a.evalue(), out_float.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&logical_not_out, "aten::logical_not.out", args).ok());
  EXPECT_THAT(out_float.values(), ElementsAre(0, 1, 0, 1));
}

TEST(OpBitwiseTest, IntegersAndBoolMatchTorch) {
  TestTensor a(ScalarType::kChar, {2}, {1, 2});
  TestTensor out(ScalarType::kChar, {2});
  ASSERT_TRUE(run_scalar(&bitwise_and_scalar_out, "aten::bitwise_and.Scalar_out", a,
                         EValue(int64_t{300}), out)
                  .ok());
  EXPECT_THAT(out.values(), ElementsAre(0, 0));  // 300 wraps to 44 = 0b101100.

  TestTensor t(ScalarType::kBool, {2}, {1, 0});
  TestTensor out_long(ScalarType::kLong, {2});
  ASSERT_TRUE(run_scalar(&bitwise_or_scalar_out, "aten::bitwise_or.Scalar_out", t,
                         EValue(int64_t{2}), out_long)
                  .ok());
  EXPECT_THAT(out_long.values(), ElementsAre(3, 2));

  TestTensor u(ScalarType::kByte, {2}, {5, 0});
  TestTensor out_u(ScalarType::kByte, {2});
  KernelArgs args{u.evalue(), out_u.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&bitwise_not_out, "aten::bitwise_not.out", args).ok());
  EXPECT_THAT(out_u.values(), ElementsAre(250, 255));
}

TEST(OpBitwiseTest, FloatsFailNamingTheArgument) {
  TestTensor a(ScalarType::kInt, {2}, {1, 2});
  TestTensor f(ScalarType::kFloat, {2}, {1, 2});
  TestTensor out(ScalarType::kFloat, {2});
  const Status status =
      run_binary(&bitwise_xor_tensor_out, "aten::bitwise_xor.Tensor_out", a, f, out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "aten::bitwise_xor.Tensor_out"));
  EXPECT_THAT(status.message(), HasSubstr("'other'"));

  const Status scalar_status =
      run_scalar(&bitwise_and_scalar_out, "aten::bitwise_and.Scalar_out", a, EValue(1.0), out);
  EXPECT_THAT(scalar_status, ErrorIs(Error::kInvalidType, "'other'"));
}

}  // namespace
}  // namespace torchlight::portable
