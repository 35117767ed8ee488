// linear_int8's one-row (decode) loop on AVX2 CPUs without VNNI: the
// float32 activation row is split into two int16 digits against a power of
// two, and each column's two dot products are exact int32 sums from
// vpmaddwd, with no float convert per weight (the float loop's
// vpmovsxbd + vcvtdq2ps + vfmadd per 8 weights is bound by the converts on
// Zen 1; bench/llm/avx2_op_throughput.cpp).
//
// Split: with m = max_k |x_k|, e = the smallest integer with m <= 2^e (0
// when m = 0), Y_k = x_k * 2^(29 - e) rounded to the nearest integer, ties
// to even (the scaling is exact: a power of two), so |Y_k| <= 2^29, and
// Y_k = 32768 hi_k + lo_k with balanced digits: hi_k = (Y_k + 16384) >> 15
// in [-16384, 16384] and lo_k = Y_k - 32768 hi_k in [-16384, 16383], so
// every product with a weight is within 2^21 and a chunk of K = 768 fits
// int32 (below). A product scaled below 2^-126 (x far below m) is not
// exact but rounds to the integer 0 either way.
//
// Per column: A_hi = sum_k hi_k w_k and A_lo = sum_k lo_k w_k, exact; the
// combine D = 2^(e - 29) (32768 A_hi + A_lo) is exact in float64 (an
// integer below 2^53 times a power of two), then out = float(fma(D,
// scale[n], bias[n])) in float64, as the VNNI loop (linear_int8_vnni.h).
//
// Error: each |x_k - 2^(e - 29) Y_k| <= 2^(e - 30) <= 2^-29 m, so
//   |out[n] - exact| <= |scale_n| 2^(e - 30) sum_k |w_nk| + 2^-24 |exact| (+ 2^-149)
// up to the float64 fma's own 2^-53: about 2^-29 max|x| sum|w| |scale|,
// 64 times tighter than the VNNI loop's three int8 digits. One digit (lo
// dropped) leaves up to 2^(e - 15) sum|w| (tested to fail the bound).
//
// Overflow: one vpmaddwd lane adds two products, each digit's pairs up to
// 2 * 16384 * 128 = 2^22 in magnitude. The loop sums chunks of
// kChunkInt16Digits (48 steps of 16, so a lane holds at most 48 pairs),
// then adds a chunk's 8 lanes in int32: at most 384 * 2^22 < 2^31, exact;
// the chunks' sums go on in float64 (integers below 2^53 while K <=
// kMaxKInt16Digits). Larger K take the float loop. (Session 22's digits,
// lo = Y & 0x7FFF in [0, 32767], allowed chunks of 512 only: K = 768, most
// of stories110m's weights, took two, and the second chunk's lane sums cost
// 3-5% of the loop. The sums, so the outputs, are the same: 32768 A_hi +
// A_lo = sum_k Y_k w_k however Y is split.)
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/quantized/quant_isa.h"

namespace torchlight::quantized {

/// 2^21 K (|A_hi|) times 32768 stays below 2^53 (and far above any linear's K).
inline constexpr int64_t kMaxKInt16Digits = 65536;
/// Weights summed in int32 before the lanes are added (see the overflow note).
inline constexpr int64_t kChunkInt16Digits = 768;
/// Digits are stored in steps of 16 (one vpmaddwd pair per 16 weights).
inline constexpr int64_t kStepInt16Digits = 16;

/// One activation row split into digits, and the call's weights.
struct RowInt8Int16Digits {
  // [2][plane]: hi_k at digits[k], lo_k at digits[plane + k]; entries
  // [K, plane) are 0 (their products meet weights the loop loads as 0).
  const int16_t* digits;
  int64_t plane;         // round_up(K, kStepInt16Digits)
  int32_t exponent;      // e of the split
  const int8_t* weight;  // [N, K]
  const float* scales;   // [N]
  const float* bias;     // [N] or null
  int64_t k;
  float* out;  // [N]
};

/// Int16s of the split row (two planes), and of one plane.
inline int64_t int16_digit_plane(int64_t k) {
  return (k + kStepInt16Digits - 1) / kStepInt16Digits * kStepInt16Digits;
}
inline size_t int16_digit_bytes(int64_t k) { return 2 * sizeof(int16_t) * static_cast<size_t>(int16_digit_plane(k)); }

/// e from the bits of m = max_k |x_k| (a finite float's magnitude bits);
/// false (no exponent) when they are inf or NaN's (above 0x7F7FFFFF).
bool int16_digit_exponent(uint32_t max_abs_bits, int32_t* exponent);

/// Splits x [K] into `digits` (int16_digit_bytes(K), 32-byte aligned) and
/// *exponent; false (digits unspecified) when x holds inf or NaN.
using SplitRowInt16DigitsFn = bool (*)(const float* x, int64_t k, int16_t* digits, int32_t* exponent);
/// Columns [n_begin, n_end) of the row.
using ColumnsInt16DigitsFn = void (*)(const RowInt8Int16Digits& row, int64_t n_begin, int64_t n_end);

/// Portable: the reference (scalar, int64 sums, the same float64 steps).
bool split_row_int16_digits_generic(const float* x, int64_t k, int16_t* digits, int32_t* exponent);
void linear_int8_int16_digits_generic(const RowInt8Int16Digits& row, int64_t n_begin, int64_t n_end);
#if defined(__x86_64__) || defined(_M_X64)
/// AVX2 (linear_int8_int16_digits_avx2.cpp): the same digits and floats.
bool split_row_int16_digits_avx2(const float* x, int64_t k, int16_t* digits, int32_t* exponent);
void linear_int8_int16_digits_avx2(const RowInt8Int16Digits& row, int64_t n_begin, int64_t n_end);
#endif

/// Whether a one-row call of K runs on this loop for `isa`: exactly kAvx2
/// (VNNI levels keep linear_int8_vnni.h) and K <= kMaxKInt16Digits.
bool linear_int8_takes_int16_digits(int64_t k, QuantIsa isa = quant_isa());

}  // namespace torchlight::quantized
