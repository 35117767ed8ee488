// gemm's AMX-BF16 path for B given transposed (gemm_amx_kernels.h has the
// arithmetic and the layouts). Built with -mamx-tile -mamx-bf16 and AVX-512
// F/BW/VL/DQ; runs only where gemm_isa_supported(GemmIsa::kAmx).
//
// Per block of C: for every MC rows and KC values of K, the rows of A are
// split into scratch; then per 32 columns the (pre-split or just split)
// weight panel meets every 32 rows: per 32 values of K, six tile products
// into four 16 x 16 fp32 C tiles. Rows and columns past the last whole
// pair of tiles take one-tile variants.
#include <immintrin.h>

#include "kernels/optimized/gemm/gemm_amx_kernels.h"
#include "kernels/quantized/transpose16_avx512.h"  // static inline: this file's own copy.

namespace torchlight::optimized::internal {
namespace {

constexpr int64_t kTile = 16;      // Rows of a tile; fp32 columns of a C tile.
constexpr int64_t kRowBytes = 64;  // Bytes of a tile row.
constexpr int64_t kKStep = 32;     // bf16 values of K in a tile row.
constexpr int64_t kParts = 3;      // hi, mid, lo.
// Blocking: KC values of K per pass (A's 32 rows and B's 32 columns then
// take 48 KB each: B's stay in L1 while A's stream from L2; 128 measured
// slower), MC rows of A split at a time, NCB columns of B split at a time
// when the weight is not pre-split. Scratch: A 3 * MC * KC * 2 bytes (plus
// a line per row), B 3 * NCB * KC * 2: 835 KB.
constexpr int64_t kKc = 256;
constexpr int64_t kMc = 256;
constexpr int64_t kNcb = 256;

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A's split rows: K's bf16 in whole lines, made odd (a tile's 16 rows then
// fall in 16 different L1 sets).
int64_t a_row_stride(int64_t k_pad) {
  const int64_t lines = k_pad / kKStep;
  return (lines % 2 == 0 ? lines + 1 : lines) * kRowBytes;
}

// One part of one block of 16 weight columns: K/2 rows of 64 bytes.
int64_t b_part_bytes(int64_t k_pad) { return k_pad / 2 * kRowBytes; }

__mmask16 mask16(int64_t count) {
  if (count >= 16) return static_cast<__mmask16>(0xFFFF);
  return count <= 0 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << count) - 1);
}

// fpclass: quiet NaN, +inf, -inf, signalling NaN.
constexpr int kNonFinite = 0x01 | 0x08 | 0x10 | 0x80;

// Splits the 32 floats v[0], v[1] into 32 bf16 each of hi, mid and lo (in
// order); flags non-finite lanes.
struct Split32 {
  __m512i part[kParts];
};

Split32 split32(__m512 v0, __m512 v1, __mmask16* non_finite) {
  const __m512i keep = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  // Word i of the index is 2i + 1: the top halves of a's then b's floats.
  const __m512i odd_words = _mm512_add_epi16(
      _mm512_slli_epi16(_mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18,
                                         17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2,
                                         1, 0),
                        1),
      _mm512_set1_epi16(1));
  *non_finite |= _mm512_fpclass_ps_mask(v0, kNonFinite) | _mm512_fpclass_ps_mask(v1, kNonFinite);
  const __m512 v[2] = {v0, v1};
  __m512 parts[kParts][2];
  for (int j = 0; j < 2; ++j) {
    const __m512 hi = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v[j]), keep));
    const __m512 rest = _mm512_sub_ps(v[j], hi);  // Exact: x's low 16 bits.
    const __m512 mid = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(rest), keep));
    parts[0][j] = hi;
    parts[1][j] = mid;
    parts[2][j] = _mm512_sub_ps(rest, mid);  // Exact, at most 8 significant bits.
  }
  Split32 s;
  for (int p = 0; p < kParts; ++p) {
    s.part[p] = _mm512_permutex2var_epi16(_mm512_castps_si512(parts[p][0]), odd_words,
                                          _mm512_castps_si512(parts[p][1]));
  }
  return s;
}

