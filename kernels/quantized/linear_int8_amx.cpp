// linear_int8's prefill on AMX-BF16 tiles (linear_int8_amx.h). Built with
// -mamx-tile -mamx-bf16 and AVX-512 F/BW/VL/DQ/BF16 (every AMX-BF16 CPU
// has them; checked); runs only where cpu_has_amx_bf16().
//
// Per call and block of 32 columns (two panels of 16), the weights are
// converted once to bf16 in the B layout; then every block of 32 rows (two
// A tiles per activation part, read from the split rows) meets them: per
// 32 values of K, the hi, mid and lo parts in turn into the same four C
// tiles of 16 x 16 fp32 sums. The rows and columns past the last whole
// block take a one-tile variant; columns past N are computed on zero
// padding and not stored.
#include "kernels/quantized/linear_int8_amx.h"

#include <immintrin.h>

#include <algorithm>

#include "kernels/quantized/amx_tile_config.h"
#include "kernels/quantized/quant_isa.h"
#include "kernels/quantized/transpose16_avx512.h"

namespace torchlight::quantized {
namespace {

constexpr int64_t kTile = 16;       // Rows of a tile, fp32 columns of a C tile.
constexpr int64_t kRowBytes = 64;   // Bytes of a tile row.
constexpr int64_t kKStep = 32;      // bf16 values of K in a tile row.
constexpr int kParts = 3;           // hi, mid, lo.
constexpr int kBlocks = 2;          // Column (and row) blocks per step.

int64_t padded_rows(int64_t rows) { return (rows + kTile - 1) / kTile * kTile; }

// The split rows' stride: K's bf16 in whole 64-byte lines, made odd (a
// tile's 16 rows then fall in 16 different L1 sets).
int64_t split_stride(int64_t k) {
  const int64_t lines = amx_padded_k_int8(k) / kKStep;
  return (lines % 2 == 0 ? lines + 1 : lines) * kRowBytes;
}

int64_t part_bytes(int64_t rows, int64_t k) { return padded_rows(rows) * split_stride(k); }

// One block's panel: K / 2 rows of 16 dwords (a B tile per 32 values of K).
int64_t block_bytes(int64_t k) { return amx_padded_k_int8(k) / 2 * kRowBytes; }

// 32 int8 weights as 32 bf16 (exact: at most 8 significant bits, so
// AVX512-BF16's rounding convert, one instruction for 32, keeps them).
__m512i bf16_of_int8(__m256i w) {
  const __m512 a = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(w)));
  const __m512 b = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(w, 1)));
  return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(b, a));  // a in the low half.
}

__mmask32 k_mask32(int64_t count) {
  return count >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << count) - 1);
}

__mmask16 k_mask16(int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xFFFF)
                     : static_cast<__mmask16>(count <= 0 ? 0 : (1u << count) - 1);
}

// Columns [n0, n0 + cols) (cols <= 16) into `panel` as bf16 in the B
// layout: row i holds w[n, 2i], w[n, 2i + 1] for the 16 columns (zeros past
// cols and K).
void convert_block(const RowsInt8Amx& rows, int64_t n0, int64_t cols, char* panel) {
  const int64_t k = rows.k;
  for (int64_t k0 = 0; k0 < amx_padded_k_int8(k); k0 += kKStep) {
    const __mmask32 mask = k_mask32(k - k0);
    __m512i r[kTile];
    for (int64_t c = 0; c < kTile; ++c) {
      r[c] = c < cols ? bf16_of_int8(_mm256_maskz_loadu_epi8(mask, rows.weight + (n0 + c) * k + k0))
                      : _mm512_setzero_si512();
    }
    transpose16(r);
    for (int64_t i = 0; i < kTile; ++i) {
      _mm512_store_si512(panel + (k0 / 2 + i) * kRowBytes, r[i]);
    }
  }
}

