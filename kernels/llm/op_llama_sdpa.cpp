// Upstream ExecuTorch's LLM operators under their own names and schemas
// (python/torchlight/llm/llama_ops.py): llama::update_cache.out,
// llama::custom_sdpa.out, llama::sdpa_with_kv_cache.out. A thin adapter over
// torchlight::sdpa_with_kv_cache's attention loops: upstream's tensors are
// [B, S, H, D] (sequence before heads), which the loops read through
// strides, and the positions are a start position instead of an input_pos
// tensor (SdpaProblem::start_pos). No scratch, no heap.
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <initializer_list>

#include "kernels/llm/llm_kernels.h"
#include "kernels/llm/sdpa_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::llm {
namespace {

using portable::NamedTensor;

constexpr size_t kRank = 4;
constexpr const char* kBshd = "[B, S, H, D]";

Status check_float_rank4(const NamedTensor& t) {
  TL_CHECK_OR_RETURN(t.tensor.scalar_type() == ScalarType::kFloat, Error::kInvalidType,
                     "argument '%s' has dtype %s, expected Float (the only dtype this kernel "
                     "supports)",
                     t.name, to_string(t.tensor.scalar_type()));
  return portable::check_rank(t, kRank, kBshd);
}

// The loops step along D one element at a time.
Status check_last_dim_dense(const NamedTensor& t) {
  TL_CHECK_OR_RETURN(t.tensor.strides()[kRank - 1] == 1 || t.tensor.size(kRank - 1) <= 1,
                     Error::kInvalidArgument,
                     "argument '%s' has stride %lld in its last dimension (D), expected 1",
                     t.name, static_cast<long long>(t.tensor.strides()[kRank - 1]));
  return portable::check_has_data(t);
}

// `value` [B, S, H, D] fits `cache` [B, max_S, H, D] at start_pos.
Status check_fits_cache(const NamedTensor& value, const NamedTensor& cache, int64_t start_pos) {
  const Tensor& v = value.tensor;
  const Tensor& c = cache.tensor;
  TL_CHECK_OR_RETURN(v.size(0) == c.size(0) && v.size(2) == c.size(2) && v.size(3) == c.size(3),
                     Error::kInvalidArgument,
                     "argument '%s' is [%d, %d, %d, %d] but '%s' is [%d, %d, %d, %d]; B, H and D "
                     "must agree (layout [B, S, H, D])",
                     value.name, v.size(0), v.size(1), v.size(2), v.size(3), cache.name,
                     c.size(0), c.size(1), c.size(2), c.size(3));
  TL_CHECK_OR_RETURN(start_pos >= 0 && start_pos + v.size(1) <= c.size(1),
                     Error::kInvalidArgument,
                     "start_pos %" PRId64 " with %d new rows of '%s' is outside the %d positions "
                     "of '%s'",
                     start_pos, v.size(1), value.name, c.size(1), cache.name);
  TL_RETURN_IF_ERROR(check_last_dim_dense(value));
  return check_last_dim_dense(cache);
}

// cache[:, start_pos + s] = value[:, s] for every row s.
void write_rows(const Tensor& value, const Tensor& cache, int64_t start_pos) {
  const auto vs = value.strides();
  const auto cs = cache.strides();
  const size_t row_bytes = static_cast<size_t>(value.size(3)) * sizeof(float);
  const float* src = value.const_data_ptr<float>();
  float* dst = cache.mutable_data_ptr<float>();
  for (int64_t b = 0; b < value.size(0); ++b) {
    for (int64_t s = 0; s < value.size(1); ++s) {
      for (int64_t h = 0; h < value.size(2); ++h) {
        // memmove: a caller may pass rows that view the cache itself.
        std::memmove(dst + b * cs[0] + (start_pos + s) * cs[1] + h * cs[2],
                     src + b * vs[0] + s * vs[1] + h * vs[2], row_bytes);
      }
    }
  }
}

// attn_mask None and drpout_p 0: the only forms the loops compute.
Status check_supported(const EValue& attn_mask, const EValue& dropout) {
  TL_CHECK_OR_RETURN(attn_mask.is_none(), Error::kNotSupported,
                     "argument 'attn_mask' must be None: this kernel computes the causal mask "
                     "from start_pos and is_causal");
  TL_CHECK_OR_RETURN(dropout.to_double() == 0.0, Error::kNotSupported,
                     "argument 'drpout_p' is %g; inference kernels take 0", dropout.to_double());
  return Error::kOk;
}

// [b, head, row] strides of a [B, S, H, D] tensor.
void bshd_strides(const Tensor& t, int64_t* strides) {
  strides[0] = t.strides()[0];
  strides[1] = t.strides()[2];
  strides[2] = t.strides()[1];
}

// query [B, S, Hq, D] fits caches [B, max_S, Hkv, D] at start_pos.
Status check_attention(const NamedTensor& query, const NamedTensor& key_cache,
                       const NamedTensor& value_cache, int64_t start_pos) {
  const Tensor& q = query.tensor;
  const Tensor& kc = key_cache.tensor;
  TL_RETURN_IF_ERROR(check_last_dim_dense(query));
  TL_RETURN_IF_ERROR(check_last_dim_dense(key_cache));
  TL_RETURN_IF_ERROR(check_last_dim_dense(value_cache));
  const int64_t kv_heads = kc.size(2);
  TL_CHECK_OR_RETURN(
      q.size(0) == kc.size(0) && q.size(3) == kc.size(3) && kv_heads > 0 &&
          q.size(2) % kv_heads == 0,
      Error::kInvalidArgument,
      "argument '%s' is [%d, %d, %d, %d] and '%s' [%d, %d, %d, %d]: B and D must agree and the "
      "query heads be a multiple of the key/value heads (layouts [B, S, Hq, D], "
      "[B, max_S, Hkv, D])",
      query.name, q.size(0), q.size(1), q.size(2), q.size(3), key_cache.name, kc.size(0),
      kc.size(1), kc.size(2), kc.size(3));
  bool same = true;
  for (size_t d = 0; d < kRank; ++d) same = same && value_cache.tensor.size(d) == kc.size(d);
  TL_CHECK_OR_RETURN(same, Error::kInvalidArgument,
                     "argument '%s' has another shape than '%s'; both are [B, max_S, Hkv, D]",
                     value_cache.name, key_cache.name);
  TL_CHECK_OR_RETURN(start_pos >= 0 && start_pos + q.size(1) <= kc.size(1),
                     Error::kInvalidArgument,
                     "start_pos %" PRId64 " with %d query rows is outside the %d positions of "
                     "'%s'",
                     start_pos, q.size(1), kc.size(1), key_cache.name);
  return Error::kOk;
}

// The attention of custom_sdpa (and of sdpa_with_kv_cache after its cache
// writes) into out [B, S, Hq, D].
Status attend(KernelContext& ctx, const NamedTensor& query, const NamedTensor& key_cache,
              const NamedTensor& value_cache, const NamedTensor& out, int64_t start_pos,
              bool causal, const EValue& scale) {
  TL_RETURN_IF_ERROR(check_attention(query, key_cache, value_cache, start_pos));
  const Tensor& q = query.tensor;
  const Tensor& kc = key_cache.tensor;
  TL_RETURN_IF_ERROR(portable::resize_tensor(out, q.sizes()));
  TL_RETURN_IF_ERROR(portable::check_has_data(out));
  TL_CHECK_OR_RETURN(out.tensor.numel() <= 1 || out.tensor.strides()[kRank - 1] == 1,
                     Error::kInvalidArgument, "argument 'out' must keep D innermost");
  if (out.tensor.numel() == 0) return Error::kOk;

  SdpaProblem p{};
  p.query = q.const_data_ptr<float>();
  p.key_cache = kc.const_data_ptr<float>();
  p.value_cache = value_cache.tensor.const_data_ptr<float>();
  p.input_pos = nullptr;
  p.out = out.tensor.mutable_data_ptr<float>();
  p.batch = q.size(0);
  p.q_heads = q.size(2);
  p.kv_heads = kc.size(2);
  p.rows = q.size(1);
  p.head_dim = q.size(3);
  bshd_strides(q, p.query_strides);
  bshd_strides(kc, p.key_cache_strides);
  bshd_strides(value_cache.tensor, p.value_cache_strides);
  bshd_strides(out.tensor, p.out_strides);
  p.scale = scale.is_none()
                ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.head_dim)))
                : static_cast<float>(scale.to_double());
  p.start_pos = start_pos;
  p.causal = causal;
  sdpa_run(p, ctx.state<SdpaVariant>());
  return Error::kOk;
}

