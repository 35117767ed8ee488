// linear_8da4w on AMX-INT8 tiles (linear_8da4w_amx.h). Built with
// -mamx-tile -mamx-int8 and AVX-512 F/BW/VL/VNNI (every AMX CPU has them);
// runs only where cpu_has_quant_isa(kAmx).
//
// Per call and block of 32 columns (two panels of 16), the weights are
// unpacked once into the B layout and their group sums folded; then every
// block of 32 rows (two A tiles read in place) meets them: per group, four
// C tiles of 16 x 16 exact int32 sums (K = 64 a step; 32 for groups that
// are not a multiple of 64), stored and scaled into fp32 sums held in L1.
// The rows and columns past the last whole block take a one-tile variant;
// columns past N are computed on padding and not stored.
#include "kernels/quantized/linear_8da4w_amx.h"

#include <immintrin.h>

#include <algorithm>

#include "kernels/quantized/amx_tile_config.h"
#include "kernels/quantized/per_token_qparams.h"
#include "kernels/quantized/quantize_arranged_8da4w.h"
#include "kernels/quantized/transpose16_avx512.h"

namespace torchlight::quantized {
namespace {

constexpr int64_t kTile = 16;       // Rows of a tile, int32 columns of a C tile.
constexpr int64_t kRowBytes = 64;   // Bytes of a tile row.
constexpr int kBlocks = 2;          // Column (and row) blocks per step.

size_t block_bytes(int64_t k, int64_t group) {
  // B rows [K / 4][64 bytes], the scales by group [groups][16], the folded sums [16].
  return static_cast<size_t>(k / 4 * kRowBytes + (k / group) * kTile * 4 + kTile * 4);
}

// One block of 16 columns in a thread's panel.
struct Panel {
  int8_t* b;       // [K / 4][64]
  float* scales;   // [groups][16]: each column's scale of group g, 0 past N.
  float* w_sums;   // [16]: sum_g scale * sum of the group's weights.
};

Panel panel_at(void* memory, int64_t k, int64_t group, int index) {
  char* base = static_cast<char*>(memory) + index * block_bytes(k, group);
  Panel p;
  p.b = reinterpret_cast<int8_t*>(base);
  p.scales = reinterpret_cast<float*>(base + k / 4 * kRowBytes);
  p.w_sums = p.scales + (k / group) * kTile;
  return p;
}

// K values per tile step: 64 where the group is a multiple of 64, else 32
// (a step never crosses a group's end).
int64_t step_of(int64_t group) { return group % kRowBytes == 0 ? kRowBytes : 32; }

// C tiles 0-3 (row block rb, column block cb at 2 rb + cb), A tiles 4-5
// (activations, `step` values of 16 rows), B tiles 6-7 (the panels' step / 4 rows).
void configure(int64_t step) {
  AmxTileConfig config;
  for (int t = 0; t < 4; ++t) config.set(t, kTile, kRowBytes);
  for (int t = 4; t < 6; ++t) config.set(t, kTile, step);
  for (int t = 6; t < 8; ++t) config.set(t, step / 4, kRowBytes);
  _tile_loadconfig(&config);
}

// Columns [n0, n0 + cols) (cols <= 16) into panel p: signed weights in the
// B layout, the scales by group, and the folded weight sums (per group the
// exact int32 sum of the weights, then a fused multiply-add by its scale).
void unpack_block(const Rows8da4wAmx& rows, int64_t n0, int64_t cols, const Panel& p) {
  const int64_t k = rows.k;
  const int64_t groups = k / rows.group;
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t c = 0; c < kTile; ++c) {
      p.scales[g * kTile + c] = c < cols ? rows.w_scales[(n0 + c) * groups + g] : 0.0f;
    }
  }
  const int64_t dwords = k / 8;  // Packed dwords of a column (8 weights each).
  const int64_t dwords_per_group = rows.group / 8;
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
  const __m512i eight = _mm512_set1_epi8(8);
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i group_sum = _mm512_setzero_si512();
  __m512 w_sums = _mm512_setzero_ps();
  for (int64_t j0 = 0; j0 < dwords; j0 += kTile) {
    const int64_t count = std::min<int64_t>(kTile, dwords - j0);
    const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1);
    __m512i r[kTile];
    for (int64_t c = 0; c < kTile; ++c) {
      r[c] = c < cols ? _mm512_maskz_loadu_epi32(mask, rows.weight + (n0 + c) * (k / 2) + j0 * 4)
                      : _mm512_setzero_si512();
    }
    transpose16(r);
    for (int64_t j = 0; j < count; ++j) {
      const __m512i high = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(r[j], 4), low_mask), eight);
      const __m512i low = _mm512_sub_epi8(_mm512_and_si512(r[j], low_mask), eight);
      _mm512_store_si512(p.b + 2 * (j0 + j) * kRowBytes, high);
      _mm512_store_si512(p.b + (2 * (j0 + j) + 1) * kRowBytes, low);
      group_sum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(group_sum, ones, high), ones, low);
      if ((j0 + j + 1) % dwords_per_group == 0) {
        const int64_t g = (j0 + j + 1) / dwords_per_group - 1;
        w_sums = _mm512_fmadd_ps(_mm512_cvtepi32_ps(group_sum), _mm512_load_ps(p.scales + g * kTile),
                                 w_sums);
        group_sum = _mm512_setzero_si512();
      }
    }
  }
  _mm512_store_ps(p.w_sums, w_sums);
}

