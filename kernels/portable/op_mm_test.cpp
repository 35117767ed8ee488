// aten::mm.out, aten::bmm.out and aten::addmm.out: values, layouts, resizing
// and the errors, each naming the operator and the argument.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::dim_order;
using kernel_test::dynamic_bound;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

Status mm(TestTensor& a, TestTensor& b, TestTensor& out) {
  KernelArgs args{a.evalue(), b.evalue(), out.evalue(), EValue()};
  return run_kernel(&mm_out, "aten::mm.out", args);
}

Status bmm(TestTensor& a, TestTensor& b, TestTensor& out) {
  KernelArgs args{a.evalue(), b.evalue(), out.evalue(), EValue()};
  return run_kernel(&bmm_out, "aten::bmm.out", args);
}

Status addmm(TestTensor& self, TestTensor& a, TestTensor& b, EValue beta, EValue alpha,
             TestTensor& out) {
  KernelArgs args{self.evalue(), a.evalue(), b.evalue(), beta, alpha, out.evalue(), EValue()};
  return run_kernel(&addmm_out, "aten::addmm.out", args);
}

TEST(OpMmTest, MultipliesMatrices) {
  TestTensor a(kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor b(kF32, {3, 2}, {7, 8, 9, 10, 11, 12});
  TestTensor out(kF32, {2, 2});
  ASSERT_TRUE(mm(a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(58, 64, 139, 154));
}

TEST(OpMmTest, AnyLayoutOfInputsAndOut) {
  // The same product with every operand column-major.
  TestTensor a(kF32, {2, 3}, {1, 2, 3, 4, 5, 6}, dim_order({1, 0}));
  TestTensor b(kF32, {3, 2}, {7, 8, 9, 10, 11, 12}, dim_order({1, 0}));
  TestTensor out(kF32, {2, 2}, {}, dim_order({1, 0}));
  ASSERT_TRUE(mm(a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(58, 64, 139, 154));
}

TEST(OpMmTest, IntegersWrap) {
  TestTensor a(ScalarType::kChar, {1, 2}, {100, 100});
  TestTensor b(ScalarType::kChar, {2, 1}, {2, 1});
  TestTensor out(ScalarType::kChar, {1, 1});
  ASSERT_TRUE(mm(a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(44));  // 300 mod 256, as torch.mm.
}

TEST(OpMmTest, HalfAccumulatesInFloat) {
  // 4096 ones: a float16 running sum would stop at 2048.
  std::vector<double> ones(4096, 1.0);
  TestTensor a(ScalarType::kHalf, {1, 4096}, ones);
  TestTensor b(ScalarType::kHalf, {4096, 1}, ones);
  TestTensor out(ScalarType::kHalf, {1, 1});
  ASSERT_TRUE(mm(a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(4096));
}

TEST(OpMmTest, EmptyInnerDimensionGivesZeros) {
  TestTensor a(kF32, {2, 0});
  TestTensor b(kF32, {0, 3});
  TestTensor out(kF32, {2, 3}, {9, 9, 9, 9, 9, 9});
  ASSERT_TRUE(mm(a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0, 0, 0, 0, 0, 0));
}

TEST(OpMmTest, ResizesDynamicOut) {
  TestTensor a(kF32, {1, 2}, {1, 2});
  TestTensor b(kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor out(kF32, {4, 4}, {}, dynamic_bound());
  ASSERT_TRUE(mm(a, b, out).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(1, 3));
  EXPECT_THAT(out.values(), ElementsAre(9, 12, 15));
}

TEST(OpMmTest, InnerSizeMismatchNamesBothArguments) {
  TestTensor a(kF32, {2, 3});
  TestTensor b(kF32, {4, 5});
  TestTensor out(kF32, {2, 5});
  Status s = mm(a, b, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::mm.out: argument 'self' of shape [2, 3] cannot be "
                         "multiplied by argument 'mat2' of shape [4, 5]"));
}

TEST(OpMmTest, RankAndDtypeErrorsNameTheArgument) {
  TestTensor a3(kF32, {2, 3, 1});
  TestTensor b(kF32, {3, 5});
  TestTensor out(kF32, {2, 5});
  Status s = mm(a3, b, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "argument 'self' must be a matrix"));

  TestTensor a(kF32, {2, 3});
  TestTensor b64(ScalarType::kDouble, {3, 5});
  s = mm(a, b64, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType,
                         "argument 'mat2' has dtype float64, expected float32"));

  TestTensor out64(ScalarType::kDouble, {2, 5});
  s = mm(a, b, out64);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "argument 'out' has dtype float64"));

  TestTensor ba(ScalarType::kBool, {2, 3});
  TestTensor bb(ScalarType::kBool, {3, 5});
  TestTensor bout(ScalarType::kBool, {2, 5});
  s = mm(ba, bb, bout);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "aten::mm.out: argument 'self' has dtype bool"));
}

