// The inner loops of torchlight::linear_4w.out (op_linear_4w.cpp): up to
// kRows4w float32 activation rows against int4 group-wise symmetric weights
// packed two a byte (element 2j in the high nibble of byte j, 2j + 1 in the
// low, each stored + 8, as linear_8da4w and embedding_4bit pack them), with
// float32 scales [N, K / group]. The decomposed 4w graph's own arithmetic:
// each weight is dequantized where it is used, w = float(q) * scale in
// float32 (one rounding, as dequantize_per_channel_group), then
// out[r, n] = sum_k x[r, k] * w[n, k] + bias[n]; the packed weights are read
// once per block of rows and never dequantized as a whole.
//
// Every build sums in the same order, so all give identical floats: element
// k goes to lane k % kLanes4w with fused multiply-adds in increasing k, and
// the 32 lanes are folded as linear_int8 folds them (fold_lanes_int8).
//
// Built once per instruction set (linear_4w_generic.cpp, and
// linear_4w_x86_impl.h as _avx2 and _avx512.cpp) and chosen at run time
// (quant_isa.h); the x86 loops need group % 32 == 0 (so one scale per 32
// weights), else generic.
#pragma once

#include <cstdint>

#include "kernels/quantized/quant_isa.h"

namespace torchlight::quantized {

inline constexpr int kRows4w = 4;
inline constexpr int kLanes4w = 32;

struct Rows4w {
  const float* x;          // [rows, K]
  int rows;                // 1..kRows4w
  const uint8_t* weight;   // [N, K / 2] packed.
  const float* w_scales;   // [N, K / group]
  const float* bias;       // [N] or null.
  int64_t k;
  int64_t group;           // Even, divides K.
  int64_t n;               // Columns of out (its row stride).
  float* out;              // [rows, N]
};

/// Columns [n_begin, n_end) of every row.
void linear_4w_columns_generic(const Rows4w& rows, int64_t n_begin, int64_t n_end);
#if defined(__x86_64__) || defined(_M_X64)
/// group % 32 == 0; the same floats as the generic loop.
void linear_4w_columns_avx2(const Rows4w& rows, int64_t n_begin, int64_t n_end);
void linear_4w_columns_avx512(const Rows4w& rows, int64_t n_begin, int64_t n_end);
#endif

/// The loop for `group` on `isa` (one this CPU runs): AVX-512 (F/BW/VL,
/// which every VNNI level at or above kAvx512Vnni implies) or AVX2 + FMA
/// for group % 32 == 0, else generic.
using Columns4wFn = void (*)(const Rows4w&, int64_t, int64_t);
Columns4wFn select_linear_4w(int64_t group, QuantIsa isa = quant_isa());

}  // namespace torchlight::quantized
