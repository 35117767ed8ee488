// linear_int8's one-row VNNI loops (linear_int8_vnni.h: AVX-512 VNNI and
// AVX-VNNI, one test instance each) against float64,
// within the path's stated bound
//   |out - exact| <= |scale| m sum_k |w_k| / (127 * 2^16) + 2^-24 |exact| + 2^-149
// (m = max_k |x_k|): K off every step (1..2048), column ranges off the four-column
// step, weight sums from the caller or summed in the loop, bias or none, rows with one
// huge value among tiny ones, zeros, denormals, weights at -128 and 127. The loop
// with its third digit removed fails that bound (so all three are needed).
// An instance whose ISA the CPU lacks is skipped.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <utility>
#include <limits>
#include <string>
#include <vector>

#include "kernels/quantized/int8_digit_split.h"
#include "kernels/quantized/linear_int8_row_case_test_util.h"
#include "kernels/quantized/linear_int8_vnni.h"
#include "kernels/quantized/linear_qs8.h"

namespace torchlight::quantized {
namespace {

// Entries past column N of every output, which no loop may write.
constexpr int64_t kSentinels = 4;

using Values = Int8RowValues;

struct VnniCase : Int8RowCase {
  std::vector<int32_t> sums;  // [N] sum_k w[n, k]
};

VnniCase make_case(int64_t k, int64_t n, Values values, uint32_t seed) {
  VnniCase c;
  static_cast<Int8RowCase&>(c) = make_int8_row_case(k, n, values, seed);
  c.sums.resize(static_cast<size_t>(n));
  weight_sums_qs8(c.weight.data(), k, 0, n, c.sums.data());
  return c;
}

// Columns [n_begin, n_end) of the loop for `isa`; `drop_digit2` removes the
// third digit (its plane set to 128, i.e. d2 = 0).
std::vector<float> run_vnni(QuantIsa isa, const VnniCase& c, bool own_sums, bool with_bias,
                            int64_t n_begin, int64_t n_end, bool drop_digit2 = false) {
  const size_t bytes = int8_vnni_digit_bytes(c.k);
  auto* digits = static_cast<uint8_t*>(std::aligned_alloc(64, bytes));
  RowInt8Vnni row{};
  EXPECT_TRUE(select_split_row_int8_vnni(isa)(c.x.data(), c.k, digits, &row.exponent));
  row.plane = static_cast<int64_t>(bytes / 3);
  if (drop_digit2) {
    for (int64_t i = 0; i < row.plane; ++i) digits[2 * row.plane + i] = 128;
  }
  std::vector<float> out(static_cast<size_t>(c.n + kSentinels), -7.0f);  // -7: not written
  row.u = digits;
  row.weight = c.weight.data();
  row.scales = c.scales.data();
  row.bias = with_bias ? c.bias.data() : nullptr;
  row.weight_sums = own_sums ? nullptr : c.sums.data();
  row.k = c.k;
  row.out = out.data();
  select_linear_int8_vnni(isa)(row, n_begin, n_end);
  std::free(digits);
  return out;
}

// How far column n of `got` is outside the bound (> 1: outside), against float64.
double bound_ratio(const VnniCase& c, bool with_bias, int64_t n, float got) {
  double dot = 0, abs_w = 0, m = 0;
  for (int64_t i = 0; i < c.k; ++i) {
    const double w = c.weight[static_cast<size_t>(n * c.k + i)];
    dot += static_cast<double>(c.x[static_cast<size_t>(i)]) * w;
    abs_w += std::fabs(w);
    m = std::fmax(m, std::fabs(static_cast<double>(c.x[static_cast<size_t>(i)])));
  }
  const double scale = c.scales[static_cast<size_t>(n)];
  const double exact = dot * scale + (with_bias ? c.bias[static_cast<size_t>(n)] : 0.0);
  // The float64 reference's own rounding (K products summed) is far below these terms.
  const double bound = std::fabs(scale) * m * abs_w / (127.0 * 65536.0) + std::ldexp(std::fabs(exact), -24) +
                       std::ldexp(1.0, -149);
  return std::fabs(static_cast<double>(got) - exact) / bound;
}

class LinearInt8VnniTest : public ::testing::TestWithParam<QuantIsa> {
 protected:
  void SetUp() override {
    if (!cpu_has_quant_isa(GetParam())) GTEST_SKIP() << "this CPU does not run " << quant_isa_name(GetParam());
  }
};

TEST_P(LinearInt8VnniTest, WithinTheBoundOfFloat64) {
  const Values all[] = {Values::kRandom, Values::kHugeAmongTiny, Values::kZeros, Values::kDenormal,
                        Values::kExtremeWeights};
  for (const int64_t k : {1, 31, 63, 64, 65, 100, 288, 300, 768, 2048}) {
    for (const int64_t n : {1, 3, 5, 17, 37}) {
      for (const Values values : all) {
        const VnniCase c = make_case(k, n, values, static_cast<uint32_t>(k * 131 + n));
        for (const bool own_sums : {false, true}) {
          for (const bool with_bias : {false, true}) {
            // The whole range, and ranges starting and ending off the four-column step
            // (the last step holding 1, 2 or 3 columns).
            const std::pair<int64_t, int64_t> ranges[] = {
                {0, n}, {n > 2 ? 1 : 0, n > 2 ? n - 1 : n}, {n / 2, n}, {0, std::min<int64_t>(n, 2)}};
            for (const auto& [n_begin, n_end] : ranges) {
              const std::vector<float> out = run_vnni(GetParam(), c, own_sums, with_bias, n_begin, n_end);
              for (int64_t j = 0; j < n + kSentinels; ++j) {
                const std::string where = "K " + std::to_string(k) + " N " + std::to_string(n) +
                                          " values " + std::to_string(static_cast<int>(values)) +
                                          " own sums " + std::to_string(own_sums) + " bias " +
                                          std::to_string(with_bias) + " column " + std::to_string(j);
                if (j < n_begin || j >= n_end) {
                  ASSERT_EQ(out[static_cast<size_t>(j)], -7.0f) << where << " written outside its range";
                  continue;
                }
                ASSERT_LE(bound_ratio(c, with_bias, j, out[static_cast<size_t>(j)]), 1.0) << where;
              }
            }
          }
        }
      }
    }
  }
}

// Two digits leave about 2^-15 m sum |w|: far outside the bound.
TEST_P(LinearInt8VnniTest, TwoDigitsFailTheBound) {
  const VnniCase c = make_case(288, 37, Values::kRandom, 3);
  const std::vector<float> out = run_vnni(GetParam(), c, false, true, 0, c.n, /*drop_digit2=*/true);
  double worst = 0;
  for (int64_t j = 0; j < c.n; ++j) worst = std::fmax(worst, bound_ratio(c, true, j, out[static_cast<size_t>(j)]));
  EXPECT_GT(worst, 4.0);
}

TEST_P(LinearInt8VnniTest, NonFiniteRowsAreNotSplit) {
  for (const float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()}) {
    VnniCase c = make_case(100, 3, Values::kRandom, 11);
    c.x[77] = bad;
    std::vector<uint8_t> digits(int8_vnni_digit_bytes(c.k) + 64);
    auto* aligned = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(digits.data()) + 63) / 64 * 64);
    int32_t exponent = 0;
    EXPECT_FALSE(select_split_row_int8_vnni(GetParam())(c.x.data(), c.k, aligned, &exponent)) << bad;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, LinearInt8VnniTest,
                         ::testing::Values(QuantIsa::kAvx512Vnni, QuantIsa::kAvxVnni),
                         [](const ::testing::TestParamInfo<QuantIsa>& info) {
                           return std::string(quant_isa_name(info.param));
                         });

