// The attention loops of sdpa_with_kv_cache, written once and compiled per
// instruction set by sdpa_attend_{generic,avx2,avx512}.cpp. Include it only
// from those files: everything here has internal linkage, so each file gets
// its own copy built with its own flags (see sdpa_problem.h), and it uses no
// standard-library templates or inline functions that could be shared.
// GCC and Clang only (vector extensions), like the rest of the build.
//
// Algorithm: online softmax. A block of query rows that share a key/value
// head walks the valid cache prefix in tiles of kTile keys, keeping per row a
// running maximum m, a running sum l of e^(score - m) and the weighted sum of
// value rows (kept in the out row itself). When a tile raises m, the sum and
// the out row are rescaled by e^(m_old - m_new). So:
//   - scratch is a fixed stack array (kTile scores), whatever the cache
//     length: no allocation per call, no bound on S;
//   - each tile of key and value rows comes from memory once per block of
//     query rows and stays in L1 while the block's rows use it;
//   - scores take four keys at a time with one shared reduction, and the
//     weighted sum keeps up to 8 vectors of the out row in registers over
//     the tile (one walk over the value rows at D = 64 and 8 lanes);
//   - a row never reads cache positions past its own input_pos (causal),
//     so stale rows (possibly NaN) never reach a result;
//   - on float16 caches each work item prefetches the next item's key and
//     value rows (sdpa_prefetch_of), tile by tile, while it computes: in a
//     model the layer's weights have pushed them out of every CPU cache,
//     and this loop, bound by its conversions (vcvtph2ps), leaves memory
//     idle otherwise.
// The inner loops use the compiler's generic vector types, so one source
// becomes SSE, AVX2, AVX-512 or NEON code according to each file's flags.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/llm/sdpa_problem.h"
#include "kernels/llm/vec_math_impl.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace torchlight::llm {
namespace {

// Vec4/Vec8/Vec16, VecF of kLanes floats, splat, load, store, lane_sum,
// exp_approx: vec_math_impl.h (TL_VEC_LANES, set by the including file).

constexpr int64_t kTile = 128;  // Keys per tile: 32 KiB each of K and V at D = 64.

// Float16 caches: whole vectors convert with one instruction where the
// file's flags have it (AVX-512F: 16 lanes, F16C: 8; GCC lowers a
// __builtin_convertvector of _Float16 vectors lane by lane, 10-20x slower),
// lane by lane `_Float16` casts elsewhere. Widening is exact; narrowing
// rounds to nearest even.
inline float widen_one(uint16_t bits) {
  _Float16 h;
  __builtin_memcpy(&h, &bits, sizeof(h));
  return static_cast<float>(h);
}
inline void narrow_one(float x, uint16_t* p) {
  const _Float16 h = static_cast<_Float16>(x);
  __builtin_memcpy(p, &h, sizeof(h));
}

#if defined(__AVX512F__) && TL_VEC_LANES == 16
inline VecF widen(const uint16_t* p) {
  const __m512 v = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  VecF out;
  __builtin_memcpy(&out, &v, sizeof(out));
  return out;
}
inline void narrow(VecF v, uint16_t* p) {
  __m512 x;
  __builtin_memcpy(&x, &v, sizeof(x));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                      _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#elif defined(__F16C__) && TL_VEC_LANES == 8
inline VecF widen(const uint16_t* p) {
  const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  VecF out;
  __builtin_memcpy(&out, &v, sizeof(out));
  return out;
}
inline void narrow(VecF v, uint16_t* p) {
  __m256 x;
  __builtin_memcpy(&x, &v, sizeof(x));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#else
inline VecF widen(const uint16_t* p) {
  VecF v;
  for (int i = 0; i < kLanes; ++i) v[i] = widen_one(p[i]);
  return v;
}
inline void narrow(VecF v, uint16_t* p) {
  for (int i = 0; i < kLanes; ++i) narrow_one(v[i], p + i);
}
#endif

// Cache rows are float (float32 caches) or uint16_t (float16 bits): the
// decode loops below are templates over that element type and read it
// through these, widening in registers.
inline VecF load_kv(const float* p) { return load(p); }
inline VecF load_kv(const uint16_t* p) { return widen(p); }
inline float kv_value(float x) { return x; }
inline float kv_value(uint16_t x) { return widen_one(x); }

void narrow_values(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) narrow(load(src + i), dst + i);
  for (; i < n; ++i) narrow_one(src[i], dst + i);
}

// Row 0 of head g in batch b of a cache: float32 or float16, whichever
// the problem has (the other stays null).
struct HeadRows {
  const float* k;
  const float* v;
  const uint16_t* k_half;
  const uint16_t* v_half;
};
inline HeadRows head_rows(const SdpaProblem& p, int64_t b, int64_t g) {
  const int64_t k_off = b * p.key_cache_strides[0] + g * p.key_cache_strides[1];
  const int64_t v_off = b * p.value_cache_strides[0] + g * p.value_cache_strides[1];
  if (p.key_cache_half != nullptr) {
    return HeadRows{nullptr, nullptr, p.key_cache_half + k_off, p.value_cache_half + v_off};
  }
  return HeadRows{p.key_cache + k_off, p.value_cache + v_off, nullptr, nullptr};
}

// Key and value rows of another head that the score loops prefetch while
// they walk the current tile's keys: scoring key j prefetches key row j and
// value row j there, for j < rows (rows <= 0: nothing). The loops prefetch
// the next work item's rows this way, one head ahead, so they arrive from
// memory (where a model's weight stream has pushed them) while this head
// computes. (The weighted-value walks prefetch nothing: spreading the value
// rows' lines over them measured no faster than issuing them with the keys'.)
struct PrefetchRows {
  const char* k;
  const char* v;
  int64_t k_stride;  // Bytes from one row to the next.
  int64_t v_stride;
  int64_t row_bytes;
  int64_t rows;
};
constexpr PrefetchRows kNoPrefetch{nullptr, nullptr, 0, 0, 0, 0};
constexpr uintptr_t kLineBytes = 64;

template <typename KV>
inline PrefetchRows prefetch_rows_of(const KV* k_row0, int64_t k_stride, const KV* v_row0,
                                     int64_t v_stride, int64_t dim, int64_t rows) {
  return PrefetchRows{reinterpret_cast<const char*>(k_row0),
                      reinterpret_cast<const char*>(v_row0),
                      k_stride * int64_t{sizeof(KV)},
                      v_stride * int64_t{sizeof(KV)},
                      dim * int64_t{sizeof(KV)},
                      rows};
}

// Prefetches every line holding a byte of [begin, end).
inline void prefetch_lines(const char* begin, const char* end) {
  const uintptr_t last = reinterpret_cast<uintptr_t>(end - 1);
  for (uintptr_t a = reinterpret_cast<uintptr_t>(begin) & ~(kLineBytes - 1); a <= last;
       a += kLineBytes) {
    __builtin_prefetch(reinterpret_cast<const void*>(a), 0, 3);  // To L1 (prefetcht0).
  }
}

// Rows [j, end) of one cache: rows that follow each other without a gap as
// one range, none past the last row's last byte.
inline void prefetch_range(const char* base, int64_t stride, int64_t row_bytes, int64_t j,
                           int64_t end) {
  if (stride == row_bytes) {
    prefetch_lines(base + j * stride, base + end * stride);
    return;
  }
  for (; j < end; ++j) prefetch_lines(base + j * stride, base + j * stride + row_bytes);
}

// Key and value rows [j, j + n) of pf, below pf.rows.
inline void prefetch_rows(const PrefetchRows& pf, int64_t j, int64_t n) {
  const int64_t end = min_i64(j + n, pf.rows);
  if (j >= end) return;
  prefetch_range(pf.k, pf.k_stride, pf.row_bytes, j, end);
  prefetch_range(pf.v, pf.v_stride, pf.row_bytes, j, end);
}

// Maximum of the lanes, halving the width each step (lane_sum: vec_math_impl.h).
inline Vec4 vmax(Vec4 a, Vec4 b) { return a > b ? a : b; }
inline Vec8 vmax(Vec8 a, Vec8 b) { return a > b ? a : b; }
inline float lane_max(Vec4 v) {
  const float a = v[0] > v[1] ? v[0] : v[1];
  const float b = v[2] > v[3] ? v[2] : v[3];
  return a > b ? a : b;
}
inline float lane_max(Vec8 v) { return lane_max(vmax(low(v), high(v))); }
inline float lane_max(Vec16 v) { return lane_max(vmax(low(v), high(v))); }

// The lane sums of four vectors, as lanes 0..3: transpose-and-add. Each step
// puts the two halves of two vectors side by side and adds, so the four
// reductions share their shuffles.
inline Vec4 lane_sums4(Vec4 a, Vec4 b, Vec4 c, Vec4 d) {
  const Vec4 ab =
      __builtin_shufflevector(a, b, 0, 1, 4, 5) + __builtin_shufflevector(a, b, 2, 3, 6, 7);
  const Vec4 cd =
      __builtin_shufflevector(c, d, 0, 1, 4, 5) + __builtin_shufflevector(c, d, 2, 3, 6, 7);
  return __builtin_shufflevector(ab, cd, 0, 2, 4, 6) + __builtin_shufflevector(ab, cd, 1, 3, 5, 7);
}
inline Vec4 lane_sums4(Vec8 a, Vec8 b, Vec8 c, Vec8 d) {
  const Vec8 ab = __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11) +
                  __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15);
  const Vec8 cd = __builtin_shufflevector(c, d, 0, 1, 2, 3, 8, 9, 10, 11) +
                  __builtin_shufflevector(c, d, 4, 5, 6, 7, 12, 13, 14, 15);
  return lane_sums4(low(ab), high(ab), low(cd), high(cd));
}
inline Vec4 lane_sums4(Vec16 a, Vec16 b, Vec16 c, Vec16 d) {
  const Vec16 ab =
      __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
      __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  const Vec16 cd =
      __builtin_shufflevector(c, d, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
      __builtin_shufflevector(c, d, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  return lane_sums4(low(ab), high(ab), low(cd), high(cd));
}

// a . b over n floats. Two accumulators halve the dependency chain.
template <typename KV>
inline float dot(const float* __restrict a, const KV* __restrict b, int64_t n) {
  VecF acc0{};
  VecF acc1{};
  int64_t d = 0;
  for (; d + 2 * kLanes <= n; d += 2 * kLanes) {
    acc0 += load(a + d) * load_kv(b + d);
    acc1 += load(a + d + kLanes) * load_kv(b + d + kLanes);
  }
  if (d + kLanes <= n) {
    acc0 += load(a + d) * load_kv(b + d);
    d += kLanes;
  }
  float tail = 0.0f;
  for (; d < n; ++d) tail += a[d] * kv_value(b[d]);
  return lane_sum(acc0 + acc1) + tail;
}

// out[i] = a . b_i for the 4 rows b_i = b + i * b_stride, sharing the loads
// of a and one reduction of the four accumulators.
template <typename KV>
inline void dot4(const float* __restrict a, const KV* __restrict b, int64_t b_stride,
                 int64_t n, float* out) {
  const KV* b0 = b;
  const KV* b1 = b + b_stride;
  const KV* b2 = b + 2 * b_stride;
  const KV* b3 = b + 3 * b_stride;
  VecF acc0{};
  VecF acc1{};
  VecF acc2{};
  VecF acc3{};
  int64_t d = 0;
  for (; d + kLanes <= n; d += kLanes) {
    const VecF x = load(a + d);
    acc0 += x * load_kv(b0 + d);
    acc1 += x * load_kv(b1 + d);
    acc2 += x * load_kv(b2 + d);
    acc3 += x * load_kv(b3 + d);
  }
  float tail[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (; d < n; ++d) {
    tail[0] += a[d] * kv_value(b0[d]);
    tail[1] += a[d] * kv_value(b1[d]);
    tail[2] += a[d] * kv_value(b2[d]);
    tail[3] += a[d] * kv_value(b3[d]);
  }
  const Vec4 sums = lane_sums4(acc0, acc1, acc2, acc3);
  for (int i = 0; i < 4; ++i) out[i] = sums[i] + tail[i];
}

// s[j] = scale * q . k_j for the n key rows k_j = k + j * k_stride.
// Prefetches pf's rows alongside.
template <typename KV>
inline void tile_scores(const float* q, const KV* k, int64_t k_stride, int64_t n, int64_t dim,
                        float scale, float* s, const PrefetchRows& pf = kNoPrefetch) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    prefetch_rows(pf, j, 4);
    dot4(q, k + j * k_stride, k_stride, dim, s + j);
    for (int i = 0; i < 4; ++i) s[j + i] *= scale;
  }
  for (; j < n; ++j) {
    prefetch_rows(pf, j, 1);
    s[j] = dot(q, k + j * k_stride, dim) * scale;
  }
}

// out0[i] = q0 . b_i and out1[i] = q1 . b_i for the 4 rows b_i = b + i *
// b_stride: a 2 x 4 register tile, so each key load serves two query rows
// and each query load four keys (8 accumulators fit AVX2's 16 registers).
template <typename KV>
inline void dot2x4(const float* __restrict q0, const float* __restrict q1,
                   const KV* __restrict b, int64_t b_stride, int64_t n, float* out0,
                   float* out1) {
  const KV* b0 = b;
  const KV* b1 = b + b_stride;
  const KV* b2 = b + 2 * b_stride;
  const KV* b3 = b + 3 * b_stride;
  VecF a0{}, a1{}, a2{}, a3{}, c0{}, c1{}, c2{}, c3{};
  int64_t d = 0;
  for (; d + kLanes <= n; d += kLanes) {
    const VecF x = load(q0 + d);
    const VecF y = load(q1 + d);
    const VecF k0 = load_kv(b0 + d);
    const VecF k1 = load_kv(b1 + d);
    const VecF k2 = load_kv(b2 + d);
    const VecF k3 = load_kv(b3 + d);
    a0 += x * k0;
    a1 += x * k1;
    a2 += x * k2;
    a3 += x * k3;
    c0 += y * k0;
    c1 += y * k1;
    c2 += y * k2;
    c3 += y * k3;
  }
  float t0[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  float t1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (; d < n; ++d) {
    const KV* rows[4] = {b0, b1, b2, b3};
    for (int i = 0; i < 4; ++i) {
      t0[i] += q0[d] * kv_value(rows[i][d]);
      t1[i] += q1[d] * kv_value(rows[i][d]);
    }
  }
  const Vec4 s0 = lane_sums4(a0, a1, a2, a3);
  const Vec4 s1 = lane_sums4(c0, c1, c2, c3);
  for (int i = 0; i < 4; ++i) {
    out0[i] = s0[i] + t0[i];
    out1[i] = s1[i] + t1[i];
  }
}

// tile_scores for two query rows over the same n keys.
template <typename KV>
inline void tile_scores2(const float* q0, const float* q1, const KV* k, int64_t k_stride,
                         int64_t n, int64_t dim, float scale, float* s0, float* s1,
                         const PrefetchRows& pf) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    prefetch_rows(pf, j, 4);
    dot2x4(q0, q1, k + j * k_stride, k_stride, dim, s0 + j, s1 + j);
    for (int i = 0; i < 4; ++i) {
      s0[j + i] *= scale;
      s1[j + i] *= scale;
    }
  }
  for (; j < n; ++j) {
    prefetch_rows(pf, j, 1);
    s0[j] = dot(q0, k + j * k_stride, dim) * scale;
    s1[j] = dot(q1, k + j * k_stride, dim) * scale;
  }
}

