// torchlight::add_rms_norm.out(Tensor input, Tensor residual, Tensor weight,
// float eps, *, Tensor(a!) sum, Tensor(b!) out) -> (Tensor(a!), Tensor(b!)):
// a Llama block's residual add and the RMSNorm after it in one call (contract:
// python/torchlight/llm/block_ops.py), float32: sum = input + residual, out =
// rms_norm(sum, weight, eps), bit for bit what aten::add then
// torchlight::rms_norm write. A decode step's row is one call instead of two;
// many rows (prefill) are split over the thread pool as rms_norm splits them.
#include "extension/threadpool/threadpool.h"
#include "kernels/llm/llm_kernels.h"
#include "kernels/llm/pointwise_args.h"
#include "kernels/llm/pointwise_loops.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::llm {
using portable::NamedTensor;

Status add_rms_norm_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  for (const NamedTensor& t : {input, NamedTensor{args[1]->to_tensor(), "residual"},
                               NamedTensor{args[2]->to_tensor(), "weight"},
                               NamedTensor{args[4]->to_tensor(), "sum"},
                               NamedTensor{args[5]->to_tensor(), "out"}}) {
    TL_RETURN_IF_ERROR(check_float32(t));
  }
  TL_CHECK_OR_RETURN(input.tensor.dim() >= 1, Error::kInvalidArgument,
                     "argument 'input' has rank 0, expected [..., D] (rank 1 or more)");
  TL_RETURN_IF_ERROR(portable::check_rank({args[2]->to_tensor(), "weight"}, 1, "[D]"));
  call->state = &best_pointwise_variant();
  return Error::kOk;
}

void add_rms_norm_out(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor residual{args[1]->to_tensor(), "residual"};
  const NamedTensor weight{args[2]->to_tensor(), "weight"};
  const NamedTensor sum{args[4]->to_tensor(), "sum"};
  const NamedTensor out{args[5]->to_tensor(), "out"};
  const float eps = static_cast<float>(args[3]->to_double());
  const int64_t dim = input.tensor.size(input.tensor.dim() - 1);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_sizes(residual, input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_norm_weight(weight, dim));
  for (const NamedTensor* t : {&input, &residual, &weight}) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_dense(*t));
  }
  for (const NamedTensor* t : {&sum, &out}) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(*t, input.tensor.sizes()));
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_dense(*t));
  }
  const int64_t n = input.tensor.numel();
  if (n == 0) return;
  for (const NamedTensor* t : {&input, &residual, &weight, &sum, &out}) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(*t));
  }
  const AddRmsNormFn add_rms_norm = ctx.state<PointwiseVariant>()->add_rms_norm;
  const float* x = input.tensor.const_data_ptr<float>();
  const float* h = residual.tensor.const_data_ptr<float>();
  const float* w = weight.tensor.const_data_ptr<float>();
  float* s = sum.tensor.mutable_data_ptr<float>();
  float* y = out.tensor.mutable_data_ptr<float>();
  const int64_t rows = n / dim;
  const int64_t min_rows = norm_min_rows_per_chunk(dim);
  threadpool::parallel_for(static_cast<size_t>(rows), static_cast<size_t>(min_rows),
                           [&](size_t begin, size_t end) {
                             const auto at = static_cast<int64_t>(begin) * dim;
                             add_rms_norm(x + at, h + at, w, s + at, y + at,
                                          static_cast<int64_t>(end - begin), dim, eps);
                           });
}

}  // namespace torchlight::llm
