// linear_8da4w_packed.h: the AVX2 loop on packed weights gives the
// reference's floats bit for bit (groups 32-256, K of one to many groups,
// N with tails of 1, 3, 5, 7 columns past a block, column ranges off the
// blocks, with and without bias), and the reference is within float
// rounding of the decomposed graph's arithmetic done in float64.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/quantized/linear_8da4w.h"
#include "kernels/quantized/linear_8da4w_packed.h"
#include "kernels/quantized/quant_isa.h"

namespace torchlight::quantized {
namespace {

// A random row (quantized, arranged, with its corrections) and weights,
// packed.
struct PackedCase {
  int64_t k, group, n;
  std::vector<uint8_t> weight;
  std::vector<float> scales, bias, correction;
  std::vector<int8_t> xq, arranged;
  std::vector<uint8_t> memory;
  Packed8da4w packed;
  int32_t zero_point;
  float x_scale = 0.0123f;

  PackedCase(int64_t k_, int64_t group_, int64_t n_, uint32_t seed)
      : k(k_), group(group_), n(n_), weight(static_cast<size_t>(n * k / 2)),
        scales(static_cast<size_t>(n * (k / group))), bias(static_cast<size_t>(n)),
        correction(static_cast<size_t>(k / group)), xq(static_cast<size_t>(k)), arranged(xq.size()),
        memory(packed_8da4w_bytes(k, n, group) + 64) {
    auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
    for (uint8_t& v : weight) v = static_cast<uint8_t>(next() >> 24);
    for (float& v : scales) v = static_cast<float>((next() >> 20) + 1) / 65536.0f;
    for (float& v : bias) v = static_cast<float>(static_cast<int32_t>(next() >> 16) - 32768) / 4096.0f;
    // Extremes included, so the int16 sums meet their bound.
    for (size_t i = 0; i < xq.size(); ++i) {
      xq[i] = static_cast<int8_t>(i % 11 == 0 ? -128 : i % 13 == 0 ? 127 : static_cast<int8_t>(next() >> 24));
    }
    zero_point = static_cast<int32_t>(next() >> 25) - 64;
    arrange_row_8da4w(xq.data(), k, group, zero_point, arranged.data(), correction.data());
    uint8_t* aligned = memory.data() + (64 - reinterpret_cast<uintptr_t>(memory.data()) % 64) % 64;
    pack_8da4w(weight.data(), scales.data(), k, n, group, aligned, 0, packed_blocks_8da4w(n));
    packed = packed_8da4w_view(aligned, k, n, group);
  }

  PackedRow8da4w row(float* out, bool with_bias) const {
    return {arranged.data(), correction.data(), zero_point, x_scale, with_bias ? bias.data() : nullptr, out};
  }
};

struct Shape {
  int64_t k, group;
};
constexpr Shape kShapes[] = {{32, 32},  {96, 32},  {288, 32},  {768, 32}, {64, 64},
                             {192, 64}, {96, 96},  {384, 128}, {512, 256}};
constexpr int64_t kColumns[] = {1, 3, 5, 7, 16, 17, 19, 21, 23, 37};

TEST(Linear8da4wPackedTest, Avx2IdenticalToReference) {
#if defined(__x86_64__) || defined(_M_X64)
  if (!cpu_has_quant_isa(QuantIsa::kAvx2)) GTEST_SKIP() << "no AVX2 + FMA";
  ASSERT_EQ(select_packed_8da4w(288, 32, QuantIsa::kAvx2), &linear_8da4w_packed_avx2);
  constexpr float kUntouched = 12345.0f;
  for (const Shape s : kShapes) {
    for (const int64_t n : kColumns) {
      const PackedCase c(s.k, s.group, n, static_cast<uint32_t>(s.k * 131 + s.group * 7 + n));
      // Whole, off the blocks at both ends, one column, from the second block.
      const int64_t ranges[][2] = {{0, n}, {n / 3, n - n / 4}, {n - 1, n}, {std::min<int64_t>(16, n), n}};
      for (const auto& range : ranges) {
        for (const bool with_bias : {false, true}) {
          std::vector<float> want(static_cast<size_t>(n), kUntouched), got(want);
          linear_8da4w_packed_reference(c.packed, c.weight.data(), c.scales.data(), c.row(want.data(), with_bias),
                                        range[0], range[1]);
          linear_8da4w_packed_avx2(c.packed, c.row(got.data(), with_bias), range[0], range[1]);
          for (int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(got[i], want[i]) << "K " << s.k << " group " << s.group << " N " << n << " columns ["
                                       << range[0] << ", " << range[1] << ") bias " << with_bias
                                       << " column " << i;
          }
        }
      }
    }
  }
#else
  GTEST_SKIP() << "x86 only";
#endif
}

// Rows of a many-row call on a PackedCase's weights: row 0 is the case's,
// the others random with their own zero points and scales.
struct PackedRowsCase {
  const PackedCase& c;
  int64_t rows;
  std::vector<int8_t> arranged;
  std::vector<float> correction, scale;
  std::vector<int32_t> zero_point;

