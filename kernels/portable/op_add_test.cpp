#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
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
using kernel_test::strides;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

EValue Int(int64_t v) { return EValue(v); }
EValue Dbl(double v) { return EValue(v); }

Status add(TestTensor& self, TestTensor& other, const EValue& alpha, TestTensor& out) {
  KernelArgs args{self.evalue(), other.evalue(), alpha, out.evalue(), EValue()};
  return run_kernel(&add_out, "aten::add.out", args);
}

Status add_scalar(TestTensor& self, const EValue& other, const EValue& alpha, TestTensor& out) {
  KernelArgs args{self.evalue(), other, alpha, out.evalue(), EValue()};
  return run_kernel(&add_scalar_out, "aten::add.Scalar_out", args);
}

TEST(OpAddTest, SameShapeFloat) {
  TestTensor a(kF32, {2, 2}, {1, 2, 3, 4});
  TestTensor b(kF32, {2, 2}, {10, 20, 30, 40});
  TestTensor out(kF32, {2, 2});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(11, 22, 33, 44));
}

TEST(OpAddTest, SetsTheReturnToOut) {
  TestTensor a(kF32, {1}, {1});
  TestTensor b(kF32, {1}, {2});
  TestTensor out(kF32, {1});
  KernelArgs args{a.evalue(), b.evalue(), Int(1), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&add_out, "aten::add.out", args).ok());
  ASSERT_TRUE(args[4].is_tensor());
  EXPECT_EQ(args[4].to_tensor().impl(), &out.impl());
}

// Every real dtype, same dtype for all three tensors, [2, 3] + [3] with an
// Int alpha; the reference computes in double and rounds to the dtype.
class OpAddDtypeTest : public ::testing::TestWithParam<ScalarType> {};

TEST_P(OpAddDtypeTest, BroadcastRowWithIntAlpha) {
  const ScalarType dtype = GetParam();
  TestTensor a(dtype, {2, 3}, {0, 1, 2, 3, 4, 5});
  TestTensor b(dtype, {3}, {5, 4, 3});
  TestTensor out(dtype, {2, 3});
  ASSERT_TRUE(add(a, b, Int(2), out).ok()) << to_string(dtype);
  // Through the test's own rounding: for bool, 2 * true + false is true.
  auto expected = round_all(dtype, reference_binary(a, b, {2, 3}, [](double x, double y) {
                              return x + 2 * y;
                            }));
  EXPECT_THAT(out.values(), ElementsAreArray(expected)) << to_string(dtype);
}

INSTANTIATE_TEST_SUITE_P(AllRealTypes, OpAddDtypeTest,
                         ::testing::Values(ScalarType::kByte, ScalarType::kChar,
                                           ScalarType::kShort, ScalarType::kInt,
                                           ScalarType::kLong, ScalarType::kHalf,
                                           ScalarType::kBFloat16, ScalarType::kFloat,
                                           ScalarType::kDouble, ScalarType::kBool),
                         [](const auto& info) { return std::string(to_string(info.param)); });

class OpAddFloatDtypeTest : public ::testing::TestWithParam<ScalarType> {};

TEST_P(OpAddFloatDtypeTest, FloatAlpha) {
  const ScalarType dtype = GetParam();
  TestTensor a(dtype, {4}, {1, -2, 0.5, 100});
  TestTensor b(dtype, {4}, {2, 4, -3, 0.25});
  TestTensor out(dtype, {4});
  ASSERT_TRUE(add(a, b, Dbl(0.5), out).ok());
  auto expected = round_all(dtype, reference_binary(a, b, {4}, [](double x, double y) {
                              return x + 0.5 * y;
                            }));
  EXPECT_THAT(out.values(), ElementsAreArray(expected));
}

