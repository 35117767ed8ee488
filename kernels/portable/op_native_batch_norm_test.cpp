// Normalization kernels: batch norm (all four variants, including the
// in-place running-stat update that the conformance harness cannot check),
// layer norm and group norm: hand-checked values, mixed dtypes, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

TEST(OpBatchNormTest, EvalUsesRunningStats) {
  TestTensor input(kF32, {1, 2, 2}, {1, 3, 10, 20});
  TestTensor weight(kF32, {2}, {2, 1});
  TestTensor bias(kF32, {2}, {0, 5});
  TestTensor mean(kF32, {2}, {1, 10});
  TestTensor var(kF32, {2}, {4, 1});
  TestTensor out(kF32, {1, 2, 2});
  TestTensor save_mean(kF32, {0});
  TestTensor save_invstd(kF32, {0});
  KernelArgs args{input.evalue(), weight.evalue(), bias.evalue(),    mean.evalue(),
                  var.evalue(),   EValue(0.1),     EValue(0.0),      out.evalue(),
                  save_mean.evalue(), save_invstd.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&native_batch_norm_legit_no_training_out,
                         "aten::_native_batch_norm_legit_no_training.out", args)
                  .ok());
  // (x - mean) / sqrt(var) * weight + bias.
  EXPECT_THAT(out.values(), ElementsAre(0, 2, 5, 15));
}

TEST(OpBatchNormTest, TrainingUpdatesRunningStatsInPlace) {
  // One channel, values 1..4: mean 2.5, biased var 1.25, unbiased 5/3.
  TestTensor input(kF32, {2, 1, 2}, {1, 2, 3, 4});
  TestTensor running_mean(kF32, {1}, {1});
  TestTensor running_var(kF32, {1}, {1});
  TestTensor out(kF32, {2, 1, 2});
  TestTensor save_mean(kF32, {1});
  TestTensor save_invstd(kF32, {1});
  KernelArgs args{input.evalue(),      EValue(),           EValue(),
                  running_mean.evalue(), running_var.evalue(), EValue(true),
                  EValue(0.25),        EValue(0.0),        out.evalue(),
                  save_mean.evalue(),  save_invstd.evalue(), EValue()};
  ASSERT_TRUE(
      run_kernel(&native_batch_norm_legit_out, "aten::_native_batch_norm_legit.out", args).ok());
  const double invstd = 1 / std::sqrt(1.25);
  EXPECT_THAT(save_mean.values(), ElementsAre(2.5));
  EXPECT_THAT(save_invstd.values(), ElementsAre(DoubleNear(invstd, 1e-6)));
  EXPECT_THAT(out.get(0), DoubleNear(-1.5 * invstd, 1e-6));
  // running = 0.75 * running + 0.25 * batch stat (unbiased variance).
  EXPECT_THAT(running_mean.values(), ElementsAre(DoubleNear(0.75 + 0.625, 1e-6)));
  EXPECT_THAT(running_var.values(), ElementsAre(DoubleNear(0.75 + 0.25 * 5.0 / 3.0, 1e-6)));
}

TEST(OpBatchNormTest, NoStatsUsesBatchStatistics) {
  TestTensor input(kF32, {1, 2, 2}, {1, 3, 4, 6});
  TestTensor out(kF32, {1, 2, 2});
  TestTensor save_mean(kF32, {2});
  TestTensor save_invstd(kF32, {2});
  KernelArgs args{input.evalue(), EValue(), EValue(), EValue(true), EValue(0.1), EValue(0.0),
                  out.evalue(), save_mean.evalue(), save_invstd.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&native_batch_norm_legit_no_stats_out,
                         "aten::_native_batch_norm_legit.no_stats_out", args)
                  .ok());
  EXPECT_THAT(out.values(), ElementsAre(-1, 1, -1, 1));
  EXPECT_THAT(save_mean.values(), ElementsAre(2, 5));
  EXPECT_THAT(save_invstd.values(), ElementsAre(1, 1));
}

