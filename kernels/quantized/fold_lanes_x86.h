// fold_lanes_int8 (linear_int8.h) in x86 registers, for the loops that sum
// element k in float lane k % 32 (linear_int8, linear_4w): 32 lanes to 8,
// (l[i] + l[8 + i]) + (l[16 + i] + l[24 + i]), then those 8 to one, lanes
// i and i + 4, then i and i + 2, then 0 and 1; the same additions in the
// same order as the scalar fold, so every build gives the same floats.
// Included by files built with different -m flags, hence the anonymous
// namespace (no shared inline copy can carry one build's instructions
// into another).
#pragma once

#include <immintrin.h>

namespace torchlight::quantized {
namespace {

inline float fold_8_lanes(__m256 v) {
  const __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

/// fold_8_lanes of four vectors at once: lane c is fold_8_lanes(v_c).
inline __m128 fold_8_lanes_x4(__m256 v0, __m256 v1, __m256 v2, __m256 v3) {
  __m128 h0 = _mm_add_ps(_mm256_castps256_ps128(v0), _mm256_extractf128_ps(v0, 1));
  __m128 h1 = _mm_add_ps(_mm256_castps256_ps128(v1), _mm256_extractf128_ps(v1, 1));
  __m128 h2 = _mm_add_ps(_mm256_castps256_ps128(v2), _mm256_extractf128_ps(v2, 1));
  __m128 h3 = _mm_add_ps(_mm256_castps256_ps128(v3), _mm256_extractf128_ps(v3, 1));
  _MM_TRANSPOSE4_PS(h0, h1, h2, h3);  // h_i: lane i of every vector's h.
  return _mm_add_ps(_mm_add_ps(h0, h2), _mm_add_ps(h1, h3));
}

#if defined(__AVX512F__)
inline __m256 upper_half(__m512 v) {  // AVX-512F only (no DQ).
  return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}
/// Lanes 0..15 in acc[0] and 16..31 in acc[1], to 8.
inline __m256 fold_32_to_8_lanes(const __m512* acc) {
  const __m256 a = _mm256_add_ps(_mm512_castps512_ps256(acc[0]), upper_half(acc[0]));
  const __m256 b = _mm256_add_ps(_mm512_castps512_ps256(acc[1]), upper_half(acc[1]));
  return _mm256_add_ps(a, b);
}
#endif

/// Lanes 8j..8j+7 in acc[j], to 8.
inline __m256 fold_32_to_8_lanes(const __m256* acc) {
  return _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
}

}  // namespace
}  // namespace torchlight::quantized
