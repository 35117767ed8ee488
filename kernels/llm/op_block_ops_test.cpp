// torchlight::add_rms_norm.out and torchlight::swiglu.out: each equal bit for
// bit to the two calls it replaces (a float add then torchlight::rms_norm;
// torchlight::silu then a float multiply), on every instruction-set build of
// the loops and through the kernels at 1 and 2 pool threads (decode's one
// row, odd row counts, stories15m's prefill sizes), near double-precision
// references, and every bad input failing with the argument named.
// (python/tests/llm/test_llm_block_ops.py checks them against torch through
// exported Llama programs.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/llm/llm_kernels.h"
#include "kernels/llm/pointwise_loops.h"
#include "kernels/llm/pointwise_test_util.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::llm {
namespace {

using ::torchlight::testing::ErrorIs;
using portable::kernel_test::KernelArgs;
using portable::kernel_test::run_kernel;
using portable::kernel_test::strides;
using portable::kernel_test::TestTensor;
using namespace test_util;  // NOLINT: the shared helpers, by their short names

// Gate values that reach silu's libm path (below -87) in some blocks.
std::vector<float> gate_values(size_t n, uint64_t seed) {
  std::vector<float> x = random_floats(n, seed, 12.0);
  for (size_t i = 5; i < n; i += 97) x[i] = -100.0f;
  return x;
}

// The two calls swiglu replaces: silu over each run of `run` elements (all
// of them: one silu call), then the product.
std::vector<float> silu_then_mul(const PointwiseVariant& v, const std::vector<float>& gate,
                                 const float* up, size_t run) {
  std::vector<float> y(gate.size());
  for (size_t at = 0; at < y.size(); at += run) {
    v.silu(gate.data() + at, y.data() + at, static_cast<int64_t>(run));
  }
  for (size_t i = 0; i < y.size(); ++i) y[i] = y[i] * up[i];
  return y;
}

TEST(BlockOpsLoopsTest, SiluMulEqualsSiluThenMulBitForBit) {
  for (const PointwiseVariant* v : all_variants()) {
    SCOPED_TRACE(v->name);
    for (int n : {1, 3, 7, 8, 15, 16, 17, 63, 64, 65, 129, 768}) {
      std::vector<float> gate = gate_values(static_cast<size_t>(n), n);
      gate[0] = n % 2 ? kNaN : -kInf;
      const std::vector<float> up = random_floats(static_cast<size_t>(n), n + 7, 3.0);
      const std::vector<float> expected = silu_then_mul(*v, gate, up.data(), gate.size());
      std::vector<float> y(gate.size());
      v->silu_mul(gate.data(), up.data(), y.data(), n);
      for (int i = 0; i < n; ++i) {
        if (std::isnan(expected[i])) {
          ASSERT_TRUE(std::isnan(y[i])) << "n = " << n << ", element " << i;
        } else {
          ASSERT_EQ(y[i], expected[i]) << "n = " << n << ", element " << i;
        }
      }
    }
  }
}

TEST(BlockOpsLoopsTest, AddRmsNormEqualsAddThenRmsNormBitForBit) {
  for (const PointwiseVariant* v : all_variants()) {
    SCOPED_TRACE(v->name);
    for (int dim : {1, 3, 7, 16, 17, 33, 288}) {
      for (int rows : {1, 3}) {
        const size_t n = static_cast<size_t>(rows * dim);
        const std::vector<float> x = random_floats(n, dim, 3.0);
        const std::vector<float> h = random_floats(n, dim + 1, 3.0);
        const std::vector<float> w = random_floats(static_cast<size_t>(dim), dim + 2, 2.0);
        std::vector<float> sum(n), y(n), added(n), normed(n);
        v->add_rms_norm(x.data(), h.data(), w.data(), sum.data(), y.data(), rows, dim, 1e-5f);
        for (size_t i = 0; i < n; ++i) added[i] = x[i] + h[i];
        v->rms_norm(added.data(), dim, w.data(), normed.data(), dim, rows, dim, 1e-5f);
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(sum[i], added[i]) << "dim " << dim << ", element " << i;
          ASSERT_EQ(y[i], normed[i]) << "dim " << dim << ", element " << i;
        }
      }
    }
  }
}

