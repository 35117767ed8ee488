#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/reference.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::all_bits;
using kernel_test::dim_order;
using kernel_test::dynamic_bound;
using kernel_test::KernelArgs;
using kernel_test::reference_binary;
using kernel_test::round_all;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

Status mul(TestTensor& self, TestTensor& other, TestTensor& out) {
  KernelArgs args{self.evalue(), other.evalue(), out.evalue(), EValue()};
  return run_kernel(&mul_out, "aten::mul.out", args);
}

Status mul_scalar(TestTensor& self, const EValue& other, TestTensor& out) {
  KernelArgs args{self.evalue(), other, out.evalue(), EValue()};
  return run_kernel(&mul_scalar_out, "aten::mul.Scalar_out", args);
}

class OpMulDtypeTest : public ::testing::TestWithParam<ScalarType> {};

TEST_P(OpMulDtypeTest, BroadcastColumn) {
  const ScalarType dtype = GetParam();
  TestTensor a(dtype, {2, 3}, {0, 1, 2, 3, 4, 5});
  TestTensor b(dtype, {2, 1}, {3, 1});
  TestTensor out(dtype, {2, 3});
  ASSERT_TRUE(mul(a, b, out).ok()) << to_string(dtype);
  auto expected = round_all(dtype, reference_binary(a, b, {2, 3}, [](double x, double y) {
                              return x * y;
                            }));
  EXPECT_THAT(out.values(), ElementsAreArray(expected)) << to_string(dtype);
}

INSTANTIATE_TEST_SUITE_P(AllRealTypes, OpMulDtypeTest,
                         ::testing::Values(ScalarType::kByte, ScalarType::kChar,
                                           ScalarType::kShort, ScalarType::kInt,
                                           ScalarType::kLong, ScalarType::kHalf,
                                           ScalarType::kBFloat16, ScalarType::kFloat,
                                           ScalarType::kDouble, ScalarType::kBool),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(OpMulTest, SetsTheReturnToOut) {
  TestTensor a(kF32, {1}, {3});
  TestTensor out(kF32, {1});
  KernelArgs args{a.evalue(), a.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&mul_out, "aten::mul.out", args).ok());
  EXPECT_EQ(args[3].to_tensor().impl(), &out.impl());
  EXPECT_THAT(out.values(), ElementsAre(9));
}

TEST(OpMulTest, BoolIsLogicalAndMatchesTorch) {
  TestTensor a(ScalarType::kBool, {4}, {1, 1, 0, 0});
  TestTensor b(ScalarType::kBool, {4}, {1, 0, 1, 0});
  TestTensor out(ScalarType::kBool, {4});
  ASSERT_TRUE(mul(a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 0, 0, 0));
}

TEST(OpMulTest, IntegersWrapMatchesTorch) {
  TestTensor a(ScalarType::kLong, {2}, {4611686018427387904.0, 3});
  TestTensor b(ScalarType::kLong, {2}, {4, 4611686018427387904.0});
  TestTensor out(ScalarType::kLong, {2});
  ASSERT_TRUE(mul(a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0, -4611686018427387904.0));

  TestTensor c(ScalarType::kChar, {2}, {100, -128});
  TestTensor d(ScalarType::kChar, {2}, {3, -1});
  TestTensor out8(ScalarType::kChar, {2});
  ASSERT_TRUE(mul(c, d, out8).ok());
  EXPECT_THAT(out8.values(), ElementsAre(44, -128));

  // int32 products overflow; the kernel must wrap without signed overflow
  // (UBSan checks this).
  TestTensor e(ScalarType::kShort, {1}, {-32768});
  TestTensor out16(ScalarType::kShort, {1});
  ASSERT_TRUE(mul(e, e, out16).ok());
  EXPECT_THAT(out16.values(), ElementsAre(0));
  TestTensor f(ScalarType::kInt, {1}, {65536});
  TestTensor out32(ScalarType::kInt, {1});
  ASSERT_TRUE(mul(f, f, out32).ok());
  EXPECT_THAT(out32.values(), ElementsAre(0));
}

TEST(OpMulTest, HalfMatchesTorch) {
  TestTensor a(ScalarType::kHalf, {4}, {0.1, 3.3, 100, -2.5});
  TestTensor b(ScalarType::kHalf, {4}, {3, 0.7, 700, 0.1});
  TestTensor out(ScalarType::kHalf, {4});
  ASSERT_TRUE(mul(a, b, out).ok());
  EXPECT_THAT(all_bits(out), ElementsAre(0x34cc, 0x409f, 0x7c00, 0xb400));  // 70000 -> inf
}

TEST(OpMulTest, BFloat16MatchesTorch) {
  TestTensor a(ScalarType::kBFloat16, {4}, {0.1, 3.3, 100, -2.5});
  TestTensor b(ScalarType::kBFloat16, {4}, {3, 0.7, 700, 0.1});
  TestTensor out(ScalarType::kBFloat16, {4});
  ASSERT_TRUE(mul(a, b, out).ok());
  EXPECT_THAT(all_bits(out), ElementsAre(0x3e9a, 0x4014, 0x4789, 0xbe80));
}

