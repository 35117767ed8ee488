// The per-instruction-set building blocks of gemm (gemm.cpp drives them).
//
// Each gemm_kernels_<isa>.cpp is compiled with its own -m flags and exports
// one GemmKernels table; gemm.cpp picks a table at run time. Those files
// include only this header and intrinsics, and keep every helper in an
// anonymous namespace, so no AVX-512 copy of a shared inline function can be
// linked into code that runs on an older CPU.
#pragma once

#include <cstdint>

namespace torchlight::optimized::internal {

/// What a kernel does with each finished element x of the product:
///   C = alpha * x  (+ C when accumulate)  (+ beta * bias[j] when bias)
/// and then, when clamp is set (only the AMX path's kernels read it; gemm.cpp
/// clamps after the other paths), C = min(max(C, lo), hi).
struct Epilogue {
  float alpha = 1.0f;
  float beta = 0.0f;
  const float* bias = nullptr;  // Indexed by the kernel's column; null: none.
  bool accumulate = false;
  bool clamp = false;
  float lo = 0.0f;
  float hi = 0.0f;
};

/// A packed A block is a run of strips, strip s holding rows
/// [s*mr, s*mr + mr) as kc groups of mr values (column p of the strip is
/// ap[p * mr .. p * mr + mr)); a packed B block is a run of panels of nr
/// columns, kc groups of nr values. Rows/columns past the matrix are zero.
struct GemmKernels {
  int mr;       // Rows of a micro-tile.
  int nr;       // Columns of a micro-tile.
  int64_t kc;   // Depth of a packed block.
  int64_t mc;   // Rows of a packed A block (a multiple of mr).
  int64_t nc;   // Columns of a packed B block (a multiple of nr).

  /// C[0..mr)[0..nr) (row stride ldc) from one A strip and one B panel of
  /// depth kc >= 1; ep.bias, if any, points at this tile's first column.
  void (*micro)(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                const Epilogue& ep);

  /// Packs A[0..rows)[0..depth) (element [i][p] at a[i * rs + p * cs]) into
  /// ceil(rows / mr) strips at `out`.
  void (*pack_a)(int64_t rows, int64_t depth, const float* a, int64_t rs, int64_t cs, float* out);

  /// Packs B[0..depth)[0..cols) (element [p][j] at b[p * rs + j * cs]) into
  /// ceil(cols / nr) panels at `out`.
  void (*pack_b)(int64_t depth, int64_t cols, const float* b, int64_t rs, int64_t cs, float* out);

  /// C[0..m)[0..n) for m <= kGemvMaxRows (16), k >= 1, B given transposed: row j
  /// of `w` (row stride ldw, contiguous) is column j of B. A's rows are
  /// contiguous (row stride lda).
  void (*gemv_nt)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* w,
                  int64_t ldw, float* c, int64_t ldc, const Epilogue& ep);

  /// The same with B row-major: row p of B at b + p * ldb, contiguous.
  void (*gemv_nn)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                  int64_t ldb, float* c, int64_t ldc, const Epilogue& ep);

  /// Optional (null when the set has none): a tile of C for B given
  /// transposed, without packing B. Computes C[0..cols)[0..rows) (row
  /// stride ldc; rows <= mr, cols <= nr) from `rows` weight rows (row j of
  /// `w` is column j of B, depth kc, row stride ldw, contiguous) and one
  /// panel of A^T `at` (A's rows as the columns of a pack_b panel: what
  /// pack_b makes of A read with its strides swapped). ep.bias, if any,
  /// points at this tile's first column.
  void (*micro_nt)(int64_t kc, const float* w, int64_t ldw, int64_t rows, const float* at,
                   int64_t cols, float* c, int64_t ldc, const Epilogue& ep);
};

/// The tables; avx2/avx512 return null when the build has no such file
/// (non-x86 targets). They do not check the CPU.
const GemmKernels* portable_gemm_kernels();
const GemmKernels* avx2_gemm_kernels();
const GemmKernels* avx512_gemm_kernels();

}  // namespace torchlight::optimized::internal
