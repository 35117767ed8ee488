// The x86 loops of linear_8da4w (linear_8da4w.h), written once and compiled
// per instruction set by linear_8da4w_{avx2,avxvnni,avx512vnni}.cpp, each
// built with its own flags (CMakeLists.txt) and run only on CPUs with them
// (quant_isa.h). Include it only from those files: everything here has
// internal linkage, so no build's inline copy can reach another's path.
//
// The sixteen lanes of linear_8da4w.h: the AVX-512 build holds them in one
// 512-bit vector and, for groups of 32, 64 and multiples of 128, reads four
// chunks (64 packed bytes) a step: their low nibbles (and) and high nibbles
// (shift, and) against the four chunks' first and second halves, two
// vpdpbusd, then per column one convert and one fused multiply-add with the
// scales spread over their lanes (one permute) per 128 weights; groups of
// 128 and more sum in int32 across the group first. The 256-bit builds hold
// the lanes in two vectors and read two chunks a step (one 32-byte load:
// two groups of 32, or two chunks of a larger group); a chunk alone takes 16
// bytes into its four lanes. With VNNI (AVX-VNNI, or AVX-512 VNNI) vpdpbusd
// adds four u x products to a lane; without it, maddubs + madd. The integer
// sums are the same either way, so every build gives the same floats.
// sad_epu8 gives sum u. Decode takes eight columns a step (AVX-512; four in
// the 256-bit builds), each activation step serving all of them, and
// finishes them together.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <type_traits>

#include "kernels/quantized/linear_8da4w.h"

namespace torchlight::quantized {
namespace {

#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
inline __m256i dpbusd(__m256i acc, __m256i u, __m256i x) { return _mm256_dpbusd_epi32(acc, u, x); }
inline __m128i dpbusd(__m128i acc, __m128i u, __m128i x) { return _mm_dpbusd_epi32(acc, u, x); }
#elif defined(__AVXVNNI__)
inline __m256i dpbusd(__m256i acc, __m256i u, __m256i x) { return _mm256_dpbusd_avx_epi32(acc, u, x); }
inline __m128i dpbusd(__m128i acc, __m128i u, __m128i x) { return _mm_dpbusd_avx_epi32(acc, u, x); }
#endif

#if defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define TORCHLIGHT_8DA4W_ZMM 1
#endif

// ---------------------------------------------------------------------------
// Sixteen float lanes and their folds.

#if defined(TORCHLIGHT_8DA4W_ZMM)
using Lanes16 = __m512;
inline Lanes16 zero_lanes() { return _mm512_setzero_ps(); }
// Lanes i + (i + 8): the first step of fold_lanes_8da4w.
inline __m256 half_sum(Lanes16 v) {
  return _mm256_add_ps(_mm512_castps512_ps256(v),
                       _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}
#else
struct Lanes16 {
  __m256 lo, hi;  // Lanes 0-7, 8-15.
};
inline Lanes16 zero_lanes() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
inline __m256 half_sum(Lanes16 v) { return _mm256_add_ps(v.lo, v.hi); }
#endif

// The rest of fold_lanes_8da4w on eight lanes (i + 4, then i + 2, then 0 + 1).
inline float fold8_lanes(__m256 v) {
  const __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

inline float fold(Lanes16 v) { return fold8_lanes(half_sum(v)); }

// fold8_lanes of eight vectors at once, in the order [v0, v2, v4, v6, v1,
// v3, v5, v7]: the same additions with the halves' sums regrouped so seven
// adds serve all eight.
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

// fold() of eight columns' lanes, [fold(v[0]), ..., fold(v[7])]: fold8 fed
// [v0, v4, v1, v5, v2, v6, v3, v7], which it returns in column order.
inline __m256 fold8_columns(const Lanes16 (&v)[8]) {
  const __m256 order[8] = {half_sum(v[0]), half_sum(v[4]), half_sum(v[1]), half_sum(v[5]),
                           half_sum(v[2]), half_sum(v[6]), half_sum(v[3]), half_sum(v[7])};
  return fold8(order);
}

// fold() of four columns' lanes, [fold(v[0]), ..., fold(v[3])]: lanes i + 8
// (half_sum), then i + 4 for two columns a vector (their 128-bit halves swapped
// into place), i + 2 and 0 + 1 by shuffles; the same additions as fold().
inline __m128 fold4_columns(const Lanes16 (&v)[4]) {
  const __m256 e0 = half_sum(v[0]), e1 = half_sum(v[1]), e2 = half_sum(v[2]), e3 = half_sum(v[3]);
  const __m256 h01 = _mm256_add_ps(_mm256_permute2f128_ps(e0, e1, 0x20), _mm256_permute2f128_ps(e0, e1, 0x31));
  const __m256 h23 = _mm256_add_ps(_mm256_permute2f128_ps(e2, e3, 0x20), _mm256_permute2f128_ps(e2, e3, 0x31));
  // [c0 h0 + h2, c0 h1 + h3, c2 .., c2 .. | c1 .., c1 .., c3 .., c3 ..].
  const __m256 q = _mm256_add_ps(_mm256_shuffle_ps(h01, h23, _MM_SHUFFLE(1, 0, 1, 0)),
                                 _mm256_shuffle_ps(h01, h23, _MM_SHUFFLE(3, 2, 3, 2)));
  // [c0, c2, c0, c2 | c1, c3, c1, c3].
  const __m256 f = _mm256_add_ps(_mm256_shuffle_ps(q, q, _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm256_shuffle_ps(q, q, _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm_unpacklo_ps(_mm256_castps256_ps128(f), _mm256_extractf128_ps(f, 1));
}

// Lanes [0, count) of eight (count <= 8).
inline __m256i first_lanes(int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(count)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// fold_corrections_8da4w's lanes in registers: sum_g w_scales[g] *
// correction[g] with group g in lane g % 16, the groups past the last whole
// vector fused in by masked loads and kept only in their lanes, so every
// lane sees the same fused multiply-adds as the scalar form.
#if !defined(TORCHLIGHT_8DA4W_ZMM)
// The groups past the last whole sixteen of one row's corrections: how
// many, their lanes in each half, and their corrections there (0 in the
// other lanes); the same for every column of a call, so the decode loads
// them once.
struct CorrectionTail {
  int64_t rest;
  __m256i lo, hi;
  __m256 correction_lo, correction_hi;
  CorrectionTail(const float* correction, int64_t groups)
      : rest(groups % kLanes8da4w),
        lo(first_lanes(std::min<int64_t>(rest, 8))),
        hi(first_lanes(std::max<int64_t>(rest - 8, 0))),
        correction_lo(_mm256_maskload_ps(correction + (groups - rest), lo)),
        correction_hi(_mm256_maskload_ps(correction + (groups - rest) + 8, hi)) {}
};

inline Lanes16 correction_lanes(const float* w_scales, const float* correction, int64_t groups,
                                const CorrectionTail& tail) {
  Lanes16 corr = zero_lanes();
  int64_t g = 0;
  for (; g + kLanes8da4w <= groups; g += kLanes8da4w) {
    corr.lo = _mm256_fmadd_ps(_mm256_loadu_ps(w_scales + g), _mm256_loadu_ps(correction + g), corr.lo);
    corr.hi = _mm256_fmadd_ps(_mm256_loadu_ps(w_scales + g + 8), _mm256_loadu_ps(correction + g + 8),
                              corr.hi);
  }
  // Lanes past the tail load 0 and keep their value: fma(0, 0, v) is v for
  // every v but -0, and no lane is ever -0 (it starts at +0, and a sum is -0
  // only when both addends are).
  if (tail.rest >= 8) {  // Lanes 0-7 whole (K = 288: 9 groups): a plain load.
    corr.lo = _mm256_fmadd_ps(_mm256_loadu_ps(w_scales + g), tail.correction_lo, corr.lo);
  } else if (tail.rest > 0) {
    corr.lo = _mm256_fmadd_ps(_mm256_maskload_ps(w_scales + g, tail.lo), tail.correction_lo, corr.lo);
  }
  if (tail.rest > 8) {
    corr.hi = _mm256_fmadd_ps(_mm256_maskload_ps(w_scales + g + 8, tail.hi), tail.correction_hi, corr.hi);
  }
  return corr;
}
#endif

inline Lanes16 correction_lanes(const float* w_scales, const float* correction, int64_t groups) {
#if defined(TORCHLIGHT_8DA4W_ZMM)
  Lanes16 corr = zero_lanes();
  int64_t g = 0;
  for (; g + kLanes8da4w <= groups; g += kLanes8da4w) {
    corr = _mm512_fmadd_ps(_mm512_loadu_ps(w_scales + g), _mm512_loadu_ps(correction + g), corr);
  }
  if (g < groups) {
    const auto lanes = static_cast<__mmask16>((1u << (groups - g)) - 1);
    corr = _mm512_mask3_fmadd_ps(_mm512_maskz_loadu_ps(lanes, w_scales + g),
                                 _mm512_maskz_loadu_ps(lanes, correction + g), corr, lanes);
  }
  return corr;
#else
  return correction_lanes(w_scales, correction, groups, CorrectionTail(correction, groups));
#endif
}

// ---------------------------------------------------------------------------
// Two chunks (a 256-bit step) and one chunk alone.

// Two chunks (32 packed bytes): lo holds their low nibbles, hi their high
// nibbles, the first chunk's in the low halves.
struct PairWeights {
  __m256i lo, hi;
};
inline PairWeights unpack_pair(const uint8_t* w) {
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  return {_mm256_and_si256(v, low_mask), _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask)};
}

// Both chunks' first halves (meeting the low nibbles) and second halves.
struct PairActivations {
  __m256i a, b;
};

// Chunk c's first and second halves within a row of `chunks` chunks: in
// arranged order (one after the other), or in paired order (pair_rows_8da4w:
// each block of four chunks' first halves, then their second halves).
template <bool kPairedX>
inline const int8_t* first_half(const int8_t* x, int64_t c, int64_t chunks) {
  if constexpr (!kPairedX) {
    (void)chunks;
    return x + 32 * c;
  } else {
    return x + 32 * (c - c % 4) + 16 * (c % 4);
  }
}
template <bool kPairedX>
inline const int8_t* second_half(const int8_t* x, int64_t c, int64_t chunks) {
  if constexpr (!kPairedX) {
    (void)chunks;
    return x + 32 * c + 16;
  } else {
    const int64_t block = c - c % 4;
    return x + 32 * block + 16 * std::min<int64_t>(4, chunks - block) + 16 * (c % 4);
  }
}

// Chunks c and c + 1 (c even) of a row.
template <bool kPairedX>
inline PairActivations pair_activations(const int8_t* x, int64_t c, int64_t chunks) {
  if constexpr (kPairedX) {
    return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(first_half<true>(x, c, chunks))),
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(second_half<true>(x, c, chunks)))};
  } else {
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32 * c));
    const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32 * c + 32));
    return {_mm256_permute2x128_si256(x0, x1, 0x20), _mm256_permute2x128_si256(x0, x1, 0x31)};
  }
}

