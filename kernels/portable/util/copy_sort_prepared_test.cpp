// The prepared paths of copies and views (copy.out, flip, t_copy,
// diagonal_copy, tril, triu) and of the ordering ops (sort.values,
// sort.values_stable, topk.values, max.dim_max, min.dim_min). For each,
// what prepare installs leaves the outs exactly as the reference eval does
// (sizes and bytes, or the same error) over dtypes, dims, layouts and
// shapes a dynamic dim changed after load; what the program fixes is
// rejected at load naming the argument.
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

using kernel_test::BuiltCall;
using kernel_test::dim_order;
using kernel_test::dynamic_bound;
using kernel_test::expect_prepared_matches_reference;
using kernel_test::IntListArg;
using kernel_test::kAllDtypes;
using kernel_test::OutSpec;
using kernel_test::portable_kernel_named;
using kernel_test::prepare_like_loader;
using kernel_test::prepare_status;
using kernel_test::Prepared;
using kernel_test::TestTensor;
using kernel_test::with_outs;
using ::torchlight::testing::ErrorIs;

// Values with ties, negatives, and NaN where the dtype has it.
std::vector<double> mixed(ScalarType dtype, size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7) % 11) - 4.5;
  if (is_floating_point(dtype) && n > 5) v[5] = NAN;
  return v;
}

TEST(CopyPreparedTest, CopiesAndViewsMatchTheReference) {
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    TestTensor cube(dtype, {2, 3, 4}, mixed(dtype, 24));
    TestTensor last(dtype, {2, 3, 2, 2}, mixed(dtype, 24), dim_order({0, 2, 3, 1}));
    TestTensor matrix(dtype, {3, 5}, mixed(dtype, 15));
    TestTensor row(dtype, {5}, mixed(dtype, 5));
    TestTensor floats(ScalarType::kFloat, {1, 4}, {1.5, -2, 300, 0.25});
    for (TestTensor* src : {&row, &floats, &cube}) {  // Broadcasts, converts, or fails.
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::copy.out", with_outs({matrix.evalue(), src->evalue(), EValue(false)}, {{dtype, {3, 5}}})));
    }
    for (const std::vector<int64_t>& dims :
         std::vector<std::vector<int64_t>>{{}, {0}, {-1, 1}, {0, 1, 2}}) {
      IntListArg list(dims);
      EXPECT_TRUE(expect_prepared_matches_reference(
          "aten::flip.out", with_outs({cube.evalue(), list.evalue()}, {{dtype, {2, 3, 4}}})));
    }
    for (TestTensor* t : {&matrix, &row}) {
      EXPECT_TRUE(expect_prepared_matches_reference("aten::t_copy.out",
                                                    with_outs({t->evalue()}, {{dtype, {5, 5}}})));
    }
    for (int64_t offset : {0, 1, -2, 7}) {
      for (std::pair<int64_t, int64_t> dims : {std::pair<int64_t, int64_t>{0, 1}, {-1, 0}, {1, 2}}) {
        EXPECT_TRUE(expect_prepared_matches_reference(
            "aten::diagonal_copy.out",
            with_outs({last.evalue(), EValue(offset), EValue(dims.first), EValue(dims.second)},
                      {{dtype, {4, 4, 4}}})));
      }
      for (const char* name : {"aten::tril.out", "aten::triu.out"}) {
        EXPECT_TRUE(expect_prepared_matches_reference(
            name, with_outs({last.evalue(), EValue(offset)}, {{dtype, {2, 3, 2, 2}}})));
      }
    }
  }
}