  PackedRowsCase(const PackedCase& c_, int64_t rows_, uint32_t seed)
      : c(c_), rows(rows_), arranged(static_cast<size_t>(rows * c.k)),
        correction(static_cast<size_t>(rows * (c.k / c.group))), scale(static_cast<size_t>(rows)),
        zero_point(static_cast<size_t>(rows)) {
    auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
    std::vector<int8_t> xq(static_cast<size_t>(c.k));
    for (int64_t r = 0; r < rows; ++r) {
      for (size_t i = 0; i < xq.size(); ++i) {
        xq[i] = r == 0 ? c.xq[i] : static_cast<int64_t>(i % 7) == r % 7 ? -128 : static_cast<int8_t>(next() >> 24);
      }
      zero_point[r] = r == 0 ? c.zero_point : static_cast<int32_t>(next() >> 24) - 128;
      scale[r] = c.x_scale * static_cast<float>(r + 1);
      arrange_row_8da4w(xq.data(), c.k, c.group, zero_point[r], arranged.data() + r * c.k,
                        correction.data() + r * (c.k / c.group));
    }
  }

  PackedRows8da4w view(float* out, bool with_bias) const {
    return {arranged.data(), correction.data(), zero_point.data(), scale.data(), rows,
            with_bias ? c.bias.data() : nullptr, out};
  }
};

// The many-row loop gives every row the reference's (decode's) floats bit
// for bit: odd and even row counts (the register block of four and its
// tails), column tails and ranges off the blocks, groups 32-256.
TEST(Linear8da4wPackedTest, Avx2RowsIdenticalToReference) {
#if defined(__x86_64__) || defined(_M_X64)
  if (!cpu_has_quant_isa(QuantIsa::kAvx2)) GTEST_SKIP() << "no AVX2 + FMA";
  ASSERT_EQ(select_packed_rows_8da4w(288, 32, QuantIsa::kAvx2), &linear_8da4w_packed_rows_avx2);
  constexpr float kUntouched = 12345.0f;
  for (const Shape s : kShapes) {
    for (const int64_t n : {int64_t{5}, int64_t{16}, int64_t{37}}) {
      const PackedCase c(s.k, s.group, n, static_cast<uint32_t>(s.k * 17 + s.group * 3 + n));
      for (const int64_t rows : {1, 2, 3, 4, 5, 7, 8, 9}) {
        const PackedRowsCase m(c, rows, static_cast<uint32_t>(rows * 977 + n));
        const int64_t ranges[][2] = {{0, n}, {n / 3, n - n / 4}, {n - 1, n}, {std::min<int64_t>(16, n), n}};
        for (const auto& range : ranges) {
          for (const bool with_bias : {false, true}) {
            std::vector<float> want(static_cast<size_t>(rows * n), kUntouched), got(want);
            linear_8da4w_packed_rows_reference(c.packed, c.weight.data(), c.scales.data(),
                                               m.view(want.data(), with_bias), range[0], range[1]);
            linear_8da4w_packed_rows_avx2(c.packed, m.view(got.data(), with_bias), range[0], range[1]);
            for (int64_t i = 0; i < rows * n; ++i) {
              ASSERT_EQ(got[i], want[i]) << "K " << s.k << " group " << s.group << " N " << n << " rows "
                                         << rows << " columns [" << range[0] << ", " << range[1]
                                         << ") bias " << with_bias << " row " << i / n << " column " << i % n;
            }
          }
        }
      }
    }
  }
#else
  GTEST_SKIP() << "x86 only";
#endif
}

// The decomposed graph's arithmetic in float64: out = x_scale * sum_k
// (xq - zp) * (u - 8) * scale + bias. Within 1e-5 of the magnitudes the
// float steps meet (each group's |D| + |C|, and zp times the weight sums).
TEST(Linear8da4wPackedTest, ReferenceMatchesFloat64) {
  for (const Shape s : kShapes) {
    const int64_t n = 37;
    const PackedCase c(s.k, s.group, n, static_cast<uint32_t>(s.k + s.group));
    std::vector<float> got(static_cast<size_t>(n));
    linear_8da4w_packed_reference(c.packed, c.weight.data(), c.scales.data(), c.row(got.data(), true), 0, n);
    const int64_t groups = s.k / s.group;
    for (int64_t col = 0; col < n; ++col) {
      double sum = 0, magnitude = 0;
      for (int64_t g = 0; g < groups; ++g) {
        double exact = 0, products = 0, u_sum = 0, x_sum = 0;
        for (int64_t i = g * s.group; i < (g + 1) * s.group; ++i) {
          const uint8_t byte = c.weight[static_cast<size_t>(col * s.k / 2 + i / 2)];
          const int u = i % 2 == 0 ? byte >> 4 : byte & 15;  // Element 2j in the high nibble.
          exact += static_cast<double>(c.xq[i] - c.zero_point) * (u - 8);
          products += std::fabs(static_cast<double>(c.xq[i]) * u);
          u_sum += u;
          x_sum += c.xq[i];
        }
        const double scale = c.scales[static_cast<size_t>(col * groups + g)];
        sum += exact * scale;
        magnitude += scale * (products + 8 * std::fabs(x_sum - static_cast<double>(c.zero_point) * s.group) +
                              std::fabs(static_cast<double>(c.zero_point)) * u_sum);
      }
      const double want = sum * c.x_scale + c.bias[static_cast<size_t>(col)];
      const double tolerance = 1e-5 * (magnitude * c.x_scale + std::fabs(c.bias[static_cast<size_t>(col)]));
      EXPECT_NEAR(got[static_cast<size_t>(col)], want, tolerance) << "K " << s.k << " group " << s.group
                                                                   << " column " << col;
    }
  }
}

TEST(Linear8da4wPackedTest, FitsOnlyWholeGroupsOfThirtyTwo) {
  EXPECT_TRUE(packed_8da4w_fits(288, 32));
  EXPECT_TRUE(packed_8da4w_fits(96, 96));
  EXPECT_FALSE(packed_8da4w_fits(48, 16));   // Group not a multiple of 32.
  EXPECT_FALSE(packed_8da4w_fits(96, 64));   // K not a multiple of the group.
  EXPECT_FALSE(packed_8da4w_fits(8192, 8192));  // |D - C| could pass 2^24.
  EXPECT_EQ(select_packed_8da4w(288, 32, QuantIsa::kGeneric), nullptr);
  EXPECT_EQ(select_packed_8da4w(48, 16, QuantIsa::kAvx2), nullptr);
  EXPECT_EQ(select_packed_rows_8da4w(288, 32, QuantIsa::kGeneric), nullptr);
  EXPECT_EQ(select_packed_rows_8da4w(48, 16, QuantIsa::kAvx2), nullptr);
}

}  // namespace
}  // namespace torchlight::quantized
