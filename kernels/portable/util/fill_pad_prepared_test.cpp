// The prepared paths of the creation ops (full, zeros, ones, their _like
// forms, scalar_tensor, fill.Scalar / fill.Tensor, the empty family,
// arange) and of the pads (constant_pad_nd, reflection_pad{1,2,3}d,
// replication_pad{1,2,3}d). For each, what prepare installs leaves out
// exactly as the reference eval does (sizes and bytes, or the same error)
// over dtypes, values that do not fit, layouts and shapes a dynamic dim
// changed after load; what the program fixes is rejected at load naming
// the argument.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
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

using kernel_test::BuildCall;
using kernel_test::dim_order;
using kernel_test::dynamic_bound;
using kernel_test::expect_prepared_matches_reference;
using kernel_test::IntListArg;
using kernel_test::kAllDtypes;
using kernel_test::KernelArgs;
using kernel_test::Layout;
using kernel_test::portable_kernel_named;
using kernel_test::prepare_like_loader;
using kernel_test::prepare_status;
using kernel_test::Prepared;
using kernel_test::TestTensor;
using ::torchlight::testing::ErrorIs;

Layout dynamic_in(std::vector<DimOrderType> order) {
  Layout l = dim_order(std::move(order));
  l.dynamism = TensorShapeDynamism::kDynamicBound;
  return l;
}

// A call of `inputs` with one out of `dtype` and `sizes` in `layout`.
BuildCall with_out(std::vector<EValue> inputs, ScalarType dtype, std::vector<SizesType> sizes,
                   Layout layout = dynamic_bound()) {
  return kernel_test::with_outs(std::move(inputs), {{dtype, std::move(sizes), std::move(layout)}});
}

// Fill values: Ints, Doubles and a Bool, some of which do not fit some
// dtypes (the reference's error then).
const EValue kFillValues[] = {EValue(int64_t{3}), EValue(int64_t{-1}), EValue(int64_t{300}),
                              EValue(-1.5),       EValue(1e10),        EValue(NAN),
                              EValue(true)};

TEST(FillPreparedTest, FullZerosOnesAndScalarTensorMatchTheReference) {
  IntListArg size({2, 3});
  IntListArg empty({0, 3});
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    for (const EValue& v : kFillValues) {
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::full.out", with_out({size.evalue(), v}, dtype, {4, 4})));
      EXPECT_TRUE(
          expect_prepared_matches_reference("aten::scalar_tensor.out", with_out({v}, dtype, {})));
    }
    for (const char* name : {"aten::zeros.out", "aten::ones.out"}) {
      EXPECT_TRUE(expect_prepared_matches_reference(name, with_out({size.evalue()}, dtype, {2, 3})));
      EXPECT_TRUE(expect_prepared_matches_reference(name, with_out({empty.evalue()}, dtype, {4, 4})));
    }
    // A static out of another shape: the reference's resize error.
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::ones.out", with_out({size.evalue()}, dtype, {3, 2}, Layout{})));
  }
}

TEST(FillPreparedTest, LikeFormsAndFillMatchTheReferenceInEveryLayout) {
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    TestTensor like(ScalarType::kFloat, {2, 3, 2, 2});
    TestTensor value(ScalarType::kDouble, {}, {-2.5});
    TestTensor int_value(ScalarType::kInt, {}, {1000});
    const Layout layouts[] = {dynamic_bound(), dynamic_in({0, 2, 3, 1}), Layout{}};
    for (const Layout& layout : layouts) {
      for (const EValue& v : kFillValues) {
        EXPECT_TRUE(expect_prepared_matches_reference(
            "aten::full_like.out", with_out({like.evalue(), v, EValue()}, dtype, {2, 3, 2, 2}, layout)));
        EXPECT_TRUE(expect_prepared_matches_reference(
            "aten::fill.Scalar_out", with_out({like.evalue(), v}, dtype, {2, 3, 2, 2}, layout)));
      }
      for (const char* name : {"aten::zeros_like.out", "aten::ones_like.out"}) {
        EXPECT_TRUE(expect_prepared_matches_reference(
            name, with_out({like.evalue(), EValue()}, dtype, {2, 3, 2, 2}, layout)));
      }
      for (TestTensor* t : {&value, &int_value}) {
        EXPECT_TRUE(expect_prepared_matches_reference(
            "aten::fill.Tensor_out", with_out({like.evalue(), t->evalue()}, dtype, {2, 3, 2, 2}, layout)));
      }
    }
    // Explicit strides with gaps: the strided reference fills them.
    EXPECT_FALSE(expect_prepared_matches_reference(
        "aten::ones_like.out",
        with_out({like.evalue(), EValue()}, dtype, {2, 3, 2, 2}, kernel_test::strides({24, 8, 4, 1}))));
  }
}

