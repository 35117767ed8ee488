// linear_int8's one-row int16-digit loop (linear_int8_int16_digits.h): the
// exponent rule on chosen magnitudes; the AVX2 split against the portable
// one (the same digits, exponent and zero padding) and the digits against
// their definition; the AVX2 column loop against the portable reference
// bit for bit (K off the 16-weight steps and the 768-weight chunks, column
// ranges off the four-column step, bias or none, nothing written past the
// range); both against an exact reference (long double) within the stated
// bound |out - exact| <= |scale| 2^(e - 30) sum|w| + 2^-24 |exact| (+ 2^-149
// and the reference's own rounding): rows of random values, one huge among
// tiny ones, zeros, denormals, +-2^e, weights at -128 and 127; the largest
// K (65536) with the digits and weights that drive every int32 lane to its
// bound; which calls take the loop. The loop with lo dropped fails the bound.
// AVX2 cases are skipped on CPUs without AVX2.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/quantized/linear_int8_int16_digits.h"
#include "kernels/quantized/linear_int8_row_case_test_util.h"

namespace torchlight::quantized {
namespace {

constexpr int64_t kSentinels = 4;  // Outputs past N, which no loop may write.

using Values = Int8RowValues;
using Case = Int8RowCase;

Case make_case(int64_t k, int64_t n, Values values, uint32_t seed) { return make_int8_row_case(k, n, values, seed); }

struct Split {
  int16_t* digits = nullptr;
  int32_t exponent = 0;
  bool finite = false;
  explicit Split(int64_t k) : digits(static_cast<int16_t*>(std::aligned_alloc(64, round_up(int16_digit_bytes(k))))) {}
  ~Split() { std::free(digits); }
  Split(const Split&) = delete;
  Split& operator=(const Split&) = delete;
  static size_t round_up(size_t bytes) { return (bytes + 63) / 64 * 64; }
};

bool cpu_has_avx2() { return cpu_has_quant_isa(QuantIsa::kAvx2); }

void split_with(bool avx2, const float* x, int64_t k, Split* s) {
#if defined(__x86_64__) || defined(_M_X64)
  if (avx2) {
    s->finite = split_row_int16_digits_avx2(x, k, s->digits, &s->exponent);
    return;
  }
#endif
  (void)avx2;
  s->finite = split_row_int16_digits_generic(x, k, s->digits, &s->exponent);
}

// Columns [n_begin, n_end) by the AVX2 loop or the reference; `drop_lo`
// zeroes the lo plane first (one digit). Outputs not written stay -7.
std::vector<float> run(bool avx2, const Case& c, bool with_bias, int64_t n_begin, int64_t n_end, bool drop_lo = false) {
  Split s(c.k);
  split_with(avx2, c.x.data(), c.k, &s);
  EXPECT_TRUE(s.finite);
  const int64_t plane = int16_digit_plane(c.k);
  if (drop_lo) std::memset(s.digits + plane, 0, sizeof(int16_t) * static_cast<size_t>(plane));
  std::vector<float> out(static_cast<size_t>(c.n + kSentinels), -7.0f);
  RowInt8Int16Digits row{};
  row.digits = s.digits;
  row.plane = plane;
  row.exponent = s.exponent;
  row.weight = c.weight.data();
  row.scales = c.scales.data();
  row.bias = with_bias ? c.bias.data() : nullptr;
  row.k = c.k;
  row.out = out.data();
#if defined(__x86_64__) || defined(_M_X64)
  if (avx2) {
    linear_int8_int16_digits_avx2(row, n_begin, n_end);
    return out;
  }
#endif
  linear_int8_int16_digits_generic(row, n_begin, n_end);
  return out;
}

// How far column n of `got` is outside the bound (> 1: outside).
double bound_ratio(const Case& c, bool with_bias, int64_t n, float got, int32_t exponent) {
  long double dot = 0, abs_w = 0;
  for (int64_t i = 0; i < c.k; ++i) {
    const long double w = c.weight[static_cast<size_t>(n * c.k + i)];
    dot += static_cast<long double>(c.x[static_cast<size_t>(i)]) * w;
    abs_w += std::fabs(w);
  }
  const long double scale = c.scales[static_cast<size_t>(n)];
  const long double exact = dot * scale + (with_bias ? c.bias[static_cast<size_t>(n)] : 0.0L);
  // The long double reference's own rounding (2^-64 per add) is far below these terms.
  const long double bound = std::fabs(scale) * std::ldexp(1.0L, exponent - 30) * abs_w +
                            std::ldexp(std::fabs(exact), -24) + std::ldexp(1.0L, -149);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / bound);
}

int32_t exponent_of(const Case& c) {
  Split s(c.k);
  split_with(false, c.x.data(), c.k, &s);
  return s.exponent;
}

uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof(b));
  return b & 0x7FFFFFFFu;
}

