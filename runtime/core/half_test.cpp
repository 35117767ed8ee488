// Tests for Half and BFloat16 (half.h).
//
// Three independent references:
//  - decoding bit patterns with std::ldexp, in double;
//  - an "oracle" that rounds a float to the nearest representable 16-bit
//    value by searching a table of every value in double (ties to the even
//    bit pattern, the largest finite value's successor counted as the next
//    power of two so overflow becomes inf, as IEEE 754 rounds);
//  - checksums of numpy's float16 and torch's bfloat16 conversions of the
//    same deterministic sample, computed once in the toolchain (numpy 2 /
//    torch 2.6) by a Python transcription of half_sample / bf16_sample below:
//      x = np.array([half_sample(r) for r in rs], np.uint32).view(np.float32)
//      fnv(x.astype(np.float16).view(np.uint16))
//      y = torch.from_numpy(bf16 sample as float32).to(torch.bfloat16)
//      fnv(y.view(torch.int16).numpy().view(np.uint16))
//    where rs is splitmix64 from seed 0x5EED and fnv is fnv_step folded
//    from 0xcbf29ce484222325.
#include "runtime/core/half.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace torchlight {
namespace {

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

bool half_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool bf16_is_nan(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }

// binary16 value of a non-NaN pattern, by the textbook formula.
double decode_half(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  double magnitude;
  if (exponent == 0x1f) {
    magnitude = INFINITY;
  } else if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);
  } else {
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

double decode_bf16(uint16_t b) {
  const int sign = (b >> 15) & 1;
  const int exponent = (b >> 7) & 0xff;
  const int mantissa = b & 0x7f;
  double magnitude;
  if (exponent == 0xff) {
    magnitude = INFINITY;
  } else if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -133);
  } else {
    magnitude = std::ldexp(128 + mantissa, exponent - 134);
  }
  return sign ? -magnitude : magnitude;
}

// Rounds |x| to the nearest of the non-negative values `table` (sorted, the
// index being the bit pattern), ties to the even pattern. The last entry
// stands for infinity but carries the value IEEE rounding compares against.
uint16_t nearest(const std::vector<double>& table, double x) {
  const double a = std::fabs(x);
  const uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
  if (a >= table.back()) return static_cast<uint16_t>(sign | (table.size() - 1));
  const size_t hi = std::upper_bound(table.begin(), table.end(), a) - table.begin();
  const size_t lo = hi - 1;  // table[0] == 0 <= a, so hi >= 1.
  const double below = a - table[lo];
  const double above = table[hi] - a;
  size_t pick;
  if (below < above) {
    pick = lo;
  } else if (above < below) {
    pick = hi;
  } else {
    pick = (lo % 2 == 0) ? lo : hi;
  }
  return static_cast<uint16_t>(sign | pick);
}

// Patterns 0x0000..0x7c00; 0x7c00 (inf) is entered as 65536 = 2^16.
const std::vector<double>& half_table() {
  static const std::vector<double> table = [] {
    std::vector<double> t;
    for (uint32_t h = 0; h < 0x7c00u; ++h) t.push_back(decode_half(static_cast<uint16_t>(h)));
    t.push_back(65536.0);
    return t;
  }();
  return table;
}

// Patterns 0x0000..0x7f80; 0x7f80 (inf) is entered as 2^128.
const std::vector<double>& bf16_table() {
  static const std::vector<double> table = [] {
    std::vector<double> t;
    for (uint32_t b = 0; b < 0x7f80u; ++b) t.push_back(decode_bf16(static_cast<uint16_t>(b)));
    t.push_back(std::ldexp(1.0, 128));
    return t;
  }();
  return table;
}

uint16_t oracle_half(float f) { return nearest(half_table(), f); }
uint16_t oracle_bf16(float f) { return nearest(bf16_table(), f); }

// ------------------------------------------------ The deterministic sample
// splitmix64; the Python transcription used for the checksums is line for line.