TEST(FillPreparedTest, ShapesThatChangeAfterLoadResizeOut) {
  TestTensor like(ScalarType::kFloat, {4, 3}, {}, dynamic_bound());
  TestTensor out(ScalarType::kInt, {4, 3}, {}, dynamic_bound());
  KernelArgs args{like.evalue(), EValue(int64_t{7}), out.evalue(), EValue()};
  const Prepared p = prepare_like_loader(portable_kernel_named("aten::fill.Scalar_out"), args);
  ASSERT_TRUE(p.status.ok());
  for (SizesType rows : {2, 0, 4}) {
    const SizesType now[] = {rows, 3};
    ASSERT_TRUE(like.impl().resize({now, 2}).ok());
    KernelContext ctx(nullptr, nullptr, "aten::fill.Scalar_out");
    p.eval(ctx, args.span());
    ASSERT_FALSE(ctx.failed()) << ctx.status().message();
    EXPECT_EQ(out.sizes(), like.sizes());
    for (double x : out.values()) EXPECT_EQ(x, 7);
  }
}

TEST(FillPreparedTest, EmptyFamilyOnlyResizesAsTheReference) {
  IntListArg size({2, 5});
  IntListArg stride({5, 1});
  IntListArg order({0, 1});
  TestTensor like(ScalarType::kByte, {3, 1});
  EXPECT_TRUE(expect_prepared_matches_reference(
      "aten::empty.out", with_out({size.evalue(), EValue()}, ScalarType::kFloat, {4, 5})));
  EXPECT_TRUE(expect_prepared_matches_reference(
      "aten::empty_like.out", with_out({like.evalue(), EValue()}, ScalarType::kFloat, {4, 5})));
  EXPECT_TRUE(expect_prepared_matches_reference(
      "aten::empty_strided.out", with_out({size.evalue(), stride.evalue()}, ScalarType::kFloat, {4, 5})));
  EXPECT_TRUE(expect_prepared_matches_reference(
      "dim_order_ops::_empty_dim_order.out", with_out({size.evalue(), order.evalue()}, ScalarType::kFloat, {4, 5})));
  EXPECT_TRUE(expect_prepared_matches_reference(
      "dim_order_ops::_empty_dim_order.out", with_out({size.evalue(), EValue()}, ScalarType::kFloat, {2, 4}, Layout{})));
}

TEST(FillPreparedTest, ArangeMatchesTheReference) {
  struct Range {
    EValue start;
    EValue end;
    EValue step;
  };
  const Range ranges[] = {
      {EValue(int64_t{0}), EValue(int64_t{10}), EValue(int64_t{3})},
      {EValue(int64_t{5}), EValue(int64_t{-1}), EValue(int64_t{-2})},
      {EValue(1.0), EValue(2.5), EValue(0.25)},
      {EValue(0.5), EValue(0.5), EValue(1.0)},
      {EValue(int64_t{0}), EValue(int64_t{4}), EValue(int64_t{0})},  // Step 0: an error.
      {EValue(int64_t{0}), EValue(int64_t{-4}), EValue(int64_t{1})},  // Wrong direction.
      {EValue(int64_t{0}), EValue(300.0), EValue(int64_t{100})},
  };
  for (ScalarType dtype : kAllDtypes) {
    if (dtype == ScalarType::kBool) continue;
    SCOPED_TRACE(to_string(dtype));
    for (const Range& r : ranges) {
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::arange.start_out", with_out({r.start, r.end, r.step}, dtype, {16})));
      EXPECT_TRUE(
          expect_prepared_matches_reference("aten::arange.out", with_out({r.end}, dtype, {16})));
    }
  }
}