INSTANTIATE_TEST_SUITE_P(FloatTypes, OpAddFloatDtypeTest,
                         ::testing::Values(ScalarType::kHalf, ScalarType::kBFloat16,
                                           ScalarType::kFloat, ScalarType::kDouble),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(OpAddTest, Broadcast2x1With1x3MatchesTorch) {
  TestTensor a(kF32, {2, 1}, {1, 2});
  TestTensor b(kF32, {1, 3}, {10, 20, 30});
  TestTensor out(kF32, {2, 3});
  ASSERT_TRUE(add(a, b, Dbl(-1.5), out).ok());
  // torch.add(a, b, alpha=-1.5) (test/torch_reference.py).
  EXPECT_THAT(out.values(), ElementsAre(-14, -29, -44, -13, -28, -43));
}

TEST(OpAddTest, BroadcastsAcrossRanks) {
  TestTensor a(ScalarType::kInt, {2, 1, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor b(ScalarType::kInt, {4, 1}, {10, 20, 30, 40});
  TestTensor out(ScalarType::kInt, {2, 4, 3});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAreArray(reference_binary(a, b, {2, 4, 3}, [](double x,
                                                                                  double y) {
                return x + y;
              })));
}

TEST(OpAddTest, ZeroDimPlusTensor) {
  TestTensor a(kF32, {}, {0.5});
  TestTensor b(kF32, {2, 2}, {1, 2, 3, 4});
  TestTensor out(kF32, {2, 2});
  ASSERT_TRUE(add(a, b, Int(3), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(3.5, 6.5, 9.5, 12.5));
}

TEST(OpAddTest, ZeroDimPlusZeroDim) {
  TestTensor a(ScalarType::kLong, {}, {40});
  TestTensor b(ScalarType::kLong, {}, {2});
  TestTensor out(ScalarType::kLong, {});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(42));
}

TEST(OpAddTest, EmptyTensors) {
  TestTensor a(kF32, {0, 3});
  TestTensor b(kF32, {3}, {1, 2, 3});
  TestTensor out(kF32, {0, 3});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_EQ(out.numel(), 0);

  TestTensor c(kF32, {1, 1}, {5});
  ASSERT_TRUE(add(a, c, Int(1), out).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(0, 3));
}

TEST(OpAddTest, EmptyTensorsWithoutData) {
  SizesType sizes[] = {0};
  DimOrderType order[] = {0};
  StridesType st[] = {1};
  TensorImpl empty(kF32, 1, sizes, nullptr, order, st);
  KernelArgs args{EValue(Tensor(&empty)), EValue(Tensor(&empty)), Int(1), EValue(Tensor(&empty)),
                  EValue()};
  EXPECT_TRUE(run_kernel(&add_out, "aten::add.out", args).ok());
}

TEST(OpAddTest, Int32PlusFloat32IntoFloat32MatchesTorch) {
  TestTensor a(ScalarType::kInt, {2, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor b(kF32, {3}, {0.5, -1.25, 3.0});
  TestTensor out(kF32, {2, 3});
  ASSERT_TRUE(add(a, b, Int(2), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(2.0, -0.5, 9.0, 5.0, 2.5, 12.0));
}

TEST(OpAddTest, Uint8PlusInt8PromotesToInt16MatchesTorch) {
  TestTensor a(ScalarType::kByte, {3}, {200, 255, 0});
  TestTensor b(ScalarType::kChar, {3}, {-100, 127, -128});
  TestTensor out(ScalarType::kShort, {3});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(100, 382, -128));
}

TEST(OpAddTest, BoolPlusInt32MatchesTorch) {
  TestTensor a(ScalarType::kBool, {3}, {1, 0, 1});
  TestTensor b(ScalarType::kInt, {3}, {5, 6, -7});
  TestTensor out(ScalarType::kInt, {3});
  ASSERT_TRUE(add(a, b, Int(-2), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(-9, -12, 15));
}

TEST(OpAddTest, HalfPlusFloat32IntoFloat32MatchesTorch) {
  TestTensor a(ScalarType::kHalf, {2}, {0.1, 2048});
  TestTensor b(kF32, {2}, {1e-4, 0.5});
  TestTensor out(kF32, {2});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  // Common dtype float32: the half input is widened exactly, the sum is
  // float32 (2048.5 would not survive a round trip through float16).
  const double half_tenth = Half::to_float(Half::from_float(0.1f));
  EXPECT_THAT(out.values(), ElementsAre(static_cast<float>(half_tenth + static_cast<float>(1e-4)),
                                        2048.5));
  EXPECT_FLOAT_EQ(out.get(0), 0.10007558763027191);  // torch

}

TEST(OpAddTest, ResultWrittenIntoWiderOutMatchesTorch) {
  TestTensor a(ScalarType::kInt, {2}, {2147483647, 1});
  TestTensor b(ScalarType::kInt, {2}, {1, 1});
  TestTensor out(ScalarType::kLong, {2});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  // Computed in int32 (wraps), then widened: as ATen.
  EXPECT_THAT(out.values(), ElementsAre(-2147483648.0, 2));
}

TEST(OpAddTest, ZeroDimDoubleDoesNotWidenFloatTensorMatchesTorch) {
  // ATen: a 0-d tensor only decides the dtype when of a higher category, so
  // float32[1] + float64 0-d computes in float32 (2^24 + 1 rounds to 2^24)
  // even though out is float64.
  TestTensor a(kF32, {1}, {16777216.0});
  TestTensor b(ScalarType::kDouble, {}, {1.0});
  TestTensor out(ScalarType::kDouble, {1});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(16777216.0));
}

TEST(OpAddTest, ZeroDimFloatOfHigherCategoryDecidesMatchesTorch) {
  TestTensor a(ScalarType::kInt, {3}, {1, 2, 3});
  TestTensor b(ScalarType::kDouble, {}, {2.5});
  TestTensor out(ScalarType::kDouble, {3});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(3.5, 4.5, 5.5));
  // ... so int32 out cannot take it.
  TestTensor int_out(ScalarType::kInt, {3});
  EXPECT_THAT(add(a, b, Int(1), int_out),
              ErrorIs(Error::kInvalidType,
                      "result dtype float64 can't be cast to the dtype int32 of"));
}

TEST(OpAddTest, BoolIsLogicalOrMatchesTorch) {
  TestTensor a(ScalarType::kBool, {4}, {1, 1, 0, 0});
  TestTensor b(ScalarType::kBool, {4}, {1, 0, 1, 0});
  TestTensor out(ScalarType::kBool, {4});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 1, 1, 0));
  ASSERT_TRUE(add(a, b, Int(0), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 1, 0, 0));
  ASSERT_TRUE(add(a, b, Int(-1), out).ok());  // -1 is true as bool.
  EXPECT_THAT(out.values(), ElementsAre(1, 1, 1, 0));
  ASSERT_TRUE(add(a, b, EValue(false), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 1, 0, 0));
}

TEST(OpAddTest, IntegersWrapMatchesTorch) {
  TestTensor a(ScalarType::kInt, {2}, {2147483647, -2147483648.0});
  TestTensor b(ScalarType::kInt, {2}, {1, -1});
  TestTensor out(ScalarType::kInt, {2});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(-2147483648.0, 2147483647));

  TestTensor c(ScalarType::kChar, {1}, {127});
  TestTensor d(ScalarType::kChar, {1}, {1});
  TestTensor out8(ScalarType::kChar, {1});
  ASSERT_TRUE(add(c, d, Int(1), out8).ok());
  EXPECT_THAT(out8.values(), ElementsAre(-128));

  TestTensor e(ScalarType::kByte, {1}, {250});
  TestTensor f(ScalarType::kByte, {1}, {3});
  TestTensor outu8(ScalarType::kByte, {1});
  ASSERT_TRUE(add(e, f, Int(-255), outu8).ok());  // -255 is allowed for uint8 (as 1).
  EXPECT_THAT(outu8.values(), ElementsAre(253));
}

