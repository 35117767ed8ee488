#include "kernels/llm/sdpa_args.h"

#include <cmath>
#include <cstring>

#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::llm {

using portable::NamedTensor;

Status sdpa_check_dtype(const NamedTensor& t, ScalarType expected) {
  TL_CHECK_OR_RETURN(t.tensor.scalar_type() == expected, Error::kInvalidType,
                     "argument '%s' has dtype %s, expected %s (the only dtype this kernel "
                     "supports)",
                     t.name, to_string(t.tensor.scalar_type()), to_string(expected));
  return Error::kOk;
}

Status sdpa_check_cache_dtypes(const NamedTensor& key_cache, const NamedTensor& value_cache) {
  // Float32, or both float16 (written rounded, read widened).
  const ScalarType cache_type = key_cache.tensor.scalar_type();
  TL_CHECK_OR_RETURN(cache_type == ScalarType::kFloat || cache_type == ScalarType::kHalf,
                     Error::kInvalidType,
                     "argument 'key_cache' has dtype %s, expected float32 or float16 (a "
                     "float16 cache)",
                     to_string(cache_type));
  TL_CHECK_OR_RETURN(value_cache.tensor.scalar_type() == cache_type, Error::kInvalidType,
                     "argument 'value_cache' has dtype %s, expected %s like 'key_cache'",
                     to_string(value_cache.tensor.scalar_type()), to_string(cache_type));
  return Error::kOk;
}

Status sdpa_check_shape(const NamedTensor& t, const SizesType (&expected)[kSdpaRank],
                        const char* meaning) {
  bool same = true;
  for (size_t d = 0; d < kSdpaRank; ++d) same = same && t.tensor.size(d) == expected[d];
  if (same) return Error::kOk;
  char actual_text[96];
  char expected_text[96];
  return Status::error(Error::kInvalidArgument, "argument '%s' has shape %s, expected %s (%s)",
                       t.name, format_sizes(t.tensor.sizes(), actual_text, sizeof(actual_text)),
                       format_sizes(Span<const SizesType>(expected), expected_text,
                                    sizeof(expected_text)),
                       meaning);
}

Status sdpa_check_last_dim_dense(const NamedTensor& t) {
  const int64_t stride = t.tensor.strides()[kSdpaRank - 1];
  TL_CHECK_OR_RETURN(stride == 1 || t.tensor.size(kSdpaRank - 1) <= 1, Error::kInvalidArgument,
                     "argument '%s' has stride %lld in its last dimension (D), expected 1",
                     t.name, static_cast<long long>(stride));
  return Error::kOk;
}

Status sdpa_check_positions(const NamedTensor& input_pos, SizesType cache_len) {
  const int64_t* pos = input_pos.tensor.const_data_ptr<int64_t>();
  const int64_t pos_stride = input_pos.tensor.strides()[0];
  for (int64_t i = 0; i < input_pos.tensor.size(0); ++i) {
    const int64_t value = pos[i * pos_stride];
    TL_CHECK_OR_RETURN(value >= 0 && value < cache_len, Error::kInvalidArgument,
                       "input_pos[%lld] = %lld is outside [0, S = %d), the positions of "
                       "key_cache",
                       static_cast<long long>(i), static_cast<long long>(value), cache_len);
  }
  return Error::kOk;
}

SdpaArgs sdpa_args_of(Span<EValue*> args, size_t out_index) {
  return SdpaArgs{{args[0]->to_tensor(), "query"},       {args[1]->to_tensor(), "key"},
                  {args[2]->to_tensor(), "value"},       {args[3]->to_tensor(), "key_cache"},
                  {args[4]->to_tensor(), "value_cache"}, {args[5]->to_tensor(), "input_pos"},
                  {args[out_index]->to_tensor(), "out"}};
}

Status sdpa_check_static(const SdpaArgs& a, const char* query_shape, const char* step_shape) {
  for (const NamedTensor* t : {&a.query, &a.key, &a.value, &a.out}) {
    TL_RETURN_IF_ERROR(sdpa_check_dtype(*t, ScalarType::kFloat));
  }
  TL_RETURN_IF_ERROR(sdpa_check_cache_dtypes(a.key_cache, a.value_cache));
  TL_RETURN_IF_ERROR(sdpa_check_dtype(a.input_pos, ScalarType::kLong));
  TL_RETURN_IF_ERROR(portable::check_rank(a.query, kSdpaRank, query_shape));
  TL_RETURN_IF_ERROR(portable::check_rank(a.key, kSdpaRank, step_shape));
  TL_RETURN_IF_ERROR(portable::check_rank(a.value, kSdpaRank, step_shape));
  TL_RETURN_IF_ERROR(portable::check_rank(a.key_cache, kSdpaRank, "[B, Hkv, S, D]"));
  TL_RETURN_IF_ERROR(portable::check_rank(a.value_cache, kSdpaRank, "[B, Hkv, S, D]"));
  TL_RETURN_IF_ERROR(portable::check_rank(a.input_pos, 1, "[T]"));
  TL_RETURN_IF_ERROR(portable::check_rank(a.out, kSdpaRank, query_shape));
  TL_CHECK_OR_RETURN(a.out.tensor.size(kSdpaRank - 1) <= 1 ||
                         a.out.tensor.dim_order()[kSdpaRank - 1] == kSdpaRank - 1,
                     Error::kInvalidArgument,
                     "argument 'out' has dim order ending in %d, expected 3 (D innermost)",
                     a.out.tensor.dim_order()[kSdpaRank - 1]);
  return Error::kOk;
}