TEST(FillPreparedTest, LoadRejectsWhatTheProgramFixes) {
  IntListArg three({2, 3, 4});
  IntListArg two({2, 3});
  IntListArg one_stride({1});
  IntListArg swapped({1, 0});
  TestTensor like(ScalarType::kFloat, {2, 3, 4});
  TestTensor vector_value(ScalarType::kFloat, {1});
  EXPECT_THAT(prepare_status("aten::full.out", with_out({three.evalue(), EValue(1.0)},
                                                        ScalarType::kFloat, {2, 3})),
              ErrorIs(Error::kInvalidArgument, "argument 'size' has 3 entries, but 'out' is 2-D"));
  EXPECT_THAT(prepare_status("aten::zeros_like.out", with_out({like.evalue(), EValue()},
                                                              ScalarType::kFloat, {2, 3})),
              ErrorIs(Error::kInvalidArgument, "argument 'self' is 3-D, but 'out' is 2-D"));
  EXPECT_THAT(prepare_status("aten::full_like.out",
                             with_out({like.evalue(), EValue(1.0), EValue(int64_t{2})},
                                      ScalarType::kFloat, {2, 3, 4})),
              ErrorIs(Error::kInvalidArgument, "argument 'memory_format' is channels_last"));
  EXPECT_THAT(prepare_status("aten::fill.Tensor_out", with_out({like.evalue(), vector_value.evalue()},
                                                               ScalarType::kFloat, {2, 3, 4})),
              ErrorIs(Error::kInvalidArgument, "argument 'value' is 1-D"));
  EXPECT_THAT(prepare_status("aten::scalar_tensor.out", with_out({EValue(1.0)}, ScalarType::kFloat, {1})),
              ErrorIs(Error::kInvalidArgument, "argument 'out' is 1-D; a scalar tensor is 0-d"));
  EXPECT_THAT(prepare_status("aten::empty_strided.out", with_out({two.evalue(), one_stride.evalue()},
                                                                 ScalarType::kFloat, {2, 3})),
              ErrorIs(Error::kInvalidArgument, "argument 'stride' has 1 entries but 'size' has 2"));
  EXPECT_THAT(prepare_status("dim_order_ops::_empty_dim_order.out",
                             with_out({two.evalue(), swapped.evalue()}, ScalarType::kFloat, {2, 3})),
              ErrorIs(Error::kInvalidArgument, "argument 'dim_order' asks for dimension 1"));
  EXPECT_THAT(prepare_status("aten::arange.out", with_out({EValue(int64_t{4})}, ScalarType::kFloat, {2, 2})),
              ErrorIs(Error::kInvalidArgument, "argument 'out' is 2-D; arange produces a 1-D tensor"));
  EXPECT_THAT(prepare_status("aten::arange.start_out",
                             with_out({EValue(int64_t{0}), EValue(int64_t{4}), EValue(int64_t{1})},
                                      ScalarType::kBool, {4})),
              ErrorIs(Error::kInvalidType, "argument 'out' has dtype bool, which is not supported"));
}

struct PadCase {
  const char* name;
  size_t k;  // Padded dims.
  bool reflect;
};
const PadCase kPads[] = {
    {"aten::reflection_pad1d.out", 1, true},    {"aten::reflection_pad2d.out", 2, true},
    {"aten::reflection_pad3d.out", 3, true},    {"aten::replication_pad1d.out", 1, false},
    {"aten::replication_pad2d.out", 2, false},  {"aten::replication_pad3d.out", 3, false},
};

std::vector<double> ramp(size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i % 23) - 7.5;
  return v;
}

TEST(PadPreparedTest, ReflectionAndReplicationMatchTheReference) {
  for (const PadCase& pad : kPads) {
    for (ScalarType dtype : kAllDtypes) {
      if (dtype == ScalarType::kBool) continue;
      SCOPED_TRACE(std::string(pad.name) + " " + to_string(dtype));
      for (bool batched : {false, true}) {
        std::vector<SizesType> sizes(pad.k + 1 + (batched ? 1 : 0), 3);
        if (batched) sizes[0] = 2;
        size_t n = 1;
        for (SizesType s : sizes) n *= static_cast<size_t>(s);
        TestTensor self(dtype, sizes, ramp(n));
        // Amounts (before, after) per dim; some crop, one is too large for
        // reflection (the reference's error).
        for (const std::vector<int64_t>& amounts :
             std::vector<std::vector<int64_t>>{{1, 2}, {0, 0}, {-1, 2}, {2, -2}, {3, 0}}) {
          std::vector<int64_t> padding;
          for (size_t i = 0; i < pad.k; ++i) padding.insert(padding.end(), amounts.begin(), amounts.end());
          IntListArg list(padding);
          std::vector<SizesType> out_bound(sizes.size(), 10);
          EXPECT_TRUE(expect_prepared_matches_reference(
              pad.name, with_out({self.evalue(), list.evalue()}, dtype, out_bound)));
        }
      }
    }
  }
}

TEST(PadPreparedTest, ConstantPadMatchesTheReference) {
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    TestTensor self(dtype, {2, 3, 4}, ramp(24));
    TestTensor last(dtype, {2, 3, 4, 2}, ramp(48), dim_order({0, 2, 3, 1}));
    for (const std::vector<int64_t>& pad :
         std::vector<std::vector<int64_t>>{{}, {1, 2}, {1, 1, 0, 2}, {-1, 1, 2, -3, 1, 0}, {-4, 0}}) {
      IntListArg list(pad);
      for (const EValue& v : kFillValues) {
        EXPECT_TRUE(expect_prepared_matches_reference(
            "aten::constant_pad_nd.out", with_out({self.evalue(), list.evalue(), v}, dtype, {6, 9, 9})));
      }
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::constant_pad_nd.out",
          with_out({last.evalue(), list.evalue(), EValue(int64_t{1})}, dtype, {4, 5, 6, 7})));
    }
  }
}