// acc plus a pair of chunks' exact products: the first chunk's in lanes
// 0-3, the second's in 4-7 (the lanes of its 256-bit half of the sixteen).
inline __m256i add_pair_dot(__m256i acc, const PairWeights& w, const PairActivations& x) {
#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
  return dpbusd(dpbusd(acc, w.lo, x.a), w.hi, x.b);
#else
  const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(w.lo, x.a), _mm256_maddubs_epi16(w.hi, x.b));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
#endif
}

// sum u of a pair of chunks in lanes 0, 2 (first chunk) and 4, 6 (second);
// lo + hi <= 30 fits a byte.
inline __m256i pair_usum(const PairWeights& w) {
  return _mm256_sad_epu8(_mm256_add_epi8(w.lo, w.hi), _mm256_setzero_si256());
}

// Lanes 0-3 of scales[0], lanes 4-7 of scales[1].
inline __m256 pair_scales(const float* scales) {
  const __m256 both = _mm256_castsi256_ps(
      _mm256_broadcastq_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales))));  // Unaligned.
  return _mm256_permutevar_ps(both, _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
}

// A chunk alone (16 packed bytes): its nibbles, the low ones in byte order.
struct LoneWeights {
  __m128i lo, hi;
};
inline LoneWeights unpack_lone(const uint8_t* w) {
  const __m128i low_mask = _mm_set1_epi8(0x0F);
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
  return {_mm_and_si128(v, low_mask), _mm_and_si128(_mm_srli_epi16(v, 4), low_mask)};
}

// Its products against its halves a and b in lanes 0-3 (upper lanes zero).
inline __m256i lone_dot(const LoneWeights& w, const int8_t* a, const int8_t* b) {
  const __m128i xa = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
  const __m128i xb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
  const __m128i dot = dpbusd(dpbusd(_mm_setzero_si128(), w.lo, xa), w.hi, xb);
#else
  const __m128i dot = _mm_madd_epi16(
      _mm_add_epi16(_mm_maddubs_epi16(w.lo, xa), _mm_maddubs_epi16(w.hi, xb)), _mm_set1_epi16(1));
#endif
  return _mm256_zextsi128_si256(dot);
}

