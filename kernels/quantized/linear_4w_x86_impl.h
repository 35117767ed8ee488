// linear_4w's x86 loop (linear_4w.h), one source built twice with its own
// flags: linear_4w_avx2.cpp (-mavx2 -mfma: 8-float vectors, four per 32
// weights) and linear_4w_avx512.cpp (-mavx512f/bw/vl: 16-float vectors, two
// per 32). Each step unpacks 16 packed bytes into 32 weights in element
// order (high nibble, low nibble, byte by byte), dequantizes them with the
// step's group scale (group % 32 == 0) and multiplies them into every row of
// the block, so lane k % 32 receives element k's product in increasing k and
// the fold is fold_lanes_int8's: the same floats as the generic loop.
#pragma once

#include <immintrin.h>

#include "kernels/quantized/fold_lanes_x86.h"
#include "kernels/quantized/linear_4w.h"
#include "kernels/quantized/linear_int8.h"

namespace torchlight::quantized {
namespace {

// The weight bytes of the column this many ahead are asked for (the
// classifier's weights stream from memory; a prefetch past the end does not
// fault).
constexpr int64_t kPrefetchColumns4w = 16;

// 16 packed bytes into their 32 values (q = nibble - 8) in element order:
// elements 0..15 in *first, 16..31 in *second.
inline void unpack_32_weights(const uint8_t* packed, __m128i* first, __m128i* second) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed));
  const __m128i mask = _mm_set1_epi8(0x0F);
  const __m128i eight = _mm_set1_epi8(8);
  const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), mask);  // Elements 2j.
  const __m128i low = _mm_and_si128(bytes, mask);                      // Elements 2j + 1.
  *first = _mm_sub_epi8(_mm_unpacklo_epi8(high, low), eight);
  *second = _mm_sub_epi8(_mm_unpackhi_epi8(high, low), eight);
}

#if defined(__AVX512F__)
using Vec4w = __m512;
constexpr int kVecs4w = 2;  // Vectors per 32 weights.
inline Vec4w zero_4w() { return _mm512_setzero_ps(); }
inline Vec4w load_4w(const float* p) { return _mm512_loadu_ps(p); }
inline Vec4w fma_4w(Vec4w a, Vec4w b, Vec4w c) { return _mm512_fmadd_ps(a, b, c); }
// A group's 16 possible weights, float(q) * scale for q = -8..7 (the same
// float multiply as the generic loop), looked up by nibble with one vpermps
// per 16 weights instead of a convert and a multiply.
inline Vec4w group_weights_4w(float scale) {
  const __m512 q = _mm512_cvtepi32_ps(
      _mm512_setr_epi32(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7));
  return _mm512_mul_ps(q, _mm512_set1_ps(scale));
}
inline void dequantize_32_weights(const uint8_t* packed, Vec4w table, Vec4w* w) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed));
  const __m128i mask = _mm_set1_epi8(0x0F);
  const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), mask);  // Elements 2j.
  const __m128i low = _mm_and_si128(bytes, mask);                      // Elements 2j + 1.
  w[0] = _mm512_permutexvar_ps(_mm512_cvtepu8_epi32(_mm_unpacklo_epi8(high, low)), table);
  w[1] = _mm512_permutexvar_ps(_mm512_cvtepu8_epi32(_mm_unpackhi_epi8(high, low)), table);
}
#else
using Vec4w = __m256;
constexpr int kVecs4w = 4;
inline Vec4w zero_4w() { return _mm256_setzero_ps(); }
inline Vec4w group_weights_4w(float scale) { return _mm256_set1_ps(scale); }
inline Vec4w load_4w(const float* p) { return _mm256_loadu_ps(p); }
inline Vec4w fma_4w(Vec4w a, Vec4w b, Vec4w c) { return _mm256_fmadd_ps(a, b, c); }
// The AVX2 form: `scale` broadcast, each weight converted and multiplied.
inline void dequantize_32_weights(const uint8_t* packed, Vec4w scale, Vec4w* w) {
  __m128i first, second;
  unpack_32_weights(packed, &first, &second);
  const __m128i halves[4] = {first, _mm_srli_si128(first, 8), second, _mm_srli_si128(second, 8)};
  for (int j = 0; j < 4; ++j) {
    w[j] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(halves[j])), scale);
  }
}
#endif

constexpr int kFloatsPerVec4w = kLanes4w / kVecs4w;

template <int kRows>
void columns_4w(const Rows4w& rows, int64_t n_begin, int64_t n_end) {
  const int64_t k = rows.k;
  const int64_t groups = k / rows.group;
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* packed = rows.weight + n * (k / 2);
    const float* scales = rows.w_scales + n * groups;
    Vec4w acc[kRows][kVecs4w];
    for (int r = 0; r < kRows; ++r) {
      for (int j = 0; j < kVecs4w; ++j) acc[r][j] = zero_4w();
    }
    for (int64_t g = 0; g < groups; ++g) {
      const Vec4w group_weights = group_weights_4w(scales[g]);
      for (int64_t k0 = g * rows.group; k0 < (g + 1) * rows.group; k0 += kLanes4w) {
        _mm_prefetch(reinterpret_cast<const char*>(packed + kPrefetchColumns4w * (k / 2) + k0 / 2),
                     _MM_HINT_T0);
        Vec4w w[kVecs4w];
        dequantize_32_weights(packed + k0 / 2, group_weights, w);
        for (int r = 0; r < kRows; ++r) {
          const float* x = rows.x + r * k + k0;
          for (int j = 0; j < kVecs4w; ++j) {
            acc[r][j] = fma_4w(load_4w(x + kFloatsPerVec4w * j), w[j], acc[r][j]);
          }
        }
      }
    }
    const float bias = rows.bias != nullptr ? rows.bias[n] : 0.0f;
    for (int r = 0; r < kRows; ++r) rows.out[r * rows.n + n] = fold_8_lanes(fold_32_to_8_lanes(acc[r])) + bias;
  }
}

inline void loop_columns_4w(const Rows4w& rows, int64_t n_begin, int64_t n_end) {
  switch (rows.rows) {
    case 1: return columns_4w<1>(rows, n_begin, n_end);
    case 2: return columns_4w<2>(rows, n_begin, n_end);
    case 3: return columns_4w<3>(rows, n_begin, n_end);
    default: return columns_4w<4>(rows, n_begin, n_end);
  }
}

}  // namespace
}  // namespace torchlight::quantized
