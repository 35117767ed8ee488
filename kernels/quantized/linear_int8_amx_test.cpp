// linear_int8's AMX-INT8 tiles (linear_int8_amx.h) against a float64
// reference of the int8 weight-only linear (x . w[n] * scale[n] + bias[n])
// and against the AVX-512 loop they replace. The activations are split
// into three int8 digits per value (int8_digit_split.h), so the error is
// the header's bound: |scale| (m W / (127 * 2^16) + 2^-23 (X + m W / 64) +
// 2^-149) + 2^-24 |out| + 2^-149 with m = max|x| of the row, W = sum |w| of the
// column, X = sum |x w|; two digits fail it. Identity weights give x
// rounded to the row's digits exactly. Skipped where the CPU or the kernel
// does not give this process AMX.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/quantized/int8_digit_split.h"
#include "kernels/quantized/linear_int8.h"
#include "kernels/quantized/linear_int8_amx.h"
#include "kernels/quantized/quant_isa.h"

#if defined(__x86_64__) || defined(_M_X64)
namespace torchlight::quantized {
namespace {

class LinearInt8AmxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu_runs_linear_int8_amx()) {
      GTEST_SKIP() << "this CPU (or kernel) does not run AMX-INT8 (best: "
                   << quant_isa_name(detected_quant_isa()) << ")";
    }
  }
};

uint32_t next(uint32_t* seed) { return *seed = *seed * 1664525u + 1013904223u; }

struct Aligned {
  explicit Aligned(size_t bytes) : size((bytes + 63) / 64 * 64), data(static_cast<char*>(std::aligned_alloc(64, size))) {
    std::memset(data, 0x5A, size);  // Garbage: the kernel must write what it reads.
  }
  ~Aligned() { std::free(data); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  size_t size;
  char* data;
};

struct Case {
  int64_t rows, k, n;
  std::vector<float> x, scales, bias;
  std::vector<int8_t> weight;
};

// Rows of several kinds: values within four binades (as activations are),
// a large dynamic range (2^-30 .. 2^30), zeros, one huge value among tiny
// ones, denormals among normals, all denormals; full 24-bit significands,
// both signs. Weights over all of int8 (the first column all -128, the
// second all 127).
Case make_case(int64_t rows, int64_t k, int64_t n, uint32_t* seed) {
  Case c{rows, k, n, {}, {}, {}, {}};
  c.x.resize(static_cast<size_t>(rows * k));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < k; ++i) {
      const double significand = 1.0 + (next(seed) >> 8) / 16777216.0;
      int exponent = static_cast<int>(next(seed) >> 27) * 2 - 30;
      if (r % 7 == 0 || r % 7 == 2) exponent = static_cast<int>(next(seed) >> 30) - 2;
      float v = static_cast<float>(std::ldexp(significand, exponent));
      if (next(seed) & 0x80000000u) v = -v;
      if (r % 7 == 3) v = 0.0f;
      if (r % 7 == 4) v = i == k / 2 ? 1e20f : std::ldexp(v, -40);
      if (r % 7 == 5 && i % 3 == 0) v = std::ldexp(v, -140 - exponent);  // Denormal.
      if (r % 7 == 6) v = std::ldexp(1.0f + (next(seed) >> 9) / 8388608.0f, -140);
      c.x[r * k + i] = v;
    }
  }
  c.weight.resize(static_cast<size_t>(n * k));
  for (auto& v : c.weight) v = static_cast<int8_t>(next(seed) >> 24);
  std::fill(c.weight.begin(), c.weight.begin() + k, int8_t{-128});
  if (n > 1) std::fill(c.weight.begin() + k, c.weight.begin() + 2 * k, int8_t{127});
  c.scales.resize(static_cast<size_t>(n));
  for (auto& v : c.scales) v = static_cast<float>((next(seed) >> 20) + 1) / 65536;
  c.bias.resize(static_cast<size_t>(n));
  for (auto& v : c.bias) v = static_cast<float>(static_cast<int32_t>(next(seed) >> 16) - 32768) / 4096;
  return c;
}

