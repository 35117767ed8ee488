// The float unary ops: integer-to-float promotion, out dtype rules, IEEE
// results outside the domain.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/reference.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::KernelArgs;
using kernel_test::round_to;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Status unary(KernelFunction fn, const char* name, TestTensor& self, TestTensor& out) {
  KernelArgs args{self.evalue(), out.evalue(), EValue()};
  return run_kernel(fn, name, args);
}

TEST(OpFloatUnaryTest, IntegersComputeInFloat32) {
  TestTensor a(ScalarType::kLong, {3}, {4, 2, 0});
  TestTensor out(ScalarType::kFloat, {3});
  ASSERT_TRUE(unary(&sqrt_out, "aten::sqrt.out", a, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(2, static_cast<double>(std::sqrt(2.0f)), 0));

  TestTensor b(ScalarType::kBool, {2}, {1, 0});
  TestTensor out_b(ScalarType::kFloat, {2});
  ASSERT_TRUE(unary(&exp_out, "aten::exp.out", b, out_b).ok());
  EXPECT_THAT(out_b.values(), ElementsAre(static_cast<double>(std::exp(1.0f)), 1));
}

TEST(OpFloatUnaryTest, WiderOrNarrowerFloatOutIsAccepted) {
  TestTensor a(ScalarType::kInt, {2}, {1, 4});
  TestTensor out64(ScalarType::kDouble, {2});
  ASSERT_TRUE(unary(&rsqrt_out, "aten::rsqrt.out", a, out64).ok());
  // Computed in float32, then widened: rsqrt(1) = 1, rsqrt(4) = 0.5.
  EXPECT_THAT(out64.values(), ElementsAre(1, 0.5));
  TestTensor out16(ScalarType::kHalf, {2});
  ASSERT_TRUE(unary(&reciprocal_out, "aten::reciprocal.out", a, out16).ok());
  EXPECT_THAT(out16.values(), ElementsAre(1, 0.25));
}

TEST(OpFloatUnaryTest, IntegerOutFailsNamingOut) {
  TestTensor a(ScalarType::kInt, {2}, {1, 4});
  TestTensor out(ScalarType::kInt, {2});
  const Status status = unary(&log_out, "aten::log.out", a, out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "aten::log.out"));
  EXPECT_THAT(status.message(), HasSubstr("'out'"));
}

TEST(OpFloatUnaryTest, OutsideTheDomainIsIeee) {
  TestTensor a(ScalarType::kFloat, {3}, {-1, 0, 2});
  TestTensor out(ScalarType::kFloat, {3});
  ASSERT_TRUE(unary(&log_out, "aten::log.out", a, out).ok());
  EXPECT_TRUE(std::isnan(out.get(0)));
  EXPECT_EQ(out.get(1), -INFINITY);
  ASSERT_TRUE(unary(&atanh_out, "aten::atanh.out", a, out).ok());
  EXPECT_EQ(out.get(0), -INFINITY);
  EXPECT_TRUE(std::isnan(out.get(2)));
}

TEST(OpFloatUnaryTest, HalfComputesInFloatAndRoundsOnce) {
  TestTensor a(ScalarType::kHalf, {3}, {-10, 0, -20});
  TestTensor out(ScalarType::kHalf, {3});
  ASSERT_TRUE(unary(&sigmoid_out, "aten::sigmoid.out", a, out).ok());
  // A float16 subnormal (torch: 4.5419e-05), and 0.5.
  EXPECT_EQ(out.get(0), round_to(ScalarType::kHalf, 1 / (1 + std::exp(10.0))));
  EXPECT_EQ(out.get(1), 0.5);
  EXPECT_EQ(out.get(2), 0);  // 2.06e-9 is below the smallest float16.
}

TEST(OpFloatUnaryTest, ResizesOutAndRejectsAStaticOutOfAnotherShape) {
  TestTensor a(ScalarType::kFloat, {2, 3});
  TestTensor out(ScalarType::kFloat, {3, 2});
  const Status status = unary(&sin_out, "aten::sin.out", a, out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "aten::sin.out"));
  EXPECT_THAT(status.message(), HasSubstr("'out'"));
}

}  // namespace
}  // namespace torchlight::portable
