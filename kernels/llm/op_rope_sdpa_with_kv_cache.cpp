// torchlight::rope_sdpa_with_kv_cache.out: the rotary embedding of query and
// key, the cache update and the attention of torchlight::sdpa_with_kv_cache
// in one call over [B, T, H, D] tensors, the layout the q/k/v linears
// produce and the output linear reads (contract:
// python/torchlight/llm/custom_ops.py). A Llama layer's attention is then
// linear, this call, linear: no transposes (permute_copy) before or after,
// no separate rope calls and no views between them.
//
// The rotated query and key rows go to scratch ([B, T, Hq, D] then
// [B, T, Hkv, D] floats: the method's workspace, sized at prepare from the
// tensors' upper-bound sizes; the temp allocator when called without one);
// the cache writes and the attention loops then read them through the
// strides of that layout, as they read the value and out tensors'.
#include <cstddef>
#include <initializer_list>

#include "extension/threadpool/threadpool.h"
#include "kernels/llm/llm_kernels.h"
#include "kernels/llm/pointwise_args.h"
#include "kernels/llm/rope_pairs.h"
#include "kernels/llm/sdpa_args.h"
#include "kernels/llm/sdpa_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::llm {
namespace {

using portable::NamedTensor;

// Pair rotations per thread-pool chunk, at least (whole positions), as rope's.
constexpr int64_t kMinChunkPairs = 4096;

// The operator's arguments: SdpaArgs' and the rotation tables.
struct Args : SdpaArgs {
  NamedTensor cos;
  NamedTensor sin;
};

Args args_of(Span<EValue*> args) {
  return Args{sdpa_args_of(args, 9), {args[6]->to_tensor(), "cos"}, {args[7]->to_tensor(), "sin"}};
}

// Floats of scratch: the rotated query, then the rotated key.
size_t scratch_floats(const Args& a) {
  return static_cast<size_t>(a.query.tensor.numel()) + static_cast<size_t>(a.key.tensor.numel());
}

// Dtypes, ranks and out's dim order: what cannot change between runs.
Status check_static(const Args& a) {
  TL_RETURN_IF_ERROR(sdpa_check_static(a, "[B, T, Hq, D]", "[B, T, Hkv, D]"));
  for (const NamedTensor* t : {&a.cos, &a.sin}) {
    TL_RETURN_IF_ERROR(sdpa_check_dtype(*t, ScalarType::kFloat));
    TL_RETURN_IF_ERROR(portable::check_rank(*t, 2, "[T, D / 2]"));
  }
  return Error::kOk;
}

Status check_table(const NamedTensor& table, SizesType rows, SizesType pairs) {
  TL_CHECK_OR_RETURN(table.tensor.size(0) == rows && table.tensor.size(1) == pairs,
                     Error::kInvalidArgument,
                     "argument '%s' has shape [%d, %d], expected [T, D / 2] = [%d, %d]",
                     table.name, table.tensor.size(0), table.tensor.size(1), rows, pairs);
  return check_dense(table);
}

// Every run, before anything is written. On success the input_pos values
// lie in [0, S).
Status check_shapes(const Args& a) {
  const SizesType rows = a.query.tensor.size(1);
  const SizesType dim = a.query.tensor.size(3);
  TL_CHECK_OR_RETURN(dim % 2 == 0, Error::kInvalidArgument,
                     "query has head size D = %d, expected an even size (the rotary embedding "
                     "turns pairs)",
                     dim);
  TL_RETURN_IF_ERROR(sdpa_check_shapes(a, SdpaLayout::kRowsFirst));
  TL_RETURN_IF_ERROR(check_table(a.cos, rows, dim / 2));
  TL_RETURN_IF_ERROR(check_table(a.sin, rows, dim / 2));
  for (const NamedTensor* t : {&a.cos, &a.sin}) TL_RETURN_IF_ERROR(portable::check_has_data(*t));
  return sdpa_check_data_and_positions(a);
}

// Heads of one [B, T, H, D] tensor at position (b, t) into dense rows.
void rotate_heads(const Tensor& x, int64_t b, int64_t t, const float* c, const float* s,
                  float* dst) {
  const auto st = x.strides();
  const float* src = x.const_data_ptr<float>() + b * st[0] + t * st[1];
  const int64_t dim = x.size(3);
  // Each head's D = 2P values by rope's own arithmetic, so they equal the rope call's.
  for (int64_t h = 0; h < x.size(2); ++h) {
    rotate_pairs(src + h * st[2], c, s, dst + h * dim, dim / 2);
  }
}

// rotated_q [B, T, Hq, D] and rotated_k [B, T, Hkv, D], dense, split over
// the thread pool by whole positions.
void rotate_query_and_key(const Args& a, float* rotated_q, float* rotated_k) {
  const Tensor& q = a.query.tensor;
  const Tensor& k = a.key.tensor;
  const int64_t rows = q.size(1);
  const int64_t dim = q.size(3);
  const int64_t q_row = q.size(2) * dim;
  const int64_t k_row = k.size(2) * dim;
  const float* cos = a.cos.tensor.const_data_ptr<float>();
  const float* sin = a.sin.tensor.const_data_ptr<float>();
  const int64_t pairs_per_position = (q.size(2) + k.size(2)) * dim / 2;
  const int64_t min_positions =
      pairs_per_position > 0 && kMinChunkPairs / pairs_per_position > 1
          ? kMinChunkPairs / pairs_per_position
          : 1;
  threadpool::parallel_for(
      static_cast<size_t>(q.size(0) * rows), static_cast<size_t>(min_positions),
      [&](size_t begin, size_t end) {
        for (int64_t r = static_cast<int64_t>(begin); r < static_cast<int64_t>(end); ++r) {
          const int64_t b = r / rows;
          const int64_t t = r % rows;
          const float* c = cos + t * (dim / 2);
          const float* s = sin + t * (dim / 2);
          rotate_heads(q, b, t, c, s, rotated_q + r * q_row);
          rotate_heads(k, b, t, c, s, rotated_k + r * k_row);
        }
      });
}

// The attention of the rotated queries ([B, T, Hq, D], dense) over the
// caches, into out [B, T, Hq, D]: the loops index [batch, head, row].
SdpaProblem problem_of(const Args& a, const float* rotated_q, float scale) {
  const Tensor& out = a.out.tensor;
  const int64_t rows = a.query.tensor.size(1);
  const int64_t heads = a.query.tensor.size(2);
  const int64_t dim = a.query.tensor.size(3);
  SdpaProblem p = sdpa_problem_bhsd(a.query.tensor, a.key_cache.tensor, a.value_cache.tensor,
                                    a.input_pos.tensor, out, scale);
  p.query = rotated_q;
  p.q_heads = heads;
  p.rows = rows;
  p.query_strides[0] = rows * heads * dim;
  p.query_strides[1] = dim;
  p.query_strides[2] = heads * dim;
  p.out_strides[0] = out.strides()[0];
  p.out_strides[1] = out.strides()[2];
  p.out_strides[2] = out.strides()[1];
  return p;
}

}  // namespace

