// The x86 loops of linear_8da4w (linear_8da4w.h), written once and compiled
// per instruction set by linear_8da4w_{avx2,avxvnni,avx512vnni}.cpp, each
// built with its own flags (CMakeLists.txt) and run only on CPUs with them
// (quant_isa.h). Include it only from those files: everything here has
// internal linkage, so no build's inline copy can reach another's path.
//
// Weights are read 64 at a time where they can be (chunk_8da4w): one 32-byte
// load of two chunks gives their low nibbles (and) and their high nibbles
// (shift, and), u in [0, 15], the unsigned operand of maddubs or vpdpbusd;
// the two arranged activation chunks are regrouped to match with two lane
// permutes, shared by every column. A chunk alone takes 16 bytes broadcast
// to both halves (blend, shift, and). The exact int32 dot products land in
// the lanes linear_8da4w.h names: with VNNI (AVX-VNNI, or AVX-512 VNNI's
// 256-bit form) one vpdpbusd adds four u x products to a lane, in place of
// maddubs, madd with ones and an add; without it, maddubs + madd, with int16
// pair sums held across up to eight chunks. The integer sums are the same
// either way, so every build gives the same floats. sad_epu8 gives sum u.
// Per group the lanes are scaled into float sums (the products per row, sum
// u per column; two groups of 32 at once with a scale vector holding each
// group's scale in its four lanes); they are folded and corrected once per
// column. Against one chunk per load, the pairs save a third of the
// instructions per weight (decode, group 32, stories15m shapes: 10-25% less
// time, bench/quantized BM_shape_8da4w). Decode takes four columns at once
// (group 32 in the AVX-512 build: eight),
// two rows two (independent chains for the out-of-order core); more rows
// take one (the registers are full).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/quantized/linear_8da4w.h"

