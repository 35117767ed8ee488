// What the AVX2 digit splits share (int8_digit_split_avx2.cpp: three int8
// digits; linear_int8_int16_digits_avx2.cpp: two int16 digits): a row's
// largest magnitude and the exact power-of-two scaling. Include only from
// files built with -mavx2.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace torchlight::quantized {
namespace {

// Lanes [0, count) of 8 set (count may exceed 8).
inline __m256i tail_mask_avx2(int64_t count) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count < 8 ? count : 8)), lane);
}

// The largest of the row's magnitude bits (|x| as bits orders as |x| does;
// inf and NaN come out above 0x7F7FFFFF).
inline uint32_t max_abs_bits_avx2(const float* row, int64_t k) {
  const __m256i magnitude = _mm256_set1_epi32(0x7FFFFFFF);
  __m256i m0 = _mm256_setzero_si256(), m1 = m0;
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    m0 = _mm256_max_epu32(m0, _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + i)), magnitude));
    m1 = _mm256_max_epu32(m1, _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + i + 8)), magnitude));
  }
  for (; i < k; i += 8) {
    const __m256i v = _mm256_maskload_epi32(reinterpret_cast<const int*>(row + i), tail_mask_avx2(k - i));
    m0 = _mm256_max_epu32(m0, _mm256_and_si256(v, magnitude));
  }
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_max_epu32(m0, m1));
  uint32_t m = 0;
  for (const uint32_t v : lanes) m = v > m ? v : m;
  return m;
}

// 2^p as a float (p in [-126, 127]).
inline float power_of_two_avx2(int32_t p) {
  const uint32_t bits = static_cast<uint32_t>(p + 127) << 23;
  float v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

// x * 2^up as two float multiplies (AVX2 has no scalef), exact wherever the
// product is a normal float: 2^up itself unless up > 127, then 2^127 first
// (any nonzero float times 2^127 is at least 2^-22, and below the product
// the splits make, so it is normal and exact). up in [-126, 254].
struct ScaleByPowerOfTwo {
  __m256 first, second;
  explicit ScaleByPowerOfTwo(int32_t up)
      : first(_mm256_set1_ps(power_of_two_avx2(up > 127 ? 127 : up))),
        second(_mm256_set1_ps(power_of_two_avx2(up > 127 ? up - 127 : 0))) {}
  __m256 apply(__m256 v) const { return _mm256_mul_ps(_mm256_mul_ps(v, first), second); }
};

}  // namespace
}  // namespace torchlight::quantized
