// Portable gemm kernels: plain C++ written so the compiler vectorizes it
// for the baseline ISA (SSE2 on x86-64, NEON on AArch64). The fallback on
// CPUs without AVX2 and on every other architecture.
//
// Micro-tile 4 x 8: the accumulators fill 8 of the 16 SSE registers.
#include "kernels/optimized/gemm/gemm_kernels_common.h"

namespace torchlight::optimized::internal {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 8;
constexpr int kLanes = 8;  // Partial sums per dot product.

void micro_4x8(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
               const Epilogue& ep) {
  float acc[kMr][kNr] = {};
  for (int64_t p = 0; p < kc; ++p) {
    for (int r = 0; r < kMr; ++r) {
      const float av = ap[r];
      for (int j = 0; j < kNr; ++j) acc[r][j] += av * bp[j];
    }
    ap += kMr;
    bp += kNr;
  }
  for (int r = 0; r < kMr; ++r) {
    float* row = c + r * ldc;
    for (int j = 0; j < kNr; ++j) row[j] = apply_epilogue(acc[r][j], ep, row + j, j);
  }
}

// M rows of A against R weight rows, each dot product in kLanes partial
// sums so the loop vectorizes.
template <int M, int R>
void gemv_nt_block(int64_t k, const float* a, int64_t lda, const float* w, int64_t ldw, float* c,
                   int64_t ldc, int64_t j, const Epilogue& ep) {
  float acc[M][R][kLanes] = {};
  const float* wr[R];
  for (int r = 0; r < R; ++r) wr[r] = w + (j + r) * ldw;
  int64_t p = 0;
  for (; p + kLanes <= k; p += kLanes) {
    for (int i = 0; i < M; ++i) {
      const float* x = a + i * lda + p;
      for (int r = 0; r < R; ++r) {
        for (int l = 0; l < kLanes; ++l) acc[i][r][l] += x[l] * wr[r][p + l];
      }
    }
  }
  for (int i = 0; i < M; ++i) {
    for (int r = 0; r < R; ++r) {
      float sum = 0.0f;
      for (int l = 0; l < kLanes; ++l) sum += acc[i][r][l];
      for (int64_t q = p; q < k; ++q) sum += a[i * lda + q] * wr[r][q];
      float* out = c + i * ldc + j + r;
      *out = apply_epilogue(sum, ep, out, j + r);
    }
  }
}

template <int M>
void gemv_nt_rows(int64_t n, int64_t k, const float* a, int64_t lda, const float* w, int64_t ldw,
                  float* c, int64_t ldc, const Epilogue& ep) {
  constexpr int kRows = M <= 2 ? 2 : 1;
  int64_t j = 0;
  for (; j + kRows <= n; j += kRows) gemv_nt_block<M, kRows>(k, a, lda, w, ldw, c, ldc, j, ep);
  for (; j < n; ++j) gemv_nt_block<M, 1>(k, a, lda, w, ldw, c, ldc, j, ep);
}

void gemv_nt_group(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* w,
                   int64_t ldw, float* c, int64_t ldc, const Epilogue& ep) {
  switch (m) {
    case 1: return gemv_nt_rows<1>(n, k, a, lda, w, ldw, c, ldc, ep);
    case 2: return gemv_nt_rows<2>(n, k, a, lda, w, ldw, c, ldc, ep);
    case 3: return gemv_nt_rows<3>(n, k, a, lda, w, ldw, c, ldc, ep);
    default: return gemv_nt_rows<4>(n, k, a, lda, w, ldw, c, ldc, ep);
  }
}

// M rows of A against a strip of up to kStrip columns of row-major B.
template <int M>
void gemv_nn_rows(int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                  float* c, int64_t ldc, const Epilogue& ep) {
  constexpr int64_t kStrip = 32;
  for (int64_t j0 = 0; j0 < n; j0 += kStrip) {
    const int64_t width = min_of(kStrip, n - j0);
    float acc[M][kStrip] = {};
    for (int64_t p = 0; p < k; ++p) {
      const float* row = b + p * ldb + j0;
      for (int i = 0; i < M; ++i) {
        const float av = a[i * lda + p];
        if (width == kStrip) {
          for (int64_t jj = 0; jj < kStrip; ++jj) acc[i][jj] += av * row[jj];
        } else {
          for (int64_t jj = 0; jj < width; ++jj) acc[i][jj] += av * row[jj];
        }
      }
    }
    for (int i = 0; i < M; ++i) {
      float* out = c + i * ldc + j0;
      for (int64_t jj = 0; jj < width; ++jj) {
        out[jj] = apply_epilogue(acc[i][jj], ep, out + jj, j0 + jj);
      }
    }
  }
}

void gemv_nn_group(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                   int64_t ldb, float* c, int64_t ldc, const Epilogue& ep) {
  switch (m) {
    case 1: return gemv_nn_rows<1>(n, k, a, lda, b, ldb, c, ldc, ep);
    case 2: return gemv_nn_rows<2>(n, k, a, lda, b, ldb, c, ldc, ep);
    case 3: return gemv_nn_rows<3>(n, k, a, lda, b, ldb, c, ldc, ep);
    default: return gemv_nn_rows<4>(n, k, a, lda, b, ldb, c, ldc, ep);
  }
}

void gemv_nt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* w,
             int64_t ldw, float* c, int64_t ldc, const Epilogue& ep) {
  for_row_groups<4, 16>(m, n, k, a, lda, w, ldw, /*col_step=*/ldw, c, ldc, ep, &gemv_nt_group);
}

void gemv_nn(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
             int64_t ldb, float* c, int64_t ldc, const Epilogue& ep) {
  for_row_groups<4, 64>(m, n, k, a, lda, b, ldb, /*col_step=*/1, c, ldc, ep, &gemv_nn_group);
}

void pack_a(int64_t rows, int64_t depth, const float* a, int64_t rs, int64_t cs, float* out) {
  pack_a_strips<kMr>(rows, depth, a, rs, cs, out);
}

void pack_b(int64_t depth, int64_t cols, const float* b, int64_t rs, int64_t cs, float* out) {
  pack_b_panels<kNr>(depth, cols, b, rs, cs, out);
}

constexpr GemmKernels kKernels = {
    kMr, kNr, /*kc=*/256, /*mc=*/64, /*nc=*/512, &micro_4x8, &pack_a, &pack_b, &gemv_nt,
    &gemv_nn, /*micro_nt=*/nullptr,
};

}  // namespace

const GemmKernels* portable_gemm_kernels() { return &kKernels; }

}  // namespace torchlight::optimized::internal
