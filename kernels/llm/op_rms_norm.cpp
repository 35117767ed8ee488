// torchlight::rms_norm.out(Tensor input, Tensor weight, float eps, *,
// Tensor(a!) out) -> Tensor(a!): Llama's RMSNorm over the last dimension,
// out = input * rsqrt(mean(input^2, -1) + eps) * weight, float32, in one
// pass per row (the exporter's fuse_llm_chains pass writes it for the
// decomposed pow, mean, add, rsqrt, mul, mul). The loops (pointwise_impl.h)
// run per instruction set; the prepare step picks the build for this CPU.
// Many rows (prefill) are split over the thread pool.
#include "extension/threadpool/threadpool.h"
#include "kernels/llm/llm_kernels.h"
#include "kernels/llm/pointwise_args.h"
#include "kernels/llm/pointwise_loops.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::llm {
using portable::NamedTensor;

Status rms_norm_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor weight{args[1]->to_tensor(), "weight"};
  TL_RETURN_IF_ERROR(check_float32(input));
  TL_RETURN_IF_ERROR(check_float32(weight));
  TL_RETURN_IF_ERROR(check_float32({args[3]->to_tensor(), "out"}));
  TL_CHECK_OR_RETURN(input.tensor.dim() >= 1, Error::kInvalidArgument,
                     "argument 'input' has rank 0, expected [..., D] (rank 1 or more)");
  TL_RETURN_IF_ERROR(portable::check_rank(weight, 1, "[D]"));
  call->state = &best_pointwise_variant();
  return Error::kOk;
}

void rms_norm_out(KernelContext& ctx, Span<EValue*> args) {
  portable::set_return(args, 4, *args[3]);
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor weight{args[1]->to_tensor(), "weight"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  const float eps = static_cast<float>(args[2]->to_double());
  const int64_t dim = input.tensor.size(input.tensor.dim() - 1);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_norm_weight(weight, dim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_dense(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_dense(weight));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, input.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_dense(out));
  const int64_t n = input.tensor.numel();
  if (n == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(weight));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(out));
  const RmsNormFn rms_norm = ctx.state<PointwiseVariant>()->rms_norm;
  const float* x = input.tensor.const_data_ptr<float>();
  const float* w = weight.tensor.const_data_ptr<float>();
  float* y = out.tensor.mutable_data_ptr<float>();
  const int64_t rows = n / dim;
  const int64_t min_rows = norm_min_rows_per_chunk(dim);
  threadpool::parallel_for(static_cast<size_t>(rows), static_cast<size_t>(min_rows),
                           [&](size_t begin, size_t end) {
                             const auto first = static_cast<int64_t>(begin);
                             rms_norm(x + first * dim, dim, w, y + first * dim, dim,
                                      static_cast<int64_t>(end) - first, dim, eps);
                           });
}

}  // namespace torchlight::llm
