// What the two torchlight attention-with-cache kernels share
// (op_sdpa_with_kv_cache.cpp: [B, H, T, D] tensors; op_rope_sdpa_with_kv_cache.cpp:
// [B, T, H, D] tensors and the rotary embedding): argument checks, the
// scale, and the cache writes.
#pragma once

#include <cstdint>

#include "kernels/llm/sdpa_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/evalue.h"
#include "runtime/core/status.h"

namespace torchlight::llm {

constexpr size_t kSdpaRank = 4;

/// The tensor arguments both operators take (out last in the schema).
struct SdpaArgs {
  portable::NamedTensor query;
  portable::NamedTensor key;
  portable::NamedTensor value;
  portable::NamedTensor key_cache;
  portable::NamedTensor value_cache;
  portable::NamedTensor input_pos;
  portable::NamedTensor out;
};

/// args[0..5] and args[out_index] of either operator's argument list.
SdpaArgs sdpa_args_of(Span<EValue*> args, size_t out_index);

/// The checks that cannot change between runs (the prepare step's):
/// dtypes (float32 query, key, value, out; float32 or float16 caches;
/// int64 input_pos), ranks (`query_shape` / `step_shape` name the layout of
/// query and out / key and value in errors), and out's dim order keeping D
/// innermost (out is resized, its strides recomputed from it).
Status sdpa_check_static(const SdpaArgs& a, const char* query_shape, const char* step_shape);

/// How query, key, value and out order their heads and rows.
enum class SdpaLayout {
  kHeadsFirst,  // [B, H, T, D] (sdpa_with_kv_cache)
  kRowsFirst,   // [B, T, H, D] (rope_sdpa_with_kv_cache)
};

/// Every run, before anything is written: Hkv > 0 (first: the rest divides
/// by it), Hq a multiple of Hkv, T <= S, the caches [B, Hkv, S, D] and key,
/// value [B, Hkv, T, D] or [B, T, Hkv, D] against query and key_cache,
/// input_pos [T]; then D dense in every tensor, data present, and every
/// input_pos in [0, S).
Status sdpa_check_shapes(const SdpaArgs& a, SdpaLayout layout);
Status sdpa_check_data_and_positions(const SdpaArgs& a);

/// kInvalidType naming `t` unless its dtype is `expected`.
Status sdpa_check_dtype(const portable::NamedTensor& t, ScalarType expected);

/// kInvalidType unless both caches are float32, or both float16.
Status sdpa_check_cache_dtypes(const portable::NamedTensor& key_cache,
                               const portable::NamedTensor& value_cache);

/// kInvalidArgument naming `t` (its shape against `expected`, and what the
/// sizes mean) unless its sizes are `expected`.
Status sdpa_check_shape(const portable::NamedTensor& t, const SizesType (&expected)[kSdpaRank],
                        const char* meaning);

/// kInvalidArgument naming `t` unless its last dimension (D) has stride 1:
/// the loops step along D with pointer increments of one element.
Status sdpa_check_last_dim_dense(const portable::NamedTensor& t);

/// kInvalidArgument unless every input_pos value lies in [0, cache_len).
Status sdpa_check_positions(const portable::NamedTensor& input_pos, SizesType cache_len);

/// `scale` is a float or None (the schema's float?): None is 1/sqrt(D).
float sdpa_scale_of(const EValue& scale, int64_t head_dim);

/// Rows of a [batch, head, row, D] view: base pointer and the strides (in
/// elements) of batch, head and row; D is dense.
struct SdpaRows {
  const float* data;
  int64_t strides[3];
};

/// key_cache[b, g, input_pos[i]] = key[b, g, i], the same for values, for
/// every b < batch, g < kv_heads, i < rows (the contract's step 1: all rows
/// before any attention). Float16 caches get the rows rounded by `narrow`.
/// The caches are [B, Hkv, S, D] tensors with D dense; the positions are
/// checked.
void sdpa_write_cache_rows(const SdpaRows& key, const SdpaRows& value, int64_t batch,
                           int64_t kv_heads, int64_t rows, int64_t dim, const Tensor& key_cache,
                           const Tensor& value_cache, const Tensor& input_pos,
                           SdpaNarrowFn narrow);

}  // namespace torchlight::llm