// Its sum u in lanes 0 and 2.
inline __m256i lone_usum(const LoneWeights& w) {
  return _mm256_zextsi128_si256(_mm_sad_epu8(_mm_add_epi8(w.lo, w.hi), _mm_setzero_si128()));
}

// Integer sums in the sixteen lanes, as two 256-bit halves.
struct Dot16 {
  __m256i lo, hi;
};

// acc + float(dot) * scale in every lane (lanes a group does not own carry
// a zero sum and a zero scale: acc + 0, which is acc, as no float sum here
// is ever -0).
inline Lanes16 scale_dot(const Dot16& dot, const Lanes16& scale, const Lanes16& acc) {
#if defined(TORCHLIGHT_8DA4W_ZMM)
  const __m512i d = _mm512_inserti64x4(_mm512_castsi256_si512(dot.lo), dot.hi, 1);
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), scale, acc);
#else
  return {_mm256_fmadd_ps(_mm256_cvtepi32_ps(dot.lo), scale.lo, acc.lo),
          _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot.hi), scale.hi, acc.hi)};
#endif
}

// s in the lanes of the quarters set in `quarters` (bit q: lanes 4q..4q+3), 0 elsewhere.
inline Lanes16 quarter_scales(float s, unsigned quarters) {
#if defined(TORCHLIGHT_8DA4W_ZMM)
  unsigned mask = 0;
  for (int q = 0; q < 4; ++q) mask |= ((quarters >> q) & 1u) * (0xFu << (4 * q));
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(mask), _mm512_set1_ps(s));
#else
  const __m256i bits = _mm256_set1_epi32(static_cast<int32_t>(quarters));
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(bits, _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1)), one);
  const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(bits, _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3)), one);
  const __m256 v = _mm256_set1_ps(s);
  return {_mm256_and_ps(v, _mm256_castsi256_ps(_mm256_cmpeq_epi32(lo, one))),
          _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_cmpeq_epi32(hi, one)))};
#endif
}

inline __m256i& half(Dot16& d, int64_t h) { return h == 0 ? d.lo : d.hi; }

// ---------------------------------------------------------------------------
// The sums of kCols columns from n for kRows rows (0: sum u only), into acc
// and uacc.

// Any group % 32 == 0, one group at a time: the group's aligned chunk pairs
// as 256-bit steps into their half, a chunk alone into its quarter, summed
// in int32 across the group, then scaled in the quarters the group owns.
template <int kRows, int kCols, bool kOwnU, bool kPairedX, int kR>
void sums_by_group(const Row8da4w& row, int64_t n, Lanes16 (&acc)[kR][kCols], Lanes16 (&uacc)[kCols]) {
  const int64_t group = row.group;
  const int64_t groups = row.k / group;
  const int64_t per_group = group / 32;
  const int64_t chunks = row.k / 32;
  const int64_t packed = row.k / 2;
  const __m256i zero = _mm256_setzero_si256();
  const int64_t in_lanes = groups - (lone_last_group_8da4w(group, groups) ? 1 : 0);
  for (int64_t g = 0; g < in_lanes; ++g) {
    Dot16 dot[kR][kCols];
    Dot16 usum[kCols];
    for (int c = 0; c < kCols; ++c) {
      usum[c] = {zero, zero};
      for (int r = 0; r < kR; ++r) dot[r][c] = {zero, zero};
    }
    unsigned quarters = 0;
    for (int64_t ci = g * per_group; ci < (g + 1) * per_group;) {
      const int64_t h = (ci % 4) / 2;
      if (ci % 2 == 0 && ci + 1 < (g + 1) * per_group) {
        quarters |= 3u << (ci % 4);
        PairActivations x[kR];
        for (int r = 0; r < kRows; ++r) x[r] = pair_activations<kPairedX>(row.xq + r * row.k, ci, chunks);
        for (int c = 0; c < kCols; ++c) {
          const PairWeights w = unpack_pair(row.weight + (n + c) * packed + ci * 16);
          if constexpr (kOwnU) half(usum[c], h) = _mm256_add_epi32(half(usum[c], h), pair_usum(w));
          for (int r = 0; r < kRows; ++r) half(dot[r][c], h) = add_pair_dot(half(dot[r][c], h), w, x[r]);
        }
        ci += 2;
        continue;
      }
      quarters |= 1u << (ci % 4);
      for (int c = 0; c < kCols; ++c) {
        const uint8_t* w = row.weight + (n + c) * packed + ci * 16;
        // Quarter ci % 4: the low or high 128 bits of its half.
        auto place = [&](__m256i v) { return ci % 2 == 0 ? v : _mm256_permute2x128_si256(v, v, 0x08); };
        const LoneWeights lw = unpack_lone(w);
        if constexpr (kOwnU) half(usum[c], h) = _mm256_add_epi32(half(usum[c], h), place(lone_usum(lw)));
        for (int r = 0; r < kRows; ++r) {
          const int8_t* x = row.xq + r * row.k;
          const __m256i d = lone_dot(lw, first_half<kPairedX>(x, ci, chunks), second_half<kPairedX>(x, ci, chunks));
          half(dot[r][c], h) = _mm256_add_epi32(half(dot[r][c], h), place(d));
        }
      }
      ci += 1;
    }
    for (int c = 0; c < kCols; ++c) {
      const Lanes16 scale = quarter_scales(row.w_scales[(n + c) * groups + g], quarters);
      if constexpr (kOwnU) uacc[c] = scale_dot(usum[c], scale, uacc[c]);
      for (int r = 0; r < kRows; ++r) acc[r][c] = scale_dot(dot[r][c], scale, acc[r][c]);
    }
  }
}

#if defined(TORCHLIGHT_8DA4W_ZMM)
// Groups of 32, 64 or a multiple of 128: four chunks (a 64-byte load) a
// step in 512-bit vectors, the last step masked to the chunks left (at
// most three).
struct QuadWeights {
  __m512i lo, hi;
};
inline QuadWeights unpack_quad(__m512i v) {
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
  return {_mm512_and_si512(v, low_mask), _mm512_and_si512(_mm512_srli_epi16(v, 4), low_mask)};
}