// o[0, kVectors * kLanes) += sum over j < n of w[j] * v_j: one walk over the
// value rows with a chain per vector.
template <int kVectors, typename KV>
inline void accumulate_vectors(float* __restrict o, const float* __restrict w,
                               const KV* __restrict v, int64_t v_stride, int64_t n) {
  VecF a[kVectors];
  for (int i = 0; i < kVectors; ++i) a[i] = load(o + i * kLanes);
  for (int64_t j = 0; j < n; ++j) {
    const KV* x = v + j * v_stride;
    const VecF wj = splat(w[j]);
    for (int i = 0; i < kVectors; ++i) a[i] += wj * load_kv(x + i * kLanes);
  }
  for (int i = 0; i < kVectors; ++i) store(o + i * kLanes, a[i]);
}

// accumulate_vectors over `vectors` (1..kMaxWalkVectors) vectors.
constexpr int64_t kMaxWalkVectors = 8;
template <typename KV>
inline void accumulate_walk(float* __restrict o, const float* __restrict w,
                            const KV* __restrict v, int64_t v_stride, int64_t n,
                            int64_t vectors) {
  switch (vectors) {
    case 1: return accumulate_vectors<1>(o, w, v, v_stride, n);
    case 2: return accumulate_vectors<2>(o, w, v, v_stride, n);
    case 3: return accumulate_vectors<3>(o, w, v, v_stride, n);
    case 4: return accumulate_vectors<4>(o, w, v, v_stride, n);
    case 5: return accumulate_vectors<5>(o, w, v, v_stride, n);
    case 6: return accumulate_vectors<6>(o, w, v, v_stride, n);
    case 7: return accumulate_vectors<7>(o, w, v, v_stride, n);
    default: return accumulate_vectors<8>(o, w, v, v_stride, n);
  }
}

