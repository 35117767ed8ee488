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