// The tiles on columns [0, N), split at multiples of 16 as the op's
// threads split them; `drop_digits` zeroes the last digit planes first.
std::vector<float> run_amx(const Case& c, bool with_bias, bool* finite, int drop_digits = 0) {
  Aligned split(split_rows_int8_amx_bytes(c.rows, c.k));
  *finite = split_rows_int8_amx(c.x.data(), c.rows, c.k, split.data);
  for (int p = kInt8Digits - drop_digits; p < kInt8Digits; ++p) {
    std::memset(split_int8_amx_digit_plane(split.data, c.rows, c.k, p), 0,
                static_cast<size_t>((c.rows + 15) / 16 * 16 * split_int8_amx_row_bytes(c.k)));
  }
  std::vector<float> out(static_cast<size_t>(c.rows * c.n), std::numeric_limits<float>::quiet_NaN());
  RowsInt8Amx rows{};
  rows.split = split.data;
  rows.rows = c.rows;
  rows.weight = c.weight.data();
  rows.scales = c.scales.data();
  rows.bias = with_bias ? c.bias.data() : nullptr;
  rows.k = c.k;
  rows.n = c.n;
  rows.out = out.data();
  Aligned panel(linear_int8_amx_panel_bytes(c.k));
  const int64_t middle = std::min<int64_t>(c.n, 48);
  linear_int8_amx_columns(rows, panel.data, 0, middle);
  if (middle < c.n) linear_int8_amx_columns(rows, panel.data, middle, c.n);
  return out;
}

// The AVX-512 loop (what the tiles replace).
std::vector<float> run_avx512(const Case& c, bool with_bias) {
  std::vector<float> out(static_cast<size_t>(c.rows * c.n));
  const ColumnsInt8Fn columns = select_linear_int8(QuantIsa::kAvx512Vnni);
  for (int64_t r0 = 0; r0 < c.rows; r0 += kRowsInt8) {
    RowsInt8 block{};
    block.x = c.x.data() + r0 * c.k;
    block.rows = static_cast<int>(std::min<int64_t>(kRowsInt8, c.rows - r0));
    block.weight = c.weight.data();
    block.scales = c.scales.data();
    block.bias = with_bias ? c.bias.data() : nullptr;
    block.k = c.k;
    block.n = c.n;
    block.out = out.data() + r0 * c.n;
    columns(block, 0, c.n);
  }
  return out;
}

// The float64 result, the tiles' error bound (the header's) and the
// AVX-512 loop's (an fp32 sum's: 2e-6 of |scale| X + |bias|), per output.
struct Reference {
  std::vector<double> want, amx_bound, loop_bound;
};

Reference reference(const Case& c, bool with_bias) {
  Reference ref;
  for (int64_t r = 0; r < c.rows; ++r) {
    double m = 0;
    for (int64_t i = 0; i < c.k; ++i) m = std::max(m, std::fabs(static_cast<double>(c.x[r * c.k + i])));
    for (int64_t n = 0; n < c.n; ++n) {
      double sum = 0, magnitude = 0, weights = 0;
      for (int64_t i = 0; i < c.k; ++i) {
        const double w = c.weight[n * c.k + i];
        sum += static_cast<double>(c.x[r * c.k + i]) * w;
        magnitude += std::fabs(static_cast<double>(c.x[r * c.k + i]) * w);
        weights += std::fabs(w);
      }
      const double scale = std::fabs(c.scales[n]);
      const double bias = with_bias ? c.bias[n] : 0.0;
      const double want = sum * c.scales[n] + bias;
      ref.want.push_back(want);
      ref.amx_bound.push_back(scale * (m * weights / (127 * 65536.0) +
                                       std::ldexp(1.0, -23) * (magnitude + m * weights / 64) +
                                       std::ldexp(1.0, -149)) +
                              std::ldexp(1.0, -24) * std::fabs(want) + std::ldexp(1.0, -149));
      ref.loop_bound.push_back(2e-6 * (magnitude * scale + std::fabs(bias)) +
                               3 * std::ldexp(1.0, -126) * weights * scale);
    }
  }
  return ref;
}

