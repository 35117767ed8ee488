// The portable digit split (int8_digit_split.h), its exponent rule (shared
// with the AVX-512 split), the scalar combine, and the run-time choice.
#include "kernels/quantized/int8_digit_split.h"

#include <cmath>
#include <cstring>

namespace torchlight::quantized {

int32_t int8_digit_exponent(uint32_t max_abs_bits) {
  if (max_abs_bits == 0) return 0;
  // m = 2^g * (1 + f / 2^23); e = g - 6 when m <= 127 * 2^(g - 6), i.e. the
  // fraction f <= 63/64 * 2^23 (0x7E0000), else g - 5.
  int32_t g = static_cast<int32_t>(max_abs_bits >> 23) - 127;
  uint32_t fraction = max_abs_bits & 0x7FFFFFu;
  if ((max_abs_bits >> 23) == 0) {  // Denormal: normalise the fraction.
    const int shift = __builtin_clz(max_abs_bits) - 8;
    fraction = (max_abs_bits << shift) & 0x7FFFFFu;
    g = -126 - shift;
  }
  return g - 6 + (fraction > 0x7E0000u ? 1 : 0);
}

bool int8_digit_row_exponent(uint32_t max_abs_bits, int32_t* exponent) {
  if (max_abs_bits >= 0x7F800000u) return false;  // inf or NaN.
  *exponent = int8_digit_exponent(max_abs_bits);
  return true;
}

uint32_t row_max_abs_bits(const float* row, int64_t k) {
  uint32_t max_bits = 0;
  for (int64_t i = 0; i < k; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &row[i], sizeof(bits));
    bits &= 0x7FFFFFFFu;
    max_bits = bits > max_bits ? bits : max_bits;
  }
  return max_bits;
}

bool split_int8_digits_generic(const float* x, int64_t rows, int64_t k, const Int8DigitRows& out) {
  bool finite = true;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * k;
    int32_t e = 0;
    if (!int8_digit_row_exponent(row_max_abs_bits(row, k), &e)) {
      finite = false;
      continue;
    }
    out.exponents[r] = e;
    int8_t* d0 = out.digits + r * out.row_bytes;
    int8_t* d1 = d0 + out.plane_bytes;
    int8_t* d2 = d1 + out.plane_bytes;
    for (int64_t i = 0; i < k; ++i) {
      // Exact scaling, then round half to even (the default mode).
      const int32_t y = static_cast<int32_t>(std::nearbyint(std::ldexp(row[i], 16 - e)));
      const uint32_t w = (static_cast<uint32_t>(y) + 0x8080u) ^ 0x8080u;
      d2[i] = static_cast<int8_t>(w & 0xFF);
      d1[i] = static_cast<int8_t>((w >> 8) & 0xFF);
      d0[i] = static_cast<int8_t>((w >> 16) & 0xFF);
    }
    for (int p = 0; p < kInt8Digits; ++p) {
      std::memset(d0 + p * out.plane_bytes + k, 0, static_cast<size_t>(out.row_bytes - k));
    }
  }
  return finite;
}

float combine_int8_digit_sums(int32_t a0, int32_t a1, int32_t a2, int32_t exponent) {
  const float inner = std::fma(static_cast<float>(a1), 256.0f, static_cast<float>(a2));
  return std::ldexp(std::fma(static_cast<float>(a0), 65536.0f, inner), exponent - 16);
}

SplitInt8DigitsFn select_split_int8_digits(QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (isa >= QuantIsa::kAvx512Vnni) return &split_int8_digits_avx512;
  if (isa >= QuantIsa::kAvx2) return &split_int8_digits_avx2;
#else
  (void)isa;
#endif
  return &split_int8_digits_generic;
}

}  // namespace torchlight::quantized
