// The 16 x 16 dword transpose of 16 AVX-512 vectors, which the AMX
// kernels use to lay weights out as a tile's B operand (rows of dword
// pairs or quads of K across 16 columns): linear_8da4w_amx.cpp,
// linear_int8_amx.cpp. Include only from files built with -mavx512f.
#pragma once

#include <immintrin.h>

namespace torchlight::quantized {

// static: each includer is built with its own -m flags.
// The 16 x 16 dword transpose: out[j] = dword j of every r[c].
static inline void transpose16(__m512i (&r)[16]) {
  __m512i a[16], b[16];
  for (int i = 0; i < 8; ++i) {
    a[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // b[4i + m], 128-bit lane L: rows 4i..4i+3 at dword 4L + m.
  for (int i = 0; i < 4; ++i) {
    b[4 * i] = _mm512_unpacklo_epi64(a[4 * i], a[4 * i + 2]);
    b[4 * i + 1] = _mm512_unpackhi_epi64(a[4 * i], a[4 * i + 2]);
    b[4 * i + 2] = _mm512_unpacklo_epi64(a[4 * i + 1], a[4 * i + 3]);
    b[4 * i + 3] = _mm512_unpackhi_epi64(a[4 * i + 1], a[4 * i + 3]);
  }
  for (int m = 0; m < 4; ++m) {
    const __m512i c01 = _mm512_shuffle_i32x4(b[m], b[4 + m], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i c23 = _mm512_shuffle_i32x4(b[8 + m], b[12 + m], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i d01 = _mm512_shuffle_i32x4(b[m], b[4 + m], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512i d23 = _mm512_shuffle_i32x4(b[8 + m], b[12 + m], _MM_SHUFFLE(3, 2, 3, 2));
    r[m] = _mm512_shuffle_i32x4(c01, c23, _MM_SHUFFLE(2, 0, 2, 0));
    r[4 + m] = _mm512_shuffle_i32x4(c01, c23, _MM_SHUFFLE(3, 1, 3, 1));
    r[8 + m] = _mm512_shuffle_i32x4(d01, d23, _MM_SHUFFLE(2, 0, 2, 0));
    r[12 + m] = _mm512_shuffle_i32x4(d01, d23, _MM_SHUFFLE(3, 1, 3, 1));
  }
}

}  // namespace torchlight::quantized