void check_case(int64_t rows, int64_t k, int64_t n, bool with_bias, uint32_t* seed) {
  const Case c = make_case(rows, k, n, seed);
  bool finite = false;
  const std::vector<float> got = run_amx(c, with_bias, &finite);
  ASSERT_TRUE(finite);
  const std::vector<float> old = run_avx512(c, with_bias);
  const Reference ref = reference(c, with_bias);
  for (int64_t i = 0; i < rows * n; ++i) {
    ASSERT_NEAR(got[i], ref.want[i], ref.amx_bound[i])
        << "float64: rows " << rows << " k " << k << " n " << n << " bias " << with_bias << " row " << i / n
        << " column " << i % n;
    ASSERT_NEAR(got[i], old[i], ref.amx_bound[i] + ref.loop_bound[i])
        << "AVX-512 loop: rows " << rows << " k " << k << " n " << n << " row " << i / n << " column " << i % n;
  }
}

TEST_F(LinearInt8AmxTest, MatchesFloat64AndTheAvx512LoopForEveryRowCount) {
  uint32_t seed = 13;
  for (int64_t rows = 1; rows <= 40; ++rows) check_case(rows, 96, 40, rows % 2 == 0, &seed);
  for (const int64_t rows : {63, 64, 65}) check_case(rows, 288, 70, rows != 64, &seed);
}

TEST_F(LinearInt8AmxTest, KAndNOffTheTileSizes) {
  uint32_t seed = 7;
  for (const int64_t k : {1, 17, 31, 33, 63, 64, 65, 100, 300}) {
    for (const int64_t n : {1, 15, 16, 17, 33, 47}) check_case(33, k, n, (k + n) % 2 == 0, &seed);
  }
}

// Identity weights with scale 1: each output is one activation's digits,
// 2^(e - 16) (65536 d0 + 256 d1 + d2), which the combine computes exactly;
// so out is x rounded half to even at 2^(e - 16), bit for bit.
TEST_F(LinearInt8AmxTest, IdentityWeightsGiveTheRowsRoundedDigits) {
  const int64_t rows = 20, k = 64;
  Case c{rows, k, k, {}, std::vector<float>(k, 1.0f), {}, std::vector<int8_t>(k * k, 0)};
  for (int64_t i = 0; i < k; ++i) c.weight[i * k + i] = 1;
  uint32_t seed = 3;
  for (int64_t i = 0; i < rows * k; ++i) {
    const float v = std::ldexp(1.0f + (next(&seed) >> 9) / 8388608.0f, static_cast<int>(next(&seed) >> 28) - 160 + 20 * static_cast<int>(i / k % 10));
    c.x.push_back(i % 2 == 0 ? v : -v);
  }
  bool finite = false;
  const std::vector<float> got = run_amx(c, false, &finite);
  ASSERT_TRUE(finite);
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0;
    for (int64_t i = 0; i < k; ++i) m = std::max(m, std::fabs(static_cast<double>(c.x[r * k + i])));
    int e = -200;
    while (m > std::ldexp(127.0, e)) ++e;
    for (int64_t i = 0; i < k; ++i) {
      const double want = std::ldexp(std::nearbyint(std::ldexp(static_cast<double>(c.x[r * k + i]), 16 - e)), e - 16);
      ASSERT_EQ(got[r * k + i], static_cast<float>(want)) << "row " << r << " element " << i;
    }
  }
}

