// Pieces every gemm_kernels_<isa>.cpp shares: packing and the scalar
// epilogue. Everything is a template in an anonymous namespace, so each
// file compiles its own copy with its own -m flags and no copy is shared
// through the linker (see gemm_kernels.h). Include only from those files.
#pragma once

#include <cstdint>

#include "kernels/optimized/gemm/gemm_kernels.h"

namespace torchlight::optimized::internal {
namespace {

template <typename T>
inline T min_of(T a, T b) {
  return a < b ? a : b;
}

/// One finished element through the epilogue (Epilogue's formula).
inline float apply_epilogue(float x, const Epilogue& ep, const float* c, int64_t j) {
  float v = ep.alpha * x;
  if (ep.accumulate) v += *c;
  if (ep.bias != nullptr) v += ep.beta * ep.bias[j];
  return v;
}

/// A matrix-vector kernel for up to one group of rows of A (gemv_*_group).
using GemvGroupFn = void (*)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                             const float* b, int64_t ldb, float* c, int64_t ldc,
                             const Epilogue& ep);

/// GemmKernels::gemv_nt / gemv_nn for m up to kGemvMaxRows: `group` runs
/// over groups of up to kGroup rows of A, kCols columns of C at a time, so
/// each block of B (weight rows, or a column strip) serves every group while
/// it is in cache. `col_step` is the distance in `b` between columns of B
/// (ldb for a transposed B, 1 for a row-major one).
template <int kGroup, int kCols>
void for_row_groups(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                    int64_t ldb, int64_t col_step, float* c, int64_t ldc, const Epilogue& ep,
                    GemvGroupFn group) {
  if (m <= kGroup) {
    group(m, n, k, a, lda, b, ldb, c, ldc, ep);
    return;
  }
  for (int64_t j0 = 0; j0 < n; j0 += kCols) {
    const int64_t cols = min_of<int64_t>(kCols, n - j0);
    Epilogue e = ep;
    if (e.bias != nullptr) e.bias += j0;
    for (int64_t i0 = 0; i0 < m; i0 += kGroup) {
      group(min_of<int64_t>(kGroup, m - i0), cols, k, a + i0 * lda, lda, b + j0 * col_step, ldb,
            c + i0 * ldc + j0, ldc, e);
    }
  }
}

/// GemmKernels::pack_a for strips of MR rows.
template <int MR>
void pack_a_strips(int64_t rows, int64_t depth, const float* a, int64_t rs, int64_t cs,
                   float* out) {
  for (int64_t i0 = 0; i0 < rows; i0 += MR) {
    const int64_t h = min_of<int64_t>(MR, rows - i0);
    if (cs == 1) {
      // Row-major A: read each row contiguously.
      for (int64_t r = 0; r < h; ++r) {
        const float* src = a + (i0 + r) * rs;
        for (int64_t p = 0; p < depth; ++p) out[p * MR + r] = src[p];
      }
    } else if (rs == 1) {
      // Column-major A: column p of the strip is contiguous.
      for (int64_t p = 0; p < depth; ++p) {
        const float* src = a + p * cs + i0;
        for (int64_t r = 0; r < h; ++r) out[p * MR + r] = src[r];
      }
    } else {
      for (int64_t r = 0; r < h; ++r) {
        for (int64_t p = 0; p < depth; ++p) out[p * MR + r] = a[(i0 + r) * rs + p * cs];
      }
    }
    for (int64_t r = h; r < MR; ++r) {
      for (int64_t p = 0; p < depth; ++p) out[p * MR + r] = 0.0f;
    }
    out += depth * MR;
  }
}

/// GemmKernels::pack_b for panels of NR columns.
template <int NR>
void pack_b_panels(int64_t depth, int64_t cols, const float* b, int64_t rs, int64_t cs,
                   float* out) {
  for (int64_t j0 = 0; j0 < cols; j0 += NR) {
    const int64_t w = min_of<int64_t>(NR, cols - j0);
    if (cs == 1) {
      // Row-major B (NN): each row of the panel is a contiguous run; a
      // fixed-length copy for full panels (a memcpy call per row is slow).
      for (int64_t p = 0; p < depth; ++p) {
        const float* src = b + p * rs + j0;
        float* dst = out + p * NR;
        if (w == NR) {
          for (int jj = 0; jj < NR; ++jj) dst[jj] = src[jj];
        } else {
          for (int64_t jj = 0; jj < w; ++jj) dst[jj] = src[jj];
          for (int64_t jj = w; jj < NR; ++jj) dst[jj] = 0.0f;
        }
      }
    } else {
      if (rs == 1) {
        // Transposed B (NT): column j is a contiguous weight row. Eight
        // columns at a time keep the stores to a few cache lines.
        int64_t jj = 0;
        for (; jj + 8 <= w; jj += 8) {
          const float* src = b + (j0 + jj) * cs;
          for (int64_t p = 0; p < depth; ++p) {
            float* dst = out + p * NR + jj;
            for (int64_t q = 0; q < 8; ++q) dst[q] = src[q * cs + p];
          }
        }
        for (; jj < w; ++jj) {
          const float* src = b + (j0 + jj) * cs;
          for (int64_t p = 0; p < depth; ++p) out[p * NR + jj] = src[p];
        }
      } else {
        for (int64_t p = 0; p < depth; ++p) {
          for (int64_t jj = 0; jj < w; ++jj) out[p * NR + jj] = b[p * rs + (j0 + jj) * cs];
        }
      }
      for (int64_t p = 0; p < depth; ++p) {
        for (int64_t jj = w; jj < NR; ++jj) out[p * NR + jj] = 0.0f;
      }
    }
    out += depth * NR;
  }
}

}  // namespace
}  // namespace torchlight::optimized::internal
