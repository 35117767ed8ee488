// AVX-512F gemm kernels. Compiled with -mavx512f -mavx2 -mfma; called only
// when the CPU supports AVX-512F (gemm.cpp checks).
//
// Micro-tile 12 x 32: 24 zmm accumulators, two B vectors and one broadcast
// A value per step of k (27 of the 32 registers), 24 FMAs per 14 loads.
#include <immintrin.h>

#include "kernels/optimized/gemm/gemm_kernels_common.h"

namespace torchlight::optimized::internal {
namespace {

constexpr int kMr = 12;
constexpr int kNr = 32;

// The first `count` (0..16) lanes.
inline __mmask16 tail_mask(int64_t count) {
  return static_cast<__mmask16>((1u << count) - 1u);
}

inline __m512 epilogue_vector(__m512 acc, const Epilogue& ep, const float* c, const float* bias,
                              __mmask16 mask) {
  __m512 v = _mm512_mul_ps(acc, _mm512_set1_ps(ep.alpha));
  if (ep.accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, c));
  if (bias != nullptr) {
    v = _mm512_fmadd_ps(_mm512_set1_ps(ep.beta), _mm512_maskz_loadu_ps(mask, bias), v);
  }
  return v;
}

void micro_12x32(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                 const Epilogue& ep) {
  __m512 acc[kMr][2];
#pragma GCC unroll 12
  for (int r = 0; r < kMr; ++r) {
    acc[r][0] = _mm512_setzero_ps();
    acc[r][1] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_loadu_ps(bp);
    const __m512 b1 = _mm512_loadu_ps(bp + 16);
    _mm_prefetch(reinterpret_cast<const char*>(bp + 8 * kNr), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int r = 0; r < kMr; ++r) {
      const __m512 av = _mm512_set1_ps(ap[r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
    ap += kMr;
    bp += kNr;
  }
  const float* bias = ep.bias;
#pragma GCC unroll 12
  for (int r = 0; r < kMr; ++r) {
    float* row = c + r * ldc;
    _mm512_storeu_ps(row, epilogue_vector(acc[r][0], ep, row, bias, 0xFFFF));
    _mm512_storeu_ps(row + 16, epilogue_vector(acc[r][1], ep, row + 16, bias ? bias + 16 : nullptr,
                                               0xFFFF));
  }
}

// M rows of A against R weight rows at a time: M * R accumulators, each a
// 16-wide partial dot product, reduced at the end.
template <int M, int R>
void gemv_nt_block(int64_t k, const float* a, int64_t lda, const float* w, int64_t ldw, float* c,
                   int64_t ldc, int64_t j, const Epilogue& ep) {
  __m512 acc[M][R];
  for (int i = 0; i < M; ++i) {
    for (int r = 0; r < R; ++r) acc[i][r] = _mm512_setzero_ps();
  }
  const float* wr[R];
  for (int r = 0; r < R; ++r) wr[r] = w + (j + r) * ldw;
  int64_t p = 0;
  for (; p + 16 <= k; p += 16) {
    __m512 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = _mm512_loadu_ps(wr[r] + p);
    for (int i = 0; i < M; ++i) {
      const __m512 x = _mm512_loadu_ps(a + i * lda + p);
      for (int r = 0; r < R; ++r) acc[i][r] = _mm512_fmadd_ps(x, wv[r], acc[i][r]);
    }
  }
  if (p < k) {
    const __mmask16 mask = tail_mask(k - p);
    __m512 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = _mm512_maskz_loadu_ps(mask, wr[r] + p);
    for (int i = 0; i < M; ++i) {
      const __m512 x = _mm512_maskz_loadu_ps(mask, a + i * lda + p);
      for (int r = 0; r < R; ++r) acc[i][r] = _mm512_fmadd_ps(x, wv[r], acc[i][r]);
    }
  }
  for (int i = 0; i < M; ++i) {
    for (int r = 0; r < R; ++r) {
      float* out = c + i * ldc + j + r;
      *out = apply_epilogue(_mm512_reduce_add_ps(acc[i][r]), ep, out, j + r);
    }
  }
}

template <int M>
void gemv_nt_rows(int64_t n, int64_t k, const float* a, int64_t lda, const float* w, int64_t ldw,
                  float* c, int64_t ldc, const Epilogue& ep) {
  // Enough independent FMA chains for one or two rows of A; fewer weight
  // rows as the rows of A (and accumulators) grow.
  constexpr int kRows = M <= 2 ? 8 : (M <= 4 ? 4 : 2);
  int64_t j = 0;
  for (; j + kRows <= n; j += kRows) gemv_nt_block<M, kRows>(k, a, lda, w, ldw, c, ldc, j, ep);
  for (; j < n; ++j) gemv_nt_block<M, 1>(k, a, lda, w, ldw, c, ldc, j, ep);
}

// Up to 8 rows of A in one pass over the weight rows.
void gemv_nt_group(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* w,
                   int64_t ldw, float* c, int64_t ldc, const Epilogue& ep) {
  switch (m) {
    case 1: return gemv_nt_rows<1>(n, k, a, lda, w, ldw, c, ldc, ep);
    case 2: return gemv_nt_rows<2>(n, k, a, lda, w, ldw, c, ldc, ep);
    case 3: return gemv_nt_rows<3>(n, k, a, lda, w, ldw, c, ldc, ep);
    case 4: return gemv_nt_rows<4>(n, k, a, lda, w, ldw, c, ldc, ep);
    case 5: return gemv_nt_rows<5>(n, k, a, lda, w, ldw, c, ldc, ep);
    case 6: return gemv_nt_rows<6>(n, k, a, lda, w, ldw, c, ldc, ep);
    case 7: return gemv_nt_rows<7>(n, k, a, lda, w, ldw, c, ldc, ep);
    default: return gemv_nt_rows<8>(n, k, a, lda, w, ldw, c, ldc, ep);
  }
}

void gemv_nt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* w,
             int64_t ldw, float* c, int64_t ldc, const Epilogue& ep) {
  for_row_groups<8, 16>(m, n, k, a, lda, w, ldw, /*col_step=*/ldw, c, ldc, ep, &gemv_nt_group);
}

// M rows of A against V * 16 columns of row-major B: each step of k loads
// V vectors of B's row p and adds A[i][p] times them to M * V accumulators.
template <int M, int V>
void gemv_nn_block(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                   int64_t ldc, int64_t j, __mmask16 last_mask, const Epilogue& ep) {
  __m512 acc[M][V];
  for (int i = 0; i < M; ++i) {
    for (int v = 0; v < V; ++v) acc[i][v] = _mm512_setzero_ps();
  }
  const float* col = b + j;
  for (int64_t p = 0; p < k; ++p) {
    __m512 bv[V];
    for (int v = 0; v < V; ++v) {
      bv[v] = _mm512_maskz_loadu_ps(v == V - 1 ? last_mask : 0xFFFF, col + p * ldb + 16 * v);
    }
    for (int i = 0; i < M; ++i) {
      const __m512 av = _mm512_set1_ps(a[i * lda + p]);
      for (int v = 0; v < V; ++v) acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
    }
  }
  const float* bias = ep.bias != nullptr ? ep.bias + j : nullptr;
  for (int i = 0; i < M; ++i) {
    float* row = c + i * ldc + j;
    for (int v = 0; v < V; ++v) {
      const __mmask16 mask = v == V - 1 ? last_mask : 0xFFFF;
      _mm512_mask_storeu_ps(row + 16 * v, mask,
                            epilogue_vector(acc[i][v], ep, row + 16 * v,
                                            bias ? bias + 16 * v : nullptr, mask));
    }
  }
}

template <int M>
void gemv_nn_rows(int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                  float* c, int64_t ldc, const Epilogue& ep) {
  constexpr int kVectors = M <= 4 ? 4 : 2;
  int64_t j = 0;
  for (; j + 16 * kVectors <= n; j += 16 * kVectors) {
    gemv_nn_block<M, kVectors>(k, a, lda, b, ldb, c, ldc, j, 0xFFFF, ep);
  }
  for (; j < n; j += 16) {
    const int64_t left = n - j;
    gemv_nn_block<M, 1>(k, a, lda, b, ldb, c, ldc, j, left >= 16 ? 0xFFFF : tail_mask(left), ep);
  }
}

void gemv_nn_group(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                   int64_t ldb, float* c, int64_t ldc, const Epilogue& ep) {
  switch (m) {
    case 1: return gemv_nn_rows<1>(n, k, a, lda, b, ldb, c, ldc, ep);
    case 2: return gemv_nn_rows<2>(n, k, a, lda, b, ldb, c, ldc, ep);
    case 3: return gemv_nn_rows<3>(n, k, a, lda, b, ldb, c, ldc, ep);
    case 4: return gemv_nn_rows<4>(n, k, a, lda, b, ldb, c, ldc, ep);
    case 5: return gemv_nn_rows<5>(n, k, a, lda, b, ldb, c, ldc, ep);
    case 6: return gemv_nn_rows<6>(n, k, a, lda, b, ldb, c, ldc, ep);
    case 7: return gemv_nn_rows<7>(n, k, a, lda, b, ldb, c, ldc, ep);
    default: return gemv_nn_rows<8>(n, k, a, lda, b, ldb, c, ldc, ep);
  }
}

void gemv_nn(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
             int64_t ldb, float* c, int64_t ldc, const Epilogue& ep) {
  for_row_groups<8, 64>(m, n, k, a, lda, b, ldb, /*col_step=*/1, c, ldc, ep, &gemv_nn_group);
}

void pack_a(int64_t rows, int64_t depth, const float* a, int64_t rs, int64_t cs, float* out) {
  pack_a_strips<kMr>(rows, depth, a, rs, cs, out);
}

// Transposes the 16 x 16 block in r: afterwards r[c] holds column c.
inline void transpose_16x16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // Within each 128-bit lane L, r[4i + j] then holds column 4L + j of rows
  // 4i .. 4i + 3.
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // Gather lane L of r[j], r[4 + j], r[8 + j], r[12 + j] into column 4L + j.
  for (int j = 0; j < 4; ++j) {
    const __m512 a = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
    const __m512 b = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xDD);
    const __m512 c = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
    const __m512 d = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xDD);
    t[j] = _mm512_shuffle_f32x4(a, c, 0x88);
    t[8 + j] = _mm512_shuffle_f32x4(a, c, 0xDD);
    t[4 + j] = _mm512_shuffle_f32x4(b, d, 0x88);
    t[12 + j] = _mm512_shuffle_f32x4(b, d, 0xDD);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}

// One full panel of a transposed B (column j is row j of w, contiguous):
// 16 x 16 blocks transposed in registers, the depth % 16 tail with masks.
void pack_b_panel_transposed(int64_t depth, const float* w, int64_t ldw, float* out) {
  for (int half = 0; half < kNr / 16; ++half) {
    const float* rows = w + half * 16 * ldw;
    float* dst = out + half * 16;
    for (int64_t p0 = 0; p0 < depth; p0 += 16) {
      const int64_t count = min_of<int64_t>(16, depth - p0);
      const __mmask16 mask = count == 16 ? 0xFFFF : tail_mask(count);
      __m512 r[16];
      for (int q = 0; q < 16; ++q) r[q] = _mm512_maskz_loadu_ps(mask, rows + q * ldw + p0);
      transpose_16x16(r);
      for (int64_t c = 0; c < count; ++c) _mm512_storeu_ps(dst + (p0 + c) * kNr, r[c]);
    }
  }
}

// C^T tile from weight rows read in place: acc[r][v] lane l accumulates
// C[16v + l][r] = sum_p W[r][p] * A^T[p][16v + l], W[r] broadcast from its
// own row, A^T from the packed panel. The epilogue transposes the tile in
// registers (rows padded to 16) and stores `rows` lanes of each row of C.
void micro_nt_12x32(int64_t kc, const float* w, int64_t ldw, int64_t rows, const float* at,
                    int64_t cols, float* c, int64_t ldc, const Epilogue& ep) {
  const float* wr[kMr];
#pragma GCC unroll 12
  for (int r = 0; r < kMr; ++r) wr[r] = w + (r < rows ? r : rows - 1) * ldw;
  __m512 acc[kMr][2];
#pragma GCC unroll 12
  for (int r = 0; r < kMr; ++r) {
    acc[r][0] = _mm512_setzero_ps();
    acc[r][1] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 a0 = _mm512_loadu_ps(at);
    const __m512 a1 = _mm512_loadu_ps(at + 16);
#pragma GCC unroll 12
    for (int r = 0; r < kMr; ++r) {
      const __m512 wv = _mm512_set1_ps(wr[r][p]);
      acc[r][0] = _mm512_fmadd_ps(wv, a0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(wv, a1, acc[r][1]);
    }
    at += kNr;
  }
  const __mmask16 mask = tail_mask(rows);
  const __m512 alpha = _mm512_set1_ps(ep.alpha);
  const __m512 bias = ep.bias != nullptr
                          ? _mm512_mul_ps(_mm512_set1_ps(ep.beta), _mm512_maskz_loadu_ps(mask, ep.bias))
                          : _mm512_setzero_ps();
  for (int v = 0; v < 2; ++v) {
    __m512 t[16];
#pragma GCC unroll 12
    for (int r = 0; r < kMr; ++r) t[r] = acc[r][v];
    for (int r = kMr; r < 16; ++r) t[r] = _mm512_setzero_ps();
    transpose_16x16(t);
    const int64_t count = min_of<int64_t>(16, cols - 16 * v);
    for (int64_t l = 0; l < count; ++l) {
      float* row = c + (16 * v + l) * ldc;
      __m512 x = _mm512_mul_ps(t[l], alpha);
      if (ep.accumulate) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask, row));
      if (ep.bias != nullptr) x = _mm512_add_ps(x, bias);
      _mm512_mask_storeu_ps(row, mask, x);
    }
  }
}

