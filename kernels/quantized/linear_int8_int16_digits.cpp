// The portable int16-digit split and column loop (linear_int8_int16_digits.h):
// the reference the AVX2 build matches bit for bit, the exponent rule both
// use, and which calls take the loop.
#include "kernels/quantized/linear_int8_int16_digits.h"

#include <cmath>

#include "kernels/quantized/int8_digit_split.h"

namespace torchlight::quantized {

bool int16_digit_exponent(uint32_t max_abs_bits, int32_t* exponent) {
  if (max_abs_bits >= 0x7F800000u) return false;  // inf or NaN.
  if (max_abs_bits == 0) {
    *exponent = 0;
    return true;
  }
  // m = 2^g * (1 + f / 2^23) (normal) or f * 2^-149 (denormal); e = g, or
  // g + 1 when m is not a power of two.
  const uint32_t biased = max_abs_bits >> 23;
  const uint32_t fraction = max_abs_bits & 0x7FFFFFu;
  if (biased != 0) {
    *exponent = static_cast<int32_t>(biased) - 127 + (fraction != 0 ? 1 : 0);
    return true;
  }
  const int32_t g = 31 - __builtin_clz(fraction) - 149;
  *exponent = g + ((fraction & (fraction - 1)) != 0 ? 1 : 0);
  return true;
}

bool split_row_int16_digits_generic(const float* x, int64_t k, int16_t* digits, int32_t* exponent) {
  int32_t e = 0;
  if (!int16_digit_exponent(row_max_abs_bits(x, k), &e)) return false;
  *exponent = e;
  const int64_t plane = int16_digit_plane(k);
  int16_t* hi = digits;
  int16_t* lo = digits + plane;
  for (int64_t i = 0; i < k; ++i) {
    // Exact scaling (or below 2^-126, which rounds to 0 either way), then
    // round half to even (the default mode).
    const int32_t y = static_cast<int32_t>(std::nearbyint(std::ldexp(x[i], 29 - e)));
    const int32_t h = (y + 16384) >> 15;  // Arithmetic: floor((y + 16384) / 32768).
    hi[i] = static_cast<int16_t>(h);
    lo[i] = static_cast<int16_t>(y - h * 32768);
  }
  for (int64_t i = k; i < plane; ++i) hi[i] = lo[i] = 0;
  return true;
}

void linear_int8_int16_digits_generic(const RowInt8Int16Digits& row, int64_t n_begin, int64_t n_end) {
  const double digit_scale = std::ldexp(1.0, row.exponent - 29);
  const int16_t* hi = row.digits;
  const int16_t* lo = row.digits + row.plane;
  for (int64_t n = n_begin; n < n_end; ++n) {
    const int8_t* w = row.weight + n * row.k;
    int64_t a_hi = 0, a_lo = 0;
    for (int64_t i = 0; i < row.k; ++i) {
      a_hi += static_cast<int64_t>(hi[i]) * w[i];
      a_lo += static_cast<int64_t>(lo[i]) * w[i];
    }
    // Exact: integers below 2^53 (K <= kMaxKInt16Digits) times a power of two.
    const double d = (static_cast<double>(a_hi) * 32768.0 + static_cast<double>(a_lo)) * digit_scale;
    const double bias = row.bias != nullptr ? row.bias[n] : 0.0;
    row.out[n] = static_cast<float>(std::fma(d, static_cast<double>(row.scales[n]), bias));
  }
}

bool linear_int8_takes_int16_digits(int64_t k, QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  return isa == QuantIsa::kAvx2 && k <= kMaxKInt16Digits;
#else
  (void)k;
  (void)isa;
  return false;
#endif
}

}  // namespace torchlight::quantized
