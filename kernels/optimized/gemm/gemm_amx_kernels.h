// The AMX-BF16 building blocks of gemm's fp32 path on AMX CPUs (gemm.cpp
// drives them; gemm_kernels_amx.cpp, built with -mamx-tile -mamx-bf16 and
// AVX-512 F/BW/VL/DQ, defines them).
//
// fp32-accurate products on bf16 tiles: each fp32 operand is split exactly
// into three bf16 parts, x = hi + mid + lo (hi = x's top 16 bits, mid = the
// top 16 bits of x - hi, lo = the rest: 8 significant bits each), and
// tdpbf16ps accumulates the six products of order <= 2 (hh, hm, mh, hl, lh,
// mm) into fp32 tiles. Each bf16 x bf16 product is exact in fp32; the three
// dropped ones (ml, lm, ll) are below 2^-21 |a||b| (|mid| < 2^-7 |x|, |lo| <
// 2^-15 |x|), so an element's error is at most (2^-21 + the fp32 rounding
// of summing 6K products) * sum_k |a_k b_k|: an fp32 dot product's
// (gemm_test.cpp's AMX tests check it against float64, and that three
// products fail it).
//
// Denormals: tdpbf16ps reads denormal bf16 as zero and flushes denormal
// results, so parts below 2^-126 are dropped (all of a denormal input,
// the mid and lo of |x| below about 2^-110): an absolute error of at most
// about 2^-124 sum_k (|a_k| + |b_k|), far below any normal result's ulp.
// Non-finite inputs (inf - inf is NaN) are detected while splitting and
// reported; gemm then recomputes the call on AVX-512, so results keep IEEE
// semantics.
//
// Layouts (K padded with zeros to a multiple of 32, rows and columns to 16):
//  - split A: three parts, each `rows` rows of K bf16 at a row stride of
//    an odd number of 64-byte lines (a tile's 16 rows in 16 L1 sets);
//  - split B (the weight, B given transposed as [N, K] rows): per block of
//    16 columns, three parts, each K/2 rows of 16 dwords (the bf16 pair
//    w[n][2i], w[n][2i + 1] of each column n): tdpbf16ps's B layout.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/optimized/gemm/gemm_kernels.h"

namespace torchlight::optimized::internal {

/// One block of C for B given transposed: rows [m0, m1) x columns [n0, n1)
/// of C = epilogue(A @ W^T).
struct AmxNtBlock {
  const float* a = nullptr;  // [m, k], row stride lda, contiguous rows.
  int64_t lda = 0;
  const float* w = nullptr;  // [n, k], row stride ldw, contiguous rows.
  int64_t ldw = 0;
  /// The whole weight split (amx_split_weight), or null to split it per call.
  const void* split_w = nullptr;
  int64_t k = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  Epilogue ep;
  /// Scratch of the calling thread, 64-byte aligned (gemm's slot).
  void* scratch = nullptr;
  size_t scratch_bytes = 0;
  /// 6 (the fp32-accurate set); 3 (hh, hm, mh only) exists for the test
  /// that shows three are not enough.
  int products = 6;
};

struct AmxGemmKernels {
  /// Computes the block; n0 must be a multiple of 32. False (C partly
  /// written) when A's or W's values there hold inf or NaN, or the scratch
  /// is below scratch_bytes() (never with gemm's slot).
  bool (*nt_block)(const AmxNtBlock& block, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
  /// Bytes of a whole split weight of [n, k].
  size_t (*split_weight_bytes)(int64_t n, int64_t k);
  /// Splits w ([n, k], row stride ldw) into `out` (split_weight_bytes,
  /// 64-byte aligned). False when a value is inf or NaN.
  bool (*split_weight)(const float* w, int64_t ldw, int64_t n, int64_t k, void* out);
  /// Scratch nt_block needs at most (gemm's slots hold it).
  size_t (*scratch_bytes)();
};

/// The table, or null when the build has no AMX file. It does not check the CPU.
const AmxGemmKernels* amx_gemm_kernels();

}  // namespace torchlight::optimized::internal
