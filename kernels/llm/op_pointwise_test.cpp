// torchlight::silu.out and torchlight::rms_norm.out against double-precision
// references (pointwise_test_util.h): every instruction-set build of the loops on its
// own (odd lengths around the vector and block widths; +-0, +-inf, NaN,
// subnormals, large |x|), then the kernels at 1 and 2 pool threads over
// 1, 3, 5, 7 and 129 rows, and every bad input, which must fail naming the
// argument. (python/tests/llm/test_fused_pointwise.py checks the same
// operators against torch, through exported programs.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
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

TEST(PointwiseVariantsTest, GenericIsAlwaysLastAndBestIsFirst) {
  const auto variants = all_variants();
  ASSERT_FALSE(variants.empty());
  EXPECT_STREQ(variants.back()->name, "generic");
  EXPECT_EQ(&best_pointwise_variant(), variants.front());
}

TEST(PointwiseLoopsTest, SiluWithinThreeUlpsOverTheFloatRange) {
  std::vector<float> x = random_floats(4099, 1, 30.0);
  const std::vector<float> wide = random_floats(1000, 2, 120.0);
  x.insert(x.end(), wide.begin(), wide.end());
  for (float s : special_values()) x.push_back(s);
  // Every exponent from subnormal to the largest, both signs.
  for (int e = -149; e <= 127; ++e) {
    x.push_back(std::ldexp(1.37f, e));
    x.push_back(-std::ldexp(1.37f, e));
  }
  for (const PointwiseVariant* v : all_variants()) {
    SCOPED_TRACE(v->name);
    std::vector<float> y(x.size());
    v->silu(x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_TRUE(within_ulps(y[i], silu_reference(x[i]), 3.0)) << "x = " << x[i];
    }
  }
}

TEST(PointwiseLoopsTest, SiluSpecialValuesInEveryLaneAndLength) {
  // Lengths around the vector and block widths, a special value at every
  // position, so vector lanes, block checks and tails all meet one.
  const std::vector<float> specials = special_values();
  for (const PointwiseVariant* v : all_variants()) {
    SCOPED_TRACE(v->name);
    for (int n : {1, 3, 5, 7, 8, 15, 16, 17, 31, 33, 64, 65, 129}) {
      for (int at = 0; at < n; at += (n > 17 ? 5 : 1)) {
        for (float s : {-kInf, kNaN, -100.0f, kInf}) {
          std::vector<float> x = random_floats(static_cast<size_t>(n), n * 131 + at, 10.0);
          x[static_cast<size_t>(at)] = s;
          std::vector<float> y(x.size());
          v->silu(x.data(), y.data(), n);
          for (int i = 0; i < n; ++i) {
            ASSERT_TRUE(within_ulps(y[i], silu_reference(x[i]), 3.0))
                << "n = " << n << ", special " << s << " at " << at << ", element " << i;
          }
        }
      }
    }
  }
}

TEST(PointwiseLoopsTest, SiluInPlace) {
  std::vector<float> x = random_floats(67, 3, 8.0);
  const std::vector<float> original = x;
  best_pointwise_variant().silu(x.data(), x.data(), 67);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(within_ulps(x[i], silu_reference(original[i]), 3.0));
  }
}

TEST(PointwiseLoopsTest, RmsNormMatchesDoubleReference) {
  for (const PointwiseVariant* v : all_variants()) {
    SCOPED_TRACE(v->name);
    for (int dim : {1, 3, 7, 8, 16, 17, 33, 288}) {
      for (int rows : {1, 3, 5}) {
        const std::vector<float> x = random_floats(static_cast<size_t>(rows * dim), dim, 3.0);
        const std::vector<float> w = random_floats(static_cast<size_t>(dim), dim + 1, 2.0);
        std::vector<float> y(x.size());
        v->rms_norm(x.data(), dim, w.data(), y.data(), dim, rows, dim, 1e-5f);
        const std::vector<double> expected = rms_norm_reference(x, w, rows, dim, 1e-5);
        for (size_t i = 0; i < y.size(); ++i) {
          ASSERT_NEAR(y[i], expected[i], 1e-5 * std::max(1.0, std::fabs(expected[i])))
              << "dim " << dim << ", rows " << rows << ", element " << i;
        }
      }
    }
  }
}

