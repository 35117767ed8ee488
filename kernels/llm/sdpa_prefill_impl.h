// The prefill attention loop of sdpa_with_kv_cache: work items of more than
// kSdpaMaxRowsPerBlock query rows (sdpa_plan_work gives prefill blocks of up
// to kSdpaPrefillRows), kLanes rows at a time with one row per vector lane.
// Include it only from the sdpa_attend_*.cpp files, after
// sdpa_attend_impl.h (same rules: internal linkage, built per ISA).
//
// Why transposed: attend_block takes each score as a dot product along D
// and folds its lanes (at D = 48, stories15m, the folds cost more than the
// multiplies); here a vector holds one key's scores for kLanes rows, so
//   - scores are D broadcast multiply-adds into per-key accumulators
//     (query block transposed once per item, D x kLanes floats);
//   - softmax is vertical: the running maximum, sum and rescale are
//     per-lane vector steps, no reductions;
//   - the weighted values go into the out block transposed (D x kLanes),
//     a vector of weights times a broadcast value per (key, d).
// Rows past their limit (causal, or a shorter row of a grouped head) get
// score -inf and weight 0 in their lane, as attend_block's per-row counts.
// The same online softmax as attend_block; results agree with it to float
// rounding (summation order).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/llm/sdpa_problem.h"