TEST(OpBatchNormTest, Errors) {
  TestTensor input(kF32, {2, 3, 4});
  TestTensor mean(kF32, {4});
  TestTensor var(kF32, {3});
  TestTensor out(kF32, {2, 3, 4});
  TestTensor empty0(kF32, {0});
  TestTensor empty1(kF32, {0});
  KernelArgs args{input.evalue(), EValue(),       EValue(),      mean.evalue(),
                  var.evalue(),   EValue(0.1),    EValue(1e-5),  out.evalue(),
                  empty0.evalue(), empty1.evalue(), EValue()};
  Status s = run_kernel(&native_batch_norm_legit_no_training_out,
                        "aten::_native_batch_norm_legit_no_training.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::_native_batch_norm_legit_no_training.out: argument "
                         "'running_mean' has shape [4], expected [3]"));

  // float16 input with float16 weight but float32 running stats.
  TestTensor half(ScalarType::kHalf, {2, 3});
  TestTensor half_weight(ScalarType::kHalf, {3});
  TestTensor f_mean(kF32, {3});
  TestTensor f_var(kF32, {3});
  TestTensor half_out(ScalarType::kHalf, {2, 3});
  KernelArgs args2{half.evalue(), half_weight.evalue(), EValue(),     f_mean.evalue(),
                   f_var.evalue(), EValue(0.1),         EValue(1e-5), half_out.evalue(),
                   empty0.evalue(), empty1.evalue(),     EValue()};
  s = run_kernel(&native_batch_norm_legit_no_training_out,
                 "aten::_native_batch_norm_legit_no_training.out", args2);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType,
                         "argument 'running_mean' has dtype float32, expected float16"));

  TestTensor save_mean(kF32, {3});
  TestTensor save_invstd(kF32, {3});
  KernelArgs args3{input.evalue(), EValue(), EValue(), EValue(false), EValue(0.1), EValue(1e-5),
                   out.evalue(), save_mean.evalue(), save_invstd.evalue(), EValue()};
  s = run_kernel(&native_batch_norm_legit_no_stats_out,
                 "aten::_native_batch_norm_legit.no_stats_out", args3);
  EXPECT_THAT(s.message(), HasSubstr("'running_mean' and 'running_var' are required"));
}

TEST(OpLayerNormTest, NormalizesRowsWithMeanAndRstdOutputs) {
  TestTensor input(kF32, {2, 4}, {1, 2, 3, 4, 2, 2, 2, 2});
  TestTensor weight(kF32, {4}, {1, 1, 2, 2});
  TestTensor bias(kF32, {4}, {0, 0, 0, 1});
  TestTensor out(kF32, {2, 4});
  TestTensor mean(kF32, {2, 1});
  TestTensor rstd(kF32, {2, 1});
  IntListArg shape({4});
  KernelArgs args{input.evalue(), shape.evalue(), weight.evalue(), bias.evalue(), EValue(0.0),
                  out.evalue(), mean.evalue(), rstd.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&native_layer_norm_out, "aten::native_layer_norm.out", args).ok());
  const double r = 1 / std::sqrt(1.25);
  EXPECT_THAT(mean.values(), ElementsAre(2.5, 2));
  EXPECT_THAT(rstd.get(0), DoubleNear(r, 1e-6));
  EXPECT_TRUE(std::isinf(rstd.get(1)));
  EXPECT_THAT(out.get(0), DoubleNear(-1.5 * r, 1e-6));
  EXPECT_THAT(out.get(3), DoubleNear(1.5 * r * 2 + 1, 1e-6));
}

