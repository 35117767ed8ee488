// The prepared paths of the pooling kernels that had none (avg_pool1d,
// avg_pool3d, max_pool3d_with_indices, adaptive_avg_pool1d,
// _adaptive_avg_pool3d, adaptive_max_pool2d) and of the 2-D upsamplings:
// what prepare installs (one eval per dtype) leaves the outs exactly as the
// reference eval does (sizes and bytes, or the same error) over dtypes,
// ranks, layouts, lists and an input shape a dynamic dim changed after
// load; what the program fixes is rejected at load naming the argument,
// with the reference's reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/prepared_vs_reference.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::portable {
namespace {

using kernel_test::dim_order;
using kernel_test::dynamic_bound;
using kernel_test::DoubleListArg;
using kernel_test::expect_load_rejects_as_reference;
using kernel_test::expect_prepared_matches_reference;
using kernel_test::IntListArg;
using kernel_test::kAllDtypes;
using kernel_test::Layout;
using kernel_test::OutSpec;
using kernel_test::TestTensor;
using kernel_test::with_outs;

constexpr ScalarType kF32 = ScalarType::kFloat;
constexpr ScalarType kI64 = ScalarType::kLong;

// Values with ties, negatives, and NaN where the dtype has it.
std::vector<double> mixed(ScalarType dtype, size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7) % 13) - 5.25;
  if (is_floating_point(dtype) && n > 9) v[9] = NAN;
  return v;
}

size_t count(const std::vector<SizesType>& sizes) {
  size_t n = 1;
  for (SizesType s : sizes) n *= static_cast<size_t>(s);
  return n;
}

// A bound for any pooled or upsampled out of these tests: 16 per spatial dim.
std::vector<SizesType> bound_like(const std::vector<SizesType>& in, size_t spatial) {
  std::vector<SizesType> b = in;
  for (size_t d = in.size() - spatial; d < in.size(); ++d) b[d] = 16;
  return b;
}

bool avg_pool_dtype(ScalarType t, bool reduced) {
  return t == kF32 || t == ScalarType::kDouble || t == kI64 ||
         (reduced && (t == ScalarType::kHalf || t == ScalarType::kBFloat16));
}

// Inputs of one rank in the contiguous and the channels-last order.
struct Inputs {
  Inputs(ScalarType dtype, std::vector<SizesType> sizes, std::vector<DimOrderType> last)
      : dense(dtype, sizes, mixed(dtype, count(sizes))),
        channels_last(dtype, sizes, mixed(dtype, count(sizes)), dim_order(last)),
        unbatched(dtype, std::vector<SizesType>(sizes.begin() + 1, sizes.end()),
                  mixed(dtype, count(sizes) / static_cast<size_t>(sizes[0]))) {}
  TestTensor dense;
  TestTensor channels_last;
  TestTensor unbatched;
};

TEST(PoolPreparedTest, ThreeDimensionalPoolsMatchTheReference) {
  struct Case {
    std::vector<int64_t> kernel, stride, padding, dilation;
    bool ceil;
  };
  const Case cases[] = {{{2, 2, 2}, {}, {0}, {1}, false},
                        {{3}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, true},
                        {{2, 3, 2}, {2}, {1, 0, 1}, {1, 2, 1}, false}};
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    Inputs in(dtype, {2, 3, 4, 5, 6}, {0, 2, 3, 4, 1});
    for (TestTensor* self : {&in.dense, &in.channels_last, &in.unbatched}) {
      const std::vector<SizesType> bound = bound_like(self->sizes(), 3);
      for (const Case& c : cases) {
        IntListArg k(c.kernel), s(c.stride), p(c.padding), d(c.dilation);
        auto max_call = with_outs({self->evalue(), k.evalue(), s.evalue(), p.evalue(), d.evalue(),
                                   EValue(c.ceil)},
                                  {{dtype, bound}, {kI64, bound}});
        if (dtype == ScalarType::kBool) {
          expect_load_rejects_as_reference("aten::max_pool3d_with_indices.out", max_call,
                                           Error::kInvalidType, "argument 'self' has dtype bool");
        } else {
          EXPECT_TRUE(expect_prepared_matches_reference("aten::max_pool3d_with_indices.out",
                                                        max_call));
        }
        for (bool include_pad : {false, true}) {
          for (EValue divisor : {EValue(), EValue(int64_t{3})}) {
            auto avg_call = with_outs({self->evalue(), k.evalue(), s.evalue(), p.evalue(),
                                       EValue(c.ceil), EValue(include_pad), divisor},
                                      {{dtype, bound}});
            if (avg_pool_dtype(dtype, /*reduced=*/false)) {
              EXPECT_TRUE(expect_prepared_matches_reference("aten::avg_pool3d.out", avg_call));
            } else {
              expect_load_rejects_as_reference("aten::avg_pool3d.out", avg_call,
                                               Error::kInvalidType, "argument 'self' has dtype");
            }
          }
        }
      }
      IntListArg output_size({3, 2, 4});
      auto adaptive = with_outs({self->evalue(), output_size.evalue()}, {{dtype, bound}});
      if (is_floating_point(dtype)) {
        EXPECT_TRUE(expect_prepared_matches_reference("aten::_adaptive_avg_pool3d.out", adaptive));
      } else {
        expect_load_rejects_as_reference("aten::_adaptive_avg_pool3d.out", adaptive,
                                         Error::kInvalidType, "argument 'self' has dtype");
      }
    }
  }
}