TEST(PadPreparedTest, ShapesThatChangeAfterLoadAreCheckedOnTheRun) {
  TestTensor self(ScalarType::kFloat, {2, 6}, ramp(12), dynamic_bound());
  IntListArg padding({3, 1});
  auto run = [&](const char* name) {
    TestTensor fast_out(ScalarType::kFloat, {2, 16}, {}, dynamic_bound());
    TestTensor reference_out(ScalarType::kFloat, {2, 16}, {}, dynamic_bound());
    KernelArgs fast{self.evalue(), padding.evalue(), fast_out.evalue(), EValue()};
    KernelArgs reference{self.evalue(), padding.evalue(), reference_out.evalue(), EValue()};
    const SizesType bound[] = {2, 6};
    EXPECT_TRUE(self.impl().resize({bound, 2}).ok());
    const Prepared p = prepare_like_loader(portable_kernel_named(name), fast);
    EXPECT_TRUE(p.status.ok());
    // Three columns: reflecting 3 is now out of range.
    const SizesType now[] = {2, 3};
    EXPECT_TRUE(self.impl().resize({now, 2}).ok());
    KernelContext fast_ctx(nullptr, nullptr, name);
    KernelContext reference_ctx(nullptr, nullptr, name);
    p.eval(fast_ctx, fast.span());
    portable_kernel_named(name).eval(reference_ctx, reference.span());
    EXPECT_STREQ(fast_ctx.status().message(), reference_ctx.status().message());
    EXPECT_EQ(fast_out.values(), reference_out.values());
    EXPECT_EQ(fast_out.sizes(), reference_out.sizes());
    return fast_ctx.failed();
  };
  EXPECT_TRUE(run("aten::reflection_pad1d.out"));
  EXPECT_FALSE(run("aten::replication_pad1d.out"));
}

TEST(PadPreparedTest, LoadRejectsWhatTheProgramFixes) {
  TestTensor matrix(ScalarType::kFloat, {3, 3});
  TestTensor flags(ScalarType::kBool, {1, 3, 3});
  TestTensor batch(ScalarType::kFloat, {1, 3, 3});
  IntListArg four({1, 1, 1, 1});
  IntListArg three({1, 1, 1});
  IntListArg six({1, 1, 1, 1, 1, 1});
  EXPECT_THAT(prepare_status("aten::reflection_pad2d.out",
                             with_out({matrix.evalue(), four.evalue()}, ScalarType::kFloat, {5, 5})),
              ErrorIs(Error::kInvalidArgument, "argument 'self' is 2-D; expected 3-D or 4-D"));
  EXPECT_THAT(prepare_status("aten::replication_pad2d.out",
                             with_out({batch.evalue(), three.evalue()}, ScalarType::kFloat, {1, 5, 5})),
              ErrorIs(Error::kInvalidArgument, "argument 'padding' has 3 entries, expected 4"));
  EXPECT_THAT(prepare_status("aten::replication_pad2d.out",
                             with_out({flags.evalue(), four.evalue()}, ScalarType::kBool, {1, 5, 5})),
              ErrorIs(Error::kInvalidType, "argument 'self' has dtype bool"));
  EXPECT_THAT(prepare_status("aten::reflection_pad2d.out",
                             with_out({batch.evalue(), four.evalue()}, ScalarType::kDouble, {1, 5, 5})),
              ErrorIs(Error::kInvalidType, "argument 'out' has dtype float64, expected float32"));
  EXPECT_THAT(prepare_status("aten::constant_pad_nd.out",
                             with_out({matrix.evalue(), three.evalue(), EValue(0.0)}, ScalarType::kFloat, {5, 5})),
              ErrorIs(Error::kInvalidArgument, "argument 'pad' has 3 entries; it must have an even number"));
  EXPECT_THAT(prepare_status("aten::constant_pad_nd.out",
                             with_out({matrix.evalue(), six.evalue(), EValue(0.0)}, ScalarType::kFloat, {5, 5})),
              ErrorIs(Error::kInvalidArgument, "more than twice the rank of 'self' (2)"));
  EXPECT_THAT(prepare_status("aten::constant_pad_nd.out",
                             with_out({matrix.evalue(), four.evalue(), EValue(0.0)}, ScalarType::kInt, {5, 5})),
              ErrorIs(Error::kInvalidType, "argument 'out' has dtype int32, expected float32"));
}

}  // namespace
}  // namespace torchlight::portable