// o += sum over j < n of w[j] * v_j, v_j = v + j * v_stride, over dim floats.
// Up to 8 vectors of o stay in registers across all n value rows, so a
// head of up to 8 vectors (D = 64 at 8 lanes) reads each value row once,
// in order, in one walk (it took two walks of four until session 23, and
// before session 14 one walk per vector at D = 48 and 16 lanes: a chain of
// dependent multiply-adds each). Each lane adds the same products in the
// same order whatever the walks, so the same floats.
template <typename KV>
inline void accumulate_values(float* __restrict o, const float* __restrict w,
                              const KV* __restrict v, int64_t v_stride, int64_t n,
                              int64_t dim) {
  const int64_t whole = dim / kLanes * kLanes;
  for (int64_t d = 0; d < whole; d += kMaxWalkVectors * kLanes) {
    accumulate_walk(o + d, w, v + d, v_stride, n, min_i64((whole - d) / kLanes, kMaxWalkVectors));
  }
  for (int64_t d = whole; d < dim; ++d) {
    float a = o[d];
    for (int64_t j = 0; j < n; ++j) a += w[j] * kv_value(v[j * v_stride + d]);
    o[d] = a;
  }
}

// accumulate_values for four out rows over the same n value rows: a 4 x 2
// vector register tile, so each value load serves four rows.
template <typename KV>
inline void accumulate_values4(float* const* o, const float* const* w,
                               const KV* __restrict v, int64_t v_stride, int64_t n,
                               int64_t dim) {
  int64_t d = 0;
  for (; d + 2 * kLanes <= dim; d += 2 * kLanes) {
    VecF a[4][2];
    for (int r = 0; r < 4; ++r) {
      a[r][0] = load(o[r] + d);
      a[r][1] = load(o[r] + d + kLanes);
    }
    for (int64_t j = 0; j < n; ++j) {
      const KV* x = v + j * v_stride + d;
      const VecF x0 = load_kv(x);
      const VecF x1 = load_kv(x + kLanes);
      for (int r = 0; r < 4; ++r) {
        const VecF wj = splat(w[r][j]);
        a[r][0] += wj * x0;
        a[r][1] += wj * x1;
      }
    }
    for (int r = 0; r < 4; ++r) {
      store(o[r] + d, a[r][0]);
      store(o[r] + d + kLanes, a[r][1]);
    }
  }
  for (; d + kLanes <= dim; d += kLanes) {
    VecF a[4];
    for (int r = 0; r < 4; ++r) a[r] = load(o[r] + d);
    for (int64_t j = 0; j < n; ++j) {
      const VecF x = load_kv(v + j * v_stride + d);
      for (int r = 0; r < 4; ++r) a[r] += splat(w[r][j]) * x;
    }
    for (int r = 0; r < 4; ++r) store(o[r] + d, a[r]);
  }
  for (; d < dim; ++d) {
    for (int r = 0; r < 4; ++r) {
      float a = o[r][d];
      for (int64_t j = 0; j < n; ++j) a += w[r][j] * kv_value(v[j * v_stride + d]);
      o[r][d] = a;
    }
  }
}

