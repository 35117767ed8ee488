#include "kernels/portable/util/type_promotion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <memory>
#include <vector>

#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::TestTensor;
using ::testing::HasSubstr;

// An operand: a tensor of `dtype` with `dim` dimensions, or a Scalar.
struct Operand {
  ScalarType dtype;
  int dim;           // -1 for a Scalar.
  EValue scalar{};
};

Operand T(ScalarType dtype, int dim = 1) { return {dtype, dim}; }
Operand S(EValue v) { return {ScalarType::kBool, -1, v}; }

ScalarType result_of(std::initializer_list<Operand> operands) {
  std::vector<std::unique_ptr<TestTensor>> tensors;
  ResultType result;
  for (const Operand& op : operands) {
    if (op.dim < 0) {
      result.add_scalar(op.scalar);
      continue;
    }
    tensors.push_back(
        std::make_unique<TestTensor>(op.dtype, std::vector<SizesType>(op.dim, 1)));
    EXPECT_TRUE(result.add_tensor({tensors.back()->tensor(), "t"}).ok());
  }
  return result.get();
}

constexpr ScalarType kBool = ScalarType::kBool, kU8 = ScalarType::kByte, kI8 = ScalarType::kChar,
                     kI16 = ScalarType::kShort, kI32 = ScalarType::kInt, kI64 = ScalarType::kLong,
                     kF16 = ScalarType::kHalf, kBF16 = ScalarType::kBFloat16,
                     kF32 = ScalarType::kFloat, kF64 = ScalarType::kDouble;

TEST(ResultTypeTest, TensorsWithDimensionsPromote) {
  EXPECT_EQ(result_of({T(kI32), T(kF32)}), kF32);
  EXPECT_EQ(result_of({T(kU8), T(kI8)}), kI16);
  EXPECT_EQ(result_of({T(kBool), T(kBool)}), kBool);
  EXPECT_EQ(result_of({T(kF16), T(kBF16)}), kF32);
  EXPECT_EQ(result_of({T(kBool), T(kI64)}), kI64);
}

TEST(ResultTypeTest, ZeroDimTensorsOnlyWinWithAHigherCategory) {
  // Each checked against torch.result_type.
  EXPECT_EQ(result_of({T(kI32), T(kF64, 0)}), kF64);
  EXPECT_EQ(result_of({T(kF32), T(kF64, 0)}), kF32);
  EXPECT_EQ(result_of({T(kI32), T(kI64, 0)}), kI32);
  EXPECT_EQ(result_of({T(kI64, 0), T(kI32)}), kI32);
  EXPECT_EQ(result_of({T(kBool), T(kI32, 0)}), kI32);
  EXPECT_EQ(result_of({T(kF16), T(kF32, 0)}), kF16);
  EXPECT_EQ(result_of({T(kI32, 0), T(kF16, 0)}), kF16);  // Both 0-d: plain promotion.
  EXPECT_EQ(result_of({T(kI8, 0), T(kI64, 0)}), kI64);
}

TEST(ResultTypeTest, ScalarsCountAsDefaultDtypes) {
  EXPECT_EQ(result_of({T(kI8), S(EValue(int64_t{1000}))}), kI8);
  EXPECT_EQ(result_of({T(kI32), S(EValue(2.5))}), kF32);
  EXPECT_EQ(result_of({T(kF16), S(EValue(2.5))}), kF16);
  EXPECT_EQ(result_of({T(kBool), S(EValue(int64_t{2}))}), kI64);
  EXPECT_EQ(result_of({T(kBool), S(EValue(true))}), kBool);
  EXPECT_EQ(result_of({T(kBool), S(EValue(2.5))}), kF32);
  EXPECT_EQ(result_of({T(kF64), S(EValue(2.5))}), kF64);
  EXPECT_EQ(result_of({T(kI32, 0), S(EValue(2.5))}), kF32);
  EXPECT_EQ(result_of({T(kU8, 0), S(EValue(int64_t{1}))}), kU8);
}

TEST(ResultTypeTest, NonPromotableDtypeFailsNamingTheArgument) {
  TestTensor q(ScalarType::kQInt8, {2});
  ResultType result;
  Status s = result.add_tensor({q.tensor(), "other"});
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "argument 'other' has dtype qint8"));
}

TEST(CheckOutDtypeTest, FollowsCanCast) {
  TestTensor i32(kI32, {1});
  TestTensor f16(kF16, {1});
  TestTensor b(kBool, {1});
  EXPECT_TRUE(check_out_dtype(kI32, {f16.tensor(), "out"}).ok());
  EXPECT_TRUE(check_out_dtype(kBool, {i32.tensor(), "out"}).ok());
  EXPECT_TRUE(check_out_dtype(kF64, {f16.tensor(), "out"}).ok());
  EXPECT_THAT(check_out_dtype(kI32, {b.tensor(), "out"}),
              ErrorIs(Error::kInvalidType,
                      "result dtype int32 can't be cast to the dtype bool of"));
  Status s = check_out_dtype(kBF16, {i32.tensor(), "out"});
  EXPECT_STREQ(s.message(), "result dtype bfloat16 can't be cast to the dtype int32 of argument 'out'");
}

