// The inner loops of torchlight::linear_8da4w.out (op_linear_8da4w.cpp): up
// to kRows8da4w activation rows, quantized to int8 per token, against int4
// group-wise symmetric weights packed two a byte (element 2j in the high
// nibble of byte j, 2j+1 in the low, each stored + 8, as embedding_4bit and
// torchao pack them). Each unpacked weight vector serves every row of the
// block.
//
// The weights are used as stored, u = w + 8 in [0, 15] (no recentring, and
// maddubs takes them as its unsigned operand); the activations are signed.
// Per row r, column n and group g, with zp the row's zero point:
//   sum_k (x[k] - zp) * (u[k] - 8)
//     = sum_k x[k] u[k] - zp * sum_k u[k] - 8 * (sum_k x[k] - zp * G),
// exact in int32; the last term depends on the row alone and is computed
// once per row (correction, see arrange_rows_8da4w).
//
// Activations are stored arranged to match the nibbles without shuffles:
// each group is cut into chunks of 32 from its start (the last may be
// shorter, length L, even); position p < L/2 of a chunk holds element 2p + 1
// (the low nibbles, in byte order), position L/2 + q element 2q (the high
// nibbles). So 16 packed bytes give their low nibbles and their high nibbles
// as one 32-byte vector in arranged order.
//
// Every loop keeps the same sixteen int32 lanes, so they give identical
// floats. Chunks are numbered along the row (c = position / 32 when the
// group is a multiple of 32; otherwise each group's chunks in turn), and
// position p of chunk c (length L, half = L / 2) goes to lane
// 4 * (c % 4) + (p % half) / 4 for the products x u and to
// 4 * (c % 4) + 2 * ((p % half) / 8) for sum u (what vpdpbusd / maddubs +
// madd and sad_epu8 yield on a 64-byte load of four chunks' packed bytes,
// their low nibbles meeting the chunks' first halves, their high nibbles the
// second halves). So a 512-bit step covers four chunks: four groups of 32
// (four lanes each), two of 64, or a quarter of a larger group's sums. Per
// group each lane of its chunks' quarters gets the lane's exact sum
// fused-multiply-added with the group's weight scale into that lane's float
// sum (one set per row for the products, one per column for sum u, shared by
// the rows); the sixteen lanes are folded once per column (fold_lanes_8da4w),
// combined with the zero point and the row corrections
// (finish_column_8da4w), then out = fma(sum, x_scale, bias). One
// exception: with groups of 32 and an odd number of them, the last group
// (a chunk alone, which would cost a whole 512-bit step) stays out of the
// lanes: after the fold, products = fma(its exact sum, its scale, products),
// and likewise sum u (lone_last_group_8da4w). The integer
// sums are exact; only these float steps round. A 256-bit build keeps the
// sixteen lanes in two vectors (lanes 0-7, 8-15): two chunks a step, the
// same sums in the same lanes.
//
// Built once per instruction set (linear_8da4w_generic.cpp, and
// linear_8da4w_x86_impl.h as _avx2, _avxvnni and _avx512vnni.cpp, each with
// its own flags) and chosen at run time by CPU detection (quant_isa.h).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/quantized/quant_isa.h"

