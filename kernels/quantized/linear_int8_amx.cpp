// linear_int8's prefill on AMX-INT8 tiles (linear_int8_amx.h). Built with
// -mamx-tile -mamx-int8 and AVX-512 F/BW/VL (every AMX CPU has them); runs
// only where cpu_runs_linear_int8_amx().
//
// Per call and group of 8 blocks of 16 columns, the weights are laid out
// once in the B layout (a panel per block); then every block of 16 rows
// meets the group's panels in turn, its digits staying in L1 (the panels
// come from L2: one B load per three multiplies): per 64 values of K, the
// three digit tiles (A) against the panel's tile (B) into three C tiles of
// exact int32 sums, which are combined in float32 at the store.
// Every operand has its own tile (three A, two B alternating by step), so
// a load never waits for a multiply still reading its tile. On this Xeon a
// multiply takes ~7.5 ns, a tile load ~3.5 ns from L1 but ~9-13 ns from
// L2, hence the digits in L1 (measured with the loop alone, best of
// repeated runs). Columns past N are computed on zero padding and not
// stored, rows past the call's on zero digits and not stored.
#include "kernels/quantized/linear_int8_amx.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/quantized/amx_tile_config.h"
#include "kernels/quantized/int8_digit_split.h"
#include "kernels/quantized/quant_isa.h"
#include "kernels/quantized/transpose16_avx512.h"

namespace torchlight::quantized {
namespace {

constexpr int64_t kTile = 16;      // Rows of a tile, int32 columns of a C tile.
constexpr int64_t kRowBytes = 64;  // Bytes of a tile row: 64 values of K.
// Blocks of 16 columns laid out before the rows meet them: the panels of a
// group stay in L2 while each block of 16 rows' digits (3 x 16 x K bytes)
// stays in L1 for the whole group. Each group reloads every row block's
// digits from L2 once, so groups are as large as kGroupBytes of panels
// allow (at least kMinGroupBlocks), and a call's columns are cut into
// groups of equal size (288 columns: one group of 18 blocks at K = 288,
// two of 9 at K = 768, where 8 blocks a group made 8 + 8 + 2).
constexpr int64_t kMinGroupBlocks = 8;
constexpr int64_t kGroupBytes = 128 * 1024;

int64_t padded_k(int64_t k) { return (k + kRowBytes - 1) / kRowBytes * kRowBytes; }
int64_t padded_rows(int64_t rows) { return (rows + kTile - 1) / kTile * kTile; }

// A digit row's stride: K in whole 64-byte lines, made odd (a tile's 16
// rows then fall in 16 different L1 sets).
int64_t digit_stride(int64_t k) {
  const int64_t lines = padded_k(k) / kRowBytes;
  return (lines % 2 == 0 ? lines + 1 : lines) * kRowBytes;
}

int64_t plane_bytes(int64_t rows, int64_t k) { return padded_rows(rows) * digit_stride(k); }

// The split: three planes, then the exponents (padded rows).
Int8DigitRows digit_rows(void* split, int64_t rows, int64_t k) {
  int8_t* base = static_cast<int8_t*>(split);
  const int64_t plane = plane_bytes(rows, k);
  return {base, digit_stride(k), plane, reinterpret_cast<int32_t*>(base + kInt8Digits * plane)};
}

// One block's panel: K / 4 rows of 16 dwords (a B tile per 64 values of K).
int64_t block_bytes(int64_t k) { return padded_k(k) / 4 * kRowBytes; }

int64_t max_group_blocks(int64_t k) { return std::max(kMinGroupBlocks, kGroupBytes / block_bytes(k)); }

__mmask64 k_mask64(int64_t count) {
  return count >= 64 ? ~__mmask64{0} : (count <= 0 ? 0 : (__mmask64{1} << count) - 1);
}

__mmask16 k_mask16(int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xFFFF)
                     : static_cast<__mmask16>(count <= 0 ? 0 : (1u << count) - 1);
}

// Columns [n0, n0 + cols) (cols <= 16) into `panel` in the B layout: row i
// holds w[n, 4i .. 4i + 3] for the 16 columns (zeros past cols and K).
void layout_block(const RowsInt8Amx& rows, int64_t n0, int64_t cols, char* panel) {
  const int64_t k = rows.k;
  for (int64_t k0 = 0; k0 < padded_k(k); k0 += kRowBytes) {
    const __mmask64 mask = k_mask64(k - k0);
    __m512i r[kTile];
    for (int64_t c = 0; c < kTile; ++c) {
      r[c] = c < cols ? _mm512_maskz_loadu_epi8(mask, rows.weight + (n0 + c) * k + k0)
                      : _mm512_setzero_si512();
    }
    transpose16(r);
    for (int64_t i = 0; i < kTile; ++i) {
      _mm512_store_si512(panel + (k0 / 4 + i) * kRowBytes, r[i]);
    }
  }
}

// C tiles 0-2 (digit p's sums), A tiles 3-5 (digit p's 16 rows of 64
// values of K), B tiles 6-7 (the panel's 64 values of K, alternating by
// step): all 16 rows of 64 bytes. Each operand has its own tile so a load
// never waits for the multiply still reading the previous one.
void configure() {
  AmxTileConfig config;
  for (int t = 0; t < 8; ++t) config.set(t, kTile, kRowBytes);
  _tile_loadconfig(&config);
}

// A block's three C tiles as stored: c[p][r][column].
using DigitSums = int32_t[kInt8Digits][kTile][kTile];

// Up to this K, 256 A1 + A2 is exact in int32 (|A_p| <= 2^14 K), and its
// convert rounds the integer that fma(float(A1), 256, float(A2)) rounds
// (both floats exact below 2^24, one rounding to nearest even): the same
// float with one convert and one fused multiply-add fewer a row.
constexpr int64_t kMaxKExactInner = 511;

// out[r0 + r, col0 + c] for the valid rows and columns, from the three
// digit sums c[p][r][c] (combine_int8_digit_sums' operations in 16 lanes).
void store_block(const RowsInt8Amx& rows, const DigitSums& c, const int32_t* exponents, int64_t r0,
                 int64_t col0, int64_t n_end) {
  const __mmask16 mask = k_mask16(n_end - col0);
  if (mask == 0) return;
  const __m512 scale = _mm512_maskz_loadu_ps(mask, rows.scales + col0);
  const __m512 bias =
      rows.bias != nullptr ? _mm512_maskz_loadu_ps(mask, rows.bias + col0) : _mm512_setzero_ps();
  const __m512 k256 = _mm512_set1_ps(256.0f);
  const __m512 k65536 = _mm512_set1_ps(65536.0f);
  const int64_t count = std::min<int64_t>(kTile, rows.rows - r0);
  const bool exact_inner = rows.k <= kMaxKExactInner;
  for (int64_t r = 0; r < count; ++r) {
    const __m512 a0 = _mm512_cvtepi32_ps(_mm512_load_si512(c[0][r]));
    const __m512i a1 = _mm512_load_si512(c[1][r]);
    const __m512i a2 = _mm512_load_si512(c[2][r]);
    const __m512 inner = exact_inner ? _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_slli_epi32(a1, 8), a2))
                                     : _mm512_fmadd_ps(_mm512_cvtepi32_ps(a1), k256, _mm512_cvtepi32_ps(a2));
    const __m512 up = _mm512_set1_ps(static_cast<float>(exponents[r0 + r] - 16));
    const __m512 sum = _mm512_scalef_ps(_mm512_fmadd_ps(a0, k65536, inner), up);
    // One rounding, as std::fma in the other loops.
    _mm512_mask_storeu_ps(rows.out + (r0 + r) * rows.n + col0, mask, _mm512_fmadd_ps(sum, scale, bias));
  }
}

