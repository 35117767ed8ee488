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

inline VecI splat_i(int32_t x) { return x - VecI{}; }
inline VecF lane_select(VecI mask, VecF a, VecF b) { return mask ? a : b; }

// Rows [row_begin, row_begin + count) (count <= kLanes) of key/value head g
// in batch b, numbered as attend_block numbers them.
void attend_rows_transposed(const SdpaProblem& p, int64_t b, int64_t g, int64_t n_rep,
                            int64_t row_begin, int64_t count) {
  const int64_t dim = p.head_dim;
  float* o[kLanes];
  int32_t limit_lanes[kLanes];
  alignas(64) float qt[kPrefillMaxDim][kLanes];  // Query block, transposed.
  alignas(64) float ot[kPrefillMaxDim][kLanes];  // Out block, transposed.
  alignas(64) float w[kPrefillKeys][kLanes];     // A tile's scores, then weights.
  int64_t max_limit = 0;
  for (int64_t r = 0; r < kLanes; ++r) {
    if (r >= count) {
      limit_lanes[r] = 0;  // No keys: weight 0 everywhere, never stored.
      o[r] = nullptr;
      for (int64_t d = 0; d < dim; ++d) qt[d][r] = 0.0f;
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
    for (int64_t d = 0; d < dim; ++d) qt[d][r] = q[d];
  }
  for (int64_t d = 0; d < dim; ++d) store(ot[d], VecF{});
  VecI limit;
  __builtin_memcpy(&limit, limit_lanes, sizeof(limit));
  const VecF minus_inf = splat(-__builtin_inff());
  VecF running_max = minus_inf;
  VecF running_sum{};

  const float* k_base = p.key_cache + b * p.key_cache_strides[0] + g * p.key_cache_strides[1];
  const float* v_base = p.value_cache + b * p.value_cache_strides[0] + g * p.value_cache_strides[1];
  const int64_t k_stride = p.key_cache_strides[2];
  const int64_t v_stride = p.value_cache_strides[2];

  for (int64_t j0 = 0; j0 < max_limit; j0 += kPrefillKeys) {
    const int64_t n = min_i64(kPrefillKeys, max_limit - j0);
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
      const float* k = k_base + (j0 + j) * k_stride;
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
      const float* k = k_base + (j0 + j) * k_stride;
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
    const float* v = v_base + j0 * v_stride;
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
  alignas(64) float inv[kLanes];
  store(inv, splat(1.0f) / running_sum);
  for (int64_t r = 0; r < count; ++r) {
    for (int64_t d = 0; d < dim; ++d) o[r][d] = ot[d][r] * inv[r];
  }
}

// Work items as attend_range cuts them, each block kLanes rows at a time
// (heads larger than kPrefillMaxDim: attend_block, its rows at a time).
void attend_range_prefill(const SdpaProblem& p, size_t begin, size_t end) {
  const bool transposed = p.head_dim <= kPrefillMaxDim;
  const int64_t step = transposed ? kLanes : kSdpaMaxRowsPerBlock;
  const int64_t n_rep = p.q_heads / p.kv_heads;
  const int64_t group_rows = n_rep * p.rows;
  for (size_t item = begin; item < end; ++item) {
    const int64_t w = static_cast<int64_t>(item);
    const int64_t block = w % p.blocks_per_group;
    const int64_t group = w / p.blocks_per_group;  // b * Hkv + g
    const int64_t row_begin = block * p.rows_per_block;
    const int64_t row_end = min_i64(row_begin + p.rows_per_block, group_rows);
    for (int64_t r0 = row_begin; r0 < row_end; r0 += step) {
      const int64_t r1 = min_i64(r0 + step, row_end);
      if (transposed) {
        attend_rows_transposed(p, group / p.kv_heads, group % p.kv_heads, n_rep, r0, r1 - r0);
      } else {
        attend_block(p, group / p.kv_heads, group % p.kv_heads, n_rep, r0, r1);
      }
    }
  }
}

}  // namespace
}  // namespace torchlight::llm
