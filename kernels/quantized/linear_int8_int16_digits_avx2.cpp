// linear_int8's one-row int16-digit loop and its split
// (linear_int8_int16_digits.h) in 256-bit vectors. Built with -mavx2 -mfma;
// run only where quant_isa() is AVX2 or above. The same digits and floats
// as the portable reference: the integer sums are exact, and the float64
// steps are the same ones.
//
// Per step of 16 weights and column: one vpmovsxbw of the weights, a
// vpmaddwd and a vpaddd per digit (int32 lanes: lane j adds the products of
// elements 2j and 2j + 1). Four columns a step share the two digit vectors.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels/quantized/int8_digit_split_avx2.h"
#include "kernels/quantized/linear_int8_int16_digits.h"

namespace torchlight::quantized {
namespace {

constexpr int kColumns = 4;
constexpr int64_t kStepsPerChunk = kChunkInt16Digits / kStepInt16Digits;  // 48
// Weights stream from memory (stories110m's every linear, the classifiers):
// the four columns of a step are one block of 4 x K bytes read as four
// streams, which the hardware prefetcher follows badly (a scratch loop from
// memory without prefetches: 4 GB/s against 6.7 for the same bytes as one
// stream). So each step of 16 weights (64 bytes of the block) prefetches one
// line of the block this many columns ahead, in address order: one
// ascending stream (against a line of each column 16 ahead, from memory:
// 1.08-1.21x at stories110m's shapes, bench/README.md session 23). A
// prefetch past the end does not fault.
constexpr int64_t kPrefetchColumns = 16;

// 16 values' digits: hi = (Y + 16384) >> 15, lo = Y - 32768 hi, in element
// order (packs interleaves the two inputs by 128-bit lane; the permute
// undoes it; both digits are within int16, so it never saturates).
inline void store_digits(__m256i y0, __m256i y1, int16_t* hi, int16_t* lo) {
  const __m256i half = _mm256_set1_epi32(16384);
  const __m256i h0 = _mm256_srai_epi32(_mm256_add_epi32(y0, half), 15);
  const __m256i h1 = _mm256_srai_epi32(_mm256_add_epi32(y1, half), 15);
  const __m256i h = _mm256_packs_epi32(h0, h1);
  const __m256i l = _mm256_packs_epi32(_mm256_sub_epi32(y0, _mm256_slli_epi32(h0, 15)),
                                       _mm256_sub_epi32(y1, _mm256_slli_epi32(h1, 15)));
  _mm256_store_si256(reinterpret_cast<__m256i*>(hi), _mm256_permute4x64_epi64(h, 0xD8));
  _mm256_store_si256(reinterpret_cast<__m256i*>(lo), _mm256_permute4x64_epi64(l, 0xD8));
}

// acc += v, in acc's register: GCC 14 adds into v's register and moves the
// result back, a vmovdqa per add (bench/llm/avx2_op_throughput.cpp: 0.88-0.98
// against 0.82 ns per 8 weights).
inline void add_in_place(__m256i& acc, __m256i v) { __asm__("vpaddd %1, %0, %0" : "+x"(acc) : "x"(v)); }

// One column's 16 weights against one step's digits.
inline void digit_step(__m128i weights, __m256i hi, __m256i lo, __m256i& acc_hi, __m256i& acc_lo) {
  const __m256i w = _mm256_cvtepi8_epi16(weights);
  add_in_place(acc_hi, _mm256_madd_epi16(w, hi));
  add_in_place(acc_lo, _mm256_madd_epi16(w, lo));
}

inline __m128i load16(const int8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }

// Four columns' lanes: hi_c and lo_c sum column c's products with each
// digit. Named, not an array: GCC kept an array of them on the stack.
struct ColumnLanes {
  __m256i hi0, hi1, hi2, hi3, lo0, lo1, lo2, lo3;
};

// The step of 16 weights at element i, for the four columns.
template <class LoadW>
inline void columns_step(ColumnLanes& a, const int16_t* hi, const int16_t* lo, const int8_t* const* w, int64_t i,
                         LoadW load_w) {
  const __m256i h = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi + i));
  const __m256i l = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo + i));
  digit_step(load_w(w[0] + i), h, l, a.hi0, a.lo0);
  digit_step(load_w(w[1] + i), h, l, a.hi1, a.lo1);
  digit_step(load_w(w[2] + i), h, l, a.hi2, a.lo2);
  digit_step(load_w(w[3] + i), h, l, a.hi3, a.lo3);
}

