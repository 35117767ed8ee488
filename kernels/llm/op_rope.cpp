// torchlight::rope.out(Tensor pairs, Tensor cos, Tensor sin, *, Tensor(a!)
// out) -> Tensor(a!): rotary embedding of interleaved pairs, float32.
// pairs [..., T, P, 2] (each head's D = 2P values as (x0, x1) pairs), cos
// and sin [T, P]; out[..., t, p] = (x0 c - x1 s, x0 s + x1 c) with c, s at
// [t, p]. One pass in place of the select, mul, sub, add, unsqueeze and cat
// calls the exporter's fuse_llm_chains pass replaces. Many rows (prefill)
// are split over the thread pool.
#include "extension/threadpool/threadpool.h"
#include "kernels/llm/llm_kernels.h"
#include "kernels/llm/pointwise_args.h"
#include "kernels/llm/rope_pairs.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"
#include "runtime/core/result.h"

namespace torchlight::llm {
namespace {

using portable::NamedTensor;

// Pair rotations per thread-pool chunk, at least (whole rows): ~3 us of
// work (a stories15m prefill's 18432 pairs take ~12 us on one core). At
// 16384 that prefill split 682 + 86 rows, i.e. ran on one thread.
constexpr int64_t kMinChunkPairs = 4096;

Status check_table(const NamedTensor& table, SizesType rows, SizesType pairs) {
  TL_CHECK_OR_RETURN(table.tensor.dim() == 2 && table.tensor.size(0) == rows &&
                         table.tensor.size(1) == pairs,
                     Error::kInvalidArgument,
                     "argument '%s' must be [T, P] = [%d, %d] (dimensions -3 and -2 of pairs)",
                     table.name, rows, pairs);
  return Error::kOk;
}

Status check_pair_dim(const NamedTensor& pairs) {
  const SizesType last = pairs.tensor.size(pairs.tensor.dim() - 1);
  TL_CHECK_OR_RETURN(last == 2, Error::kInvalidArgument,
                     "argument 'pairs' has last size %d, expected 2 ((x0, x1) pairs)", last);
  return Error::kOk;
}

// Rows [begin, end) of `count` rows of P pairs; row r uses table row r % T.
void rotate_rows(const float* x, const float* cos, const float* sin, float* y, int64_t begin,
                 int64_t end, int64_t rows_t, int64_t pairs) {
  for (int64_t r = begin; r < end; ++r) {
    const float* c = cos + (r % rows_t) * pairs;
    const float* s = sin + (r % rows_t) * pairs;
    rotate_pairs(x + r * pairs * 2, c, s, y + r * pairs * 2, pairs);
  }
}

}  // namespace

Status rope_prepare(PrepareContext&, Span<EValue*> args, PreparedCall*) {
  const NamedTensor pairs{args[0]->to_tensor(), "pairs"};
  TL_RETURN_IF_ERROR(check_float32(pairs));
  TL_RETURN_IF_ERROR(check_float32({args[1]->to_tensor(), "cos"}));
  TL_RETURN_IF_ERROR(check_float32({args[2]->to_tensor(), "sin"}));
  TL_RETURN_IF_ERROR(check_float32({args[3]->to_tensor(), "out"}));
  TL_CHECK_OR_RETURN(pairs.tensor.dim() >= 3, Error::kInvalidArgument,
                     "argument 'pairs' has rank %zu, expected [..., T, P, 2] (rank 3 or more)",
                     pairs.tensor.dim());
  return Error::kOk;
}

void rope_out(KernelContext& ctx, Span<EValue*> args) {
  portable::set_return(args, 4, *args[3]);
  const NamedTensor pairs{args[0]->to_tensor(), "pairs"};
  const NamedTensor cos{args[1]->to_tensor(), "cos"};
  const NamedTensor sin{args[2]->to_tensor(), "sin"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  const size_t rank = pairs.tensor.dim();
  const SizesType rows_t = pairs.tensor.size(rank - 3);
  const SizesType count = pairs.tensor.size(rank - 2);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_pair_dim(pairs));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_table(cos, rows_t, count));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_table(sin, rows_t, count));
  for (const NamedTensor* t : {&pairs, &cos, &sin}) TL_KERNEL_RETURN_IF_ERROR(ctx, check_dense(*t));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, pairs.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_dense(out));
  const int64_t n = pairs.tensor.numel();
  if (n == 0) return;
  for (const NamedTensor* t : {&pairs, &cos, &sin, &out}) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(*t));
  }
  const float* x = pairs.tensor.const_data_ptr<float>();
  const float* c = cos.tensor.const_data_ptr<float>();
  const float* s = sin.tensor.const_data_ptr<float>();
  float* y = out.tensor.mutable_data_ptr<float>();
  const int64_t rows = n / (2 * static_cast<int64_t>(count));
  const int64_t min_rows = kMinChunkPairs / count > 1 ? kMinChunkPairs / count : 1;
  threadpool::parallel_for(static_cast<size_t>(rows), static_cast<size_t>(min_rows),
                           [&](size_t begin, size_t end) {
                             rotate_rows(x, c, s, y, static_cast<int64_t>(begin),
                                         static_cast<int64_t>(end), rows_t, count);
                           });
}

}  // namespace torchlight::llm