// Rows [r0, r0 + 16 kRowBlocks) by the panels' columns [n0, n0 + 16
// kColBlocks), columns past n_end not stored.
template <int kRowBlocks, int kColBlocks>
void tiles(const Rows8da4wAmx& rows, const Panel (&panel)[kBlocks], int64_t r0, int64_t n0,
           int64_t n_end) {
  const int64_t k = rows.k;
  const int64_t group = rows.group;
  const int64_t groups = k / group;
  const int64_t step = step_of(group);
  alignas(64) float acc[kRowBlocks][kColBlocks][kTile][kTile] = {};
  // Group g's sums go to c[g % 2]; they are scaled into acc after group g +
  // 1's multiplies are issued (so the vector work overlaps them) and before
  // group g + 1's tile stores (vector loads issued after a tile store still
  // waiting for its multiplies wait with it). acc takes the groups in order,
  // as before: the same floats.
  alignas(64) int32_t c[2][kRowBlocks][kColBlocks][kTile][kTile];
  const auto scale_group = [&](int64_t g) {
    const auto& sums = c[g % 2];
    for (int cb = 0; cb < kColBlocks; ++cb) {
      const __m512 scale = _mm512_load_ps(panel[cb].scales + g * kTile);
      for (int rb = 0; rb < kRowBlocks; ++rb) {
        for (int64_t r = 0; r < kTile; ++r) {
          const __m512 sum = _mm512_cvtepi32_ps(_mm512_load_si512(sums[rb][cb][r]));
          _mm512_store_ps(acc[rb][cb][r], _mm512_fmadd_ps(sum, scale, _mm512_load_ps(acc[rb][cb][r])));
        }
      }
    }
  };
  const int8_t* a0 = rows.xq + r0 * rows.stride;
  const int8_t* a1 = a0 + kTile * rows.stride;
  for (int64_t g = 0; g < groups; ++g) {
    _tile_zero(0);
    if constexpr (kColBlocks == 2) _tile_zero(1);
    if constexpr (kRowBlocks == 2) _tile_zero(2);
    if constexpr (kRowBlocks == 2 && kColBlocks == 2) _tile_zero(3);
    for (int64_t k0 = g * group; k0 < (g + 1) * group; k0 += step) {
      _tile_loadd(4, a0 + k0, rows.stride);
      _tile_loadd(6, panel[0].b + k0 / 4 * kRowBytes, kRowBytes);
      if constexpr (kColBlocks == 2) _tile_loadd(7, panel[1].b + k0 / 4 * kRowBytes, kRowBytes);
      if constexpr (kRowBlocks == 2) _tile_loadd(5, a1 + k0, rows.stride);
      _tile_dpbssd(0, 4, 6);
      if constexpr (kColBlocks == 2) _tile_dpbssd(1, 4, 7);
      if constexpr (kRowBlocks == 2) _tile_dpbssd(2, 5, 6);
      if constexpr (kRowBlocks == 2 && kColBlocks == 2) _tile_dpbssd(3, 5, 7);
    }
    if (g > 0) scale_group(g - 1);
    auto& sums = c[g % 2];
    _tile_stored(0, sums[0][0], kRowBytes);
    if constexpr (kColBlocks == 2) _tile_stored(1, sums[0][1], kRowBytes);
    if constexpr (kRowBlocks == 2) _tile_stored(2, sums[1][0], kRowBytes);
    if constexpr (kRowBlocks == 2 && kColBlocks == 2) _tile_stored(3, sums[1][1], kRowBytes);
  }
  scale_group(groups - 1);
  for (int cb = 0; cb < kColBlocks; ++cb) {
    const int64_t col0 = n0 + cb * kTile;
    const int64_t cols = std::min<int64_t>(kTile, n_end - col0);
    if (cols <= 0) continue;
    const __mmask16 mask = static_cast<__mmask16>((1u << cols) - 1);
    const __m512 w_sums = _mm512_load_ps(panel[cb].w_sums);
    const __m512 bias = rows.bias != nullptr ? _mm512_maskz_loadu_ps(mask, rows.bias + col0)
                                             : _mm512_setzero_ps();
    for (int rb = 0; rb < kRowBlocks; ++rb) {
      for (int64_t r = 0; r < kTile; ++r) {
        const int64_t row = r0 + rb * kTile + r;
        if (row >= rows.rows) break;
        const __m512 neg_zp = _mm512_set1_ps(-static_cast<float>(rows.zero_point[row]));
        const __m512 sum = _mm512_fmadd_ps(neg_zp, w_sums, _mm512_load_ps(acc[rb][cb][r]));
        _mm512_mask_storeu_ps(rows.out + row * rows.n + col0, mask,
                              _mm512_fmadd_ps(sum, _mm512_set1_ps(rows.scale[row]), bias));
      }
    }
  }
}

}  // namespace