uint64_t splitmix_next(uint64_t* state) {
  *state += 0x9E3779B97F4A7C15ull;
  uint64_t z = *state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Finite float bits concentrated where float16 rounding is interesting:
// the whole half range, exact normal ties, exact subnormal ties, and
// arbitrary bits (NaNs replaced by inf).
uint32_t half_sample(uint64_t r) {
  const uint32_t sign = static_cast<uint32_t>(r >> 63) & 1u;
  const uint32_t mode = static_cast<uint32_t>(r >> 60) & 3u;
  uint32_t mant = static_cast<uint32_t>(r) & 0x7fffffu;
  const uint32_t er = static_cast<uint32_t>(r >> 32) & 0xffffu;
  uint32_t e;
  if (mode == 0) {
    e = 101 + er % 43;
  } else if (mode == 1) {
    e = 101 + er % 43;
    mant = (mant & ~0x1fffu & 0x7fffffu) | 0x1000u;
  } else if (mode == 2) {
    e = 102 + er % 12;
    const uint32_t shift = 126 - e;
    mant = (mant & ~((1u << shift) - 1u) & 0x7fffffu) | ((1u << (shift - 1u)) & 0x7fffffu);
  } else {
    uint32_t bits = static_cast<uint32_t>(r);
    if ((bits & 0x7f800000u) == 0x7f800000u) bits &= 0xff800000u;
    return bits;
  }
  return (sign << 31) | (e << 23) | mant;
}

// The same idea for bfloat16: every exponent, exact ties, near-overflow.
uint32_t bf16_sample(uint64_t r) {
  const uint32_t sign = static_cast<uint32_t>(r >> 63) & 1u;
  const uint32_t mode = static_cast<uint32_t>(r >> 60) & 3u;
  uint32_t mant = static_cast<uint32_t>(r) & 0x7fffffu;
  const uint32_t er = static_cast<uint32_t>(r >> 32) & 0xffffu;
  uint32_t e;
  if (mode == 0) {
    e = er % 255;
  } else if (mode == 1) {
    e = er % 255;
    mant = (mant & 0x7f0000u) | 0x8000u;
  } else if (mode == 2) {
    e = 254 - er % 2;
    mant = mant | ((er & 4u) ? 0x7f0000u : 0u);
  } else {
    uint32_t bits = static_cast<uint32_t>(r);
    if ((bits & 0x7f800000u) == 0x7f800000u) bits &= 0xff800000u;
    return bits;
  }
  return (sign << 31) | (e << 23) | mant;
}

constexpr size_t kSampleSize = size_t{1} << 20;
// FNV-1a-style checksums of the 16-bit results over the whole sample:
// numpy `x.astype(np.float16)` and torch `x.to(torch.bfloat16)`.
constexpr uint64_t kNumpyHalfChecksum = 0xd8a9dc355a4a1e62ull;
constexpr uint64_t kTorchBFloat16Checksum = 0x378ec5ac5f2b1763ull;

uint64_t fnv_step(uint64_t h, uint16_t v) { return (h ^ v) * 0x100000001b3ull; }

// ---------------------------------------------------------------- Half

TEST(HalfTest, DefaultIsPositiveZero) {
  Half h;
  EXPECT_EQ(h.bits, 0u);
  EXPECT_EQ(static_cast<float>(h), 0.0f);
  EXPECT_FALSE(std::signbit(static_cast<float>(h)));
}

TEST(HalfTest, ConstructorAndConversion) {
  Half h(1.5f);
  EXPECT_EQ(h.bits, 0x3e00u);
  EXPECT_EQ(static_cast<float>(h), 1.5f);
  Half n(-65504.0f);
  EXPECT_EQ(n.bits, 0xfbffu);
  const float sum = Half(0.25f) + Half(0.5f);  // Arithmetic happens in float.
  EXPECT_EQ(sum, 0.75f);
}

TEST(HalfTest, ToFloatOfEveryPatternMatchesIndependentDecode) {
  for (uint32_t i = 0; i <= 0xffffu; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const float f = Half::to_float(h);
    if (half_is_nan(h)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << i;
      EXPECT_EQ(std::signbit(f), (h & 0x8000u) != 0) << std::hex << i;
      continue;
    }
    const double expected = decode_half(h);
    ASSERT_EQ(static_cast<double>(f), expected) << std::hex << i;
    ASSERT_EQ(std::signbit(f), (h & 0x8000u) != 0) << std::hex << i;  // -0 stays -0.
  }
}

TEST(HalfTest, RoundTripOfEveryPattern) {
  int nans = 0;
  for (uint32_t i = 0; i <= 0xffffu; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const uint16_t back = Half::from_float(Half::to_float(h));
    if (half_is_nan(h)) {
      ++nans;
      EXPECT_TRUE(half_is_nan(back)) << std::hex << i << " -> " << back;
      EXPECT_EQ(back & 0x8000u, h & 0x8000u) << std::hex << i;
    } else {
      ASSERT_EQ(back, h) << std::hex << i;
    }
  }
  EXPECT_EQ(nans, 2 * 1023);
}

TEST(HalfTest, FloatNansBecomeHalfNans) {
  for (uint32_t bits : {0x7fc00000u, 0x7f800001u, 0x7fffffffu, 0xffc00000u, 0xff800001u,
                        0x7f802000u, 0x7fa00000u}) {
    const uint16_t h = Half::from_float(bits_float(bits));
    EXPECT_TRUE(half_is_nan(h)) << std::hex << bits << " -> " << h;
    EXPECT_EQ(h & 0x8000u, (bits >> 16) & 0x8000u) << std::hex << bits;
  }
}

// numpy: np.array(x, np.float32).astype(np.float16).view(np.uint16).
TEST(HalfTest, EdgeCasesMatchNumpy) {
  const struct {
    uint32_t f;
    uint16_t h;
  } kCases[] = {
      {0x00000000u, 0x0000u},  // 0
      {0x80000000u, 0x8000u},  // -0
      {0x3f800000u, 0x3c00u},  // 1
      {0xc0200000u, 0xc100u},  // -2.5
      {0x477fe000u, 0x7bffu},  // 65504, the largest half
      {0x477fe100u, 0x7bffu},
      {0x477fef00u, 0x7bffu},
      {0x477fefffu, 0x7bffu},  // Just below the overflow threshold.
      {0x477ff000u, 0x7c00u},  // 65520: ties to even, which is inf.
      {0x47800000u, 0x7c00u},  // 65536
      {0x501502f9u, 0x7c00u},  // 1e10
      {0xd01502f9u, 0xfc00u},  // -1e10
      {0x38800000u, 0x0400u},  // 2^-14, smallest normal
      {0x33800000u, 0x0001u},  // 2^-24, smallest subnormal
      {0x33000000u, 0x0000u},  // 2^-25: tie between 0 and 2^-24, to even 0
      {0x33000001u, 0x0001u},  // Just above that tie.
      {0x33400000u, 0x0001u},  // 3 * 2^-26
      {0x33a00000u, 0x0001u},  // 5 * 2^-26 = 1.25 ulps
      {0x32800000u, 0x0000u},  // 2^-26
      {0x00000001u, 0x0000u},  // Smallest float subnormal.
      {0x3f801000u, 0x3c00u},  // 1 + 2^-11: tie, to even 1.0
      {0x3f803000u, 0x3c02u},  // 1 + 3 * 2^-11: tie, to even 1 + 2^-9
      {0x3f801001u, 0x3c01u},  // Just above a tie.
      {0x3dcccccdu, 0x2e66u},  // 0.1
      {0x3eaaaaabu, 0x3555u},  // 1/3
      {0x45000800u, 0x6800u},  // 2048.5
      {0x45001000u, 0x6800u},  // 2049: tie, to even 2048
      {0x45003000u, 0x6802u},  // 2051: tie, to even 2052
      {0x7f800000u, 0x7c00u},  // inf
      {0xff800000u, 0xfc00u},  // -inf
      {0x387fe000u, 0x0400u},  // Largest subnormal rounds up into the normals.
      {0x387ff000u, 0x0400u},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(Half::from_float(bits_float(c.f)), c.h) << std::hex << c.f;
    EXPECT_EQ(oracle_half(bits_float(c.f)), c.h) << "oracle disagrees at " << std::hex << c.f;
  }
}

// Every midpoint between neighbouring halves (exact in float), and the
// floats either side of it: the tie goes to the even pattern, the
// neighbours to the nearer half. Covers subnormals, exponent steps and the
// overflow threshold (the midpoint above 65504).
TEST(HalfTest, EveryTieAndItsNeighboursRoundCorrectly) {
  const std::vector<double>& table = half_table();
  for (uint32_t h = 0; h < 0x7c00u; ++h) {
    const double mid = (table[h] + table[h + 1]) / 2;
    const float f = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(f), mid) << "midpoint not exact at " << std::hex << h;
    const uint16_t even = static_cast<uint16_t>(h % 2 == 0 ? h : h + 1);
    const float below = std::nextafter(f, 0.0f);
    const float above = std::nextafter(f, INFINITY);
    for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
      const float s = sign ? -1.0f : 1.0f;
      ASSERT_EQ(Half::from_float(s * f), sign | even) << std::hex << h;
      ASSERT_EQ(Half::from_float(s * below), sign | h) << std::hex << h;
      ASSERT_EQ(Half::from_float(s * above), sign | (h + 1)) << std::hex << h;
    }
  }
}

