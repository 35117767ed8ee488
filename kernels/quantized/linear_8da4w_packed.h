// linear_8da4w on weights repacked at load, one column to each 32-bit
// vector lane, for constant weights (op_linear_8da4w.cpp packs them in
// prepare, into method memory, and releases the original's pages; the
// program's own weight is not changed): decode (one row) and, with each
// packed word reused across a register block of rows, every many-row call.
//
// Why: the loops of linear_8da4w.h keep sixteen lanes per column, so every
// 64 weights of every column pay a convert, a fused multiply-add and a scale
// shuffle, and the lanes are folded per column. Here each 32-bit lane is one
// column: a vector holds word d (packed bytes 4d..4d+3) of 8 (AVX2) or 16
// columns, so one load, its low and high nibbles against the row's arranged
// activations broadcast (the same four bytes in every lane), sums 8
// products for every column in it, and a group's exact int32 sum per
// column ends in its own lane: one convert, one subtract and one fused
// multiply-add per group per vector of columns.
//
// Layout (Packed8da4w), blocks of kPackedColumns8da4w = 16 columns (the
// last one padded with zero weights and scales; a block's word d is one
// 64-byte line, and a block is one sequential stream):
//   weight [blocks, K / 8, 16] 32-bit words: word d of each column's packed
//     row (two nibbles a byte, as linear_8da4w.h), so in arranged order
//     (linear_8da4w.h) word d = 4c + j of chunk c holds positions 4j..4j+3
//     (low nibbles) and 16 + 4j.. (high nibbles);
//   scales [blocks, K / group, 16] float32;
//   u_folded [blocks * 16]: sum over groups, in order, of
//     fma(float(sum u), scale, .) per column.
//
// Numerics (every build the same floats; another order than linear_8da4w.h's
// loops, so decode differs from a many-row call of the same row by float
// rounding): per column, products = fma(float(D_g) - C_g, s_g, products)
// over the groups in order, where D_g = sum x u over the group (exact int32)
// and C_g = 8 * (sum x - zp * group) the row's correction (an integer;
// |D_g - C_g| < 2^24, so the subtraction is exact); then
// out = fma(fma(-zp, u_folded, products), x_scale, bias).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/quantized/quant_isa.h"

namespace torchlight::quantized {

inline constexpr int64_t kPackedColumns8da4w = 16;

/// Blocks of kPackedColumns8da4w covering N columns.
inline int64_t packed_blocks_8da4w(int64_t n) { return (n + kPackedColumns8da4w - 1) / kPackedColumns8da4w; }

/// Weights in the packed layout above; borrowed, must outlive the calls.
struct Packed8da4w {
  const uint8_t* weight = nullptr;  // [blocks, K / 8, 16] words.
  const float* scales = nullptr;    // [blocks, K / group, 16].
  const float* u_folded = nullptr;  // [blocks * 16].
  int64_t k = 0;
  int64_t n = 0;
  int64_t group = 0;  // A multiple of 32 dividing K.
};

/// One decode row, quantized and arranged (quantize_arranged_8da4w.h).
struct PackedRow8da4w {
  const int8_t* xq;          // [K] arranged.
  const float* correction;   // [K / group]: 8 * (sum x - zp * group), exact.
  int32_t zero_point;
  float scale;
  const float* bias;         // [N] or null.
  float* out;                // [N]
};

/// Rows of a many-row call (prefill), each quantized and arranged as decode's.
struct PackedRows8da4w {
  const int8_t* xq;           // [rows, K] arranged.
  const float* correction;    // [rows, K / group].
  const int32_t* zero_point;  // [rows]
  const float* scale;         // [rows]
  int64_t rows;
  const float* bias;          // [N] or null.
  float* out;                 // [rows, N]
};

/// Whether the packed path serves this shape (group % 32 == 0, K % group == 0).
bool packed_8da4w_fits(int64_t k, int64_t group);

/// Bytes pack_8da4w writes for K x N (weights, scales, sums; 64-byte aligned parts).
size_t packed_8da4w_bytes(int64_t k, int64_t n, int64_t group);

/// The packed weights of K x N in `memory` (packed_8da4w_bytes of it,
/// 64-byte aligned; filled by pack_8da4w).
Packed8da4w packed_8da4w_view(const void* memory, int64_t k, int64_t n, int64_t group);

/// Packs blocks [block_begin, block_end) of weight [N, K / 2] and w_scales
/// [N, K / group] into `memory`. Blocks are independent: threads may pack
/// disjoint ranges.
void pack_8da4w(const uint8_t* weight, const float* w_scales, int64_t k, int64_t n, int64_t group,
                void* memory, int64_t block_begin, int64_t block_end);

/// Columns [n_begin, n_end) of the row (any range inside [0, N)).
using Packed8da4wFn = void (*)(const Packed8da4w&, const PackedRow8da4w&, int64_t, int64_t);

/// The reference: the same floats from the unpacked weight [N, K / 2] and
/// w_scales [N, K / group] (of `packed` only k and group are read).
void linear_8da4w_packed_reference(const Packed8da4w& packed, const uint8_t* weight,
                                   const float* w_scales, const PackedRow8da4w& row,
                                   int64_t n_begin, int64_t n_end);

/// Columns [n_begin, n_end) of every row; each row's floats are decode's.
using PackedRows8da4wFn = void (*)(const Packed8da4w&, const PackedRows8da4w&, int64_t, int64_t);

/// linear_8da4w_packed_reference row by row.
void linear_8da4w_packed_rows_reference(const Packed8da4w& packed, const uint8_t* weight,
                                        const float* w_scales, const PackedRows8da4w& rows,
                                        int64_t n_begin, int64_t n_end);

#if defined(__x86_64__) || defined(_M_X64)
void linear_8da4w_packed_avx2(const Packed8da4w& packed, const PackedRow8da4w& row, int64_t n_begin,
                              int64_t n_end);
/// The many-row loop (in linear_8da4w_packed_avx2.cpp): each packed word
/// unpacked once for a register block of four rows.
void linear_8da4w_packed_rows_avx2(const Packed8da4w& packed, const PackedRows8da4w& rows, int64_t n_begin,
                                   int64_t n_end);
#endif

/// The packed decode for `isa`, or null where linear_8da4w.h's loops serve
/// decode instead: today AVX2 only (the AVX-VNNI and AVX-512 builds keep
/// their loops; not measured with this layout yet).
Packed8da4wFn select_packed_8da4w(int64_t k, int64_t group, QuantIsa isa = quant_isa());

/// The many-row loop on the same packed weights: non-null exactly where
/// select_packed_8da4w is, so a weight packed for decode serves every call.
PackedRows8da4wFn select_packed_rows_8da4w(int64_t k, int64_t group, QuantIsa isa = quant_isa());

}  // namespace torchlight::quantized
