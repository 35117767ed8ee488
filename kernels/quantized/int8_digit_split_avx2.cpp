// The digit split (int8_digit_split.h) in 256-bit vectors, for AVX2 and
// AVX-VNNI machines. Built with -mavx2; run only where quant_isa() is AVX2
// or above. The same digits as the generic loop: the max of the
// magnitudes' bits, x * 2^(16 - e) as one or two exact float multiplies
// (AVX2 has no scalef; 2^(16 - e) is a normal float unless e < -111, then
// 2^127 first: a product below 2^-126 rounds once, as scalef's does, and
// rounds to the integer 0 either way), the convert's round half to even
// (the default rounding mode), the bytes of (Y + 0x8080) ^ 0x8080.
#include <immintrin.h>

#include <cstring>

#include "kernels/quantized/int8_digit_split.h"
#include "kernels/quantized/int8_digit_split_avx2.h"

namespace torchlight::quantized {

bool split_int8_digits_avx2(const float* x, int64_t rows, int64_t k, const Int8DigitRows& out) {
  const __m256i bias = _mm256_set1_epi32(0x8080);
  // Per 128-bit lane: byte 0 of its four words to dword 0, byte 1 to dword
  // 1, byte 2 to dword 2; then d2 of 8 values in bytes 0-7, d1 in 8-15, d0
  // in 16-23.
  const __m256i gather = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                          0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  bool finite = true;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * k;
    int32_t e = 0;
    if (!int8_digit_row_exponent(max_abs_bits_avx2(row, k), &e)) {
      finite = false;
      continue;
    }
    const ScaleByPowerOfTwo scale(16 - e);  // 16 - e in [-106, 171].
    out.exponents[r] = e;
    int8_t* d0 = out.digits + r * out.row_bytes;
    int8_t* d1 = d0 + out.plane_bytes;
    int8_t* d2 = d1 + out.plane_bytes;
    int64_t i = 0;
    for (; i < k; i += 8) {
      const __m256 v = _mm256_castsi256_ps(
          _mm256_maskload_epi32(reinterpret_cast<const int*>(row + i), tail_mask_avx2(k - i)));
      const __m256i y = _mm256_cvtps_epi32(scale.apply(v));
      const __m256i w = _mm256_xor_si256(_mm256_add_epi32(y, bias), bias);
      const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(w, gather), order);
      const __m128i low = _mm256_castsi256_si128(bytes);  // d2, then d1.
      const __m128i high = _mm256_extracti128_si256(bytes, 1);  // d0.
      if (out.row_bytes - i >= 8) {  // Whole 8-byte stores while the row's padding holds them.
        _mm_storel_epi64(reinterpret_cast<__m128i*>(d2 + i), low);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(d1 + i), _mm_unpackhi_epi64(low, low));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(d0 + i), high);
      } else {
        alignas(32) int8_t digits[32];
        _mm256_store_si256(reinterpret_cast<__m256i*>(digits), bytes);
        const size_t count = static_cast<size_t>(out.row_bytes - i);
        std::memcpy(d2 + i, digits, count);
        std::memcpy(d1 + i, digits + 8, count);
        std::memcpy(d0 + i, digits + 16, count);
      }
    }
    if (i < out.row_bytes) {
      for (int p = 0; p < kInt8Digits; ++p) {
        std::memset(d0 + p * out.plane_bytes + i, 0, static_cast<size_t>(out.row_bytes - i));
      }
    }
  }
  return finite;
}

}  // namespace torchlight::quantized
