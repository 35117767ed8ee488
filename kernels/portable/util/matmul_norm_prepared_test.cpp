// The prepared paths of the matrix products (mm, bmm, addmm, linear), the
// normalizations (native_layer_norm, native_group_norm) and the tiling
// copies (roll, repeat, unfold_copy, pixel_shuffle, pixel_unshuffle). Each
// prepare checks ranks, dtypes and fixed lists at load and installs an
// eval (for the dtype) that checks only a run's shapes: it leaves the outs
// exactly as the reference eval does (sizes and bytes, or the same error)
// over dtypes and layouts; what the program fixes is rejected at load
// naming the argument.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/prepared_vs_reference.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using kernel_test::dim_order;
using kernel_test::expect_prepared_matches_reference;
using kernel_test::IntListArg;
using kernel_test::OutSpec;
using kernel_test::prepare_status;
using kernel_test::TestTensor;
using kernel_test::with_outs;
using ::torchlight::testing::ErrorIs;

constexpr ScalarType kNumericDtypes[] = {
    ScalarType::kByte, ScalarType::kChar,  ScalarType::kShort,  ScalarType::kInt,
    ScalarType::kLong, ScalarType::kHalf,  ScalarType::kFloat,  ScalarType::kDouble,
    ScalarType::kBFloat16};
constexpr ScalarType kFloatDtypes[] = {ScalarType::kHalf, ScalarType::kBFloat16, ScalarType::kFloat,
                                       ScalarType::kDouble};

std::vector<double> ramp(size_t n, double scale = 1) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (static_cast<double>((i * 5) % 13) - 6) * scale;
  return v;
}

TEST(MatmulPreparedTest, ProductsMatchTheReference) {
  for (ScalarType dtype : kNumericDtypes) {
    SCOPED_TRACE(to_string(dtype));
    TestTensor a(dtype, {3, 4}, ramp(12));
    TestTensor b(dtype, {4, 5}, ramp(20));
    TestTensor b_last(dtype, {4, 5}, ramp(20), kernel_test::strides({1, 4}));
    TestTensor wrong(dtype, {3, 5}, ramp(15));  // Inner sizes differ: the reference's error.
    TestTensor batch_a(dtype, {2, 3, 4}, ramp(24));
    TestTensor batch_b(dtype, {2, 4, 5}, ramp(40));
    TestTensor bias(dtype, {5}, ramp(5));
    TestTensor weight(dtype, {5, 4}, ramp(20));
    for (TestTensor* rhs : {&b, &b_last, &wrong}) {
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::mm.out", with_outs({a.evalue(), rhs->evalue()}, {{dtype, {3, 5}}})));
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::addmm.out", with_outs({bias.evalue(), a.evalue(), rhs->evalue(), EValue(int64_t{2}),
                                        EValue(int64_t{1})},
                                       {{dtype, {3, 5}}})));
    }
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::bmm.out", with_outs({batch_a.evalue(), batch_b.evalue()}, {{dtype, {2, 3, 5}}})));
    for (const EValue& b_arg : {bias.evalue(), EValue()}) {
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::linear.out", with_outs({a.evalue(), weight.evalue(), b_arg}, {{dtype, {3, 5}}})));
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::linear.out",
          with_outs({batch_a.evalue(), weight.evalue(), b_arg}, {{dtype, {2, 3, 5}}})));
    }
  }
}

