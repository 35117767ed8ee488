// Activations: dtype rules, parameters, NaN propagation and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(OpActivationTest, ReluKeepsIntegersAndNan) {
  TestTensor a(ScalarType::kInt, {3}, {-3, 0, 4});
  TestTensor out(ScalarType::kInt, {3});
  KernelArgs args{a.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&relu_out, "aten::relu.out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(0, 0, 4));

  TestTensor f(ScalarType::kFloat, {2}, {NAN, -1});
  TestTensor out_f(ScalarType::kFloat, {2});
  KernelArgs float_args{f.evalue(), out_f.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&relu_out, "aten::relu.out", float_args).ok());
  EXPECT_TRUE(std::isnan(out_f.get(0)));
  EXPECT_EQ(out_f.get(1), 0);
}

TEST(OpActivationTest, FloatOnlyActivationsRejectIntegers) {
  TestTensor a(ScalarType::kInt, {1}, {1});
  TestTensor out(ScalarType::kInt, {1});
  const std::pair<KernelFunction, const char*> ops[] = {{&silu_out, "aten::silu.out"},
                                                         {&hardswish_out, "aten::hardswish.out"},
                                                         {&hardsigmoid_out, "aten::hardsigmoid.out"}};
  for (const auto& [fn, name] : ops) {
    KernelArgs args{a.evalue(), out.evalue(), EValue()};
    const Status status = run_kernel(fn, name, args);
    EXPECT_THAT(status, ErrorIs(Error::kInvalidType, name));
    EXPECT_THAT(status.message(), HasSubstr("'self' has dtype int32"));
  }
}

TEST(OpActivationTest, GeluApproximations) {
  TestTensor a(ScalarType::kFloat, {2}, {-1, 2});
  TestTensor out(ScalarType::kFloat, {2});
  KernelArgs exact{a.evalue(), EValue("none"), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&gelu_out, "aten::gelu.out", exact).ok());
  EXPECT_THAT(out.get(0), DoubleNear(-0.15865525, 1e-6));
  EXPECT_THAT(out.get(1), DoubleNear(1.95449974, 1e-6));
  KernelArgs tanh{a.evalue(), EValue("tanh"), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&gelu_out, "aten::gelu.out", tanh).ok());
  EXPECT_THAT(out.get(0), DoubleNear(-0.15880799, 1e-6));  // torch
  EXPECT_THAT(out.get(1), DoubleNear(1.95459771, 1e-6));

  KernelArgs bad{a.evalue(), EValue("erf"), out.evalue(), EValue()};
  const Status status = run_kernel(&gelu_out, "aten::gelu.out", bad);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "aten::gelu.out"));
  EXPECT_THAT(status.message(), HasSubstr("'approximate'"));
}

TEST(OpActivationTest, GeluOfInfinityIsTheLimitAsInAtensScalarPath) {
  // ATen's float32 gelu gives inf for a one-element tensor and NaN from its
  // vectorised loop; float64 gives inf. The kernel always gives inf (the
  // limit), and NaN for -inf (inf * 0), as ATen's scalar path.
  TestTensor a(ScalarType::kFloat, {2}, {INFINITY, -INFINITY});
  TestTensor out(ScalarType::kFloat, {2});
  KernelArgs args{a.evalue(), EValue("none"), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&gelu_out, "aten::gelu.out", args).ok());
  EXPECT_EQ(out.get(0), INFINITY);
  EXPECT_TRUE(std::isnan(out.get(1)));
}

TEST(OpActivationTest, ParametersMatchTorch) {
  TestTensor a(ScalarType::kFloat, {3}, {-1, 2, 0});
  TestTensor out(ScalarType::kFloat, {3});
  KernelArgs elu{a.evalue(), EValue(1.5), EValue(2.0), EValue(0.5), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&elu_out, "aten::elu.out", elu).ok());
  EXPECT_THAT(out.get(0), DoubleNear(-1.180408, 1e-6));
  EXPECT_EQ(out.get(1), 4);
  EXPECT_EQ(out.get(2), 0);

  KernelArgs leaky{a.evalue(), EValue(int64_t{2}), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&leaky_relu_out, "aten::leaky_relu.out", leaky).ok());
  EXPECT_THAT(out.values(), ElementsAre(-2, 2, 0));

  TestTensor s(ScalarType::kFloat, {4}, {-1, 2, 30, 15});
  TestTensor out_s(ScalarType::kFloat, {4});
  KernelArgs softplus{s.evalue(), EValue(int64_t{2}), EValue(int64_t{20}), out_s.evalue(),
                      EValue()};
  ASSERT_TRUE(run_kernel(&softplus_out, "aten::softplus.out", softplus).ok());
  EXPECT_THAT(out_s.get(0), DoubleNear(0.063464, 1e-6));
  EXPECT_THAT(out_s.get(1), DoubleNear(2.009075, 1e-6));
  EXPECT_EQ(out_s.get(2), 30);  // beta * x > threshold: x itself.
  EXPECT_EQ(out_s.get(3), 15);
}

TEST(OpActivationTest, HardFunctionsPropagateNan) {
  TestTensor a(ScalarType::kFloat, {4}, {NAN, -4, 0, 4});
  TestTensor out(ScalarType::kFloat, {4});
  KernelArgs args{a.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&hardswish_out, "aten::hardswish.out", args).ok());
  EXPECT_TRUE(std::isnan(out.get(0)));
  EXPECT_EQ(out.get(1), 0);
  EXPECT_EQ(out.get(2), 0);
  EXPECT_EQ(out.get(3), 4);
}

}  // namespace
}  // namespace torchlight::portable