TEST(PointwiseLoopsTest, RmsNormZeroRowIsZeroAndInfinityGivesNaN) {
  for (const PointwiseVariant* v : all_variants()) {
    SCOPED_TRACE(v->name);
    const std::vector<float> w(9, 1.5f);
    std::vector<float> x(18, 0.0f);
    x[9 + 4] = kInf;  // Row 1: inf * rsqrt(inf) = inf * 0, finite * 0 = 0, as the chain gives.
    std::vector<float> y(18, 7.0f);
    v->rms_norm(x.data(), 9, w.data(), y.data(), 9, 2, 9, 1e-6f);
    for (int d = 0; d < 9; ++d) EXPECT_EQ(y[d], 0.0f) << d;
    EXPECT_TRUE(std::isnan(y[9 + 4]));
    EXPECT_EQ(y[9], 0.0f);
  }
}

// The kernels through the runtime's call path, at 1 and 2 pool threads.
class PointwiseKernelTest : public PoolThreadsTest {};

INSTANTIATE_TEST_SUITE_P(Threads, PointwiseKernelTest, kPoolThreads, pool_threads_name);

TEST_P(PointwiseKernelTest, SiluOverOddRowCounts) {
  for (int rows : {1, 3, 5, 7, 129}) {
    for (int width : {1, 7, 768}) {
      const std::vector<float> x = random_floats(static_cast<size_t>(rows * width), rows, 12.0);
      TestTensor input(kF32, {rows, width}, to_doubles(x));
      TestTensor out(kF32, {rows, width});
      KernelArgs args{input.evalue(), out.evalue(), EValue()};
      const Status status = run_kernel(&silu_out, "torchlight::silu.out", args);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_EQ(args[2].to_tensor().impl(), out.tensor().impl());
      const std::vector<double> y = out.values();
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_TRUE(within_ulps(static_cast<float>(y[i]), silu_reference(x[i]), 3.0))
            << rows << " x " << width << ", element " << i;
      }
    }
  }
}

TEST_P(PointwiseKernelTest, RmsNormOverOddRowCounts) {
  for (int rows : {1, 3, 5, 7, 129}) {
    for (int dim : {5, 288}) {
      const std::vector<float> x = random_floats(static_cast<size_t>(rows * dim), rows + dim, 4.0);
      const std::vector<float> w = random_floats(static_cast<size_t>(dim), dim, 1.0);
      TestTensor input(kF32, {1, rows, dim}, to_doubles(x));
      TestTensor weight(kF32, {dim}, to_doubles(w));
      TestTensor out(kF32, {1, rows, dim});
      KernelArgs args{input.evalue(), weight.evalue(), EValue(1e-5), out.evalue(), EValue()};
      const Status status = run_kernel(&rms_norm_out, "torchlight::rms_norm.out", args);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_EQ(args[4].to_tensor().impl(), out.tensor().impl());
      const std::vector<double> expected = rms_norm_reference(x, w, rows, dim, 1e-5);
      const std::vector<double> y = out.values();
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_NEAR(y[i], expected[i], 1e-5 * std::max(1.0, std::fabs(expected[i])))
            << rows << " rows of " << dim << ", element " << i;
      }
    }
  }
}

