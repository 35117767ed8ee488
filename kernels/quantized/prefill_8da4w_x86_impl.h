// linear_8da4w's prefill conversions (prefill_8da4w.h) for x86, one source
// built twice: prefill_8da4w_avx2.cpp (-mavx2: 8 floats, 4 float64 lanes a
// step) and prefill_8da4w_avx512.cpp (-mavx512f: 16 and 8). Each value is
// one exact int-to-float conversion and one float multiply, the quantize
// step the generic loop's two float64 roundings (no FMA contraction in
// either build), so both give the generic loop's floats.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/quantized/prefill_8da4w.h"

namespace torchlight::quantized {
namespace {

#if defined(__AVX512F__)
struct PrefillVec {
  static constexpr int kDoubles = 8;  // float64 lanes of a quantize step.
  using Floats = __m512;
  using Doubles = __m512d;
  static Floats broadcast(float v) { return _mm512_set1_ps(v); }
  // 16 signed bytes to 16 floats times `scale`, stored at out.
  static void store_scaled16(__m128i bytes, Floats scale, float* out) {
    _mm512_storeu_ps(out, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes)), scale));
  }
  static Doubles set1(double v) { return _mm512_set1_pd(v); }
  static Doubles load(const float* x) { return _mm512_cvtps_pd(_mm256_loadu_ps(x)); }
  static Doubles add(Doubles a, Doubles b) { return _mm512_add_pd(a, b); }
  static Doubles sub(Doubles a, Doubles b) { return _mm512_sub_pd(a, b); }
  static Doubles mul(Doubles a, Doubles b) { return _mm512_mul_pd(a, b); }
  static Doubles min(Doubles a, Doubles b) { return _mm512_min_pd(a, b); }
  static Doubles max(Doubles a, Doubles b) { return _mm512_max_pd(a, b); }
  // Integral lanes (NaN lanes 0) minus zero_point, times scale, stored at out.
  static void store_dequantized(Doubles q, int32_t zero_point, float scale, float* out) {
    const __m256i qi = _mm512_cvtpd_epi32(_mm512_maskz_mov_pd(_mm512_cmp_pd_mask(q, q, _CMP_ORD_Q), q));
    _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(qi, _mm256_set1_epi32(zero_point))),
                                        _mm256_set1_ps(scale)));
  }
};
#else
struct PrefillVec {
  static constexpr int kDoubles = 4;
  using Floats = __m256;
  using Doubles = __m256d;
  static Floats broadcast(float v) { return _mm256_set1_ps(v); }
  static void store_scaled16(__m128i bytes, Floats scale, float* out) {
    _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)), scale));
    _mm256_storeu_ps(out + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8))),
                                            scale));
  }
  static Doubles set1(double v) { return _mm256_set1_pd(v); }
  static Doubles load(const float* x) { return _mm256_cvtps_pd(_mm_loadu_ps(x)); }
  static Doubles add(Doubles a, Doubles b) { return _mm256_add_pd(a, b); }
  static Doubles sub(Doubles a, Doubles b) { return _mm256_sub_pd(a, b); }
  static Doubles mul(Doubles a, Doubles b) { return _mm256_mul_pd(a, b); }
  static Doubles min(Doubles a, Doubles b) { return _mm256_min_pd(a, b); }
  static Doubles max(Doubles a, Doubles b) { return _mm256_max_pd(a, b); }
  static void store_dequantized(Doubles q, int32_t zero_point, float scale, float* out) {
    const __m128i qi = _mm256_cvtpd_epi32(_mm256_and_pd(q, _mm256_cmp_pd(q, q, _CMP_ORD_Q)));
    _mm_storeu_ps(out, _mm_mul_ps(_mm_cvtepi32_ps(_mm_sub_epi32(qi, _mm_set1_epi32(zero_point))),
                                  _mm_set1_ps(scale)));
  }
};
#endif

// Needs group % 32 == 0.
inline void dequantize_int4_rows_x86(const void* weights, int64_t n_begin, int64_t n_end, float* out) {
  const Int4Weights& w = *static_cast<const Int4Weights*>(weights);
  const int64_t groups = w.k / w.group;
  const __m128i low_mask = _mm_set1_epi8(0x0F);
  const __m128i eight = _mm_set1_epi8(8);
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* row = w.packed + n * (w.k / 2);
    float* dst = out + (n - n_begin) * w.k;
    for (int64_t g = 0; g < groups; ++g) {
      const PrefillVec::Floats scale = PrefillVec::broadcast(w.scales[n * groups + g]);
      for (int64_t c = g * w.group; c < (g + 1) * w.group; c += 32) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + c / 2));
        const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_mask);
        const __m128i low = _mm_and_si128(bytes, low_mask);
        // High nibble first: elements c .. c + 15, then c + 16 .. c + 31.
        PrefillVec::store_scaled16(_mm_sub_epi8(_mm_unpacklo_epi8(high, low), eight), scale, dst + c);
        PrefillVec::store_scaled16(_mm_sub_epi8(_mm_unpackhi_epi8(high, low), eight), scale, dst + c + 16);
      }
    }
  }
}

// quantize_token_int8's steps in float64 lanes: x * (1 / scale) +
// zero_point, clamped to [-128, 127] (max/min keep NaN), rounded half to
// even by adding and taking away 1.5 * 2^52, NaN lanes to 0; then
// dequantized. Returns how many values it did (a multiple of the lanes).
inline int64_t quantize_dequantize_token_x86(const float* x, int64_t k, double scale,
                                             int64_t zero_point, float* out) {
  using V = PrefillVec;
  const V::Doubles inv = V::set1(1.0 / scale), zp = V::set1(static_cast<double>(zero_point));
  const V::Doubles lo = V::set1(-128.0), hi = V::set1(127.0), round = V::set1(6755399441055744.0);
  int64_t i = 0;
  for (; i + V::kDoubles <= k; i += V::kDoubles) {
    V::Doubles v = V::add(V::mul(V::load(x + i), inv), zp);
    v = V::min(hi, V::max(lo, v));
    v = V::sub(V::add(v, round), round);
    V::store_dequantized(v, static_cast<int32_t>(zero_point), static_cast<float>(scale), out + i);
  }
  return i;
}

}  // namespace
}  // namespace torchlight::quantized