// Rows [0, rows) of A's columns [0, kc) (row r at a + r * lda) into three
// parts of `rows_pad` rows (zeros past rows and kc). False on inf or NaN.
bool split_rows(const float* a, int64_t lda, int64_t rows, int64_t rows_pad, int64_t kc,
                char* out, int64_t stride, int64_t part) {
  const int64_t k_pad = round_up(kc, kKStep);
  __mmask16 non_finite = 0;
  for (int64_t r = 0; r < rows_pad; ++r) {
    char* dst = out + r * stride;
    const float* src = a + (r < rows ? r : 0) * lda;  // Padding rows load nothing.
    for (int64_t k0 = 0; k0 < k_pad; k0 += kKStep) {
      const __mmask16 m0 = r < rows ? mask16(kc - k0) : 0;
      const __mmask16 m1 = r < rows ? mask16(kc - k0 - 16) : 0;
      const Split32 s = split32(_mm512_maskz_loadu_ps(m0, src + k0),
                                _mm512_maskz_loadu_ps(m1, src + k0 + 16), &non_finite);
      for (int p = 0; p < kParts; ++p) _mm512_store_si512(dst + p * part + k0 * 2, s.part[p]);
    }
  }
  return non_finite == 0;
}

// Weight rows [0, cols) (cols <= 16, row c at w + c * ldw) over columns
// [0, kc) of K into one block's three parts (tdpbf16ps's B layout, part p
// at out + p * part). False on inf or NaN.
bool split_weight_block(const float* w, int64_t ldw, int64_t cols, int64_t kc, char* out,
                        int64_t part) {
  const int64_t k_pad = round_up(kc, kKStep);
  __mmask16 non_finite = 0;
  alignas(64) char rows[kParts][kTile][kRowBytes];
  for (int64_t k0 = 0; k0 < k_pad; k0 += kKStep) {
    for (int64_t c = 0; c < kTile; ++c) {
      const __mmask16 m0 = c < cols ? mask16(kc - k0) : 0;
      const __mmask16 m1 = c < cols ? mask16(kc - k0 - 16) : 0;
      const float* src = w + (c < cols ? c : 0) * ldw + k0;
      const Split32 s = split32(_mm512_maskz_loadu_ps(m0, src), _mm512_maskz_loadu_ps(m1, src + 16),
                                &non_finite);
      for (int p = 0; p < kParts; ++p) _mm512_store_si512(rows[p][c], s.part[p]);
    }
    for (int p = 0; p < kParts; ++p) {
      __m512i r[kTile];
      for (int c = 0; c < kTile; ++c) r[c] = _mm512_load_si512(rows[p][c]);
      quantized::transpose16(r);
      char* dst = out + p * part + k0 / 2 * kRowBytes;
      for (int i = 0; i < kTile; ++i) _mm512_store_si512(dst + i * kRowBytes, r[i]);
    }
  }
  return non_finite == 0;
}

// Weight rows [0, cols) into blocks of 16 (block stride 3 * part).
bool split_weight_blocks(const float* w, int64_t ldw, int64_t cols, int64_t kc, char* out,
                         int64_t part) {
  bool finite = true;
  for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
    const int64_t n = cols - c0 < kTile ? cols - c0 : kTile;
    finite = split_weight_block(w + c0 * ldw, ldw, n, kc, out + c0 / kTile * kParts * part, part) &&
             finite;
  }
  return finite;
}

// C tiles 0-3 (row block rb, column block cb at 2 rb + cb), A tiles 4-5
// (one part of 16 rows each), B tiles 6-7 (one part of 16 columns each).
void configure() {
  alignas(64) unsigned char config[64] = {};
  config[0] = 1;  // Palette 1.
  for (int t = 0; t < 8; ++t) {
    config[16 + 2 * t] = static_cast<unsigned char>(kRowBytes);  // colsb[t], little endian.
    config[48 + t] = static_cast<unsigned char>(kTile);          // rows[t].
  }
  _tile_loadconfig(config);
}

// Where one tile pass reads: A's part 0 at the first row (row stride
// a_stride, parts a_part apart), B's part 0 of the first column block at
// the first K step (parts b_part apart, blocks b_block apart).
struct TileOperands {
  const char* a;
  int64_t a_stride;
  int64_t a_part;
  const char* b;
  int64_t b_part;
  int64_t b_block;
  int64_t steps;  // K steps of 32.
  int products;
};