// Prefill sizes (stories15m: 128 x 288 for rms_norm, [1, 6, T, 24, 2] for
// rope) split over the pool: the same bytes as on one thread.
TEST_P(PointwiseKernelTest, PrefillSizesMatchOneThreadBitForBit) {
  for (int rows : {63, 65, 128, 129}) {
    const int dim = 288;
    const std::vector<float> x = random_floats(static_cast<size_t>(rows * dim), rows, 4.0);
    const std::vector<float> w = random_floats(static_cast<size_t>(dim), dim, 1.0);
    const std::vector<float> c = random_floats(static_cast<size_t>(rows * 24), rows + 1, 1.0);
    const std::vector<float> s = random_floats(static_cast<size_t>(rows * 24), rows + 2, 1.0);
    auto run = [&](size_t threads, std::vector<double>* norm, std::vector<double>* rope) {
      threadpool::set_num_threads(threads);
      TestTensor input(kF32, {1, rows, dim}, to_doubles(x));
      TestTensor weight(kF32, {dim}, to_doubles(w));
      TestTensor out(kF32, {1, rows, dim});
      KernelArgs args{input.evalue(), weight.evalue(), EValue(1e-5), out.evalue(), EValue()};
      ASSERT_TRUE(run_kernel(&rms_norm_out, "torchlight::rms_norm.out", args).ok());
      *norm = out.values();
      TestTensor pairs(kF32, {1, 6, rows, 24, 2}, to_doubles(x));
      TestTensor cos(kF32, {rows, 24}, to_doubles(c));
      TestTensor sin(kF32, {rows, 24}, to_doubles(s));
      TestTensor rotated(kF32, {1, 6, rows, 24, 2});
      KernelArgs rope_args{pairs.evalue(), cos.evalue(), sin.evalue(), rotated.evalue(), EValue()};
      ASSERT_TRUE(run_kernel(&rope_out, "torchlight::rope.out", rope_args).ok());
      *rope = rotated.values();
    };
    std::vector<double> norm_one, rope_one, norm, rope;
    run(1, &norm_one, &rope_one);
    run(GetParam(), &norm, &rope);
    ASSERT_EQ(norm.size(), norm_one.size());
    for (size_t i = 0; i < norm.size(); ++i) ASSERT_EQ(norm[i], norm_one[i]) << rows << " rows, " << i;
    ASSERT_EQ(rope.size(), rope_one.size());
    for (size_t i = 0; i < rope.size(); ++i) ASSERT_EQ(rope[i], rope_one[i]) << rows << " rows, " << i;
    const std::vector<double> expected = rms_norm_reference(x, w, rows, dim, 1e-5);
    for (size_t i = 0; i < norm.size(); ++i) {
      ASSERT_NEAR(norm[i], expected[i], 1e-5 * std::max(1.0, std::fabs(expected[i])));
    }
  }
}

TEST(PointwiseKernelErrorsTest, SiluRejectsOtherDtypes) {
  TestTensor input(ScalarType::kDouble, {4});
  TestTensor out(kF32, {4});
  KernelArgs args{input.evalue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&silu_out, "torchlight::silu.out", args),
              ErrorIs(Error::kInvalidType, "argument 'input' has dtype"));
}

TEST(PointwiseKernelErrorsTest, SiluRejectsAStridedInput) {
  TestTensor input(kF32, {3, 4}, {}, strides({1, 3}));
  TestTensor out(kF32, {3, 4});
  KernelArgs args{input.evalue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&silu_out, "torchlight::silu.out", args),
              ErrorIs(Error::kInvalidArgument, "argument 'input' has stride"));
}

TEST(PointwiseKernelErrorsTest, SiluRejectsAnOutOfAnotherShape) {
  TestTensor input(kF32, {3, 4});
  TestTensor out(kF32, {3, 5});  // Static: cannot be resized.
  KernelArgs args{input.evalue(), out.evalue(), EValue()};
  EXPECT_FALSE(run_kernel(&silu_out, "torchlight::silu.out", args).ok());
}

TEST(PointwiseKernelErrorsTest, RmsNormRejectsAWeightOfAnotherSize) {
  TestTensor input(kF32, {2, 8});
  TestTensor weight(kF32, {7});
  TestTensor out(kF32, {2, 8});
  KernelArgs args{input.evalue(), weight.evalue(), EValue(1e-5), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&rms_norm_out, "torchlight::rms_norm.out", args),
              ErrorIs(Error::kInvalidArgument, "argument 'weight' has 7 elements, expected D = 8"));
}

TEST(PointwiseKernelErrorsTest, RmsNormRejectsARank2Weight) {
  TestTensor input(kF32, {2, 8});
  TestTensor weight(kF32, {1, 8});
  TestTensor out(kF32, {2, 8});
  KernelArgs args{input.evalue(), weight.evalue(), EValue(1e-5), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&rms_norm_out, "torchlight::rms_norm.out", args),
              ErrorIs(Error::kInvalidArgument, "weight"));
}

TEST(PointwiseKernelErrorsTest, RmsNormRejectsOtherDtypes) {
  TestTensor input(kF32, {2, 8});
  TestTensor weight(ScalarType::kDouble, {8});
  TestTensor out(kF32, {2, 8});
  KernelArgs args{input.evalue(), weight.evalue(), EValue(1e-5), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&rms_norm_out, "torchlight::rms_norm.out", args),
              ErrorIs(Error::kInvalidType, "argument 'weight' has dtype"));
}