TEST(CheckScalarFitsTest, IntegersFollowC10) {
  EXPECT_TRUE(check_scalar_fits(EValue(int64_t{127}), kI8, "x").ok());
  EXPECT_TRUE(check_scalar_fits(EValue(int64_t{-128}), kI8, "x").ok());
  EXPECT_FALSE(check_scalar_fits(EValue(int64_t{128}), kI8, "x").ok());
  EXPECT_FALSE(check_scalar_fits(EValue(int64_t{-129}), kI8, "x").ok());
  EXPECT_TRUE(check_scalar_fits(EValue(int64_t{-255}), kU8, "x").ok());  // torch allows.
  EXPECT_FALSE(check_scalar_fits(EValue(int64_t{-256}), kU8, "x").ok());
  EXPECT_FALSE(check_scalar_fits(EValue(int64_t{256}), kU8, "x").ok());
  EXPECT_TRUE(check_scalar_fits(EValue(int64_t{INT64_MIN}), kI64, "x").ok());
  EXPECT_FALSE(check_scalar_fits(EValue(int64_t{1} << 31), kI32, "x").ok());
  EXPECT_TRUE(check_scalar_fits(EValue(int64_t{1} << 40), kBool, "x").ok());
  EXPECT_TRUE(check_scalar_fits(EValue(true), kI8, "x").ok());
}

TEST(CheckScalarFitsTest, DoublesIntoIntegersMustBeFiniteAndInRange) {
  EXPECT_TRUE(check_scalar_fits(EValue(2.0), kI8, "x").ok());
  EXPECT_FALSE(check_scalar_fits(EValue(200.0), kI8, "x").ok());
  EXPECT_FALSE(check_scalar_fits(EValue(std::nan("")), kI32, "x").ok());
  EXPECT_FALSE(check_scalar_fits(EValue(INFINITY), kI64, "x").ok());
  EXPECT_FALSE(check_scalar_fits(EValue(9223372036854775808.0), kI64, "x").ok());
  EXPECT_TRUE(check_scalar_fits(EValue(-9223372036854775808.0), kI64, "x").ok());
}

TEST(CheckScalarFitsTest, FloatsAllowInfAndNanButNotOverflow) {
  EXPECT_TRUE(check_scalar_fits(EValue(65504.0), kF16, "x").ok());
  EXPECT_FALSE(check_scalar_fits(EValue(1e6), kF16, "x").ok());
  EXPECT_FALSE(check_scalar_fits(EValue(int64_t{100000}), kF16, "x").ok());
  EXPECT_TRUE(check_scalar_fits(EValue(1e38), kBF16, "x").ok());
  EXPECT_FALSE(check_scalar_fits(EValue(1e39), kBF16, "x").ok());
  EXPECT_FALSE(check_scalar_fits(EValue(1e40), kF32, "x").ok());
  EXPECT_TRUE(check_scalar_fits(EValue(1e300), kF64, "x").ok());
  EXPECT_TRUE(check_scalar_fits(EValue(-INFINITY), kF16, "x").ok());
  EXPECT_TRUE(check_scalar_fits(EValue(std::nan("")), kF32, "x").ok());
  Status s = check_scalar_fits(EValue(1e6), kF16, "alpha");
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "argument 'alpha' = 1e+06 cannot be converted to float16"));
  EXPECT_STREQ(s.message(), "argument 'alpha' = 1e+06 cannot be converted to float16 without overflow");
}

TEST(CheckAlphaTest, MatchesAtenAlphaCheck) {
  EXPECT_TRUE(check_alpha(EValue(int64_t{2}), kI32).ok());
  EXPECT_TRUE(check_alpha(EValue(int64_t{2}), kBool).ok());
  EXPECT_TRUE(check_alpha(EValue(true), kBool).ok());
  EXPECT_TRUE(check_alpha(EValue(0.5), kF16).ok());
  EXPECT_THAT(check_alpha(EValue(true), kI32),
              ErrorIs(Error::kInvalidType,
                      "argument 'alpha' is a Bool, which is only supported for"));
  EXPECT_THAT(check_alpha(EValue(true), kF32),
              ErrorIs(Error::kInvalidType,
                      "argument 'alpha' is a Bool, which is only supported for"));
  EXPECT_THAT(check_alpha(EValue(1.5), kBool),
              ErrorIs(Error::kInvalidType,
                      "argument 'alpha' is a floating-point number (1.5), which is"));
  EXPECT_THAT(check_alpha(EValue(1.0), kI64),
              ErrorIs(Error::kInvalidType,
                      "argument 'alpha' is a floating-point number (1), which is"));
  EXPECT_THAT(check_alpha(EValue(int64_t{300}), kI8),
              ErrorIs(Error::kInvalidArgument,
                      "argument 'alpha' = 300 cannot be converted to int8 without"));
}

}  // namespace
}  // namespace torchlight::portable