TEST(BlockOpsLoopsTest, AddRmsNormWritesInPlaceOfItsInputs) {
  const PointwiseVariant& v = best_pointwise_variant();
  const std::vector<float> x = random_floats(2 * 40, 1, 3.0);
  const std::vector<float> h = random_floats(2 * 40, 2, 3.0);
  const std::vector<float> w = random_floats(40, 3, 2.0);
  std::vector<float> sum(x.size()), y(x.size());
  v.add_rms_norm(x.data(), h.data(), w.data(), sum.data(), y.data(), 2, 40, 1e-5f);
  std::vector<float> a = x;  // sum over input, out over residual
  std::vector<float> b = h;
  v.add_rms_norm(a.data(), b.data(), w.data(), a.data(), b.data(), 2, 40, 1e-5f);
  EXPECT_EQ(a, sum);
  EXPECT_EQ(b, y);
}

// The kernels through the runtime's call path, at 1 and 2 pool threads.
class BlockOpsKernelTest : public PoolThreadsTest {};

INSTANTIATE_TEST_SUITE_P(Threads, BlockOpsKernelTest, kPoolThreads, pool_threads_name);

// swiglu of [1, rows, width] gate and up, or of [1, rows, 2 width] halves.
std::vector<double> run_swiglu(int rows, int width, const std::vector<float>& gate,
                               const std::vector<float>* up) {
  const SizesType gate_width = up != nullptr ? width : 2 * width;
  TestTensor g(kF32, {1, rows, gate_width}, to_doubles(gate));
  TestTensor u(kF32, {1, rows, width}, up != nullptr ? to_doubles(*up) : std::vector<double>{});
  TestTensor out(kF32, {1, rows, width});
  KernelArgs args{g.evalue(), up != nullptr ? u.evalue() : EValue(), out.evalue(), EValue()};
  const Status status = run_kernel(&swiglu_out, "torchlight::swiglu.out", args);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(args[3].to_tensor().impl(), out.tensor().impl());
  return out.values();
}

// Each value bit for bit silu's over runs of `run` elements then a product,
// and within 4 ulp of silu(gate) * up in double (silu's 3, the product's 1).
void expect_swiglu(const std::vector<double>& y, const std::vector<float>& gate,
                   const std::vector<float>& up, size_t run, const std::string& where) {
  const std::vector<float> expected =
      silu_then_mul(best_pointwise_variant(), gate, up.data(), run);
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i) {
    ASSERT_EQ(static_cast<float>(y[i]), expected[i]) << where << ", element " << i;
    ASSERT_TRUE(within_ulps(static_cast<float>(y[i]), silu_reference(gate[i]) * up[i], 4.0))
        << where << ", element " << i;
  }
}

TEST_P(BlockOpsKernelTest, SwigluOfTwoTensors) {
  for (int rows : {1, 3, 5, 7, 129}) {
    for (int width : {1, 7, 768}) {
      const size_t n = static_cast<size_t>(rows * width);
      const std::vector<float> gate = gate_values(n, rows * 3 + width);
      const std::vector<float> up = random_floats(n, rows + width, 2.0);
      expect_swiglu(run_swiglu(rows, width, gate, &up), gate, up, n,
                    std::to_string(rows) + " x " + std::to_string(width));
    }
  }
}

TEST_P(BlockOpsKernelTest, SwigluOfAFusedW13sHalves) {
  for (int rows : {1, 3, 5, 7, 129}) {
    for (int width : {1, 7, 768}) {
      const std::vector<float> packed = gate_values(static_cast<size_t>(2 * rows * width), rows);
      std::vector<float> gate, up;
      for (int r = 0; r < rows; ++r) {
        const auto row = packed.begin() + 2 * r * width;
        gate.insert(gate.end(), row, row + width);
        up.insert(up.end(), row + width, row + 2 * width);
      }
      // silu per row: the old program's silu over the sliced [rows, width]
      // walked the same blocks when width is a multiple of 64 (stories'
      // 768), else within its 3 ulp of it.
      expect_swiglu(run_swiglu(rows, width, packed, nullptr), gate, up,
                    static_cast<size_t>(width),
                    std::to_string(rows) + " x 2 x " + std::to_string(width));
    }
  }
}

struct AddRmsNormResult {
  std::vector<double> sum, out;
};