// y *= a over n floats.
inline void scale_row(float* y, float a, int64_t n) {
  const VecF va = splat(a);
  int64_t d = 0;
  for (; d + kLanes <= n; d += kLanes) store(y + d, load(y + d) * va);
  for (; d < n; ++d) y[d] *= a;
}


// Largest of s[0..n), n >= 1. NaNs are skipped (they reach the result
// through the exponentials instead).
inline float max_of(const float* s, int64_t n) {
  float m = s[0];
  int64_t j = 0;
  if (n >= kLanes) {
    VecF acc = load(s);
    for (j = kLanes; j + kLanes <= n; j += kLanes) {
      const VecF v = load(s + j);
      acc = v > acc ? v : acc;
    }
    m = lane_max(acc);
  }
  for (; j < n; ++j) m = s[j] > m ? s[j] : m;
  return m;
}

// s[j] = e^(s[j] - m) for j < n; returns their sum.
inline float exp_shifted_sum(float* s, int64_t n, float m) {
  const VecF vm = splat(m);
  VecF acc{};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const VecF e = exp_approx(load(s + j) - vm);
    store(s + j, e);
    acc += e;
  }
  float sum = lane_sum(acc);
  for (; j < n; ++j) {
    const float e = exp_approx(s[j] - m);
    s[j] = e;
    sum += e;
  }
  return sum;
}

