// aten::convolution.out: hand-checked values for the direct, grouped,
// dilated and transposed forms, layouts, and the errors (naming the
// operator and the argument, leaving out untouched).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::dim_order;
using kernel_test::dynamic_bound;
using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

struct Conv {
  std::vector<int64_t> stride = {1};
  std::vector<int64_t> padding = {0};
  std::vector<int64_t> dilation = {1};
  bool transposed = false;
  std::vector<int64_t> output_padding = {0};
  int64_t groups = 1;
};

Status conv(TestTensor& input, TestTensor& weight, TestTensor* bias, const Conv& c,
            TestTensor& out) {
  IntListArg stride(c.stride);
  IntListArg padding(c.padding);
  IntListArg dilation(c.dilation);
  IntListArg output_padding(c.output_padding);
  KernelArgs args{input.evalue(),       weight.evalue(),
                  bias != nullptr ? bias->evalue() : EValue(),
                  stride.evalue(),      padding.evalue(),
                  dilation.evalue(),    EValue(c.transposed),
                  output_padding.evalue(), EValue(c.groups),
                  out.evalue(),         EValue()};
  return run_kernel(&convolution_out, "aten::convolution.out", args);
}

std::vector<double> iota(int n, double start = 1) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(start + i);
  return v;
}

TEST(OpConvolutionTest, Conv2dWithBias) {
  TestTensor input(kF32, {1, 1, 3, 3}, iota(9));
  TestTensor weight(kF32, {1, 1, 2, 2}, {1, 1, 1, 1});
  TestTensor bias(kF32, {1}, {10});
  TestTensor out(kF32, {1, 1, 2, 2});
  ASSERT_TRUE(conv(input, weight, &bias, {}, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(22, 26, 34, 38));
}

TEST(OpConvolutionTest, PaddingAndStride) {
  TestTensor input(kF32, {1, 1, 3, 3}, iota(9));
  TestTensor weight(kF32, {1, 1, 3, 3}, std::vector<double>(9, 1.0));
  TestTensor out(kF32, {1, 1, 2, 2});
  Conv c;
  c.stride = {2};
  c.padding = {1};
  ASSERT_TRUE(conv(input, weight, nullptr, c, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(12, 16, 24, 28));
}

TEST(OpConvolutionTest, DepthwiseGroups) {
  // Channel 0 scaled by 1, channel 1 by -2 (1x1 kernels, groups = 2).
  TestTensor input(kF32, {1, 2, 1, 2}, {1, 2, 3, 4});
  TestTensor weight(kF32, {2, 1, 1, 1}, {1, -2});
  TestTensor out(kF32, {1, 2, 1, 2});
  Conv c;
  c.groups = 2;
  ASSERT_TRUE(conv(input, weight, nullptr, c, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 2, -6, -8));
}

TEST(OpConvolutionTest, DilatedConv1d) {
  TestTensor input(kF32, {1, 1, 5}, iota(5));
  TestTensor weight(kF32, {1, 1, 2}, {1, 10});
  TestTensor out(kF32, {1, 1, 3});
  Conv c;
  c.dilation = {2};
  ASSERT_TRUE(conv(input, weight, nullptr, c, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(31, 42, 53));
}

TEST(OpConvolutionTest, TransposedScattersEachInputOverTheKernel) {
  TestTensor input(kF32, {1, 1, 2, 2}, {1, 2, 3, 4});
  TestTensor weight(kF32, {1, 1, 2, 2}, {1, 1, 1, 1});
  TestTensor bias(kF32, {1}, {0.5});
  TestTensor out(kF32, {1, 1, 5, 5});
  Conv c;
  c.stride = {2};
  c.transposed = true;
  c.output_padding = {1};  // One more row and column, bias only.
  ASSERT_TRUE(conv(input, weight, &bias, c, out).ok());
  EXPECT_THAT(out.values(), ElementsAreArray(std::vector<double>{
                                1.5, 1.5, 2.5, 2.5, 0.5,  //
                                1.5, 1.5, 2.5, 2.5, 0.5,  //
                                3.5, 3.5, 4.5, 4.5, 0.5,  //
                                3.5, 3.5, 4.5, 4.5, 0.5,  //
                                0.5, 0.5, 0.5, 0.5, 0.5}));
}

TEST(OpConvolutionTest, ChannelsLastMatchesContiguous) {
  const std::vector<double> in_values = iota(2 * 3 * 4 * 4, -20);
  std::vector<double> w_values;
  for (int i = 0; i < 5 * 3 * 3 * 3; ++i) w_values.push_back((i % 7) - 3);
  TestTensor in(kF32, {2, 3, 4, 4}, in_values);
  TestTensor w(kF32, {5, 3, 3, 3}, w_values);
  TestTensor out(kF32, {2, 5, 4, 4});
  Conv c;
  c.padding = {1};
  ASSERT_TRUE(conv(in, w, nullptr, c, out).ok());

  TestTensor in_cl(kF32, {2, 3, 4, 4}, in_values, dim_order({0, 2, 3, 1}));
  TestTensor w_cl(kF32, {5, 3, 3, 3}, w_values, dim_order({0, 2, 3, 1}));
  TestTensor out_cl(kF32, {2, 5, 4, 4}, {}, dim_order({0, 2, 3, 1}));
  ASSERT_TRUE(conv(in_cl, w_cl, nullptr, c, out_cl).ok());
  EXPECT_EQ(out_cl.values(), out.values());
}

TEST(OpConvolutionTest, ResizesDynamicOutAndAcceptsEmptyBatch) {
  TestTensor input(kF32, {0, 2, 5, 5});
  TestTensor weight(kF32, {3, 2, 3, 3});
  TestTensor out(kF32, {4, 4, 6, 6}, {}, dynamic_bound());
  ASSERT_TRUE(conv(input, weight, nullptr, {}, out).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(0, 3, 3, 3));
}

TEST(OpConvolutionTest, ChannelMismatchNamesInputAndWeight) {
  TestTensor input(kF32, {1, 3, 5, 5});
  TestTensor weight(kF32, {4, 2, 3, 3});
  TestTensor out(kF32, {1, 4, 3, 3}, std::vector<double>(36, 7.0));
  Status s = conv(input, weight, nullptr, {}, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::convolution.out: argument 'input' of shape "
                         "[1, 3, 5, 5] has 3 channels, but argument 'weight' of "
                         "shape [4, 2, 3, 3] with groups = 1 expects 2"));
  EXPECT_EQ(out.values(), std::vector<double>(36, 7.0));
}

TEST(OpConvolutionTest, KernelLargerThanPaddedInputFails) {
  TestTensor input(kF32, {1, 1, 2, 2});
  TestTensor weight(kF32, {1, 1, 3, 3});
  TestTensor out(kF32, {1, 1, 1, 1});
  Status s = conv(input, weight, nullptr, {}, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::convolution.out: argument 'weight' of shape "
                         "[1, 1, 3, 3] has a (dilated) kernel of 3 at spatial "
                         "dimension 0, larger than the padded size 2"));
}

TEST(OpConvolutionTest, ArgumentErrors) {
  TestTensor input(kF32, {1, 4, 5, 5});
  TestTensor weight(kF32, {4, 2, 3, 3});
  TestTensor out(kF32, {1, 4, 3, 3});
  Conv groups3;
  groups3.groups = 3;
  EXPECT_THAT(conv(input, weight, nullptr, groups3, out).message(),
              HasSubstr("argument 'weight' of shape [4, 2, 3, 3] must have a multiple of groups"));
  Conv negative;
  negative.groups = 2;
  negative.padding = {-1, 0};
  EXPECT_THAT(conv(input, weight, nullptr, negative, out).message(),
              HasSubstr("argument 'padding' has -1 at spatial dimension 0"));
  Conv long_stride;
  long_stride.groups = 2;
  long_stride.stride = {1, 1, 1};
  EXPECT_THAT(conv(input, weight, nullptr, long_stride, out).message(),
              HasSubstr("argument 'stride' has 3 values, expected 1 or 2"));
  TestTensor bias(kF32, {3});
  Conv grouped;
  grouped.groups = 2;
  EXPECT_THAT(conv(input, weight, &bias, grouped, out).message(),
              HasSubstr("argument 'bias' has shape [3], expected [4]"));
  TestTensor out_wrong(kF32, {1, 4, 2, 2});
  EXPECT_THAT(conv(input, weight, nullptr, grouped, out_wrong).message(),
              HasSubstr("argument 'out' with shape [1, 4, 2, 2] cannot be resized to "
                        "[1, 4, 3, 3]"));
}

TEST(OpConvolutionTest, DtypeErrors) {
  TestTensor input(ScalarType::kInt, {1, 1, 3, 3});
  TestTensor weight(ScalarType::kInt, {1, 1, 2, 2});
  TestTensor out(ScalarType::kInt, {1, 1, 4, 4});
  Conv transposed;
  transposed.transposed = true;
  Status s = conv(input, weight, nullptr, transposed, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType,
                         "aten::convolution.out: argument 'input' has dtype int32"));

  TestTensor weight64(ScalarType::kLong, {1, 1, 2, 2});
  TestTensor out2(ScalarType::kInt, {1, 1, 2, 2});
  s = conv(input, weight64, nullptr, {}, out2);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "argument 'weight' has dtype int64, expected int32"));
}

TEST(OpConvolutionTest, IntegerConvolution) {
  TestTensor input(ScalarType::kByte, {1, 1, 2, 2}, {200, 100, 1, 2});
  TestTensor weight(ScalarType::kByte, {1, 1, 1, 1}, {2});
  TestTensor out(ScalarType::kByte, {1, 1, 2, 2});
  ASSERT_TRUE(conv(input, weight, nullptr, {}, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(144, 200, 2, 4));  // 400 wraps to 144.
}

}  // namespace
}  // namespace torchlight::portable
