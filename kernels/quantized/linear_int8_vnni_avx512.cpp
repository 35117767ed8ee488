// linear_int8's one-row VNNI loop (linear_int8_vnni.h), AVX-512 VNNI build:
// 64 digits a step per digit plane, four columns at a time. Built with
// -mavx512f/bw/vl/dq -mavx512vnni; run only where quant_isa() is AVX-512
// VNNI or above.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/quantized/int8_digit_split.h"
#include "kernels/quantized/linear_int8_vnni.h"

namespace torchlight::quantized {
namespace {

constexpr int kColumns = 4;
constexpr int64_t kStep = 64;
// The classifier streams from memory: each step asks for the column this
// many ahead (a prefetch past the end does not fault).
constexpr int64_t kPrefetchColumns = 16;

// Sixteen vectors' int32 lane sums in one vector, by a tree of halving
// shuffles and adds: lane 4L + m holds the sum of v[kOffset[L] + kSwap[m]].
constexpr int kOffset[4] = {0, 8, 4, 12};
constexpr int kSwap[4] = {0, 2, 1, 3};

inline __m512i lane_sums16(const __m512i* v) {
  __m512i t[8], u[4], x[2];
  for (int j = 0; j < 8; ++j) {  // 256-bit halves of v[j] and v[j + 8] added.
    t[j] = _mm512_add_epi32(_mm512_shuffle_i32x4(v[j], v[j + 8], 0x44),
                            _mm512_shuffle_i32x4(v[j], v[j + 8], 0xEE));
  }
  for (int j = 0; j < 4; ++j) {  // 128-bit quarters.
    u[j] = _mm512_add_epi32(_mm512_shuffle_i32x4(t[j], t[j + 4], 0x88),
                            _mm512_shuffle_i32x4(t[j], t[j + 4], 0xDD));
  }
  for (int j = 0; j < 2; ++j) {
    x[j] = _mm512_add_epi32(_mm512_unpacklo_epi32(u[j], u[j + 2]), _mm512_unpackhi_epi32(u[j], u[j + 2]));
  }
  return _mm512_add_epi32(_mm512_unpacklo_epi64(x[0], x[1]), _mm512_unpackhi_epi64(x[0], x[1]));
}

template <bool kOwnSums>
void columns_vnni(const RowInt8Vnni& row, int64_t n_begin, int64_t n_end) {
  const int64_t k = row.k;
  const int64_t k_main = k - k % kStep;
  const __mmask64 tail_mask = k % kStep == 0 ? 0 : (~uint64_t{0} >> (kStep - k % kStep));
  const __m512i ones = _mm512_set1_epi8(1);
  const __m256d digit_scale = _mm256_set1_pd(std::ldexp(1.0, row.exponent - 16));
  for (int64_t n = n_begin; n < n_end; n += kColumns) {
    const int cols = static_cast<int>(n_end - n < kColumns ? n_end - n : kColumns);
    // Columns past n_end repeat the last one (read, never stored).
    const int8_t* w[kColumns];
    for (int c = 0; c < kColumns; ++c) w[c] = row.weight + (n + (c < cols ? c : cols - 1)) * k;
    __m512i acc[kColumns][3];
    __m512i w_sum[kColumns];
    for (int c = 0; c < kColumns; ++c) {
      for (int p = 0; p < 3; ++p) acc[c][p] = _mm512_setzero_si512();
      w_sum[c] = _mm512_setzero_si512();
    }
    auto step = [&](int64_t k0, auto load_w) {
      const __m512i u0 = _mm512_load_si512(row.u + k0);
      const __m512i u1 = _mm512_load_si512(row.u + row.plane + k0);
      const __m512i u2 = _mm512_load_si512(row.u + 2 * row.plane + k0);
#pragma GCC unroll 4
      for (int c = 0; c < kColumns; ++c) {
        _mm_prefetch(reinterpret_cast<const char*>(w[c] + kPrefetchColumns * k + k0), _MM_HINT_T0);
        const __m512i wv = load_w(w[c] + k0);
        acc[c][0] = _mm512_dpbusd_epi32(acc[c][0], u0, wv);
        acc[c][1] = _mm512_dpbusd_epi32(acc[c][1], u1, wv);
        acc[c][2] = _mm512_dpbusd_epi32(acc[c][2], u2, wv);
        if constexpr (kOwnSums) w_sum[c] = _mm512_dpbusd_epi32(w_sum[c], ones, wv);
      }
    };
    for (int64_t k0 = 0; k0 < k_main; k0 += kStep) {
      step(k0, [](const int8_t* p) { return _mm512_loadu_si512(p); });
    }
    if (tail_mask != 0) {  // The tail's missing weights are zeros.
      step(k_main, [&](const int8_t* p) { return _mm512_maskz_loadu_epi8(tail_mask, p); });
    }
    // Lanes 4p + c: digit p's raw sum of column c (p = 3: the weight sum).
    __m512i v[16];
    for (int c = 0; c < kColumns; ++c) {
      for (int p = 0; p < 3; ++p) v[kOffset[p] + kSwap[c]] = acc[c][p];
      v[kOffset[3] + kSwap[c]] = w_sum[c];
    }
    const __m512i sums = lane_sums16(v);
    const __mmask8 store_mask = static_cast<__mmask8>((1u << cols) - 1);
    const __m128i column_sums = kOwnSums ? _mm512_extracti32x4_epi32(sums, 3)
                                         : _mm_maskz_loadu_epi32(store_mask, row.weight_sums + n);
    // a_p = raw_p - 128 sum_k w (modulo 2^32: the exact int32 sum).
    const __m128i offset = _mm_slli_epi32(column_sums, 7);
    const __m128i a0 = _mm_sub_epi32(_mm512_castsi512_si128(sums), offset);
    const __m128i a1 = _mm_sub_epi32(_mm512_extracti32x4_epi32(sums, 1), offset);
    const __m128i a2 = _mm_sub_epi32(_mm512_extracti32x4_epi32(sums, 2), offset);
    // 65536 a0 + 256 a1 + a2, exact in float64 (below 2^47), times 2^(e - 16) (exact).
    __m256d d = _mm256_mul_pd(_mm256_cvtepi32_pd(a0), _mm256_set1_pd(65536.0));
    d = _mm256_fmadd_pd(_mm256_cvtepi32_pd(a1), _mm256_set1_pd(256.0), d);
    d = _mm256_mul_pd(_mm256_add_pd(d, _mm256_cvtepi32_pd(a2)), digit_scale);
    const __m256d scale = _mm256_cvtps_pd(_mm_maskz_loadu_ps(store_mask, row.scales + n));
    const __m256d bias = row.bias != nullptr
                             ? _mm256_cvtps_pd(_mm_maskz_loadu_ps(store_mask, row.bias + n))
                             : _mm256_setzero_pd();
    _mm_mask_storeu_ps(row.out + n, store_mask, _mm256_cvtpd_ps(_mm256_fmadd_pd(d, scale, bias)));
  }
}

}  // namespace

void linear_int8_vnni_columns_avx512(const RowInt8Vnni& row, int64_t n_begin, int64_t n_end) {
  if (row.weight_sums != nullptr) return columns_vnni<false>(row, n_begin, n_end);
  columns_vnni<true>(row, n_begin, n_end);
}

bool split_row_int8_vnni_avx512(const float* x, int64_t k, uint8_t* digits, int32_t* exponent) {
  const int64_t plane = static_cast<int64_t>(int8_vnni_digit_bytes(k) / 3);
  const Int8DigitRows out{reinterpret_cast<int8_t*>(digits), plane, plane, exponent};
  if (!split_int8_digits_avx512(x, 1, k, out)) return false;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t i = 0; i < 3 * plane; i += kStep) {
    auto* p = reinterpret_cast<__m512i*>(digits + i);
    _mm512_store_si512(p, _mm512_xor_si512(_mm512_load_si512(p), flip));
  }
  return true;
}

}  // namespace torchlight::quantized
