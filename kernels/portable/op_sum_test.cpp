// util/reduce.h and the reduction kernels' C++-only paths: argument tags and
// dtype codes a program file could get wrong, which the conformance cases
// (generated from torch, so always well-typed) cannot express. Values are
// covered by the conformance harness (conformance/cases/reductions.py).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/test_tensor.h"
#include "kernels/portable/util/reduce.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::dim_order;
using kernel_test::dynamic_bound;
using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

std::vector<SizesType> out_shape(TestTensor& in, std::vector<int64_t> dims, bool all, bool keepdim) {
  ReductionPlan plan;
  Status s = plan.init({in.tensor(), "self"}, {dims.data(), dims.size()}, all, keepdim);
  EXPECT_TRUE(s.ok()) << s.message();
  return {plan.out_sizes().begin(), plan.out_sizes().end()};
}

TEST(ReductionPlanTest, Shapes) {
  TestTensor t(kF32, {2, 3, 4});
  EXPECT_THAT(out_shape(t, {1}, false, false), ElementsAre(2, 4));
  EXPECT_THAT(out_shape(t, {1}, false, true), ElementsAre(2, 1, 4));
  EXPECT_THAT(out_shape(t, {-1, 0}, false, false), ElementsAre(3));
  EXPECT_THAT(out_shape(t, {}, true, true), ElementsAre(1, 1, 1));
  EXPECT_THAT(out_shape(t, {}, true, false), ElementsAre());
  EXPECT_THAT(out_shape(t, {}, false, false), ElementsAre(2, 3, 4));  // Reduce nothing.
  TestTensor scalar(kF32, {});
  EXPECT_THAT(out_shape(scalar, {-1}, false, true), ElementsAre());
}

TEST(ReductionPlanTest, RejectsBadDims) {
  TestTensor t(kF32, {2, 3});
  ReductionPlan plan;
  const int64_t out_of_range[] = {2};
  Status s = plan.init({t.tensor(), "self"}, out_of_range, false, false);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "argument 'dim': dim 2 is out of range for a 2-d tensor"));
  const int64_t twice[] = {1, -1};
  s = plan.init({t.tensor(), "self"}, twice, false, false);
  EXPECT_THAT(s.message(), HasSubstr("dim 1 appears more than once"));
  TestTensor scalar(kF32, {});
  const int64_t one[] = {1};
  EXPECT_FALSE(plan.init({scalar.tensor(), "self"}, one, false, false).ok());
}

// Reduced elements are visited in logical row-major order whatever the
// layout, which is what makes argmax's flattened index right.
TEST(ReductionPlanTest, VisitsReducedElementsInLogicalOrder) {
  std::vector<double> values;
  for (int i = 0; i < 24; ++i) values.push_back(i);
  TestTensor in(kF32, {2, 3, 4}, values, dim_order({2, 0, 1}));
  TestTensor out(kF32, {3});
  ReductionPlan plan;
  const int64_t dims[] = {0, 2};
  ASSERT_TRUE(plan.init({in.tensor(), "self"}, dims, false, false).ok());
  EXPECT_EQ(plan.reduced_numel(), 8);
  std::vector<std::vector<double>> seen;
  const float* data = in.tensor().const_data_ptr<float>();
  plan.for_each_output(in.tensor(), out.tensor(), [&](int64_t in_base, int64_t out_offset) {
    EXPECT_EQ(out_offset, static_cast<int64_t>(seen.size()));
    seen.emplace_back();
    plan.for_each_reduced(in.tensor(), in_base,
                          [&](int64_t offset) { seen.back().push_back(data[offset]); });
  });
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_THAT(seen[1], ElementsAre(4, 5, 6, 7, 16, 17, 18, 19));
}

