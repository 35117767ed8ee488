// linear_int8's x86 loops (linear_int8.h), one source built twice with its
// own flags: linear_int8_avx2.cpp (-mavx2 -mfma: 8-float vectors, four per
// 32 weights) and linear_int8_avx512.cpp (-mavx512f/bw/vl: 16-float vectors,
// two per 32, so one sign extension, one convert and one fused
// multiply-add per 16 weights where AVX2 needs two of each).
//
// Element k goes to lane k % 32 in increasing k, with fused multiply-adds,
// and the lanes fold as fold_lanes_int8: the same floats as the generic
// loop. Each weight vector loaded serves every row of a block; decode (one
// row) instead takes several columns a step, each activation vector loaded
// once for all of them, and folds them together.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels/quantized/fold_lanes_x86.h"
#include "kernels/quantized/linear_int8.h"

namespace torchlight::quantized {
namespace {

#if defined(__AVX512F__)
using VecInt8 = __m512;
constexpr int kVecsInt8 = 2;  // Vectors per 32 weights.
// Decode's columns a step: 2 activation vectors and 8 accumulators of 32 registers.
constexpr int kDecodeColumnsInt8 = 4;
inline VecInt8 zero_int8() { return _mm512_setzero_ps(); }
inline VecInt8 load_x_int8(const float* p) { return _mm512_loadu_ps(p); }
inline VecInt8 load_w_int8(const int8_t* w) {  // 16 weights, exact in float.
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w))));
}
inline VecInt8 fma_int8(VecInt8 a, VecInt8 b, VecInt8 c) { return _mm512_fmadd_ps(a, b, c); }
#else
using VecInt8 = __m256;
constexpr int kVecsInt8 = 4;
// 4 activation vectors and 8 accumulators of 16 registers.
constexpr int kDecodeColumnsInt8 = 2;
inline VecInt8 zero_int8() { return _mm256_setzero_ps(); }
inline VecInt8 load_x_int8(const float* p) { return _mm256_loadu_ps(p); }
inline VecInt8 load_w_int8(const int8_t* w) {  // 8 weights, exact in float.
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w))));
}
inline VecInt8 fma_int8(VecInt8 a, VecInt8 b, VecInt8 c) { return _mm256_fmadd_ps(a, b, c); }
#endif

constexpr int kFloatsPerVecInt8 = kLanesInt8 / kVecsInt8;

// The classifier's weights stream from memory: each step asks for the
// column this many ahead (a prefetch past the end does not fault).
constexpr int64_t kPrefetchColumnsInt8 = 16;

inline void prefetch_int8(const int8_t* w) {
  _mm_prefetch(reinterpret_cast<const char*>(w), _MM_HINT_T0);
}

template <int kRows>
void columns_int8(const RowsInt8& rows, int64_t n_begin, int64_t n_end) {
  const int64_t k_main = rows.k - rows.k % kLanesInt8;
  for (int64_t n = n_begin; n < n_end; ++n) {
    const int8_t* w = rows.weight + n * rows.k;
    VecInt8 acc[kRows][kVecsInt8];
    for (int r = 0; r < kRows; ++r) {
      for (int j = 0; j < kVecsInt8; ++j) acc[r][j] = zero_int8();
    }
    for (int64_t k = 0; k < k_main; k += kLanesInt8) {
      prefetch_int8(w + kPrefetchColumnsInt8 * rows.k + k);
      for (int j = 0; j < kVecsInt8; ++j) {
        const VecInt8 wv = load_w_int8(w + k + kFloatsPerVecInt8 * j);
        for (int r = 0; r < kRows; ++r) {
          const VecInt8 xv = load_x_int8(rows.x + r * rows.k + k + kFloatsPerVecInt8 * j);
          acc[r][j] = fma_int8(xv, wv, acc[r][j]);
        }
      }
    }
    const float bias = rows.bias != nullptr ? rows.bias[n] : 0.0f;
    if (k_main == rows.k) {
      // No tail: the fold in registers, sparing the stores and 32 scalar
      // reloads per column, as much as the dot product costs at K of a few hundred.
      for (int r = 0; r < kRows; ++r) {
        rows.out[r * rows.n + n] = std::fma(fold_8_lanes(fold_32_to_8_lanes(acc[r])), rows.scales[n], bias);
      }
      continue;
    }
    for (int r = 0; r < kRows; ++r) {
      alignas(64) float lane[kLanesInt8];
      for (int j = 0; j < kVecsInt8; ++j) {
        std::memcpy(lane + kFloatsPerVecInt8 * j, &acc[r][j], sizeof(VecInt8));
      }
      const float* x = rows.x + r * rows.k;
      for (int64_t k = k_main; k < rows.k; ++k) {
        float& a = lane[k % kLanesInt8];
        a = std::fma(x[k], static_cast<float>(w[k]), a);
      }
      rows.out[r * rows.n + n] = std::fma(fold_lanes_int8(lane), rows.scales[n], bias);
    }
  }
}

