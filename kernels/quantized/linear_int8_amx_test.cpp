// linear_int8's AMX-BF16 tiles (linear_int8_amx.h) against a float64
// reference of the int8 weight-only linear (x . w[n] * scale[n] + bias[n])
// and against the AVX-512 loop they replace. The split into three bf16
// parts is exact, so the error is that of fp32 sums: within 2e-6 of
// |scale| sum_k |x_k w_k| + |bias| (plus, for activations below 2^-110,
// the flushed denormal parts: 3 * 2^-126 * sum_k |w_k| |scale|). Identity
// weights must give x back bit for bit. Skipped where the CPU or the kernel
// does not give this process AMX-BF16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/quantized/linear_int8.h"
#include "kernels/quantized/linear_int8_amx.h"
#include "kernels/quantized/quant_isa.h"

#if defined(__x86_64__) || defined(_M_X64)
namespace torchlight::quantized {
namespace {

class LinearInt8AmxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu_has_amx_bf16()) {
      GTEST_SKIP() << "this CPU (or kernel) does not run AMX-BF16 (best: "
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

// Activations with a large dynamic range (2^-30 .. 2^30, full 24-bit
// significands, both signs), a zero row, a row with denormals among
// normals, and an all-denormal row; weights over all of int8 (the first
// column all -128, the second all 127).
Case make_case(int64_t rows, int64_t k, int64_t n, uint32_t* seed) {
  Case c{rows, k, n, {}, {}, {}, {}};
  c.x.resize(static_cast<size_t>(rows * k));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < k; ++i) {
      const double significand = 1.0 + (next(seed) >> 8) / 16777216.0;
      const int exponent = static_cast<int>(next(seed) >> 27) * 2 - 30;
      float v = static_cast<float>(std::ldexp(significand, exponent));
      if (next(seed) & 0x80000000u) v = -v;
      if (r % 7 == 3) v = 0.0f;
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

// The tiles on columns [0, N), split at multiples of 16 as the op's threads split them.
std::vector<float> run_amx(const Case& c, bool with_bias, bool* finite) {
  Aligned split(split_rows_int8_amx_bytes(c.rows, c.k));
  *finite = split_rows_int8_amx(c.x.data(), c.rows, c.k, split.data);
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

// The float64 result and its error bound per output.
void reference(const Case& c, bool with_bias, std::vector<double>* want, std::vector<double>* bound) {
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t n = 0; n < c.n; ++n) {
      double sum = 0, magnitude = 0, weights = 0;
      for (int64_t i = 0; i < c.k; ++i) {
        const double w = c.weight[n * c.k + i];
        sum += static_cast<double>(c.x[r * c.k + i]) * w;
        magnitude += std::fabs(static_cast<double>(c.x[r * c.k + i]) * w);
        weights += std::fabs(w);
      }
      const double scale = c.scales[n];
      const double bias = with_bias ? c.bias[n] : 0.0;
      want->push_back(sum * scale + bias);
      bound->push_back(2e-6 * (magnitude * std::fabs(scale) + std::fabs(bias)) +
                       3 * std::ldexp(1.0, -126) * weights * std::fabs(scale));
    }
  }
}

void check_case(int64_t rows, int64_t k, int64_t n, bool with_bias, uint32_t* seed) {
  const Case c = make_case(rows, k, n, seed);
  bool finite = false;
  const std::vector<float> got = run_amx(c, with_bias, &finite);
  ASSERT_TRUE(finite);
  const std::vector<float> old = run_avx512(c, with_bias);
  std::vector<double> want, bound;
  reference(c, with_bias, &want, &bound);
  for (int64_t i = 0; i < rows * n; ++i) {
    ASSERT_NEAR(got[i], want[i], bound[i]) << "float64: rows " << rows << " k " << k << " n " << n
                                           << " bias " << with_bias << " row " << i / n << " column " << i % n;
    ASSERT_NEAR(got[i], old[i], 2 * bound[i]) << "AVX-512 loop: rows " << rows << " k " << k << " n " << n
                                              << " row " << i / n << " column " << i % n;
  }
}

TEST_F(LinearInt8AmxTest, MatchesFloat64AndTheAvx512LoopForEveryRowCount) {
  uint32_t seed = 13;
  for (int64_t rows = 1; rows <= 40; ++rows) check_case(rows, 96, 40, rows % 2 == 0, &seed);
  for (const int64_t rows : {63, 64, 65}) check_case(rows, 288, 70, rows != 64, &seed);
}

TEST_F(LinearInt8AmxTest, KAndNOffTheTileSizes) {
  uint32_t seed = 7;
  for (const int64_t k : {1, 17, 31, 33, 100, 300}) {
    for (const int64_t n : {1, 15, 16, 17, 33, 47}) check_case(33, k, n, (k + n) % 2 == 0, &seed);
  }
}

// Identity weights with scale 1: each output is one activation times 1, so
// the three parts must give it back exactly (dropping `lo` loses 8 bits).
TEST_F(LinearInt8AmxTest, IdentityWeightsReturnTheActivationsExactly) {
  const int64_t rows = 20, k = 64;
  Case c{rows, k, k, {}, std::vector<float>(k, 1.0f), {}, std::vector<int8_t>(k * k, 0)};
  for (int64_t i = 0; i < k; ++i) c.weight[i * k + i] = 1;
  uint32_t seed = 3;
  for (int64_t i = 0; i < rows * k; ++i) {
    const float v = std::ldexp(1.0f + (next(&seed) >> 9) / 8388608.0f, static_cast<int>(next(&seed) >> 27) * 4 - 60);
    c.x.push_back(i % 2 == 0 ? v : -v);
  }
  bool finite = false;
  const std::vector<float> got = run_amx(c, false, &finite);
  ASSERT_TRUE(finite);
  for (int64_t i = 0; i < rows * k; ++i) ASSERT_EQ(got[i], c.x[i]) << "element " << i;
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