// The step's activations: its chunks' first halves and second halves.
struct QuadActivations {
  __m512i a, b;
};
// Bytes [0, count) of 64 (count <= 64).
inline __mmask64 first_bytes(int64_t count) {
  return count >= 64 ? ~__mmask64{0} : (__mmask64{1} << count) - 1;
}
// `count` chunks from chunk c; in paired order the block there holds
// `block` chunks (count, or one more when the row's last chunk is left to
// the finish).
template <bool kPairedX>
inline QuadActivations quad_activations(const int8_t* x, int64_t c, int64_t count, int64_t block) {
  const int8_t* at = x + 32 * c;
  if constexpr (kPairedX) {
    if (count == 4) return {_mm512_loadu_si512(at), _mm512_loadu_si512(at + 64)};
    return {_mm512_maskz_loadu_epi8(first_bytes(16 * count), at),
            _mm512_maskz_loadu_epi8(first_bytes(16 * count), at + 16 * block)};
  } else {
    (void)block;
    __m512i x0, x1;
    if (count == 4) {
      x0 = _mm512_loadu_si512(at);
      x1 = _mm512_loadu_si512(at + 64);
    } else {
      x0 = _mm512_maskz_loadu_epi8(first_bytes(32 * count), at);
      x1 = _mm512_maskz_loadu_epi8(first_bytes(std::max<int64_t>(0, 32 * count - 64)), at + 64);
    }
    // x0 = chunks 0, 1 (each: first half, second half), x1 = chunks 2, 3.
    return {_mm512_shuffle_i64x2(x0, x1, _MM_SHUFFLE(2, 0, 2, 0)),
            _mm512_shuffle_i64x2(x0, x1, _MM_SHUFFLE(3, 1, 3, 1))};
  }
}

inline __m512i quad_dot(const QuadWeights& w, const QuadActivations& x) {
  return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), w.lo, x.a), w.hi, x.b);
}

inline __m512i quad_usum(const QuadWeights& w) {
  return _mm512_sad_epu8(_mm512_add_epi8(w.lo, w.hi), _mm512_setzero_si512());
}

// Four chunks alone (16 bytes each, `stride` apart), one per 128 bits.
inline __m512i four_chunks(const uint8_t* w, int64_t stride) {
  __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + stride)), 1);
  v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 2 * stride)), 2);
  return _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 3 * stride)), 3);
}

// Each 128 bits' four int32 lanes summed (exact) into its first lane.
inline __m512i lane_totals(__m512i d) {
  d = _mm512_add_epi32(d, _mm512_shuffle_epi32(d, static_cast<_MM_PERM_ENUM>(_MM_SHUFFLE(1, 0, 3, 2))));
  return _mm512_add_epi32(d, _mm512_shuffle_epi32(d, static_cast<_MM_PERM_ENUM>(_MM_SHUFFLE(2, 3, 0, 1))));
}

// The step's scales over its lanes: groups of 32 (kPerGroup 1) own a
// quarter each, groups of 64 (2) a half; `count` chunks are left (kFull:
// four), the rest of the lanes 0.
template <int kPerGroup, bool kFull>
inline __m512 quad_scales(const float* scales, int64_t count) {
  const __m512i spread = kPerGroup == 1
                             ? _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3)
                             : _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  __m128 s;
  if constexpr (kFull && kPerGroup == 1) {
    s = _mm_loadu_ps(scales);
  } else if constexpr (kFull) {
    s = _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales)));  // Unaligned.
  } else {
    s = _mm_maskz_loadu_ps(static_cast<__mmask8>((1u << (count / kPerGroup)) - 1), scales);
  }
  return _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(s));
}

