// The int8 digit split (int8_digit_split.h) against a float64 reference:
// per row, e is the smallest integer with max |x| <= 127 * 2^e, and
// 65536 d0 + 256 d1 + d2 is x * 2^(16 - e) rounded half to even, computed in
// float64 (exact: x has 24 significant bits); every ISA gives the same
// bytes; padding is zero; inf / NaN rows are reported. Then dot products:
// the combine of the exact digit sums is within m sum |w| / (127 * 2^16)
// (the split) plus its float32 rounding of sum_k x_k w_k, and dropping d2
// (two digits) is not.
#include "kernels/quantized/int8_digit_split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace torchlight::quantized {
namespace {

uint32_t next(uint32_t* seed) { return *seed = *seed * 1664525u + 1013904223u; }

uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof(b));
  return b & 0x7FFFFFFFu;
}

// The smallest e with m <= 127 * 2^e, in float64 (0 for m = 0).
int32_t reference_exponent(float m) {
  if (m == 0.0f) return 0;
  int32_t e = -200;
  while (static_cast<double>(m) > std::ldexp(127.0, e)) ++e;
  return e;
}

std::vector<QuantIsa> isas_this_cpu_runs() {
  std::vector<QuantIsa> isas{QuantIsa::kGeneric};
  if (cpu_has_quant_isa(QuantIsa::kAvx2)) isas.push_back(QuantIsa::kAvx2);
  if (cpu_has_quant_isa(QuantIsa::kAvx512Vnni)) isas.push_back(QuantIsa::kAvx512Vnni);
  return isas;
}

TEST(Int8DigitSplitTest, ExponentIsTheSmallestWithMaxWithin127TimesItsPower) {
  std::vector<float> values = {0.0f, 1.0f, 127.0f, 127.5f, 128.0f, 63.5f, 64.0f,
                               std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
                               std::numeric_limits<float>::denorm_min(), 3e-40f, 1e-45f * 127};
  // Around 127 / 64 * 2^g (where the rule changes) for normal and denormal g.
  for (const int g : {-149, -140, -130, -127, -126, -100, -20, 0, 5, 7, 30, 120}) {
    const float edge = std::ldexp(127.0f / 64.0f, g);
    values.push_back(edge);
    values.push_back(std::nextafter(edge, 0.0f));
    values.push_back(std::nextafter(edge, 1e30f));
  }
  uint32_t seed = 11;
  for (int i = 0; i < 2000; ++i) {
    uint32_t b = next(&seed) & 0x7FFFFFFFu;
    if (b >= 0x7F800000u) b -= 0x00800000u;
    float v;
    std::memcpy(&v, &b, sizeof(v));
    values.push_back(v);
  }
  for (const float m : values) {
    EXPECT_EQ(int8_digit_exponent(bits_of(m)), reference_exponent(m)) << m;
  }
}

struct SplitRows {
  int64_t rows, k, row_bytes, plane_bytes;
  std::vector<int8_t> digits;
  std::vector<int32_t> exponents;
  bool finite;
};

// row_bytes: K rounded up to 64 plus a line by default (the AVX-512 split
// writes the tail as a whole step of 64 where row_bytes is a multiple of 64,
// 16 values at a time otherwise: pass e.g. k + 5 for that).
SplitRows run_split(QuantIsa isa, const std::vector<float>& x, int64_t rows, int64_t k,
                    int64_t row_bytes = -1) {
  SplitRows s{rows, k, row_bytes >= k ? row_bytes : (k + 63) / 64 * 64 + 64, 0, {}, {}, false};
  s.plane_bytes = rows * s.row_bytes + 64;
  s.digits.assign(static_cast<size_t>(kInt8Digits * s.plane_bytes), int8_t{0x5A});  // Garbage.
  s.exponents.assign(static_cast<size_t>(rows), -12345);
  const Int8DigitRows out{s.digits.data(), s.row_bytes, s.plane_bytes, s.exponents.data()};
  s.finite = select_split_int8_digits(isa)(x.data(), rows, k, out);
  return s;
}

int8_t digit(const SplitRows& s, int p, int64_t r, int64_t i) {
  return s.digits[static_cast<size_t>(p * s.plane_bytes + r * s.row_bytes + i)];
}