Status check_seq_len(int64_t seq_len, const NamedTensor& query, const NamedTensor& key,
                     const NamedTensor& value) {
  TL_CHECK_OR_RETURN(seq_len == query.tensor.size(1) && seq_len == key.tensor.size(1) &&
                         seq_len == value.tensor.size(1),
                     Error::kInvalidArgument,
                     "seq_len %" PRId64 " differs from the rows of query (%d), key (%d) or "
                     "value (%d)",
                     seq_len, query.tensor.size(1), key.tensor.size(1), value.tensor.size(1));
  return Error::kOk;
}

// The prepare step of both attention operators: the leading tensor
// arguments (named in order) and `out` at out_index are float [B, S, H, D];
// the call keeps the attention loops' build for this CPU.
Status prepare_attention(Span<EValue*> args, std::initializer_list<const char*> names,
                         size_t out_index, PreparedCall* call) {
  size_t i = 0;
  for (const char* name : names) {
    TL_RETURN_IF_ERROR(check_float_rank4({args[i++]->to_tensor(), name}));
  }
  TL_RETURN_IF_ERROR(check_float_rank4({args[out_index]->to_tensor(), "out"}));
  call->state = &sdpa_variants()[0];
  return Error::kOk;
}

}  // namespace

// update_cache.out(value, cache, start_pos, *, out): args 0..3, return 4.
Status llama_update_cache_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) {
  TL_RETURN_IF_ERROR(check_float_rank4({args[0]->to_tensor(), "value"}));
  return check_float_rank4({args[1]->to_tensor(), "cache"});
}