TEST(HalfTest, LargeSampleMatchesOracleAndNumpy) {
  uint64_t state = 0x5EED;
  uint64_t checksum = 0xcbf29ce484222325ull;
  int mismatches = 0;
  for (size_t i = 0; i < kSampleSize; ++i) {
    const uint32_t bits = half_sample(splitmix_next(&state));
    if (i == 0) {
      ASSERT_EQ(bits, 0x45f0a9b4u) << "sample generator differs from the Python one";
    }
    const float f = bits_float(bits);
    const uint16_t got = Half::from_float(f);
    const uint16_t want = oracle_half(f);
    if (got != want && ++mismatches <= 10) {
      ADD_FAILURE() << "from_float(0x" << std::hex << bits << ") = 0x" << got << ", want 0x"
                    << want;
    }
    checksum = fnv_step(checksum, got);
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(checksum, kNumpyHalfChecksum) << std::hex << checksum;
}

// ---------------------------------------------------------------- BFloat16

TEST(BFloat16Test, ConstructorAndConversion) {
  BFloat16 d;
  EXPECT_EQ(d.bits, 0u);
  BFloat16 b(1.5f);
  EXPECT_EQ(b.bits, 0x3fc0u);
  EXPECT_EQ(static_cast<float>(b), 1.5f);
  EXPECT_EQ(BFloat16(-2.0f).bits, 0xc000u);
}

TEST(BFloat16Test, ToFloatOfEveryPatternMatchesIndependentDecode) {
  for (uint32_t i = 0; i <= 0xffffu; ++i) {
    const uint16_t b = static_cast<uint16_t>(i);
    const float f = BFloat16::to_float(b);
    if (bf16_is_nan(b)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << i;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), decode_bf16(b)) << std::hex << i;
    ASSERT_EQ(std::signbit(f), (b & 0x8000u) != 0) << std::hex << i;
  }
}

