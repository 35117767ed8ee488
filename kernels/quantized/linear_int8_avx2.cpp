// AVX2 + FMA loops of linear_int8 (linear_int8.h); this file alone is built
// with -mavx2 -mfma and only runs when the CPU has both (select_linear_int8).
//
// 32 weights a step: four groups of 8 bytes sign-extended to int32 and
// converted to float (exact), each multiplied into its own accumulator per
// row, so one weight load serves every row of the block. Decode (one row)
// keeps four independent FMA chains in flight.
#include <immintrin.h>

#include <cmath>

#include "kernels/quantized/linear_int8.h"

namespace torchlight::quantized {
namespace {

inline __m256 load_weights8(const int8_t* w) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w));
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
}

// Lanes i and i + 4, then i and i + 2, then 0 and 1 (fold_lanes_int8's
// last steps).
inline float fold(__m256 v) {
  const __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

constexpr int64_t kPrefetchColumns = 16;

template <int kRows>
void columns(const RowsInt8& rows, int64_t n_begin, int64_t n_end) {
  const int64_t k_main = rows.k - rows.k % kLanesInt8;
  for (int64_t n = n_begin; n < n_end; ++n) {
    const int8_t* w = rows.weight + n * rows.k;
    __m256 acc[kRows][4];
    for (int r = 0; r < kRows; ++r) {
      for (int j = 0; j < 4; ++j) acc[r][j] = _mm256_setzero_ps();
    }
    for (int64_t k = 0; k < k_main; k += kLanesInt8) {
      // The classifier's weights stream from memory: ask for the column
      // kPrefetchColumns ahead (a prefetch past the end does not fault).
      _mm_prefetch(reinterpret_cast<const char*>(w + kPrefetchColumns * rows.k + k), _MM_HINT_T0);
      for (int j = 0; j < 4; ++j) {
        const __m256 wv = load_weights8(w + k + 8 * j);
        for (int r = 0; r < kRows; ++r) {
          const __m256 xv = _mm256_loadu_ps(rows.x + r * rows.k + k + 8 * j);
          acc[r][j] = _mm256_fmadd_ps(xv, wv, acc[r][j]);
        }
      }
    }
    const float bias = rows.bias != nullptr ? rows.bias[n] : 0.0f;
    if (k_main == rows.k) {
      // No tail: fold_lanes_int8 in registers (the same additions in the
      // same order), sparing four stores and 32 scalar reloads per column,
      // as much as the dot product itself costs when K is a few hundred.
      for (int r = 0; r < kRows; ++r) {
        const __m256 v = _mm256_add_ps(_mm256_add_ps(acc[r][0], acc[r][1]),
                                       _mm256_add_ps(acc[r][2], acc[r][3]));
        rows.out[r * rows.n + n] = std::fma(fold(v), rows.scales[n], bias);
      }
      continue;
    }
    for (int r = 0; r < kRows; ++r) {
      alignas(32) float lane[kLanesInt8];
      for (int j = 0; j < 4; ++j) _mm256_store_ps(lane + 8 * j, acc[r][j]);
      const float* x = rows.x + r * rows.k;
      for (int64_t k = k_main; k < rows.k; ++k) {
        float& a = lane[k % kLanesInt8];
        a = std::fma(x[k], static_cast<float>(w[k]), a);
      }
      rows.out[r * rows.n + n] = std::fma(fold_lanes_int8(lane), rows.scales[n], bias);
    }
  }
}

}  // namespace

void linear_int8_columns_avx2(const RowsInt8& rows, int64_t n_begin, int64_t n_end) {
  switch (rows.rows) {
    case 1: return columns<1>(rows, n_begin, n_end);
    case 2: return columns<2>(rows, n_begin, n_end);
    case 3: return columns<3>(rows, n_begin, n_end);
    default: return columns<4>(rows, n_begin, n_end);
  }
}

}  // namespace torchlight::quantized