TEST(ReductionPlanTest, LinesAlongADim) {
  TestTensor in(kF32, {2, 3}, {0, 1, 2, 3, 4, 5}, dim_order({1, 0}));
  TestTensor out(kF32, {2, 3});
  std::vector<double> firsts;
  const float* data = in.tensor().const_data_ptr<float>();
  for_each_line(in.tensor(), out.tensor(), 0,
                [&](int64_t in_base, int64_t, int64_t length, int64_t in_stride, int64_t) {
                  EXPECT_EQ(length, 2);
                  firsts.push_back(data[in_base]);
                  EXPECT_EQ(data[in_base + in_stride], data[in_base] + 3);
                });
  EXPECT_THAT(firsts, ElementsAre(0, 1, 2));
}

TEST(ReductionDtypeTest, ReadsOnlyRealDtypeCodes) {
  bool has = true;
  ScalarType type = ScalarType::kBool;
  ASSERT_TRUE(read_optional_dtype(EValue(), "dtype", &has, &type).ok());
  EXPECT_FALSE(has);
  ASSERT_TRUE(read_optional_dtype(EValue(int64_t{7}), "dtype", &has, &type).ok());
  EXPECT_TRUE(has);
  EXPECT_EQ(type, ScalarType::kDouble);
  for (int64_t bad : {int64_t{12}, int64_t{27}, int64_t{-1}, int64_t{99}}) {
    Status s = read_optional_dtype(EValue(bad), "dtype", &has, &type);
    EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "argument 'dtype'")) << bad;
  }
}

TEST(OpSumTest, BadDtypeCodeIsAnError) {
  TestTensor self(kF32, {2, 3});
  TestTensor out(kF32, {2});
  IntListArg dims({1});
  KernelArgs args{self.evalue(), dims.evalue(), EValue(false), EValue(int64_t{42}), out.evalue(),
                  EValue()};
  Status s = run_kernel(&sum_intlist_out, "aten::sum.IntList_out", args);
  EXPECT_THAT(s.message(), HasSubstr("aten::sum.IntList_out"));
  EXPECT_THAT(s.message(), HasSubstr("argument 'dtype' is 42"));
}

TEST(OpSumTest, WrongArgumentTagIsAnError) {
  TestTensor self(kF32, {2, 3});
  TestTensor out(kF32, {2});
  KernelArgs args{self.evalue(), EValue(1.5), EValue(false), EValue(), out.evalue(), EValue()};
  Status s = run_kernel(&sum_intlist_out, "aten::sum.IntList_out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'dim'"));
}

TEST(OpSumTest, ResizesADynamicOut) {
  TestTensor self(kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor out(kF32, {4}, {}, dynamic_bound());
  IntListArg dims({1});
  KernelArgs args{self.evalue(), dims.evalue(), EValue(false), EValue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&sum_intlist_out, "aten::sum.IntList_out", args).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(2));
  EXPECT_THAT(out.values(), ElementsAre(6, 15));
  EXPECT_TRUE(args[5].is_tensor());
}

TEST(OpSumTest, StaticOutOfTheWrongShapeIsAnError) {
  TestTensor self(kF32, {2, 3});
  TestTensor out(kF32, {3});
  IntListArg dims({1});
  KernelArgs args{self.evalue(), dims.evalue(), EValue(false), EValue(), out.evalue(), EValue()};
  Status s = run_kernel(&sum_intlist_out, "aten::sum.IntList_out", args);
  EXPECT_THAT(s.message(), HasSubstr("argument 'out' with shape [3] cannot be resized to [2]"));
}

TEST(OpSoftmaxTest, WrongArgumentCountIsAnError) {
  TestTensor self(kF32, {2, 3});
  TestTensor out(kF32, {2, 3});
  KernelArgs args{self.evalue(), EValue(int64_t{1}), out.evalue(), EValue()};
  Status s = run_kernel(&softmax_out, "aten::_softmax.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "aten::_softmax.out"));
}

TEST(OpArgmaxTest, NullArgumentIsAnError) {
  TestTensor self(kF32, {2, 3});
  TestTensor out(ScalarType::kLong, {2});
  KernelArgs args{self.evalue(), EValue(int64_t{1}), EValue(false), out.evalue(), EValue()};
  args.set_null(2);
  EXPECT_FALSE(run_kernel(&argmax_out, "aten::argmax.out", args).ok());
}

}  // namespace
}  // namespace torchlight::portable