void llama_update_cache_out(KernelContext& ctx, Span<EValue*> args) {
  portable::set_return(args, 4, *args[3]);
  const NamedTensor value{args[0]->to_tensor(), "value"};
  const NamedTensor cache{args[1]->to_tensor(), "cache"};
  const int64_t start_pos = args[2]->to_int();
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_fits_cache(value, cache, start_pos));
  // out is upstream's unused placeholder result: left as it is.
  write_rows(value.tensor, cache.tensor, start_pos);
}

// custom_sdpa.out(query, key, value, start_pos, attn_mask, drpout_p,
// is_causal, scale, *, out): args 0..8, return 9.
Status llama_custom_sdpa_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_attention(args, {"query", "key", "value"}, 8, call);
}

void llama_custom_sdpa_out(KernelContext& ctx, Span<EValue*> args) {
  portable::set_return(args, 9, *args[8]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_supported(*args[4], *args[5]));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, attend(ctx, {args[0]->to_tensor(), "query"}, {args[1]->to_tensor(), "key"},
                  {args[2]->to_tensor(), "value"}, {args[8]->to_tensor(), "out"},
                  args[3]->to_int(), args[6]->to_bool(), *args[7]));
}

// sdpa_with_kv_cache.out(query, key, value, key_cache, value_cache,
// start_pos, seq_len, attn_mask, drpout_p, is_causal, scale, *, out):
// args 0..11, return 12.
Status llama_sdpa_with_kv_cache_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_attention(args, {"query", "key", "value", "key_cache", "value_cache"}, 11, call);
}

void llama_sdpa_with_kv_cache_out(KernelContext& ctx, Span<EValue*> args) {
  portable::set_return(args, 12, *args[11]);
  const NamedTensor query{args[0]->to_tensor(), "query"};
  const NamedTensor key{args[1]->to_tensor(), "key"};
  const NamedTensor value{args[2]->to_tensor(), "value"};
  const NamedTensor key_cache{args[3]->to_tensor(), "key_cache"};
  const NamedTensor value_cache{args[4]->to_tensor(), "value_cache"};
  const int64_t start_pos = args[5]->to_int();
  const int64_t seq_len = args[6]->to_int();
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_supported(*args[7], *args[8]));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_seq_len(seq_len, query, key, value));
  // Every check before the first write: a failed call changes nothing.
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_attention(query, key_cache, value_cache, start_pos));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_fits_cache(key, key_cache, start_pos));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_fits_cache(value, value_cache, start_pos));
  write_rows(key.tensor, key_cache.tensor, start_pos);
  write_rows(value.tensor, value_cache.tensor, start_pos);
  TL_KERNEL_RETURN_IF_ERROR(ctx, attend(ctx, query, key_cache, value_cache,
                                        {args[11]->to_tensor(), "out"}, start_pos,
                                        args[9]->to_bool(), *args[10]));
}

}  // namespace torchlight::llm