// Query rows [row_begin, row_end) of key/value head g in batch b; rows are
// numbered i * n_rep + r for position row i and query head g * n_rep + r.
// The cache rows of head g in batch b start at k_base and v_base (float32,
// or float16 bits widened as they are loaded). Rows [0, next_rows) of
// k_next and v_next (the next work item's head) are prefetched alongside,
// tile by tile: scoring a tile's keys prefetches the same rows of k_next
// and v_next.
template <typename KV>
void attend_block_rows(const SdpaProblem& p, const KV* k_base, const KV* v_base, int64_t b,
                       int64_t g, int64_t n_rep, int64_t row_begin, int64_t row_end,
                       const KV* k_next, const KV* v_next, int64_t next_rows) {
  const int64_t num_rows = row_end - row_begin;  // 1..kSdpaMaxRowsPerBlock
  const int64_t dim = p.head_dim;
  const float* q[kSdpaMaxRowsPerBlock];
  float* o[kSdpaMaxRowsPerBlock];
  int64_t limit[kSdpaMaxRowsPerBlock];  // Row r attends to cache positions < limit[r].
  float running_max[kSdpaMaxRowsPerBlock];
  float running_sum[kSdpaMaxRowsPerBlock];
  // Each row's scores, then weights, for the current tile.
  float scores[kSdpaMaxRowsPerBlock][kTile];

  int64_t max_limit = 0;
  for (int64_t r = 0; r < num_rows; ++r) {
    const int64_t row = row_begin + r;
    const int64_t i = row / n_rep;
    const int64_t h = g * n_rep + row % n_rep;
    q[r] = p.query + b * p.query_strides[0] + h * p.query_strides[1] + i * p.query_strides[2];
    o[r] = p.out + b * p.out_strides[0] + h * p.out_strides[1] + i * p.out_strides[2];
    limit[r] = p.input_pos != nullptr ? p.input_pos[i * p.input_pos_stride] + 1
               : p.causal           ? p.start_pos + i + 1
                                    : p.start_pos + p.rows;
    if (limit[r] > max_limit) max_limit = limit[r];
    running_max[r] = -__builtin_inff();
    running_sum[r] = 0.0f;
    for (int64_t d = 0; d < dim; ++d) o[r][d] = 0.0f;
  }

  const int64_t k_stride = p.key_cache_strides[2];
  const int64_t v_stride = p.value_cache_strides[2];

  for (int64_t j0 = 0; j0 < max_limit; j0 += kTile) {
    const int64_t j1 = min_i64(j0 + kTile, max_limit);
    const KV* k = k_base + j0 * k_stride;
    const KV* v = v_base + j0 * v_stride;
    int64_t n[kSdpaMaxRowsPerBlock];  // Keys of this tile row r sees (<= 0: none).
    for (int64_t r = 0; r < num_rows; ++r) n[r] = min_i64(j1, limit[r]) - j0;
    // The next head's rows of this tile, prefetched by the first score loop
    // below as it walks the same rows here (rows it does not walk: not at all).
    const int64_t next_n = min_i64(j1, next_rows) - j0;
    PrefetchRows ahead = kNoPrefetch;
    if (next_n > 0) {
      ahead = prefetch_rows_of(k_next + j0 * k_stride, k_stride, v_next + j0 * v_stride, v_stride,
                               dim, next_n);
    }

    // Scores, two rows at a time over the keys both see (the tile's key
    // rows stay in L1 across the block), then each row's own remainder.
    // No row reads a key past its own limit.
    int64_t r = 0;
    for (; r + 2 <= num_rows; r += 2) {
      int64_t common = min_i64(n[r], n[r + 1]);
      if (common < 0) common = 0;
      if (common > 0) {
        tile_scores2(q[r], q[r + 1], k, k_stride, common, dim, p.scale, scores[r], scores[r + 1],
                     r == 0 ? ahead : kNoPrefetch);
      }
      for (int64_t e = r; e < r + 2; ++e) {
        if (n[e] > common) {
          tile_scores(q[e], k + common * k_stride, k_stride, n[e] - common, dim, p.scale,
                      scores[e] + common);
        }
      }
    }
    if (r < num_rows && n[r] > 0) {
      tile_scores(q[r], k, k_stride, n[r], dim, p.scale, scores[r],
                  r == 0 ? ahead : kNoPrefetch);
    }

    // Softmax numerators per row, rescaling what came before when the
    // maximum rises.
    int64_t active[kSdpaMaxRowsPerBlock];  // Rows with weights to add.
    int64_t num_active = 0;
    for (r = 0; r < num_rows; ++r) {
      if (n[r] <= 0) continue;
      const float tile_max = max_of(scores[r], n[r]);
      if (tile_max > running_max[r]) {
        const float factor = exp_approx(running_max[r] - tile_max);  // 0 on the first tile.
        running_sum[r] *= factor;
        scale_row(o[r], factor, dim);
        running_max[r] = tile_max;
      }
      // Scores all -inf so far: their weights are 0 once a finite score
      // arrives (and a row with no finite score ends as NaN, like torch).
      if (running_max[r] == -__builtin_inff()) continue;
      running_sum[r] += exp_shifted_sum(scores[r], n[r], running_max[r]);
      active[num_active++] = r;
    }

    // Weighted value rows, four rows at a time over the keys all four see,
    // then each row's own remainder.
    int64_t a = 0;
    for (; a + 4 <= num_active; a += 4) {
      float* outs[4];
      const float* weights[4];
      int64_t common = n[active[a]];
      for (int i = 0; i < 4; ++i) {
        outs[i] = o[active[a + i]];
        weights[i] = scores[active[a + i]];
        common = min_i64(common, n[active[a + i]]);
      }
      accumulate_values4(outs, weights, v, v_stride, common, dim);
      for (int i = 0; i < 4; ++i) {
        const int64_t row = active[a + i];
        if (n[row] > common) {
          accumulate_values(o[row], scores[row] + common, v + common * v_stride, v_stride,
                            n[row] - common, dim);
        }
      }
    }
    for (; a < num_active; ++a) {
      const int64_t row = active[a];
      accumulate_values(o[row], scores[row], v, v_stride, n[row], dim);
    }
  }
  for (int64_t r = 0; r < num_rows; ++r) scale_row(o[r], 1.0f / running_sum[r], dim);
}