namespace torchlight::quantized {
namespace {

#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
constexpr bool kVnni = true;
inline __m256i dpbusd(__m256i acc, __m256i u, __m256i x) { return _mm256_dpbusd_epi32(acc, u, x); }
#elif defined(__AVXVNNI__)
constexpr bool kVnni = true;
inline __m256i dpbusd(__m256i acc, __m256i u, __m256i x) { return _mm256_dpbusd_avx_epi32(acc, u, x); }
#else
constexpr bool kVnni = false;
#endif

// fold_lanes_8da4w in registers (same order: i + 4, then i + 2, then 0 + 1),
// sparing a store and eight reloads per column.
inline float fold(__m256 v) {
  const __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

// fold_corrections_8da4w in registers: sum_g w_scales[g] * correction[g]
// with group g in lane g % 8, the groups past the last whole vector (at
// most seven, `tail` marks their lanes) fused in by masked loads and kept
// only in their lanes, so every lane sees the same fused multiply-adds as
// the scalar form; then folded. Spares a store and a scalar loop per column
// and row (K = 288 has nine groups of 32).
inline __m256 correction_lanes(const float* w_scales, const float* correction,
                               int64_t whole_groups, int64_t groups, __m256i tail) {
  __m256 corr = _mm256_setzero_ps();
  for (int64_t g = 0; g < whole_groups; g += kLanes8da4w) {
    corr = _mm256_fmadd_ps(_mm256_loadu_ps(w_scales + g), _mm256_loadu_ps(correction + g), corr);
  }
  if (whole_groups < groups) {
#if defined(__AVX512VL__)
    // Masked loads and a masked fused multiply-add: the lanes past the tail
    // keep corr as the blend below keeps them, in one vector op instead of
    // four (decode finishes every column with this; K = 288 has a tail).
    (void)tail;
    const auto lanes = static_cast<__mmask8>((1u << (groups - whole_groups)) - 1);
    corr = _mm256_mask3_fmadd_ps(_mm256_maskz_loadu_ps(lanes, w_scales + whole_groups),
                                 _mm256_maskz_loadu_ps(lanes, correction + whole_groups), corr, lanes);
#else
    const __m256 with_tail = _mm256_fmadd_ps(_mm256_maskload_ps(w_scales + whole_groups, tail),
                                             _mm256_maskload_ps(correction + whole_groups, tail), corr);
    corr = _mm256_blendv_ps(corr, with_tail, _mm256_castsi256_ps(tail));
#endif
  }
  return corr;
}

inline float fold_corrections(const float* w_scales, const float* correction,
                              int64_t whole_groups, int64_t groups, __m256i tail) {
  return fold(correction_lanes(w_scales, correction, whole_groups, groups, tail));
}

// fold() of four vectors at once, [fold(v0), fold(v1), fold(v2), fold(v3)]:
// the same additions in the same order (lanes i + 4, then i + 2, then 0 +
// 1), with the halves' sums transposed so three adds serve all four.
inline __m128 fold4(__m256 v0, __m256 v1, __m256 v2, __m256 v3) {
  __m128 h0 = _mm_add_ps(_mm256_castps256_ps128(v0), _mm256_extractf128_ps(v0, 1));
  __m128 h1 = _mm_add_ps(_mm256_castps256_ps128(v1), _mm256_extractf128_ps(v1, 1));
  __m128 h2 = _mm_add_ps(_mm256_castps256_ps128(v2), _mm256_extractf128_ps(v2, 1));
  __m128 h3 = _mm_add_ps(_mm256_castps256_ps128(v3), _mm256_extractf128_ps(v3, 1));
  _MM_TRANSPOSE4_PS(h0, h1, h2, h3);  // h_i = lane i of every vector's halves' sum.
  return _mm_add_ps(_mm_add_ps(h0, h2), _mm_add_ps(h1, h3));
}

// Lanes [0, groups % 8) set: the tail fold_corrections adds.
inline __m256i tail_lanes(int64_t groups) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(groups % kLanes8da4w)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// One chunk of 32 weights (16 packed bytes, broadcast to both halves):
// the low nibbles in the low half, the high nibbles in the high half.
inline __m256i unpack_chunk(const uint8_t* w, __m256i low_mask) {
  const __m256i both = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  return _mm256_and_si256(_mm256_blend_epi32(both, _mm256_srli_epi16(both, 4), 0xF0), low_mask);
}

// Two chunks (32 packed bytes): lo holds their low nibbles, hi their high
// nibbles, the first chunk's in the low halves.
struct PairWeights {
  __m256i lo, hi;
};
inline PairWeights unpack_pair(const uint8_t* w, __m256i low_mask) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  return {_mm256_and_si256(v, low_mask), _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask)};
}

// Two arranged activation chunks regrouped to match unpack_pair: a = both
// chunks' first halves (the positions that meet low nibbles), b = their
// second halves.
struct PairActivations {
  __m256i a, b;
};
inline PairActivations load_pair(const int8_t* x) {
  const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32));
  return {_mm256_permute2x128_si256(x0, x1, 0x20), _mm256_permute2x128_si256(x0, x1, 0x31)};
}

// The same two vectors from activations already in paired order
// (pair_rows_8da4w): plain loads.
inline PairActivations load_paired(const int8_t* x) {
  return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32))};
}

template <bool kPairedX>
inline PairActivations activations(const int8_t* x) {
  if constexpr (kPairedX) {
    return load_paired(x);
  } else {
    return load_pair(x);
  }
}

// int16 pair sums of a pair of chunks: lane i < 8 holds the first chunk's
// positions 2i, 2i + 1 and 16 + 2i, 17 + 2i (so madd puts its positions
// 4j..4j+3 and 16+4j..19+4j in int32 lane j), lanes 8..15 the second's.
inline __m256i pair_products(const PairWeights& w, const PairActivations& x) {
  return _mm256_add_epi16(_mm256_maddubs_epi16(w.lo, x.a), _mm256_maddubs_epi16(w.hi, x.b));
}

// acc plus a pair of chunks' exact products in int32 lanes (lane j: the
// first chunk's positions 4j..4j+3 and 16+4j..19+4j, j < 4; the second's
// in lanes 4..7).
inline __m256i add_pair_dot(__m256i acc, const PairWeights& w, const PairActivations& x) {
#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
  return dpbusd(dpbusd(acc, w.lo, x.a), w.hi, x.b);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pair_products(w, x), _mm256_set1_epi16(1)));
#endif
}

// acc plus one chunk's exact products (positions 4j..4j+3 in lane j).
inline __m256i add_chunk_dot(__m256i acc, __m256i u, __m256i x) {
#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
  return dpbusd(acc, u, x);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1)));
#endif
}