namespace torchlight::llm {
namespace {

constexpr int64_t kPrefillKeys = 64;      // Keys per tile (their weights: 64 vectors).
constexpr int64_t kPrefillMaxDim = 256;   // Larger heads: attend_block (stack arrays).
constexpr int64_t kPrefillDChunk = kLanes == 16 ? 16 : 8;  // Out accumulators held in registers.

// Float16 caches: each tile of key rows, then of value rows, is widened
// into one float32 scratch of this many floats (32 KiB, in L1) before the
// loops use it; every row of the block uses the tile, so the conversion is
// paid once for kLanes rows.
constexpr int64_t kPrefillWideFloats = 8192;

inline VecI splat_i(int32_t x) { return x - VecI{}; }

// Rows [0, n) of a float16 cache (`stride` elements apart) into `wide`,
// packed `dim` floats a row.
inline void widen_rows(const uint16_t* rows, int64_t stride, int64_t n, int64_t dim,
                       float* __restrict wide) {
  for (int64_t j = 0; j < n; ++j) {
    const uint16_t* src = rows + j * stride;
    float* dst = wide + j * dim;
    int64_t d = 0;
    for (; d + kLanes <= dim; d += kLanes) store(dst + d, widen(src + d));
    for (; d < dim; ++d) dst[d] = widen_one(src[d]);
  }
}

// Where one tile's key (or value) rows are read: the float32 cache itself,
// or a float16 cache's rows widened into `wide`.
struct TileRows {
  const float* rows;
  int64_t stride;
};

// Rows [j0, j0 + n) of one head's cache (`base` / `base_half`: row 0 of
// the head; exactly one is non-null).
inline TileRows tile_rows(const float* base, const uint16_t* base_half, int64_t stride,
                          int64_t j0, int64_t n, int64_t dim, float* wide) {
  if (base_half == nullptr) return TileRows{base + j0 * stride, stride};
  widen_rows(base_half + j0 * stride, stride, n, dim, wide);
  return TileRows{wide, dim};
}

// Keys per tile: kPrefillKeys, or fewer when a float16 tile must fit the
// scratch (at least 32: D <= kPrefillMaxDim here).
inline int64_t keys_per_tile(const SdpaProblem& p) {
  if (p.key_cache_half == nullptr) return kPrefillKeys;
  const int64_t fit = kPrefillWideFloats / p.head_dim;
  return fit < kPrefillKeys ? fit : kPrefillKeys;
}

#if TL_VEC_LANES == 16
// In place 16 x 16 transpose (Eklundh: at step h, rows i and i + h swap
// their off-diagonal h x h blocks: row i takes row i + h's columns c - h
// where c has bit h, row i + h takes row i's columns c + h where it has
// not), 64 two-vector shuffles: the query block in and the out block back;
// other widths copy element by element.
#define TL_EKLUNDH_STEP(h, KEEP_LOW, KEEP_HIGH)                 \
  for (int i = 0; i < 16; ++i) {                                \
    if (i & (h)) continue;                                      \
    const Vec16 a = m[i], b = m[i + (h)];                       \
    m[i] = __builtin_shufflevector(a, b, KEEP_LOW);             \
    m[i + (h)] = __builtin_shufflevector(a, b, KEEP_HIGH);      \
  }
#define TL_LIST(...) __VA_ARGS__
inline void transpose_lanes(Vec16 (&m)[16]) {
  TL_EKLUNDH_STEP(8, TL_LIST(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23),
                  TL_LIST(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31))
  TL_EKLUNDH_STEP(4, TL_LIST(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27),
                  TL_LIST(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31))
  TL_EKLUNDH_STEP(2, TL_LIST(0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29),
                  TL_LIST(2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31))
  TL_EKLUNDH_STEP(1, TL_LIST(0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30),
                  TL_LIST(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31))
}
#undef TL_LIST
#undef TL_EKLUNDH_STEP
#endif
inline VecF lane_select(VecI mask, VecF a, VecF b) { return mask ? a : b; }

// qt[d][r] = rows[r][d] for r < count, 0 in the other lanes.
inline void transpose_in(const float* const* rows, int64_t count, int64_t dim,
                         float (*qt)[kLanes]) {
#if TL_VEC_LANES == 16
  for (int64_t d0 = 0; d0 < dim; d0 += 16) {
    const int64_t width = min_i64(16, dim - d0);
    Vec16 m[16];
    for (int64_t r = 0; r < 16; ++r) {
      m[r] = Vec16{};
      if (r >= count) continue;
      if (width == 16) {
        m[r] = load(rows[r] + d0);
      } else {
        for (int64_t c = 0; c < width; ++c) m[r][c] = rows[r][d0 + c];
      }
    }
    transpose_lanes(m);
    for (int64_t c = 0; c < width; ++c) store(qt[d0 + c], m[c]);
  }
#else
  for (int64_t d = 0; d < dim; ++d) {
    for (int64_t r = 0; r < kLanes; ++r) qt[d][r] = r < count ? rows[r][d] : 0.0f;
  }
#endif
}

// out[r][d] = ot[d][r] * scale[r] for r < count.
inline void transpose_out(const float (*ot)[kLanes], VecF scale, int64_t dim, int64_t count,
                          float* const* out) {
#if TL_VEC_LANES == 16
  for (int64_t d0 = 0; d0 < dim; d0 += 16) {
    const int64_t width = min_i64(16, dim - d0);
    Vec16 m[16];
    for (int64_t c = 0; c < 16; ++c) m[c] = c < width ? load(ot[d0 + c]) : Vec16{};
    transpose_lanes(m);
    for (int64_t r = 0; r < count; ++r) {
      const Vec16 v = m[r] * scale[r];
      if (width == 16) {
        store(out[r] + d0, v);
      } else {
        for (int64_t c = 0; c < width; ++c) out[r][d0 + c] = v[c];
      }
    }
  }
#else
  for (int64_t r = 0; r < count; ++r) {
    for (int64_t d = 0; d < dim; ++d) out[r][d] = ot[d][r] * scale[r];
  }
#endif
}

// Rows [row_begin, row_begin + count) (count <= kLanes) of key/value head g
// in batch b, numbered as attend_block numbers them.
void attend_rows_transposed(const SdpaProblem& p, int64_t b, int64_t g, int64_t n_rep,
                            int64_t row_begin, int64_t count) {
  const int64_t dim = p.head_dim;
  float* o[kLanes];
  const float* q_rows[kLanes];
  int32_t limit_lanes[kLanes];
  alignas(64) float qt[kPrefillMaxDim][kLanes];  // Query block, transposed.
  alignas(64) float ot[kPrefillMaxDim][kLanes];  // Out block, transposed.
  alignas(64) float w[kPrefillKeys][kLanes];     // A tile's scores, then weights.
  int64_t max_limit = 0;
  for (int64_t r = 0; r < kLanes; ++r) {
    if (r >= count) {
      limit_lanes[r] = 0;  // No keys: weight 0 everywhere, never stored.
      continue;
    }
    const int64_t row = row_begin + r;
    const int64_t i = row / n_rep;
    const int64_t h = g * n_rep + row % n_rep;
    const float* q = p.query + b * p.query_strides[0] + h * p.query_strides[1] + i * p.query_strides[2];
    o[r] = p.out + b * p.out_strides[0] + h * p.out_strides[1] + i * p.out_strides[2];
    const int64_t limit = p.input_pos != nullptr ? p.input_pos[i * p.input_pos_stride] + 1
                          : p.causal           ? p.start_pos + i + 1
                                               : p.start_pos + p.rows;
    limit_lanes[r] = static_cast<int32_t>(limit);
    if (limit > max_limit) max_limit = limit;
    q_rows[r] = q;
  }
  transpose_in(q_rows, count, dim, qt);
  for (int64_t d = 0; d < dim; ++d) store(ot[d], VecF{});
  VecI limit;
  __builtin_memcpy(&limit, limit_lanes, sizeof(limit));
  const VecF minus_inf = splat(-__builtin_inff());
  VecF running_max = minus_inf;
  VecF running_sum{};

  const HeadRows head = head_rows(p, b, g);
  const int64_t tile = keys_per_tile(p);
  alignas(64) float wide[kPrefillWideFloats];  // A float16 tile's keys, then its values.

  for (int64_t j0 = 0; j0 < max_limit; j0 += tile) {
    const int64_t n = min_i64(tile, max_limit - j0);
    const TileRows keys = tile_rows(head.k, head.k_half, p.key_cache_strides[2], j0, n, dim, wide);
    const float* k_base = keys.rows;
    const int64_t k_stride = keys.stride;
    // Scores of four keys at a time: each query vector load serves four.
    VecF tile_max = minus_inf;
    auto finish = [&](int64_t j, VecF acc) {
      const VecI valid = splat_i(static_cast<int32_t>(j0 + j)) < limit;
      const VecF s = lane_select(valid, acc * p.scale, minus_inf);
      store(w[j], s);
      tile_max = s > tile_max ? s : tile_max;  // NaN skipped, as max_of.
    };
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const float* k = k_base + j * k_stride;
      VecF a0{}, a1{}, a2{}, a3{};
      for (int64_t d = 0; d < dim; ++d) {
        const VecF qd = load(qt[d]);
        a0 += splat(k[d]) * qd;
        a1 += splat(k[k_stride + d]) * qd;
        a2 += splat(k[2 * k_stride + d]) * qd;
        a3 += splat(k[3 * k_stride + d]) * qd;
      }
      finish(j, a0);
      finish(j + 1, a1);
      finish(j + 2, a2);
      finish(j + 3, a3);
    }
    for (; j < n; ++j) {
      const float* k = k_base + j * k_stride;
      VecF a{};
      for (int64_t d = 0; d < dim; ++d) a += splat(k[d]) * load(qt[d]);
      finish(j, a);
    }

    // Rescale what came before where the maximum rose (from -inf: factor 0).
    const VecI rose = tile_max > running_max;
    const VecF factor = lane_select(rose, exp_approx(running_max - tile_max), splat(1.0f));
    running_max = lane_select(rose, tile_max, running_max);
    running_sum *= factor;
    for (int64_t d = 0; d < dim; ++d) store(ot[d], load(ot[d]) * factor);
    // Weights: e^-inf = 0 for keys past a row's limit; 0 too while a row's
    // scores are all -inf (its weights are 0 once a finite score arrives; a
    // row with no finite score ends as NaN, 0 / 0, like torch).
    const VecI has_max = running_max > minus_inf;
    for (j = 0; j < n; ++j) {
      const VecF e = lane_select(has_max, exp_approx(load(w[j]) - running_max), VecF{});
      store(w[j], e);
      running_sum += e;
    }

    // out^T[d] += w[j] * v[j][d], kPrefillDChunk values of d in registers.
    const TileRows values =
        tile_rows(head.v, head.v_half, p.value_cache_strides[2], j0, n, dim, wide);
    const float* v = values.rows;
    const int64_t v_stride = values.stride;
    int64_t d0 = 0;
    for (; d0 + kPrefillDChunk <= dim; d0 += kPrefillDChunk) {
      VecF acc[kPrefillDChunk];
      for (int64_t c = 0; c < kPrefillDChunk; ++c) acc[c] = load(ot[d0 + c]);
      for (j = 0; j < n; ++j) {
        const VecF wj = load(w[j]);
        const float* vj = v + j * v_stride + d0;
        for (int64_t c = 0; c < kPrefillDChunk; ++c) acc[c] += splat(vj[c]) * wj;
      }
      for (int64_t c = 0; c < kPrefillDChunk; ++c) store(ot[d0 + c], acc[c]);
    }
    for (; d0 < dim; ++d0) {
      VecF acc = load(ot[d0]);
      for (j = 0; j < n; ++j) acc += splat(v[j * v_stride + d0]) * load(w[j]);
      store(ot[d0], acc);
    }
  }
  transpose_out(ot, splat(1.0f) / running_sum, dim, count, o);
}

// Work items as attend_range cuts them, each block kLanes rows at a time
// (heads larger than kPrefillMaxDim: attend_block, its rows at a time).
void attend_range_prefill(const SdpaProblem& p, size_t begin, size_t end) {
  const bool transposed = p.head_dim <= kPrefillMaxDim;
  const int64_t step = transposed ? kLanes : kSdpaMaxRowsPerBlock;
  const int64_t n_rep = p.q_heads / p.kv_heads;
  for (size_t item = begin; item < end; ++item) {
    const WorkItemRows w = work_item_rows(p, item);
    for (int64_t r0 = w.row_begin; r0 < w.row_end; r0 += step) {
      const int64_t r1 = min_i64(r0 + step, w.row_end);
      if (transposed) {
        attend_rows_transposed(p, w.b, w.g, n_rep, r0, r1 - r0);
      } else {
        attend_block(p, w.b, w.g, n_rep, r0, r1);
      }
    }
  }
}

}  // namespace
}  // namespace torchlight::llm
