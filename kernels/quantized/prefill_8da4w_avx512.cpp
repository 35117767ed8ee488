// AVX-512 forms of linear_8da4w's prefill conversions (prefill_8da4w.h):
// the AVX2 forms' steps in twice the lanes (each value is still one exact
// conversion and one float multiply, so the same floats). This file alone is
// built with -mavx512f and only runs where quant_isa() allows AVX-512.
#include <immintrin.h>

#include "kernels/quantized/prefill_8da4w.h"

namespace torchlight::quantized {

void dequantize_int4_rows_avx512(const void* weights, int64_t n_begin, int64_t n_end, float* out) {
  const Int4Weights& w = *static_cast<const Int4Weights*>(weights);
  const int64_t groups = w.k / w.group;
  const __m128i low_mask = _mm_set1_epi8(0x0F);
  const __m128i eight = _mm_set1_epi8(8);
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* row = w.packed + n * (w.k / 2);
    float* dst = out + (n - n_begin) * w.k;
    for (int64_t g = 0; g < groups; ++g) {
      const __m512 scale = _mm512_set1_ps(w.scales[n * groups + g]);
      for (int64_t c = g * w.group; c < (g + 1) * w.group; c += 32) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + c / 2));
        const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_mask);
        const __m128i low = _mm_and_si128(bytes, low_mask);
        // High nibble first: elements c .. c + 15, then c + 16 .. c + 31.
        const __m128i first = _mm_sub_epi8(_mm_unpacklo_epi8(high, low), eight);
        const __m128i second = _mm_sub_epi8(_mm_unpackhi_epi8(high, low), eight);
        _mm512_storeu_ps(dst + c, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(first)), scale));
        _mm512_storeu_ps(dst + c + 16,
                         _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(second)), scale));
      }
    }
  }
}

void quantize_dequantize_token_avx512(const float* x, int64_t k, double scale, int64_t zero_point,
                                      float* out) {
  // As the AVX2 form, in eight float64 lanes: x * (1 / scale) + zero_point,
  // clamped to [-128, 127] (max/min keep NaN), rounded half to even by
  // adding and taking away 1.5 * 2^52, NaN lanes to 0.
  const double inv = 1.0 / scale;
  const double kRound = 6755399441055744.0;
  const __m512d v_inv = _mm512_set1_pd(inv), v_zp = _mm512_set1_pd(static_cast<double>(zero_point));
  const __m512d v_lo = _mm512_set1_pd(-128.0), v_hi = _mm512_set1_pd(127.0);
  const __m512d v_round = _mm512_set1_pd(kRound);
  const __m256i zp = _mm256_set1_epi32(static_cast<int32_t>(zero_point));
  const __m256 scale_f = _mm256_set1_ps(static_cast<float>(scale));
  int64_t i = 0;
  for (; i + 8 <= k; i += 8) {
    __m512d v = _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
    // Separate multiply and add (no FMA): the same two roundings as the
    // generic loop.
    v = _mm512_add_pd(_mm512_mul_pd(v, v_inv), v_zp);
    v = _mm512_min_pd(v_hi, _mm512_max_pd(v_lo, v));
    v = _mm512_sub_pd(_mm512_add_pd(v, v_round), v_round);
    const __mmask8 ordered = _mm512_cmp_pd_mask(v, v, _CMP_ORD_Q);
    const __m256i q = _mm512_cvtpd_epi32(_mm512_maskz_mov_pd(ordered, v));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(q, zp)), scale_f));
  }
  if (i < k) quantize_dequantize_token_avx2(x + i, k - i, scale, zero_point, out + i);
}

}  // namespace torchlight::quantized
