// linear_int8's one-row VNNI loop (linear_int8_vnni_impl.h), AVX-VNNI build
// (the 256-bit VEX vpdpbusd, e.g. Alder Lake): 32 digits a step, the tail
// through a zeroed copy, the digit split int8_digit_split.h has for AVX-VNNI. Built with -mavx2 -mfma
// -mavxvnni; run only where quant_isa() is AVX-VNNI.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/quantized/int8_digit_split.h"

namespace torchlight::quantized {
namespace {

struct VecInt8Vnni {
  using T = __m256i;
  static constexpr int64_t kBytes = 32;
  static T zero() { return _mm256_setzero_si256(); }
  static T load_u(const uint8_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store_u(uint8_t* p, T v) { _mm256_store_si256(reinterpret_cast<__m256i*>(p), v); }
  static T load_w(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static T load_w_partial(const int8_t* p, int64_t count) {  // count < 32
    alignas(32) int8_t bytes[32] = {};
    std::memcpy(bytes, p, static_cast<size_t>(count));
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(bytes));
  }
  static T ones() { return _mm256_set1_epi8(1); }
  static T flip(T v) { return _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80))); }
  static T dpbusd(T acc, T u, T w) { return _mm256_dpbusd_avx_epi32(acc, u, w); }
  static bool split(const float* x, int64_t rows, int64_t k, const Int8DigitRows& out) {
    return select_split_int8_digits(QuantIsa::kAvxVnni)(x, rows, k, out);
  }
  // out[i]: the lane sum of v[i], by a tree of halving shuffles and adds,
  // whose element i sums input kOrder[i].
  static void lane_sums16(const T* v, int32_t* out) {
    constexpr int kOrder[16] = {0, 4, 2, 6, 8, 12, 10, 14, 1, 5, 3, 7, 9, 13, 11, 15};
    T in[16], t[8], x[4];
    for (int i = 0; i < 16; ++i) in[kOrder[i]] = v[i];
    for (int j = 0; j < 8; ++j) {  // 128-bit halves of in[j] and in[j + 8] added.
      t[j] = _mm256_add_epi32(_mm256_permute2x128_si256(in[j], in[j + 8], 0x20),
                              _mm256_permute2x128_si256(in[j], in[j + 8], 0x31));
    }
    for (int j = 0; j < 4; ++j) {
      x[j] = _mm256_add_epi32(_mm256_unpacklo_epi32(t[j], t[j + 4]), _mm256_unpackhi_epi32(t[j], t[j + 4]));
    }
    for (int j = 0; j < 2; ++j) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(out + 8 * j),
                         _mm256_add_epi32(_mm256_unpacklo_epi64(x[j], x[j + 2]),
                                          _mm256_unpackhi_epi64(x[j], x[j + 2])));
    }
  }
};

}  // namespace
}  // namespace torchlight::quantized

#include "kernels/quantized/linear_int8_vnni_impl.h"

namespace torchlight::quantized {

void linear_int8_vnni_columns_avxvnni(const RowInt8Vnni& row, int64_t n_begin, int64_t n_end) {
  vnni_columns_int8(row, n_begin, n_end);
}

bool split_row_int8_vnni_avxvnni(const float* x, int64_t k, uint8_t* digits, int32_t* exponent) {
  return vnni_split_row_int8(x, k, digits, exponent);
}

}  // namespace torchlight::quantized