TEST(SortPreparedTest, SortTopkAndExtremaMatchTheReference) {
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    TestTensor self(dtype, {3, 4, 5}, mixed(dtype, 60));
    TestTensor last(dtype, {2, 3, 2, 2}, mixed(dtype, 24), dim_order({0, 2, 3, 1}));
    TestTensor scalar(dtype, {}, {2});
    for (int64_t dim : {0, 1, -1}) {
      for (bool flag : {false, true}) {
        EXPECT_TRUE(expect_prepared_matches_reference(
            "aten::sort.values", with_outs({self.evalue(), EValue(dim), EValue(flag)},
                                           {{dtype, {3, 4, 5}}, {ScalarType::kLong, {3, 4, 5}}})));
        EXPECT_TRUE(expect_prepared_matches_reference(
            "aten::sort.values_stable",
            with_outs({last.evalue(), EValue(flag), EValue(dim), EValue(!flag)},
                      {{dtype, {2, 3, 2, 2}}, {ScalarType::kLong, {2, 3, 2, 2}}})));
        for (const char* name : {"aten::max.dim_max", "aten::min.dim_min"}) {
          EXPECT_TRUE(expect_prepared_matches_reference(
              name, with_outs({self.evalue(), EValue(dim), EValue(flag)},
                              {{dtype, {3, 4, 5}}, {ScalarType::kLong, {3, 4, 5}}})));
        }
        if (dtype == ScalarType::kBool) continue;
        for (int64_t k : {0, 1, 3, 6}) {  // 6: larger than dim 0, the reference's error.
          EXPECT_TRUE(expect_prepared_matches_reference(
              "aten::topk.values",
              with_outs({self.evalue(), EValue(k), EValue(dim), EValue(flag), EValue(true)},
                        {{dtype, {3, 4, 5}}, {ScalarType::kLong, {3, 4, 5}}})));
        }
      }
    }
    EXPECT_TRUE(expect_prepared_matches_reference(
        "aten::sort.values", with_outs({scalar.evalue(), EValue(int64_t{0}), EValue(false)},
                                       {{dtype, {}}, {ScalarType::kLong, {}}})));
  }
}

TEST(SortPreparedTest, ShapesThatChangeAfterLoadAreCheckedOnTheRun) {
  // Prepared at the bound; topk's k and the reduced dim are then checked
  // against each run's size.
  TestTensor self(ScalarType::kFloat, {4, 6}, mixed(ScalarType::kFloat, 24), dynamic_bound());
  for (SizesType cols : {6, 2, 0}) {
    SCOPED_TRACE(cols);
    const SizesType bound[] = {4, 6};
    ASSERT_TRUE(self.impl().resize({bound, 2}).ok());
    BuiltCall topk = with_outs({self.evalue(), EValue(int64_t{3}), EValue(int64_t{1}), EValue(true),
                                EValue(true)},
                               {{ScalarType::kFloat, {4, 6}}, {ScalarType::kLong, {4, 6}}})();
    BuiltCall max = with_outs({self.evalue(), EValue(int64_t{1}), EValue(false)},
                              {{ScalarType::kFloat, {4}}, {ScalarType::kLong, {4}}})();
    const Prepared p_topk = prepare_like_loader(portable_kernel_named("aten::topk.values"), *topk.args);
    const Prepared p_max = prepare_like_loader(portable_kernel_named("aten::max.dim_max"), *max.args);
    ASSERT_TRUE(p_topk.status.ok() && p_max.status.ok());
    const SizesType now[] = {4, cols};
    ASSERT_TRUE(self.impl().resize({now, 2}).ok());
    KernelContext topk_ctx(nullptr, nullptr, "aten::topk.values");
    KernelContext max_ctx(nullptr, nullptr, "aten::max.dim_max");
    p_topk.eval(topk_ctx, topk.args->span());
    p_max.eval(max_ctx, max.args->span());
    EXPECT_EQ(topk_ctx.failed(), cols < 3);
    EXPECT_EQ(max_ctx.failed(), cols == 0);
    if (cols < 3) {
      EXPECT_THAT(topk_ctx.status(), ErrorIs(Error::kInvalidArgument, "argument 'k' is 3; expected 0.."));
    }
    if (cols == 0) {
      EXPECT_THAT(max_ctx.status(), ErrorIs(Error::kInvalidArgument, "has size 0"));
    }
  }
}