TEST(PoolPreparedTest, OneDimensionalPoolsAndAdaptiveMaxMatchTheReference) {
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    TestTensor rows(dtype, {2, 3, 9}, mixed(dtype, 54));
    TestTensor strided(dtype, {2, 3, 9}, mixed(dtype, 54), dim_order({2, 0, 1}));
    TestTensor plane(dtype, {3, 9}, mixed(dtype, 27));
    for (TestTensor* self : {&rows, &strided, &plane}) {
      const std::vector<SizesType> bound = bound_like(self->sizes(), 1);
      for (int64_t stride : {0, 2}) {
        for (bool flag : {false, true}) {
          IntListArg k({3}), s(stride == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{stride}),
              p({flag ? 1 : 0});
          auto call = with_outs({self->evalue(), k.evalue(), s.evalue(), p.evalue(), EValue(flag),
                                 EValue(!flag)},
                                {{dtype, bound}});
          if (avg_pool_dtype(dtype, /*reduced=*/true)) {
            EXPECT_TRUE(expect_prepared_matches_reference("aten::avg_pool1d.out", call));
          } else {
            expect_load_rejects_as_reference("aten::avg_pool1d.out", call, Error::kInvalidType,
                                             "argument 'self' has dtype");
          }
        }
      }
      for (int64_t length : {1, 4, 9, 13}) {
        IntListArg output_size({length});
        auto call = with_outs({self->evalue(), output_size.evalue()}, {{dtype, bound}});
        if (is_floating_point(dtype)) {
          EXPECT_TRUE(expect_prepared_matches_reference("aten::adaptive_avg_pool1d.out", call));
        } else {
          expect_load_rejects_as_reference("aten::adaptive_avg_pool1d.out", call,
                                           Error::kInvalidType, "argument 'self' has dtype");
        }
      }
    }
    Inputs in(dtype, {2, 3, 7, 9}, {0, 2, 3, 1});
    for (TestTensor* self : {&in.dense, &in.channels_last, &in.unbatched}) {
      const std::vector<SizesType> bound = bound_like(self->sizes(), 2);
      IntListArg output_size({3, 4});
      auto call =
          with_outs({self->evalue(), output_size.evalue()}, {{dtype, bound}, {kI64, bound}});
      if (is_floating_point(dtype)) {
        EXPECT_TRUE(expect_prepared_matches_reference("aten::adaptive_max_pool2d.out", call));
      } else {
        expect_load_rejects_as_reference("aten::adaptive_max_pool2d.out", call,
                                         Error::kInvalidType, "argument 'self' has dtype");
      }
    }
  }
}

TEST(UpsamplePreparedTest, NearestAndBilinearMatchTheReference) {
  IntListArg sizes({7, 9});
  IntListArg same({4, 5});
  DoubleListArg scales({1.5, 2.0});
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    Inputs in(dtype, {2, 3, 4, 5}, {0, 2, 3, 1});
    const bool supported = is_floating_point(dtype) || dtype == ScalarType::kByte;
    for (TestTensor* input : {&in.dense, &in.channels_last}) {
      const std::vector<SizesType> bound = {2, 3, 16, 16};
      for (int form = 0; form < 3; ++form) {
        const EValue output_size = form == 0 ? sizes.evalue() : form == 1 ? same.evalue() : EValue();
        const EValue scale_factors = form == 2 ? scales.evalue() : EValue();
        auto nearest = with_outs({input->evalue(), output_size, scale_factors}, {{dtype, bound}});
        if (supported) {
          EXPECT_TRUE(
              expect_prepared_matches_reference("aten::upsample_nearest2d.vec_out", nearest));
        } else {
          expect_load_rejects_as_reference("aten::upsample_nearest2d.vec_out", nearest,
                                           Error::kInvalidType, "argument 'input' has dtype");
        }
        for (bool align : {false, true}) {
          auto bilinear = with_outs({input->evalue(), output_size, EValue(align), scale_factors},
                                    {{dtype, bound}});
          if (supported) {
            EXPECT_TRUE(
                expect_prepared_matches_reference("aten::upsample_bilinear2d.vec_out", bilinear));
          } else {
            expect_load_rejects_as_reference("aten::upsample_bilinear2d.vec_out", bilinear,
                                             Error::kInvalidType, "argument 'input' has dtype");
          }
        }
      }
    }
  }
}

