// sub: bool rejection, alpha, wrapping, out dtype rules.
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

TEST(OpSubTest, AlphaAndWrappingMatchTorch) {
  TestTensor a(ScalarType::kChar, {3}, {-128, 5, 0});
  TestTensor b(ScalarType::kChar, {3}, {1, 2, 3});
  TestTensor out(ScalarType::kChar, {3});
  KernelArgs args{a.evalue(), b.evalue(), EValue(int64_t{2}), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&sub_out, "aten::sub.out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(126, 1, -6));
}

TEST(OpSubTest, BoolOperandsFail) {
  TestTensor a(ScalarType::kInt, {1}, {1});
  TestTensor b(ScalarType::kBool, {1}, {1});
  TestTensor out(ScalarType::kInt, {1});
  KernelArgs args{a.evalue(), b.evalue(), EValue(int64_t{1}), out.evalue(), EValue()};
  const Status status = run_kernel(&sub_out, "aten::sub.out", args);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "aten::sub.out"));
  EXPECT_THAT(status.message(), HasSubstr("'other' is bool"));

  KernelArgs scalar_args{a.evalue(), EValue(true), EValue(int64_t{1}), out.evalue(), EValue()};
  const Status scalar_status = run_kernel(&sub_scalar_out, "aten::sub.Scalar_out", scalar_args);
  EXPECT_THAT(scalar_status, ErrorIs(Error::kInvalidType, "'other'"));
}

TEST(OpSubTest, FloatAlphaWithIntegersFails) {
  TestTensor a(ScalarType::kInt, {1}, {1});
  TestTensor out(ScalarType::kInt, {1});
  KernelArgs args{a.evalue(), a.evalue(), EValue(1.5), out.evalue(), EValue()};
  const Status status = run_kernel(&sub_out, "aten::sub.out", args);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "'alpha'"));
}

TEST(OpSubTest, ScalarOverloadNeedsTheExactOutDtype) {
  TestTensor a(ScalarType::kInt, {2}, {1, 2});
  TestTensor out(ScalarType::kLong, {2});
  KernelArgs args{a.evalue(), EValue(int64_t{1}), EValue(int64_t{1}), out.evalue(), EValue()};
  EXPECT_EQ(run_kernel(&sub_scalar_out, "aten::sub.Scalar_out", args).code(),
            Error::kInvalidType);
  TestTensor out_int(ScalarType::kInt, {2});
  KernelArgs ok_args{a.evalue(), EValue(int64_t{3}), EValue(int64_t{2}), out_int.evalue(),
                     EValue()};
  ASSERT_TRUE(run_kernel(&sub_scalar_out, "aten::sub.Scalar_out", ok_args).ok());
  EXPECT_THAT(out_int.values(), ElementsAre(-5, -4));
}

TEST(OpMaximumTest, NanPropagatesAndBoolIsSupported) {
  TestTensor a(ScalarType::kFloat, {3}, {NAN, 1, 2});
  TestTensor b(ScalarType::kFloat, {3}, {0, NAN, 1});
  TestTensor out(ScalarType::kFloat, {3});
  KernelArgs args{a.evalue(), b.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&maximum_out, "aten::maximum.out", args).ok());
  EXPECT_TRUE(std::isnan(out.get(0)));
  EXPECT_TRUE(std::isnan(out.get(1)));
  EXPECT_EQ(out.get(2), 2);
  ASSERT_TRUE(run_kernel(&minimum_out, "aten::minimum.out", args).ok());
  EXPECT_EQ(out.get(2), 1);

  TestTensor t(ScalarType::kBool, {2}, {1, 0});
  TestTensor f(ScalarType::kBool, {2}, {0, 0});
  TestTensor out_b(ScalarType::kBool, {2});
  KernelArgs bool_args{t.evalue(), f.evalue(), out_b.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&maximum_out, "aten::maximum.out", bool_args).ok());
  EXPECT_THAT(out_b.values(), ElementsAre(1, 0));
}

}  // namespace
}  // namespace torchlight::portable
