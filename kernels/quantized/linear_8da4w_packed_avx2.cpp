// linear_8da4w_packed.h's loops, AVX2 + FMA (built with -mavx2 -mfma, run
// only on CPUs with both, quant_isa.h): decode, then the many-row loop.
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

// Four rows: their pair sums, products and (groups of 64 or more) dot sums
// with the nibbles and a broadcast fill thirteen to sixteen registers.
constexpr int kRowBlock = 4;

// The rows a tile serves (decode: one).
struct TileRows {
  const int8_t* x[kRowBlock];           // Arranged activations.
  const float* correction[kRowBlock];   // Per group.
  int32_t zero_point[kRowBlock];
};

// One tile: rows 0..kRows - 1 of `rows` against halves h0..h0 + kTileHalves
// - 1 of block b. Each word is loaded and split into nibbles once per half
// and meets every row (each broadcast once per row and word); per row and
// group the same convert, subtract and fused multiply-add, in the same
// order, whatever the tile's shape: decode (1 row x 2 halves) and the
// many-row loop (up to 4 rows x 1 half) give one row the same floats.
// sums[h][r] = fma(-zp_r, u_folded, products) for half h0 + h's 8 columns.
// `stream`: this tile is the first to read the block, so it prefetches the
// block's lines ahead (the weights stream from memory: classifiers, every
// linear of a model past L3; a 15 MB classifier 9.2 -> 12.5 GB/s,
// bench/README.md session 20; a prefetch past the end does not fault).
template <int kRows, int kTileHalves, bool kOneChunk>
inline void tile_sums(const Packed8da4w& p, const TileRows& rows, int64_t b, int h0, bool stream,
                      __m256 (&sums)[kTileHalves][kRows]) {
  const int64_t groups = p.k / p.group;
  const int64_t chunks_per_group = kOneChunk ? 1 : p.group / 32;
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  const __m256i ones = _mm256_set1_epi16(1);
  const uint8_t* w = p.weight + b * (p.k / 8) * 4 * kPackedColumns8da4w + 32 * h0;
  const float* s = p.scales + b * groups * kPackedColumns8da4w + 8 * h0;
  __m256 products[kTileHalves][kRows];
  for (int h = 0; h < kTileHalves; ++h) {
    for (int r = 0; r < kRows; ++r) products[h][r] = _mm256_setzero_ps();
  }
  for (int64_t g = 0; g < groups; ++g) {
    __m256i dot[kTileHalves][kRows];
    for (int h = 0; h < kTileHalves; ++h) {
      for (int r = 0; r < kRows; ++r) dot[h][r] = _mm256_setzero_si256();
    }
    for (int64_t c = g * chunks_per_group; c < (g + 1) * chunks_per_group; ++c) {
      __m256i pairs[kTileHalves][kRows];
      for (int h = 0; h < kTileHalves; ++h) {
        for (int r = 0; r < kRows; ++r) pairs[h][r] = _mm256_setzero_si256();
      }
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const uint8_t* word = w + (4 * c + j) * 4 * kPackedColumns8da4w;
        if (stream) _mm_prefetch(reinterpret_cast<const char*>(word + kPrefetchBytes), _MM_HINT_T0);
        for (int h = 0; h < kTileHalves; ++h) {
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(word + 32 * h));
          const __m256i lo = _mm256_and_si256(v, low_mask);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask);
          for (int r = 0; r < kRows; ++r) {
            const __m256i xa = broadcast_word(rows.x[r] + 32 * c + 4 * j);
            const __m256i xb = broadcast_word(rows.x[r] + 32 * c + 16 + 4 * j);
            pairs[h][r] = _mm256_add_epi16(
                pairs[h][r], _mm256_add_epi16(_mm256_maddubs_epi16(lo, xa), _mm256_maddubs_epi16(hi, xb)));
          }
        }
      }
      for (int h = 0; h < kTileHalves; ++h) {
        for (int r = 0; r < kRows; ++r) {
          const __m256i wide = _mm256_madd_epi16(pairs[h][r], ones);
          dot[h][r] = kOneChunk ? wide : _mm256_add_epi32(dot[h][r], wide);
        }
      }
    }
    __m256 correction[kRows];
    for (int r = 0; r < kRows; ++r) correction[r] = _mm256_broadcast_ss(rows.correction[r] + g);
    for (int h = 0; h < kTileHalves; ++h) {
      const __m256 scales = _mm256_loadu_ps(s + g * kPackedColumns8da4w + 8 * h);
      for (int r = 0; r < kRows; ++r) {
        const __m256 exact = _mm256_sub_ps(_mm256_cvtepi32_ps(dot[h][r]), correction[r]);
        products[h][r] = _mm256_fmadd_ps(exact, scales, products[h][r]);
      }
    }
  }
  for (int h = 0; h < kTileHalves; ++h) {
    const __m256 u_folded = _mm256_loadu_ps(p.u_folded + b * kPackedColumns8da4w + 8 * (h0 + h));
    for (int r = 0; r < kRows; ++r) {
      sums[h][r] = _mm256_fmadd_ps(_mm256_set1_ps(-static_cast<float>(rows.zero_point[r])), u_folded, products[h][r]);
    }
  }
}

