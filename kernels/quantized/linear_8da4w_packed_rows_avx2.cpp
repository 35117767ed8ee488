// linear_8da4w_packed.h's many-row loop, AVX2 + FMA (built with -mavx2 -mfma,
// run only on CPUs with both, quant_isa.h): prefill on the packed copy, so
// the original weight is never read after prepare packed it.
//
// The decode loop's steps (linear_8da4w_packed_avx2.cpp) with the weights
// reused across rows: per block of 16 columns, per half (8 columns, one
// 256-bit vector a word) and per register block of up to kRowBlock rows, each
// word is loaded and split into low and high nibbles once, then meets every
// row of the block (two broadcasts, two maddubs, two int16 adds a row). The
// decode loop is bound by loading and unpacking the weights; here that cost
// is shared by four rows and the multiplies remain. The block's weights
// (K / 8 lines of 64 bytes: 12 KB at K = 768 ... 16 KB at 2048) stay in L1
// while every row passes over them, so each weight byte comes from memory
// once per call. Per row and group the same convert, subtract and fused
// multiply-add as decode, in the same order: every row gets decode's floats
// bit for bit (linear_8da4w_packed_reference, tested).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/quantized/linear_8da4w_packed.h"

namespace torchlight::quantized {
namespace {

inline __m256i broadcast_word(const int8_t* x) {
  int32_t word;
  std::memcpy(&word, x, 4);
  return _mm256_set1_epi32(word);
}

// Four rows: their pair sums, products and (groups of 64 or more) dot sums
// with the nibbles and a broadcast fill thirteen to sixteen registers.
constexpr int kRowBlock = 4;
constexpr int64_t kPrefetchBytes = 4096;

// Rows r0..r0 + kRows - 1, columns 8h..8h + 7 of block b: each row's
// fma(-zp, u_folded, products) for its eight columns.
template <int kRows, bool kOneChunk>
inline void half_sums(const Packed8da4w& p, const PackedRows8da4w& rows, int64_t b, int h, int64_t r0,
                      __m256 (&sums)[kRowBlock]) {
  const int64_t k = p.k;
  const int64_t groups = k / p.group;
  const int64_t chunks_per_group = kOneChunk ? 1 : p.group / 32;
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  const __m256i ones = _mm256_set1_epi16(1);
  const uint8_t* w = p.weight + b * (k / 8) * 4 * kPackedColumns8da4w + 32 * h;
  const float* s = p.scales + b * groups * kPackedColumns8da4w + 8 * h;
  const int8_t* x[kRowBlock];
  const float* correction[kRowBlock];
  for (int r = 0; r < kRows; ++r) {
    x[r] = rows.xq + (r0 + r) * k;
    correction[r] = rows.correction + (r0 + r) * groups;
  }
  __m256 products[kRowBlock];
  for (int r = 0; r < kRows; ++r) products[r] = _mm256_setzero_ps();
  for (int64_t g = 0; g < groups; ++g) {
    __m256i dot[kRowBlock];
    for (int r = 0; r < kRows; ++r) dot[r] = _mm256_setzero_si256();
    for (int64_t c = g * chunks_per_group; c < (g + 1) * chunks_per_group; ++c) {
      __m256i pairs[kRowBlock];
      for (int r = 0; r < kRows; ++r) pairs[r] = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const uint8_t* word = w + (4 * c + j) * 4 * kPackedColumns8da4w;
        // The first row block of the first half streams the block in from
        // memory (as decode); the others read it from L1.
        if (h == 0 && r0 == 0) _mm_prefetch(reinterpret_cast<const char*>(word + kPrefetchBytes), _MM_HINT_T0);
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(word));
        const __m256i lo = _mm256_and_si256(v, low_mask);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask);
        for (int r = 0; r < kRows; ++r) {
          const __m256i xa = broadcast_word(x[r] + 32 * c + 4 * j);
          const __m256i xb = broadcast_word(x[r] + 32 * c + 16 + 4 * j);
          pairs[r] = _mm256_add_epi16(pairs[r],
                                      _mm256_add_epi16(_mm256_maddubs_epi16(lo, xa), _mm256_maddubs_epi16(hi, xb)));
        }
      }
      for (int r = 0; r < kRows; ++r) {
        const __m256i wide = _mm256_madd_epi16(pairs[r], ones);
        dot[r] = kOneChunk ? wide : _mm256_add_epi32(dot[r], wide);
      }
    }
    const __m256 scales = _mm256_loadu_ps(s + g * kPackedColumns8da4w);
    for (int r = 0; r < kRows; ++r) {
      const __m256 exact = _mm256_sub_ps(_mm256_cvtepi32_ps(dot[r]), _mm256_broadcast_ss(correction[r] + g));
      products[r] = _mm256_fmadd_ps(exact, scales, products[r]);
    }
  }
  const __m256 u_folded = _mm256_loadu_ps(p.u_folded + b * kPackedColumns8da4w + 8 * h);
  for (int r = 0; r < kRows; ++r) {
    const __m256 neg_zero_point = _mm256_set1_ps(-static_cast<float>(rows.zero_point[r0 + r]));
    sums[r] = _mm256_fmadd_ps(neg_zero_point, u_folded, products[r]);
  }
}

