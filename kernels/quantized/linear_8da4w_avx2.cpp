// AVX2 loops of linear_8da4w (linear_8da4w.h); this file alone is built with
// -mavx2 and only runs when the CPU has it (select_linear_8da4w).
//
// 32 values at a time: 16 packed bytes unpack to hi/lo nibbles, interleaved
// back into element order and recentred to [-8, 7]. maddubs needs one
// unsigned operand, so the activations enter as u = xq + 128 (xq ^ 0x80):
// sum u*w = sum xq*w + 128 * sum w, and sum w comes from maddubs(1, w).
// Pair sums stay within int16 (2 * 255 * 8). After madd with ones, int32
// lane i holds elements 4i..4i+3 of each 32: the lanes linear_8da4w.h
// names. Per group the correction and the scale are applied lane-wise; the
// lanes are summed once per column.
#include <immintrin.h>

#include "kernels/quantized/linear_8da4w.h"

namespace torchlight::quantized {
namespace {

template <int kRows>
void columns(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  const int64_t groups = row.k / row.group;
  const int64_t packed = row.k / 2;
  const __m128i low_mask = _mm_set1_epi8(0x0F);
  const __m256i eight = _mm256_set1_epi8(8);
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  __m256i offset[kRows];  // 128 + zero point: undoes the flip and subtracts zp * sum w.
  for (int r = 0; r < kRows; ++r) offset[r] = _mm256_set1_epi32(128 + row.zero_point[r]);
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* w = row.weight + n * packed;
    __m256 acc[kRows];
    for (int r = 0; r < kRows; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t g = 0; g < groups; ++g) {
      __m256i dot[kRows];
      for (int r = 0; r < kRows; ++r) dot[r] = _mm256_setzero_si256();
      __m256i wsum = _mm256_setzero_si256();
      for (int64_t k = g * row.group; k < (g + 1) * row.group; k += 32) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + k / 2));
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_mask);
        const __m128i lo = _mm_and_si128(bytes, low_mask);
        const __m256i wv = _mm256_sub_epi8(
            _mm256_set_m128i(_mm_unpackhi_epi8(hi, lo), _mm_unpacklo_epi8(hi, lo)), eight);
        wsum = _mm256_add_epi32(wsum, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, wv), ones16));
        for (int r = 0; r < kRows; ++r) {
          const __m256i xv =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row.xq + r * row.k + k));
          const __m256i u = _mm256_xor_si256(xv, flip);
          dot[r] = _mm256_add_epi32(dot[r], _mm256_madd_epi16(_mm256_maddubs_epi16(u, wv), ones16));
        }
      }
      const float w_scale = row.w_scales[n * groups + g];
      for (int r = 0; r < kRows; ++r) {
        const __m256i exact = _mm256_sub_epi32(dot[r], _mm256_mullo_epi32(wsum, offset[r]));
        const __m256 scale = _mm256_set1_ps(row.scale[r] * w_scale);
        acc[r] = _mm256_add_ps(acc[r], _mm256_mul_ps(_mm256_cvtepi32_ps(exact), scale));
      }
    }
    for (int r = 0; r < kRows; ++r) {
      alignas(32) float lanes[kLanes8da4w];
      _mm256_store_ps(lanes, acc[r]);
      float sum = fold_lanes_8da4w(lanes);
      if (row.bias != nullptr) sum += row.bias[n];
      row.out[r * row.n + n] = sum;
    }
  }
}

}  // namespace

void linear_8da4w_columns_avx2(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  switch (row.rows) {
    case 1: return columns<1>(row, n_begin, n_end);
    case 2: return columns<2>(row, n_begin, n_end);
    case 3: return columns<3>(row, n_begin, n_end);
    default: return columns<4>(row, n_begin, n_end);
  }
}

}  // namespace torchlight::quantized
