// linear_8da4w's AMX tiles (linear_8da4w_amx.h) against the decomposed
// 8da4w graph torch runs (choose_qparams_per_token_asymmetric,
// quantize_per_token, dequantize both sides, linear) computed in float64,
// and against the AVX-512 VNNI loop on the same quantized rows: within
// 1e-4 of the row's largest |output| (the sums are exact in int32; only
// the float steps' order differs). Skipped where the CPU or the kernel
// does not give this process AMX-INT8.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "kernels/quantized/linear_8da4w.h"
#include "kernels/quantized/linear_8da4w_amx.h"
#include "kernels/quantized/per_token_qparams.h"
#include "kernels/quantized/quant_isa.h"

#if defined(__x86_64__) || defined(_M_X64)
namespace torchlight::quantized {
namespace {

class Linear8da4wAmxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu_has_quant_isa(QuantIsa::kAmx)) {
      GTEST_SKIP() << "this CPU (or kernel) does not run AMX-INT8 (best: "
                   << quant_isa_name(detected_quant_isa()) << ")";
    }
  }
};

uint32_t next(uint32_t* seed) { return *seed = *seed * 1664525u + 1013904223u; }

// 64-byte aligned bytes (the panels' vector stores), zeroed.
struct Aligned {
  explicit Aligned(size_t bytes) : data(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64))) {
    std::fill(data, data + (bytes + 63) / 64 * 64, char{0});
  }
  ~Aligned() { std::free(data); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  char* data;
};

struct Case {
  int64_t rows, k, n, group;
  std::vector<float> x, scales, bias;
  std::vector<uint8_t> weight;
};

// Rows of different ranges and signs: all positive (zero point -128), all
// negative (127), mixed; the first column's weights all -8, the second's 7.
Case make_case(int64_t rows, int64_t k, int64_t n, int64_t group, uint32_t* seed) {
  Case c{rows, k, n, group, {}, {}, {}, {}};
  c.x.resize(static_cast<size_t>(rows * k));
  for (int64_t i = 0; i < rows * k; ++i) {
    const double v = (static_cast<int32_t>(next(seed) >> 16) - 32768) / 16384.0;
    const int64_t kind = i / k % 3;
    c.x[i] = static_cast<float>(kind == 0 ? v : kind == 1 ? std::fabs(v) + 0.5 : -std::fabs(v) * 3);
  }
  c.weight.resize(static_cast<size_t>(n * k / 2));
  for (auto& v : c.weight) v = static_cast<uint8_t>(next(seed) >> 24);
  std::fill(c.weight.begin(), c.weight.begin() + k / 2, uint8_t{0x00});
  if (n > 1) std::fill(c.weight.begin() + k / 2, c.weight.begin() + k, uint8_t{0xFF});
  c.scales.resize(static_cast<size_t>(n * (k / group)));
  for (auto& v : c.scales) v = static_cast<float>((next(seed) >> 20) + 1) / 65536;
  c.bias.resize(static_cast<size_t>(n));
  for (auto& v : c.bias) v = static_cast<float>(static_cast<int32_t>(next(seed) >> 16) - 32768) / 4096;
  return c;
}

int8_t nibble(const std::vector<uint8_t>& weight, int64_t k, int64_t n, int64_t i) {
  const uint8_t byte = weight[n * (k / 2) + i / 2];
  return static_cast<int8_t>((i % 2 == 0 ? byte >> 4 : byte & 15) - 8);
}

// The quantized rows as the op makes them.
struct Quantized {
  std::vector<int8_t> q;  // [rows, K], natural order.
  std::vector<int32_t> zero_point;
  std::vector<float> scale;
};

Quantized quantize(const Case& c) {
  Quantized out;
  out.q.resize(c.x.size());
  for (int64_t r = 0; r < c.rows; ++r) {
    double scale = 0;
    int64_t zp = 0;
    token_qparams(c.x.data() + r * c.k, c.k, &scale, &zp);
    quantize_token_int8(c.x.data() + r * c.k, c.k, scale, zp, out.q.data() + r * c.k);
    out.zero_point.push_back(static_cast<int32_t>(zp));
    out.scale.push_back(static_cast<float>(scale));
  }
  return out;
}

// The decomposed graph in float64: (q - zp) * scale (float32 scale, as
// torch's per-token qparams) times (w - 8) * group scale, summed, + bias.
std::vector<double> reference(const Case& c, const Quantized& q, bool with_bias) {
  std::vector<double> out(static_cast<size_t>(c.rows * c.n));
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t n = 0; n < c.n; ++n) {
      double sum = with_bias ? c.bias[n] : 0.0;
      for (int64_t i = 0; i < c.k; ++i) {
        const double x = static_cast<double>(q.q[r * c.k + i] - q.zero_point[r]) * q.scale[r];
        const double w = nibble(c.weight, c.k, n, i) * static_cast<double>(c.scales[n * (c.k / c.group) + i / c.group]);
        sum += x * w;
      }
      out[r * c.n + n] = sum;
    }
  }
  return out;
}