template <int kRows, int kCols>
void tile_products(const TileOperands& o, float* c) {
  _tile_zero(0);
  if constexpr (kCols == 2) _tile_zero(1);
  if constexpr (kRows == 2) _tile_zero(2);
  if constexpr (kRows == 2 && kCols == 2) _tile_zero(3);
  const bool six = o.products == 6;
  for (int64_t s = 0; s < o.steps; ++s) {
    const char* a = o.a + s * kKStep * 2;
    const char* b = o.b + s * kTile * kRowBytes;
    auto load_a = [&](int part) {
      _tile_loadd(4, a + part * o.a_part, o.a_stride);
      if constexpr (kRows == 2) _tile_loadd(5, a + part * o.a_part + kTile * o.a_stride, o.a_stride);
    };
    auto load_b = [&](int part) {
      _tile_loadd(6, b + part * o.b_part, kRowBytes);
      if constexpr (kCols == 2) _tile_loadd(7, b + part * o.b_part + o.b_block, kRowBytes);
    };
    auto products = [&]() {
      _tile_dpbf16ps(0, 4, 6);
      if constexpr (kCols == 2) _tile_dpbf16ps(1, 4, 7);
      if constexpr (kRows == 2) _tile_dpbf16ps(2, 5, 6);
      if constexpr (kRows == 2 && kCols == 2) _tile_dpbf16ps(3, 5, 7);
    };
    // Ordered so each load serves the next product: hh, hm, mm, mh, lh, hl.
    load_a(0);
    load_b(0);
    products();  // hh
    load_b(1);
    products();  // hm
    load_a(1);
    if (six) products();  // mm
    load_b(0);
    products();  // mh
    if (!six) continue;
    load_a(2);
    products();  // lh
    load_a(0);
    load_b(2);
    products();  // hl
  }
  constexpr int64_t ldc = kCols * kTile;
  _tile_stored(0, c, ldc * 4);
  if constexpr (kCols == 2) _tile_stored(1, c + kTile, ldc * 4);
  if constexpr (kRows == 2) _tile_stored(2, c + kTile * ldc, ldc * 4);
  if constexpr (kRows == 2 && kCols == 2) _tile_stored(3, c + kTile * ldc + kTile, ldc * 4);
}

// The epilogue of a tile pass's [rows, cols] results (row stride 32) into
// C at `out` (its column j0 of the bias); kClamp: then max with lo, min with
// hi (a fused ReLU / ReLU6, no second pass over C; NaN stays NaN, as with
// std::max / std::min).
template <bool kClamp>
void store_tiles(const float* tile, int64_t tile_ld, int64_t rows, int64_t cols, float* out,
                 int64_t ldc, const Epilogue& ep, int64_t j0) {
  const __m512 alpha = _mm512_set1_ps(ep.alpha);
  const __m512 lo = _mm512_set1_ps(ep.lo);
  const __m512 hi = _mm512_set1_ps(ep.hi);
  for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
    const __mmask16 mask = mask16(cols - c0);
    const __m512 bias = ep.bias != nullptr
                            ? _mm512_mul_ps(_mm512_set1_ps(ep.beta),
                                            _mm512_maskz_loadu_ps(mask, ep.bias + j0 + c0))
                            : _mm512_setzero_ps();
    for (int64_t r = 0; r < rows; ++r) {
      float* dst = out + r * ldc + c0;
      __m512 add = bias;
      if (ep.accumulate) add = _mm512_add_ps(add, _mm512_maskz_loadu_ps(mask, dst));
      __m512 x = _mm512_fmadd_ps(alpha, _mm512_load_ps(tile + r * tile_ld + c0), add);
      if constexpr (kClamp) x = _mm512_min_ps(hi, _mm512_max_ps(lo, x));
      _mm512_mask_storeu_ps(dst, mask, x);
    }
  }
}

void store_block(const float* tile, int64_t tile_ld, int64_t rows, int64_t cols, float* out,
                 int64_t ldc, const Epilogue& ep, int64_t j0) {
  if (ep.clamp) {
    store_tiles<true>(tile, tile_ld, rows, cols, out, ldc, ep, j0);
  } else {
    store_tiles<false>(tile, tile_ld, rows, cols, out, ldc, ep, j0);
  }
}

size_t split_weight_bytes(int64_t n, int64_t k) {
  return static_cast<size_t>(ceil_div(n, kTile) * kParts * b_part_bytes(round_up(k, kKStep)));
}