size_t linear_8da4w_amx_panel_bytes(int64_t k, int64_t group) {
  return kBlocks * block_bytes(k, group);
}

void token_qparams_8da4w_amx(const float* x, int64_t k, double* scale, int64_t* zero_point) {
  token_qparams_from_range<float>(row_range_f32_avx512(x, k), scale, zero_point);
}

void quantize_rows_8da4w_amx(const float* x, int64_t rows, int64_t k, int64_t stride, int8_t* xq,
                             int32_t* zero_points, float* row_scales) {
  // Eight rows a step, each stage for all of them: the qparams' float64
  // divisions of eight rows are independent and overlap, where one row at
  // a time waited for each chain (a tenth of a 128 x 288 x 288 call).
  constexpr int64_t kStep = 8;
  for (int64_t r0 = 0; r0 < rows; r0 += kStep) {
    const int64_t n = std::min(kStep, rows - r0);
    RowRange range[kStep];
    double scale[kStep];
    int64_t zero_point[kStep];
    for (int64_t r = 0; r < n; ++r) range[r] = row_range_f32_avx512(x + (r0 + r) * k, k);
    for (int64_t r = 0; r < n; ++r) {
      token_qparams_from_range<float>(range[r], &scale[r], &zero_point[r]);
    }
    for (int64_t r = 0; r < n; ++r) {
      zero_points[r0 + r] = static_cast<int32_t>(zero_point[r]);
      row_scales[r0 + r] = static_cast<float>(scale[r]);
      quantize_row_8da4w_amx(x + (r0 + r) * k, k, scale[r], zero_point[r], xq + (r0 + r) * stride);
    }
  }
}

