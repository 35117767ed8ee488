// AVX2 loops of linear_8da4w (linear_8da4w.h); this file alone is built with
// -mavx2 and only runs when the CPU has it (select_linear_8da4w).
//
// 32 values at a time: 16 packed bytes unpack to hi/lo nibbles, interleaved
// back into element order and recentred to [-8, 7]. maddubs needs one
// unsigned operand, so the activations enter as u = xq + 128 (xq ^ 0x80):
// sum u*w = sum xq*w + 128 * sum w, and sum w comes from maddubs(1, w).
// Pair sums stay within int16 (2 * 255 * 8).
#include <immintrin.h>

#include "kernels/quantized/linear_8da4w.h"

namespace torchlight::quantized {
namespace {

int32_t hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

}  // namespace

void linear_8da4w_columns_avx2(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  const int64_t groups = row.k / row.group;
  const int64_t packed = row.k / 2;
  const int rows = row.rows;
  const __m128i low_mask = _mm_set1_epi8(0x0F);
  const __m256i eight = _mm256_set1_epi8(8);
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* w = row.weight + n * packed;
    float sum[kRows8da4w];
    for (int r = 0; r < rows; ++r) sum[r] = row.bias != nullptr ? row.bias[n] : 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      __m256i dot[kRows8da4w] = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                                 _mm256_setzero_si256(), _mm256_setzero_si256()};
      __m256i wsum = _mm256_setzero_si256();
      for (int64_t k = g * row.group; k < (g + 1) * row.group; k += 32) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + k / 2));
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_mask);
        const __m128i lo = _mm_and_si128(bytes, low_mask);
        const __m256i wv = _mm256_sub_epi8(
            _mm256_set_m128i(_mm_unpackhi_epi8(hi, lo), _mm_unpacklo_epi8(hi, lo)), eight);
        wsum = _mm256_add_epi32(wsum, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, wv), ones16));
        for (int r = 0; r < rows; ++r) {
          const __m256i xv =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row.xq + r * row.k + k));
          const __m256i u = _mm256_xor_si256(xv, flip);
          dot[r] = _mm256_add_epi32(dot[r], _mm256_madd_epi16(_mm256_maddubs_epi16(u, wv), ones16));
        }
      }
      const int32_t ws = hsum(wsum);
      const float w_scale = row.w_scales[n * groups + g];
      for (int r = 0; r < rows; ++r) {
        const int32_t exact = hsum(dot[r]) - (128 + row.zero_point[r]) * ws;
        sum[r] += (row.scale[r] * w_scale) * static_cast<float>(exact);
      }
    }
    for (int r = 0; r < rows; ++r) row.out[r * row.n + n] = sum[r];
  }
}

}  // namespace torchlight::quantized