TEST(OpBmmTest, MultipliesEachBatch) {
  TestTensor a(kF32, {2, 1, 2}, {1, 2, 3, 4});
  TestTensor b(kF32, {2, 2, 1}, {5, 6, 7, 8});
  TestTensor out(kF32, {2, 1, 1});
  ASSERT_TRUE(bmm(a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(17, 53));
}

TEST(OpBmmTest, BatchMismatchFails) {
  TestTensor a(kF32, {2, 1, 2});
  TestTensor b(kF32, {3, 2, 1});
  TestTensor out(kF32, {2, 1, 1});
  Status s = bmm(a, b, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::bmm.out: argument 'self' of shape [2, 1, 2] and "
                         "argument 'mat2' of shape [3, 2, 1] have different batch"));
}

TEST(OpAddmmTest, LinearLayoutWithBetaAndAlpha) {
  // nn.Linear: addmm(bias, x, weight.T), the weight [2, 3] row-major.
  TestTensor bias(kF32, {2}, {1, -1});
  TestTensor x(kF32, {1, 3}, {1, 2, 3});
  TestTensor w_t(kF32, {3, 2}, {1, 4, 2, 5, 3, 6}, dim_order({1, 0}));  // = [[1,2,3],[4,5,6]].T
  TestTensor out(kF32, {1, 2});
  ASSERT_TRUE(addmm(bias, x, w_t, EValue(2.0), EValue(0.5), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(2 + 7, -2 + 16));
}

TEST(OpAddmmTest, BetaZeroIgnoresNanAndAlphaZeroIgnoresInf) {
  TestTensor self(kF32, {2}, {NAN, NAN});
  TestTensor a(kF32, {1, 1}, {2});
  TestTensor b(kF32, {1, 2}, {3, 4});
  TestTensor out(kF32, {1, 2});
  ASSERT_TRUE(addmm(self, a, b, EValue(0.0), EValue(int64_t{1}), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(6, 8));

  TestTensor finite(kF32, {2}, {1, 2});
  TestTensor inf(kF32, {1, 1}, {INFINITY});
  TestTensor zeros(kF32, {1, 2}, {0, 0});
  ASSERT_TRUE(addmm(finite, inf, zeros, EValue(int64_t{1}), EValue(0.0), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 2));
}

TEST(OpAddmmTest, IntegerScalarsTruncateToTheDtype) {
  TestTensor self(ScalarType::kInt, {1}, {1});
  TestTensor a(ScalarType::kInt, {1, 2}, {1, 1});
  TestTensor b(ScalarType::kInt, {2, 1}, {1, 1});
  TestTensor out(ScalarType::kInt, {1, 1});
  // torch.addmm(..., beta=0.5, alpha=1.5) on int32 gives 2: beta 0, alpha 1.
  ASSERT_TRUE(addmm(self, a, b, EValue(0.5), EValue(1.5), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(2));
}

TEST(OpAddmmTest, SelfThatDoesNotBroadcastFails) {
  TestTensor self(kF32, {4});
  TestTensor a(kF32, {2, 2});
  TestTensor b(kF32, {2, 3});
  TestTensor out(kF32, {2, 3}, {7, 7, 7, 7, 7, 7});
  Status s = addmm(self, a, b, EValue(int64_t{1}), EValue(int64_t{1}), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::addmm.out: argument 'self' of shape [4] does not "
                         "broadcast to the product's shape [2, 3]"));
  EXPECT_THAT(out.values(), ElementsAre(7, 7, 7, 7, 7, 7));  // Untouched.
}

}  // namespace
}  // namespace torchlight::portable