AddRmsNormResult run_add_rms_norm(int rows, int dim, const std::vector<float>& x,
                                  const std::vector<float>& h, const std::vector<float>& w) {
  TestTensor input(kF32, {1, rows, dim}, to_doubles(x));
  TestTensor residual(kF32, {1, rows, dim}, to_doubles(h));
  TestTensor weight(kF32, {dim}, to_doubles(w));
  TestTensor sum(kF32, {1, rows, dim});
  TestTensor out(kF32, {1, rows, dim});
  KernelArgs args{input.evalue(), residual.evalue(), weight.evalue(), EValue(1e-5),
                  sum.evalue(),   out.evalue(),      EValue()};
  const Status status = run_kernel(&add_rms_norm_out, "torchlight::add_rms_norm.out", args);
  EXPECT_TRUE(status.ok()) << status.message();
  return {sum.values(), out.values()};
}

// rms_norm_out on the float sum: what the program computed before the fusion.
std::vector<double> add_then_rms_norm(int rows, int dim, const std::vector<float>& x,
                                      const std::vector<float>& h, const std::vector<float>& w) {
  std::vector<double> added(x.size());
  for (size_t i = 0; i < x.size(); ++i) added[i] = static_cast<float>(x[i] + h[i]);
  TestTensor input(kF32, {1, rows, dim}, added);
  TestTensor weight(kF32, {dim}, to_doubles(w));
  TestTensor out(kF32, {1, rows, dim});
  KernelArgs args{input.evalue(), weight.evalue(), EValue(1e-5), out.evalue(), EValue()};
  EXPECT_TRUE(run_kernel(&rms_norm_out, "torchlight::rms_norm.out", args).ok());
  return out.values();
}

TEST_P(BlockOpsKernelTest, AddRmsNormEqualsAddThenRmsNorm) {
  for (int rows : {1, 3, 5, 7, 63, 65, 128, 129}) {
    for (int dim : {5, 288}) {
      const size_t n = static_cast<size_t>(rows * dim);
      const std::vector<float> x = random_floats(n, rows + dim, 4.0);
      const std::vector<float> h = random_floats(n, rows * dim, 4.0);
      const std::vector<float> w = random_floats(static_cast<size_t>(dim), dim, 1.0);
      const AddRmsNormResult got = run_add_rms_norm(rows, dim, x, h, w);
      const std::vector<double> normed = add_then_rms_norm(rows, dim, x, h, w);
      std::vector<float> added(n);
      for (size_t i = 0; i < n; ++i) added[i] = x[i] + h[i];
      const std::vector<double> reference = rms_norm_reference(added, w, rows, dim, 1e-5);
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(got.sum[i], static_cast<double>(added[i])) << rows << " x " << dim << ", " << i;
        ASSERT_EQ(got.out[i], normed[i]) << rows << " x " << dim << ", element " << i;
        ASSERT_NEAR(got.out[i], reference[i], 1e-5 * std::max(1.0, std::fabs(reference[i])));
      }
    }
  }
}

TEST(BlockOpsKernelErrorsTest, AddRmsNormRejectsAResidualOfOtherSizes) {
  TestTensor input(kF32, {2, 8});
  TestTensor residual(kF32, {1, 8});
  TestTensor weight(kF32, {8});
  TestTensor sum(kF32, {2, 8});
  TestTensor out(kF32, {2, 8});
  KernelArgs args{input.evalue(), residual.evalue(), weight.evalue(), EValue(1e-5),
                  sum.evalue(),   out.evalue(),      EValue()};
  EXPECT_THAT(run_kernel(&add_rms_norm_out, "torchlight::add_rms_norm.out", args),
              ErrorIs(Error::kInvalidArgument,
                      "argument 'residual' has sizes [1, 8], expected the sizes of 'input'"));
}

TEST(BlockOpsKernelErrorsTest, AddRmsNormRejectsAWeightOfAnotherSize) {
  TestTensor input(kF32, {2, 8});
  TestTensor residual(kF32, {2, 8});
  TestTensor weight(kF32, {7});
  TestTensor sum(kF32, {2, 8});
  TestTensor out(kF32, {2, 8});
  KernelArgs args{input.evalue(), residual.evalue(), weight.evalue(), EValue(1e-5),
                  sum.evalue(),   out.evalue(),      EValue()};
  EXPECT_THAT(run_kernel(&add_rms_norm_out, "torchlight::add_rms_norm.out", args),
              ErrorIs(Error::kInvalidArgument, "argument 'weight' has 7 elements, expected D = 8"));
}

