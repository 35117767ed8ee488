// The inner loops of torchlight::linear_8da4w.out (op_linear_8da4w.cpp): up
// to kRows8da4w activation rows, already quantized to int8 per token (each
// unpacked weight vector serves them all, so prefill streams the weight once
// per block of rows rather than once per row), against int4
// group-wise symmetric weights packed two a byte (element 2j in the high
// nibble of byte j, 2j+1 in the low, each stored + 8, as embedding_4bit and
// torchao pack them). Per output column n and group g the integer sum
// sum_k (xq[k] - zp) * w[n, k] is exact in int32; out[n] = bias[n] +
// sum_g (x_scale * w_scales[n, g]) * that sum, in float32.
//
// Both loops keep the same eight lanes, so they give identical floats:
// element k of a group goes to lane (k % 32) / 4; per group each lane's
// exact integer sum is scaled and added to that lane's float sum, and the
// lanes are folded once per column (fold_lanes_8da4w) before the bias is
// added. (A horizontal sum per group would cost as much as the group's
// multiply-adds.)
//
// Built once per instruction set (linear_8da4w_generic.cpp, _avx2.cpp with
// its own flags) and chosen at run time by CPU detection.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torchlight::quantized {

inline constexpr int kRows8da4w = 4;

struct Row8da4w {
  const int8_t* xq;                  // [rows, K] quantized activations.
  int rows;                          // 1..kRows8da4w
  int32_t zero_point[kRows8da4w];    // Each row's zero point.
  float scale[kRows8da4w];           // Each row's scale (float32 of the float64 qparam).
  const uint8_t* weight;             // [N, K / 2] packed.
  const float* w_scales;             // [N, K / group].
  const float* bias;                 // [N] or null.
  int64_t k;
  int64_t n;      // Columns of out (its row stride).
  int64_t group;  // Divides K; a multiple of 32 for the AVX2 loop.
  float* out;     // [rows, N]
};

/// Columns [n_begin, n_end) of every row.
void linear_8da4w_columns_generic(const Row8da4w& row, int64_t n_begin, int64_t n_end);
#if defined(__x86_64__) || defined(_M_X64)
void linear_8da4w_columns_avx2(const Row8da4w& row, int64_t n_begin, int64_t n_end);
#endif

inline constexpr int kLanes8da4w = 8;

/// Lanes i and i + 4, then i and i + 2, then 0 and 1.
inline float fold_lanes_8da4w(const float* lane) {
  float h[4];
  for (int i = 0; i < 4; ++i) h[i] = lane[i] + lane[i + 4];
  const float q0 = h[0] + h[2];
  const float q1 = h[1] + h[3];
  return q0 + q1;
}

/// The best loop this CPU runs for `group` (AVX2 needs group % 32 == 0).
using Columns8da4wFn = void (*)(const Row8da4w&, int64_t, int64_t);
Columns8da4wFn select_linear_8da4w(int64_t group);

}  // namespace torchlight::quantized