// sum u of a pair of chunks in lanes 0, 2 (first chunk) and 4, 6 (second);
// lo + hi <= 30 fits a byte.
inline __m256i pair_usum(const PairWeights& w, __m256i zero) {
  return _mm256_sad_epu8(_mm256_add_epi8(w.lo, w.hi), zero);
}

// Lanes 0-3 of scales[0], lanes 4-7 of scales[1].
inline __m256 pair_scales(const float* scales) {
  const __m256 both = _mm256_castpd_ps(_mm256_broadcast_sd(reinterpret_cast<const double*>(scales)));
  return _mm256_permutevar_ps(both, _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
}

// fold() of eight vectors at once, in the order [v0, v2, v4, v6, v1, v3, v5,
// v7]: the same additions (lanes i + 4, then i + 2, then 0 + 1) with the
// halves' sums regrouped so seven adds serve all eight.
inline __m256 fold8(const __m256 v[8]) {
  __m256 h[4];
  for (int i = 0; i < 4; ++i) {
    h[i] = _mm256_add_ps(_mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x20),
                         _mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x31));
  }
  // h[i] = [v(2i) halves' sums | v(2i+1) halves' sums]; lanes i + 2 next.
  const __m256 q0 = _mm256_add_ps(_mm256_shuffle_ps(h[0], h[1], _MM_SHUFFLE(1, 0, 1, 0)),
                                  _mm256_shuffle_ps(h[0], h[1], _MM_SHUFFLE(3, 2, 3, 2)));
  const __m256 q1 = _mm256_add_ps(_mm256_shuffle_ps(h[2], h[3], _MM_SHUFFLE(1, 0, 1, 0)),
                                  _mm256_shuffle_ps(h[2], h[3], _MM_SHUFFLE(3, 2, 3, 2)));
  // q0 = [v0 q0 q1, v2 q0 q1 | v1 .., v3 ..]; then lanes 0 + 1.
  return _mm256_add_ps(_mm256_shuffle_ps(q0, q1, _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm256_shuffle_ps(q0, q1, _MM_SHUFFLE(3, 1, 3, 1)));
}

// fold() of eight columns' vectors, [fold(v[0]), ..., fold(v[7])]: fold8
// fed [v0, v4, v1, v5, v2, v6, v3, v7], which it returns in column order.
inline __m256 fold8_columns(const __m256 (&v)[8]) {
  const __m256 order[8] = {v[0], v[4], v[1], v[5], v[2], v[6], v[3], v[7]};
  return fold8(order);
}

// finish_column_8da4w and out = fma(sum, x_scale, bias) for four rows by
// two columns, as vectors: fold8 of (row r, column c) at 2r + c gives
// column 0's rows in the low half and column 1's in the high half. The same
// fused multiply-adds and subtraction per lane as the scalar steps.
inline void finish_tile_4x2(const Row8da4w& row, int64_t n, const __m256 (&acc)[4][2],
                            int64_t whole_groups, int64_t groups, __m256i tail) {
  __m256 products[8], corr[8];
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 2; ++c) {
      products[2 * r + c] = acc[r][c];
      corr[2 * r + c] = correction_lanes(row.w_scales + (n + c) * groups, row.correction + r * groups,
                                         whole_groups, groups, tail);
    }
  }
  const __m256 p = fold8(products);
  const __m256 k = fold8(corr);
  const __m128 zp = _mm_cvtepi32_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row.zero_point)));
  const __m128 scale = _mm_loadu_ps(row.scale);
  const __m128 negated = _mm_xor_ps(zp, _mm_set1_ps(-0.0f));  // -zp exactly, as the scalar form.
  const __m256 neg_zp = _mm256_set_m128(negated, negated);
  const __m256 scales = _mm256_set_m128(scale, scale);
  const __m256 u = _mm256_set_m128(_mm_set1_ps(row.u_folded[n + 1]), _mm_set1_ps(row.u_folded[n]));
  const __m256 bias = row.bias != nullptr
                          ? _mm256_set_m128(_mm_set1_ps(row.bias[n + 1]), _mm_set1_ps(row.bias[n]))
                          : _mm256_setzero_ps();
  const __m256 sum = _mm256_sub_ps(_mm256_fmadd_ps(neg_zp, u, p), k);
  const __m256 out = _mm256_fmadd_ps(sum, scales, bias);
  // [r0 c0, r1 c0, r2 c0, r3 c0 | r0 c1, ...] to each row's pair of columns.
  const __m128 c0 = _mm256_castps256_ps128(out);
  const __m128 c1 = _mm256_extractf128_ps(out, 1);
  const __m128 rows01 = _mm_unpacklo_ps(c0, c1);  // r0 c0, r0 c1, r1 c0, r1 c1
  const __m128 rows23 = _mm_unpackhi_ps(c0, c1);
  _mm_storel_pi(reinterpret_cast<__m64*>(row.out + n), rows01);
  _mm_storeh_pi(reinterpret_cast<__m64*>(row.out + row.n + n), rows01);
  _mm_storel_pi(reinterpret_cast<__m64*>(row.out + 2 * row.n + n), rows23);
  _mm_storeh_pi(reinterpret_cast<__m64*>(row.out + 3 * row.n + n), rows23);
}

