// linear_int8's one-row VNNI loop (linear_int8_vnni_impl.h), AVX-512 VNNI
// build: 64 digits a step, the tail by a masked load, the digit split in
// AVX-512. Built with -mavx512f/bw/vl/dq -mavx512vnni; run only where
// quant_isa() is AVX-512 VNNI or above.
#include <immintrin.h>

#include <cstdint>

#include "kernels/quantized/int8_digit_split.h"

namespace torchlight::quantized {
namespace {

struct VecInt8Vnni {
  using T = __m512i;
  static constexpr int64_t kBytes = 64;
  static T zero() { return _mm512_setzero_si512(); }
  static T load_u(const uint8_t* p) { return _mm512_load_si512(p); }
  static void store_u(uint8_t* p, T v) { _mm512_store_si512(p, v); }
  static T load_w(const int8_t* p) { return _mm512_loadu_si512(p); }
  static T load_w_partial(const int8_t* p, int64_t count) {  // count < 64
    return _mm512_maskz_loadu_epi8((uint64_t{1} << count) - 1, p);
  }
  static T ones() { return _mm512_set1_epi8(1); }
  static T flip(T v) { return _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80))); }
  static T dpbusd(T acc, T u, T w) { return _mm512_dpbusd_epi32(acc, u, w); }
  static bool split(const float* x, int64_t rows, int64_t k, const Int8DigitRows& out) {
    return split_int8_digits_avx512(x, rows, k, out);
  }
  // out[i]: the lane sum of v[i], by a tree of halving shuffles and adds,
  // whose lane 4L + m sums input kOffset[L] + kSwap[m].
  static void lane_sums16(const T* v, int32_t* out) {
    constexpr int kOffset[4] = {0, 8, 4, 12};
    constexpr int kSwap[4] = {0, 2, 1, 3};
    T in[16], t[8], u[4], x[2];
    for (int i = 0; i < 16; ++i) in[kOffset[i / 4] + kSwap[i % 4]] = v[i];
    for (int j = 0; j < 8; ++j) {  // 256-bit halves of in[j] and in[j + 8] added.
      t[j] = _mm512_add_epi32(_mm512_shuffle_i32x4(in[j], in[j + 8], 0x44),
                              _mm512_shuffle_i32x4(in[j], in[j + 8], 0xEE));
    }
    for (int j = 0; j < 4; ++j) {  // 128-bit quarters.
      u[j] = _mm512_add_epi32(_mm512_shuffle_i32x4(t[j], t[j + 4], 0x88),
                              _mm512_shuffle_i32x4(t[j], t[j + 4], 0xDD));
    }
    for (int j = 0; j < 2; ++j) {
      x[j] = _mm512_add_epi32(_mm512_unpacklo_epi32(u[j], u[j + 2]), _mm512_unpackhi_epi32(u[j], u[j + 2]));
    }
    _mm512_store_si512(out, _mm512_add_epi32(_mm512_unpacklo_epi64(x[0], x[1]),
                                             _mm512_unpackhi_epi64(x[0], x[1])));
  }
};

}  // namespace
}  // namespace torchlight::quantized

#include "kernels/quantized/linear_int8_vnni_impl.h"

namespace torchlight::quantized {

void linear_int8_vnni_columns_avx512(const RowInt8Vnni& row, int64_t n_begin, int64_t n_end) {
  vnni_columns_int8(row, n_begin, n_end);
}

bool split_row_int8_vnni_avx512(const float* x, int64_t k, uint8_t* digits, int32_t* exponent) {
  return vnni_split_row_int8(x, k, digits, exponent);
}

}  // namespace torchlight::quantized