template <int kRows, int kCols, bool kOwnU, bool kPairedX, int kR>
void sums_by_quad(const Row8da4w& row, int64_t n, Lanes16 (&acc)[kR][kCols], Lanes16 (&uacc)[kCols]) {
  constexpr int64_t kPrefetchColumns = 16;
  const int64_t group = row.group;
  const int64_t groups = row.k / group;
  const int64_t per_group = group / 32;
  // The chunks in the lanes (lone_last_group_8da4w: the last group of 32
  // may be left to the finish).
  const int64_t chunks = row.k / 32 - (lone_last_group_8da4w(group, groups) ? 1 : 0);
  const int64_t packed = row.k / 2;
  const uint8_t* w[kCols];
  const float* w_scales[kCols];
#pragma GCC unroll 8
  for (int c = 0; c < kCols; ++c) {
    w[c] = row.weight + (n + c) * packed;
    w_scales[c] = row.w_scales + (n + c) * groups;
  }
  // Four chunks from chunk ci (kFull), or the `count` left.
  auto step = [&](int64_t ci, int64_t count, auto per_group, auto full) {
    constexpr int kPerGroup = decltype(per_group)::value;
    constexpr bool kFull = decltype(full)::value;
    const auto lanes = static_cast<__mmask16>(kFull ? 0xFFFF : (1u << (4 * count)) - 1);
    QuadActivations x[kR];
    const int64_t block = std::min<int64_t>(4, row.k / 32 - ci);
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) x[r] = quad_activations<kPairedX>(row.xq + r * row.k, ci, kFull ? 4 : count, block);
#pragma GCC unroll 8
    for (int c = 0; c < kCols; ++c) {
      if constexpr (kRows == 1) {
        // The classifier's weights stream from memory: ask for the column
        // kPrefetchColumns ahead (a prefetch past the end does not fault).
        _mm_prefetch(reinterpret_cast<const char*>(w[c] + kPrefetchColumns * packed + ci * 16), _MM_HINT_T0);
      }
      const QuadWeights wv = unpack_quad(kFull ? _mm512_loadu_si512(w[c] + ci * 16)
                                               : _mm512_maskz_loadu_epi8(first_bytes(16 * count), w[c] + ci * 16));
      const __m512 scale = quad_scales<kPerGroup, kFull>(w_scales[c] + ci / kPerGroup, count);
      if constexpr (kOwnU) {
        const __m512 u = _mm512_cvtepi32_ps(quad_usum(wv));
        uacc[c] = kFull ? _mm512_fmadd_ps(u, scale, uacc[c]) : _mm512_mask3_fmadd_ps(u, scale, uacc[c], lanes);
      }
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        const __m512 d = _mm512_cvtepi32_ps(quad_dot(wv, x[r]));
        acc[r][c] = kFull ? _mm512_fmadd_ps(d, scale, acc[r][c]) : _mm512_mask3_fmadd_ps(d, scale, acc[r][c], lanes);
      }
    }
  };
  auto steps = [&](auto per_group) {
    int64_t ci = 0;
    for (; ci + 4 <= chunks; ci += 4) step(ci, 4, per_group, std::true_type{});
    if (ci < chunks) step(ci, chunks - ci, per_group, std::false_type{});
  };
  if (per_group == 1) return steps(std::integral_constant<int, 1>{});
  if (per_group == 2) return steps(std::integral_constant<int, 2>{});
  // A multiple of 128: exact int32 sums across the group, then its scale.
  for (int64_t g = 0; g < groups; ++g) {
    __m512i dot[kR][kCols];
    __m512i usum[kCols];
    for (int c = 0; c < kCols; ++c) {
      usum[c] = _mm512_setzero_si512();
      for (int r = 0; r < kR; ++r) dot[r][c] = _mm512_setzero_si512();
    }
    for (int64_t ci = g * per_group; ci < (g + 1) * per_group; ci += 4) {
      QuadActivations x[kR];
      for (int r = 0; r < kRows; ++r) x[r] = quad_activations<kPairedX>(row.xq + r * row.k, ci, 4, 4);
      for (int c = 0; c < kCols; ++c) {
        if constexpr (kRows == 1) {
          _mm_prefetch(reinterpret_cast<const char*>(w[c] + kPrefetchColumns * packed + ci * 16), _MM_HINT_T0);
        }
        const QuadWeights wv = unpack_quad(_mm512_loadu_si512(w[c] + ci * 16));
        if constexpr (kOwnU) usum[c] = _mm512_add_epi32(usum[c], quad_usum(wv));
        for (int r = 0; r < kRows; ++r) {
          dot[r][c] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(dot[r][c], wv.lo, x[r].a), wv.hi, x[r].b);
        }
      }
    }
    for (int c = 0; c < kCols; ++c) {
      const __m512 scale = _mm512_set1_ps(w_scales[c][g]);
      if constexpr (kOwnU) uacc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(usum[c]), scale, uacc[c]);
      for (int r = 0; r < kRows; ++r) acc[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][c]), scale, acc[r][c]);
    }
  }
}
#else
// Groups of 32 in the 256-bit builds: four groups a step as two pairs (one
// 32-byte load each), the first into lanes 0-7, the second into 8-15; a
// pair left at the end likewise.
// Always inlined: called out of line (as GCC chose for decode_g32) its
// sums go through memory and cost a vzeroupper each way.
template <int kRows, int kCols, bool kOwnU, bool kPairedX, int kR>
__attribute__((always_inline)) inline void sums_g32(const Row8da4w& row, int64_t n, Lanes16 (&acc)[kR][kCols],
                                                    Lanes16 (&uacc)[kCols]) {
  constexpr int64_t kPrefetchColumns = 16;
  const int64_t groups = row.k / 32;
  const int64_t packed = row.k / 2;
  const uint8_t* w[kCols];
  const float* w_scales[kCols];
  for (int c = 0; c < kCols; ++c) {
    w[c] = row.weight + (n + c) * packed;
    w_scales[c] = row.w_scales + (n + c) * groups;
  }
  // Groups g, g + 1 (g even) into the half (g % 4) / 2.
  auto pair = [&](int64_t g, auto high) {
    constexpr bool kHigh = decltype(high)::value;
    PairActivations x[kR];
    for (int r = 0; r < kRows; ++r) x[r] = pair_activations<kPairedX>(row.xq + r * row.k, g, groups);
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) {
      if constexpr (kRows == 1) {
        _mm_prefetch(reinterpret_cast<const char*>(w[c] + kPrefetchColumns * packed + g * 16), _MM_HINT_T0);
      }
      const PairWeights pw = unpack_pair(w[c] + g * 16);
      const __m256 scale = pair_scales(w_scales[c] + g);
      if constexpr (kOwnU) {
        __m256& u = kHigh ? uacc[c].hi : uacc[c].lo;
        u = _mm256_fmadd_ps(_mm256_cvtepi32_ps(pair_usum(pw)), scale, u);
      }
      for (int r = 0; r < kRows; ++r) {
        __m256& a = kHigh ? acc[r][c].hi : acc[r][c].lo;
        a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(add_pair_dot(_mm256_setzero_si256(), pw, x[r])), scale, a);
      }
    }
  };
  // An odd last group is left to the finish (lone_last_group_8da4w).
  const int64_t in_lanes = groups - groups % 2;
  int64_t g = 0;
  for (; g + 4 <= in_lanes; g += 4) {
    pair(g, std::false_type{});
    pair(g + 2, std::true_type{});
  }
  if (g < in_lanes) pair(g, std::false_type{});
}
#endif

template <int kRows, int kCols, bool kOwnU, bool kPairedX, int kR>
void column_sums(const Row8da4w& row, int64_t n, Lanes16 (&acc)[kR][kCols], Lanes16 (&uacc)[kCols]) {
#if defined(TORCHLIGHT_8DA4W_ZMM)
  if (row.group == 32 || row.group == 64 || row.group % 128 == 0) {
    return sums_by_quad<kRows, kCols, kOwnU, kPairedX>(row, n, acc, uacc);
  }
#else
  if (row.group == 32 && kRows > 0) return sums_g32<kRows, kCols, kOwnU, kPairedX>(row, n, acc, uacc);
#endif
  sums_by_group<kRows, kCols, kOwnU, kPairedX>(row, n, acc, uacc);
}

// The sum of four int32 lanes (exact).
inline int32_t total4(__m256i v) {
  __m128i x = _mm256_castsi256_si128(v);
  x = _mm_add_epi32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(1, 0, 3, 2)));
  x = _mm_add_epi32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(x);
}

// The last group of 32 left out of the lanes (lone_last_group_8da4w): its
// exact sums per row and column, sum u per column (kOwnU), and its scales.
template <int kRows, int kCols, bool kOwnU, bool kPairedX, int kR>
struct LoneLast {
  int32_t dot[kR][kCols];
  int32_t usum[kCols];
  float scale[kCols];

  LoneLast(const Row8da4w& row, int64_t n) {
    const int64_t groups = row.k / 32;
    const int64_t g = groups - 1;
#if defined(TORCHLIGHT_8DA4W_ZMM)
    if constexpr (kRows == 1 && kCols == 8) {
      // Decode: four columns' chunks in one 512-bit vector, twice.
      const int64_t packed = row.k / 2;
      const uint8_t* w = row.weight + n * packed + g * 16;
      const __m512i xa = _mm512_broadcast_i32x4(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(first_half<kPairedX>(row.xq, g, groups))));
      const __m512i xb = _mm512_broadcast_i32x4(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(second_half<kPairedX>(row.xq, g, groups))));
      __m512i dots[2], usums[2];
      for (int h = 0; h < 2; ++h) {
        const QuadWeights lw = unpack_quad(four_chunks(w + 4 * h * packed, packed));
        dots[h] = lane_totals(_mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lw.lo, xa), lw.hi, xb));
        if constexpr (kOwnU) {
          const __m512i sad = quad_usum(lw);  // Lanes 4c and 4c + 2.
          usums[h] = _mm512_add_epi32(sad, _mm512_shuffle_epi32(sad, static_cast<_MM_PERM_ENUM>(_MM_SHUFFLE(1, 0, 3, 2))));
        }
      }
      const __m512i first_lanes_of_four = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dot[0]),
                          _mm512_castsi512_si256(_mm512_permutex2var_epi32(dots[0], first_lanes_of_four, dots[1])));
      if constexpr (kOwnU) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(usum),
                            _mm512_castsi512_si256(_mm512_permutex2var_epi32(usums[0], first_lanes_of_four, usums[1])));
      }
      const __m256i rows = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                              _mm256_set1_epi32(static_cast<int32_t>(groups)));
      _mm256_storeu_ps(scale, _mm256_i32gather_ps(row.w_scales + n * groups + g, rows, 4));
      return;
    }
