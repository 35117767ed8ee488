// linear_int8's one-row (decode) loop on VNNI (AVX-512 VNNI or AVX-VNNI): the float32 activation row
// is split into three signed int8 digits against a power-of-two scale
// (int8_digit_split.h: x ~= 2^(e - 16) (65536 d0 + 256 d1 + d2)), and each
// column's three dot products a_p = sum_k d_pk w_nk are exact int32 sums from
// vpdpbusd (u8 x s8: the digits go in as d + 128, and 128 sum_k w_nk, from
// prepare for a constant weight, else summed on the fly with one more
// vpdpbusd of ones, is taken off). The combine is exact in float64,
// D = 2^(e - 16) (65536 a0 + 256 a1 + a2), then out = float(fma(D, scale[n],
// bias[n])) in float64: one rounding to float32 (after a float64 one).
//
// Error (the lead's tolerance for this path, far tighter than llama.cpp's
// 8-bit activations): with m = max_k |x_k|,
//   |out[n] - exact| <= |scale_n| m sum_k |w_nk| / (127 * 2^16) + 2^-24 |exact| (+ 2^-149)
// i.e. about 1.008 * 2^-23 * m * sum_k |w_nk| * |scale_n| from the split
// (int8_digit_split.h: each |x_k - 2^(e-16) Y_k| <= 2^(e - 17) <= m / (127 * 2^16))
// plus the final rounding; the integer sums and the float64 combine add
// nothing (every term is an integer below 2^53). Two digits would leave an
// error of about 2^-15 m sum |w| (tested to fail the bound).
//
// Overflow: |a_p| <= 128 * 128 * K, so K <= kMaxKInt8Vnni keeps every sum
// exact in int32 (the raw sums with the +128 offset are taken modulo 2^32;
// their difference is the exact a_p). Rows with inf or NaN are not split:
// the caller runs the float loop (linear_int8.h), whose results match torch.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/quantized/quant_isa.h"

namespace torchlight::quantized {

/// 128 * 128 * K < 2^31.
inline constexpr int64_t kMaxKInt8Vnni = 65536;

/// One activation row split into digits, and the call's weights.
struct RowInt8Vnni {
  // [3][plane]: digit p of element k at u[p * plane + k], stored as d + 128
  // (bytes [K, plane) are 128 too: their products meet masked-off weights).
  const uint8_t* u;
  int64_t plane;         // round_up64(K)
  int32_t exponent;      // e of the split
  const int8_t* weight;  // [N, K]
  const float* scales;   // [N]
  const float* bias;     // [N] or null
  const int32_t* weight_sums;  // [N] sum_k w[n, k] (weight_sums_qs8), or null: summed here
  int64_t k;
  float* out;  // [N]
};

/// Columns [n_begin, n_end) of the row.
using ColumnsInt8VnniFn = void (*)(const RowInt8Vnni&, int64_t n_begin, int64_t n_end);

/// Splits x [K] (int8_digit_split.h) into `digits` (int8_vnni_digit_bytes(K)
/// bytes, 64-byte aligned) and offsets every byte by 128; false (digits
/// unspecified) when x holds inf or NaN.
using SplitRowInt8VnniFn = bool (*)(const float* x, int64_t k, uint8_t* digits, int32_t* exponent);

#if defined(__x86_64__) || defined(_M_X64)
// One build per instruction set (linear_int8_vnni_impl.h): AVX-512 VNNI (64
// digits a step, the AVX-512 split) and AVX-VNNI (32, the portable split).
void linear_int8_vnni_columns_avx512(const RowInt8Vnni& row, int64_t n_begin, int64_t n_end);
bool split_row_int8_vnni_avx512(const float* x, int64_t k, uint8_t* digits, int32_t* exponent);
void linear_int8_vnni_columns_avxvnni(const RowInt8Vnni& row, int64_t n_begin, int64_t n_end);
bool split_row_int8_vnni_avxvnni(const float* x, int64_t k, uint8_t* digits, int32_t* exponent);
#endif

/// The loop for `isa`, or null where there is none (below AVX-VNNI).
ColumnsInt8VnniFn select_linear_int8_vnni(QuantIsa isa = quant_isa());
/// The split that loop reads, or null with it.
SplitRowInt8VnniFn select_split_row_int8_vnni(QuantIsa isa = quant_isa());

/// Whether a one-row call of K runs on that loop for `isa` (AVX-512 VNNI and
/// above; AVX-VNNI only where the digit split has a vector build for it).
bool linear_int8_takes_vnni(int64_t k, QuantIsa isa = quant_isa());

/// Bytes of the split row: three planes of round_up64(K).
inline size_t int8_vnni_digit_bytes(int64_t k) {
  return 3 * ((static_cast<size_t>(k) + 63) / 64 * 64);
}

}  // namespace torchlight::quantized