TEST(PoolPreparedTest, ShapesThatChangeAfterLoadAreCheckedOnTheRun) {
  // Prepared at the bound [2, 3, 8, 8] (or [2, 3, 6, 8, 8]); each run has
  // its own shape, down to one where the kernel no longer fits.
  const Layout dynamic = dynamic_bound();
  TestTensor planes(kF32, {2, 3, 8, 8}, mixed(kF32, 384), dynamic);
  TestTensor volumes(kF32, {2, 3, 6, 8, 8}, mixed(kF32, 2304), dynamic);
  IntListArg k2({3, 3}), k3({3, 3, 3}), none({}), zero3({0}), one3({1}), out2({3, 4});
  IntListArg out3({2, 3, 4}), sizes({5, 7});
  for (std::vector<SizesType> run : {std::vector<SizesType>{1, 3, 5, 6}, {2, 3, 8, 8}, {2, 3, 2, 8},
                                     {0, 3, 4, 4}, {2, 3, 0, 4}}) {
    SCOPED_TRACE(::testing::PrintToString(run));
    const std::vector<SizesType> bound4 = {2, 3, 16, 16};
    const std::vector<SizesType> bound5 = {2, 3, 16, 16, 16};
    std::vector<SizesType> run5 = run;
    run5.insert(run5.begin() + 2, run[2] == 0 ? 0 : 4);
    auto move_to = [](TestTensor* t, std::vector<SizesType> now) {
      return [t, now] { ASSERT_TRUE(t->impl().resize({now.data(), now.size()}).ok()); };
    };
    auto reset = [&] {
      const SizesType b4[] = {2, 3, 8, 8};
      const SizesType b5[] = {2, 3, 6, 8, 8};
      ASSERT_TRUE(planes.impl().resize({b4, 4}).ok());
      ASSERT_TRUE(volumes.impl().resize({b5, 5}).ok());
    };
    reset();
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::max_pool3d_with_indices.out",
        with_outs({volumes.evalue(), k3.evalue(), none.evalue(), zero3.evalue(), one3.evalue(),
                   EValue(false)},
                  {{kF32, bound5}, {kI64, bound5}}),
        move_to(&volumes, run5)));
    reset();
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::avg_pool3d.out",
        with_outs({volumes.evalue(), k3.evalue(), none.evalue(), zero3.evalue(), EValue(true),
                   EValue(false), EValue()},
                  {{kF32, bound5}}),
        move_to(&volumes, run5)));
    reset();
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::_adaptive_avg_pool3d.out",
        with_outs({volumes.evalue(), out3.evalue()}, {{kF32, bound5}}), move_to(&volumes, run5)));
    reset();
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::adaptive_max_pool2d.out",
        with_outs({planes.evalue(), out2.evalue()}, {{kF32, bound4}, {kI64, bound4}}),
        move_to(&planes, run)));
    reset();
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::upsample_bilinear2d.vec_out",
        with_outs({planes.evalue(), sizes.evalue(), EValue(false), EValue()}, {{kF32, bound4}}),
        move_to(&planes, run)));
    reset();
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::upsample_nearest2d.vec_out",
        with_outs({planes.evalue(), sizes.evalue(), EValue()}, {{kF32, bound4}}),
        move_to(&planes, run)));
    reset();
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::max_pool2d_with_indices.out",
        with_outs({planes.evalue(), k2.evalue(), none.evalue(), zero3.evalue(), one3.evalue(),
                   EValue(true)},
                  {{kF32, bound4}, {kI64, bound4}}),
        move_to(&planes, run)));
  }
}