#else
    if constexpr (kRows == 1 && kCols == 4) {
      // Decode: two columns' chunks in one 256-bit vector, twice.
      const int64_t packed = row.k / 2;
      const uint8_t* w = row.weight + n * packed + g * 16;
      const PairActivations x = {
          _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(first_half<kPairedX>(row.xq, g, groups)))),
          _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(second_half<kPairedX>(row.xq, g, groups))))};
      const __m256i low_mask = _mm256_set1_epi8(0x0F);
      __m256i dots[2], usums[2];
      for (int h = 0; h < 2; ++h) {
        const uint8_t* p = w + 2 * h * packed;
        const __m256i v = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + packed)), 1);
        const PairWeights pw = {_mm256_and_si256(v, low_mask), _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask)};
        dots[h] = add_pair_dot(_mm256_setzero_si256(), pw, x);  // Column 2h in lanes 0-3, 2h + 1 in 4-7.
        usums[h] = kOwnU ? pair_usum(pw) : _mm256_setzero_si256();
      }
      // Each column's four lanes summed (exact): [c0, c2, c0, c2 | c1, c3, c1, c3].
      auto columns_total = [](const __m256i (&v)[2]) {
        const __m256i t = _mm256_hadd_epi32(v[0], v[1]);
        const __m256i t2 = _mm256_hadd_epi32(t, t);
        return _mm_unpacklo_epi32(_mm256_castsi256_si128(t2), _mm256_extracti128_si256(t2, 1));
      };
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dot[0]), columns_total(dots));
      if constexpr (kOwnU) _mm_storeu_si128(reinterpret_cast<__m128i*>(usum), columns_total(usums));
      const __m128i rows = _mm_mullo_epi32(_mm_setr_epi32(0, 1, 2, 3), _mm_set1_epi32(static_cast<int32_t>(groups)));
      _mm_storeu_ps(scale, _mm_i32gather_ps(row.w_scales + n * groups + g, rows, 4));
      return;
    }
#endif
    for (int c = 0; c < kCols; ++c) {
      const LoneWeights lw = unpack_lone(row.weight + (n + c) * (row.k / 2) + g * 16);
      scale[c] = row.w_scales[(n + c) * groups + g];
      usum[c] = kOwnU ? total4(lone_usum(lw)) : 0;
      for (int r = 0; r < kRows; ++r) {
        const int8_t* x = row.xq + r * row.k;
        dot[r][c] = total4(lone_dot(lw, first_half<kPairedX>(x, g, groups), second_half<kPairedX>(x, g, groups)));
      }
    }
  }
};

// finish_column_8da4w and out = fma(sum, x_scale, bias) for four rows by
// two columns, as vectors: fold8 of (row r, column c) at 2r + c gives
// column 0's rows in the low half and column 1's in the high half. The same
// fused multiply-adds and subtraction per lane as the scalar steps.
template <typename Lone>
inline void finish_tile_4x2(const Row8da4w& row, int64_t n, const Lanes16 (&acc)[4][2], const Lone* lone) {
  const int64_t groups = row.k / row.group;
  __m256 products[8], corr[8];
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 2; ++c) {
      products[2 * r + c] = half_sum(acc[r][c]);
      corr[2 * r + c] = half_sum(correction_lanes(row.w_scales + (n + c) * groups, row.correction + r * groups, groups));
    }
  }
  __m256 p = fold8(products);
  if (lone != nullptr) {  // Lane 4c + r: row r, column c.
    const __m256i t = _mm256_setr_epi32(lone->dot[0][0], lone->dot[1][0], lone->dot[2][0], lone->dot[3][0],
                                        lone->dot[0][1], lone->dot[1][1], lone->dot[2][1], lone->dot[3][1]);
    p = _mm256_fmadd_ps(_mm256_cvtepi32_ps(t),
                        _mm256_set_m128(_mm_set1_ps(lone->scale[1]), _mm_set1_ps(lone->scale[0])), p);
  }
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