TEST(Int16DigitsTest, ExponentIsTheSmallestPowerOfTwoAtOrAboveTheMax) {
  const std::vector<std::pair<float, int32_t>> cases = {
      {0.0f, 0},
      {1.0f, 0},
      {1.5f, 1},
      {0.75f, 0},
      {0.5f, -1},
      {std::nextafter(2.0f, 3.0f), 2},
      {std::ldexp(1.0f, -126), -126},
      {std::ldexp(1.0f, -149), -149},
      {3 * std::ldexp(1.0f, -149), -147},
      {std::ldexp(1.0f, -127), -127},
      {std::ldexp(1.0f, 127), 127},
      {std::numeric_limits<float>::max(), 128},
  };
  for (const auto& [m, want] : cases) {
    int32_t e = 99;
    ASSERT_TRUE(int16_digit_exponent(bits_of(m), &e)) << m;
    EXPECT_EQ(e, want) << m;
  }
  int32_t e = 0;
  EXPECT_FALSE(int16_digit_exponent(bits_of(std::numeric_limits<float>::infinity()), &e));
  EXPECT_FALSE(int16_digit_exponent(bits_of(std::numeric_limits<float>::quiet_NaN()), &e));
}

TEST(Int16DigitsTest, SplitsAgreeAndMeetTheirDefinition) {
  if (!cpu_has_avx2()) GTEST_SKIP() << "this CPU lacks AVX2";
  for (const Values values : {Values::kRandom, Values::kHugeAmongTiny, Values::kZeros, Values::kDenormal,
                              Values::kPowersOfTwo}) {
    for (int64_t k = 1; k <= 70; ++k) {
      const Case c = make_case(k, 1, values, 11 + static_cast<uint32_t>(k));
      Split generic(k), avx2(k);
      split_with(false, c.x.data(), k, &generic);
      split_with(true, c.x.data(), k, &avx2);
      ASSERT_TRUE(generic.finite && avx2.finite);
      ASSERT_EQ(avx2.exponent, generic.exponent) << "k " << k;
      const int64_t plane = int16_digit_plane(k);
      ASSERT_EQ(std::memcmp(avx2.digits, generic.digits, sizeof(int16_t) * 2 * static_cast<size_t>(plane)), 0)
          << "k " << k << " values " << static_cast<int>(values);
      for (int64_t i = 0; i < plane; ++i) {
        const int16_t hi = generic.digits[i], lo = generic.digits[plane + i];
        if (i >= k) {
          ASSERT_TRUE(hi == 0 && lo == 0) << "padding " << i;
          continue;
        }
        ASSERT_TRUE(hi >= -16384 && hi <= 16384 && lo >= -16384 && lo <= 16383) << hi << " " << lo;
        const long double y = 32768.0L * hi + lo;
        const long double err = std::fabs(static_cast<long double>(c.x[static_cast<size_t>(i)]) -
                                          std::ldexp(y, generic.exponent - 29));
        ASSERT_LE(err, std::ldexp(1.0L, generic.exponent - 30)) << "k " << k << " element " << i;
      }
    }
  }
}

TEST(Int16DigitsTest, SplitsRefuseInfAndNaN) {
  for (const float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()}) {
    for (const int64_t k : {int64_t{1}, int64_t{20}, int64_t{33}}) {
      Case c = make_case(k, 1, Values::kRandom, 3);
      c.x[static_cast<size_t>(k - 1)] = bad;
      for (const bool avx2 : {false, true}) {
        if (avx2 && !cpu_has_avx2()) continue;
        Split s(k);
        split_with(avx2, c.x.data(), k, &s);
        EXPECT_FALSE(s.finite) << bad << " k " << k << " avx2 " << avx2;
      }
    }
  }
}

// AVX2 against the reference bit for bit, and both within the bound.
void check_case(const Case& c, int64_t n_begin, int64_t n_end, bool with_bias) {
  const std::vector<float> want = run(false, c, with_bias, n_begin, n_end);
  const int32_t e = exponent_of(c);
  for (int64_t n = 0; n < c.n + kSentinels; ++n) {
    const float v = want[static_cast<size_t>(n)];
    if (n < n_begin || n >= n_end) {
      ASSERT_EQ(v, -7.0f) << "column " << n << " written outside [" << n_begin << ", " << n_end << ")";
      continue;
    }
    ASSERT_LE(bound_ratio(c, with_bias, n, v, e), 1.0) << "k " << c.k << " column " << n;
  }
  if (!cpu_has_avx2()) return;
  const std::vector<float> got = run(true, c, with_bias, n_begin, n_end);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0)
        << "k " << c.k << " column " << i << ": " << got[i] << " against " << want[i];
  }
}