namespace torchlight::quantized {

inline constexpr int kRows8da4w = 4;

struct Row8da4w {
  const int8_t* xq;                  // [rows, K] quantized activations, arranged.
  const float* correction;           // [rows, K / group]: 8 * (sum x - zp * group), exact.
  int rows;                          // 1..kRows8da4w
  int32_t zero_point[kRows8da4w];    // Each row's zero point.
  float scale[kRows8da4w];           // Each row's scale (float32 of the float64 qparam).
  const uint8_t* weight;             // [N, K / 2] packed.
  const float* w_scales;             // [N, K / group].
  const float* bias;                 // [N] or null.
  // [N] each column's folded sum_g w_scale * sum u (fold_weight_sums_8da4w),
  // when precomputed (constant weights, or once per prefill call); null: the
  // loops compute it. Either way the same floats.
  const float* u_folded = nullptr;
  int64_t k;
  int64_t n;      // Columns of out (its row stride).
  int64_t group;  // Divides K; even; a multiple of 32 for the AVX2 loop.
  float* out;     // [rows, N]
};

/// Columns [n_begin, n_end) of every row.
void linear_8da4w_columns_generic(const Row8da4w& row, int64_t n_begin, int64_t n_end);
#if defined(__x86_64__) || defined(_M_X64)
// One build per instruction set (linear_8da4w_x86_impl.h), group % 32 == 0;
// the same floats as the generic loop.
void linear_8da4w_columns_avx2(const Row8da4w& row, int64_t n_begin, int64_t n_end);
void linear_8da4w_columns_avxvnni(const Row8da4w& row, int64_t n_begin, int64_t n_end);
void linear_8da4w_columns_avx512vnni(const Row8da4w& row, int64_t n_begin, int64_t n_end);

/// The prefill tile: the same sums as linear_8da4w_columns_* (identical
/// floats) from activations in paired order (pair_rows_8da4w) and with
/// row.u_folded required: four rows by two columns a step, no lane permutes
/// and no weight sums in the loop. Group % 32 == 0.
void linear_8da4w_tile_avx2(const Row8da4w& row, int64_t n_begin, int64_t n_end);
void linear_8da4w_tile_avxvnni(const Row8da4w& row, int64_t n_begin, int64_t n_end);
void linear_8da4w_tile_avx512vnni(const Row8da4w& row, int64_t n_begin, int64_t n_end);
#endif

/// Each column's folded weight sum for Row8da4w::u_folded, columns
/// [n_begin, n_end): per group sum u in the lanes the loops use, scaled by
/// the group's scale with fused multiply-adds, folded. Depends only on the
/// weight and its scales, so constant weights get it once, at load.
void fold_weight_sums_8da4w(const uint8_t* weight, const float* w_scales, int64_t k,
                            int64_t group, int64_t n_begin, int64_t n_end, float* u_folded);
#if defined(__x86_64__) || defined(_M_X64)
/// The same floats with AVX2 + FMA (group % 32 == 0).
void fold_weight_sums_8da4w_avx2(const uint8_t* weight, const float* w_scales, int64_t k,
                                 int64_t group, int64_t n_begin, int64_t n_end, float* u_folded);
#endif
using FoldWeightSums8da4wFn = void (*)(const uint8_t*, const float*, int64_t, int64_t, int64_t,
                                       int64_t, float*);
FoldWeightSums8da4wFn select_fold_weight_sums_8da4w(int64_t group, QuantIsa isa = quant_isa());

inline constexpr int kLanes8da4w = 16;

// The float helpers both loops share are static: each file keeps its own
// copy, so the linker cannot hand the generic loop the AVX2 file's build.

/// Lanes i and i + 8, then i and i + 4, then i and i + 2, then 0 and 1.
static inline float fold_lanes_8da4w(const float* lane) {
  float e[8];
  for (int i = 0; i < 8; ++i) e[i] = lane[i] + lane[i + 8];
  float h[4];
  for (int i = 0; i < 4; ++i) h[i] = e[i] + e[i + 4];
  const float q0 = h[0] + h[2];
  const float q1 = h[1] + h[3];
  return q0 + q1;
}

/// sum_g w_scales[g] * correction[g] with group g in lane g % 16 (fused
/// multiply-adds), the lanes folded. `lanes` holds groups [0, done) already
/// (the x86 loops do whole vectors of 16); the rest are added here.
static inline float fold_corrections_8da4w(float* lanes, const float* w_scales,
                                           const float* correction, int64_t done,
                                           int64_t groups) {
  for (int64_t g = done; g < groups; ++g) {
    lanes[g % kLanes8da4w] = std::fma(w_scales[g], correction[g], lanes[g % kLanes8da4w]);
  }
  return fold_lanes_8da4w(lanes);
}

/// Chunks of 32 per group (the last may be shorter).
static inline int64_t chunks_per_group_8da4w(int64_t group) { return (group + 31) / 32; }

/// Whether the row's last group stays out of the lanes (group 32, an odd
/// number of groups): it is added after the fold.
static inline bool lone_last_group_8da4w(int64_t group, int64_t groups) {
  return group == 32 && groups % 2 == 1;
}

/// The int32 lane of the products x u at arranged position p of chunk c
/// (counted along the row) of `length` values.
static inline int product_lane_8da4w(int64_t c, int64_t p, int64_t length) {
  return static_cast<int>(4 * (c % 4) + (p % (length / 2)) / 4);
}

/// The lane of sum u at arranged position p.
static inline int usum_lane_8da4w(int64_t c, int64_t p, int64_t length) {
  return static_cast<int>(4 * (c % 4) + 2 * ((p % (length / 2)) / 8));
}

/// A column's sum for one row before the row's scale: the folded products
/// minus zp times the folded sum u, minus the folded corrections.
static inline float finish_column_8da4w(float products, float u_sum, float corrections,
                                        int32_t zero_point) {
  return std::fma(-static_cast<float>(zero_point), u_sum, products) - corrections;
}

/// The element of a chunk of `length` (even) at arranged position p.
static inline int64_t arranged_element_8da4w(int64_t p, int64_t length) {
  const int64_t half = length / 2;
  return p < half ? 2 * p + 1 : 2 * (p - half);
}

/// One chunk of `length` quantized values q into arranged order; returns
/// their sum.
static inline int32_t arrange_chunk_8da4w(const int8_t* q, int64_t length, int8_t* arranged) {
  int32_t sum = 0;
  for (int64_t p = 0; p < length; ++p) {
    arranged[p] = q[arranged_element_8da4w(p, length)];
    sum += q[p];
  }
  return sum;
}

/// A group's row correction from the sum of its quantized values (an
/// integer below 2^20 in magnitude, so exact as a float).
static inline float correction_8da4w(int32_t sum, int32_t zero_point, int64_t group) {
  return static_cast<float>(8 * (sum - zero_point * static_cast<int32_t>(group)));
}

/// One quantized row xq [K] into arranged order (`arranged` [K]) with its
/// corrections [K / group].
static inline void arrange_row_8da4w(const int8_t* xq, int64_t k, int64_t group, int32_t zero_point,
                              int8_t* arranged, float* correction) {
  for (int64_t g0 = 0, g = 0; g0 < k; g0 += group, ++g) {
    int32_t sum = 0;
    for (int64_t c0 = g0; c0 < g0 + group; c0 += 32) {
      const int64_t length = g0 + group - c0 < 32 ? g0 + group - c0 : 32;
      sum += arrange_chunk_8da4w(xq + c0, length, arranged + c0);
    }
    correction[g] = correction_8da4w(sum, zero_point, group);
  }
}

/// Arranged rows [rows, K] into paired order, in place (group % 32 == 0):
/// each block of four chunks (the last block may hold fewer, r) becomes the
/// block's chunks' first halves, then their second halves: the vectors a
/// 512-bit step (four chunks) or a 256-bit one (two) meets the weights'
/// low and high nibbles with, as plain loads; the loops otherwise build them
/// with lane shuffles per row and column.
static inline void pair_rows_8da4w(int8_t* xq, int64_t rows, int64_t k, int64_t group) {
  (void)group;
  const int64_t chunks = k / 32;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c0 = 0; c0 < chunks; c0 += 4) {
      const int64_t block = chunks - c0 < 4 ? chunks - c0 : 4;
      int8_t* x = xq + r * k + c0 * 32;
      int8_t tmp[128];
      for (int64_t c = 0; c < block; ++c) {
        for (int i = 0; i < 16; ++i) {
          tmp[16 * c + i] = x[32 * c + i];
          tmp[16 * (block + c) + i] = x[32 * c + 16 + i];
        }
      }
      for (int64_t i = 0; i < 32 * block; ++i) x[i] = tmp[i];
    }
  }
}

/// Whether linear_8da4w.out runs a call of `rows` rows on the dequantized
/// GEMM (op_linear_8da4w.cpp; it sums in another order than the loops).
bool linear_8da4w_takes_dequantized_gemm(int64_t rows, int64_t k, int64_t group);

/// Whether it runs them on AMX tiles (linear_8da4w_amx.h; also another
/// order of sums) when the workspace holds their scratch.
bool linear_8da4w_takes_amx(int64_t rows, int64_t group);

/// The loop for `group` on `isa` (one this CPU runs, quant_isa.h); every x86
/// loop needs group % 32 == 0, else generic.
using Columns8da4wFn = void (*)(const Row8da4w&, int64_t, int64_t);
Columns8da4wFn select_linear_8da4w(int64_t group, QuantIsa isa = quant_isa());

/// The prefill tile for `group` on `isa`, or null (no x86 ISA, or group %
/// 32 != 0).
Columns8da4wFn select_tile_8da4w(int64_t group, QuantIsa isa = quant_isa());

}  // namespace torchlight::quantized