TEST(BFloat16Test, RoundTripOfEveryPattern) {
  for (uint32_t i = 0; i <= 0xffffu; ++i) {
    const uint16_t b = static_cast<uint16_t>(i);
    const uint16_t back = BFloat16::from_float(BFloat16::to_float(b));
    if (bf16_is_nan(b)) {
      EXPECT_TRUE(bf16_is_nan(back)) << std::hex << i << " -> " << back;
    } else {
      ASSERT_EQ(back, b) << std::hex << i;
    }
  }
}

TEST(BFloat16Test, FloatNansStayNan) {
  // A NaN whose payload lives only in the low 16 bits would truncate to inf.
  for (uint32_t bits : {0x7fc00000u, 0x7f800001u, 0x7f80ffffu, 0xff800001u, 0x7fffffffu}) {
    EXPECT_TRUE(bf16_is_nan(BFloat16::from_float(bits_float(bits)))) << std::hex << bits;
  }
}

// torch: torch.tensor(x, dtype=torch.float32).to(torch.bfloat16).
TEST(BFloat16Test, EdgeCasesMatchTorch) {
  const struct {
    uint32_t f;
    uint16_t b;
  } kCases[] = {
      {0x00000000u, 0x0000u}, {0x80000000u, 0x8000u},
      {0x3f800000u, 0x3f80u},  // 1
      {0x3f808000u, 0x3f80u},  // 1 + 2^-8: tie, to even
      {0x3f818000u, 0x3f82u},  // 1 + 3 * 2^-8: tie, to even
      {0x3f808008u, 0x3f81u},  // Just above a tie.
      {0x7f7f0000u, 0x7f7fu},  // Largest bfloat16.
      {0x7f7fc99eu, 0x7f80u},  // 3.4e38 rounds to inf.
      {0x7f7fffffu, 0x7f80u},  // FLT_MAX rounds to inf.
      {0x000116c2u, 0x0001u},  // 1e-40, a float subnormal.
      {0x800116c2u, 0x8001u},
      {0x00800000u, 0x0080u},  // FLT_MIN
      {0x7f800000u, 0x7f80u}, {0xff800000u, 0xff80u},
      {0x3dcccccdu, 0x3dcdu},  // 0.1
      {0xbeaaaaabu, 0xbeabu},  // -1/3
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(BFloat16::from_float(bits_float(c.f)), c.b) << std::hex << c.f;
    EXPECT_EQ(oracle_bf16(bits_float(c.f)), c.b) << "oracle disagrees at " << std::hex << c.f;
  }
}

