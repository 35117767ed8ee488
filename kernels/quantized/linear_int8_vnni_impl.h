// linear_int8's one-row VNNI loop (linear_int8_vnni.h), written once over a
// vector width and compiled by linear_int8_vnni_{avx512,avxvnni}.cpp, each
// built with its own flags and run only on CPUs with them (quant_isa.h).
// Include it only from those files, after defining struct VecInt8Vnni
// (internal linkage) with: T, kBytes, zero(), load_u(p) (aligned digits),
// load_w(p), load_w_partial(p, count) (missing bytes zero), ones(),
// dpbusd(acc, u, w), flip(v) (xor 0x80), lane_sums16(v, out) (out[i] = the
// int32 lane sum of v[kSumOrder[i]]), split (the digit split of this ISA).
//
// Four columns a step: per step of kBytes, the three digit vectors are
// loaded once and each column's weight vector meets them in three vpdpbusd
// (a fourth against ones when the column sums are not given).
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/quantized/int8_digit_split.h"
#include "kernels/quantized/linear_int8_vnni.h"

namespace torchlight::quantized {
namespace {

constexpr int kVnniColumns = 4;
// The classifier streams from memory: each step asks for the column this
// many ahead (a prefetch past the end does not fault). 48 measured the same,
// none 0.75x (BM_int8_decode_vnni, 288 x 32000 and 768 x 32000).
constexpr int64_t kVnniPrefetchColumns = 16;

template <bool kOwnSums>
void columns_vnni(const RowInt8Vnni& row, int64_t n_begin, int64_t n_end) {
  using V = VecInt8Vnni;
  using T = typename V::T;
  const int64_t k = row.k;
  const int64_t k_main = k - k % V::kBytes;
  const T ones = V::ones();
  const double digit_scale = std::ldexp(1.0, row.exponent - 16);
  for (int64_t n = n_begin; n < n_end; n += kVnniColumns) {
    const int cols = static_cast<int>(n_end - n < kVnniColumns ? n_end - n : kVnniColumns);
    // Columns past n_end repeat the last one (read, never stored).
    const int8_t* w[kVnniColumns];
    for (int c = 0; c < kVnniColumns; ++c) w[c] = row.weight + (n + (c < cols ? c : cols - 1)) * k;
    // v[4p + c]: digit p's raw sum of column c (p = 3: the weight sum).
    T v[16];
    for (T& a : v) a = V::zero();
    auto step = [&](int64_t k0, auto load_w) {
      const T u0 = V::load_u(row.u + k0);
      const T u1 = V::load_u(row.u + row.plane + k0);
      const T u2 = V::load_u(row.u + 2 * row.plane + k0);
#pragma GCC unroll 4
      for (int c = 0; c < kVnniColumns; ++c) {
        _mm_prefetch(reinterpret_cast<const char*>(w[c] + kVnniPrefetchColumns * k + k0), _MM_HINT_T0);
        const T wv = load_w(w[c] + k0);
        v[c] = V::dpbusd(v[c], u0, wv);
        v[4 + c] = V::dpbusd(v[4 + c], u1, wv);
        v[8 + c] = V::dpbusd(v[8 + c], u2, wv);
        if constexpr (kOwnSums) v[12 + c] = V::dpbusd(v[12 + c], ones, wv);
      }
    };
    for (int64_t k0 = 0; k0 < k_main; k0 += V::kBytes) step(k0, [](const int8_t* p) { return V::load_w(p); });
    if (k_main < k) {  // The tail's missing weights are zeros.
      step(k_main, [&](const int8_t* p) { return V::load_w_partial(p, k - k_main); });
    }
    alignas(64) int32_t sums[16];
    V::lane_sums16(v, sums);
    alignas(32) int32_t column_sums[kVnniColumns];
    alignas(32) double scale[kVnniColumns], bias[kVnniColumns];
    for (int c = 0; c < kVnniColumns; ++c) {
      const int64_t j = n + (c < cols ? c : cols - 1);
      column_sums[c] = kOwnSums ? sums[12 + c] : row.weight_sums[j];
      scale[c] = row.scales[j];
      bias[c] = row.bias != nullptr ? row.bias[j] : 0.0;
    }
    // a_p = raw_p - 128 sum_k w (modulo 2^32: the exact int32 sum).
    const __m128i offset = _mm_slli_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(column_sums)), 7);
    const __m128i a0 = _mm_sub_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(sums)), offset);
    const __m128i a1 = _mm_sub_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(sums + 4)), offset);
    const __m128i a2 = _mm_sub_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(sums + 8)), offset);
    // 65536 a0 + 256 a1 + a2, exact in float64 (below 2^47), times 2^(e - 16) (exact).
    __m256d d = _mm256_mul_pd(_mm256_cvtepi32_pd(a0), _mm256_set1_pd(65536.0));
    d = _mm256_fmadd_pd(_mm256_cvtepi32_pd(a1), _mm256_set1_pd(256.0), d);
    d = _mm256_mul_pd(_mm256_add_pd(d, _mm256_cvtepi32_pd(a2)), _mm256_set1_pd(digit_scale));
    alignas(16) float out[kVnniColumns];
    _mm_store_ps(out, _mm256_cvtpd_ps(_mm256_fmadd_pd(d, _mm256_load_pd(scale), _mm256_load_pd(bias))));
    for (int c = 0; c < cols; ++c) row.out[n + c] = out[c];
  }
}

inline void vnni_columns_int8(const RowInt8Vnni& row, int64_t n_begin, int64_t n_end) {
  if (row.weight_sums != nullptr) return columns_vnni<false>(row, n_begin, n_end);
  columns_vnni<true>(row, n_begin, n_end);
}

inline bool vnni_split_row_int8(const float* x, int64_t k, uint8_t* digits, int32_t* exponent) {
  using V = VecInt8Vnni;
  const int64_t plane = static_cast<int64_t>(int8_vnni_digit_bytes(k) / 3);
  const Int8DigitRows out{reinterpret_cast<int8_t*>(digits), plane, plane, exponent};
  if (!V::split(x, 1, k, out)) return false;
  for (int64_t i = 0; i < 3 * plane; i += V::kBytes) V::store_u(digits + i, V::flip(V::load_u(digits + i)));
  return true;
}

}  // namespace
}  // namespace torchlight::quantized
