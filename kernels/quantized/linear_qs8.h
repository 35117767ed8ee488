// The inner loops of torchlight::linear_qs8 (op_linear_qs8.cpp): up to
// kRowsQs8 rows of int8 activations quantized per tensor (scale, zero point)
// against int8 weights [N, K] with one symmetric float32 scale per output
// column, as pt2e's XNNPACKQuantizer leaves a linear:
//   out[r, n] = bias[n] + (x_scale * w_scale[n]) * sum_k (x[r, k] - zp) * w[n, k]
// The sum is exact in int32 (|x - zp| <= 255, |w| <= 128, K <= kMaxKQs8),
// so every loop gives the same floats; the scale is applied once per sum.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/quantized/quant_isa.h"

namespace torchlight::quantized {

inline constexpr int kRowsQs8 = 4;
// 255 * 128 * 65536 < 2^31: no int32 sum can overflow.
inline constexpr int64_t kMaxKQs8 = 65536;

struct RowsQs8 {
  const int8_t* x;       // [rows, K]
  int rows;              // 1..kRowsQs8
  int32_t zero_point;    // of x
  float x_scale;
  const int8_t* weight;  // [N, K]
  const float* scales;   // [N]
  const float* bias;     // [N] or null.
  // [N] each column's sum_k w[n, k] (weight_sums_qs8), when precomputed for
  // a constant weight; null: the VNNI loops sum it (the others never need it).
  const int32_t* weight_sums = nullptr;
  int64_t k;
  int64_t n;   // Columns of out (its row stride).
  float* out;  // [rows, N]
};

/// Columns [n_begin, n_end) of every row.
void linear_qs8_columns_generic(const RowsQs8& rows, int64_t n_begin, int64_t n_end);
#if defined(__x86_64__) || defined(_M_X64)
void linear_qs8_columns_avx2(const RowsQs8& rows, int64_t n_begin, int64_t n_end);
/// vpdpbusd with x + 128 as the unsigned operand (linear_qs8_vnni_impl.h).
void linear_qs8_columns_avxvnni(const RowsQs8& rows, int64_t n_begin, int64_t n_end);
void linear_qs8_columns_avx512vnni(const RowsQs8& rows, int64_t n_begin, int64_t n_end);

/// AMX-INT8 tiles (linear_qs8_amx.cpp, QuantIsa::kAmx), for calls of many
/// rows: pack_rows_qs8_amx lays x [rows, K] out for the tiles (K % 4 == 0)
/// in pack_rows_qs8_amx_bytes(rows, K) bytes, once per call; then
/// linear_qs8_amx_columns computes columns [n_begin, n_end) of all
/// `total_rows` rows (RowsQs8::x the unpacked rows, weight_sums required).
size_t pack_rows_qs8_amx_bytes(int64_t rows, int64_t k);
void pack_rows_qs8_amx(const int8_t* x, int64_t rows, int64_t k, int8_t* packed);
void linear_qs8_amx_columns(const RowsQs8& rows, const int8_t* packed, int64_t total_rows,
                            int64_t n_begin, int64_t n_end);
#endif

/// The loop for `isa` (one this CPU runs, quant_isa.h).
using ColumnsQs8Fn = void (*)(const RowsQs8&, int64_t, int64_t);
ColumnsQs8Fn select_linear_qs8(QuantIsa isa = quant_isa());

/// Whether the loop for `isa` reads RowsQs8::weight_sums (the VNNI ones).
bool linear_qs8_uses_weight_sums(QuantIsa isa = quant_isa());

/// sums[n] = sum_k weight[n, k] for columns [n_begin, n_end) (|sum| <= 128 K).
void weight_sums_qs8(const int8_t* weight, int64_t k, int64_t n_begin, int64_t n_end,
                     int32_t* sums);

/// The float epilogue both loops share.
// static: see fold_lanes_int8 in linear_int8.h (files built with different -m flags).
static inline float finish_qs8(const RowsQs8& rows, int64_t n, int32_t sum) {
  const float bias = rows.bias != nullptr ? rows.bias[n] : 0.0f;
  return static_cast<float>(sum) * (rows.x_scale * rows.scales[n]) + bias;
}

}  // namespace torchlight::quantized
