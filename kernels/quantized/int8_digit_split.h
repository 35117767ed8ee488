// float32 activation rows as three signed int8 digits and a power-of-two
// scale per row, so int8 x int8 dot products (AMX tdpbssd, VNNI) give
// linear_int8's x . w almost exactly: linear_int8_amx.h (prefill) and the
// 1-row VNNI decode share it.
//
// Per row r, with m = max_k |x_rk|: e_r = the smallest integer with
// m <= 127 * 2^e_r (0 when m = 0), and Y_rk = x_rk * 2^(16 - e_r) rounded to
// the nearest integer, ties to even (the scaling is exact: a power of two),
// so |Y| <= 127 * 2^16 and Y = 65536 d0 + 256 d1 + d2 with every digit in
// [-128, 127] (d2 and d1 are Y's low bytes read as signed; d0 in [-127,
// 127]). Why a power of two rather than m / 127: no division, no rounding
// in the scaling, the digits are exactly Y's bytes, and the dot products'
// combine scales exactly (scalef); it costs under one bit (m / 2^e in
// [63.5, 127] instead of 127).
//
// Error of the split: |x - 2^(e - 16) Y| <= 2^(e - 17) <= m / (127 * 2^16)
// (2^e <= m / 63.5), about 2^-23 m; so |sum_k x_k w_k - 2^(e - 16) sum_k Y_k
// w_k| <= m sum_k |w_k| / (127 * 2^16).
//
// Denormal x are split like any other (2^(16 - e) x is exact or, when it
// is below 2^-126 itself, far below the rounding to an integer); a row of
// denormals gets e down to -155 and loses nothing more than the rule above.
// Rows with inf or NaN are not split: the functions return false (the
// caller runs a float loop instead) and leave that row's digits unspecified.
#pragma once

#include <cstdint>

#include "kernels/quantized/quant_isa.h"

namespace torchlight::quantized {

inline constexpr int kInt8Digits = 3;  // d0, d1, d2.

/// Where the digits go: digit p of row r, element k at
/// digits[p * plane_bytes + r * row_bytes + k]; bytes [K, row_bytes) of every
/// row are written as zeros (padding for tiles and vectors), so row_bytes
/// >= K and plane_bytes >= rows * row_bytes.
struct Int8DigitRows {
  int8_t* digits;
  int64_t row_bytes;
  int64_t plane_bytes;
  int32_t* exponents;  // [rows]: e_r.
};

/// Splits rows [0, rows) of x [rows, K] (row stride K); false when some
/// value is inf or NaN. Threads may split disjoint rows of one call by
/// offsetting x, `digits` (r0 * row_bytes) and `exponents` (r0).
using SplitInt8DigitsFn = bool (*)(const float* x, int64_t rows, int64_t k, const Int8DigitRows& out);

bool split_int8_digits_generic(const float* x, int64_t rows, int64_t k, const Int8DigitRows& out);
#if defined(__x86_64__) || defined(_M_X64)
/// AVX-512 F/BW/VL (every level at or above kAvx512Vnni) and AVX2 (kAvx2,
/// kAvxVnni): the same digits and exponents as the generic loop.
bool split_int8_digits_avx512(const float* x, int64_t rows, int64_t k, const Int8DigitRows& out);
bool split_int8_digits_avx2(const float* x, int64_t rows, int64_t k, const Int8DigitRows& out);
#endif

/// The split for `isa` (one this CPU runs): AVX-512 at kAvx512Vnni and
/// above, AVX2 at kAvx2 and kAvxVnni, else generic.
SplitInt8DigitsFn select_split_int8_digits(QuantIsa isa = quant_isa());

/// e_r from the bits of m = max_k |x_rk| (a finite float's bits without
/// the sign): both splits use it.
int32_t int8_digit_exponent(uint32_t max_abs_bits);

/// The largest of a row's magnitude bits, |x| as bits (ordered as |x| is;
/// inf and NaN above 0x7F7FFFFF): the portable splits' scan (this one's and
/// linear_int8_int16_digits.h's).
uint32_t row_max_abs_bits(const float* row, int64_t k);

/// The same from any row's max |x| bits: false (no exponent) when the row
/// holds inf or NaN (bits above 0x7F7FFFFF).
bool int8_digit_row_exponent(uint32_t max_abs_bits, int32_t* exponent);

/// The dot product the digits stand for, from the three exact int32 sums
/// a_p = sum_k d_pk w_k: 2^(e - 16) * (65536 a0 + (256 a1 + a2)), in float32
/// as the vector combines compute it: inner = fma(float(a1), 256, float(a2)),
/// then fma(float(a0), 65536, inner), then scaled by 2^(e - 16) (exact
/// unless the result is denormal or overflows). Rounding: at most
/// 2^-24 |inner| + 2^-24 |65536 a0 + inner| + the converts of |a| >= 2^24.
float combine_int8_digit_sums(int32_t a0, int32_t a1, int32_t a2, int32_t exponent);

}  // namespace torchlight::quantized