#if defined(__AVX512BW__) && defined(__AVX512VNNI__)
// AVX-512 build only, groups of a multiple of 128: four chunks of 32 a step
// from one 64-byte weight load, in 512-bit vectors whose halves are two of
// the 256-bit loop's pair steps (the low half chunks 0-1 in the lanes a pair
// takes, the high half chunks 2-3); each half sums in int32 across the
// group and the halves are added at its end (exact), then scaled as the
// 256-bit loop scales, so the same floats. Groups of 32 and 64 stay in the
// 256-bit loop: scaling every 32 or 64 values, the 512-bit step needs
// extracts and lost to it (bench/quantized/isa_bench.cpp: 0.8-1.0x).
struct WideWeights {
  __m512i lo, hi;
};
inline WideWeights unpack_wide(const uint8_t* w) {
  const __m512i v = _mm512_loadu_si512(w);
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
  return {_mm512_and_si512(v, low_mask), _mm512_and_si512(_mm512_srli_epi16(v, 4), low_mask)};
}

// Four arranged chunks (two pairs in paired order) regrouped to match
// unpack_wide: a = the four chunks' first halves, b = their second halves.
struct WideActivations {
  __m512i a, b;
};
template <bool kPairedX>
inline WideActivations wide_activations(const int8_t* x) {
  const __m512i x0 = _mm512_loadu_si512(x);
  const __m512i x1 = _mm512_loadu_si512(x + 64);
  if constexpr (kPairedX) {  // x0 = [a0 | b0] of the first pair, x1 the second's.
    return {_mm512_shuffle_i64x2(x0, x1, _MM_SHUFFLE(1, 0, 1, 0)),
            _mm512_shuffle_i64x2(x0, x1, _MM_SHUFFLE(3, 2, 3, 2))};
  } else {  // x0 = chunks 0, 1 (each: first half, second half), x1 = chunks 2, 3.
    return {_mm512_shuffle_i64x2(x0, x1, _MM_SHUFFLE(2, 0, 2, 0)),
            _mm512_shuffle_i64x2(x0, x1, _MM_SHUFFLE(3, 1, 3, 1))};
  }
}

inline __m512i add_wide_dot(__m512i acc, const WideWeights& w, const WideActivations& x) {
  return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(acc, w.lo, x.a), w.hi, x.b);
}

inline __m512i wide_usum(const WideWeights& w) {
  return _mm512_sad_epu8(_mm512_add_epi8(w.lo, w.hi), _mm512_setzero_si512());
}

inline __m256i add_halves(__m512i v) {
  return _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
}