// The lane sums of four vectors, in int32: element c the sum of x[c]'s 8
// lanes. 128-bit halves, unpacks and adds only: Zen 1 splits a 256-bit
// vperm2i128 into 8 uops and vphaddd into 4.
inline __m128i lane_sums4(__m256i x0, __m256i x1, __m256i x2, __m256i x3) {
  auto halves = [](__m256i v) { return _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)); };
  const __m128i a = halves(x0), b = halves(x1), c = halves(x2), d = halves(x3);
  // [a0 + a2, b0 + b2, a1 + a3, b1 + b3], the same for c and d.
  const __m128i ab = _mm_add_epi32(_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b));
  const __m128i cd = _mm_add_epi32(_mm_unpacklo_epi32(c, d), _mm_unpackhi_epi32(c, d));
  return _mm_add_epi32(_mm_unpacklo_epi64(ab, cd), _mm_unpackhi_epi64(ab, cd));
}

// Steps [s0, s1) of the four columns (s1 - s0 <= kStepsPerChunk), the
// partial last step included where s1 reaches it; their lane sums added to
// *hi and *lo (column c's in element c).
inline void chunk_sums(const RowInt8Int16Digits& row, const int8_t* const* w, int64_t s0, int64_t s1,
                       __m256d* hi_sums, __m256d* lo_sums) {
  const int64_t k = row.k;
  const int64_t full_steps = k / kStepInt16Digits;
  const int64_t s_full = s1 < full_steps ? s1 : full_steps;
  const int16_t* hi = row.digits;
  const int16_t* lo = row.digits + row.plane;
  ColumnLanes a;
  a.hi0 = a.hi1 = a.hi2 = a.hi3 = a.lo0 = a.lo1 = a.lo2 = a.lo3 = _mm256_setzero_si256();
  // Line s of the block kPrefetchColumns columns ahead (w[0] is the block's start).
  const char* ahead = reinterpret_cast<const char*>(w[0] + kPrefetchColumns * k);
  auto prefetch = [&](int64_t step) { _mm_prefetch(ahead + 64 * step, _MM_HINT_T0); };
  int64_t s = s0;
  for (; s + 4 <= s_full; s += 4) {
    const int64_t i = s * kStepInt16Digits;
    prefetch(s);
    prefetch(s + 1);
    prefetch(s + 2);
    prefetch(s + 3);
    columns_step(a, hi, lo, w, i, load16);
    columns_step(a, hi, lo, w, i + kStepInt16Digits, load16);
    columns_step(a, hi, lo, w, i + 2 * kStepInt16Digits, load16);
    columns_step(a, hi, lo, w, i + 3 * kStepInt16Digits, load16);
  }
  for (; s < s_full; ++s) {  // Up to 3 steps: each asks (the classifier at K = 288 missed them).
    prefetch(s);
    columns_step(a, hi, lo, w, s * kStepInt16Digits, load16);
  }
  if (s < s1) {  // The partial last step: weights past K load as 0.
    columns_step(a, hi, lo, w, s * kStepInt16Digits, [&](const int8_t* p) {
      alignas(16) int8_t bytes[kStepInt16Digits] = {};
      std::memcpy(bytes, p, static_cast<size_t>(k - full_steps * kStepInt16Digits));
      return _mm_load_si128(reinterpret_cast<const __m128i*>(bytes));
    });
  }
  // At most 48 pairs a lane, 8 lanes: below 2^31 (the header's bound).
  *hi_sums = _mm256_add_pd(*hi_sums, _mm256_cvtepi32_pd(lane_sums4(a.hi0, a.hi1, a.hi2, a.hi3)));
  *lo_sums = _mm256_add_pd(*lo_sums, _mm256_cvtepi32_pd(lane_sums4(a.lo0, a.lo1, a.lo2, a.lo3)));
}