TEST(LinearInt8VnniSelectTest, OnlyVnniAndKWithinInt32) {
  EXPECT_EQ(select_linear_int8_vnni(QuantIsa::kGeneric), nullptr);
  EXPECT_EQ(select_linear_int8_vnni(QuantIsa::kAvx2), nullptr);
  EXPECT_EQ(select_split_row_int8_vnni(QuantIsa::kAvx2), nullptr);
  EXPECT_NE(select_linear_int8_vnni(QuantIsa::kAvxVnni), nullptr);
  EXPECT_NE(select_split_row_int8_vnni(QuantIsa::kAvxVnni), nullptr);
  EXPECT_NE(select_linear_int8_vnni(QuantIsa::kAvx512Vnni), nullptr);
  EXPECT_NE(select_linear_int8_vnni(QuantIsa::kAmx), nullptr);
  EXPECT_TRUE(linear_int8_takes_vnni(kMaxKInt8Vnni, QuantIsa::kAvx512Vnni));
  EXPECT_FALSE(linear_int8_takes_vnni(kMaxKInt8Vnni + 1, QuantIsa::kAvx512Vnni));
  EXPECT_FALSE(linear_int8_takes_vnni(288, QuantIsa::kAvx2));
  // AVX-VNNI once the digit split has a vector build for it.
  EXPECT_EQ(linear_int8_takes_vnni(288, QuantIsa::kAvxVnni),
            select_split_int8_digits(QuantIsa::kAvxVnni) != &split_int8_digits_generic);
}

}  // namespace
}  // namespace torchlight::quantized