// Four or eight columns' floats as one vector, and the folds that fill it
// (fold4_columns / fold8_columns).
template <int kCols>
struct ColumnVector;
template <>
struct ColumnVector<8> {
  using F = __m256;
  static F fold(const Lanes16 (&v)[8]) { return fold8_columns(v); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static F load_int(const int32_t* p) {
    return _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
};
template <>
struct ColumnVector<4> {
  using F = __m128;
  static F fold(const Lanes16 (&v)[4]) { return fold4_columns(v); }
  static F load(const float* p) { return _mm_loadu_ps(p); }
  static F load_int(const int32_t* p) {
    return _mm_cvtepi32_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static F set1(float v) { return _mm_set1_ps(v); }
  static F fma(F a, F b, F c) { return _mm_fmadd_ps(a, b, c); }
  static F sub(F a, F b) { return _mm_sub_ps(a, b); }
  static void store(float* p, F v) { _mm_storeu_ps(p, v); }
};

// One row's columns n..n + kCols - 1 (kCols 4 or 8) finished together: the
// folds of fold4_columns / fold8_columns, then finish_column_8da4w and the row's
// scale as vector fused multiply-adds (they round as std::fma does).
template <int kCols, bool kOwnU, typename Lone>
inline void finish_one_row(const Row8da4w& row, int64_t n, const Lanes16 (&acc)[kCols],
                           const Lanes16 (&uacc)[kCols], const Lone* lone) {
  const int64_t groups = row.k / row.group;
  Lanes16 corr[kCols];
#pragma GCC unroll 8
  for (int c = 0; c < kCols; ++c) {
    corr[c] = correction_lanes(row.w_scales + (n + c) * groups, row.correction, groups);
  }
  using V = ColumnVector<kCols>;
  typename V::F products = V::fold(acc);
  typename V::F u_sums = kOwnU ? V::fold(uacc) : V::load(row.u_folded + n);
  if (lone != nullptr) {
    const typename V::F scale = V::load(lone->scale);
    products = V::fma(V::load_int(lone->dot[0]), scale, products);
    if constexpr (kOwnU) u_sums = V::fma(V::load_int(lone->usum), scale, u_sums);
  }
  const typename V::F sum =
      V::sub(V::fma(V::set1(-static_cast<float>(row.zero_point[0])), u_sums, products), V::fold(corr));
  const typename V::F bias = row.bias != nullptr ? V::load(row.bias + n) : V::set1(0.0f);
  V::store(row.out + n, V::fma(sum, V::set1(row.scale[0]), bias));
}

// Columns [n_begin, n_end) of kRows rows, kCols at a time (then one at a
// time). kOwnU: the loop sums u itself (else row.u_folded has it);
// kPairedX: the activations are in paired order.
template <int kRows, int kCols, bool kOwnU = true, bool kPairedX = false>
void columns(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  const int64_t groups = row.k / row.group;
  const bool lone_last = lone_last_group_8da4w(row.group, groups);
  int64_t n = n_begin;
  for (; n + kCols <= n_end; n += kCols) {
    Lanes16 acc[kRows][kCols];
    Lanes16 uacc[kCols];
    for (int c = 0; c < kCols; ++c) {
      uacc[c] = zero_lanes();
      for (int r = 0; r < kRows; ++r) acc[r][c] = zero_lanes();
    }
    column_sums<kRows, kCols, kOwnU, kPairedX>(row, n, acc, uacc);
    using Lone = LoneLast<kRows, kCols, kOwnU, kPairedX, kRows>;
    alignas(32) unsigned char lone_bytes[sizeof(Lone)];
    const Lone* lone = lone_last ? new (lone_bytes) Lone(row, n) : nullptr;
    if constexpr (kRows == 4 && kCols == 2 && !kOwnU) {
      finish_tile_4x2(row, n, acc, lone);  // The prefill tile's eight sums together.
    } else if constexpr (kRows == 1 && (kCols == 4 || kCols == 8)) {
      finish_one_row<kCols, kOwnU>(row, n, acc[0], uacc, lone);
    } else {
      for (int c = 0; c < kCols; ++c) {
        float u_folded = kOwnU ? fold(uacc[c]) : row.u_folded[n + c];
        if (kOwnU && lone != nullptr) u_folded = std::fma(static_cast<float>(lone->usum[c]), lone->scale[c], u_folded);
        const float* w_scales = row.w_scales + (n + c) * groups;
        const float bias = row.bias != nullptr ? row.bias[n + c] : 0.0f;
        for (int r = 0; r < kRows; ++r) {
          float products = fold(acc[r][c]);
          if (lone != nullptr) products = std::fma(static_cast<float>(lone->dot[r][c]), lone->scale[c], products);
          const float corrections = fold(correction_lanes(w_scales, row.correction + r * groups, groups));
          const float sum = finish_column_8da4w(products, u_folded, corrections, row.zero_point[r]);
          row.out[r * row.n + n + c] = std::fma(sum, row.scale[r], bias);
        }
      }
    }
  }
  if constexpr (kCols > 1) {
    if (n < n_end) columns<kRows, 1, kOwnU, kPairedX>(row, n, n_end);
  }
}

#if !defined(TORCHLIGHT_8DA4W_ZMM)
// Decode with groups of 32 in the 256-bit builds (the column sums given):
// columns<1, 4>'s sums and float steps, so the same floats, straight-line,
// with everything the same for every column made once per call (the row's
// pointers as locals, the corrections' tail, the lone last group's
// activations, the zero point and scale); lanes 0-7 of four columns summed
// in one pass over the groups, then lanes 8-15 (four accumulators live, so
// none spills). At K = 288 the work per column outside the chunk steps is a
// large share of the call, so it is kept to a fixed sequence per four
// columns: the products' and the corrections' sixteen lanes folded together
// (one fold8 for eight vectors), the corrections' tail as the call's shape
// needs it (kRest), the lone last group two columns a 256-bit step.

// The corrections' groups past the last whole sixteen (groups % 16): none
// (K = 2048), eight (K = 768: lanes 0-7 by a plain load), nine (K = 288:
// lane 8 by a scalar load), or any (masked loads).
enum class CorrectionRest { kNone, kEight, kNine, kAny };

template <CorrectionRest kRest>
inline Lanes16 decode_correction_lanes(const float* w_scales, const float* correction, int64_t whole,
                                       const CorrectionTail& tail) {
  if constexpr (kRest == CorrectionRest::kAny) {
    return correction_lanes(w_scales, correction, tail.rest + whole, tail);
  } else {
    Lanes16 corr = zero_lanes();
    for (int64_t g = 0; g < whole; g += kLanes8da4w) {
      corr.lo = _mm256_fmadd_ps(_mm256_loadu_ps(w_scales + g), _mm256_loadu_ps(correction + g), corr.lo);
      corr.hi = _mm256_fmadd_ps(_mm256_loadu_ps(w_scales + g + 8), _mm256_loadu_ps(correction + g + 8), corr.hi);
    }
    if constexpr (kRest != CorrectionRest::kNone) {
      corr.lo = _mm256_fmadd_ps(_mm256_loadu_ps(w_scales + whole), tail.correction_lo, corr.lo);
    }
    if constexpr (kRest == CorrectionRest::kNine) {
      // Lane 8's scale alone (vmovss clears the rest): lanes 9-15 add 0 x 0.
      corr.hi = _mm256_fmadd_ps(_mm256_zextps128_ps256(_mm_load_ss(w_scales + whole + 8)), tail.correction_hi,
                                corr.hi);
    }
    return corr;
  }
}

template <bool kLone, CorrectionRest kRest>
void decode_g32(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  const int64_t groups = row.k / 32;
  const int64_t packed = row.k / 2;
  // The classifier streams its weights from L3 or memory: ask for the
  // column 16 ahead, or ~4.5 KB ahead where columns are short (K = 288:
  // 32 columns, 4-5% less time at 288 x 32000 than 16).
  const int64_t prefetch_ahead = std::max<int64_t>(16, 4608 / std::max<int64_t>(packed, 16)) * packed;
  const int64_t in_lanes = groups - (kLone ? 1 : 0);
  const int64_t whole = groups - groups % kLanes8da4w;
  const int8_t* const xq = row.xq;
  const uint8_t* const weight = row.weight;
  const float* const w_scales = row.w_scales;
  const float* const correction = row.correction;
  const float* const u_folded = row.u_folded;
  const float* const bias = row.bias;
  float* const out = row.out;
  const CorrectionTail tail(correction, groups);
  const int64_t last = groups - 1;
  // The lone group's halves in both 128-bit lanes (two columns a step).
  PairActivations x_last{};
  if constexpr (kLone) {
    x_last = {_mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xq + 32 * last))),
              _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xq + 32 * last + 16)))};
  }
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  const __m128 neg_zero_point = _mm_set1_ps(-static_cast<float>(row.zero_point[0]));
  const __m128 row_scale = _mm_set1_ps(row.scale[0]);
  int64_t n = n_begin;
  for (; n + 4 <= n_end; n += 4) {
    const uint8_t* const w = weight + n * packed;
    const float* const s = w_scales + n * groups;
    Lanes16 acc[4];
    for (int c = 0; c < 4; ++c) acc[c] = zero_lanes();
    // Groups g, g + 1 (g even) into the half (g % 4) / 2 of four columns;
    // the prefetch once per 64 bytes of a column.
    auto step = [&](int64_t g, auto high) {
      constexpr bool kHigh = decltype(high)::value;
      const PairActivations x = pair_activations<false>(xq, g, groups);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        const uint8_t* const wc = w + c * packed + g * 16;
        if constexpr (!kHigh) _mm_prefetch(reinterpret_cast<const char*>(wc + prefetch_ahead), _MM_HINT_T0);
        const __m256 scale = pair_scales(s + c * groups + g);
        __m256& a = kHigh ? acc[c].hi : acc[c].lo;
        a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(add_pair_dot(_mm256_setzero_si256(), unpack_pair(wc), x)), scale, a);
      }
    };
    // Lanes 0-7 first (groups g % 4 < 2), then 8-15: each pass keeps four
    // accumulators in registers (sixteen with the constants would spill one).
    for (int64_t g = 0; g + 2 <= in_lanes; g += 4) step(g, std::false_type{});
    for (int64_t g = 2; g + 2 <= in_lanes; g += 4) step(g, std::true_type{});
    // [fold(acc[0]), ..., fold(acc[3]) | fold(corr[0]), ..., fold(corr[3])]
    // (fold8_columns' order), each column's lanes i + 8 added as soon as
    // they are made, so eight registers hold what is left.
    __m256 e[8];
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) e[2 * c] = half_sum(acc[c]);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      e[2 * c + 1] = half_sum(decode_correction_lanes<kRest>(s + c * groups, correction, whole, tail));
    }
    const __m256 folded = fold8(e);
    __m128 products = _mm256_castps256_ps128(folded);
    if constexpr (kLone) {
      // Columns 2h, 2h + 1 in one 256-bit step (lanes 0-3, 4-7).
      __m256i dots[2];
      for (int h = 0; h < 2; ++h) {
        const uint8_t* p = w + 2 * h * packed + last * 16;
        const __m256i v = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + packed)), 1);
        dots[h] = add_pair_dot(_mm256_setzero_si256(), {_mm256_and_si256(v, low_mask),
                               _mm256_and_si256(_mm256_srli_epi16(v, 4), low_mask)}, x_last);
      }
      // [c0, c2, c0, c2 | c1, c3, c1, c3], each column's four lanes summed (exact).
      const __m256i t = _mm256_hadd_epi32(dots[0], dots[1]);
      const __m256i t2 = _mm256_hadd_epi32(t, t);
      const __m128i totals = _mm_unpacklo_epi32(_mm256_castsi256_si128(t2), _mm256_extracti128_si256(t2, 1));
      const float* ls = s + last;
      products = _mm_fmadd_ps(_mm_cvtepi32_ps(totals), _mm_setr_ps(ls[0], ls[groups], ls[2 * groups], ls[3 * groups]),
                              products);
    }
    const __m128 corrections = _mm256_extractf128_ps(folded, 1);
    const __m128 sum = _mm_sub_ps(_mm_fmadd_ps(neg_zero_point, _mm_loadu_ps(u_folded + n), products), corrections);
    const __m128 b = bias != nullptr ? _mm_loadu_ps(bias + n) : _mm_setzero_ps();
    _mm_storeu_ps(out + n, _mm_fmadd_ps(sum, row_scale, b));
  }
  if (n < n_end) columns<1, 1, false>(row, n, n_end);
}