// The AMX tiles on columns [n_begin, n_end) (split into parts at multiples
// of 16, as the op's threads split them).
std::vector<float> run_amx(const Case& c, bool with_bias, std::vector<std::pair<int64_t, int64_t>> parts) {
  const int64_t padded = (c.rows + 15) / 16 * 16;
  const int64_t stride = amx_row_stride_8da4w(c.k);
  Aligned xq(static_cast<size_t>(padded * stride));
  std::vector<int32_t> zero_point(c.rows);
  std::vector<float> scale(c.rows);
  for (int64_t r = 0; r < c.rows; ++r) {
    double s = 0;
    int64_t zp = 0;
    token_qparams(c.x.data() + r * c.k, c.k, &s, &zp);
    zero_point[r] = static_cast<int32_t>(zp);
    scale[r] = static_cast<float>(s);
    quantize_row_8da4w_amx(c.x.data() + r * c.k, c.k, s, zp, reinterpret_cast<int8_t*>(xq.data) + r * stride);
  }
  std::vector<float> out(static_cast<size_t>(c.rows * c.n), std::numeric_limits<float>::quiet_NaN());
  Rows8da4wAmx rows{};
  rows.xq = reinterpret_cast<const int8_t*>(xq.data);
  rows.stride = stride;
  rows.zero_point = zero_point.data();
  rows.scale = scale.data();
  rows.rows = c.rows;
  rows.weight = c.weight.data();
  rows.w_scales = c.scales.data();
  rows.bias = with_bias ? c.bias.data() : nullptr;
  rows.k = c.k;
  rows.n = c.n;
  rows.group = c.group;
  rows.out = out.data();
  Aligned panel(linear_8da4w_amx_panel_bytes(c.k, c.group));
  for (const auto& [n_begin, n_end] : parts) linear_8da4w_amx_columns(rows, panel.data, n_begin, n_end);
  return out;
}

// The AVX-512 VNNI loop (the path AMX replaces) on the same quantized rows.
std::vector<float> run_vnni(const Case& c, const Quantized& q, bool with_bias) {
  const int64_t groups = c.k / c.group;
  std::vector<int8_t> arranged(q.q.size());
  std::vector<float> correction(static_cast<size_t>(c.rows * groups));
  for (int64_t r = 0; r < c.rows; ++r) {
    arrange_row_8da4w(q.q.data() + r * c.k, c.k, c.group, q.zero_point[r], arranged.data() + r * c.k,
                      correction.data() + r * groups);
  }
  std::vector<float> out(static_cast<size_t>(c.rows * c.n));
  const Columns8da4wFn columns = select_linear_8da4w(c.group, QuantIsa::kAvx512Vnni);
  for (int64_t r0 = 0; r0 < c.rows; r0 += kRows8da4w) {
    Row8da4w block{};
    block.rows = static_cast<int>(std::min<int64_t>(kRows8da4w, c.rows - r0));
    block.xq = arranged.data() + r0 * c.k;
    block.correction = correction.data() + r0 * groups;
    for (int r = 0; r < block.rows; ++r) {
      block.zero_point[r] = q.zero_point[r0 + r];
      block.scale[r] = q.scale[r0 + r];
    }
    block.weight = c.weight.data();
    block.w_scales = c.scales.data();
    block.bias = with_bias ? c.bias.data() : nullptr;
    block.k = c.k;
    block.n = c.n;
    block.group = c.group;
    block.out = out.data() + r0 * c.n;
    columns(block, 0, c.n);
  }
  return out;
}

// |got - want| <= 1e-4 * the row's largest |want| (+ a float's worth for zero rows).
template <typename T>
void expect_close(const std::vector<float>& got, const std::vector<T>& want, const Case& c,
                  const char* against) {
  for (int64_t r = 0; r < c.rows; ++r) {
    double magnitude = 0;
    for (int64_t n = 0; n < c.n; ++n) magnitude = std::max(magnitude, std::fabs(double(want[r * c.n + n])));
    const double tolerance = 1e-4 * magnitude + 1e-30;
    for (int64_t n = 0; n < c.n; ++n) {
      ASSERT_NEAR(got[r * c.n + n], double(want[r * c.n + n]), tolerance)
          << "against " << against << ": rows " << c.rows << " k " << c.k << " group " << c.group
          << " n " << c.n << " row " << r << " column " << n;
    }
  }
}