// Every group of columns n..n + kCols - 1 into acc and uacc when the group
// is a multiple of 128 (returns the groups done; else 0 and the 256-bit
// loop does them).
template <int kRows, int kCols, bool kOwnU, bool kPairedX>
int64_t wide_groups(const Row8da4w& row, int64_t n, __m256 (&acc)[kRows][kCols],
                    __m256 (&uacc)[kCols]) {
  constexpr int64_t kPrefetchColumns = 16;
  const int64_t group = row.group;
  const int64_t groups = row.k / group;
  const int64_t packed = row.k / 2;
  if (group % 128 != 0) return 0;
  const __m512i zero = _mm512_setzero_si512();
  WideActivations x[kRows];
  for (int64_t g = 0; g < groups; ++g) {
    __m512i dot[kRows][kCols];
    __m512i usum[kCols];
    for (int c = 0; c < kCols; ++c) {
      usum[c] = zero;
      for (int r = 0; r < kRows; ++r) dot[r][c] = zero;
    }
    for (int64_t k0 = g * group; k0 < (g + 1) * group; k0 += 128) {
      for (int r = 0; r < kRows; ++r) x[r] = wide_activations<kPairedX>(row.xq + r * row.k + k0);
      for (int c = 0; c < kCols; ++c) {
        const uint8_t* w = row.weight + (n + c) * packed + k0 / 2;
        if constexpr (kRows == 1) {
          // Decode streams the classifier's weights from memory.
          _mm_prefetch(reinterpret_cast<const char*>(w + kPrefetchColumns * packed), _MM_HINT_T0);
        }
        const WideWeights wv = unpack_wide(w);
        if constexpr (kOwnU) usum[c] = _mm512_add_epi32(usum[c], wide_usum(wv));
        for (int r = 0; r < kRows; ++r) dot[r][c] = add_wide_dot(dot[r][c], wv, x[r]);
      }
    }
    for (int c = 0; c < kCols; ++c) {
      const __m256 w_scale = _mm256_set1_ps(row.w_scales[(n + c) * groups + g]);
      if constexpr (kOwnU) {
        uacc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(add_halves(usum[c])), w_scale, uacc[c]);
      }
      for (int r = 0; r < kRows; ++r) {
        acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(add_halves(dot[r][c])), w_scale, acc[r][c]);
      }
    }
  }
  return groups;
}
#endif

