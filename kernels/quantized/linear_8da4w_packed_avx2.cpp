// linear_8da4w_packed.h's decode loop, AVX2 + FMA (built with -mavx2 -mfma,
// run only on CPUs with both, quant_isa.h).
//
// Per word d of a block (16 columns' 32-bit words, two loads of eight): its low
// nibbles (and) and high nibbles (shift, and) meet the arranged row's bytes
// 4j.. and 16 + 4j.. of the chunk, each broadcast to every lane, in two
// maddubs (u in [0, 15] unsigned, x signed: pair sums within +-3840, no
// saturation), added as int16. A chunk's four words stay in int16 (16
// products a lane, within +-30720) and one madd by ones widens them to a
// column's 32 products in each int32 lane. Per group: convert, subtract the
// row's correction, one fused multiply-add with the eight columns' scales.
// A block's 16 columns are two vectors, sharing each activation broadcast;
// each 64-byte word of a block is one cache line, read in order.
#include <immintrin.h>

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

// Eight columns a 256-bit vector: a block of kPackedColumns8da4w is kHalves.
constexpr int kHalves = kPackedColumns8da4w / 8;
constexpr int64_t kPrefetchBytes = 4096;

// Block b's fma(-zp, u_folded, products) per column, eight a vector.
template <bool kOneChunk>
inline void block_sums(const Packed8da4w& p, const PackedRow8da4w& row, int64_t b, __m256 (&sums)[kHalves]) {
  const int64_t groups = p.k / p.group;
  const int64_t chunks_per_group = kOneChunk ? 1 : p.group / 32;
  const int64_t row_words = p.k / 8;
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  const __m256i ones = _mm256_set1_epi16(1);
  const uint8_t* w = p.weight + b * row_words * 4 * kPackedColumns8da4w;
  const float* s = p.scales + b * groups * kPackedColumns8da4w;
  __m256 products[kHalves];
  for (int h = 0; h < kHalves; ++h) products[h] = _mm256_setzero_ps();
  const int8_t* x = row.xq;
  for (int64_t g = 0; g < groups; ++g) {
    __m256i dot[kHalves];
    for (int h = 0; h < kHalves; ++h) dot[h] = _mm256_setzero_si256();
    for (int64_t c = g * chunks_per_group; c < (g + 1) * chunks_per_group; ++c) {
      __m256i pairs[kHalves];
      for (int h = 0; h < kHalves; ++h) pairs[h] = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __m256i xa = broadcast_word(x + 32 * c + 4 * j);
        const __m256i xb = broadcast_word(x + 32 * c + 16 + 4 * j);
        const uint8_t* word = w + (4 * c + j) * 4 * kPackedColumns8da4w;
        // The weights stream from memory (classifiers; every linear of a
        // model past L3): ask for the line 4 KB ahead (a 15 MB classifier
        // 9.2 -> 12.5 GB/s, bench/README.md session 20; a prefetch past the
        // end does not fault).
        _mm_prefetch(reinterpret_cast<const char*>(word + kPrefetchBytes), _MM_HINT_T0);
        for (int h = 0; h < kHalves; ++h) {
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(word + 32 * h));
          const __m256i lo = _mm256_and_si256(v, low_mask);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask);
          pairs[h] = _mm256_add_epi16(
              pairs[h], _mm256_add_epi16(_mm256_maddubs_epi16(lo, xa), _mm256_maddubs_epi16(hi, xb)));
        }
      }
      for (int h = 0; h < kHalves; ++h) {
        const __m256i wide = _mm256_madd_epi16(pairs[h], ones);
        dot[h] = kOneChunk ? wide : _mm256_add_epi32(dot[h], wide);
      }
    }
    const __m256 correction = _mm256_broadcast_ss(row.correction + g);
    for (int h = 0; h < kHalves; ++h) {
      const __m256 exact = _mm256_sub_ps(_mm256_cvtepi32_ps(dot[h]), correction);
      products[h] = _mm256_fmadd_ps(exact, _mm256_loadu_ps(s + g * kPackedColumns8da4w + 8 * h), products[h]);
    }
  }
  const __m256 neg_zero_point = _mm256_set1_ps(-static_cast<float>(row.zero_point));
  for (int h = 0; h < kHalves; ++h) {
    sums[h] = _mm256_fmadd_ps(neg_zero_point, _mm256_loadu_ps(p.u_folded + b * kPackedColumns8da4w + 8 * h),
                              products[h]);
  }
}

// Columns first..first + 7 in [n_begin, n_end) from their sums: all eight
// by vector, else column by column (the same fma).
inline void store_eight(const PackedRow8da4w& row, int64_t first, __m256 sums, int64_t n_begin, int64_t n_end) {
  const __m256 scale = _mm256_set1_ps(row.scale);
  if (first >= n_begin && first + 8 <= n_end) {
    const __m256 bias = row.bias != nullptr ? _mm256_loadu_ps(row.bias + first) : _mm256_setzero_ps();
    _mm256_storeu_ps(row.out + first, _mm256_fmadd_ps(sums, scale, bias));
    return;
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sums);
  for (int64_t c = 0; c < 8; ++c) {
    const int64_t n = first + c;
    if (n < n_begin || n >= n_end) continue;
    row.out[n] = std::fma(lanes[c], row.scale, row.bias != nullptr ? row.bias[n] : 0.0f);
  }
}

template <bool kOneChunk>
void packed_columns(const Packed8da4w& p, const PackedRow8da4w& row, int64_t n_begin, int64_t n_end) {
  const int64_t b_end = (n_end + kPackedColumns8da4w - 1) / kPackedColumns8da4w;
  for (int64_t b = n_begin / kPackedColumns8da4w; b < b_end; ++b) {
    __m256 sums[kHalves];
    block_sums<kOneChunk>(p, row, b, sums);
    for (int h = 0; h < kHalves; ++h) store_eight(row, b * kPackedColumns8da4w + 8 * h, sums[h], n_begin, n_end);
  }
}

}  // namespace

void linear_8da4w_packed_avx2(const Packed8da4w& packed, const PackedRow8da4w& row, int64_t n_begin,
                              int64_t n_end) {
  if (packed.group == 32) return packed_columns<true>(packed, row, n_begin, n_end);
  packed_columns<false>(packed, row, n_begin, n_end);
}

}  // namespace torchlight::quantized