// decode_g32 for the call's shape.
inline void decode_g32(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  const int64_t groups = row.k / 32;
  const bool lone = lone_last_group_8da4w(32, groups);
  switch (groups % kLanes8da4w) {
    case 0: return decode_g32<false, CorrectionRest::kNone>(row, n_begin, n_end);
    case 8: return decode_g32<false, CorrectionRest::kEight>(row, n_begin, n_end);
    case 9: return decode_g32<true, CorrectionRest::kNine>(row, n_begin, n_end);
    default:
      if (lone) return decode_g32<true, CorrectionRest::kAny>(row, n_begin, n_end);
      return decode_g32<false, CorrectionRest::kAny>(row, n_begin, n_end);
  }
}
#endif

#if defined(TORCHLIGHT_8DA4W_ZMM)
// 32 registers: eight decode columns a step, each activation step serving
// all of them; four rows by two columns in the tile.
constexpr int kDecodeColumns8da4w = 8;
constexpr int kTileColumns8da4w = 2;
#else
constexpr int kDecodeColumns8da4w = 4;
constexpr int kTileColumns8da4w = 1;  // Sixteen lanes take two of the sixteen registers.
#endif

template <bool kOwnU>
void columns_for_rows(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  switch (row.rows) {
    case 1:
#if !defined(TORCHLIGHT_8DA4W_ZMM)
      if (!kOwnU && row.group == 32) return decode_g32(row, n_begin, n_end);
#endif
      return columns<1, kDecodeColumns8da4w, kOwnU>(row, n_begin, n_end);
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

// fold_weight_sums_8da4w_* (no multiplies: the same in every build): the u
// half of the loops' sums, column by column.
inline void fold_weight_sums(const uint8_t* weight, const float* w_scales, int64_t k,
                             int64_t group, int64_t n_begin, int64_t n_end, float* u_folded) {
  Row8da4w row{};
  row.weight = weight;
  row.w_scales = w_scales;
  row.k = k;
  row.group = group;
  for (int64_t n = n_begin; n < n_end; ++n) {
    Lanes16 none[1][1];
    Lanes16 uacc[1] = {zero_lanes()};
    column_sums<0, 1, true, false>(row, n, none, uacc);
    u_folded[n] = fold(uacc[0]);
    if (lone_last_group_8da4w(group, k / group)) {
      const LoneLast<0, 1, true, false, 1> lone(row, n);
      u_folded[n] = std::fma(static_cast<float>(lone.usum[0]), lone.scale[0], u_folded[n]);
    }
  }
}

// The prefill tile (linear_8da4w_tile_*): the activations in paired order
// and the weight sums given.
inline void tile_columns(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  switch (row.rows) {
    case 1: return columns<1, kDecodeColumns8da4w, false, true>(row, n_begin, n_end);
    case 2: return columns<2, 2, false, true>(row, n_begin, n_end);
    case 3: return columns<3, kTileColumns8da4w, false, true>(row, n_begin, n_end);
    default: return columns<4, kTileColumns8da4w, false, true>(row, n_begin, n_end);
  }
}

}  // namespace
}  // namespace torchlight::quantized
