#include "kernels/portable/util/convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/portable/util/opmath.h"

namespace torchlight::portable {
namespace {

static_assert(std::is_same_v<opmath_t<Half>, float>);
static_assert(std::is_same_v<opmath_t<BFloat16>, float>);
static_assert(std::is_same_v<opmath_t<int8_t>, int8_t>);
static_assert(std::is_same_v<opmath_t<double>, double>);

TEST(ConvertTest, IntegersNarrowModulo) {
  EXPECT_EQ(convert<int8_t>(int64_t{300}), 44);
  EXPECT_EQ(convert<uint8_t>(int64_t{-1}), 255);
  EXPECT_EQ(convert<int16_t>(int32_t{40000}), -25536);
  EXPECT_EQ(convert<int64_t>(int8_t{-5}), -5);
}

TEST(ConvertTest, ToBoolIsNonZero) {
  EXPECT_TRUE(convert<bool>(0.5));
  EXPECT_FALSE(convert<bool>(-0.0));
  EXPECT_TRUE(convert<bool>(int64_t{256}));  // Not truncated to a byte first.
  EXPECT_TRUE(convert<bool>(Half(0.001f)));
  EXPECT_FALSE(convert<bool>(BFloat16(0.0f)));
  EXPECT_TRUE(convert<bool>(std::nanf("")));
}

TEST(ConvertTest, FloatToIntegerTruncatesAndIsDefinedOutOfRange) {
  EXPECT_EQ(convert<int32_t>(-2.9), -2);
  EXPECT_EQ(convert<int64_t>(2.9f), 2);
  EXPECT_EQ(convert<int32_t>(std::nan("")), 0);
  EXPECT_EQ(convert<int64_t>(1e300), INT64_MAX);
  EXPECT_EQ(convert<int64_t>(-1e300), INT64_MIN);
  EXPECT_EQ(convert<int64_t>(-std::numeric_limits<double>::infinity()), INT64_MIN);
  EXPECT_EQ(convert<uint8_t>(-1.0), 255);  // Through int64, as ATen.
  EXPECT_EQ(convert<uint8_t>(Half(300.0f)), 44);
}

TEST(ConvertTest, ReducedFloatsRoundToNearestEven) {
  EXPECT_EQ(convert<Half>(2049.0).bits, Half(2048.0f).bits);
  EXPECT_EQ(convert<Half>(int64_t{2051}).bits, Half(2052.0f).bits);
  EXPECT_EQ(convert<BFloat16>(257.0f).bits, BFloat16(256.0f).bits);
  EXPECT_EQ(convert<float>(Half(0.5f)), 0.5f);
  EXPECT_EQ(convert<double>(BFloat16(-3.0f)), -3.0);
  EXPECT_EQ(convert<BFloat16>(Half(1.5f)).bits, BFloat16(1.5f).bits);
  EXPECT_EQ(convert<Half>(true).bits, Half(1.0f).bits);
}

TEST(ConvertTest, ScalarTo) {
  EXPECT_EQ(scalar_to<int8_t>(EValue(int64_t{300})), 44);
  EXPECT_EQ(scalar_to<float>(EValue(0.25)), 0.25f);
  EXPECT_EQ(scalar_to<int32_t>(EValue(true)), 1);
  EXPECT_EQ(scalar_to<Half>(EValue(0.1)).bits, Half(0.1f).bits);
  EXPECT_TRUE(scalar_to<bool>(EValue(int64_t{-7})));
}

TEST(OpMathTest, IntegersWrap) {
  EXPECT_EQ(opmath_add<int32_t>(INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(opmath_sub<int32_t>(INT32_MIN, 1), INT32_MAX);
  EXPECT_EQ(opmath_mul<int32_t>(65536, 65536), 0);
  EXPECT_EQ(opmath_mul<int64_t>(INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(opmath_mul<uint16_t>(65535, 65535), 1);  // Promoted to unsigned, not int.
  EXPECT_EQ(opmath_add<uint8_t>(250, 10), 4);
  EXPECT_EQ(opmath_mul<int8_t>(-128, -1), -128);
}

TEST(OpMathTest, BoolIsLogical) {
  EXPECT_TRUE(opmath_add(true, true));
  EXPECT_TRUE(opmath_add(false, true));
  EXPECT_FALSE(opmath_add(false, false));
  EXPECT_TRUE(opmath_mul(true, true));
  EXPECT_FALSE(opmath_mul(true, false));
}

TEST(OpMathTest, FloatsAreIeee) {
  EXPECT_EQ(opmath_add(0.1f, 0.2f), 0.1f + 0.2f);
  EXPECT_TRUE(std::isinf(opmath_mul(1e300, 1e300)));
  EXPECT_EQ(opmath_sub(1.0, 0.25), 0.75);
}

}  // namespace
}  // namespace torchlight::portable