TEST(Int16DigitsTest, LoopMatchesTheReferenceWithinTheBound) {
  for (const int64_t k : {1, 2, 7, 15, 16, 17, 31, 32, 33, 47, 48, 100, 288, 511, 512, 513, 767, 768, 769, 783,
                          784, 785, 1024, 1535, 1536, 1537, 1551, 2048, 2055}) {
    for (const Values values : {Values::kRandom, Values::kHugeAmongTiny, Values::kZeros, Values::kDenormal,
                                Values::kPowersOfTwo, Values::kExtremeWeights}) {
      const Case c = make_case(k, 13, values, 5 + static_cast<uint32_t>(k));
      check_case(c, 0, c.n, true);
      check_case(c, 1, 8, false);
      check_case(c, 3, 6, true);
      check_case(c, 12, 13, true);
    }
  }
}

TEST(Int16DigitsTest, ZerosGiveTheBias) {
  const Case c = make_case(100, 9, Values::kZeros, 4);
  const std::vector<float> out = run(false, c, true, 0, c.n);
  for (int64_t n = 0; n < c.n; ++n) EXPECT_EQ(out[static_cast<size_t>(n)], c.bias[static_cast<size_t>(n)]);
}

// K = 65536 with the extremes: lo = -16384 (Y = -16384, hi 0) or hi =
// -16384 (Y = -2^29, x = -2^e) against -128 weights puts 48 * 2^22 in a lane
// and 384 * 2^22 in a chunk's int32 sum (below 2^31), the most positive
// sums; against 127 the most negative ones; lo = 16383 (Y = 16383) the
// largest lo; Y = -1 (lo = -1: session 22's digits had lo = 32767 there).
// One more K leaves the loop.
TEST(Int16DigitsTest, LargestKStaysExact) {
  const int64_t k = kMaxKInt16Digits;
  for (const float rest : {-std::ldexp(1.0f, -15), -1.0f, std::ldexp(16383.0f, -29), -std::ldexp(1.0f, -29)}) {
    Case c = make_case(k, 5, Values::kRandom, 9);
    c.x.assign(static_cast<size_t>(k), rest);
    c.x[0] = 1.0f;  // e = 0: x = -2^-15 is Y = -16384; x = -1 is Y = -2^29.
    for (int64_t i = 0; i < k; ++i) {
      c.weight[static_cast<size_t>(i)] = -128;
      c.weight[static_cast<size_t>(k + i)] = 127;
      c.weight[static_cast<size_t>(2 * k + i)] = (i % 2 == 0) ? -128 : 127;
    }
    check_case(c, 0, c.n, true);
  }
  EXPECT_TRUE(linear_int8_takes_int16_digits(k, QuantIsa::kAvx2));
  EXPECT_FALSE(linear_int8_takes_int16_digits(k + 1, QuantIsa::kAvx2));
}

TEST(Int16DigitsTest, OnlyAvx2WithoutVnniTakesTheLoop) {
#if defined(__x86_64__) || defined(_M_X64)
  EXPECT_TRUE(linear_int8_takes_int16_digits(288, QuantIsa::kAvx2));
#endif
  EXPECT_FALSE(linear_int8_takes_int16_digits(288, QuantIsa::kGeneric));
  EXPECT_FALSE(linear_int8_takes_int16_digits(288, QuantIsa::kAvxVnni));
  EXPECT_FALSE(linear_int8_takes_int16_digits(288, QuantIsa::kAvx512Vnni));
  EXPECT_FALSE(linear_int8_takes_int16_digits(288, QuantIsa::kAmx));
}

// Without lo the error is about 2^-15 m sum|w|: outside the bound.
TEST(Int16DigitsTest, OneDigitFailsTheBound) {
  const Case c = make_case(288, 8, Values::kRandom, 21);
  const int32_t e = exponent_of(c);
  double worst = 0;
  for (const bool avx2 : {false, true}) {
    if (avx2 && !cpu_has_avx2()) continue;
    const std::vector<float> out = run(avx2, c, true, 0, c.n, /*drop_lo=*/true);
    for (int64_t n = 0; n < c.n; ++n) worst = std::fmax(worst, bound_ratio(c, true, n, out[static_cast<size_t>(n)], e));
  }
  EXPECT_GT(worst, 100.0);
}

}  // namespace
}  // namespace torchlight::quantized