TEST(PointwiseKernelErrorsTest, RmsNormRejectsAStridedInput) {
  TestTensor input(kF32, {2, 8}, {}, strides({1, 2}));
  TestTensor weight(kF32, {8});
  TestTensor out(kF32, {2, 8});
  KernelArgs args{input.evalue(), weight.evalue(), EValue(1e-5), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&rms_norm_out, "torchlight::rms_norm.out", args),
              ErrorIs(Error::kInvalidArgument, "argument 'input' has stride"));
}

}  // namespace
}  // namespace torchlight::llm

namespace torchlight::llm {
namespace {

// rope: pairs [B, H, T, P, 2] against the rotation in double.
TEST_P(PointwiseKernelTest, RopeOverOddRowCounts) {
  for (int rows : {1, 3, 5, 7, 129}) {
    const int heads = 3;
    const int pairs = 5;
    const std::vector<float> x =
        random_floats(static_cast<size_t>(heads * rows * pairs * 2), rows, 4.0);
    const std::vector<float> c = random_floats(static_cast<size_t>(rows * pairs), rows + 1, 1.0);
    const std::vector<float> s = random_floats(static_cast<size_t>(rows * pairs), rows + 2, 1.0);
    TestTensor input(kF32, {1, heads, rows, pairs, 2}, to_doubles(x));
    TestTensor cos(kF32, {rows, pairs}, to_doubles(c));
    TestTensor sin(kF32, {rows, pairs}, to_doubles(s));
    TestTensor out(kF32, {1, heads, rows, pairs, 2});
    KernelArgs args{input.evalue(), cos.evalue(), sin.evalue(), out.evalue(), EValue()};
    const Status status = run_kernel(&rope_out, "torchlight::rope.out", args);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(args[4].to_tensor().impl(), out.tensor().impl());
    const std::vector<double> y = out.values();
    for (int h = 0; h < heads; ++h) {
      for (int t = 0; t < rows; ++t) {
        for (int p = 0; p < pairs; ++p) {
          const size_t i = ((static_cast<size_t>(h) * rows + t) * pairs + p) * 2;
          const double x0 = x[i];
          const double x1 = x[i + 1];
          const double ct = c[t * pairs + p];
          const double st = s[t * pairs + p];
          ASSERT_NEAR(y[i], x0 * ct - x1 * st, 1e-5 * std::max(1.0, std::fabs(x0 * ct - x1 * st)));
          ASSERT_NEAR(y[i + 1], x0 * st + x1 * ct,
                      1e-5 * std::max(1.0, std::fabs(x0 * st + x1 * ct)));
        }
      }
    }
  }
}

TEST(PointwiseKernelErrorsTest, RopeRejectsATableOfAnotherShape) {
  TestTensor input(kF32, {1, 2, 3, 4, 2});
  TestTensor cos(kF32, {3, 5});
  TestTensor sin(kF32, {3, 4});
  TestTensor out(kF32, {1, 2, 3, 4, 2});
  KernelArgs args{input.evalue(), cos.evalue(), sin.evalue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&rope_out, "torchlight::rope.out", args),
              ErrorIs(Error::kInvalidArgument, "argument 'cos' must be [T, P] = [3, 4]"));
}

TEST(PointwiseKernelErrorsTest, RopeRejectsPairsNotEndingInTwo) {
  TestTensor input(kF32, {2, 3, 4, 3});
  TestTensor cos(kF32, {3, 4});
  TestTensor sin(kF32, {3, 4});
  TestTensor out(kF32, {2, 3, 4, 3});
  KernelArgs args{input.evalue(), cos.evalue(), sin.evalue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&rope_out, "torchlight::rope.out", args),
              ErrorIs(Error::kInvalidArgument, "argument 'pairs' has last size 3, expected 2"));
}

TEST(PointwiseKernelErrorsTest, RopeRejectsRankTwoPairs) {
  TestTensor input(kF32, {4, 2});
  TestTensor cos(kF32, {1, 4});
  TestTensor sin(kF32, {1, 4});
  TestTensor out(kF32, {4, 2});
  KernelArgs args{input.evalue(), cos.evalue(), sin.evalue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&rope_out, "torchlight::rope.out", args),
              ErrorIs(Error::kInvalidArgument, "argument 'pairs' has rank 2"));
}

}  // namespace
}  // namespace torchlight::llm
