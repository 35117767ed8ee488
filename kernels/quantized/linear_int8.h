// The inner loops of torchlight::linear_int8.out (op_linear_int8.cpp): up to
// kRowsInt8 float32 activation rows against int8 weights [N, K] with one
// float32 scale per output column (symmetric, per channel: the int8
// weight-only mode). out[r, n] = fma(sum_k x[r, k] * w[n, k], scale[n],
// bias[n]): the weight is converted to float on the fly and never
// dequantized as a whole, and the scale is applied once per column.
//
// Every loop sums in the same order, so all give identical floats: element
// k goes to lane k % kLanesInt8 (for k below K rounded down to kLanesInt8,
// fused multiply-adds; the tail to lane k % kLanesInt8 too), the 32 lanes are
// folded as four vectors of 8: (v0 + v1) + (v2 + v3), then lanes i and i + 4,
// i and i + 2, 0 and 1.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/quantized/quant_isa.h"

namespace torchlight::quantized {

inline constexpr int kRowsInt8 = 4;
inline constexpr int kLanesInt8 = 32;

struct RowsInt8 {
  const float* x;        // [rows, K]
  int rows;              // 1..kRowsInt8
  const int8_t* weight;  // [N, K]
  const float* scales;   // [N]
  const float* bias;     // [N] or null.
  int64_t k;
  int64_t n;   // Columns of out (its row stride).
  float* out;  // [rows, N]
};

/// Columns [n_begin, n_end) of every row.
void linear_int8_columns_generic(const RowsInt8& rows, int64_t n_begin, int64_t n_end);
#if defined(__x86_64__) || defined(_M_X64)
// One build per instruction set (linear_int8_x86_impl.h); the same floats
// as the generic loop.
void linear_int8_columns_avx2(const RowsInt8& rows, int64_t n_begin, int64_t n_end);
void linear_int8_columns_avx512(const RowsInt8& rows, int64_t n_begin, int64_t n_end);
#endif

/// The loop for `isa` (one this CPU runs): AVX-512 (F/BW/VL, which every
/// level at or above kAvx512Vnni implies), AVX2 + FMA, else generic.
using ColumnsInt8Fn = void (*)(const RowsInt8&, int64_t, int64_t);
ColumnsInt8Fn select_linear_int8(QuantIsa isa = quant_isa());

/// The fold of 32 lane sums both loops share (see the file comment).
// static: the AVX2 and generic files are built with different -m flags, and
// one shared inline copy could carry AVX2 code into the generic path.
static inline float fold_lanes_int8(const float* lane) {
  float v[8];
  for (int i = 0; i < 8; ++i) v[i] = (lane[i] + lane[8 + i]) + (lane[16 + i] + lane[24 + i]);
  float h[4];
  for (int i = 0; i < 4; ++i) h[i] = v[i] + v[i + 4];
  const float q0 = h[0] + h[2];
  const float q1 = h[1] + h[3];
  return q0 + q1;
}

}  // namespace torchlight::quantized