// C tiles 0-3 (row block rb, column block cb at 2 rb + cb), A tiles 4-5
// (one activation part of 16 rows), B tiles 6-7 (the panels): all 16 rows
// of 64 bytes.
void configure() {
  AmxTileConfig config;
  for (int t = 0; t < 8; ++t) config.set(t, kTile, kRowBytes);
  _tile_loadconfig(&config);
}

// Rows [r0, r0 + 16 kRowBlocks) by the panels' columns [n0, n0 + 16
// kColBlocks), columns past n_end not stored.
template <int kRowBlocks, int kColBlocks>
void tiles(const RowsInt8Amx& rows, const char* const (&panel)[kBlocks], int64_t r0, int64_t n0,
           int64_t n_end) {
  const int64_t stride = split_stride(rows.k);
  const int64_t part = part_bytes(rows.rows, rows.k);
  const char* a0 = static_cast<const char*>(rows.split) + r0 * stride;
  alignas(64) float c[kRowBlocks][kColBlocks][kTile][kTile];
  _tile_zero(0);
  if constexpr (kColBlocks == 2) _tile_zero(1);
  if constexpr (kRowBlocks == 2) _tile_zero(2);
  if constexpr (kRowBlocks == 2 && kColBlocks == 2) _tile_zero(3);
  for (int64_t k0 = 0; k0 < amx_padded_k_int8(rows.k); k0 += kKStep) {
    _tile_loadd(6, panel[0] + k0 / 2 * kRowBytes, kRowBytes);
    if constexpr (kColBlocks == 2) _tile_loadd(7, panel[1] + k0 / 2 * kRowBytes, kRowBytes);
    for (int p = 0; p < kParts; ++p) {
      const char* a = a0 + p * part + k0 * 2;
      _tile_loadd(4, a, stride);
      if constexpr (kRowBlocks == 2) _tile_loadd(5, a + kTile * stride, stride);
      _tile_dpbf16ps(0, 4, 6);
      if constexpr (kColBlocks == 2) _tile_dpbf16ps(1, 4, 7);
      if constexpr (kRowBlocks == 2) _tile_dpbf16ps(2, 5, 6);
      if constexpr (kRowBlocks == 2 && kColBlocks == 2) _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, c[0][0], kRowBytes);
  if constexpr (kColBlocks == 2) _tile_stored(1, c[0][kColBlocks - 1], kRowBytes);
  if constexpr (kRowBlocks == 2) _tile_stored(2, c[kRowBlocks - 1][0], kRowBytes);
  if constexpr (kRowBlocks == 2 && kColBlocks == 2) _tile_stored(3, c[1][1], kRowBytes);
  for (int cb = 0; cb < kColBlocks; ++cb) {
    const int64_t col0 = n0 + cb * kTile;
    const __mmask16 mask = k_mask16(n_end - col0);
    if (mask == 0) continue;
    const __m512 scale = _mm512_maskz_loadu_ps(mask, rows.scales + col0);
    const __m512 bias =
        rows.bias != nullptr ? _mm512_maskz_loadu_ps(mask, rows.bias + col0) : _mm512_setzero_ps();
    for (int rb = 0; rb < kRowBlocks; ++rb) {
      for (int64_t r = 0; r < kTile; ++r) {
        const int64_t row = r0 + rb * kTile + r;
        if (row >= rows.rows) break;
        // One rounding, as std::fma in the other loops.
        _mm512_mask_storeu_ps(rows.out + row * rows.n + col0, mask,
                              _mm512_fmadd_ps(_mm512_load_ps(c[rb][cb][r]), scale, bias));
      }
    }
  }
}

}  // namespace

bool cpu_has_amx_bf16() {
  static const bool has = cpu_has_quant_isa(QuantIsa::kAmx) && __builtin_cpu_supports("amx-bf16") &&
                          __builtin_cpu_supports("avx512bf16") &&
                          __builtin_cpu_supports("avx512dq");
  return has;
}

size_t split_rows_int8_amx_bytes(int64_t rows, int64_t k) {
  return static_cast<size_t>(kParts * part_bytes(rows, k));
}