TEST(OpLayerNormTest, HalfInputWithFloatParamsGivesFloatStats) {
  TestTensor input(ScalarType::kHalf, {1, 2}, {1, 3});
  TestTensor weight(kF32, {2}, {1, 1});
  TestTensor out(ScalarType::kHalf, {1, 2});
  TestTensor mean(kF32, {1, 1});
  TestTensor rstd(kF32, {1, 1});
  IntListArg shape({2});
  KernelArgs args{input.evalue(), shape.evalue(), weight.evalue(), EValue(), EValue(0.0),
                  out.evalue(), mean.evalue(), rstd.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&native_layer_norm_out, "aten::native_layer_norm.out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(-1, 1));
  EXPECT_THAT(mean.values(), ElementsAre(2));

  TestTensor half_mean(ScalarType::kHalf, {1, 1});
  KernelArgs args2{input.evalue(), shape.evalue(), weight.evalue(), EValue(), EValue(0.0),
                   out.evalue(), half_mean.evalue(), rstd.evalue(), EValue()};
  Status s = run_kernel(&native_layer_norm_out, "aten::native_layer_norm.out", args2);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType,
                         "argument 'out1' has dtype float16, expected float32"));
}

TEST(OpLayerNormTest, ShapeErrors) {
  TestTensor input(kF32, {2, 3});
  TestTensor out(kF32, {2, 3});
  TestTensor mean(kF32, {2, 1});
  TestTensor rstd(kF32, {2, 1});
  IntListArg shape({4});
  KernelArgs args{input.evalue(), shape.evalue(), EValue(), EValue(), EValue(1e-5),
                  out.evalue(), mean.evalue(), rstd.evalue(), EValue()};
  Status s = run_kernel(&native_layer_norm_out, "aten::native_layer_norm.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::native_layer_norm.out: argument 'input' has shape "
                         "[2, 3], expected [*, 4] to match argument "
                         "'normalized_shape'"));
}

TEST(OpGroupNormTest, NormalizesEachGroup) {
  // N=1, C=2, HxW=2, 2 groups: each channel is its own group.
  TestTensor input(kF32, {1, 2, 2}, {1, 3, 10, 14});
  TestTensor weight(kF32, {2}, {1, 3});
  TestTensor bias(kF32, {2}, {0, 1});
  TestTensor out(kF32, {1, 2, 2});
  TestTensor mean(kF32, {1, 2});
  TestTensor rstd(kF32, {1, 2});
  KernelArgs args{input.evalue(), weight.evalue(), bias.evalue(), EValue(int64_t{1}),
                  EValue(int64_t{2}), EValue(int64_t{2}), EValue(int64_t{2}), EValue(0.0),
                  out.evalue(), mean.evalue(), rstd.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&native_group_norm_out, "aten::native_group_norm.out", args).ok());
  EXPECT_THAT(mean.values(), ElementsAre(2, 12));
  EXPECT_THAT(rstd.values(), ElementsAre(1, 0.5));
  EXPECT_THAT(out.values(), ElementsAre(-1, 1, -2, 4));
}

TEST(OpGroupNormTest, Errors) {
  TestTensor input(kF32, {2, 4, 3});
  TestTensor out(kF32, {2, 4, 3});
  TestTensor mean(kF32, {2, 3});
  TestTensor rstd(kF32, {2, 3});
  KernelArgs args{input.evalue(), EValue(), EValue(), EValue(int64_t{2}), EValue(int64_t{4}),
                  EValue(int64_t{3}), EValue(int64_t{3}), EValue(1e-5), out.evalue(),
                  mean.evalue(), rstd.evalue(), EValue()};
  Status s = run_kernel(&native_group_norm_out, "aten::native_group_norm.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::native_group_norm.out: argument 'group' is 3, "
                         "expected a positive divisor of 'C' = 4"));

  KernelArgs args2{input.evalue(), EValue(), EValue(), EValue(int64_t{2}), EValue(int64_t{4}),
                   EValue(int64_t{4}), EValue(int64_t{2}), EValue(1e-5), out.evalue(),
                   mean.evalue(), rstd.evalue(), EValue()};
  s = run_kernel(&native_group_norm_out, "aten::native_group_norm.out", args2);
  EXPECT_THAT(s.message(), HasSubstr("argument 'input' has shape [2, 4, 3] (24 elements), "
                                     "expected N * C * HxW = 2 * 4 * 4"));
}

}  // namespace
}  // namespace torchlight::portable