bool split_weight(const float* w, int64_t ldw, int64_t n, int64_t k, void* out) {
  return split_weight_blocks(w, ldw, n, k, static_cast<char*>(out), b_part_bytes(round_up(k, kKStep)));
}

size_t scratch_bytes() {
  return static_cast<size_t>(kParts * kMc * a_row_stride(kKc) +
                             kNcb / kTile * kParts * b_part_bytes(kKc));
}

bool nt_block(const AmxNtBlock& blk, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const int64_t k = blk.k;
  const int64_t kc_step = round_up(ceil_div(k, ceil_div(k, kKc)), kKStep);
  const int64_t a_stride = a_row_stride(kc_step);
  const int64_t a_part = kMc * a_stride;
  const bool pre_split = blk.split_w != nullptr;
  const int64_t k_pad = round_up(k, kKStep);
  // B's part and block strides: the whole split weight's, or the scratch's.
  const int64_t b_part = pre_split ? b_part_bytes(k_pad) : b_part_bytes(kc_step);
  const int64_t b_block = kParts * b_part;
  const int64_t ncb = pre_split ? n1 - n0 : kNcb;
  const size_t need = static_cast<size_t>(kParts * a_part) +
                      (pre_split ? 0 : static_cast<size_t>(kNcb / kTile * b_block));
  if (need > blk.scratch_bytes) return false;
  char* a_split = static_cast<char*>(blk.scratch);
  char* b_split = a_split + kParts * a_part;
  alignas(64) float tile[2 * kTile * 2 * kTile];
  bool finite = true;
  configure();
  for (int64_t ic = m0; ic < m1 && finite; ic += kMc) {
    const int64_t mc = m1 - ic < kMc ? m1 - ic : kMc;
    const int64_t rows_pad = round_up(mc, kTile);
    for (int64_t pc = 0; pc < k && finite; pc += kc_step) {
      const int64_t kc = k - pc < kc_step ? k - pc : kc_step;
      finite = split_rows(blk.a + ic * blk.lda + pc, blk.lda, mc, rows_pad, kc, a_split, a_stride,
                          a_part);
      Epilogue ep = blk.ep;
      if (pc > 0) {
        ep.accumulate = true;
        ep.bias = nullptr;
      }
      ep.clamp = ep.clamp && pc + kc >= k;  // Partial sums stay unclamped.
      for (int64_t jc = n0; jc < n1 && finite; jc += ncb) {
        const int64_t nc = n1 - jc < ncb ? n1 - jc : ncb;
        const char* b;
        if (pre_split) {
          b = static_cast<const char*>(blk.split_w) + jc / kTile * b_block + pc / 2 * kRowBytes;
        } else {
          finite = split_weight_blocks(blk.w + jc * blk.ldw + pc, blk.ldw, nc, kc, b_split, b_part);
          b = b_split;
        }
        TileOperands o{a_split, a_stride, a_part, nullptr, b_part, b_block,
                       round_up(kc, kKStep) / kKStep, blk.products};
        for (int64_t j = 0; j < nc; j += 2 * kTile) {
          o.b = b + j / kTile * b_block;
          const bool two_cols = nc - j > kTile;
          const int64_t cols = nc - j < 2 * kTile ? nc - j : 2 * kTile;
          for (int64_t i = 0; i < rows_pad; i += 2 * kTile) {
            o.a = a_split + i * a_stride;
            const bool two_rows = rows_pad - i > kTile;
            int64_t ld = kTile;
            if (two_rows && two_cols) {
              tile_products<2, 2>(o, tile);
              ld = 2 * kTile;
            } else if (two_rows) {
              tile_products<2, 1>(o, tile);
            } else if (two_cols) {
              tile_products<1, 2>(o, tile);
              ld = 2 * kTile;
            } else {
              tile_products<1, 1>(o, tile);
            }
            const int64_t rows = mc - i < 2 * kTile ? mc - i : 2 * kTile;
            store_block(tile, ld, rows, cols, blk.c + (ic + i) * blk.ldc + jc + j, blk.ldc, ep,
                        jc + j);
          }
        }
      }
    }
  }
  _tile_release();
  return finite;
}

constexpr AmxGemmKernels kKernels = {&nt_block, &split_weight_bytes, &split_weight,
                                     &scratch_bytes};

}  // namespace

const AmxGemmKernels* amx_gemm_kernels() { return &kKernels; }

}  // namespace torchlight::optimized::internal