// Every group % 32 == 0 (linear_8da4w.h names the lanes). Group 32: groups
// two at a time (each chunk pair is two groups, scaled by pair_scales), an
// odd last group alone. Larger groups: chunk pairs within the group, an odd
// last chunk alone. kOwnU: the loop sums u itself (else row.u_folded has
// it); kPairedX: the activations are in paired order.
template <int kRows, int kCols, bool kOwnU = true, bool kPairedX = false>
void columns(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  const int64_t group = row.group;
  const int64_t groups = row.k / group;
  const int64_t chunks = group / 32;
  const int64_t packed = row.k / 2;
  const int64_t whole_groups = groups - groups % kLanes8da4w;
  const __m256i tail = tail_lanes(groups);
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  const __m256i ones16 = _mm256_set1_epi16(1);
  const __m256i zero = _mm256_setzero_si256();
  int64_t n = n_begin;
  for (; n + kCols <= n_end; n += kCols) {
    __m256 acc[kRows][kCols];
    __m256 uacc[kCols];
    for (int c = 0; c < kCols; ++c) {
      uacc[c] = _mm256_setzero_ps();
      for (int r = 0; r < kRows; ++r) acc[r][c] = _mm256_setzero_ps();
    }
    int64_t g = 0;
#if defined(__AVX512BW__) && defined(__AVX512VNNI__)
    g = wide_groups<kRows, kCols, kOwnU, kPairedX>(row, n, acc, uacc);
#endif
    if (group == 32) {
      for (; g + 2 <= groups; g += 2) {
        for (int c = 0; c < kCols; ++c) {
          const PairWeights w = unpack_pair(row.weight + (n + c) * packed + g * 16, low_mask);
          const __m256 scale = pair_scales(row.w_scales + (n + c) * groups + g);
          if constexpr (kOwnU) {
            uacc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(pair_usum(w, zero)), scale, uacc[c]);
          }
          for (int r = 0; r < kRows; ++r) {
            const PairActivations x = activations<kPairedX>(row.xq + r * row.k + g * 32);
            const __m256i dot = add_pair_dot(zero, w, x);
            acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc[r][c]);
          }
        }
      }
    }
    for (; g < groups; ++g) {
      __m256i dot[kRows][kCols];
      __m256i usum[kCols];
      __m256i pairs[kRows][kCols];
      for (int c = 0; c < kCols; ++c) {
        usum[c] = zero;
        for (int r = 0; r < kRows; ++r) dot[r][c] = pairs[r][c] = zero;
      }
      // maddubs pair sums are within 2 * 15 * 128 = 3840 (a chunk pair adds
      // two), so eight chunks add up in int16 before one madd widens them.
      // vpdpbusd adds to the int32 sums directly.
      int pending = 0;
      auto widen = [&] {
        if constexpr (!kVnni) {
          for (int r = 0; r < kRows; ++r) {
            for (int c = 0; c < kCols; ++c) {
              dot[r][c] = _mm256_add_epi32(dot[r][c], _mm256_madd_epi16(pairs[r][c], ones16));
              pairs[r][c] = zero;
            }
          }
        }
        pending = 0;
      };
      const int64_t k0 = g * group;
      int64_t ci = 0;
      for (; ci + 2 <= chunks; ci += 2) {
        if (pending == 8) widen();
        for (int c = 0; c < kCols; ++c) {
          const PairWeights w = unpack_pair(row.weight + (n + c) * packed + (k0 + ci * 32) / 2, low_mask);
          if constexpr (kOwnU) usum[c] = _mm256_add_epi32(usum[c], pair_usum(w, zero));
          for (int r = 0; r < kRows; ++r) {
            const PairActivations x = activations<kPairedX>(row.xq + r * row.k + k0 + ci * 32);
            if constexpr (kVnni) {
              dot[r][c] = add_pair_dot(dot[r][c], w, x);
            } else {
              pairs[r][c] = _mm256_add_epi16(pairs[r][c], pair_products(w, x));
            }
          }
        }
        pending += 2;
      }
      if (ci < chunks) {
        if (pending == 8) widen();
        for (int c = 0; c < kCols; ++c) {
          const __m256i u = unpack_chunk(row.weight + (n + c) * packed + (k0 + ci * 32) / 2, low_mask);
          if constexpr (kOwnU) usum[c] = _mm256_add_epi32(usum[c], _mm256_sad_epu8(u, zero));
          for (int r = 0; r < kRows; ++r) {
            const __m256i x =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row.xq + r * row.k + k0 + ci * 32));
            if constexpr (kVnni) {
              dot[r][c] = add_chunk_dot(dot[r][c], u, x);
            } else {
              pairs[r][c] = _mm256_add_epi16(pairs[r][c], _mm256_maddubs_epi16(u, x));
            }
          }
        }
      }
      widen();
      for (int c = 0; c < kCols; ++c) {
        const __m256 w_scale = _mm256_set1_ps(row.w_scales[(n + c) * groups + g]);
        if constexpr (kOwnU) uacc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(usum[c]), w_scale, uacc[c]);
        for (int r = 0; r < kRows; ++r) {
          acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[r][c]), w_scale, acc[r][c]);
        }
      }
    }
    if constexpr (kRows == 4 && kCols == 2 && !kOwnU) {
      // The prefill tile's eight (row, column) sums finished together.
      finish_tile_4x2(row, n, acc, whole_groups, groups, tail);
      continue;
    }
    for (int c = 0; c < kCols; ++c) {
      const float u_folded = kOwnU ? fold(uacc[c]) : row.u_folded[n + c];
      const float* w_scales = row.w_scales + (n + c) * groups;
      const float bias = row.bias != nullptr ? row.bias[n + c] : 0.0f;
      for (int r = 0; r < kRows; ++r) {
        const float* correction = row.correction + r * groups;
        const float corrections =
            fold_corrections(w_scales, correction, whole_groups, groups, tail);
        const float sum = finish_column_8da4w(fold(acc[r][c]), u_folded, corrections,
                                              row.zero_point[r]);
        row.out[r * row.n + n + c] = std::fma(sum, row.scale[r], bias);
      }
    }
  }
  if constexpr (kCols > 1) {
    if (n < n_end) columns<kRows, 1, kOwnU, kPairedX>(row, n, n_end);
  }
}

// Decode with group 32, the common case, straight-line: four columns (eight
// in the AVX-512 build), the
// groups two at a time from one 32-byte load per column (the general
// template kept its sums in arrays across the group loop, and GCC spilled
// them on every step). The same integer sums and float steps in the same
// order as columns<1, 4>, so the same floats. kOwnU as in columns.
#if defined(__AVX512VL__)
// Eight columns a step where 32 vector registers hold their sums: each
// activation pair's loads and permutes serve twice the columns.
constexpr int kDecodeColumns8da4w = 8;
#else
constexpr int kDecodeColumns8da4w = 4;
#endif

