// AVX2 + FMA gemm kernels. Compiled with -mavx2 -mfma; called only when
// the CPU supports both (gemm.cpp checks).
//
// Micro-tile 6 x 16: 12 ymm accumulators, two B vectors and one broadcast A
// value per step of k (15 of the 16 registers).
#include <immintrin.h>

#include "kernels/optimized/gemm/gemm_kernels_common.h"

namespace torchlight::optimized::internal {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;

inline __m256 epilogue_vector(__m256 acc, const Epilogue& ep, const float* c, const float* bias) {
  __m256 v = _mm256_mul_ps(acc, _mm256_set1_ps(ep.alpha));
  if (ep.accumulate) v = _mm256_add_ps(v, _mm256_loadu_ps(c));
  if (bias != nullptr) v = _mm256_fmadd_ps(_mm256_set1_ps(ep.beta), _mm256_loadu_ps(bias), v);
  return v;
}

inline float horizontal_sum(__m256 v) {
  const __m128 lo = _mm256_castps256_ps128(v);
  const __m128 hi = _mm256_extractf128_ps(v, 1);
  __m128 s = _mm_add_ps(lo, hi);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

void micro_6x16(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                const Epilogue& ep) {
  __m256 acc[kMr][2];
#pragma GCC unroll 6
  for (int r = 0; r < kMr; ++r) {
    acc[r][0] = _mm256_setzero_ps();
    acc[r][1] = _mm256_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_loadu_ps(bp);
    const __m256 b1 = _mm256_loadu_ps(bp + 8);
    _mm_prefetch(reinterpret_cast<const char*>(bp + 8 * kNr), _MM_HINT_T0);
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r) {
      const __m256 av = _mm256_broadcast_ss(ap + r);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
    ap += kMr;
    bp += kNr;
  }
  const float* bias = ep.bias;
#pragma GCC unroll 6
  for (int r = 0; r < kMr; ++r) {
    float* row = c + r * ldc;
    _mm256_storeu_ps(row, epilogue_vector(acc[r][0], ep, row, bias));
    _mm256_storeu_ps(row + 8, epilogue_vector(acc[r][1], ep, row + 8, bias ? bias + 8 : nullptr));
  }
}

// M rows of A against R weight rows: M * R 8-wide partial dot products;
// the k % 8 tail is summed in scalars.
template <int M, int R>
void gemv_nt_block(int64_t k, const float* a, int64_t lda, const float* w, int64_t ldw, float* c,
                   int64_t ldc, int64_t j, const Epilogue& ep) {
  __m256 acc[M][R];
  for (int i = 0; i < M; ++i) {
    for (int r = 0; r < R; ++r) acc[i][r] = _mm256_setzero_ps();
  }
  const float* wr[R];
  for (int r = 0; r < R; ++r) wr[r] = w + (j + r) * ldw;
  int64_t p = 0;
  for (; p + 8 <= k; p += 8) {
    __m256 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = _mm256_loadu_ps(wr[r] + p);
    for (int i = 0; i < M; ++i) {
      const __m256 x = _mm256_loadu_ps(a + i * lda + p);
      for (int r = 0; r < R; ++r) acc[i][r] = _mm256_fmadd_ps(x, wv[r], acc[i][r]);
    }
  }
  for (int i = 0; i < M; ++i) {
    for (int r = 0; r < R; ++r) {
      float sum = horizontal_sum(acc[i][r]);
      for (int64_t q = p; q < k; ++q) sum += a[i * lda + q] * wr[r][q];
      float* out = c + i * ldc + j + r;
      *out = apply_epilogue(sum, ep, out, j + r);
    }
  }
}

template <int M>
void gemv_nt_rows(int64_t n, int64_t k, const float* a, int64_t lda, const float* w, int64_t ldw,
                  float* c, int64_t ldc, const Epilogue& ep) {
  constexpr int kRows = M <= 2 ? 4 : 2;
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

// M rows of A against V * 8 columns of row-major B.
template <int M, int V>
void gemv_nn_block(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                   int64_t ldc, int64_t j, const Epilogue& ep) {
  __m256 acc[M][V];
  for (int i = 0; i < M; ++i) {
    for (int v = 0; v < V; ++v) acc[i][v] = _mm256_setzero_ps();
  }
  const float* col = b + j;
  for (int64_t p = 0; p < k; ++p) {
    __m256 bv[V];
    for (int v = 0; v < V; ++v) bv[v] = _mm256_loadu_ps(col + p * ldb + 8 * v);
    for (int i = 0; i < M; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + i * lda + p);
      for (int v = 0; v < V; ++v) acc[i][v] = _mm256_fmadd_ps(av, bv[v], acc[i][v]);
    }
  }
  const float* bias = ep.bias != nullptr ? ep.bias + j : nullptr;
  for (int i = 0; i < M; ++i) {
    float* row = c + i * ldc + j;
    for (int v = 0; v < V; ++v) {
      _mm256_storeu_ps(row + 8 * v,
                       epilogue_vector(acc[i][v], ep, row + 8 * v, bias ? bias + 8 * v : nullptr));
    }
  }
}

template <int M>
void gemv_nn_rows(int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                  float* c, int64_t ldc, const Epilogue& ep) {
  constexpr int kVectors = M <= 2 ? 4 : 2;
  int64_t j = 0;
  for (; j + 8 * kVectors <= n; j += 8 * kVectors) {
    gemv_nn_block<M, kVectors>(k, a, lda, b, ldb, c, ldc, j, ep);
  }
  for (; j + 8 <= n; j += 8) gemv_nn_block<M, 1>(k, a, lda, b, ldb, c, ldc, j, ep);
  // The last n % 8 columns in scalars.
  for (; j < n; ++j) {
    for (int i = 0; i < M; ++i) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p) sum += a[i * lda + p] * b[p * ldb + j];
      float* out = c + i * ldc + j;
      *out = apply_epilogue(sum, ep, out, j);
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

// Groups of four rows of A (the accumulators fill the 16 registers).
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

// Transposes the 8 x 8 block in r: afterwards r[c] holds column c.
inline void transpose_8x8(__m256 r[8]) {
  __m256 t[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  __m256 s[8];
  for (int i = 0; i < 2; ++i) {
    s[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    s[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    s[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    s[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2f128_ps(s[j], s[4 + j], 0x20);
    r[4 + j] = _mm256_permute2f128_ps(s[j], s[4 + j], 0x31);
  }
}

// One full panel of a transposed B (column j is row j of w, contiguous):
// 8 x 8 blocks transposed in registers, the depth % 8 tail in scalars.
void pack_b_panel_transposed(int64_t depth, const float* w, int64_t ldw, float* out) {
  const int64_t full = depth / 8 * 8;
  for (int half = 0; half < kNr / 8; ++half) {
    const float* rows = w + half * 8 * ldw;
    float* dst = out + half * 8;
    for (int64_t p0 = 0; p0 < full; p0 += 8) {
      __m256 r[8];
      for (int q = 0; q < 8; ++q) r[q] = _mm256_loadu_ps(rows + q * ldw + p0);
      transpose_8x8(r);
      for (int c = 0; c < 8; ++c) _mm256_storeu_ps(dst + (p0 + c) * kNr, r[c]);
    }
    for (int64_t p = full; p < depth; ++p) {
      for (int q = 0; q < 8; ++q) dst[p * kNr + q] = rows[q * ldw + p];
    }
  }
}

// Lanes [0, 6) of a row of C (a full tile's kMr columns) with plain 16- and
// 8-byte moves: AMD's Zen cores run a vmaskmovps store as microcode, and
// one per row of C took ~4% of a 128 x 288 x 288 product (606 -> 583 us,
// one core of an EPYC, best of 300).
static_assert(kMr == 6, "load6 / store6 move a full tile's six columns");
inline __m256 load6(const float* row) {
  const __m128 lo = _mm_loadu_ps(row);
  const __m128 hi = _mm_castsi128_ps(_mm_loadu_si64(row + 4));  // Any alignment.
  return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}
inline void store6(float* row, __m256 x) {
  _mm_storeu_ps(row, _mm256_castps256_ps128(x));
  _mm_storeu_si64(row + 4, _mm_castps_si128(_mm256_extractf128_ps(x, 1)));
}

// C^T tile from weight rows read in place (see the AVX-512 file): acc[r][v]
// lane l accumulates C[8v + l][r]; the epilogue transposes 8 x 8 blocks
// (rows padded to 8) and stores `rows` lanes of each row of C.
void micro_nt_6x16(int64_t kc, const float* w, int64_t ldw, int64_t rows, const float* at,
                   int64_t cols, float* c, int64_t ldc, const Epilogue& ep) {
  const float* wr[kMr];
#pragma GCC unroll 6
  for (int r = 0; r < kMr; ++r) wr[r] = w + (r < rows ? r : rows - 1) * ldw;
  __m256 acc[kMr][2];
#pragma GCC unroll 6
  for (int r = 0; r < kMr; ++r) {
    acc[r][0] = _mm256_setzero_ps();
    acc[r][1] = _mm256_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 a0 = _mm256_loadu_ps(at);
    const __m256 a1 = _mm256_loadu_ps(at + 8);
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r) {
      const __m256 wv = _mm256_broadcast_ss(wr[r] + p);
      acc[r][0] = _mm256_fmadd_ps(wv, a0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(wv, a1, acc[r][1]);
    }
    at += kNr;
  }
  // Lanes [0, rows) of each stored row.
  alignas(32) int32_t lanes[8];
  for (int q = 0; q < 8; ++q) lanes[q] = q < rows ? -1 : 0;
  const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
  const __m256 alpha = _mm256_set1_ps(ep.alpha);
  const __m256 bias = ep.bias != nullptr
                          ? _mm256_mul_ps(_mm256_set1_ps(ep.beta), _mm256_maskload_ps(ep.bias, mask))
                          : _mm256_setzero_ps();
  // Unrolled so every acc index is a constant: with a run-time v, GCC kept
  // acc in memory and stored all 12 accumulators on every step of k.
#pragma GCC unroll 2
  for (int v = 0; v < 2; ++v) {
    __m256 t[8];
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r) t[r] = acc[r][v];
    for (int r = kMr; r < 8; ++r) t[r] = _mm256_setzero_ps();
    transpose_8x8(t);
    const int64_t count = min_of<int64_t>(8, cols - 8 * v);
    const bool full = rows == kMr;
    for (int64_t l = 0; l < count; ++l) {
      float* row = c + (8 * v + l) * ldc;
      __m256 x = _mm256_mul_ps(t[l], alpha);
      if (ep.accumulate) x = _mm256_add_ps(x, full ? load6(row) : _mm256_maskload_ps(row, mask));
      if (ep.bias != nullptr) x = _mm256_add_ps(x, bias);
      if (full) {
        store6(row, x);
      } else {
        _mm256_maskstore_ps(row, mask, x);
      }
    }
  }
}

void pack_b(int64_t depth, int64_t cols, const float* b, int64_t rs, int64_t cs, float* out) {
  for (int64_t j0 = 0; j0 < cols; j0 += kNr) {
    const int64_t w = min_of<int64_t>(kNr, cols - j0);
    if (cs == 1 && w == kNr) {
      // Row-major B: two vector copies per row of the panel.
      const float* src = b + j0;
      for (int64_t p = 0; p < depth; ++p) {
        _mm256_storeu_ps(out + p * kNr, _mm256_loadu_ps(src + p * rs));
        _mm256_storeu_ps(out + p * kNr + 8, _mm256_loadu_ps(src + p * rs + 8));
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
    kMr,      kNr,      /*kc=*/256, /*mc=*/72, /*nc=*/1024, &micro_6x16, &pack_a, &pack_b,
    &gemv_nt, &gemv_nn, &micro_nt_6x16,
};

}  // namespace

const GemmKernels* avx2_gemm_kernels() { return &kKernels; }

}  // namespace torchlight::optimized::internal