// Query rows [row_begin, row_end) of key/value head g in batch b, on the
// problem's float32 or float16 caches. On float16 caches it prefetches
// `ahead`'s rows (sdpa_prefetch_of) as it goes: there the loop is bound by
// its conversions, and memory streams in behind them (stories110M's decode
// at 160 positions with the CPU caches evicted, bench/sdpa's
// torchlight_sdpa_cold_bench: 101-103 -> 83-85 us a call). Float32 rows are twice
// the bytes for the same work, so memory bounds them either way: the
// prefetches gained nothing there and cost 15% when the rows sat in L2/L3.
void attend_block(const SdpaProblem& p, int64_t b, int64_t g, int64_t n_rep, int64_t row_begin,
                  int64_t row_end, const SdpaPrefetch& ahead = kNoSdpaPrefetch) {
  const HeadRows head = head_rows(p, b, g);
  if (head.k_half != nullptr) {
    attend_block_rows(p, head.k_half, head.v_half, b, g, n_rep, row_begin, row_end,
                      p.key_cache_half + ahead.key_offset,
                      p.value_cache_half + ahead.value_offset, ahead.rows);
  } else {
    attend_block_rows(p, head.k, head.v, b, g, n_rep, row_begin, row_end, head.k, head.v,
                      int64_t{0});
  }
}