TEST_F(Linear8da4wAmxTest, MatchesDecomposedGraphAndVnniLoop) {
  uint32_t seed = 2024;
  struct Shape {
    int64_t group, groups, n;
  };
  std::vector<Shape> shapes;
  for (const int64_t group : {32, 64, 128}) {
    for (const int64_t groups : {1, 2, 3, 5, 8}) shapes.push_back({group, groups, 37});
  }
  shapes.push_back({256, 3, 53});  // Two blocks of 16 and a partial one.
  shapes.push_back({32, 9, 16});   // One whole block.
  shapes.push_back({96, 2, 37});   // Steps of 32 (96 is not a multiple of 64).
  std::vector<int64_t> row_counts;
  for (int64_t r = 1; r <= 40; ++r) row_counts.push_back(r);
  for (const int64_t r : {47, 48, 49, 63, 64, 65}) row_counts.push_back(r);
  for (const Shape& s : shapes) {
    const int64_t k = s.group * s.groups;
    for (const int64_t rows : row_counts) {
      // The long row list on a few shapes; the rest at the tiles' edges.
      if (s.groups != 3 && s.groups != 8 && rows % 16 > 1 && rows % 16 != 15 && rows != 5) continue;
      const Case c = make_case(rows, k, s.n, s.group, &seed);
      const Quantized q = quantize(c);
      for (const bool with_bias : {false, true}) {
        const std::vector<float> got = run_amx(c, with_bias, {{0, 16}, {16, s.n}});
        expect_close(got, reference(c, q, with_bias), c, "float64 decomposed graph");
        expect_close(got, run_vnni(c, q, with_bias), c, "AVX-512 VNNI loop");
        // One part or two give the same floats (each column's sums are its own).
        ASSERT_EQ(got, run_amx(c, with_bias, {{0, s.n}}));
      }
    }
  }
}

// quantize_row_8da4w_amx(x) holds quantize_token_int8(x)'s bytes in the
// tiles' order (each block of 8: even elements, then odd).
void expect_quantize_row_matches(const std::vector<float>& x, double scale, int64_t zp) {
  const int64_t k = static_cast<int64_t>(x.size());
  std::vector<int8_t> want(x.size()), got(x.size());
  quantize_token_int8(x.data(), k, scale, zp, want.data());
  quantize_row_8da4w_amx(x.data(), k, scale, zp, got.data());
  for (int64_t i = 0; i < k; ++i) {
    const int64_t j = i % 8;
    const int64_t element = i - j + (j < 4 ? 2 * j : 2 * (j - 4) + 1);
    ASSERT_EQ(got[i], want[element]) << "k " << k << " scale " << scale << " zp " << zp << " position "
                                     << i << " x " << x[static_cast<size_t>(element)];
  }
}

// The tiles' quantize step gives quantize_token_int8's bytes, in the
// tiles' order (each block of 8: even elements, then odd): ties, clamping
// at both ends, NaN (0), infinities.
TEST_F(Linear8da4wAmxTest, QuantizeRowMatchesQuantizeTokenInt8) {
  uint32_t seed = 99;
  for (const int64_t k : {32, 96, 256}) {
    std::vector<float> x(static_cast<size_t>(k));
    for (auto& v : x) v = (static_cast<int32_t>(next(&seed) >> 16) - 32768) / 256.0f;
    x[1] = 0.5f;  // Ties at scale 1: half to even.
    x[2] = 1.5f;
    x[3] = -2.5f;
    x[4] = 1e9f;  // Clamped.
    x[5] = -1e9f;
    x[6] = std::numeric_limits<float>::quiet_NaN();
    x[7] = std::numeric_limits<float>::infinity();
    for (const auto& [scale, zp] : {std::pair<double, int64_t>{1.0, 0}, {0.37, -128}, {2.0, 127}, {0.013, 5}}) {
      expect_quantize_row_matches(x, scale, zp);
    }
  }
}

// The row quantize's float32 first try and its float64 fall-back give
// quantize_token_int8's bytes where float32 alone would not: values at,
// and a few ulps around, the halves between integers for random scales and
// zero points, and the clamping edges.
TEST_F(Linear8da4wAmxTest, QuantizeRowNearHalvesMatchesQuantizeTokenInt8) {
  uint32_t seed = 77;
  constexpr int64_t k = 256;
  for (int trial = 0; trial < 400; ++trial) {
    const double scale = std::ldexp(1.0 + (next(&seed) >> 8) / 16777216.0, static_cast<int>(next(&seed) % 24) - 16);
    const int64_t zp = static_cast<int64_t>(next(&seed) % 256) - 128;
    std::vector<float> x(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) {
      const double half = static_cast<double>(static_cast<int64_t>(next(&seed) % 262) - 131) + 0.5;
      float v = static_cast<float>((half - static_cast<double>(zp)) * scale);
      const int ulps = static_cast<int>(next(&seed) % 7) - 3;
      for (int u = 0; u < std::abs(ulps); ++u) v = std::nextafter(v, ulps > 0 ? INFINITY : -INFINITY);
      x[static_cast<size_t>(i)] = v;
    }
    expect_quantize_row_matches(x, scale, zp);
  }
}