// Row r's columns first..first + 7 inside [n_begin, n_end) from their sums:
// all eight by vector, else column by column (the same fma).
inline void store_eight(const Packed8da4w& p, const PackedRows8da4w& rows, int64_t r, int64_t first, __m256 sums,
                        int64_t n_begin, int64_t n_end) {
  float* out = rows.out + r * p.n;
  const float x_scale = rows.scale[r];
  if (first >= n_begin && first + 8 <= n_end) {
    const __m256 bias = rows.bias != nullptr ? _mm256_loadu_ps(rows.bias + first) : _mm256_setzero_ps();
    _mm256_storeu_ps(out + first, _mm256_fmadd_ps(sums, _mm256_set1_ps(x_scale), bias));
    return;
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sums);
  for (int64_t c = 0; c < 8; ++c) {
    const int64_t n = first + c;
    if (n < n_begin || n >= n_end) continue;
    out[n] = std::fma(lanes[c], x_scale, rows.bias != nullptr ? rows.bias[n] : 0.0f);
  }
}

template <int kRows, bool kOneChunk>
inline void row_block(const Packed8da4w& p, const PackedRows8da4w& rows, int64_t b, int64_t r0, int64_t n_begin,
                      int64_t n_end) {
  for (int h = 0; h < kPackedColumns8da4w / 8; ++h) {
    const int64_t first = b * kPackedColumns8da4w + 8 * h;
    if (first >= n_end || first + 8 <= n_begin) continue;  // No column of the range in this half.
    __m256 sums[kRowBlock];
    half_sums<kRows, kOneChunk>(p, rows, b, h, r0, sums);
    for (int r = 0; r < kRows; ++r) store_eight(p, rows, r0 + r, first, sums[r], n_begin, n_end);
  }
}

template <bool kOneChunk>
void packed_rows(const Packed8da4w& p, const PackedRows8da4w& rows, int64_t n_begin, int64_t n_end) {
  const int64_t b_end = (n_end + kPackedColumns8da4w - 1) / kPackedColumns8da4w;
  for (int64_t b = n_begin / kPackedColumns8da4w; b < b_end; ++b) {
    int64_t r0 = 0;
    for (; r0 + kRowBlock <= rows.rows; r0 += kRowBlock) row_block<kRowBlock, kOneChunk>(p, rows, b, r0, n_begin, n_end);
    switch (rows.rows - r0) {
      case 3: row_block<3, kOneChunk>(p, rows, b, r0, n_begin, n_end); break;
      case 2: row_block<2, kOneChunk>(p, rows, b, r0, n_begin, n_end); break;
      case 1: row_block<1, kOneChunk>(p, rows, b, r0, n_begin, n_end); break;
      default: break;
    }
  }
}

}  // namespace

void linear_8da4w_packed_rows_avx2(const Packed8da4w& packed, const PackedRows8da4w& rows, int64_t n_begin,
                                   int64_t n_end) {
  if (packed.group == 32) return packed_rows<true>(packed, rows, n_begin, n_end);
  packed_rows<false>(packed, rows, n_begin, n_end);
}

}  // namespace torchlight::quantized
