// aten::linear.out: input @ weight^T + bias for inputs of any rank, with and
// without bias, broadcast biases, layouts, empty shapes, half precision and
// the errors, each naming the operator and the argument.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::dim_order;
using kernel_test::dynamic_bound;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

Status linear(TestTensor& input, TestTensor& weight, TestTensor* bias, TestTensor& out) {
  KernelArgs args{input.evalue(), weight.evalue(), bias != nullptr ? bias->evalue() : EValue(),
                  out.evalue(), EValue()};
  return run_kernel(&linear_out, "aten::linear.out", args);
}

// x [2, 3] = [[1, 2, 3], [4, 5, 6]]; weight [2, 3] = [[1, 0, -1], [2, 1, 0]]:
// x @ weight^T = [[-2, 4], [-2, 13]].
TEST(OpLinearTest, MatrixTimesTransposedWeightPlusBias) {
  TestTensor x(kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor w(kF32, {2, 3}, {1, 0, -1, 2, 1, 0});
  TestTensor b(kF32, {2}, {10, 20});
  TestTensor out(kF32, {2, 2});
  ASSERT_TRUE(linear(x, w, &b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(8, 24, 8, 33));
  TestTensor no_bias(kF32, {2, 2});
  ASSERT_TRUE(linear(x, w, nullptr, no_bias).ok());
  EXPECT_THAT(no_bias.values(), ElementsAre(-2, 4, -2, 13));
}

TEST(OpLinearTest, LeadingDimensionsAndVectors) {
  // [2, 1, 3] input: two rows of the matrix above; out [2, 1, 2].
  TestTensor x3(kF32, {2, 1, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor w(kF32, {2, 3}, {1, 0, -1, 2, 1, 0});
  TestTensor out(kF32, {2, 1, 2});
  ASSERT_TRUE(linear(x3, w, nullptr, out).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(2, 1, 2));
  EXPECT_THAT(out.values(), ElementsAre(-2, 4, -2, 13));
  // A 1-D input gives a 1-D result.
  TestTensor x1(kF32, {3}, {4, 5, 6});
  TestTensor b(kF32, {2}, {1, 1});
  TestTensor out1(kF32, {2});
  ASSERT_TRUE(linear(x1, w, &b, out1).ok());
  EXPECT_THAT(out1.values(), ElementsAre(-1, 14));
}

TEST(OpLinearTest, BiasBroadcastsOverRows) {
  TestTensor x(kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor w(kF32, {2, 3}, {1, 0, -1, 2, 1, 0});
  TestTensor per_row(kF32, {2, 1}, {100, 200});  // One value per row.
  TestTensor out(kF32, {2, 2});
  ASSERT_TRUE(linear(x, w, &per_row, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(98, 104, 198, 213));
  TestTensor full(kF32, {2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(linear(x, w, &full, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(-1, 6, 1, 17));
  TestTensor scalar(kF32, {}, {0.5});
  ASSERT_TRUE(linear(x, w, &scalar, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(-1.5, 4.5, -1.5, 13.5));
}

TEST(OpLinearTest, AnyLayoutOfOperands) {
  // The same logical tensors, each stored permuted; leading dims of x that
  // do not merge ([2, 2, 3] with dim order 1, 0, 2) go a row at a time.
  TestTensor x(kF32, {2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, dim_order({1, 0, 2}));
  TestTensor w(kF32, {2, 3}, {1, 0, -1, 2, 1, 0}, dim_order({1, 0}));
  TestTensor b(kF32, {2}, {10, 20});
  TestTensor out(kF32, {2, 2, 2}, {}, dim_order({2, 1, 0}));
  ASSERT_TRUE(linear(x, w, &b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(8, 24, 8, 33, 8, 42, 8, 51));
}

TEST(OpLinearTest, ResizesOutAndHandlesEmptyShapes) {
  TestTensor x(kF32, {3, 4}, std::vector<double>(12, 1.0));
  TestTensor w(kF32, {2, 4}, std::vector<double>(8, 0.5));
  TestTensor out(kF32, {4, 4}, {}, dynamic_bound());
  ASSERT_TRUE(linear(x, w, nullptr, out).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(3, 2));
  EXPECT_THAT(out.values(), ElementsAre(2, 2, 2, 2, 2, 2));
  // K == 0: the products are empty sums, so out is the bias.
  TestTensor x0(kF32, {2, 0});
  TestTensor w0(kF32, {3, 0});
  TestTensor b(kF32, {3}, {1, 2, 3});
  TestTensor out0(kF32, {2, 3});
  ASSERT_TRUE(linear(x0, w0, &b, out0).ok());
  EXPECT_THAT(out0.values(), ElementsAre(1, 2, 3, 1, 2, 3));
  // No rows: nothing to compute.
  TestTensor none(kF32, {0, 4});
  TestTensor empty(kF32, {0, 2});
  EXPECT_TRUE(linear(none, w, nullptr, empty).ok());
}

TEST(OpLinearTest, HalfAccumulatesInFloat) {
  // 2048 + 1 + 1 is not representable step by step in half (2049 rounds to
  // 2048), but accumulating in float and rounding once gives 2050.
  TestTensor x(ScalarType::kHalf, {1, 3}, {2048, 1, 1});
  TestTensor w(ScalarType::kHalf, {1, 3}, {1, 1, 1});
  TestTensor out(ScalarType::kHalf, {1, 1});
  ASSERT_TRUE(linear(x, w, nullptr, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(2050));
}

TEST(OpLinearTest, DotProductsLongerThanTheLanes) {
  // K = 37 exercises the 8-lane dot product and its tail.
  std::vector<double> xv(37);
  std::vector<double> wv(2 * 37);
  double expect0 = 0;
  double expect1 = 0;
  for (int i = 0; i < 37; ++i) {
    xv[i] = 0.25 * (i % 7) - 0.5;
    wv[i] = 0.125 * (i % 5);
    wv[37 + i] = -0.5 + 0.0625 * i;
    expect0 += xv[i] * wv[i];
    expect1 += xv[i] * wv[37 + i];
  }
  TestTensor x(kF32, {1, 37}, xv);
  TestTensor w(kF32, {2, 37}, wv);
  TestTensor out(kF32, {1, 2});
  ASSERT_TRUE(linear(x, w, nullptr, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(DoubleNear(expect0, 1e-5), DoubleNear(expect1, 1e-5)));
}

TEST(OpLinearTest, ErrorsNameTheArgument) {
  TestTensor x(kF32, {2, 3});
  TestTensor w(kF32, {2, 4});
  TestTensor out(kF32, {2, 2});
  Status s = linear(x, w, nullptr, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "aten::linear.out"));
  EXPECT_THAT(s.message(), HasSubstr("'weight' of shape [2, 4]"));

  TestTensor w1(kF32, {3});
  EXPECT_THAT(linear(x, w1, nullptr, out).message(), HasSubstr("'weight' must be a matrix"));

  TestTensor w2(kF32, {2, 3});
  TestTensor bad_bias(kF32, {3});
  s = linear(x, w2, &bad_bias, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'bias' of shape [3] does not broadcast"));

  TestTensor w_double(ScalarType::kDouble, {2, 3});
  s = linear(x, w_double, nullptr, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'weight'"));

  TestTensor out_double(ScalarType::kDouble, {2, 2});
  EXPECT_THAT(linear(x, w2, nullptr, out_double).message(), HasSubstr("'out'"));

  TestTensor xb(ScalarType::kBool, {2, 3});
  TestTensor wb(ScalarType::kBool, {2, 3});
  TestTensor ob(ScalarType::kBool, {2, 2});
  EXPECT_FALSE(linear(xb, wb, nullptr, ob).ok());

  TestTensor scalar(kF32, {});
  EXPECT_THAT(linear(scalar, w2, nullptr, out).message(), HasSubstr("'input' is 0-d"));

  TestTensor small_out(kF32, {1, 1});  // Static: cannot grow to [2, 2].
  EXPECT_FALSE(linear(x, w2, nullptr, small_out).ok());
}

}  // namespace
}  // namespace torchlight::portable
