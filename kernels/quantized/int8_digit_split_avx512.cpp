// The digit split (int8_digit_split.h) in 512-bit vectors. Built with
// -mavx512f -mavx512bw -mavx512vl; run only where quant_isa() is AVX-512
// VNNI or above. The same operations per value as the generic loop (max of
// the magnitudes' bits, an exact scalef, the convert's round half to even,
// the bytes of (Y + 0x8080) ^ 0x8080), so the same digits; 64 values a
// step, then 16 at a time with masks for the tail.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/quantized/int8_digit_split.h"

namespace torchlight::quantized {
namespace {

__mmask16 tail_mask(int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xFFFF)
                     : static_cast<__mmask16>(count <= 0 ? 0 : (1u << count) - 1);
}

// The largest |x| of a row, as bits (above 0x7F7FFFFF: inf or NaN).
uint32_t max_abs_bits(const float* row, int64_t k) {
  const __m512i magnitude = _mm512_set1_epi32(0x7FFFFFFF);
  __m512i m0 = _mm512_setzero_si512(), m1 = m0, m2 = m0, m3 = m0;
  int64_t i = 0;
  for (; i + 64 <= k; i += 64) {
    m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_loadu_si512(row + i), magnitude));
    m1 = _mm512_max_epu32(m1, _mm512_and_si512(_mm512_loadu_si512(row + i + 16), magnitude));
    m2 = _mm512_max_epu32(m2, _mm512_and_si512(_mm512_loadu_si512(row + i + 32), magnitude));
    m3 = _mm512_max_epu32(m3, _mm512_and_si512(_mm512_loadu_si512(row + i + 48), magnitude));
  }
  for (; i < k; i += 16) {
    const __m512i v = _mm512_maskz_loadu_epi32(tail_mask(k - i), row + i);
    m0 = _mm512_max_epu32(m0, _mm512_and_si512(v, magnitude));
  }
  return _mm512_reduce_max_epu32(_mm512_max_epu32(_mm512_max_epu32(m0, m1), _mm512_max_epu32(m2, m3)));
}

// W = (Y + 0x8080) ^ 0x8080 of 16 values: its bytes 0, 1, 2 are d2, d1, d0.
__m512i digit_word(__m512 v, __m512 up, __m512i bias) {
  const __m512i y = _mm512_cvt_roundps_epi32(_mm512_scalef_ps(v, up),
                                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm512_xor_si512(_mm512_add_epi32(y, bias), bias);
}

// The digits of 64 values at once: per 128-bit lane, a byte shuffle gathers
// byte 0 of its four words into dword 0, byte 1 into dword 1, byte 2 into
// dword 2; two-source dword permutes and a 128-bit shuffle then put each
// digit's 64 bytes in order (11 shuffles instead of 12 two-uop truncations).
void store_digits64(const __m512i (&w)[4], int8_t* d0, int8_t* d1, int8_t* d2) {
  const __m512i gather = _mm512_broadcast_i32x4(
      _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  __m512i t[4];
  for (int j = 0; j < 4; ++j) t[j] = _mm512_shuffle_epi8(w[j], gather);
  // Low half: dword 0 of each lane of a then b (d2 of 32 values); high
  // half: dword 1 (d1). And dword 2 (d0) in the low half of the other.
  const __m512i low_high = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
  const __m512i third = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 2, 6, 10, 14, 18, 22, 26, 30);
  const __m512i u01 = _mm512_permutex2var_epi32(t[0], low_high, t[1]);
  const __m512i u23 = _mm512_permutex2var_epi32(t[2], low_high, t[3]);
  const __m512i v01 = _mm512_permutex2var_epi32(t[0], third, t[1]);
  const __m512i v23 = _mm512_permutex2var_epi32(t[2], third, t[3]);
  _mm512_storeu_si512(d2, _mm512_shuffle_i64x2(u01, u23, _MM_SHUFFLE(1, 0, 1, 0)));
  _mm512_storeu_si512(d1, _mm512_shuffle_i64x2(u01, u23, _MM_SHUFFLE(3, 2, 3, 2)));
  _mm512_storeu_si512(d0, _mm512_shuffle_i64x2(v01, v23, _MM_SHUFFLE(1, 0, 1, 0)));
}

}  // namespace

bool split_int8_digits_avx512(const float* x, int64_t rows, int64_t k, const Int8DigitRows& out) {
  const __m512i bias = _mm512_set1_epi32(0x8080);
  bool finite = true;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * k;
    int32_t e = 0;
    if (!int8_digit_row_exponent(max_abs_bits(row, k), &e)) {
      finite = false;
      continue;
    }
    out.exponents[r] = e;
    const __m512 up = _mm512_set1_ps(static_cast<float>(16 - e));
    int8_t* d0 = out.digits + r * out.row_bytes;
    int8_t* d1 = d0 + out.plane_bytes;
    int8_t* d2 = d1 + out.plane_bytes;
    int64_t i = 0;
    for (; i + 64 <= k; i += 64) {
      const __m512i w[4] = {digit_word(_mm512_loadu_ps(row + i), up, bias),
                            digit_word(_mm512_loadu_ps(row + i + 16), up, bias),
                            digit_word(_mm512_loadu_ps(row + i + 32), up, bias),
                            digit_word(_mm512_loadu_ps(row + i + 48), up, bias)};
      store_digits64(w, d0 + i, d1 + i, d2 + i);
    }
    if (out.row_bytes % 64 == 0) {
      // The tail as one more step of 64 with its loads masked past K: a
      // zero's digits are zeros, so the step also writes the padding up to
      // the next 64 bytes; whole zero lines then fill the rest of the row.
      if (i < k) {
        const __m512i w[4] = {
            digit_word(_mm512_maskz_loadu_ps(tail_mask(k - i), row + i), up, bias),
            digit_word(_mm512_maskz_loadu_ps(tail_mask(k - i - 16), row + i + 16), up, bias),
            digit_word(_mm512_maskz_loadu_ps(tail_mask(k - i - 32), row + i + 32), up, bias),
            digit_word(_mm512_maskz_loadu_ps(tail_mask(k - i - 48), row + i + 48), up, bias)};
        store_digits64(w, d0 + i, d1 + i, d2 + i);
        i += 64;
      }
      for (; i < out.row_bytes; i += 64) {
        for (int p = 0; p < kInt8Digits; ++p) {
          _mm512_storeu_si512(d0 + p * out.plane_bytes + i, _mm512_setzero_si512());
        }
      }
      continue;
    }
    for (; i < k; i += 16) {
      const __mmask16 mask = tail_mask(k - i);
      const __m512i w = digit_word(_mm512_maskz_loadu_ps(mask, row + i), up, bias);
      // Whole 16-byte stores while the row's padding holds them.
      const __mmask16 store = tail_mask(out.row_bytes - i);
      _mm_mask_storeu_epi8(d2 + i, store, _mm512_cvtepi32_epi8(w));
      _mm_mask_storeu_epi8(d1 + i, store, _mm512_cvtepi32_epi8(_mm512_srli_epi32(w, 8)));
      _mm_mask_storeu_epi8(d0 + i, store, _mm512_cvtepi32_epi8(_mm512_srli_epi32(w, 16)));
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