template <bool kOwnU>
void columns_decode_g32(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  constexpr int kCols = kDecodeColumns8da4w;  // fold4 / fold8 finish four / eight at a time.
  constexpr int64_t kPrefetchColumns = 16;
  const int64_t groups = row.k / 32;
  const int64_t packed = row.k / 2;
  const int64_t whole_groups = groups - groups % kLanes8da4w;
  const __m256i tail = tail_lanes(groups);
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  const __m256i zero = _mm256_setzero_si256();
  const float* correction = row.correction;
  const __m128 neg_zero_point = _mm_set1_ps(-static_cast<float>(row.zero_point[0]));
  const __m128 row_scale = _mm_set1_ps(row.scale[0]);
  int64_t n = n_begin;
  for (; n + kCols <= n_end; n += kCols) {
    __m256 acc[kCols];
    __m256 uacc[kCols];
    const uint8_t* w[kCols];
    const float* w_scales[kCols];
#pragma GCC unroll 8
    for (int c = 0; c < kCols; ++c) {
      acc[c] = _mm256_setzero_ps();
      uacc[c] = _mm256_setzero_ps();
      w[c] = row.weight + (n + c) * packed;
      w_scales[c] = row.w_scales + (n + c) * groups;
    }
    int64_t g = 0;
    for (; g + 2 <= groups; g += 2) {
      const PairActivations x = load_pair(row.xq + g * 32);
#pragma GCC unroll 8
      for (int c = 0; c < kCols; ++c) {
        // The classifier's weights stream from memory: ask for the column
        // kPrefetchColumns ahead (a prefetch past the end does not fault).
        _mm_prefetch(reinterpret_cast<const char*>(w[c] + kPrefetchColumns * packed + g * 16),
                     _MM_HINT_T0);
        const PairWeights pw = unpack_pair(w[c] + g * 16, low_mask);
        const __m256 scale = pair_scales(w_scales[c] + g);
        const __m256i dot = add_pair_dot(zero, pw, x);
        if constexpr (kOwnU) {
          uacc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(pair_usum(pw, zero)), scale, uacc[c]);
        }
        acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc[c]);
      }
    }
    if (g < groups) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row.xq + g * 32));
#pragma GCC unroll 8
      for (int c = 0; c < kCols; ++c) {
        const __m256i u = unpack_chunk(w[c] + g * 16, low_mask);
        const __m256i dot = add_chunk_dot(zero, u, x);
        const __m256 w_scale = _mm256_set1_ps(w_scales[c][g]);
        if constexpr (kOwnU) {
          uacc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sad_epu8(u, zero)), w_scale, uacc[c]);
        }
        acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), w_scale, acc[c]);
      }
    }
    // finish_column_8da4w and the row's scale four columns at once
    // (vector fused multiply-adds round as std::fma does); eight at once
    // where the step has eight (fold8, fed in the order that returns the
    // columns in order).
#if defined(__AVX512VL__)
    static_assert(kCols == 8, "the AVX-512 build takes eight columns a step");
    {
      __m256 corr[8];
#pragma GCC unroll 8
      for (int c = 0; c < 8; ++c) {
        corr[c] = correction_lanes(w_scales[c], correction, whole_groups, groups, tail);
      }
      const __m256 products = fold8_columns(acc);
      const __m256 u_sums = kOwnU ? fold8_columns(uacc) : _mm256_loadu_ps(row.u_folded + n);
      const __m256 corrections = fold8_columns(corr);
      const __m256 neg_zp = _mm256_set_m128(neg_zero_point, neg_zero_point);
      const __m256 sum = _mm256_sub_ps(_mm256_fmadd_ps(neg_zp, u_sums, products), corrections);
      const __m256 bias = row.bias != nullptr ? _mm256_loadu_ps(row.bias + n) : _mm256_setzero_ps();
      _mm256_storeu_ps(row.out + n, _mm256_fmadd_ps(sum, _mm256_set_m128(row_scale, row_scale), bias));
    }
#else
#pragma GCC unroll 2
    for (int c0 = 0; c0 < kCols; c0 += 4) {
      __m256 corr[4];
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        corr[c] = correction_lanes(w_scales[c0 + c], correction, whole_groups, groups, tail);
      }
      const __m128 products = fold4(acc[c0], acc[c0 + 1], acc[c0 + 2], acc[c0 + 3]);
      const __m128 u_sums = kOwnU ? fold4(uacc[c0], uacc[c0 + 1], uacc[c0 + 2], uacc[c0 + 3])
                                  : _mm_loadu_ps(row.u_folded + n + c0);
      const __m128 corrections = fold4(corr[0], corr[1], corr[2], corr[3]);
      const __m128 sum = _mm_sub_ps(_mm_fmadd_ps(neg_zero_point, u_sums, products), corrections);
      const __m128 bias = row.bias != nullptr ? _mm_loadu_ps(row.bias + n + c0) : _mm_setzero_ps();
      _mm_storeu_ps(row.out + n + c0, _mm_fmadd_ps(sum, row_scale, bias));
    }