// One step of 64 values of K at k0: the panel's B tile into tile B, the
// three digit tiles of the rows at `a` (planes `plane` bytes apart), three
// multiplies into C tiles 0-2. A macro: the tile intrinsics paste their
// tile numbers into the instruction, so B must be a literal.
#define TORCHLIGHT_INT8_DIGIT_STEP(B, k0)                  \
  do {                                                    \
    _tile_loadd(B, panel + (k0) / 4 * kRowBytes, kRowBytes); \
    _tile_loadd(3, a + (k0), stride);                     \
    _tile_loadd(4, a + plane + (k0), stride);             \
    _tile_loadd(5, a + 2 * plane + (k0), stride);         \
    _tile_dpbssd(0, 3, B);                                \
    _tile_dpbssd(1, 4, B);                                \
    _tile_dpbssd(2, 5, B);                                \
  } while (false)

// The digit sums of rows [r0, r0 + 16) by the panel's 16 columns, into C
// tiles 0-2 (store_sums writes them out).
void multiply_block(const RowsInt8Amx& rows, const Int8DigitRows& digits, const char* panel, int64_t r0) {
  const int64_t stride = digits.row_bytes;
  const int8_t* a = digits.digits + r0 * stride;
  const int64_t plane = digits.plane_bytes;
  const int64_t k_end = padded_k(rows.k);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  // Two steps of K a turn (B tiles 6 and 7); an odd last step alone.
  int64_t k0 = 0;
  for (; k0 + 2 * kRowBytes <= k_end; k0 += 2 * kRowBytes) {
    TORCHLIGHT_INT8_DIGIT_STEP(6, k0);
    TORCHLIGHT_INT8_DIGIT_STEP(7, k0 + kRowBytes);
  }
  if (k0 < k_end) TORCHLIGHT_INT8_DIGIT_STEP(6, k0);
}

void store_sums(DigitSums& c) {
  constexpr int64_t kCBytes = kTile * sizeof(int32_t);
  _tile_stored(0, c[0], kCBytes);
  _tile_stored(1, c[1], kCBytes);
  _tile_stored(2, c[2], kCBytes);
}
#undef TORCHLIGHT_INT8_DIGIT_STEP

}  // namespace

bool cpu_runs_linear_int8_amx() { return cpu_has_quant_isa(QuantIsa::kAmx); }