// Rows of many kinds: random significands over a wide range, one huge value
// among tiny ones, all zeros, denormals, exact ties, FLT_MAX, and values
// within four binades (as activations are).
std::vector<float> make_rows(int64_t rows, int64_t k, uint32_t* seed) {
  std::vector<float> x(static_cast<size_t>(rows * k));
  for (int64_t r = 0; r < rows; ++r) {
    const int kind = static_cast<int>(r % 7);
    for (int64_t i = 0; i < k; ++i) {
      const float significand = 1.0f + (next(seed) >> 9) / 8388608.0f;
      const int exponent = static_cast<int>(next(seed) >> 27) - 16;
      float v = std::ldexp(significand, exponent);
      if (kind == 1) v = i == k / 2 ? 3e30f : std::ldexp(significand, -40 + static_cast<int>(i % 20));
      if (kind == 2) v = 0.0f;
      if (kind == 3) v = std::ldexp(significand, -140 - static_cast<int>(i % 9));  // Denormals.
      // e = 0 and the scaled values halfway between integers.
      if (kind == 4) v = i % 2 == 0 ? 127.0f : 1.0f + (2 * (i % 8) + 1) * std::ldexp(1.0f, -17);
      if (kind == 5) v = i == 0 ? std::numeric_limits<float>::max() : v * 1e30f;
      if (kind == 6) v = std::ldexp(significand, static_cast<int>(i % 4) - 2);  // Like activations.
      if (next(seed) & 0x80000000u) v = -v;
      x[static_cast<size_t>(r * k + i)] = v;
    }
  }
  return x;
}

void check_split(const SplitRows& s, const std::vector<float>& x) {
  ASSERT_TRUE(s.finite);
  for (int64_t r = 0; r < s.rows; ++r) {
    uint32_t max_bits = 0;
    for (int64_t i = 0; i < s.k; ++i) max_bits = std::max(max_bits, bits_of(x[r * s.k + i]));
    float m;
    std::memcpy(&m, &max_bits, sizeof(m));
    const int32_t e = reference_exponent(m);
    ASSERT_EQ(s.exponents[r], e) << "row " << r;
    for (int64_t i = 0; i < s.row_bytes; ++i) {
      if (i >= s.k) {
        for (int p = 0; p < kInt8Digits; ++p) ASSERT_EQ(digit(s, p, r, i), 0) << "padding " << i;
        continue;
      }
      const double v = x[r * s.k + i];
      const double y = std::nearbyint(std::ldexp(v, 16 - e));  // Exact scaling; half to even.
      const int64_t got = 65536 * int64_t{digit(s, 0, r, i)} + 256 * int64_t{digit(s, 1, r, i)} +
                          digit(s, 2, r, i);
      ASSERT_EQ(static_cast<double>(got), y) << "row " << r << " element " << i << " x " << v;
      ASSERT_LE(std::abs(digit(s, 0, r, i)), 127);
      ASSERT_LE(std::fabs(v - std::ldexp(static_cast<double>(got), e - 16)), std::ldexp(1.0, e - 17));
    }
  }
}

TEST(Int8DigitSplitTest, DigitsAreTheRoundedScaledValueOnEveryIsa) {
  for (const QuantIsa isa : isas_this_cpu_runs()) {
    uint32_t seed = 5;
    for (const int64_t k : {1, 2, 15, 16, 17, 31, 63, 64, 65, 100, 288, 300}) {
      for (const int64_t rows : {1, 3, 7, 9}) {
        const std::vector<float> x = make_rows(rows, k, &seed);
        SCOPED_TRACE(::testing::Message() << quant_isa_name(isa) << " rows " << rows << " k " << k);
        check_split(run_split(isa, x, rows, k), x);
        // Rows exactly K rounded up to 64, and a stride that is no multiple of 64.
        check_split(run_split(isa, x, rows, k, (k + 63) / 64 * 64), x);
        check_split(run_split(isa, x, rows, k, k + 5), x);
      }
    }
  }
}