TEST(NormPreparedTest, LayerAndGroupNormMatchTheReference) {
  for (ScalarType dtype : kFloatDtypes) {
    // Parameters of the input's dtype, or float32 for a float16/bfloat16 input.
    for (ScalarType param : {dtype, ScalarType::kFloat}) {
      if (param != dtype && dtype != ScalarType::kHalf && dtype != ScalarType::kBFloat16) continue;
      SCOPED_TRACE(std::string(to_string(dtype)) + " params " + to_string(param));
      TestTensor input(dtype, {2, 3, 4}, ramp(24, 0.25));
      TestTensor last(dtype, {2, 4, 3, 2}, ramp(48, 0.5), dim_order({0, 2, 3, 1}));
      TestTensor weight(param, {3, 4}, ramp(12, 0.5));
      TestTensor bias(param, {3, 4}, ramp(12, 0.125));
      IntListArg shape({3, 4});
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::native_layer_norm.out",
          with_outs({input.evalue(), shape.evalue(), weight.evalue(), bias.evalue(), EValue(1e-5)},
                    {{dtype, {2, 3, 4}}, {param, {2, 1, 1}}, {param, {2, 1, 1}}})));
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::native_layer_norm.out",
          with_outs({input.evalue(), shape.evalue(), EValue(), EValue(), EValue(1e-5)},
                    {{dtype, {2, 3, 4}}, {dtype, {2, 1, 1}}, {dtype, {2, 1, 1}}})));
      TestTensor channel_weight(param, {4}, ramp(4, 0.5));
      TestTensor channel_bias(param, {4}, ramp(4, 0.25));
      for (int64_t groups : {1, 2, 4, 3}) {  // 3 does not divide C: the reference's error.
        EXPECT_TRUE(expect_prepared_matches_reference(
            "aten::native_group_norm.out",
            with_outs({last.evalue(), channel_weight.evalue(), channel_bias.evalue(),
                       EValue(int64_t{2}), EValue(int64_t{4}), EValue(int64_t{6}), EValue(groups),
                       EValue(1e-5)},
                      {{dtype, {2, 4, 3, 2}}, {param, {2, 4}}, {param, {2, 4}}})));
      }
    }
  }
}

TEST(TilingPreparedTest, RollRepeatUnfoldAndShuffleMatchTheReference) {
  for (ScalarType dtype : kNumericDtypes) {
    SCOPED_TRACE(to_string(dtype));
    TestTensor cube(dtype, {2, 3, 4}, ramp(24));
    TestTensor stacked(dtype, {1, 8, 2, 3}, ramp(48), dim_order({0, 2, 3, 1}));
    IntListArg shifts({1, -2});
    IntListArg dims({0, -1});
    IntListArg one_shift({5});
    IntListArg no_dims({});
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::roll.out", with_outs({cube.evalue(), shifts.evalue(), dims.evalue()}, {{dtype, {2, 3, 4}}})));
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::roll.out", with_outs({cube.evalue(), one_shift.evalue(), no_dims.evalue()}, {{dtype, {2, 3, 4}}})));
    IntListArg repeats({2, 1, 1, 2});
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::repeat.out", with_outs({cube.evalue(), repeats.evalue()}, {{dtype, {2, 2, 3, 8}}})));
    for (int64_t size : {2, 4, 5}) {  // 5: larger than the dim, the reference's error.
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::unfold_copy.out", with_outs({cube.evalue(), EValue(int64_t{-1}), EValue(size), EValue(int64_t{1})},
                                             {{dtype, {2, 3, 4, 5}}})));
    }
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::pixel_shuffle.out", with_outs({stacked.evalue(), EValue(int64_t{2})}, {{dtype, {1, 2, 4, 6}}})));
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::pixel_unshuffle.out", with_outs({stacked.evalue(), EValue(int64_t{2})}, {{dtype, {1, 32, 1, 2}}})));
  }
}