// Work item `item`'s key/value head (batch b, head g) and its rows
// [row_begin, row_end), numbered as attend_block numbers them.
struct WorkItemRows {
  int64_t b, g, row_begin, row_end;
};
inline WorkItemRows work_item_rows(const SdpaProblem& p, size_t item) {
  const int64_t group_rows = (p.q_heads / p.kv_heads) * p.rows;
  const int64_t w = static_cast<int64_t>(item);
  const int64_t block = w % p.blocks_per_group;
  const int64_t group = w / p.blocks_per_group;  // b * Hkv + g
  const int64_t row_begin = block * p.rows_per_block;
  return {group / p.kv_heads, group % p.kv_heads, row_begin,
          min_i64(row_begin + p.rows_per_block, group_rows)};
}

void attend_range(const SdpaProblem& p, size_t begin, size_t end) {
  const int64_t n_rep = p.q_heads / p.kv_heads;
  const bool prefetch = p.key_cache_half != nullptr;  // Float16 caches only (attend_block).
  for (size_t item = begin; item < end; ++item) {
    const WorkItemRows w = work_item_rows(p, item);
    if (w.row_begin < w.row_end) {
      attend_block(p, w.b, w.g, n_rep, w.row_begin, w.row_end,
                   prefetch ? sdpa_prefetch_of(p, item) : kNoSdpaPrefetch);
    }
  }
}

}  // namespace
}  // namespace torchlight::llm