TEST(BFloat16Test, EveryTieAndItsNeighboursRoundCorrectly) {
  const std::vector<double>& table = bf16_table();
  for (uint32_t b = 0; b < 0x7f80u; ++b) {
    const double mid = (table[b] + table[b + 1]) / 2;
    if (mid > 3.4028234663852886e38) {
      // Above FLT_MAX: the overflow tie is not a float; FLT_MAX itself
      // rounds to inf (EdgeCasesMatchTorch).
      continue;
    }
    const float f = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(f), mid) << "midpoint not exact at " << std::hex << b;
    const uint16_t even = static_cast<uint16_t>(b % 2 == 0 ? b : b + 1);
    for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
      const float s = sign ? -1.0f : 1.0f;
      ASSERT_EQ(BFloat16::from_float(s * f), sign | even) << std::hex << b;
      ASSERT_EQ(BFloat16::from_float(s * std::nextafter(f, 0.0f)), sign | b) << std::hex << b;
      ASSERT_EQ(BFloat16::from_float(s * std::nextafter(f, INFINITY)), sign | (b + 1))
          << std::hex << b;
    }
  }
}

TEST(BFloat16Test, LargeSampleMatchesOracleAndTorch) {
  uint64_t state = 0x5EED;
  uint64_t checksum = 0xcbf29ce484222325ull;
  int mismatches = 0;
  for (size_t i = 0; i < kSampleSize; ++i) {
    const uint32_t bits = bf16_sample(splitmix_next(&state));
    if (i == 0) {
      ASSERT_EQ(bits, 0x4df0a9b4u) << "sample generator differs from the Python one";
    }
    const float f = bits_float(bits);
    const uint16_t got = BFloat16::from_float(f);
    const uint16_t want = oracle_bf16(f);
    if (got != want && ++mismatches <= 10) {
      ADD_FAILURE() << "from_float(0x" << std::hex << bits << ") = 0x" << got << ", want 0x"
                    << want;
    }
    checksum = fnv_step(checksum, got);
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(checksum, kTorchBFloat16Checksum) << std::hex << checksum;
}

}  // namespace
}  // namespace torchlight