TEST(OpAddTest, Int64AlphaTimesOtherWraps) {
  TestTensor a(ScalarType::kLong, {1}, {0});
  TestTensor b(ScalarType::kLong, {1}, {4611686018427387904.0});  // 2^62
  TestTensor out(ScalarType::kLong, {1});
  ASSERT_TRUE(add(a, b, Int(4), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0));
}

TEST(OpAddTest, HalfRoundsToNearestEvenMatchesTorch) {
  TestTensor a(ScalarType::kHalf, {4}, {2048, 2050, 0.1, 1000.5});
  TestTensor b(ScalarType::kHalf, {4}, {1, 1, 0.2, 0.25});
  TestTensor out(ScalarType::kHalf, {4});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(all_bits(out), ElementsAre(0x6800, 0x6802, 0x34cc, 0x63d2));
}

TEST(OpAddTest, BFloat16RoundsToNearestEvenMatchesTorch) {
  TestTensor a(ScalarType::kBFloat16, {4}, {256, 258, 1.1, 3});
  TestTensor b(ScalarType::kBFloat16, {4}, {1, 1, 0.3, 0.0078125});
  TestTensor out(ScalarType::kBFloat16, {4});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(all_bits(out), ElementsAre(0x4380, 0x4382, 0x3fb4, 0x4040));
}

