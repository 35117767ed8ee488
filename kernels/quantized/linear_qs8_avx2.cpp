// AVX2 loop of linear_qs8 (linear_qs8.h); this file alone is built with
// -mavx2 and only runs when the CPU has it (select_linear_qs8).
//
// 16 values a step: activations and weights sign-extended to int16, the zero
// point subtracted from the activations (|x - zp| <= 255 fits), and
// _mm256_madd_epi16 sums pairs into int32 exactly. (_mm256_maddubs_epi16
// would be faster but saturates its int16 pair sums: 255 * 127 * 2 > 32767.)
// One weight load serves every row of the block.
#include <immintrin.h>

#include "kernels/quantized/linear_qs8.h"

namespace torchlight::quantized {
namespace {

inline __m256i load16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline int32_t horizontal_sum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

template <int kRows>
void columns(const RowsQs8& rows, int64_t n_begin, int64_t n_end) {
  const int64_t k_main = rows.k - rows.k % 16;
  const __m256i zp = _mm256_set1_epi16(static_cast<int16_t>(rows.zero_point));
  for (int64_t n = n_begin; n < n_end; ++n) {
    const int8_t* w = rows.weight + n * rows.k;
    __m256i acc[kRows];
    for (int r = 0; r < kRows; ++r) acc[r] = _mm256_setzero_si256();
    for (int64_t k = 0; k < k_main; k += 16) {
      const __m256i wv = load16(w + k);
      for (int r = 0; r < kRows; ++r) {
        const __m256i xv = _mm256_sub_epi16(load16(rows.x + r * rows.k + k), zp);
        acc[r] = _mm256_add_epi32(acc[r], _mm256_madd_epi16(xv, wv));
      }
    }
    for (int r = 0; r < kRows; ++r) {
      const int8_t* x = rows.x + r * rows.k;
      int32_t sum = horizontal_sum(acc[r]);
      for (int64_t k = k_main; k < rows.k; ++k) sum += (int32_t{x[k]} - rows.zero_point) * w[k];
      rows.out[r * rows.n + n] = finish_qs8(rows, n, sum);
    }
  }
}

}  // namespace

void linear_qs8_columns_avx2(const RowsQs8& rows, int64_t n_begin, int64_t n_end) {
  switch (rows.rows) {
    case 1: return columns<1>(rows, n_begin, n_end);
    case 2: return columns<2>(rows, n_begin, n_end);
    case 3: return columns<3>(rows, n_begin, n_end);
    default: return columns<4>(rows, n_begin, n_end);
  }
}

}  // namespace torchlight::quantized
