// AVX2 + FMA loops of linear_8da4w (linear_8da4w.h); this file alone is
// built with -mavx2 -mfma and only runs when the CPU has both
// (select_linear_8da4w).
//
// 32 values at a time: 16 packed bytes, broadcast to both halves, give their
// low nibbles (low half) and high nibbles (high half, after a 4-bit shift)
// in the activations' arranged order: u in [0, 15], maddubs's unsigned
// operand, against the signed activations (pair sums within 2 * 15 * 128).
// madd with ones puts positions 4i..4i+3 in int32 lane i; sad_epu8 puts
// sum u of positions 8j..8j+7 in lane 2j: the lanes linear_8da4w.h names.
// Per group the lanes are scaled into float sums (the products per row, sum
// u per column); they are folded and corrected once per column.
// Decode (one row) takes four columns at once, two rows two (independent
// chains for the out-of-order core); more rows take one (the registers are
// full). Four rows by two columns spills and measured slower than four by
// one.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/quantized/linear_8da4w.h"

namespace torchlight::quantized {
namespace {

// fold_lanes_8da4w in registers (same order: i + 4, then i + 2, then 0 + 1),
// sparing a store and eight reloads per column.
inline float fold(__m256 v) {
  const __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

// kGroup32: the group is 32 (one chunk), known here so the chunk loops and
// their zeroed sums fold away.
template <int kRows, int kCols, bool kGroup32>
void columns(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  const int64_t group = kGroup32 ? 32 : row.group;
  const int64_t groups = row.k / group;
  const int64_t packed = row.k / 2;
  const int64_t whole_groups = groups - groups % kLanes8da4w;
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  const __m256i ones16 = _mm256_set1_epi16(1);
  const __m256i zero = _mm256_setzero_si256();
  int64_t n = n_begin;
  for (; n + kCols <= n_end; n += kCols) {
    __m256 acc[kRows][kCols];
    __m256 uacc[kCols];
    for (int c = 0; c < kCols; ++c) {
      uacc[c] = _mm256_setzero_ps();
      for (int r = 0; r < kRows; ++r) acc[r][c] = _mm256_setzero_ps();
    }
    for (int64_t g = 0; g < groups; ++g) {
      __m256i dot[kRows][kCols];
      __m256i usum[kCols];
      for (int c = 0; c < kCols; ++c) {
        usum[c] = zero;
        for (int r = 0; r < kRows; ++r) dot[r][c] = zero;
      }
      // maddubs pair sums are within 2 * 15 * 128 = 3840, so eight chunks
      // (256 values) add up in int16 before one madd widens them.
      for (int64_t k0 = g * group; k0 < (g + 1) * group; k0 += 256) {
        const int64_t k_end = std::min<int64_t>(k0 + 256, (g + 1) * group);
        __m256i pairs[kRows][kCols];
        for (int r = 0; r < kRows; ++r) {
          for (int c = 0; c < kCols; ++c) pairs[r][c] = zero;
        }
        for (int64_t k = k0; k < k_end; k += 32) {
          __m256i u[kCols];
          for (int c = 0; c < kCols; ++c) {
            const __m128i bytes = _mm_loadu_si128(
                reinterpret_cast<const __m128i*>(row.weight + (n + c) * packed + k / 2));
            const __m256i both = _mm256_broadcastsi128_si256(bytes);
            u[c] = _mm256_and_si256(_mm256_blend_epi32(both, _mm256_srli_epi16(both, 4), 0xF0),
                                    low_mask);
            usum[c] = _mm256_add_epi32(usum[c], _mm256_sad_epu8(u[c], zero));
          }
          for (int r = 0; r < kRows; ++r) {
            const __m256i x =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row.xq + r * row.k + k));
            for (int c = 0; c < kCols; ++c) {
              pairs[r][c] = _mm256_add_epi16(pairs[r][c], _mm256_maddubs_epi16(u[c], x));
            }
          }
        }
        for (int r = 0; r < kRows; ++r) {
          for (int c = 0; c < kCols; ++c) {
            dot[r][c] = _mm256_add_epi32(dot[r][c], _mm256_madd_epi16(pairs[r][c], ones16));
          }
        }
      }
      for (int c = 0; c < kCols; ++c) {
        const __m256 w_scale = _mm256_set1_ps(row.w_scales[(n + c) * groups + g]);
        uacc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(usum[c]), w_scale, uacc[c]);
        for (int r = 0; r < kRows; ++r) {
          acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[r][c]), w_scale, acc[r][c]);
        }
      }
    }
    for (int c = 0; c < kCols; ++c) {
      const float u_folded = fold(uacc[c]);
      const float* w_scales = row.w_scales + (n + c) * groups;
      const float bias = row.bias != nullptr ? row.bias[n + c] : 0.0f;
      for (int r = 0; r < kRows; ++r) {
        const float* correction = row.correction + r * groups;
        __m256 corr = _mm256_setzero_ps();
        for (int64_t g = 0; g < whole_groups; g += kLanes8da4w) {
          corr = _mm256_fmadd_ps(_mm256_loadu_ps(w_scales + g), _mm256_loadu_ps(correction + g),
                                 corr);
        }
        float corrections;
        if (whole_groups == groups) {
          corrections = fold(corr);
        } else {
          alignas(32) float lanes[kLanes8da4w];
          _mm256_store_ps(lanes, corr);
          corrections = fold_corrections_8da4w(lanes, w_scales, correction, whole_groups, groups);
        }
        const float sum = finish_column_8da4w(fold(acc[r][c]), u_folded, corrections,
                                              row.zero_point[r]);
        row.out[r * row.n + n + c] = std::fma(sum, row.scale[r], bias);
      }
    }
  }
  if constexpr (kCols > 1) {
    if (n < n_end) columns<kRows, 1, kGroup32>(row, n, n_end);
  }
}