TEST(OpAddTest, HalfAlphaIsRoundedToHalfThenComputedInFloatMatchesTorch) {
  TestTensor a(ScalarType::kHalf, {4}, {1, 2, 3, 0.5});
  TestTensor b(ScalarType::kHalf, {4}, {3, 7, 11, 0.3});
  TestTensor out(ScalarType::kHalf, {4});
  ASSERT_TRUE(add(a, b, Dbl(0.1), out).ok());
  EXPECT_THAT(all_bits(out), ElementsAre(0x3d33, 0x4166, 0x441a, 0x383d));
}

TEST(OpAddTest, PermutedDimOrderInput) {
  // a is [2, 3] stored column-major (dim order 1, 0): same logical values.
  TestTensor a(kF32, {2, 3}, {1, 2, 3, 4, 5, 6}, dim_order({1, 0}));
  TestTensor b(kF32, {3}, {10, 20, 30});
  TestTensor out(kF32, {2, 3});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(11, 22, 33, 14, 25, 36));
}

TEST(OpAddTest, PermutedDimOrderOut) {
  TestTensor a(kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor b(kF32, {2, 1}, {100, 200});
  TestTensor out(kF32, {2, 3}, {}, dim_order({1, 0}));
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(101, 102, 103, 204, 205, 206));
  // Memory holds it column-major.
  const float* raw = out.tensor().const_data_ptr<float>();
  EXPECT_THAT(std::vector<float>(raw, raw + 6), ElementsAre(101, 204, 102, 205, 103, 206));
}

TEST(OpAddTest, ChannelsLastOperands) {
  std::vector<double> values;
  for (int i = 0; i < 12; ++i) values.push_back(i);
  TestTensor a(kF32, {1, 3, 2, 2}, values, dim_order({0, 2, 3, 1}));
  TestTensor b(kF32, {3, 1, 1}, {100, 200, 300});
  TestTensor out(kF32, {1, 3, 2, 2}, {}, dim_order({0, 2, 3, 1}));
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAreArray(reference_binary(a, b, {1, 3, 2, 2},
                                                              [](double x, double y) {
                                                                return x + y;
                                                              })));
}

TEST(OpAddTest, GappedStridesInput) {
  // A [2, 2] view with strides [4, 2]: every other element of a 2x4 buffer.
  TestTensor a(ScalarType::kInt, {2, 2}, {1, 2, 3, 4}, strides({4, 2}));
  TestTensor b(ScalarType::kInt, {2, 2}, {10, 20, 30, 40});
  TestTensor out(ScalarType::kInt, {2, 2});
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(11, 22, 33, 44));
}

TEST(OpAddTest, InPlaceOutAliasesSelf) {
  TestTensor a(kF32, {2, 2}, {1, 2, 3, 4});
  TestTensor b(kF32, {2}, {10, 20});
  ASSERT_TRUE(add(a, b, Int(1), a).ok());
  EXPECT_THAT(a.values(), ElementsAre(11, 22, 13, 24));
}

TEST(OpAddTest, ResizesDynamicBoundOut) {
  TestTensor a(kF32, {2, 1}, {1, 2});
  TestTensor b(kF32, {3}, {10, 20, 30});
  TestTensor out(kF32, {4, 4}, {}, dynamic_bound());
  ASSERT_TRUE(add(a, b, Int(1), out).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(2, 3));
  EXPECT_THAT(out.values(), ElementsAre(11, 21, 31, 12, 22, 32));
}

TEST(OpAddTest, DynamicBoundOutTooSmallFails) {
  TestTensor a(kF32, {2, 3});
  TestTensor b(kF32, {3});
  TestTensor out(kF32, {2, 2}, {}, dynamic_bound());
  Status s = add(a, b, Int(1), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::add.out: argument 'out' with shape [2, 2] cannot be "
                         "resized to [2, 3]"));
}

TEST(OpAddTest, StaticOutOfOtherShapeFails) {
  TestTensor a(kF32, {2, 3});
  TestTensor b(kF32, {3});
  TestTensor out(kF32, {3, 2});
  Status s = add(a, b, Int(1), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "[3, 2]"));
  EXPECT_THAT(s.message(), HasSubstr("[2, 3]"));
  EXPECT_THAT(s.message(), HasSubstr("static"));
}

TEST(OpAddTest, OutOfOtherRankFails) {
  TestTensor a(kF32, {2, 3});
  TestTensor b(kF32, {3});
  TestTensor out(kF32, {6}, {}, dynamic_bound());
  Status s = add(a, b, Int(1), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "argument 'out'"));
}

