// aten::linear.out (optimized): input ranks, weight as matrix or vector,
// every bias broadcast, unusual layouts (one row at a time), resizing, and
// the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/matmul_test_util.h"
#include "kernels/optimized/optimized_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::optimized {
namespace {

using ::torchlight::testing::ErrorIs;

using portable::kernel_test::dim_order;
using portable::kernel_test::dynamic_bound;
using portable::kernel_test::KernelArgs;
using portable::kernel_test::Layout;
using portable::kernel_test::random_float_values;
using portable::kernel_test::run_kernel;
using portable::kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using test_util::expect_near_all;

constexpr ScalarType kF32 = ScalarType::kFloat;

int64_t numel_of(const std::vector<SizesType>& sizes) {
  int64_t n = 1;
  for (SizesType s : sizes) n *= s;
  return n;
}

Status linear(TestTensor& input, TestTensor& weight, TestTensor* bias, TestTensor& out) {
  KernelArgs args{input.evalue(), weight.evalue(), bias ? bias->evalue() : EValue(),
                  out.evalue(), EValue()};
  return run_kernel(&linear_out, "aten::linear.out", args);
}

// out[r][j] = sum_q x[r][q] * w[j][q] + bias broadcast to out_sizes, where
// rows r run over out's leading dims; `w_rows` is 0 for a vector weight.
std::vector<double> linear_ref(const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>* bias,
                               const std::vector<SizesType>& bias_sizes,
                               const std::vector<SizesType>& out_sizes, int64_t k,
                               int64_t w_rows) {
  const int64_t n = w_rows == 0 ? 1 : w_rows;
  const int64_t total = numel_of(out_sizes);
  std::vector<double> out(static_cast<size_t>(total));
  for (int64_t index = 0; index < total; ++index) {
    const int64_t r = index / n;
    const int64_t j = index % n;
    double acc = 0.0;
    for (int64_t q = 0; q < k; ++q) acc += x[r * k + q] * w[j * k + q];
    if (bias != nullptr) {
      // Broadcast: walk out's coordinates from the last dim.
      int64_t rest = index;
      int64_t offset = 0;
      int64_t stride = 1;
      for (size_t d = out_sizes.size(); d-- > 0;) {
        const int64_t coord = rest % out_sizes[d];
        rest /= out_sizes[d];
        const size_t lead = out_sizes.size() - bias_sizes.size();
        if (d >= lead) {
          const int64_t bs = bias_sizes[d - lead];
          offset += (bs == 1 ? 0 : coord) * stride;
          stride *= bs;
        }
      }
      acc += (*bias)[offset];
    }
    out[index] = acc;
  }
  return out;
}

struct Case {
  std::vector<SizesType> input;
  std::vector<SizesType> weight;
  std::vector<SizesType> bias;  // Empty with has_bias: a 0-D bias.
  bool has_bias;
  Layout input_layout = {};
  Layout out_layout = {};
};

void run_case(const Case& c, uint32_t seed) {
  const int64_t k = c.input.back();
  const int64_t w_rows = c.weight.size() == 2 ? c.weight[0] : 0;
  std::vector<SizesType> out_sizes(c.input.begin(), c.input.end() - 1);
  if (w_rows > 0 || c.weight.size() == 2) out_sizes.push_back(c.weight[0]);
  const auto xv = random_float_values(numel_of(c.input), seed);
  const auto wv = random_float_values(numel_of(c.weight), seed + 1);
  const auto bv = random_float_values(numel_of(c.bias), seed + 2);
  TestTensor input(kF32, c.input, xv, c.input_layout);
  TestTensor weight(kF32, c.weight, wv);
  TestTensor bias(kF32, c.bias, bv);
  TestTensor out(kF32, out_sizes, {}, c.out_layout);
  const Status status = linear(input, weight, c.has_bias ? &bias : nullptr, out);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(out.sizes(), out_sizes);
  expect_near_all(out.values(),
                  linear_ref(xv, wv, c.has_bias ? &bv : nullptr, c.bias, out_sizes, k, w_rows), k);
}

class OptimizedLinearTest : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override { threadpool::set_num_threads(GetParam()); }
  void TearDown() override { threadpool::set_num_threads(0); }
};

TEST_P(OptimizedLinearTest, InputRanksAndBiasShapes) {
  const Case cases[] = {
      {{7}, {5, 7}, {}, false},
      {{7}, {5, 7}, {5}, true},
      {{1, 768}, {300, 768}, {300}, true},            // decode
      {{3, 64}, {130, 64}, {130}, true},              // small batch
      {{40, 96}, {100, 96}, {100}, true},             // prefill
      {{2, 5, 33}, {17, 33}, {17}, true},             // [B, T, K]
      {{2, 5, 33}, {17, 33}, {}, false},
      {{2, 5, 33}, {17, 33}, {1}, true},
      {{2, 5, 33}, {17, 33}, {}, true},               // 0-D bias
      {{2, 5, 33}, {17, 33}, {5, 17}, true},          // does not fold: row by row
      {{2, 5, 33}, {17, 33}, {2, 5, 17}, true},
      {{2, 5, 33}, {17, 33}, {2, 1, 17}, true},       // does not fold either
      {{2, 5, 33}, {17, 33}, {5, 1}, true},
      {{4, 6}, {6}, {}, false},                       // vector weight: out [4]
      {{4, 6}, {6}, {4}, true},
      {{6}, {6}, {}, true},                           // 0-D out
      {{3, 0}, {4, 0}, {4}, true},                    // k = 0: bias only
      {{0, 5}, {4, 5}, {4}, true},                    // no rows
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "input rank " << c.input.size() << " k "
                                    << c.input.back() << " bias rank " << c.bias.size()
                                    << (c.has_bias ? "" : " (none)") << " seed " << seed);
    run_case(c, seed);
    seed += 3;
  }
}