TEST(BlockOpsKernelErrorsTest, AddRmsNormRejectsOtherDtypesAndStrides) {
  TestTensor input(kF32, {2, 8});
  TestTensor residual(ScalarType::kDouble, {2, 8});
  TestTensor strided(kF32, {2, 8}, {}, strides({1, 2}));
  TestTensor weight(kF32, {8});
  TestTensor sum(kF32, {2, 8});
  TestTensor out(kF32, {2, 8});
  KernelArgs wrong_dtype{input.evalue(), residual.evalue(), weight.evalue(), EValue(1e-5),
                         sum.evalue(),   out.evalue(),      EValue()};
  EXPECT_THAT(run_kernel(&add_rms_norm_out, "torchlight::add_rms_norm.out", wrong_dtype),
              ErrorIs(Error::kInvalidType, "argument 'residual' has dtype"));
  KernelArgs wrong_strides{input.evalue(), strided.evalue(), weight.evalue(), EValue(1e-5),
                           sum.evalue(),   out.evalue(),     EValue()};
  EXPECT_THAT(run_kernel(&add_rms_norm_out, "torchlight::add_rms_norm.out", wrong_strides),
              ErrorIs(Error::kInvalidArgument, "argument 'residual' has stride"));
}

TEST(BlockOpsKernelErrorsTest, AddRmsNormRejectsASumOfAnotherShape) {
  TestTensor input(kF32, {2, 8});
  TestTensor residual(kF32, {2, 8});
  TestTensor weight(kF32, {8});
  TestTensor sum(kF32, {2, 9});  // Static: cannot be resized.
  TestTensor out(kF32, {2, 8});
  KernelArgs args{input.evalue(), residual.evalue(), weight.evalue(), EValue(1e-5),
                  sum.evalue(),   out.evalue(),      EValue()};
  EXPECT_FALSE(run_kernel(&add_rms_norm_out, "torchlight::add_rms_norm.out", args).ok());
}

TEST(BlockOpsKernelErrorsTest, SwigluRejectsAnUpOfOtherSizes) {
  TestTensor gate(kF32, {2, 8});
  TestTensor up(kF32, {2, 4});
  TestTensor out(kF32, {2, 8});
  KernelArgs args{gate.evalue(), up.evalue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&swiglu_out, "torchlight::swiglu.out", args),
              ErrorIs(Error::kInvalidArgument,
                      "argument 'up' has sizes [2, 4], expected the sizes of 'gate'"));
}

TEST(BlockOpsKernelErrorsTest, SwigluWithoutUpRejectsAnOddLastSize) {
  TestTensor gate(kF32, {2, 7});
  TestTensor out(kF32, {2, 3});
  KernelArgs args{gate.evalue(), EValue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&swiglu_out, "torchlight::swiglu.out", args),
              ErrorIs(Error::kInvalidArgument, "argument 'gate' has rank 2 and last size 7"));
}

TEST(BlockOpsKernelErrorsTest, SwigluRejectsOtherDtypesStridesAndOuts) {
  TestTensor gate(kF32, {2, 8});
  TestTensor half_up(ScalarType::kHalf, {2, 8});
  TestTensor strided(kF32, {2, 8}, {}, strides({1, 2}));
  TestTensor out(kF32, {2, 8});
  TestTensor wrong_out(kF32, {2, 8});  // Without up the out is [2, 4]; static.
  KernelArgs wrong_dtype{gate.evalue(), half_up.evalue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&swiglu_out, "torchlight::swiglu.out", wrong_dtype),
              ErrorIs(Error::kInvalidType, "argument 'up' has dtype"));
  KernelArgs wrong_strides{strided.evalue(), gate.evalue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&swiglu_out, "torchlight::swiglu.out", wrong_strides),
              ErrorIs(Error::kInvalidArgument, "argument 'gate' has stride"));
  KernelArgs halves_into_full{gate.evalue(), EValue(), wrong_out.evalue(), EValue()};
  EXPECT_FALSE(run_kernel(&swiglu_out, "torchlight::swiglu.out", halves_into_full).ok());
}

}  // namespace
}  // namespace torchlight::llm
