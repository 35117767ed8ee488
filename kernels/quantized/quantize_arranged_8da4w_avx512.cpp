// quantize_arranged_8da4w and row_range_f32 with AVX-512 F/BW/VL
// (quantize_arranged_8da4w.h). Calls no (external) inline function of the
// headers (per_token_qparams.h): their one shared copy must not carry these
// flags.
// Built with -ffp-contract=off: x * (1 / scale) + zero_point rounds twice,
// as quantize_token_int8's scalar and SSE2 steps do.
#include <immintrin.h>

#include "kernels/quantized/linear_8da4w.h"
#include "kernels/quantized/quantize_arranged_8da4w.h"

namespace torchlight::quantized {

RowRange row_range_f32_avx512(const float* x, int64_t n) {
  // row_range's steps sixteen lanes at a time, four independent
  // accumulators, the tail masked: min_ps(v, m) is v < m ? v : m (NaN lanes
  // keep m; NaN is tracked apart), and the order of a minimum does not
  // matter. Also the 8da4w AMX prefill's scan (linear_8da4w_amx.cpp).
  const __m512 first = _mm512_set1_ps(x[0]);
  __m512 lo[4] = {first, first, first, first}, hi[4] = {first, first, first, first};
  __mmask16 nan = 0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (int j = 0; j < 4; ++j) {
      const __m512 v = _mm512_loadu_ps(x + i + 16 * j);
      lo[j] = _mm512_min_ps(v, lo[j]);
      hi[j] = _mm512_max_ps(v, hi[j]);
      nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
  }
  for (; i < n; i += 16) {
    const __mmask16 mask = n - i >= 16 ? static_cast<__mmask16>(0xFFFF)
                                       : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(mask, x + i);
    lo[0] = _mm512_mask_min_ps(lo[0], mask, v, lo[0]);
    hi[0] = _mm512_mask_max_ps(hi[0], mask, v, hi[0]);
    nan |= _mm512_mask_cmp_ps_mask(mask, v, v, _CMP_UNORD_Q);
  }
  const __m512 low = _mm512_min_ps(_mm512_min_ps(lo[0], lo[1]), _mm512_min_ps(lo[2], lo[3]));
  const __m512 high = _mm512_max_ps(_mm512_max_ps(hi[0], hi[1]), _mm512_max_ps(hi[2], hi[3]));
  return {_mm512_reduce_min_ps(low), _mm512_reduce_max_ps(high), nan != 0};
}

void quantize_arranged_8da4w_avx512(const float* x, int64_t k, int64_t group, double scale,
                                    int32_t zero_point, int8_t* arranged, float* correction) {
  // quantize_token_int8's float64 steps: clamped (max and min keep NaN),
  // rounded half to even by adding and taking away 1.5 * 2^52, NaN to 0.
  const __m512d inv = _mm512_set1_pd(1.0 / scale);
  const __m512d zp = _mm512_set1_pd(static_cast<double>(zero_point));
  const __m512d lo = _mm512_set1_pd(-128.0), hi = _mm512_set1_pd(127.0);
  const __m512d round = _mm512_set1_pd(6755399441055744.0);
  auto eight = [&](const float* v8) {
    __m512d v = _mm512_add_pd(_mm512_mul_pd(_mm512_cvtps_pd(_mm256_loadu_ps(v8)), inv), zp);
    v = _mm512_min_pd(hi, _mm512_max_pd(lo, v));
    v = _mm512_sub_pd(_mm512_add_pd(v, round), round);
    return _mm512_cvtpd_epi32(_mm512_maskz_mov_pd(_mm512_cmp_pd_mask(v, v, _CMP_ORD_Q), v));
  };
  auto sixteen = [&](const float* v16) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(eight(v16)), eight(v16 + 8), 1);
  };
  // Arranged order of a chunk of 32 (arranged_element_8da4w): positions
  // 0..15 take elements 1, 3, .., 31, positions 16..31 elements 0, 2, .., 30.
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  for (int64_t g0 = 0; g0 < k; g0 += group) {
    __m512i sum = _mm512_setzero_si512();
    for (int64_t c0 = g0; c0 < g0 + group; c0 += 32) {
      const __m512i q0 = sixteen(x + c0), q1 = sixteen(x + c0 + 16);
      // In [-128, 127]: the truncating narrowing is exact.
      _mm_storeu_si128(reinterpret_cast<__m128i*>(arranged + c0),
                       _mm512_cvtepi32_epi8(_mm512_permutex2var_epi32(q0, odd, q1)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(arranged + c0 + 16),
                       _mm512_cvtepi32_epi8(_mm512_permutex2var_epi32(q0, even, q1)));
      sum = _mm512_add_epi32(sum, _mm512_add_epi32(q0, q1));
    }
    correction[g0 / group] = correction_8da4w(_mm512_reduce_add_epi32(sum), zero_point, group);
  }
}

}  // namespace torchlight::quantized
