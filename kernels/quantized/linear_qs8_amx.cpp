// linear_qs8 on AMX-INT8 tiles (linear_qs8.h), for calls of many rows. Built
// with -mamx-tile -mamx-int8; runs only where cpu_has_quant_isa(kAmx) (the
// CPU has AMX-INT8 and the kernel granted this process the tile state).
//
// The product is computed transposed, C[n, r] = sum_k w[n, k] x[r, k]:
// `tdpbssd` multiplies signed by signed bytes, its A tile (16 rows of 64
// bytes) is then 16 weight columns read in place (stride K), and its B tile
// is 16 activation rows laid out once per call in the "VNNI" order the
// instruction wants (row i of the tile: k = 4i..4i+3 of each of the 16
// activation rows; pack_rows_qs8_amx). Each A tile serves two row blocks
// (two C tiles). sum (x - zp) w = C[n, r] - zp * sum_k w[n, k]: both terms
// within 2^30 for K <= kMaxKQs8, the difference the exact int32 sum, so
// the same floats as every other loop. K must be a multiple of 4 (the B
// tile's rows are quads of K); the last K % 64 values take a narrower pair
// of tiles. Column ranges that are not whole blocks of 16 and rows past the
// last whole pair of blocks fall to the AVX-512 VNNI loop.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/quantized/amx_tile_config.h"
#include "kernels/quantized/linear_qs8.h"

namespace torchlight::quantized {
namespace {

constexpr int64_t kTile = 16;        // Rows of a tile; int32 columns of a C tile.
constexpr int64_t kTileBytes = 64;   // Bytes of a tile row.
constexpr int64_t kPackedBlock = kTile * kTileBytes;  // One B tile: 16 rows x 64 K values.

int64_t k_blocks(int64_t k) { return (k + kTileBytes - 1) / kTileBytes; }

// C0, C1 = tmm0, tmm1; A = tmm2; B0, B1 = tmm3, tmm4; the K tail's A, B0, B1 = tmm5-7.
void configure(int64_t tail) {
  AmxTileConfig config;
  for (int t = 0; t < 5; ++t) config.set(t, kTile, kTileBytes);
  if (tail != 0) {
    config.set(5, kTile, tail);
    for (int t = 6; t < 8; ++t) config.set(t, tail / 4, kTileBytes);
  }
  _tile_loadconfig(&config);
}

// out for one row block from its C tile's int32 sums c[n][r].
void finish_block(const RowsQs8& rows, const int32_t (&c)[kTile][kTile], int64_t n0, int64_t r0,
                  int64_t block_rows) {
  for (int64_t r = 0; r < block_rows; ++r) {
    for (int64_t n = 0; n < kTile; ++n) {
      const uint32_t sum = static_cast<uint32_t>(c[n][r]) -
                           static_cast<uint32_t>(rows.zero_point) *
                               static_cast<uint32_t>(rows.weight_sums[n0 + n]);
      rows.out[(r0 + r) * rows.n + n0 + n] = finish_qs8(rows, n0 + n, static_cast<int32_t>(sum));
    }
  }
}

}  // namespace

size_t pack_rows_qs8_amx_bytes(int64_t rows, int64_t k) {
  return static_cast<size_t>((rows + kTile - 1) / kTile * k_blocks(k) * kPackedBlock);
}

void pack_rows_qs8_amx(const int8_t* x, int64_t rows, int64_t k, int8_t* packed) {
  const int64_t blocks = k_blocks(k);
  for (int64_t rb = 0; rb * kTile < rows; ++rb) {
    for (int64_t kb = 0; kb < blocks; ++kb) {
      int8_t* tile = packed + (rb * blocks + kb) * kPackedBlock;
      std::memset(tile, 0, kPackedBlock);
      for (int64_t r = 0; r < kTile && rb * kTile + r < rows; ++r) {
        const int8_t* row = x + (rb * kTile + r) * k + kb * kTileBytes;
        const int64_t count = std::min<int64_t>(kTileBytes, k - kb * kTileBytes);
        for (int64_t i = 0; i < count; ++i) tile[(i / 4) * kTileBytes + r * 4 + i % 4] = row[i];
      }
    }
  }
}

void linear_qs8_amx_columns(const RowsQs8& rows, const int8_t* packed, int64_t total_rows,
                            int64_t n_begin, int64_t n_end) {
  const int64_t k = rows.k;
  const int64_t blocks = k_blocks(k);
  const int64_t whole = k / kTileBytes;  // Full-width K blocks; then a tail of k % 64.
  const int64_t tail = k % kTileBytes;
  const int64_t tiled_rows = total_rows - total_rows % (2 * kTile);
  const int64_t n_tiled = n_begin + (n_end - n_begin) / kTile * kTile;
  const int64_t stride = k;  // A tile rows: weight columns.
  if (tiled_rows > 0 && n_tiled > n_begin) {
    configure(tail);
    alignas(64) int32_t c0[kTile][kTile];
    alignas(64) int32_t c1[kTile][kTile];
    for (int64_t n0 = n_begin; n0 < n_tiled; n0 += kTile) {
      const int8_t* w = rows.weight + n0 * k;
      for (int64_t r0 = 0; r0 < tiled_rows; r0 += 2 * kTile) {
        const int8_t* b0 = packed + (r0 / kTile) * blocks * kPackedBlock;
        const int8_t* b1 = b0 + blocks * kPackedBlock;
        _tile_zero(0);
        _tile_zero(1);
        for (int64_t kb = 0; kb < whole; ++kb) {
          _tile_loadd(2, w + kb * kTileBytes, stride);
          _tile_loadd(3, b0 + kb * kPackedBlock, kTileBytes);
          _tile_loadd(4, b1 + kb * kPackedBlock, kTileBytes);
          _tile_dpbssd(0, 2, 3);
          _tile_dpbssd(1, 2, 4);
        }
        if (tail != 0) {
          _tile_loadd(5, w + whole * kTileBytes, stride);
          _tile_loadd(6, b0 + whole * kPackedBlock, kTileBytes);
          _tile_loadd(7, b1 + whole * kPackedBlock, kTileBytes);
          _tile_dpbssd(0, 5, 6);
          _tile_dpbssd(1, 5, 7);
        }
        _tile_stored(0, c0, kTile * sizeof(int32_t));
        _tile_stored(1, c1, kTile * sizeof(int32_t));
        finish_block(rows, c0, n0, r0, kTile);
        finish_block(rows, c1, n0, r0 + kTile, kTile);
      }
    }
    _tile_release();
  }
  // What the tiles left: rows past the last pair of blocks, and columns past
  // the last block of 16 (for every row), on the AVX-512 VNNI loop.
  auto rest = [&](int64_t r_begin, int64_t r_end, int64_t c_begin, int64_t c_end) {
    for (int64_t r0 = r_begin; r0 < r_end; r0 += kRowsQs8) {
      RowsQs8 block = rows;
      block.x = rows.x + r0 * k;
      block.rows = static_cast<int>(std::min<int64_t>(kRowsQs8, r_end - r0));
      block.out = rows.out + r0 * rows.n;
      linear_qs8_columns_avx512vnni(block, c_begin, c_end);
    }
  };
  if (n_tiled > n_begin) rest(tiled_rows, total_rows, n_begin, n_tiled);
  if (n_tiled < n_end) rest(0, total_rows, n_tiled, n_end);
}

}  // namespace torchlight::quantized
