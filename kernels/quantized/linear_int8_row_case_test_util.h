// One activation row against int8 weights, for the tests of linear_int8's
// one-row loops (linear_int8_vnni_test.cpp, linear_int8_int16_digits_test.cpp):
// seeded values of a chosen kind, per-column scales and biases.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace torchlight::quantized {

enum class Int8RowValues {
  kRandom,          // x = mantissa * 2^[-8, 7]
  kHugeAmongTiny,   // 3e9 in the middle of values near 2^-40
  kZeros,
  kDenormal,        // x near 2^-130
  kExtremeWeights,  // random x; column 0 all -128, column 1 all 127
  kPowersOfTwo,     // every third x = +-8 = +-2^e, the others up to it; weights as kExtremeWeights
};

struct Int8RowCase {
  int64_t k = 0, n = 0;
  std::vector<float> x;         // [K]
  std::vector<int8_t> weight;   // [N, K]
  std::vector<float> scales;    // [N]
  std::vector<float> bias;      // [N]
};

inline uint32_t int8_row_case_next(uint32_t* seed) { return *seed = *seed * 1664525u + 1013904223u; }

inline Int8RowCase make_int8_row_case(int64_t k, int64_t n, Int8RowValues values, uint32_t seed) {
  using V = Int8RowValues;
  Int8RowCase c;
  c.k = k;
  c.n = n;
  for (int64_t i = 0; i < k; ++i) {
    const float mantissa =
        static_cast<float>(static_cast<int32_t>(int8_row_case_next(&seed) >> 8) - (1 << 23)) / (1 << 23);
    switch (values) {
      case V::kRandom:
      case V::kExtremeWeights:
        c.x.push_back(std::ldexp(mantissa, static_cast<int>(int8_row_case_next(&seed) >> 28) - 8));
        break;
      case V::kHugeAmongTiny: c.x.push_back(std::ldexp(mantissa, -40)); break;
      case V::kZeros: c.x.push_back(0.0f); break;
      case V::kDenormal: c.x.push_back(std::ldexp(mantissa, -130)); break;
      case V::kPowersOfTwo: c.x.push_back(i % 3 == 0 ? (i % 2 == 0 ? 8.0f : -8.0f) : 8.0f * mantissa); break;
    }
  }
  if (values == V::kHugeAmongTiny) c.x[static_cast<size_t>(k / 2)] = 3.0e9f;
  for (int64_t i = 0; i < n * k; ++i) c.weight.push_back(static_cast<int8_t>(int8_row_case_next(&seed) >> 24));
  if (values == V::kExtremeWeights || values == V::kPowersOfTwo) {
    for (int64_t i = 0; i < k; ++i) c.weight[static_cast<size_t>(i)] = -128;
    if (n > 1) {
      for (int64_t i = 0; i < k; ++i) c.weight[static_cast<size_t>(k + i)] = 127;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    c.scales.push_back(static_cast<float>((int8_row_case_next(&seed) >> 20) + 1) / 65536);
  }
  for (int64_t i = 0; i < n; ++i) {
    c.bias.push_back(static_cast<float>(static_cast<int32_t>(int8_row_case_next(&seed) >> 16) - 32768) / 4096);
  }
  return c;
}

}  // namespace torchlight::quantized