void columns_int16_digits(const RowInt8Int16Digits& row, int64_t n_begin, int64_t n_end) {
  const int64_t k = row.k;
  const int64_t steps = row.plane / kStepInt16Digits;  // With the partial last one.
  const __m256d digit_scale = _mm256_set1_pd(std::ldexp(1.0, row.exponent - 29));
  for (int64_t n = n_begin; n < n_end; n += kColumns) {
    const int cols = static_cast<int>(n_end - n < kColumns ? n_end - n : kColumns);
    // Columns past n_end repeat the last one (read, never stored).
    const int8_t* w[kColumns];
    for (int c = 0; c < kColumns; ++c) w[c] = row.weight + (n + (c < cols ? c : cols - 1)) * k;
    __m256d total_hi = _mm256_setzero_pd(), total_lo = _mm256_setzero_pd();
    for (int64_t s0 = 0; s0 < steps; s0 += kStepsPerChunk) {
      chunk_sums(row, w, s0, s0 + kStepsPerChunk < steps ? s0 + kStepsPerChunk : steps, &total_hi, &total_lo);
    }
    // 2^(e - 29) (32768 A_hi + A_lo): exact (integers below 2^53, a power of two).
    const __m256d d = _mm256_mul_pd(_mm256_fmadd_pd(total_hi, _mm256_set1_pd(32768.0), total_lo), digit_scale);
    if (cols == kColumns) {  // Scales, bias and out as vectors.
      const __m256d scale = _mm256_cvtps_pd(_mm_loadu_ps(row.scales + n));
      const __m256d bias = row.bias != nullptr ? _mm256_cvtps_pd(_mm_loadu_ps(row.bias + n)) : _mm256_setzero_pd();
      _mm_storeu_ps(row.out + n, _mm256_cvtpd_ps(_mm256_fmadd_pd(d, scale, bias)));
      continue;
    }
    alignas(32) double scale[kColumns], bias[kColumns];
    for (int c = 0; c < kColumns; ++c) {
      const int64_t j = n + (c < cols ? c : cols - 1);
      scale[c] = row.scales[j];
      bias[c] = row.bias != nullptr ? row.bias[j] : 0.0;
    }
    alignas(16) float out[kColumns];
    _mm_store_ps(out, _mm256_cvtpd_ps(_mm256_fmadd_pd(d, _mm256_load_pd(scale), _mm256_load_pd(bias))));
    for (int c = 0; c < cols; ++c) row.out[n + c] = out[c];
  }
}

}  // namespace

bool split_row_int16_digits_avx2(const float* x, int64_t k, int16_t* digits, int32_t* exponent) {
  int32_t e = 0;
  if (!int16_digit_exponent(max_abs_bits_avx2(x, k), &e)) return false;
  *exponent = e;
  const ScaleByPowerOfTwo scale(29 - e);  // In [-99, 178].
  const int64_t plane = int16_digit_plane(k);
  int64_t i = 0;
  for (; i + kStepInt16Digits <= k; i += kStepInt16Digits) {
    const __m256i y0 = _mm256_cvtps_epi32(scale.apply(_mm256_loadu_ps(x + i)));
    const __m256i y1 = _mm256_cvtps_epi32(scale.apply(_mm256_loadu_ps(x + i + 8)));
    store_digits(y0, y1, digits + i, digits + plane + i);
  }
  if (i < k) {  // Masked loads: the padding's values are 0, so are its digits.
    const __m256 v0 = _mm256_castsi256_ps(_mm256_maskload_epi32(reinterpret_cast<const int*>(x + i), tail_mask_avx2(k - i)));
    const __m256 v1 = _mm256_castsi256_ps(
        _mm256_maskload_epi32(reinterpret_cast<const int*>(x + i + 8), tail_mask_avx2(k - i - 8)));
    store_digits(_mm256_cvtps_epi32(scale.apply(v0)), _mm256_cvtps_epi32(scale.apply(v1)), digits + i,
                 digits + plane + i);
  }
  return true;
}

void linear_int8_int16_digits_avx2(const RowInt8Int16Digits& row, int64_t n_begin, int64_t n_end) {
  columns_int16_digits(row, n_begin, n_end);
}

}  // namespace torchlight::quantized
