// The prepared paths of the index and scatter kernels (index_select,
// index_put, masked_scatter, nonzero, scatter.src_out, scatter.value_out,
// scatter_add, select_scatter, slice_scatter, as_strided_copy), of
// logsumexp and of the prims et_view and et_copy_index: what prepare
// installs leaves the outs exactly as the reference eval does (sizes and
// bytes, or the same error: an index out of range, a short source) over
// dtypes, layouts and shapes a dynamic dim changed after load; what the
// program fixes is rejected at load naming the argument, with the
// reference's reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <tuple>
#include <vector>

#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/prepared_vs_reference.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::portable {
namespace {

using kernel_test::BuildCall;
using kernel_test::BuiltCall;
using kernel_test::KernelArgs;
using kernel_test::dim_order;
using kernel_test::dynamic_bound;
using kernel_test::expect_load_rejects_as_reference;
using kernel_test::expect_prepared_matches_reference;
using kernel_test::IntListArg;
using kernel_test::kAllDtypes;
using kernel_test::OptionalTensorListArg;
using kernel_test::OutSpec;
using kernel_test::TestTensor;
using kernel_test::with_outs;

constexpr ScalarType kF32 = ScalarType::kFloat;
constexpr ScalarType kI64 = ScalarType::kLong;
constexpr ScalarType kI32 = ScalarType::kInt;
constexpr ScalarType kBool = ScalarType::kBool;

// Values with zeros, negatives, and NaN where the dtype has it.
std::vector<double> mixed(ScalarType dtype, size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 5) % 7) - 2.5 * (i % 2);
  if (is_floating_point(dtype) && n > 4) v[4] = NAN;
  return v;
}

// et_view's call: self and size, then out (its return value, no extra slot).
BuildCall prim_call(std::vector<EValue> inputs, ScalarType dtype, std::vector<SizesType> out) {
  return [inputs, dtype, out] {
    BuiltCall call;
    std::vector<EValue> list = inputs;
    list.push_back(kernel_test::add_out(&call, dtype, out));
    call.args = std::make_unique<KernelArgs>(std::move(list));
    return call;
  };
}

// et_copy_index's call on a fresh copy_to of `bound` holding one row.
BuildCall copy_index_call(ScalarType dtype, std::vector<SizesType> bound, EValue copy_from,
                          int64_t index) {
  return [dtype, bound, copy_from, index] {
    BuiltCall call;
    EValue copy_to = kernel_test::add_out(&call, dtype, bound);
    std::vector<SizesType> one = bound;
    one[0] = 1;
    EXPECT_TRUE(call.outs.back()->impl().resize({one.data(), one.size()}).ok());
    call.args = std::make_unique<KernelArgs>(std::vector<EValue>{copy_to, copy_from, EValue(index)});
    return call;
  };
}