// One row, K % 32 == 0: kDecodeColumnsInt8 columns a step.
void decode_columns_int8(const RowsInt8& rows, int64_t n_begin, int64_t n_end) {
  constexpr int kCols = kDecodeColumnsInt8;
  const int64_t k = rows.k;
  int64_t n = n_begin;
  for (; n + kCols <= n_end; n += kCols) {
    const int8_t* w = rows.weight + n * k;
    VecInt8 acc[kCols][kVecsInt8];
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) {
      for (int j = 0; j < kVecsInt8; ++j) acc[c][j] = zero_int8();
    }
    for (int64_t k0 = 0; k0 < k; k0 += kLanesInt8) {
      VecInt8 xv[kVecsInt8];
      for (int j = 0; j < kVecsInt8; ++j) xv[j] = load_x_int8(rows.x + k0 + kFloatsPerVecInt8 * j);
#pragma GCC unroll 4
      for (int c = 0; c < kCols; ++c) {
        prefetch_int8(w + (kPrefetchColumnsInt8 + c) * k + k0);
        for (int j = 0; j < kVecsInt8; ++j) {
          acc[c][j] = fma_int8(xv[j], load_w_int8(w + c * k + k0 + kFloatsPerVecInt8 * j), acc[c][j]);
        }
      }
    }
    if constexpr (kCols == 4) {
      const __m128 sums = fold_8_lanes_x4(fold_32_to_8_lanes(acc[0]), fold_32_to_8_lanes(acc[1]),
                                          fold_32_to_8_lanes(acc[2]), fold_32_to_8_lanes(acc[3]));
      const __m128 bias = rows.bias != nullptr ? _mm_loadu_ps(rows.bias + n) : _mm_setzero_ps();
      // A vector fused multiply-add rounds once, as std::fma.
      _mm_storeu_ps(rows.out + n, _mm_fmadd_ps(sums, _mm_loadu_ps(rows.scales + n), bias));
    } else {
      for (int c = 0; c < kCols; ++c) {
        const float bias = rows.bias != nullptr ? rows.bias[n + c] : 0.0f;
        rows.out[n + c] = std::fma(fold_8_lanes(fold_32_to_8_lanes(acc[c])), rows.scales[n + c], bias);
      }
    }
  }
  if (n < n_end) columns_int8<1>(rows, n, n_end);
}

inline void loop_columns_int8(const RowsInt8& rows, int64_t n_begin, int64_t n_end) {
  switch (rows.rows) {
    case 1:
      if (rows.k % kLanesInt8 == 0) return decode_columns_int8(rows, n_begin, n_end);
      return columns_int8<1>(rows, n_begin, n_end);
    case 2: return columns_int8<2>(rows, n_begin, n_end);
    case 3: return columns_int8<3>(rows, n_begin, n_end);
    default: return columns_int8<4>(rows, n_begin, n_end);
  }
}

}  // namespace
}  // namespace torchlight::quantized