bool split_rows_int8_amx(const float* x, int64_t rows, int64_t k, void* split) {
  return split_row_range_int8_amx(x, rows, k, split, 0, (rows + kTile - 1) / kTile);
}

bool split_row_range_int8_amx(const float* x, int64_t rows, int64_t k, void* split,
                              int64_t block_begin, int64_t block_end) {
  const int64_t stride = split_stride(k);
  const int64_t part = part_bytes(rows, k);
  const __m512i keep = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  // x's top 16 bits: its bf16 truncation, as a float.
  auto top = [&](__m512 v) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), keep));
  };
  // The odd words of a then b: the top halves of 32 floats, in order.
  // Word i of the index is 2i + 1 (words 1, 3, ..., 63 of a then b).
  const __m512i odd_words = _mm512_add_epi16(
      _mm512_slli_epi16(_mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
                                         15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), 1),
      _mm512_set1_epi16(1));
  auto top_halves32 = [&](__m512 a, __m512 b) {
    return _mm512_permutex2var_epi16(_mm512_castps_si512(a), odd_words, _mm512_castps_si512(b));
  };
  // fpclass: quiet NaN, +inf, -inf, signalling NaN.
  constexpr int kNonFinite = 0x01 | 0x08 | 0x10 | 0x80;
  __mmask16 non_finite = 0;
  for (int64_t r = block_begin * kTile; r < std::min(block_end * kTile, padded_rows(rows)); ++r) {
    char* dst = static_cast<char*>(split) + r * stride;
    for (int64_t k0 = 0; k0 < amx_padded_k_int8(k); k0 += kKStep) {
      __m512 v[2], hi[2], mid[2], lo[2];
      for (int j = 0; j < 2; ++j) {
        const __mmask16 mask = r < rows ? k_mask16(k - k0 - 16 * j) : 0;
        v[j] = _mm512_maskz_loadu_ps(mask, x + r * k + k0 + 16 * j);
        non_finite |= _mm512_fpclass_ps_mask(v[j], kNonFinite);
        hi[j] = top(v[j]);
        const __m512 rest = _mm512_sub_ps(v[j], hi[j]);  // Exact: x's low 16 bits.
        mid[j] = top(rest);
        lo[j] = _mm512_sub_ps(rest, mid[j]);  // Exact, at most 8 significant bits.
      }
      _mm512_store_si512(dst + k0 * 2, top_halves32(hi[0], hi[1]));
      _mm512_store_si512(dst + part + k0 * 2, top_halves32(mid[0], mid[1]));
      _mm512_store_si512(dst + 2 * part + k0 * 2, top_halves32(lo[0], lo[1]));
    }
  }
  return non_finite == 0;
}

size_t linear_int8_amx_panel_bytes(int64_t k) {
  return static_cast<size_t>(kBlocks * block_bytes(k));
}

void linear_int8_amx_columns(const RowsInt8Amx& rows, void* memory, int64_t n_begin, int64_t n_end) {
  configure();
  char* base = static_cast<char*>(memory);
  const char* const panel[kBlocks] = {base, base + block_bytes(rows.k)};
  const int64_t row_end = padded_rows(rows.rows);
  for (int64_t n0 = n_begin; n0 < n_end; n0 += kBlocks * kTile) {
    const bool two_columns = n_end - n0 > kTile;
    convert_block(rows, n0, std::min<int64_t>(kTile, n_end - n0), base);
    if (two_columns) {
      convert_block(rows, n0 + kTile, std::min<int64_t>(kTile, n_end - n0 - kTile),
                    base + block_bytes(rows.k));
    }
    for (int64_t r0 = 0; r0 < row_end; r0 += kBlocks * kTile) {
      const bool two_rows = row_end - r0 > kTile;
      dispatch_tile_blocks(two_rows, two_columns, [&](auto row_blocks, auto column_blocks) {
        tiles<decltype(row_blocks)::value, decltype(column_blocks)::value>(rows, panel, r0, n0, n_end);
      });
    }
  }
  _tile_release();
}

}  // namespace torchlight::quantized