// The rows' quantize (eight rows a step) gives each row's token_qparams
// and quantize_row_8da4w_amx bytes at the row stride: row counts around
// the steps, a NaN row among them, bytes past K untouched.
TEST_F(Linear8da4wAmxTest, QuantizeRowsMatchesEachRowAlone) {
  uint32_t seed = 5;
  constexpr int64_t k = 96;
  const int64_t stride = amx_row_stride_8da4w(k);
  for (const int64_t rows : {1, 7, 8, 9, 16, 17, 23}) {
    std::vector<float> x(static_cast<size_t>(rows * k));
    for (auto& v : x) v = (static_cast<int32_t>(next(&seed) >> 16) - 32768) / 1000.0f;
    if (rows > 9) x[static_cast<size_t>(9 * k + 3)] = std::numeric_limits<float>::quiet_NaN();
    std::vector<int8_t> got(static_cast<size_t>(rows * stride), int8_t{0x5A});
    std::vector<int32_t> zero_points(static_cast<size_t>(rows));
    std::vector<float> scales(static_cast<size_t>(rows));
    quantize_rows_8da4w_amx(x.data(), rows, k, stride, got.data(), zero_points.data(), scales.data());
    for (int64_t r = 0; r < rows; ++r) {
      double scale = 0;
      int64_t zp = 0;
      token_qparams(x.data() + r * k, k, &scale, &zp);
      std::vector<int8_t> want(static_cast<size_t>(k));
      quantize_row_8da4w_amx(x.data() + r * k, k, scale, zp, want.data());
      ASSERT_EQ(zero_points[static_cast<size_t>(r)], zp) << "rows " << rows << " row " << r;
      const float want_scale = static_cast<float>(scale);
      if (std::isnan(want_scale)) {
        ASSERT_TRUE(std::isnan(scales[static_cast<size_t>(r)])) << "rows " << rows << " row " << r;
      } else {
        ASSERT_EQ(scales[static_cast<size_t>(r)], want_scale) << "rows " << rows << " row " << r;
      }
      for (int64_t i = 0; i < k; ++i) ASSERT_EQ(got[r * stride + i], want[i]) << "row " << r << " i " << i;
      for (int64_t i = k; i < stride; ++i) ASSERT_EQ(got[r * stride + i], int8_t{0x5A}) << "row " << r;
    }
  }
}

// The tiles' 512-bit scan gives token_qparams' scale and zero point: K off
// the vector widths (1-65, stories15m's 288 and 768), NaN and infinities at
// the first position, in the body and in the masked tail, one-signed rows,
// constant rows, signed zeros.
TEST_F(Linear8da4wAmxTest, TokenQparamsMatchTokenQparams) {
  uint32_t seed = 41;
  std::vector<int64_t> ks;
  for (int64_t k = 1; k <= 65; ++k) ks.push_back(k);
  for (const int64_t k : {127, 128, 129, 288, 768}) ks.push_back(k);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const int64_t k : ks) {
    for (int kind = 0; kind < 9; ++kind) {
      std::vector<float> x(static_cast<size_t>(k));
      for (auto& v : x) v = (static_cast<int32_t>(next(&seed) >> 16) - 32768) / 512.0f;
      if (kind == 1) for (auto& v : x) v = std::fabs(v) + 1.0f;     // Zero point -128.
      if (kind == 2) for (auto& v : x) v = -std::fabs(v) - 1.0f;    // 127.
      if (kind == 3) std::fill(x.begin(), x.end(), 0.25f);
      if (kind == 4) for (int64_t i = 0; i < k; ++i) x[i] = i % 2 ? 0.0f : -0.0f;
      if (kind == 5) x[0] = nan;
      if (kind == 6) x[static_cast<size_t>(k - 1)] = nan;  // Often in the masked tail.
      if (kind == 7) x[static_cast<size_t>(k / 2)] = k % 2 ? inf : -inf;
      if (kind == 8) x[static_cast<size_t>(next(&seed) % k)] = 1e30f;
      double want_scale = 0, got_scale = 0;
      int64_t want_zp = 0, got_zp = 0;
      token_qparams(x.data(), k, &want_scale, &want_zp);
      token_qparams_8da4w_amx(x.data(), k, &got_scale, &got_zp);
      if (std::isnan(want_scale)) {
        ASSERT_TRUE(std::isnan(got_scale)) << "k " << k << " kind " << kind;
      } else {
        ASSERT_EQ(got_scale, want_scale) << "k " << k << " kind " << kind;
      }
      ASSERT_EQ(got_zp, want_zp) << "k " << k << " kind " << kind;
    }
  }
}

}  // namespace
}  // namespace torchlight::quantized
#endif