TEST(Int8DigitSplitTest, EveryIsaGivesTheGenericBytes) {
  uint32_t seed = 9;
  for (const int64_t k : {5, 8, 9, 64, 129, 768}) {
    std::vector<float> x = make_rows(14, k, &seed);
    x[13 * k] = 1e-33f;  // Row 13: e < -111, where AVX2 scales in two steps.
    for (int64_t i = 1; i < k; ++i) x[13 * k + i] = x[13 * k + i - 1] * -0.75f;
    const SplitRows want = run_split(QuantIsa::kGeneric, x, 14, k);
    for (const QuantIsa isa : isas_this_cpu_runs()) {
      const SplitRows got = run_split(isa, x, 14, k);
      EXPECT_EQ(got.digits, want.digits) << quant_isa_name(isa) << " k " << k;
      EXPECT_EQ(got.exponents, want.exponents) << quant_isa_name(isa) << " k " << k;
    }
  }
}

TEST(Int8DigitSplitTest, NonFiniteRowsAreReportedAndTheOthersSplit) {
  for (const QuantIsa isa : isas_this_cpu_runs()) {
    for (const float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()}) {
      uint32_t seed = 3;
      const int64_t k = 40;
      std::vector<float> x = make_rows(3, k, &seed);
      x[1 * k + 39] = bad;  // In the vector tail.
      const SplitRows s = run_split(isa, x, 3, k);
      EXPECT_FALSE(s.finite) << bad;
      // Rows 0 and 2 as when split alone.
      for (const int64_t r : {0, 2}) {
        const std::vector<float> alone(x.begin() + r * k, x.begin() + (r + 1) * k);
        const SplitRows one = run_split(isa, alone, 1, k);
        EXPECT_EQ(s.exponents[r], one.exponents[0]) << "row " << r;
        for (int p = 0; p < kInt8Digits; ++p) {
          for (int64_t i = 0; i < one.row_bytes; ++i) ASSERT_EQ(digit(s, p, r, i), digit(one, p, 0, i));
        }
      }
    }
  }
}

// sum_k x_k w_k from the digits' exact int32 sums, against float64.
struct DotCheck {
  double error, split_bound, rounding_bound;
};

DotCheck check_dot(const SplitRows& s, const std::vector<float>& x, const std::vector<int8_t>& w,
                   int64_t r, bool drop_last_digit) {
  int32_t a[kInt8Digits] = {};
  double exact = 0, magnitude = 0, weights = 0, m = 0;
  for (int64_t i = 0; i < s.k; ++i) {
    for (int p = 0; p < kInt8Digits; ++p) a[p] += int32_t{digit(s, p, r, i)} * w[i];
    const double v = x[r * s.k + i];
    exact += v * w[i];
    magnitude += std::fabs(v * w[i]);
    weights += std::abs(w[i]);
    m = std::max(m, std::fabs(v));
  }
  if (drop_last_digit) a[2] = 0;
  const double got = combine_int8_digit_sums(a[0], a[1], a[2], s.exponents[r]);
  // The split (header), then the combine's float32 roundings (one of the
  // result, one of 256 a1 + a2, and a0's convert: each within 2^-24 of
  // sum |x w| + m sum |w| / 64), and a denormal result's last place.
  return {std::fabs(got - exact), m * weights / (127 * 65536.0),
          std::ldexp(1.0, -23) * (magnitude + m * weights / 64) + std::ldexp(1.0, -149)};
}

TEST(Int8DigitSplitTest, DotProductsAreWithinTheSplitBoundAndTwoDigitsAreNot) {
  uint32_t seed = 17;
  for (const int64_t k : {1, 7, 64, 288, 768, 2048}) {
    const std::vector<float> x = make_rows(7, k, &seed);
    std::vector<int8_t> w(static_cast<size_t>(k));
    for (auto& v : w) v = static_cast<int8_t>(next(&seed) >> 24);
    if (k == 2048) std::fill(w.begin(), w.end(), int8_t{-128});
    const SplitRows s = run_split(quant_isa(), x, 7, k);
    for (int64_t r = 0; r < 7; ++r) {
      if (r == 5) continue;  // FLT_MAX: the sum overflows float32, as the float loops' does.
      const DotCheck c = check_dot(s, x, w, r, false);
      EXPECT_LE(c.error, c.split_bound + c.rounding_bound) << "k " << k << " row " << r;
      // Rows of values within a few binades (kind 6) need the third digit.
      if (r == 6 && k >= 7 && k <= 768) {
        const DotCheck two = check_dot(s, x, w, r, true);
        EXPECT_GT(two.error, two.split_bound + two.rounding_bound) << "two digits, k " << k << " row " << r;
      }
    }
  }
}

}  // namespace
}  // namespace torchlight::quantized