void pack_b(int64_t depth, int64_t cols, const float* b, int64_t rs, int64_t cs, float* out) {
  for (int64_t j0 = 0; j0 < cols; j0 += kNr) {
    const int64_t w = min_of<int64_t>(kNr, cols - j0);
    if (cs == 1) {
      // Row-major B: two (masked) vector copies per row of the panel.
      const __mmask16 lo = w >= 16 ? 0xFFFF : tail_mask(w);
      const __mmask16 hi = w >= 32 ? 0xFFFF : (w > 16 ? tail_mask(w - 16) : 0);
      const float* src = b + j0;
      for (int64_t p = 0; p < depth; ++p) {
        _mm512_storeu_ps(out + p * kNr, _mm512_maskz_loadu_ps(lo, src + p * rs));
        _mm512_storeu_ps(out + p * kNr + 16, _mm512_maskz_loadu_ps(hi, src + p * rs + 16));
      }
    } else if (rs == 1 && w == kNr) {
      pack_b_panel_transposed(depth, b + j0 * cs, cs, out);
    } else {
      pack_b_panels<kNr>(depth, w, b + j0 * cs, rs, cs, out);
    }
    out += depth * kNr;
  }
}

constexpr GemmKernels kKernels = {
    kMr,     kNr,      /*kc=*/256, /*mc=*/144, /*nc=*/1024, &micro_12x32, &pack_a, &pack_b,
    &gemv_nt, &gemv_nn, &micro_nt_12x32,
};

}  // namespace

const GemmKernels* avx512_gemm_kernels() { return &kKernels; }

}  // namespace torchlight::optimized::internal