size_t split_rows_int8_amx_bytes(int64_t rows, int64_t k) {
  return static_cast<size_t>(kInt8Digits * plane_bytes(rows, k) + padded_rows(rows) * 4);
}

bool split_rows_int8_amx(const float* x, int64_t rows, int64_t k, void* split) {
  return split_row_range_int8_amx(x, rows, k, split, 0, (rows + kTile - 1) / kTile);
}

bool split_row_range_int8_amx(const float* x, int64_t rows, int64_t k, void* split,
                              int64_t block_begin, int64_t block_end) {
  const Int8DigitRows all = digit_rows(split, rows, k);
  const int64_t r_begin = block_begin * kTile;
  const int64_t r_end = std::min(block_end * kTile, padded_rows(rows));
  const int64_t valid_end = std::min(r_end, rows);
  bool finite = true;
  if (r_begin < valid_end) {
    const Int8DigitRows part{all.digits + r_begin * all.row_bytes, all.row_bytes, all.plane_bytes,
                             all.exponents + r_begin};
    finite = split_int8_digits_avx512(x + r_begin * k, valid_end - r_begin, k, part);
  }
  // Padding rows: zero digits (their sums are not stored).
  for (int64_t r = std::max(r_begin, rows); r < r_end; ++r) {
    all.exponents[r] = 0;
    for (int p = 0; p < kInt8Digits; ++p) {
      std::memset(all.digits + p * all.plane_bytes + r * all.row_bytes, 0, static_cast<size_t>(all.row_bytes));
    }
  }
  return finite;
}

size_t linear_int8_amx_panel_bytes(int64_t k) { return static_cast<size_t>(max_group_blocks(k) * block_bytes(k)); }

int8_t* split_int8_amx_digit_plane(void* split, int64_t rows, int64_t k, int digit) {
  return static_cast<int8_t*>(split) + digit * plane_bytes(rows, k);
}

int64_t split_int8_amx_row_bytes(int64_t k) { return digit_stride(k); }

size_t linear_int8_amx_layout_bytes(int64_t k, int64_t n) {
  return static_cast<size_t>((n + kTile - 1) / kTile * block_bytes(k));
}

void linear_int8_amx_layout(const RowsInt8Amx& rows, void* panels, int64_t n_begin, int64_t n_end) {
  const int64_t panel_bytes = block_bytes(rows.k);
  for (int64_t n0 = n_begin; n0 < n_end; n0 += kTile) {
    layout_block(rows, n0, std::min<int64_t>(kTile, n_end - n0),
                 static_cast<char*>(panels) + (n0 - n_begin) / kTile * panel_bytes);
  }
}

Int8AmxTileScope::Int8AmxTileScope() { configure(); }
Int8AmxTileScope::~Int8AmxTileScope() { _tile_release(); }

void linear_int8_amx_multiply(const RowsInt8Amx& rows, const void* panels, int64_t n_begin, int64_t n_end) {
  const char* panel = static_cast<const char*>(panels);
  const int64_t panel_bytes = block_bytes(rows.k);
  const Int8DigitRows digits = digit_rows(const_cast<void*>(rows.split), rows.rows, rows.k);
  const int64_t row_end = padded_rows(rows.rows);
  // Each block's sums are combined after the next block's multiplies are
  // issued, so the vector work overlaps them, and before that block's tile
  // stores: the combine's loads issued after a tile store still waiting for
  // its multiplies waited with it (BM_int8_amx_phase phase 1, 128 x 288 x
  // 288: 36-37 us -> 33-34; with no combine at all 26).
  alignas(64) DigitSums sums[2];
  int64_t pending_r0 = -1, pending_n0 = 0;
  int slot = 0;
  for (int64_t r0 = 0; r0 < row_end; r0 += kTile) {
    for (int64_t n0 = n_begin; n0 < n_end; n0 += kTile) {
      multiply_block(rows, digits, panel + (n0 - n_begin) / kTile * panel_bytes, r0);
      if (pending_r0 >= 0) store_block(rows, sums[slot ^ 1], digits.exponents, pending_r0, pending_n0, n_end);
      store_sums(sums[slot]);
      pending_r0 = r0;
      pending_n0 = n0;
      slot ^= 1;
    }
  }
  if (pending_r0 >= 0) store_block(rows, sums[slot ^ 1], digits.exponents, pending_r0, pending_n0, n_end);
}

void linear_int8_amx_columns(const RowsInt8Amx& rows, void* memory, int64_t n_begin, int64_t n_end) {
  const Int8AmxTileScope tiles;
  const int64_t blocks = (n_end - n_begin + kTile - 1) / kTile;
  const int64_t groups = (blocks + max_group_blocks(rows.k) - 1) / max_group_blocks(rows.k);
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t g0 = n_begin + blocks * g / groups * kTile;
    const int64_t g_end = std::min(n_end, n_begin + blocks * (g + 1) / groups * kTile);
    linear_int8_amx_layout(rows, memory, g0, g_end);
    linear_int8_amx_multiply(rows, memory, g0, g_end);
  }
}

}  // namespace torchlight::quantized