TEST(OpAddTest, MismatchedShapesFailNamingOperatorAndShapes) {
  TestTensor a(kF32, {2, 3});
  TestTensor b(kF32, {4});
  TestTensor out(kF32, {2, 3});
  Status s = add(a, b, Int(1), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "aten::add.out"));
  EXPECT_THAT(s.message(), HasSubstr("[2, 3] ('self')"));
  EXPECT_THAT(s.message(), HasSubstr("[4] ('other')"));
}

TEST(OpAddTest, ZeroSizeDoesNotBroadcastWithThree) {
  TestTensor a(kF32, {0});
  TestTensor b(kF32, {3});
  TestTensor out(kF32, {3});
  EXPECT_THAT(add(a, b, Int(1), out),
              ErrorIs(Error::kInvalidArgument,
                      "shapes [0] ('self') and [3] ('other') do not broadcast:"));
}

TEST(OpAddTest, FloatResultIntoIntOutFails) {
  TestTensor a(ScalarType::kInt, {2});
  TestTensor b(kF32, {2});
  TestTensor out(ScalarType::kInt, {2}, {7, 7});
  Status s = add(a, b, Int(1), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType,
                         "aten::add.out: result dtype float32 can't be cast to the "
                         "dtype int32 of argument 'out'"));
  EXPECT_THAT(out.values(), ElementsAre(7, 7));  // Untouched.
}

TEST(OpAddTest, IntResultIntoBoolOutFails) {
  TestTensor a(ScalarType::kInt, {2});
  TestTensor b(ScalarType::kBool, {2});
  TestTensor out(ScalarType::kBool, {2});
  EXPECT_THAT(add(a, b, Int(1), out),
              ErrorIs(Error::kInvalidType,
                      "result dtype int32 can't be cast to the dtype bool of"));
}

TEST(OpAddTest, FloatAlphaWithIntTensorsFails) {
  TestTensor a(ScalarType::kInt, {2});
  TestTensor b(ScalarType::kInt, {2});
  TestTensor out(ScalarType::kInt, {2});
  Status s = add(a, b, Dbl(2.5), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType,
                         "aten::add.out: argument 'alpha' is a floating-point"));
  EXPECT_THAT(s.message(), HasSubstr("int32"));

  TestTensor ba(ScalarType::kBool, {2});
  TestTensor bout(ScalarType::kBool, {2});
  EXPECT_THAT(add(ba, ba, Dbl(1.0), bout),
              ErrorIs(Error::kInvalidType,
                      "argument 'alpha' is a floating-point number (1), which is"));
}