TEST(OpMulTest, MixedDtypesMatchTorch) {
  TestTensor a(ScalarType::kShort, {3}, {-3, 4, 300});
  TestTensor b(ScalarType::kDouble, {3}, {0.5, 0.25, 2});
  TestTensor out(ScalarType::kDouble, {3});
  ASSERT_TRUE(mul(a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(-1.5, 1, 600));

  TestTensor c(ScalarType::kBool, {3}, {1, 0, 1});
  TestTensor d(ScalarType::kByte, {3}, {7, 8, 9});
  TestTensor outu(ScalarType::kByte, {3});
  ASSERT_TRUE(mul(c, d, outu).ok());
  EXPECT_THAT(outu.values(), ElementsAre(7, 0, 9));
}

TEST(OpMulTest, PermutedInputMatchesTorch) {
  // torch: x.t().contiguous().t() is x laid out column-major.
  TestTensor a(kF32, {2, 3}, {0, 1, 2, 3, 4, 5}, dim_order({1, 0}));
  TestTensor b(kF32, {3}, {2, 3, 4});
  TestTensor out(kF32, {2, 3});
  ASSERT_TRUE(mul(a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0, 3, 8, 6, 12, 20));
}

TEST(OpMulTest, ZeroDimAndEmpty) {
  TestTensor s(ScalarType::kInt, {}, {-2});
  TestTensor t(ScalarType::kInt, {3}, {1, 2, 3});
  TestTensor out(ScalarType::kInt, {3});
  ASSERT_TRUE(mul(s, t, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(-2, -4, -6));

  TestTensor empty(ScalarType::kInt, {2, 0});
  TestTensor out_empty(ScalarType::kInt, {2, 0});
  ASSERT_TRUE(mul(empty, s, out_empty).ok());
  EXPECT_EQ(out_empty.numel(), 0);
}

TEST(OpMulTest, ResizesDynamicBoundOut) {
  TestTensor a(kF32, {3, 1}, {1, 2, 3});
  TestTensor b(kF32, {1, 2}, {10, 100});
  TestTensor out(kF32, {3, 3}, {}, dynamic_bound());
  ASSERT_TRUE(mul(a, b, out).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(3, 2));
  EXPECT_THAT(out.values(), ElementsAre(10, 100, 20, 200, 30, 300));
}

TEST(OpMulTest, MismatchedShapesFail) {
  TestTensor a(kF32, {2, 3});
  TestTensor b(kF32, {2});
  TestTensor out(kF32, {2, 3});
  Status s = mul(a, b, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "aten::mul.out"));
  EXPECT_THAT(s.message(), HasSubstr("[2, 3]"));
  EXPECT_THAT(s.message(), HasSubstr("[2]"));
}

TEST(OpMulTest, FloatIntoIntOutFails) {
  TestTensor a(ScalarType::kLong, {2});
  TestTensor b(ScalarType::kHalf, {2});
  TestTensor out(ScalarType::kLong, {2});
  Status s = mul(a, b, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "result dtype float16 can't be cast"));
}

TEST(OpMulTest, WrongArgumentsFail) {
  TestTensor a(kF32, {2});
  KernelArgs five{a.evalue(), a.evalue(), EValue(int64_t{1}), a.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&mul_out, "aten::mul.out", five).message(),
              HasSubstr("expected 4 arguments (self, other, out, result), got 5"));
  KernelArgs tag{a.evalue(), EValue(2.0), a.evalue(), EValue()};
  const Status s = run_kernel(&mul_out, "aten::mul.out", tag);
  EXPECT_THAT(s.message(), HasSubstr("aten::mul.out (schema mul.out(Tensor self, Tensor other"));
  EXPECT_THAT(s.message(), HasSubstr("): argument 'other' must be a Tensor, got Double"));
}

// aten::mul.Scalar_out

TEST(OpMulScalarTest, HalfTimesDoubleScalarMatchesTorch) {
  // ATen multiplies by 0.1 in float without rounding it to half first.
  TestTensor a(ScalarType::kHalf, {3}, {1, 2.5, 1000});
  TestTensor out(ScalarType::kHalf, {3});
  ASSERT_TRUE(mul_scalar(a, EValue(0.1), out).ok());
  EXPECT_THAT(all_bits(out), ElementsAre(0x2e66, 0x3400, 0x5640));
}

TEST(OpMulScalarTest, IntAndBoolScalars) {
  TestTensor a(ScalarType::kChar, {2}, {1, 2});
  TestTensor out(ScalarType::kChar, {2});
  ASSERT_TRUE(mul_scalar(a, EValue(int64_t{300}), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(44, 88));  // 300 wraps to 44, as in torch.

  TestTensor b(ScalarType::kBool, {2}, {1, 0});
  TestTensor bout(ScalarType::kBool, {2});
  ASSERT_TRUE(mul_scalar(b, EValue(true), bout).ok());
  EXPECT_THAT(bout.values(), ElementsAre(1, 0));

  TestTensor fout(kF32, {2});
  ASSERT_TRUE(mul_scalar(a, EValue(1.5), fout).ok());
  EXPECT_THAT(fout.values(), ElementsAre(1.5, 3));
  EXPECT_THAT(mul_scalar(a, EValue(1.5), out),
              ErrorIs(Error::kInvalidType,
                      "result dtype float32 can't be cast to the dtype int8 of"));
}

}  // namespace
}  // namespace torchlight::portable
