// Every instruction-set path of the fused quantized linears (quant_isa.h)
// that this CPU runs gives floats IDENTICAL to the generic loop: the
// integer sums are exact in every build and the float steps are the same.
// One test instance per ISA; an ISA the CPU lacks is skipped, saying so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/quantized/linear_8da4w.h"
#include "kernels/quantized/linear_qs8.h"
#include "kernels/quantized/per_token_qparams.h"
#include "kernels/quantized/quant_isa.h"
#include "kernels/quantized/quantize_arranged_8da4w.h"

namespace torchlight::quantized {
namespace {

class QuantIsaTest : public ::testing::TestWithParam<QuantIsa> {
 protected:
  void SetUp() override {
    if (!cpu_has_quant_isa(GetParam())) {
      GTEST_SKIP() << "this CPU does not run " << quant_isa_name(GetParam())
                   << " (best: " << quant_isa_name(detected_quant_isa()) << ")";
    }
  }
};

uint32_t next(uint32_t* seed) { return *seed = *seed * 1664525u + 1013904223u; }

// The op's row loop over blocks of up to `block_rows` rows, columns [n_begin, n_end).
template <typename Rows, typename Fn, typename SetBlock>
void run_blocks(const Rows& base, int rows, int block_rows, Fn columns, SetBlock set_block,
                int64_t n_begin, int64_t n_end) {
  for (int r0 = 0; r0 < rows; r0 += block_rows) {
    Rows block = base;
    set_block(block, r0, std::min(block_rows, rows - r0));
    columns(block, n_begin, n_end);
  }
}

// Arranged 8da4w activations for `rows` rows with zero points at the
// extremes, their corrections, and the weights.
struct Case8da4w {
  int64_t k, group, n;
  std::vector<int8_t> arranged, paired;
  std::vector<float> correction, scales, bias, u_folded;
  std::vector<uint8_t> weight;
  std::vector<int32_t> zero_points;
  std::vector<float> row_scales;
};

Case8da4w make_8da4w(int64_t k, int64_t group, int64_t n, int rows, uint32_t seed) {
  Case8da4w c{k, group, n, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  const int64_t groups = k / group;
  std::vector<int8_t> xq(static_cast<size_t>(rows * k));
  for (auto& v : xq) v = static_cast<int8_t>(next(&seed) >> 24);
  // Extremes: the first row all -128, the second all 127 (the largest |x - zp| with zp at the
  // other end); every weight of column 0 -8 (nibble 0), of column 1 7 (nibble 15).
  std::fill(xq.begin(), xq.begin() + k, static_cast<int8_t>(-128));
  if (rows > 1) std::fill(xq.begin() + k, xq.begin() + 2 * k, static_cast<int8_t>(127));
  c.weight.resize(static_cast<size_t>(n * k / 2));
  for (auto& v : c.weight) v = static_cast<uint8_t>(next(&seed) >> 24);
  std::fill(c.weight.begin(), c.weight.begin() + k / 2, uint8_t{0x00});
  std::fill(c.weight.begin() + k / 2, c.weight.begin() + k, uint8_t{0xFF});
  c.scales.resize(static_cast<size_t>(n * groups));
  for (auto& v : c.scales) v = static_cast<float>((next(&seed) >> 20) + 1) / 65536;
  // Zero scales: column 2's every other group, column 3's every group.
  for (int64_t g = 0; g < groups; g += 2) c.scales[2 * groups + g] = 0.0f;
  std::fill(c.scales.begin() + 3 * groups, c.scales.begin() + 4 * groups, 0.0f);
  c.bias.resize(static_cast<size_t>(n));
  for (auto& v : c.bias) v = static_cast<float>(static_cast<int32_t>(next(&seed) >> 16) - 32768) / 4096;
  const int32_t zps[] = {127, -128, 0, -3, 64, -77, 5};
  c.arranged.resize(xq.size());
  c.correction.resize(static_cast<size_t>(rows * groups));
  for (int r = 0; r < rows; ++r) {
    c.zero_points.push_back(zps[r % 7]);
    c.row_scales.push_back(0.0173f * static_cast<float>(r + 1));
    arrange_row_8da4w(xq.data() + r * k, k, group, zps[r % 7], c.arranged.data() + r * k,
                      c.correction.data() + r * groups);
  }
  c.paired = c.arranged;
  pair_rows_8da4w(c.paired.data(), rows, k, group);
  c.u_folded.resize(static_cast<size_t>(n));
  fold_weight_sums_8da4w(c.weight.data(), c.scales.data(), k, group, 0, n, c.u_folded.data());
  return c;
}

// out [rows, n] from `columns` over [n_begin, n_end) in the op's blocks;
// other columns stay -1.
std::vector<float> run_8da4w(const Case8da4w& c, int rows, Columns8da4wFn columns, bool paired,
                             const float* u_folded, int64_t n_begin, int64_t n_end) {
  std::vector<float> out(static_cast<size_t>(rows * c.n), -1.0f);
  Row8da4w base{};
  base.weight = c.weight.data();
  base.w_scales = c.scales.data();
  base.bias = c.bias.data();
  base.u_folded = u_folded;
  base.k = c.k;
  base.n = c.n;
  base.group = c.group;
  const int64_t groups = c.k / c.group;
  const int8_t* xq = paired ? c.paired.data() : c.arranged.data();
  run_blocks(base, rows, kRows8da4w, columns, [&](Row8da4w& block, int r0, int count) {
    block.rows = count;
    block.xq = xq + r0 * c.k;
    block.correction = c.correction.data() + r0 * groups;
    for (int r = 0; r < count; ++r) {
      block.zero_point[r] = c.zero_points[r0 + r];
      block.scale[r] = c.row_scales[r0 + r];
    }
    block.out = out.data() + r0 * c.n;
  }, n_begin, n_end);
  return out;
}

// The decode loops (with and without precomputed weight sums) and the
// prefill tile, 1..7 rows, groups 32-256, K with 1-3 chunks past the last
// step of four (K = 288, 416, 480: an odd last group of 32 added after the
// fold), K = 2048, zero scales, N not a multiple of any step (16, 8, 4, 2
// columns), and an odd column range starting at an odd column.
TEST_P(QuantIsaTest, Linear8da4wIdenticalToGeneric) {
  const QuantIsa isa = GetParam();
  struct Shape {
    int64_t k, group;
  };
  constexpr int64_t kN = 23;
  // Group 32: 1, 9, 13, 15 and 24 groups leave 1, 9, 13, 15 and 8 past the
  // last vector of sixteen for the corrections' masked tail; 64 none; 25
  // (K = 800) nine after a whole sixteen.
  for (const Shape s : {Shape{32, 32}, Shape{288, 32}, Shape{256, 32}, Shape{768, 32},
                        Shape{416, 32}, Shape{480, 32}, Shape{2048, 32}, Shape{64, 32}, Shape{800, 32},
                        Shape{320, 64}, Shape{192, 64}, Shape{384, 128}, Shape{640, 128},
                        Shape{768, 256}, Shape{2048, 256}, Shape{288, 96}}) {
    const Case8da4w c = make_8da4w(s.k, s.group, kN, 7, static_cast<uint32_t>(s.k * 31 + s.group));
    const Columns8da4wFn loop = select_linear_8da4w(s.group, isa);
    const Columns8da4wFn tile = select_tile_8da4w(s.group, isa);
    ASSERT_NE(loop, &linear_8da4w_columns_generic) << quant_isa_name(isa);
    ASSERT_NE(tile, nullptr) << quant_isa_name(isa);
    for (int rows = 1; rows <= 7; ++rows) {
      const std::string where = std::string(quant_isa_name(isa)) + " k " + std::to_string(s.k) +
                                " group " + std::to_string(s.group) + " rows " + std::to_string(rows);
      for (const auto& [n_begin, n_end] : {std::pair<int64_t, int64_t>{0, kN}, {3, 18}, {1, 18}}) {
        const std::vector<float> want =
            run_8da4w(c, rows, &linear_8da4w_columns_generic, false, nullptr, n_begin, n_end);
        EXPECT_EQ(run_8da4w(c, rows, loop, false, nullptr, n_begin, n_end), want) << where;
        EXPECT_EQ(run_8da4w(c, rows, loop, false, c.u_folded.data(), n_begin, n_end), want)
            << where << " precomputed sums";
        EXPECT_EQ(run_8da4w(c, rows, tile, true, c.u_folded.data(), n_begin, n_end), want)
            << where << " tile";
      }
    }
  }
}

// qs8 operands: random bytes with the first row of x all -128 and the
// second all 127, the first weight column all -128 and the second all 127.
struct CaseQs8 {
  std::vector<int8_t> x, weight;
  std::vector<float> scales, bias;
  std::vector<int32_t> sums;  // weight_sums_qs8
};

CaseQs8 make_qs8(int64_t rows, int64_t k, int64_t n, uint32_t* seed) {
  CaseQs8 c{std::vector<int8_t>(static_cast<size_t>(rows * k)),
            std::vector<int8_t>(static_cast<size_t>(n * k)), std::vector<float>(n),
            std::vector<float>(n), std::vector<int32_t>(n)};
  for (auto& v : c.x) v = static_cast<int8_t>(next(seed) >> 24);
  for (auto& v : c.weight) v = static_cast<int8_t>(next(seed) >> 24);
  std::fill(c.x.begin(), c.x.begin() + k, static_cast<int8_t>(-128));
  std::fill(c.x.begin() + k, c.x.begin() + 2 * k, static_cast<int8_t>(127));
  std::fill(c.weight.begin(), c.weight.begin() + k, static_cast<int8_t>(-128));
  std::fill(c.weight.begin() + k, c.weight.begin() + 2 * k, static_cast<int8_t>(127));
  for (auto& v : c.scales) v = static_cast<float>((next(seed) >> 20) + 1) / 65536;
  for (auto& v : c.bias) v = static_cast<float>(static_cast<int32_t>(next(seed) >> 16) - 32768) / 4096;
  weight_sums_qs8(c.weight.data(), k, 0, n, c.sums.data());
  return c;
}

// qs8 with zero points at both ends, K around every vector width (tails of
// every length class), 1..7 rows, with the weight sums from the loop and
// precomputed (as prepare gives them for a constant weight).
TEST_P(QuantIsaTest, LinearQs8IdenticalToGeneric) {
  const QuantIsa isa = GetParam();
  constexpr int64_t kN = 13;
  uint32_t seed = 777;
  for (const int64_t k : {1, 5, 16, 31, 32, 33, 63, 64, 65, 127, 288, 301, 768}) {
    const CaseQs8 c = make_qs8(7, k, kN, &seed);
    const std::vector<int8_t>& x = c.x;
    for (const int32_t zero_point : {-128, -3, 0, 127}) {
      for (int rows = 1; rows <= 7; ++rows) {
        auto run = [&](ColumnsQs8Fn columns, const int32_t* weight_sums) {
          std::vector<float> out(static_cast<size_t>(rows * kN), -1.0f);
          RowsQs8 base{};
          base.zero_point = zero_point;
          base.x_scale = 0.0137f;
          base.weight = c.weight.data();
          base.scales = c.scales.data();
          base.bias = c.bias.data();
          base.weight_sums = weight_sums;
          base.k = k;
          base.n = kN;
          run_blocks(base, rows, kRowsQs8, columns, [&](RowsQs8& block, int r0, int count) {
            block.x = x.data() + r0 * k;
            block.rows = count;
            block.out = out.data() + r0 * kN;
          }, 1, kN);
          return out;
        };
        const std::vector<float> want = run(&linear_qs8_columns_generic, nullptr);
        const std::string where = std::string(quant_isa_name(isa)) + " k " + std::to_string(k) +
                                  " zp " + std::to_string(zero_point) + " rows " + std::to_string(rows);
        EXPECT_EQ(run(select_linear_qs8(isa), nullptr), want) << where;
        EXPECT_EQ(run(select_linear_qs8(isa), c.sums.data()), want) << where << " precomputed sums";
      }
    }
  }
}

// The largest K the op accepts with the sums at their extremes: (x - zp) =
// +-255 against w = -128 everywhere, |sum| = 255 * 128 * 65536, just below
// 2^31; the VNNI loops' two terms then reach the same size.
TEST_P(QuantIsaTest, LinearQs8ExactAtLargestK) {
  const int64_t k = kMaxKQs8;
  std::vector<int8_t> x(static_cast<size_t>(2 * k)), weight(static_cast<size_t>(2 * k), -128);
  std::fill(x.begin(), x.begin() + k, static_cast<int8_t>(127));
  std::fill(x.begin() + k, x.end(), static_cast<int8_t>(-128));
  std::fill(weight.begin() + k, weight.end(), static_cast<int8_t>(127));
  const float scales[] = {1.0f, 1.0f};
  for (const int32_t zero_point : {-128, 127}) {
    std::vector<float> got(4, 0.0f);
    RowsQs8 rows{};
    rows.x = x.data();
    rows.rows = 2;
    rows.zero_point = zero_point;
    rows.x_scale = 1.0f;
    rows.weight = weight.data();
    rows.scales = scales;
    rows.k = k;
    rows.n = 2;
    rows.out = got.data();
    select_linear_qs8(GetParam())(rows, 0, 2);
    for (int r = 0; r < 2; ++r) {
      for (int n = 0; n < 2; ++n) {
        const int64_t sum = (int64_t{r == 0 ? 127 : -128} - zero_point) * (n == 0 ? -128 : 127) * k;
        EXPECT_EQ(got[r * 2 + n], static_cast<float>(sum)) << "zp " << zero_point << " row " << r
                                                           << " column " << n;
      }
    }
  }
}

// AMX tiles (and the VNNI loop for what they leave) against the generic
// loop: 32-70 rows (whole and partial pairs of row blocks), K a multiple of
// 64 or with a tail of 4-60, column ranges of whole and partial blocks of
// 16, values and zero points at both ends.
TEST(QuantIsaAmxTest, LinearQs8IdenticalToGeneric) {
  if (!cpu_has_quant_isa(QuantIsa::kAmx)) {
    GTEST_SKIP() << "this CPU (or kernel) does not run AMX-INT8 (best: "
                 << quant_isa_name(detected_quant_isa()) << ")";
  }
  constexpr int64_t kN = 37;
  uint32_t seed = 31337;
  for (const int64_t k : {4, 64, 68, 128, 200, 288, 1024}) {
    for (const int64_t rows : {32, 33, 47, 64, 70}) {
      const CaseQs8 c = make_qs8(rows, k, kN, &seed);
      const std::vector<int8_t>& x = c.x;
      std::vector<int8_t> packed(pack_rows_qs8_amx_bytes(rows, k));
      pack_rows_qs8_amx(x.data(), rows, k, packed.data());
      for (const int32_t zero_point : {-128, 7, 127}) {
        RowsQs8 base{};
        base.x = x.data();
        base.zero_point = zero_point;
        base.x_scale = 0.0137f;
        base.weight = c.weight.data();
        base.scales = c.scales.data();
        base.bias = c.bias.data();
        base.weight_sums = c.sums.data();
        base.k = k;
        base.n = kN;
        for (const auto& [n_begin, n_end] : {std::pair<int64_t, int64_t>{0, kN}, {3, 35}}) {
          std::vector<float> want(static_cast<size_t>(rows * kN), -1.0f), got(want);
          run_blocks(base, static_cast<int>(rows), kRowsQs8, &linear_qs8_columns_generic,
                     [&](RowsQs8& block, int r0, int count) {
                       block.x = x.data() + r0 * k;
                       block.rows = count;
                       block.out = want.data() + r0 * kN;
                     }, n_begin, n_end);
          RowsQs8 all = base;
          all.out = got.data();
          linear_qs8_amx_columns(all, packed.data(), rows, n_begin, n_end);
          EXPECT_EQ(got, want) << "k " << k << " rows " << rows << " zp " << zero_point
                               << " columns " << n_begin << ".." << n_end;
        }
      }
    }
  }
}

// 8da4w's activation rows: the ISA's quantize_arranged_8da4w (the portable
// one below AVX-512) gives quantize_token_int8's bytes in arranged order
// (linear_8da4w.h) and each group's correction, bit for bit, through ties,
// clamping at both ends, NaN (0) and infinities; K of 1 to 24 chunks, groups
// of 32 to 256 and 96.
TEST_P(QuantIsaTest, QuantizeArranged8da4wMatchesQuantizeTokenInt8) {
  uint32_t seed = 4242;
  for (const auto& [k, group] : {std::pair<int64_t, int64_t>{32, 32}, {64, 32}, {288, 32},
                                 {768, 32}, {256, 64}, {768, 128}, {512, 256}, {288, 96}}) {
    std::vector<float> x(static_cast<size_t>(k));
    for (auto& v : x) v = static_cast<float>(static_cast<int32_t>(next(&seed) >> 16) - 32768) / 256.0f;
    x[1] = 0.5f;  // Ties at scale 1: half to even.
    x[2] = 1.5f;
    x[3] = -2.5f;
    x[k - 1] = 1e9f;  // Clamped.
    x[k - 2] = -1e9f;
    x[k / 2] = std::numeric_limits<float>::quiet_NaN();
    x[k / 2 + 1] = std::numeric_limits<float>::infinity();
    x[k / 2 + 2] = -std::numeric_limits<float>::infinity();
    const QuantizeArranged8da4wFn quantize = select_quantize_arranged_8da4w(group, GetParam());
    for (const auto& [scale, zp] : {std::pair<double, int32_t>{1.0, 0}, {0.37, -128}, {2.0, 127},
                                    {0.013, 5}, {300.0, -3}}) {
      SCOPED_TRACE("k " + std::to_string(k) + " group " + std::to_string(group) + " scale " +
                   std::to_string(scale) + " zp " + std::to_string(zp));
      std::vector<int8_t> q(static_cast<size_t>(k)), want(q.size());
      quantize_token_int8(x.data(), k, scale, zp, q.data());
      std::vector<float> want_correction;
      for (int64_t g0 = 0; g0 < k; g0 += group) {
        int32_t sum = 0;
        for (int64_t i = g0; i < g0 + group; ++i) sum += q[i];
        want_correction.push_back(static_cast<float>(8 * (sum - zp * static_cast<int32_t>(group))));
        for (int64_t c0 = g0; c0 < g0 + group; c0 += 32) {
          for (int64_t p = 0; p < 32; ++p) want[c0 + p] = q[c0 + arranged_element_8da4w(p, 32)];
        }
      }
      std::vector<int8_t> got(q.size(), 99);
      std::vector<float> correction(want_correction.size(), -1.0f);
      quantize(x.data(), k, group, scale, zp, got.data(), correction.data());
      ASSERT_EQ(got, want);
      ASSERT_EQ(0, std::memcmp(correction.data(), want_correction.data(),
                               correction.size() * sizeof(float)));
    }
  }
}

// The row's range ahead of its quantization parameters: the ISA's
// row_range_f32 gives row_range's minimum and maximum (a zero's sign
// aside, which the parameters drop) and NaN flag, so token_qparams' scale
// and zero point, for lengths around every vector width, NaN in the first,
// a middle and the last place, infinities, zeros of both signs.
TEST_P(QuantIsaTest, RowRangeGivesTokenQparams) {
  const RowRangeF32Fn range = select_row_range_f32(GetParam());
  uint32_t seed = 777;
  for (int64_t n = 1; n <= 70; ++n) {
    for (int variant = 0; variant < 6; ++variant) {
      std::vector<float> x(static_cast<size_t>(n));
      for (auto& v : x) v = static_cast<float>(static_cast<int32_t>(next(&seed) >> 16) - 32768) / 512.0f;
      if (variant == 1) x[0] = std::numeric_limits<float>::quiet_NaN();
      if (variant == 2) x[n / 2] = std::numeric_limits<float>::quiet_NaN();
      if (variant == 3) x[n - 1] = std::numeric_limits<float>::quiet_NaN();
      if (variant == 4) {
        x[n - 1] = std::numeric_limits<float>::infinity();
        x[0] = -std::numeric_limits<float>::infinity();
      }
      if (variant == 5) {  // Zeros of both signs and one extreme per place.
        for (auto& v : x) v = (next(&seed) >> 31) ? -0.0f : 0.0f;
        x[static_cast<size_t>(next(&seed) % static_cast<uint32_t>(n))] = -3.5f;
        x[static_cast<size_t>(next(&seed) % static_cast<uint32_t>(n))] = 1e-30f;
      }
      SCOPED_TRACE("n " + std::to_string(n) + " variant " + std::to_string(variant));
      const RowRange want = row_range(x.data(), n), got = range(x.data(), n);
      EXPECT_EQ(got.any_nan, want.any_nan);
      if (!want.any_nan) {
        EXPECT_EQ(got.min, want.min);
        EXPECT_EQ(got.max, want.max);
      }
      double want_scale = 0, got_scale = 0;
      int64_t want_zp = 0, got_zp = 0;
      token_qparams(x.data(), n, &want_scale, &want_zp);
      token_qparams_from_range<float>(got, &got_scale, &got_zp);
      EXPECT_EQ(0, std::memcmp(&got_scale, &want_scale, sizeof(double)));
      EXPECT_EQ(got_zp, want_zp);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryIsa, QuantIsaTest,
                         ::testing::Values(QuantIsa::kAvx2, QuantIsa::kAvxVnni,
                                           QuantIsa::kAvx512Vnni),
                         [](const ::testing::TestParamInfo<QuantIsa>& info) {
                           return std::string(quant_isa_name(info.param));
                         });

}  // namespace
}  // namespace torchlight::quantized