#endif
  }
  if (n < n_end) columns<1, 1, kOwnU>(row, n, n_end);
}

template <bool kOwnU>
void columns_for_rows(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  switch (row.rows) {
    case 1:
      if (row.group == 32) return columns_decode_g32<kOwnU>(row, n_begin, n_end);
      return columns<1, 4, kOwnU>(row, n_begin, n_end);
    case 2: return columns<2, 2, kOwnU>(row, n_begin, n_end);
    case 3: return columns<3, 1, kOwnU>(row, n_begin, n_end);
    default: return columns<4, 1, kOwnU>(row, n_begin, n_end);
  }
}

// The decode loops (linear_8da4w_columns_*).
inline void loop_columns(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  if (row.u_folded != nullptr) return columns_for_rows<false>(row, n_begin, n_end);
  columns_for_rows<true>(row, n_begin, n_end);
}

// fold_weight_sums_8da4w_* (no multiplies: the same in every build).
inline void fold_weight_sums(const uint8_t* weight, const float* w_scales, int64_t k,
                                 int64_t group, int64_t n_begin, int64_t n_end, float* u_folded) {
  // The u half of columns<1, 1>: the same lanes and fused multiply-adds.
  const int64_t groups = k / group;
  const int64_t chunks = group / 32;
  const int64_t packed = k / 2;
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  const __m256i zero = _mm256_setzero_si256();
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* w = weight + n * packed;
    const float* scales = w_scales + n * groups;
    __m256 uacc = _mm256_setzero_ps();
    int64_t g = 0;
    if (group == 32) {
      for (; g + 2 <= groups; g += 2) {
        const PairWeights pw = unpack_pair(w + g * 16, low_mask);
        uacc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(pair_usum(pw, zero)), pair_scales(scales + g), uacc);
      }
    }
    for (; g < groups; ++g) {
      __m256i usum = zero;
      const int64_t k0 = g * group;
      int64_t ci = 0;
      for (; ci + 2 <= chunks; ci += 2) {
        usum = _mm256_add_epi32(usum, pair_usum(unpack_pair(w + (k0 + ci * 32) / 2, low_mask), zero));
      }
      if (ci < chunks) {
        usum = _mm256_add_epi32(usum, _mm256_sad_epu8(unpack_chunk(w + (k0 + ci * 32) / 2, low_mask), zero));
      }
      uacc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(usum), _mm256_set1_ps(scales[g]), uacc);
    }
    u_folded[n] = fold(uacc);
  }
}

// Groups of 32 keep two columns' float sums for four rows in registers;
// larger groups also keep int32 and int16 sums per row and column, so one
// column a step there.
// The prefill tile (linear_8da4w_tile_*).
inline void tile_columns(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
#if defined(__AVX512BW__) && defined(__AVX512VNNI__)
  // wide_groups keeps one int32 sum per row and column: two columns fit.
  constexpr bool kWideTwoColumns = true;
#else
  constexpr bool kWideTwoColumns = false;
#endif
  if (row.group == 32 || (kWideTwoColumns && row.group % 128 == 0)) {
    switch (row.rows) {
      case 1: return columns<1, 4, false, true>(row, n_begin, n_end);
      case 2: return columns<2, 2, false, true>(row, n_begin, n_end);
      case 3: return columns<3, 2, false, true>(row, n_begin, n_end);
      default: return columns<4, 2, false, true>(row, n_begin, n_end);
    }
  }
  switch (row.rows) {
    case 1: return columns<1, 2, false, true>(row, n_begin, n_end);
    case 2: return columns<2, 1, false, true>(row, n_begin, n_end);
    case 3: return columns<3, 1, false, true>(row, n_begin, n_end);
    default: return columns<4, 1, false, true>(row, n_begin, n_end);
  }
}

}  // namespace
}  // namespace torchlight::quantized
