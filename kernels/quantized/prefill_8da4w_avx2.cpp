// AVX2 forms of linear_8da4w's prefill conversions (prefill_8da4w.h); this
// file alone is built with -mavx2 and only runs when the CPU has it.
#include <immintrin.h>

#include "kernels/quantized/prefill_8da4w.h"

namespace torchlight::quantized {
namespace {

// Eight signed bytes to eight floats times `scale`, stored at out.
inline void store_scaled(__m128i bytes, __m256 scale, float* out) {
  _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)), scale));
}

}  // namespace

void dequantize_int4_rows_avx2(const void* weights, int64_t n_begin, int64_t n_end, float* out) {
  const Int4Weights& w = *static_cast<const Int4Weights*>(weights);
  const int64_t groups = w.k / w.group;
  const __m128i low_mask = _mm_set1_epi8(0x0F);
  const __m128i eight = _mm_set1_epi8(8);
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* row = w.packed + n * (w.k / 2);
    float* dst = out + (n - n_begin) * w.k;
    for (int64_t g = 0; g < groups; ++g) {
      const __m256 scale = _mm256_set1_ps(w.scales[n * groups + g]);
      for (int64_t c = g * w.group; c < (g + 1) * w.group; c += 32) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + c / 2));
        const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_mask);
        const __m128i low = _mm_and_si128(bytes, low_mask);
        // High nibble first: elements c .. c + 15, then c + 16 .. c + 31.
        const __m128i first = _mm_sub_epi8(_mm_unpacklo_epi8(high, low), eight);
        const __m128i second = _mm_sub_epi8(_mm_unpackhi_epi8(high, low), eight);
        store_scaled(first, scale, dst + c);
        store_scaled(_mm_srli_si128(first, 8), scale, dst + c + 8);
        store_scaled(second, scale, dst + c + 16);
        store_scaled(_mm_srli_si128(second, 8), scale, dst + c + 24);
      }
    }
  }
}

void quantize_dequantize_token_avx2(const float* x, int64_t k, double scale, int64_t zero_point,
                                    float* out) {
  // quantize_token_int8's steps in four float64 lanes: x * (1 / scale) +
  // zero_point, clamped to [-128, 127] (max/min keep NaN), rounded half to
  // even by adding and taking away 1.5 * 2^52, NaN lanes to 0.
  const double inv = 1.0 / scale;
  const double kRound = 6755399441055744.0;
  const __m256d v_inv = _mm256_set1_pd(inv), v_zp = _mm256_set1_pd(static_cast<double>(zero_point));
  const __m256d v_lo = _mm256_set1_pd(-128.0), v_hi = _mm256_set1_pd(127.0);
  const __m256d v_round = _mm256_set1_pd(kRound);
  const __m128i zp = _mm_set1_epi32(static_cast<int32_t>(zero_point));
  const __m128 scale_f = _mm_set1_ps(static_cast<float>(scale));
  int64_t i = 0;
  for (; i + 4 <= k; i += 4) {
    __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(x + i));
    v = _mm256_add_pd(_mm256_mul_pd(v, v_inv), v_zp);
    v = _mm256_min_pd(v_hi, _mm256_max_pd(v_lo, v));
    v = _mm256_sub_pd(_mm256_add_pd(v, v_round), v_round);
    const __m128i q = _mm256_cvtpd_epi32(_mm256_and_pd(v, _mm256_cmp_pd(v, v, _CMP_ORD_Q)));
    _mm_storeu_ps(out + i, _mm_mul_ps(_mm_cvtepi32_ps(_mm_sub_epi32(q, zp)), scale_f));
  }
  if (i < k) quantize_dequantize_token_generic(x + i, k - i, scale, zero_point, out + i);
}

}  // namespace torchlight::quantized