Status sdpa_check_shapes(const SdpaArgs& a, SdpaLayout layout) {
  const bool heads_first = layout == SdpaLayout::kHeadsFirst;
  const SizesType batch = a.query.tensor.size(0);
  const SizesType q_heads = a.query.tensor.size(heads_first ? 1 : 2);
  const SizesType rows = a.query.tensor.size(heads_first ? 2 : 1);
  const SizesType dim = a.query.tensor.size(3);
  const SizesType kv_heads = a.key_cache.tensor.size(1);
  const SizesType cache_len = a.key_cache.tensor.size(2);
  TL_CHECK_OR_RETURN(kv_heads > 0, Error::kInvalidArgument,
                     "argument 'key_cache' has 0 key/value heads (dimension 1), expected at "
                     "least 1");
  TL_CHECK_OR_RETURN(q_heads % kv_heads == 0, Error::kInvalidArgument,
                     "query has %d heads, which is not a multiple of the %d key/value heads of "
                     "key_cache",
                     q_heads, kv_heads);
  TL_CHECK_OR_RETURN(rows <= cache_len, Error::kInvalidArgument,
                     "query has T = %d rows, more than the S = %d positions of key_cache", rows,
                     cache_len);
  const SizesType cache_shape[kSdpaRank] = {batch, kv_heads, cache_len, dim};
  const char* cache_meaning = "[B, Hkv, S, D]: B and D of query, Hkv and S of key_cache";
  TL_RETURN_IF_ERROR(sdpa_check_shape(a.key_cache, cache_shape, cache_meaning));
  TL_RETURN_IF_ERROR(sdpa_check_shape(a.value_cache, cache_shape, cache_meaning));
  const SizesType heads_first_shape[kSdpaRank] = {batch, kv_heads, rows, dim};
  const SizesType rows_first_shape[kSdpaRank] = {batch, rows, kv_heads, dim};
  const char* step_meaning = heads_first
                                 ? "[B, Hkv, T, D]: B, T and D of query, Hkv of key_cache"
                                 : "[B, T, Hkv, D]: B, T and D of query, Hkv of key_cache";
  for (const NamedTensor* t : {&a.key, &a.value}) {
    TL_RETURN_IF_ERROR(
        sdpa_check_shape(*t, heads_first ? heads_first_shape : rows_first_shape, step_meaning));
  }
  TL_CHECK_OR_RETURN(a.input_pos.tensor.size(0) == rows, Error::kInvalidArgument,
                     "argument 'input_pos' has %d positions, expected T = %d (dimension %d of "
                     "query)",
                     a.input_pos.tensor.size(0), rows, heads_first ? 2 : 1);
  return Error::kOk;
}

Status sdpa_check_data_and_positions(const SdpaArgs& a) {
  for (const NamedTensor* t : {&a.query, &a.key, &a.value, &a.key_cache, &a.value_cache}) {
    TL_RETURN_IF_ERROR(sdpa_check_last_dim_dense(*t));
  }
  for (const NamedTensor* t : {&a.query, &a.key, &a.value, &a.key_cache, &a.value_cache,
                               &a.input_pos}) {
    TL_RETURN_IF_ERROR(portable::check_has_data(*t));
  }
  return sdpa_check_positions(a.input_pos, a.key_cache.tensor.size(2));
}

float sdpa_scale_of(const EValue& scale, int64_t head_dim) {
  if (scale.is_none()) return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  return static_cast<float>(scale.to_double());
}

namespace {

const float* row_of(const SdpaRows& rows, int64_t b, int64_t h, int64_t i) {
  return rows.data + b * rows.strides[0] + h * rows.strides[1] + i * rows.strides[2];
}

// T: float, or uint16_t for a float16 cache's bits.
template <typename T>
T* cache_row(const Tensor& t, int64_t b, int64_t h, int64_t i) {
  const auto s = t.strides();
  return t.mutable_data_ptr<T>() + b * s[0] + h * s[1] + i * s[2];
}

}  // namespace

void sdpa_write_cache_rows(const SdpaRows& key, const SdpaRows& value, int64_t batch,
                           int64_t kv_heads, int64_t rows, int64_t dim, const Tensor& key_cache,
                           const Tensor& value_cache, const Tensor& input_pos,
                           SdpaNarrowFn narrow) {
  if (batch * kv_heads * rows * dim == 0) return;
  const int64_t* pos = input_pos.const_data_ptr<int64_t>();
  const int64_t pos_stride = input_pos.strides()[0];
  const bool half = key_cache.scalar_type() == ScalarType::kHalf;
  const size_t row_bytes = static_cast<size_t>(dim) * sizeof(float);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t g = 0; g < kv_heads; ++g) {
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t p = pos[i * pos_stride];
        if (half) {
          narrow(row_of(key, b, g, i), cache_row<uint16_t>(key_cache, b, g, p), dim);
          narrow(row_of(value, b, g, i), cache_row<uint16_t>(value_cache, b, g, p), dim);
          continue;
        }
        // memmove: a caller may pass rows that view the cache itself.
        std::memmove(cache_row<float>(key_cache, b, g, p), row_of(key, b, g, i), row_bytes);
        std::memmove(cache_row<float>(value_cache, b, g, p), row_of(value, b, g, i), row_bytes);
      }
    }
  }
}

}  // namespace torchlight::llm