TEST(IndexPreparedTest, IndexSelectIndexPutAndMaskedScatterMatchTheReference) {
  TestTensor rows(kI64, {3}, {2, 0, 2});
  TestTensor rows32(kI32, {2}, {-1, 1});  // -1: the reference's error, on both paths.
  TestTensor single(kI64, {}, {1});
  TestTensor cols(kI64, {2, 1}, {3, -1});
  TestTensor mask(kBool, {4, 5}, {1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1});
  TestTensor row_mask(kBool, {5}, {0, 1, 1, 0, 1});
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    TestTensor self(dtype, {4, 5, 3}, mixed(dtype, 60));
    TestTensor permuted(dtype, {4, 5, 3}, mixed(dtype, 60), dim_order({2, 0, 1}));
    TestTensor scalar(dtype, {}, {3});
    for (TestTensor* t : {&self, &permuted}) {
      for (int64_t dim : {0, 1, -1}) {
        for (TestTensor* index : {&rows, &rows32, &single}) {
          EXPECT_TRUE(expect_prepared_matches_reference(
              "aten::index_select.out",
              with_outs({t->evalue(), EValue(dim), index->evalue()}, {{dtype, {4, 5, 3}}})));
        }
      }
    }
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::index_select.out",
        with_outs({scalar.evalue(), EValue(int64_t{0}), single.evalue()}, {{dtype, {}}})));

    TestTensor matrix(dtype, {4, 5}, mixed(dtype, 20));
    TestTensor values(dtype, {2, 5}, mixed(dtype, 10));
    TestTensor value_row(dtype, {5}, mixed(dtype, 5));
    TestTensor masked_values(dtype, {8}, mixed(dtype, 8));
    OptionalTensorListArg by_row({cols.evalue()});
    OptionalTensorListArg by_column({EValue(), rows.evalue()});
    OptionalTensorListArg by_mask({mask.evalue()});
    for (bool accumulate : {false, true}) {
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::index_put.out", with_outs({matrix.evalue(), by_row.evalue(), value_row.evalue(),
                                            EValue(accumulate)},
                                           {{dtype, {4, 5}}})));
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::index_put.out",
          with_outs({matrix.evalue(), by_column.evalue(), values.evalue(), EValue(accumulate)},
                    {{dtype, {4, 5}}})));
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::index_put.out", with_outs({matrix.evalue(), by_mask.evalue(),
                                            masked_values.evalue(), EValue(accumulate)},
                                           {{dtype, {4, 5}}})));
    }
    TestTensor source(dtype, {20}, mixed(dtype, 20));
    TestTensor short_source(dtype, {3}, mixed(dtype, 3));
    for (TestTensor* m : {&mask, &row_mask}) {
      for (TestTensor* src : {&source, &short_source}) {
        EXPECT_TRUE(expect_prepared_matches_reference(
            "aten::masked_scatter.out",
            with_outs({matrix.evalue(), m->evalue(), src->evalue()}, {{dtype, {4, 5}}})));
      }
    }
    for (TestTensor* t : {&self, &permuted, &scalar}) {
      EXPECT_TRUE(expect_prepared_matches_reference("aten::nonzero.out",
                                                    with_outs({t->evalue()}, {{kI64, {60, 3}}})));
    }
  }
}

TEST(ScatterPreparedTest, ScattersAndSliceWritesMatchTheReference) {
  TestTensor index(kI64, {2, 3}, {0, 2, 1, 3, 0, 0});
  TestTensor far(kI64, {2, 3}, {0, 2, 1, 7, 0, 0});  // 7: out of range on both paths.
  TestTensor empty_index(kI64, {0});
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    TestTensor self(dtype, {4, 4}, mixed(dtype, 16));
    TestTensor permuted(dtype, {4, 4}, mixed(dtype, 16), dim_order({1, 0}));
    TestTensor src(dtype, {3, 4}, mixed(dtype, 12));
    for (TestTensor* t : {&self, &permuted}) {
      for (int64_t dim : {0, 1, -1}) {
        for (TestTensor* i : {&index, &far, &empty_index}) {
          EXPECT_TRUE(expect_prepared_matches_reference(
              "aten::scatter.src_out",
              with_outs({t->evalue(), EValue(dim), i->evalue(), src.evalue()}, {{dtype, {4, 4}}})));
          EXPECT_TRUE(expect_prepared_matches_reference(
              "aten::scatter_add.out",
              with_outs({t->evalue(), EValue(dim), i->evalue(), src.evalue()}, {{dtype, {4, 4}}})));
          for (EValue value : {EValue(int64_t{1}), EValue(2.5), EValue(int64_t{300})}) {
            EXPECT_TRUE(expect_prepared_matches_reference(
                "aten::scatter.value_out",
                with_outs({t->evalue(), EValue(dim), i->evalue(), value}, {{dtype, {4, 4}}})));
          }
        }
      }
    }
    TestTensor cube(dtype, {3, 4, 5}, mixed(dtype, 60));
    TestTensor last(dtype, {3, 4, 5}, mixed(dtype, 60), dim_order({0, 2, 1}));
    TestTensor plane(ScalarType::kDouble, {3, 5}, mixed(ScalarType::kDouble, 15));  // Converted.
    TestTensor strip(dtype, {3, 4, 2}, mixed(dtype, 24));
    for (TestTensor* t : {&cube, &last}) {
      for (int64_t at : {-1, 0, 3, 4}) {  // 4: out of range on both paths.
        EXPECT_TRUE(expect_prepared_matches_reference(
            "aten::select_scatter.out",
            with_outs({t->evalue(), plane.evalue(), EValue(int64_t{1}), EValue(at)},
                      {{dtype, {3, 4, 5}}})));
      }
      for (int64_t step : {1, 2, 3}) {  // 1 and 3: src's shape is not the slice's.
        EXPECT_TRUE(expect_prepared_matches_reference(
            "aten::slice_scatter.out",
            with_outs({t->evalue(), strip.evalue(), EValue(int64_t{-1}), EValue(int64_t{1}),
                       EValue(), EValue(step)},
                      {{dtype, {3, 4, 5}}})));
      }
      IntListArg size({3, 2}), stride({2, 5}), wide({2, 40});
      for (IntListArg* s : {&stride, &wide}) {  // wide: past self's end.
        for (EValue offset : {EValue(), EValue(int64_t{1})}) {
          EXPECT_TRUE(expect_prepared_matches_reference(
              "aten::as_strided_copy.out",
              with_outs({t->evalue(), size.evalue(), s->evalue(), offset}, {{dtype, {3, 2}}})));
        }
      }
    }
  }
}

