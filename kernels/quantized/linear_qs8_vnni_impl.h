// The VNNI loops of linear_qs8 (linear_qs8.h), written once over a vector
// width and compiled by linear_qs8_{avxvnni,avx512vnni}.cpp, each built with
// its own flags and run only on CPUs with them (quant_isa.h). Include it only
// from those files, after defining struct VecQs8 (internal linkage).
//
// vpdpbusd multiplies unsigned by signed bytes, and both operands here are
// signed, so the activations go in as u = x + 128 (x xor 0x80 as a byte):
//   sum_k (x - zp) w = sum_k u w - (128 + zp) sum_k w.
// vpdpbusd adds four u w products (each within 255 * 128) to an int32 lane
// with no intermediate rounding or saturation; sum_k w comes from
// RowsQs8::weight_sums (prepare, for constant weights) or from one more
// vpdpbusd of 0x01 bytes by the weight per vector, shared by the rows. Both
// terms are below 2^31 for K <= kMaxKQs8 and their difference is the exact
// int32 sum (computed modulo 2^32), so these loops give the generic loop's
// floats. The last K % width values are read with a partial load whose
// missing bytes are zero (their products vanish).
//
// VecQs8 provides: T, kBytes, zero(), load(p), load_partial(p, count),
// ones() (0x01 bytes), flip(v) (xor 0x80), dpbusd(acc, u, w), half_sum(v)
// (the int32 lanes folded to one 256-bit vector).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/quantized/linear_qs8.h"

namespace torchlight::quantized {
namespace {

inline int32_t lane_sum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

template <int kRows, bool kOwnSums>
void vnni_columns(const RowsQs8& rows, int64_t n_begin, int64_t n_end) {
  using V = VecQs8;
  using T = typename V::T;
  const int64_t k_main = rows.k - rows.k % V::kBytes;
  const int64_t k_tail = rows.k - k_main;
  const T ones = V::ones();
  const uint32_t offset = static_cast<uint32_t>(128 + rows.zero_point);  // 0..255
  for (int64_t n = n_begin; n < n_end; ++n) {
    const int8_t* w = rows.weight + n * rows.k;
    T acc[kRows];
    for (int r = 0; r < kRows; ++r) acc[r] = V::zero();
    T w_sum = V::zero();
    auto step = [&](T wv, auto load_x) {
      if constexpr (kOwnSums) w_sum = V::dpbusd(w_sum, ones, wv);
      for (int r = 0; r < kRows; ++r) acc[r] = V::dpbusd(acc[r], V::flip(load_x(r)), wv);
    };
    for (int64_t k = 0; k < k_main; k += V::kBytes) {
      step(V::load(w + k), [&](int r) { return V::load(rows.x + r * rows.k + k); });
    }
    if (k_tail != 0) {
      step(V::load_partial(w + k_main, k_tail),
           [&](int r) { return V::load_partial(rows.x + r * rows.k + k_main, k_tail); });
    }
    const uint32_t column_sum =
        kOwnSums ? static_cast<uint32_t>(lane_sum(V::half_sum(w_sum))) : static_cast<uint32_t>(rows.weight_sums[n]);
    for (int r = 0; r < kRows; ++r) {
      const uint32_t sum = static_cast<uint32_t>(lane_sum(V::half_sum(acc[r]))) - offset * column_sum;
      rows.out[r * rows.n + n] = finish_qs8(rows, n, static_cast<int32_t>(sum));
    }
  }
}

template <bool kOwnSums>
void vnni_columns_for_rows(const RowsQs8& rows, int64_t n_begin, int64_t n_end) {
  switch (rows.rows) {
    case 1: return vnni_columns<1, kOwnSums>(rows, n_begin, n_end);
    case 2: return vnni_columns<2, kOwnSums>(rows, n_begin, n_end);
    case 3: return vnni_columns<3, kOwnSums>(rows, n_begin, n_end);
    default: return vnni_columns<4, kOwnSums>(rows, n_begin, n_end);
  }
}

inline void vnni_linear_qs8(const RowsQs8& rows, int64_t n_begin, int64_t n_end) {
  if (rows.weight_sums != nullptr) return vnni_columns_for_rows<false>(rows, n_begin, n_end);
  vnni_columns_for_rows<true>(rows, n_begin, n_end);
}

}  // namespace
}  // namespace torchlight::quantized