TEST_P(OptimizedLinearTest, UnusualLayouts) {
  const Case cases[] = {
      // A column-major 2-D input: one product with a strided A.
      {{9, 20}, {11, 20}, {11}, true, dim_order({1, 0}), {}},
      // Leading dims that do not fold: rows one at a time.
      {{3, 4, 20}, {11, 20}, {11}, true, dim_order({1, 0, 2}), {}},
      {{3, 4, 20}, {11, 20}, {11}, true, {}, dim_order({1, 0, 2})},
      // Out columns not contiguous: element by element.
      {{5, 20}, {11, 20}, {11}, true, {}, dim_order({1, 0})},
      {{2, 3, 20}, {11, 20}, {}, false, dim_order({2, 0, 1}), dim_order({2, 1, 0})},
  };
  uint32_t seed = 100;
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    run_case(c, seed);
    seed += 3;
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, OptimizedLinearTest, ::testing::Values(size_t{1}, size_t{2}));

TEST(OptimizedLinearTest, ResizesADynamicOut) {
  TestTensor input(kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor weight(kF32, {2, 3}, {1, 0, 0, 0, 1, 1});
  TestTensor bias(kF32, {2}, {10, 20});
  TestTensor out(kF32, {4, 4}, {}, dynamic_bound());
  ASSERT_TRUE(linear(input, weight, &bias, out).ok());
  EXPECT_EQ(out.sizes(), (std::vector<SizesType>{2, 2}));
  EXPECT_THAT(out.values(), ElementsAre(11, 25, 14, 31));
}

TEST(OptimizedLinearTest, NoneBiasAsUndefinedTensor) {
  TestTensor input(kF32, {1, 2}, {1, 2});
  TestTensor weight(kF32, {1, 2}, {3, 4});
  TestTensor out(kF32, {1, 1});
  KernelArgs args{input.evalue(), weight.evalue(), EValue(Tensor()), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&linear_out, "aten::linear.out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(11));
}

TEST(OptimizedLinearErrorsTest, FeatureMismatchNamesBothShapes) {
  TestTensor input(kF32, {2, 3});
  TestTensor weight(kF32, {4, 5});
  TestTensor out(kF32, {2, 4});
  const Status status = linear(input, weight, nullptr, out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "aten::linear.out"));
  EXPECT_THAT(status.message(), HasSubstr("'input' of shape [2, 3]"));
  EXPECT_THAT(status.message(), HasSubstr("'weight' of shape [4, 5]"));
  EXPECT_THAT(status.message(), HasSubstr("3 input features vs 5"));
}

TEST(OptimizedLinearErrorsTest, BiasThatDoesNotBroadcast) {
  TestTensor input(kF32, {2, 3});
  TestTensor weight(kF32, {4, 3});
  TestTensor bias(kF32, {3});
  TestTensor out(kF32, {2, 4});
  const Status status = linear(input, weight, &bias, out);
  EXPECT_THAT(status,
              ErrorIs(Error::kInvalidArgument,
                      "'bias' of shape [3] does not broadcast to the output's shape [2, 4]"));
}

TEST(OptimizedLinearErrorsTest, RanksAndDtypes) {
  TestTensor scalar(kF32, {});
  TestTensor weight(kF32, {4, 3});
  TestTensor out(kF32, {4});
  EXPECT_THAT(linear(scalar, weight, nullptr, out).message(),
              HasSubstr("'input' must have at least 1 dimension, got shape []"));

  TestTensor input(kF32, {2, 3});
  TestTensor weight3(kF32, {1, 4, 3});
  EXPECT_THAT(linear(input, weight3, nullptr, out).message(),
              HasSubstr("'weight' must be a matrix [out_features, in_features] or a vector"));

  TestTensor dbias(ScalarType::kDouble, {4});
  TestTensor out2(kF32, {2, 4});
  const Status dtype = linear(input, weight, &dbias, out2);
  EXPECT_THAT(dtype, ErrorIs(Error::kInvalidType,
                             "'bias' has dtype float64, expected float32 (the dtype of 'input')"));

  TestTensor iin(ScalarType::kInt, {2, 3});
  const Status int_input = linear(iin, weight, nullptr, out2);
  EXPECT_THAT(int_input, ErrorIs(Error::kInvalidType, "'input' has dtype int32"));

  TestTensor small_out(kF32, {2, 3});  // Static: cannot become [2, 4].
  EXPECT_THAT(linear(input, weight, nullptr, small_out),
              ErrorIs(Error::kInvalidArgument,
                      "argument 'out' with shape [2, 3] cannot be resized to [2,"));

  KernelArgs wrong_tag{input.evalue(), EValue(int64_t{3}), EValue(), out2.evalue(), EValue()};
  const Status tag = run_kernel(&linear_out, "aten::linear.out", wrong_tag);
  EXPECT_THAT(tag, ErrorIs(Error::kInvalidType, "'weight'"));
}

}  // namespace
}  // namespace torchlight::optimized