TEST(LogsumexpPreparedTest, MatchesTheReferenceOverDtypesAndDims) {
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    TestTensor self(dtype, {3, 4, 5}, mixed(dtype, 60));
    TestTensor last(dtype, {3, 4, 5}, mixed(dtype, 60), dim_order({0, 2, 1}));
    for (TestTensor* t : {&self, &last}) {
      for (const std::vector<int64_t>& dims :
           std::vector<std::vector<int64_t>>{{}, {0}, {-1, 1}, {0, 2}}) {
        IntListArg list(dims);
        for (bool keepdim : {false, true}) {
          for (ScalarType out : {kF32, ScalarType::kDouble, ScalarType::kHalf,
                                 ScalarType::kBFloat16}) {
            EXPECT_TRUE(expect_prepared_matches_reference(
                "aten::logsumexp.out",
                with_outs({t->evalue(), list.evalue(), EValue(keepdim)}, {{out, {3, 4, 5}}})));
          }
        }
      }
    }
  }
}

TEST(IndexScatterPreparedTest, ShapesThatChangeAfterLoadAreCheckedOnTheRun) {
  TestTensor self(kF32, {6, 5}, mixed(kF32, 30), dynamic_bound());
  TestTensor index(kI64, {3}, {4, 0, 2});
  TestTensor src(kF32, {6, 2}, mixed(kF32, 12), dynamic_bound());
  TestTensor scatter_index(kI64, {2, 2}, {1, 3, 4, 0});
  IntListArg all({});
  for (SizesType rows : {6, 5, 3, 0}) {
    SCOPED_TRACE(rows);
    auto reset = [&] {
      const SizesType bound[] = {6, 5};
      const SizesType src_bound[] = {6, 2};
      ASSERT_TRUE(self.impl().resize({bound, 2}).ok());
      ASSERT_TRUE(src.impl().resize({src_bound, 2}).ok());
    };
    auto shrink = [&, rows] {
      const SizesType now[] = {rows, 5};
      const SizesType src_now[] = {rows, 2};
      ASSERT_TRUE(self.impl().resize({now, 2}).ok());
      ASSERT_TRUE(src.impl().resize({src_now, 2}).ok());
    };
    const OutSpec out{kF32, {6, 5}};
    reset();
    EXPECT_TRUE(expect_prepared_matches_reference(  // Index 4 leaves the range below 5 rows.
        "aten::index_select.out", with_outs({self.evalue(), EValue(int64_t{0}), index.evalue()}, {out}),
        shrink));
    reset();
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::slice_scatter.out",
        with_outs({self.evalue(), src.evalue(), EValue(int64_t{1}), EValue(int64_t{1}),
                   EValue(int64_t{3}), EValue(int64_t{1})},
                  {out}),
        shrink));
    reset();
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::scatter_add.out",
        with_outs({self.evalue(), EValue(int64_t{0}), scatter_index.evalue(), self.evalue()}, {out}),
        shrink));
    reset();
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::logsumexp.out", with_outs({self.evalue(), all.evalue(), EValue(false)}, {out}),
        shrink));
    reset();
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::nonzero.out", with_outs({self.evalue()}, {{kI64, {30, 2}}}), shrink));
  }
}