// Decode with group 32, the common case: one chunk per group, so the int16
// pair sums and int32 group sums of columns<> are single values and the
// loop body is straight-line (the general form kept them in arrays across
// the chunk loop, and GCC spilled them to the stack on every step). The
// same integer sums and the same float steps in the same order as
// columns<1, 4, true>, so the same floats.
void columns_decode_g32(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  constexpr int kCols = 4;
  const int64_t groups = row.k / 32;
  const int64_t packed = row.k / 2;
  const int64_t whole_groups = groups - groups % kLanes8da4w;
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  const __m256i ones16 = _mm256_set1_epi16(1);
  const __m256i zero = _mm256_setzero_si256();
  const float* correction = row.correction;
  int64_t n = n_begin;
  for (; n + kCols <= n_end; n += kCols) {
    __m256 acc[kCols];
    __m256 uacc[kCols];
    const uint8_t* w[kCols];
    const float* w_scales[kCols];
    for (int c = 0; c < kCols; ++c) {
      acc[c] = _mm256_setzero_ps();
      uacc[c] = _mm256_setzero_ps();
      w[c] = row.weight + (n + c) * packed;
      w_scales[c] = row.w_scales + (n + c) * groups;
    }
    for (int64_t g = 0; g < groups; ++g) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row.xq + g * 32));
      for (int c = 0; c < kCols; ++c) {
        const __m256i both =
            _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[c] + g * 16)));
        const __m256i u =
            _mm256_and_si256(_mm256_blend_epi32(both, _mm256_srli_epi16(both, 4), 0xF0), low_mask);
        const __m256i dot = _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), ones16);
        const __m256 w_scale = _mm256_set1_ps(w_scales[c][g]);
        uacc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sad_epu8(u, zero)), w_scale, uacc[c]);
        acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), w_scale, acc[c]);
      }
    }
    for (int c = 0; c < kCols; ++c) {
      __m256 corr = _mm256_setzero_ps();
      for (int64_t g = 0; g < whole_groups; g += kLanes8da4w) {
        corr = _mm256_fmadd_ps(_mm256_loadu_ps(w_scales[c] + g), _mm256_loadu_ps(correction + g),
                               corr);
      }
      float corrections;
      if (whole_groups == groups) {
        corrections = fold(corr);
      } else {
        alignas(32) float lanes[kLanes8da4w];
        _mm256_store_ps(lanes, corr);
        corrections = fold_corrections_8da4w(lanes, w_scales[c], correction, whole_groups, groups);
      }
      const float bias = row.bias != nullptr ? row.bias[n + c] : 0.0f;
      const float sum =
          finish_column_8da4w(fold(acc[c]), fold(uacc[c]), corrections, row.zero_point[0]);
      row.out[n + c] = std::fma(sum, row.scale[0], bias);
    }
  }
  if (n < n_end) columns<1, 1, true>(row, n, n_end);
}

template <bool kGroup32>
void columns_for_rows(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  switch (row.rows) {
    case 1:
      if constexpr (kGroup32) return columns_decode_g32(row, n_begin, n_end);
      return columns<1, 4, kGroup32>(row, n_begin, n_end);
    case 2: return columns<2, 2, kGroup32>(row, n_begin, n_end);
    case 3: return columns<3, 1, kGroup32>(row, n_begin, n_end);
    default: return columns<4, 1, kGroup32>(row, n_begin, n_end);
  }
}

}  // namespace

void linear_8da4w_columns_avx2(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  if (row.group == 32) return columns_for_rows<true>(row, n_begin, n_end);
  columns_for_rows<false>(row, n_begin, n_end);
}

}  // namespace torchlight::quantized