void quantize_row_8da4w_amx(const float* x, int64_t k, double scale, int64_t zero_point,
                            int8_t* out) {
  // quantize_token_int8's float64 steps (per_token_qparams.h): x * (1 /
  // scale) + zero_point, clamped (max/min keep NaN), rounded half to even
  // (the convert's embedded rounding, as adding and taking away 1.5 * 2^52
  // does), NaN to 0 (masked off). No FMA contraction.
  const __m512d inv = _mm512_set1_pd(1.0 / scale);
  const __m512d zp = _mm512_set1_pd(static_cast<double>(zero_point));
  const __m512d lo = _mm512_set1_pd(-128.0), hi = _mm512_set1_pd(127.0);
  auto eight = [&](const float* v8) {
    __m512d v = _mm512_add_pd(_mm512_mul_pd(_mm512_cvtps_pd(_mm256_loadu_ps(v8)), inv), zp);
    v = _mm512_min_pd(hi, _mm512_max_pd(lo, v));
    return _mm512_maskz_cvt_roundpd_epi32(_mm512_cmp_pd_mask(v, v, _CMP_ORD_Q), v,
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  };
  // The same in float32 first, 16 lanes a step: fma(x, float(1 / scale),
  // zero_point) is within 2^-24 * (|x / scale| + |v|) of the float64 value,
  // under 2.3e-5 wherever the result is not clamped (|x / scale| <= 255.5),
  // so it rounds to the same integer unless it lies within 2^-10 of a
  // half; 16 values with any such lane take the float64 steps. (Far outside
  // the range both clamp; NaN and inf never count as near a half.)
  const __m512 inv_f = _mm512_set1_ps(static_cast<float>(1.0 / scale));
  const __m512 zp_f = _mm512_set1_ps(static_cast<float>(zero_point));
  const __m512 lo_f = _mm512_set1_ps(-128.0f), hi_f = _mm512_set1_ps(127.0f);
  const __m512 near_half = _mm512_set1_ps(0.5f - 1.0f / 1024);
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  // Each block of 8: the even elements, then the odd ones.
  const __m512i order = _mm512_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15);
  for (int64_t i = 0; i < k; i += 16) {
    __m512 v = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), inv_f, zp_f);
    const __m512 off = _mm512_abs_ps(_mm512_sub_ps(v, _mm512_roundscale_ps(v, kNearest)));
    __m512i q;
    if (_mm512_cmp_ps_mask(off, near_half, _CMP_GT_OQ) == 0) {
      v = _mm512_min_ps(hi_f, _mm512_max_ps(lo_f, v));
      q = _mm512_maskz_cvt_roundps_epi32(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v, kNearest);
    } else {
      q = _mm512_inserti64x4(_mm512_castsi256_si512(eight(x + i)), eight(x + i + 8), 1);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm512_cvtepi32_epi8(_mm512_permutexvar_epi32(order, q)));
  }
}

void linear_8da4w_amx_columns(const Rows8da4wAmx& rows, void* memory, int64_t n_begin,
                              int64_t n_end) {
  configure(step_of(rows.group));
  const Panel panel[kBlocks] = {panel_at(memory, rows.k, rows.group, 0),
                                panel_at(memory, rows.k, rows.group, 1)};
  const int64_t padded_rows = (rows.rows + kTile - 1) / kTile * kTile;
  for (int64_t n0 = n_begin; n0 < n_end; n0 += kBlocks * kTile) {
    const bool two_columns = n_end - n0 > kTile;
    unpack_block(rows, n0, std::min<int64_t>(kTile, n_end - n0), panel[0]);
    if (two_columns) unpack_block(rows, n0 + kTile, std::min<int64_t>(kTile, n_end - n0 - kTile), panel[1]);
    for (int64_t r0 = 0; r0 < padded_rows; r0 += kBlocks * kTile) {
      const bool two_rows = padded_rows - r0 > kTile;
      dispatch_tile_blocks(two_rows, two_columns, [&](auto row_blocks, auto column_blocks) {
        tiles<decltype(row_blocks)::value, decltype(column_blocks)::value>(rows, panel, r0, n0, n_end);
      });
    }
  }
  _tile_release();
}

}  // namespace torchlight::quantized