TEST(CopySortPreparedTest, LoadRejectsWhatTheProgramFixes) {
  TestTensor cube(ScalarType::kFloat, {2, 3, 4});
  TestTensor flags(ScalarType::kBool, {2, 3});
  TestTensor vec(ScalarType::kFloat, {4});
  IntListArg twice({1, -2});
  IntListArg far({3});
  const OutSpec f32_out{ScalarType::kFloat, {2, 3, 4}};
  const OutSpec i64_out{ScalarType::kLong, {2, 3, 4}};
  EXPECT_THAT(prepare_status("aten::copy.out", with_outs({cube.evalue(), vec.evalue(), EValue(false)},
                                                         {{ScalarType::kInt, {2, 3, 4}}})),
              ErrorIs(Error::kInvalidType, "argument 'out' has dtype int32, expected float32"));
  EXPECT_THAT(prepare_status("aten::flip.out", with_outs({cube.evalue(), twice.evalue()}, {f32_out})),
              ErrorIs(Error::kInvalidArgument, "argument 'dims' lists dimension 1 more than once"));
  EXPECT_THAT(prepare_status("aten::flip.out", with_outs({cube.evalue(), far.evalue()}, {f32_out})),
              ErrorIs(Error::kInvalidArgument, "argument 'dims' is 3, out of range"));
  EXPECT_THAT(prepare_status("aten::t_copy.out", with_outs({cube.evalue()}, {f32_out})),
              ErrorIs(Error::kInvalidArgument, "argument 'self' is 3-D; t() expects"));
  EXPECT_THAT(prepare_status("aten::diagonal_copy.out",
                             with_outs({cube.evalue(), EValue(int64_t{0}), EValue(int64_t{1}),
                                        EValue(int64_t{-2})},
                                       {f32_out})),
              ErrorIs(Error::kInvalidArgument, "arguments 'dim1' and 'dim2' are both dimension 1"));
  EXPECT_THAT(prepare_status("aten::diagonal_copy.out",
                             with_outs({vec.evalue(), EValue(int64_t{0}), EValue(int64_t{0}),
                                        EValue(int64_t{1})},
                                       {f32_out})),
              ErrorIs(Error::kInvalidArgument, "argument 'self' is 1-D; diagonal needs"));
  EXPECT_THAT(prepare_status("aten::tril.out", with_outs({vec.evalue(), EValue(int64_t{0})}, {f32_out})),
              ErrorIs(Error::kInvalidArgument, "argument 'self' has 1 dimensions, expected at least 2"));
  EXPECT_THAT(prepare_status("aten::triu.out", with_outs({cube.evalue(), EValue(int64_t{0})}, {i64_out})),
              ErrorIs(Error::kInvalidType, "'out'"));
  EXPECT_THAT(prepare_status("aten::sort.values",
                             with_outs({cube.evalue(), EValue(int64_t{3}), EValue(false)}, {f32_out, i64_out})),
              ErrorIs(Error::kInvalidArgument, "argument 'dim' is 3, out of range"));
  EXPECT_THAT(prepare_status("aten::sort.values_stable",
                             with_outs({cube.evalue(), EValue(), EValue(int64_t{0}), EValue(false)},
                                       {f32_out, f32_out})),
              ErrorIs(Error::kInvalidType, "argument 'indices' has dtype float32, expected int64"));
  EXPECT_THAT(prepare_status("aten::topk.values",
                             with_outs({flags.evalue(), EValue(int64_t{1}), EValue(int64_t{0}), EValue(true),
                                        EValue(true)},
                                       {{ScalarType::kBool, {2, 3}}, {ScalarType::kLong, {2, 3}}})),
              ErrorIs(Error::kInvalidType, "argument 'self' has dtype bool, which is not supported"));
  EXPECT_THAT(prepare_status("aten::topk.values",
                             with_outs({cube.evalue(), EValue(int64_t{1}), EValue(int64_t{0}), EValue(true),
                                        EValue(true)},
                                       {{ScalarType::kDouble, {2, 3, 4}}, i64_out})),
              ErrorIs(Error::kInvalidType, "argument 'values' has dtype float64, expected float32"));
  EXPECT_THAT(prepare_status("aten::max.dim_max",
                             with_outs({cube.evalue(), EValue(int64_t{-4}), EValue(false)}, {f32_out, i64_out})),
              ErrorIs(Error::kInvalidArgument, "argument 'dim' is -4, out of range"));
  EXPECT_THAT(prepare_status("aten::min.dim_min",
                             with_outs({cube.evalue(), EValue(int64_t{0}), EValue(false)}, {f32_out, f32_out})),
              ErrorIs(Error::kInvalidType, "argument 'min_indices' has dtype float32, expected int64"));
}

}  // namespace
}  // namespace torchlight::portable