TEST(OpAddTest, BoolAlphaNeedsBoolResult) {
  TestTensor a(kF32, {2});
  TestTensor out(kF32, {2});
  Status s = add(a, a, EValue(true), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'alpha' is a Bool"));
}

TEST(OpAddTest, AlphaThatOverflowsTheCommonDtypeFails) {
  TestTensor a(ScalarType::kChar, {2});
  TestTensor out(ScalarType::kChar, {2});
  Status s = add(a, a, Int(300), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'alpha' = 300 cannot be converted to int8"));

  TestTensor h(ScalarType::kHalf, {2});
  TestTensor hout(ScalarType::kHalf, {2});
  EXPECT_THAT(add(h, h, Dbl(1e6), hout),
              ErrorIs(Error::kInvalidArgument,
                      "argument 'alpha' = 1e+06 cannot be converted to float16"));
  EXPECT_TRUE(add(h, h, Dbl(INFINITY), hout).ok());
}

TEST(OpAddTest, WrongArgumentCountFails) {
  TestTensor a(kF32, {2});
  KernelArgs args{a.evalue(), a.evalue(), Int(1), a.evalue()};
  Status s = run_kernel(&add_out, "aten::add.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "expected 5 arguments (self, other, alpha, out, result), got 4"));
  // The schema check names the operator and quotes its schema.
  EXPECT_THAT(s.message(), HasSubstr("aten::add.out (schema add.out(Tensor self, Tensor other, *, "
                                     "Scalar alpha=1, Tensor(a!) out) -> Tensor(a!))"));
}

TEST(OpAddTest, WrongArgumentTagFails) {
  TestTensor a(kF32, {2});
  KernelArgs args{a.evalue(), a.evalue(), a.evalue(), a.evalue(), EValue()};
  Status s = run_kernel(&add_out, "aten::add.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "aten::add.out (schema add.out("));
  EXPECT_THAT(s.message(), HasSubstr("): argument 'alpha' must be a Scalar, got Tensor"));

  KernelArgs args2{Int(1), a.evalue(), Int(1), a.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&add_out, "aten::add.out", args2).message(),
              HasSubstr("argument 'self' must be a Tensor, got Int"));
}

TEST(OpAddTest, NullArgumentFails) {
  TestTensor a(kF32, {2});
  KernelArgs args{a.evalue(), a.evalue(), Int(1), a.evalue(), EValue()};
  args.set_null(1);
  Status s = run_kernel(&add_out, "aten::add.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'other'"));
}

TEST(OpAddTest, UnsupportedDtypeFailsNamingArgument) {
  TestTensor a(ScalarType::kUInt16, {2});
  TestTensor b(kF32, {2});
  TestTensor out(kF32, {2});
  Status s = add(a, b, Int(1), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "aten::add.out: argument 'self' has dtype uint16"));
}

TEST(OpAddTest, UnsupportedOutDtypeFailsNamingOut) {
  TestTensor a(ScalarType::kInt, {2});
  TestTensor out(ScalarType::kQInt32, {2});
  Status s = add(a, a, Int(1), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "argument 'out' has dtype qint32"));
}

TEST(OpAddTest, OutWithoutDataFails) {
  TestTensor a(kF32, {2}, {1, 2});
  SizesType sizes[] = {2};
  DimOrderType order[] = {0};
  StridesType st[] = {1};
  TensorImpl unbound(kF32, 1, sizes, nullptr, order, st);
  KernelArgs args{a.evalue(), a.evalue(), Int(1), EValue(Tensor(&unbound)), EValue()};
  Status s = run_kernel(&add_out, "aten::add.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "argument 'out' has 2 elements but no data"));
}

// aten::add.Scalar_out

TEST(OpAddScalarTest, HalfPlusDoubleScalarMatchesTorch) {
  TestTensor a(ScalarType::kHalf, {3}, {1, 2.5, 1000});
  TestTensor out(ScalarType::kHalf, {3});
  ASSERT_TRUE(add_scalar(a, Dbl(0.1), Int(1), out).ok());
  EXPECT_THAT(all_bits(out), ElementsAre(0x3c66, 0x4133, 0x63d0));
}

TEST(OpAddScalarTest, IntScalarWrapsToTheTensorDtypeMatchesTorch) {
  TestTensor a(ScalarType::kChar, {2}, {1, 2});
  TestTensor out(ScalarType::kChar, {2});
  ASSERT_TRUE(add_scalar(a, Int(300), Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(45, 46));
}

TEST(OpAddScalarTest, BoolTensorPlusIntScalarIsInt64MatchesTorch) {
  TestTensor a(ScalarType::kBool, {2}, {1, 0});
  TestTensor out(ScalarType::kLong, {2});
  ASSERT_TRUE(add_scalar(a, Int(2), Int(1), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(3, 2));
  TestTensor bool_out(ScalarType::kBool, {2});
  EXPECT_THAT(add_scalar(a, Int(2), Int(1), bool_out),
              ErrorIs(Error::kInvalidType,
                      "result dtype int64 can't be cast to the dtype bool of"));
}

TEST(OpAddScalarTest, IntTensorPlusDoubleScalarIsFloat) {
  TestTensor a(ScalarType::kInt, {2, 1}, {1, 2});
  TestTensor out(kF32, {2, 1});
  ASSERT_TRUE(add_scalar(a, Dbl(0.5), Dbl(3), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(2.5, 3.5));
  TestTensor int_out(ScalarType::kInt, {2, 1});
  EXPECT_THAT(add_scalar(a, Dbl(0.5), Int(1), int_out),
              ErrorIs(Error::kInvalidType,
                      "result dtype float32 can't be cast to the dtype int32 of"));
}

TEST(OpAddScalarTest, AlphaIsChecked) {
  TestTensor a(ScalarType::kInt, {2});
  TestTensor out(ScalarType::kInt, {2});
  EXPECT_THAT(add_scalar(a, Int(1), Dbl(1.5), out),
              ErrorIs(Error::kInvalidType,
                      "argument 'alpha' is a floating-point number (1.5), which is"));
}

}  // namespace
}  // namespace torchlight::portable