Status rope_sdpa_with_kv_cache_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const Args a = args_of(args);
  TL_RETURN_IF_ERROR(check_static(a));
  call->state = &sdpa_variants()[0];  // The fastest build this CPU runs.
  // The tensors hold their upper-bound sizes at load.
  call->scratch_bytes = scratch_floats(a) * sizeof(float);
  return Error::kOk;
}

void rope_sdpa_with_kv_cache_out(KernelContext& ctx, Span<EValue*> args) {
  portable::set_return(args, 10, *args[9]);
  const Args a = args_of(args);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_shapes(a));
  const float scale = sdpa_scale_of(*args[8], a.query.tensor.size(3));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(a.out, a.query.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(a.out));

  const size_t bytes = scratch_floats(a) * sizeof(float);
  void* scratch = ctx.scratch();
  if (scratch == nullptr || ctx.scratch_bytes() < bytes) scratch = ctx.allocate_temp(bytes, 64);
  TL_KERNEL_CHECK(ctx, scratch != nullptr || bytes == 0, Error::kMemoryAllocationFailed,
                  "no scratch for the rotated query and key (%zu bytes: neither the method's "
                  "workspace nor the temp allocator has them)",
                  bytes);
  float* rotated_q = static_cast<float*>(scratch);
  float* rotated_k = rotated_q + a.query.tensor.numel();
  rotate_query_and_key(a, rotated_q, rotated_k);

  const SdpaVariant* variant = ctx.state<SdpaVariant>();
  if (variant == nullptr) variant = &sdpa_variants()[0];  // Called without prepare.
  const Tensor& key = a.key.tensor;
  const Tensor& value = a.value.tensor;
  const int64_t rows = key.size(1);
  const int64_t kv_heads = key.size(2);
  const int64_t dim = key.size(3);
  // [batch, head, row] strides of the dense rotated key and of value.
  const SdpaRows key_rows{rotated_k, {rows * kv_heads * dim, dim, kv_heads * dim}};
  const SdpaRows value_rows{value.const_data_ptr<float>(),
                            {value.strides()[0], value.strides()[2], value.strides()[1]}};
  sdpa_write_cache_rows(key_rows, value_rows, key.size(0), kv_heads, rows, dim,
                        a.key_cache.tensor, a.value_cache.tensor, a.input_pos.tensor,
                        variant->narrow);
  if (a.out.tensor.numel() == 0) return;

  SdpaProblem p = problem_of(a, rotated_q, scale);
  sdpa_run(p, variant);
}

}  // namespace torchlight::llm