// The tiles' combine is combine_int8_digit_sums' operations, then one
// fused multiply-add with the scale and bias: the kernel's floats equal that
// of the exact digit sums bit for bit, at K below and above 511 (where the
// combine sums 256 A1 + A2 in int32, and where it cannot).
TEST_F(LinearInt8AmxTest, OutputsAreTheCombineOfExactDigitSums) {
  uint32_t seed = 31;
  for (const int64_t k : {1, 64, 288, 300, 511, 512, 768}) {
    const int64_t rows = 19, n = 21;
    const Case c = make_case(rows, k, n, &seed);
    bool finite = false;
    const std::vector<float> got = run_amx(c, true, &finite);
    ASSERT_TRUE(finite);
    Aligned split(split_rows_int8_amx_bytes(rows, k));
    ASSERT_TRUE(split_rows_int8_amx(c.x.data(), rows, k, split.data));
    const int64_t stride = split_int8_amx_row_bytes(k);
    for (int64_t r = 0; r < rows; ++r) {
      uint32_t max_bits = 0;
      for (int64_t i = 0; i < k; ++i) {
        uint32_t bits;
        std::memcpy(&bits, &c.x[r * k + i], sizeof(bits));
        max_bits = std::max(max_bits, bits & 0x7FFFFFFFu);
      }
      const int32_t e = int8_digit_exponent(max_bits);
      for (int64_t col = 0; col < n; ++col) {
        int64_t a[kInt8Digits] = {};
        for (int p = 0; p < kInt8Digits; ++p) {
          const int8_t* d = split_int8_amx_digit_plane(split.data, rows, k, p) + r * stride;
          for (int64_t i = 0; i < k; ++i) a[p] += int64_t{d[i]} * c.weight[col * k + i];
        }
        const float sum = combine_int8_digit_sums(static_cast<int32_t>(a[0]), static_cast<int32_t>(a[1]),
                                                  static_cast<int32_t>(a[2]), e);
        const float want = std::fma(sum, c.scales[col], c.bias[col]);
        ASSERT_EQ(std::memcmp(&got[r * n + col], &want, sizeof(float)), 0)
            << "k " << k << " row " << r << " column " << col << ": " << got[r * n + col] << " vs " << want;
      }
    }
  }
}

// Dropping the third digit (d2) breaks the bound on rows of activations.
TEST_F(LinearInt8AmxTest, TwoDigitsFailTheBound) {
  uint32_t seed = 21;
  const Case c = make_case(7, 288, 40, &seed);
  bool finite = false;
  const std::vector<float> three = run_amx(c, true, &finite, 0);
  const std::vector<float> two = run_amx(c, true, &finite, 1);
  const Reference ref = reference(c, true);
  int outside = 0;
  for (int64_t n = 0; n < c.n; ++n) {  // Row 0: values within four binades.
    ASSERT_NEAR(three[n], ref.want[n], ref.amx_bound[n]) << "column " << n;
    if (std::fabs(two[n] - ref.want[n]) > ref.amx_bound[n]) ++outside;
  }
  EXPECT_GT(outside, c.n / 2);
}

// The largest K (kMaxKInt8Amx) with every digit sum at its extreme: x =
// -(126 + 128/256 + 128/65536) gives d0 = -126, d1 = d2 = -128 in every
// position, and weights of -128 put A1 and A2 at 2^14 K = 2^31 - 2^14,
// still inside int32; the result must stay within the bound.
TEST_F(LinearInt8AmxTest, LargestKKeepsTheSumsInInt32) {
  const int64_t rows = 4, k = kMaxKInt8Amx, n = 16;
  Case c{rows, k, n, std::vector<float>(static_cast<size_t>(rows * k), -(126.0f + 128.0f / 256 + 128.0f / 65536)),
         std::vector<float>(n, 1.0f / 65536), std::vector<float>(n, 0.5f), std::vector<int8_t>(static_cast<size_t>(n * k), -128)};
  for (int64_t i = 1; i < n; ++i) std::fill(c.weight.begin() + i * k, c.weight.begin() + (i + 1) * k, static_cast<int8_t>(i % 2 == 0 ? -128 : 127));
  bool finite = false;
  const std::vector<float> got = run_amx(c, true, &finite);
  ASSERT_TRUE(finite);
  const Reference ref = reference(c, true);
  for (int64_t i = 0; i < rows * n; ++i) ASSERT_NEAR(got[i], ref.want[i], ref.amx_bound[i]) << "output " << i;
}

TEST_F(LinearInt8AmxTest, NonFiniteRowsAreReportedForTheFallback) {
  uint32_t seed = 5;
  for (const float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()}) {
    Case c = make_case(18, 40, 16, &seed);
    c.x[17 * 40 + 39] = bad;  // The last value of the last row (in the K tail).
    Aligned split(split_rows_int8_amx_bytes(c.rows, c.k));
    EXPECT_FALSE(split_rows_int8_amx(c.x.data(), c.rows, c.k, split.data)) << bad;
    c.x[17 * 40 + 39] = std::numeric_limits<float>::max();
    EXPECT_TRUE(split_rows_int8_amx(c.x.data(), c.rows, c.k, split.data));
  }
}

}  // namespace
}  // namespace torchlight::quantized
#endif