TEST(IndexScatterPreparedTest, LoadRejectsWhatTheProgramFixes) {
  TestTensor cube(kF32, {2, 3, 4});
  TestTensor matrix(kF32, {3, 4});
  TestTensor scalar(kF32, {});
  TestTensor index(kI64, {2});
  TestTensor index32(kI32, {2, 2});
  TestTensor grid(kI64, {2, 2});
  TestTensor floats(kF32, {2});
  TestTensor bytes(ScalarType::kByte, {3, 4});
  TestTensor doubles(ScalarType::kDouble, {3, 4});
  TestTensor flags(kBool, {3, 4});
  TestTensor permuted(kF32, {3, 4}, {}, dim_order({1, 0}));
  TestTensor row(kF32, {4});
  TestTensor double_row(ScalarType::kDouble, {4});
  IntListArg three({1, 3, 4});
  OptionalTensorListArg float_index({floats.evalue()});
  OptionalTensorListArg too_many({index.evalue(), index.evalue(), index.evalue()});
  OptionalTensorListArg nothing({EValue(), EValue()});
  OptionalTensorListArg good({index.evalue()});
  IntListArg size({2, 2}), one_stride({1}), twice({0, -3}), dims({1});
  const OutSpec f32_out{kF32, {3, 4}};
  using Case = std::tuple<const char*, BuildCall, Error, const char*>;
  const Case cases[] = {
      {"aten::index_select.out", with_outs({cube.evalue(), EValue(int64_t{3}), index.evalue()}, {f32_out}),
       Error::kInvalidArgument, "argument 'dim' is 3, out of range"},
      {"aten::index_select.out", with_outs({cube.evalue(), EValue(int64_t{0}), grid.evalue()}, {f32_out}),
       Error::kInvalidArgument, "argument 'index' is 2-D; it must be a vector"},
      {"aten::index_select.out", with_outs({cube.evalue(), EValue(int64_t{0}), floats.evalue()}, {f32_out}),
       Error::kInvalidType, "argument 'index' has dtype float32; expected int64 or int32"},
      {"aten::index_select.out", with_outs({cube.evalue(), EValue(int64_t{0}), index.evalue()}, {{kI64, {3, 4}}}),
       Error::kInvalidType, "argument 'out' has dtype int64, expected float32"},
      {"aten::index_put.out",
       with_outs({matrix.evalue(), float_index.evalue(), matrix.evalue(), EValue(false)}, {f32_out}),
       Error::kInvalidType, "argument 'indices' has a float32 tensor at position 0"},
      {"aten::index_put.out",
       with_outs({matrix.evalue(), too_many.evalue(), matrix.evalue(), EValue(false)}, {f32_out}),
       Error::kInvalidArgument, "argument 'indices' has 3 entries, more than the 2 dimensions"},
      {"aten::index_put.out",
       with_outs({matrix.evalue(), nothing.evalue(), matrix.evalue(), EValue(false)}, {f32_out}),
       Error::kInvalidArgument, "argument 'indices' has no index tensor"},
      {"aten::index_put.out",
       with_outs({matrix.evalue(), good.evalue(), doubles.evalue(), EValue(true)}, {f32_out}),
       Error::kInvalidType, "argument 'values' has dtype float64, expected float32"},
      {"aten::masked_scatter.out", with_outs({matrix.evalue(), bytes.evalue(), matrix.evalue()}, {f32_out}),
       Error::kInvalidType, "argument 'mask' has dtype uint8; masked_scatter takes a bool mask"},
      {"aten::masked_scatter.out", with_outs({matrix.evalue(), flags.evalue(), doubles.evalue()}, {f32_out}),
       Error::kInvalidType, "argument 'source' has dtype float64, expected float32"},
      {"aten::nonzero.out", with_outs({matrix.evalue()}, {f32_out}), Error::kInvalidType,
       "argument 'out' has dtype float32, expected int64"},
      {"aten::nonzero.out", with_outs({matrix.evalue()}, {{kI64, {12}}}), Error::kInvalidArgument,
       "argument 'out' is 1-D, expected 2-D"},
      {"aten::scatter.src_out",
       with_outs({matrix.evalue(), EValue(int64_t{-3}), grid.evalue(), matrix.evalue()}, {f32_out}),
       Error::kInvalidArgument, "argument 'dim' is -3, out of range"},
      {"aten::scatter.src_out",
       with_outs({matrix.evalue(), EValue(int64_t{0}), index32.evalue(), matrix.evalue()}, {f32_out}),
       Error::kInvalidType, "argument 'index' has dtype int32; expected int64"},
      {"aten::scatter_add.out",
       with_outs({matrix.evalue(), EValue(int64_t{0}), grid.evalue(), doubles.evalue()}, {f32_out}),
       Error::kInvalidType, "argument 'src' has dtype float64, expected float32"},
      {"aten::scatter.value_out",
       with_outs({matrix.evalue(), EValue(int64_t{0}), grid.evalue(), EValue(1.0)}, {{kI64, {3, 4}}}),
       Error::kInvalidType, "argument 'out' has dtype int64, expected float32"},
      {"aten::select_scatter.out",
       with_outs({scalar.evalue(), scalar.evalue(), EValue(int64_t{0}), EValue(int64_t{0})}, {{kF32, {}}}),
       Error::kInvalidArgument, "argument 'self' is 0-d; select needs at least one dimension"},
      {"aten::slice_scatter.out",
       with_outs({matrix.evalue(), matrix.evalue(), EValue(int64_t{2}), EValue(), EValue(),
                  EValue(int64_t{1})},
                 {f32_out}),
       Error::kInvalidArgument, "argument 'dim' is 2, out of range"},
      {"aten::as_strided_copy.out",
       with_outs({matrix.evalue(), size.evalue(), one_stride.evalue(), EValue()}, {f32_out}),
       Error::kInvalidArgument, "argument 'stride' has 1 entries but 'size' has 2"},
      {"aten::as_strided_copy.out",
       with_outs({matrix.evalue(), size.evalue(), size.evalue(), EValue()}, {{kI64, {2, 2}}}),
       Error::kInvalidType, "argument 'out' has dtype int64, expected float32"},
      {"aten::logsumexp.out", with_outs({cube.evalue(), twice.evalue(), EValue(false)}, {f32_out}),
       Error::kInvalidArgument, "dim 0 appears more than once"},
      {"aten::logsumexp.out", with_outs({cube.evalue(), dims.evalue(), EValue(false)}, {{kI64, {2, 4}}}),
       Error::kInvalidType, "argument 'out' has dtype int64, which is not supported"},
      {"executorch_prim::et_view.default", prim_call({matrix.evalue(), three.evalue()}, kF32, {3, 4}),
       Error::kInvalidArgument, "argument 'size' has 3 entries, but 'out' is 2-D"},
      {"executorch_prim::et_view", prim_call({permuted.evalue(), size.evalue()}, kF32, {3, 4}),
       Error::kInvalidArgument, "argument 'self' is not in the contiguous dim order"},
      {"executorch_prim::et_view", prim_call({matrix.evalue(), size.evalue()}, kI64, {3, 4}),
       Error::kInvalidType, "argument 'out' has dtype int64, expected float32"},
      {"executorch_prim::et_copy_index.tensor",
       copy_index_call(kF32, {4, 3, 4}, row.evalue(), int64_t{0}), Error::kInvalidArgument,
       "argument 'copy_to' is 3-D, expected 2-D"},
      {"executorch_prim::et_copy_index.tensor",
       copy_index_call(kF32, {3, 4}, double_row.evalue(), int64_t{0}), Error::kInvalidType,
       "argument 'copy_from' has dtype float64, expected float32"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::get<0>(c));
    expect_load_rejects_as_reference(std::get<0>(c), std::get<1>(c), std::get<2>(c),
                                     std::get<3>(c));
  }
}

TEST(PrimPreparedTest, EtViewAndEtCopyIndexMatchTheReference) {
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    TestTensor self(dtype, {2, 6}, mixed(dtype, 12));
    TestTensor row(dtype, {3}, mixed(dtype, 3));
    for (const std::vector<int64_t>& sizes :
         std::vector<std::vector<int64_t>>{{3, 4}, {-1, 2}, {5, 2}, {-1, -1}}) {  // Last two fail.
      IntListArg size(sizes);
      EXPECT_TRUE(expect_prepared_matches_reference(
          "executorch_prim::et_view.default",
          prim_call({self.evalue(), size.evalue()}, dtype, {12, 12})));
    }
    for (int64_t index : {0, 1, 3, 4, -1}) {  // 4 is past copy_to's bound, -1 negative.
      EXPECT_TRUE(expect_prepared_matches_reference(
          "executorch_prim::et_copy_index.tensor",
          copy_index_call(dtype, {4, 3}, row.evalue(), index)));
    }
  }
}

}  // namespace
}  // namespace torchlight::portable