// out[n] = fma(sum, x_scale, bias[n]) for columns first..first + 7 inside
// [n_begin, n_end): all eight by vector, else column by column (the same fma).
inline void store_eight(float* out, float x_scale, const float* bias, int64_t first, __m256 sums, int64_t n_begin,
                        int64_t n_end) {
  if (first >= n_begin && first + 8 <= n_end) {
    const __m256 b = bias != nullptr ? _mm256_loadu_ps(bias + first) : _mm256_setzero_ps();
    _mm256_storeu_ps(out + first, _mm256_fmadd_ps(sums, _mm256_set1_ps(x_scale), b));
    return;
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sums);
  for (int64_t c = 0; c < 8; ++c) {
    const int64_t n = first + c;
    if (n < n_begin || n >= n_end) continue;
    out[n] = std::fma(lanes[c], x_scale, bias != nullptr ? bias[n] : 0.0f);
  }
}

// Decode: one row, both halves of a block per tile (each broadcast serves 16
// columns); bound by loading and unpacking the weights.
template <bool kOneChunk>
void packed_columns(const Packed8da4w& p, const PackedRow8da4w& row, int64_t n_begin, int64_t n_end) {
  const TileRows one{{row.xq}, {row.correction}, {row.zero_point}};
  const int64_t b_end = (n_end + kPackedColumns8da4w - 1) / kPackedColumns8da4w;
  for (int64_t b = n_begin / kPackedColumns8da4w; b < b_end; ++b) {
    __m256 sums[kHalves][1];
    tile_sums<1, kHalves, kOneChunk>(p, one, b, 0, /*stream=*/true, sums);
    for (int h = 0; h < kHalves; ++h) {
      store_eight(row.out, row.scale, row.bias, b * kPackedColumns8da4w + 8 * h, sums[h][0], n_begin, n_end);
    }
  }
}

// The many-row loop: prefill on the packed copy, so the original weight is
// never read after prepare packed it. Per block and half, register blocks of
// up to kRowBlock rows share each loaded and split word: the unpacking that
// bounds decode is shared by four rows and the multiplies remain. The
// block's weights (K / 8 lines of 64 bytes: 12 KB at K = 768 ... 16 KB at
// 2048) stay in L1 while every row passes over them, so each weight byte
// comes from memory once per call; every row gets decode's floats bit for
// bit (linear_8da4w_packed_reference, tested).
template <int kRows, bool kOneChunk>
inline void row_block(const Packed8da4w& p, const PackedRows8da4w& rows, int64_t b, int64_t r0, int64_t n_begin,
                      int64_t n_end) {
  const int64_t groups = p.k / p.group;
  TileRows tile{};
  for (int r = 0; r < kRows; ++r) {
    tile.x[r] = rows.xq + (r0 + r) * p.k;
    tile.correction[r] = rows.correction + (r0 + r) * groups;
    tile.zero_point[r] = rows.zero_point[r0 + r];
  }
  for (int h = 0; h < kHalves; ++h) {
    const int64_t first = b * kPackedColumns8da4w + 8 * h;
    if (first >= n_end || first + 8 <= n_begin) continue;  // No column of the range in this half.
    __m256 sums[1][kRows];
    tile_sums<kRows, 1, kOneChunk>(p, tile, b, h, /*stream=*/h == 0 && r0 == 0, sums);
    for (int r = 0; r < kRows; ++r) {
      store_eight(rows.out + (r0 + r) * p.n, rows.scale[r0 + r], rows.bias, first, sums[0][r], n_begin, n_end);
    }
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

void linear_8da4w_packed_avx2(const Packed8da4w& packed, const PackedRow8da4w& row, int64_t n_begin,
                              int64_t n_end) {
  if (packed.group == 32) return packed_columns<true>(packed, row, n_begin, n_end);
  packed_columns<false>(packed, row, n_begin, n_end);
}

void linear_8da4w_packed_rows_avx2(const Packed8da4w& packed, const PackedRows8da4w& rows, int64_t n_begin,
                                   int64_t n_end) {
  if (packed.group == 32) return packed_rows<true>(packed, rows, n_begin, n_end);
  packed_rows<false>(packed, rows, n_begin, n_end);
}

}  // namespace torchlight::quantized