TEST(PoolPreparedTest, LoadRejectsWhatTheProgramFixes) {
  TestTensor volume(kF32, {2, 3, 4, 5, 6});
  TestTensor plane(kF32, {2, 3, 4, 5});
  TestTensor rows(kF32, {2, 3, 9});
  TestTensor ints(ScalarType::kInt, {2, 3, 4, 5});
  IntListArg k3({2, 2, 2}), k2({2, 2}), k1({3}), zero({0}), one({1}), none({}), bad({0, 2, 2});
  IntListArg out3({2, 2, 2}), out2({2, 2}), size2({8, 8});
  DoubleListArg scales3({2.0, 2.0, 2.0});
  const OutSpec f32_5d{kF32, {2, 3, 16, 16, 16}};
  const OutSpec f32_4d{kF32, {2, 3, 16, 16}};
  const OutSpec i64_5d{kI64, {2, 3, 16, 16, 16}};
  const OutSpec i64_4d{kI64, {2, 3, 16, 16}};
  using Case = std::tuple<const char*, kernel_test::BuildCall, Error, const char*>;
  const Case cases[] = {
      {"aten::max_pool3d_with_indices.out",
       with_outs({rows.evalue(), k3.evalue(), none.evalue(), zero.evalue(), one.evalue(),
                  EValue(false)},
                 {f32_4d, i64_4d}),
       Error::kInvalidArgument, "argument 'self' has shape [2, 3, 9], expected 4-D"},
      {"aten::max_pool3d_with_indices.out",
       with_outs({volume.evalue(), bad.evalue(), none.evalue(), zero.evalue(), one.evalue(),
                  EValue(false)},
                 {f32_5d, i64_5d}),
       Error::kInvalidArgument, "argument 'kernel_size' has 0 at dimension 0"},
      {"aten::max_pool3d_with_indices.out",
       with_outs({volume.evalue(), k3.evalue(), none.evalue(), zero.evalue(), one.evalue(),
                  EValue(false)},
                 {f32_5d, f32_5d}),
       Error::kInvalidType, "argument 'indices' has dtype float32, expected int64"},
      {"aten::avg_pool3d.out",
       with_outs({volume.evalue(), k3.evalue(), none.evalue(), zero.evalue(), EValue(false),
                  EValue(true), EValue(int64_t{0})},
                 {f32_5d}),
       Error::kInvalidArgument, "argument 'divisor_override' is 0"},
      {"aten::avg_pool3d.out",
       with_outs({volume.evalue(), k3.evalue(), none.evalue(), zero.evalue(), EValue(false),
                  EValue(true), EValue()},
                 {i64_5d}),
       Error::kInvalidType, "argument 'out' has dtype int64, expected float32"},
      {"aten::avg_pool1d.out",
       with_outs({rows.evalue(), k2.evalue(), none.evalue(), zero.evalue(), EValue(false),
                  EValue(true)},
                 {{kF32, {2, 3, 16}}}),
       Error::kInvalidArgument, "argument 'kernel_size' has 2 values, expected 1"},
      {"aten::adaptive_avg_pool1d.out",
       with_outs({plane.evalue(), k1.evalue()}, {f32_4d}), Error::kInvalidArgument,
       "argument 'self' has shape [2, 3, 4, 5], expected 2-D"},
      {"aten::_adaptive_avg_pool3d.out", with_outs({volume.evalue(), out2.evalue()}, {f32_5d}),
       Error::kInvalidArgument, "argument 'output_size' has 2 values, expected 3"},
      {"aten::adaptive_max_pool2d.out",
       with_outs({plane.evalue(), out2.evalue()}, {f32_4d, f32_4d}), Error::kInvalidType,
       "argument 'indices' has dtype float32, expected int64"},
      {"aten::adaptive_max_pool2d.out",
       with_outs({ints.evalue(), out2.evalue()}, {{ScalarType::kInt, {2, 3, 16, 16}}, i64_4d}),
       Error::kInvalidType, "argument 'self' has dtype int32, which is not supported"},
      {"aten::upsample_nearest2d.vec_out",
       with_outs({volume.evalue(), size2.evalue(), EValue()}, {f32_5d}), Error::kInvalidArgument,
       "argument 'input' has shape [2, 3, 4, 5, 6], expected 4-D"},
      {"aten::upsample_nearest2d.vec_out",
       with_outs({plane.evalue(), size2.evalue(), scales3.evalue()}, {f32_4d}),
       Error::kInvalidArgument, "exactly one of arguments 'output_size' and 'scale_factors'"},
      {"aten::upsample_bilinear2d.vec_out",
       with_outs({plane.evalue(), EValue(), EValue(false), scales3.evalue()}, {f32_4d}),
       Error::kInvalidArgument, "argument 'scale_factors' has 3 values, expected 2"},
      {"aten::upsample_bilinear2d.vec_out",
       with_outs({plane.evalue(), out3.evalue(), EValue(true), EValue()}, {f32_4d}),
       Error::kInvalidArgument, "argument 'output_size' has 3 values, expected 2"},
      {"aten::upsample_bilinear2d.vec_out",
       with_outs({plane.evalue(), size2.evalue(), EValue(true), EValue()}, {i64_4d}),
       Error::kInvalidType, "argument 'out' has dtype int64, expected float32"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::get<0>(c));
    expect_load_rejects_as_reference(std::get<0>(c), std::get<1>(c), std::get<2>(c),
                                     std::get<3>(c));
  }
}

}  // namespace
}  // namespace torchlight::portable