TEST(MatmulNormTilingPreparedTest, LoadRejectsWhatTheProgramFixes) {
  TestTensor matrix(ScalarType::kFloat, {3, 4});
  TestTensor ints(ScalarType::kInt, {4, 5});
  TestTensor flags(ScalarType::kBool, {3, 4});
  TestTensor cube(ScalarType::kFloat, {2, 3, 4});
  TestTensor vec(ScalarType::kFloat, {4});
  IntListArg shape({3, 4});
  IntListArg bad_shape({5});
  IntListArg two({1, 1});
  IntListArg one({1});
  const OutSpec f32{ScalarType::kFloat, {3, 5}};
  EXPECT_THAT(prepare_status("aten::mm.out", with_outs({cube.evalue(), matrix.evalue()}, {f32})),
              ErrorIs(Error::kInvalidArgument, "'self'"));
  EXPECT_THAT(prepare_status("aten::mm.out", with_outs({matrix.evalue(), ints.evalue()}, {f32})),
              ErrorIs(Error::kInvalidType, "argument 'mat2' has dtype int32, expected float32"));
  EXPECT_THAT(prepare_status("aten::mm.out", with_outs({flags.evalue(), flags.evalue()},
                                                       {{ScalarType::kBool, {3, 3}}})),
              ErrorIs(Error::kInvalidType, "argument 'self' has dtype bool, which is not supported"));
  EXPECT_THAT(prepare_status("aten::bmm.out", with_outs({matrix.evalue(), matrix.evalue()}, {f32})),
              ErrorIs(Error::kInvalidArgument, "'self'"));
  EXPECT_THAT(prepare_status("aten::addmm.out",
                             with_outs({ints.evalue(), matrix.evalue(), matrix.evalue(),
                                        EValue(int64_t{1}), EValue(int64_t{1})},
                                       {f32})),
              ErrorIs(Error::kInvalidType, "argument 'self' has dtype int32, expected float32"));
  EXPECT_THAT(prepare_status("aten::linear.out",
                             with_outs({matrix.evalue(), vec.evalue(), EValue()}, {f32})),
              ErrorIs(Error::kInvalidArgument, "'weight'"));
  EXPECT_THAT(prepare_status("aten::linear.out",
                             with_outs({matrix.evalue(), matrix.evalue(), EValue()},
                                       {{ScalarType::kDouble, {3, 3}}})),
              ErrorIs(Error::kInvalidType, "argument 'out' has dtype float64, expected float32"));
  EXPECT_THAT(prepare_status("aten::native_layer_norm.out",
                             with_outs({cube.evalue(), shape.evalue(), vec.evalue(), EValue(), EValue(1e-5)},
                                       {{ScalarType::kFloat, {2, 3, 4}}, {ScalarType::kFloat, {2, 1, 1}},
                                        {ScalarType::kFloat, {2, 1, 1}}})),
              ErrorIs(Error::kInvalidArgument, "argument 'weight' has shape [4], expected [3, 4]"));
  EXPECT_THAT(prepare_status("aten::native_layer_norm.out",
                             with_outs({ints.evalue(), bad_shape.evalue(), EValue(), EValue(), EValue(1e-5)},
                                       {{ScalarType::kInt, {4, 5}}, {ScalarType::kInt, {4, 1}},
                                        {ScalarType::kInt, {4, 1}}})),
              ErrorIs(Error::kInvalidType, "'input'"));
  EXPECT_THAT(prepare_status("aten::native_group_norm.out",
                             with_outs({cube.evalue(), EValue(), EValue(), EValue(int64_t{2}),
                                        EValue(int64_t{3}), EValue(int64_t{4}), EValue(int64_t{1}),
                                        EValue(1e-5)},
                                       {{ScalarType::kDouble, {2, 3, 4}}, {ScalarType::kFloat, {2, 1}},
                                        {ScalarType::kFloat, {2, 1}}})),
              ErrorIs(Error::kInvalidType, "argument 'out0' has dtype float64, expected float32"));
  EXPECT_THAT(prepare_status("aten::roll.out",
                             with_outs({cube.evalue(), two.evalue(), one.evalue()}, {{ScalarType::kFloat, {2, 3, 4}}})),
              ErrorIs(Error::kInvalidArgument, "must pair up"));
  EXPECT_THAT(prepare_status("aten::repeat.out",
                             with_outs({cube.evalue(), two.evalue()}, {{ScalarType::kFloat, {2, 3, 4}}})),
              ErrorIs(Error::kInvalidArgument, "argument 'repeats' has 2 entries; expected at least 3"));
  EXPECT_THAT(prepare_status("aten::unfold_copy.out",
                             with_outs({cube.evalue(), EValue(int64_t{3}), EValue(int64_t{1}), EValue(int64_t{1})},
                                       {{ScalarType::kFloat, {2, 3, 4, 1}}})),
              ErrorIs(Error::kInvalidArgument, "argument 'dimension' is 3, out of range"));
  EXPECT_THAT(prepare_status("aten::pixel_shuffle.out",
                             with_outs({matrix.evalue(), EValue(int64_t{2})}, {{ScalarType::kFloat, {3, 4}}})),
              ErrorIs(Error::kInvalidArgument, "expected at least 3 dimensions"));
  EXPECT_THAT(prepare_status("aten::pixel_unshuffle.out",
                             with_outs({cube.evalue(), EValue(int64_t{0})}, {{ScalarType::kFloat, {2, 3, 4}}})),
              ErrorIs(Error::kInvalidArgument, "argument 'downscale_factor' is 0"));
}

}  // namespace
}  // namespace torchlight::portable
