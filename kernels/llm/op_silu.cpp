// torchlight::silu.out(Tensor input, *, Tensor(a!) out) -> Tensor(a!):
// out = input * sigmoid(input), float32, in one pass (the exporter's
// fuse_llm_chains pass writes it for the decomposed sigmoid and mul). The
// loops (pointwise_impl.h) run per instruction set; the prepare step picks
// the build for this CPU. Large tensors are split over the thread pool.
#include "extension/threadpool/threadpool.h"
#include "kernels/llm/llm_kernels.h"
#include "kernels/llm/pointwise_args.h"
#include "kernels/llm/pointwise_loops.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::llm {
namespace {

using portable::NamedTensor;

// Elements per thread-pool chunk, at least: about 10 us of work, so waking
// a worker (about 1 us when it spins) pays.
constexpr size_t kMinChunk = 16384;
// Chunks start on multiples of this many floats (whole vector blocks).
constexpr size_t kAlign = 64;

}  // namespace

Status silu_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_float32({args[0]->to_tensor(), "input"}));
  TL_RETURN_IF_ERROR(check_float32({args[1]->to_tensor(), "out"}));
  call->state = &best_pointwise_variant();
  return Error::kOk;
}

void silu_out(KernelContext& ctx, Span<EValue*> args) {
  portable::set_return(args, 2, *args[1]);
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor out{args[1]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_dense(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, input.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_dense(out));
  const size_t n = static_cast<size_t>(input.tensor.numel());
  if (n == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(input));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(out));
  const SiluFn silu = ctx.state<PointwiseVariant>()->silu;
  const float* x = input.tensor.const_data_ptr<float>();
  float* y = out.tensor.mutable_data_ptr<float>();
  const size_t blocks = (n + kAlign - 1) / kAlign;
  threadpool::parallel_for(blocks, kMinChunk / kAlign, [&](size_t begin, size_t end) {
    const size_t first = begin * kAlign;
    const size_t last = end * kAlign < n ? end * kAlign : n;
    silu(x + first, y + first, static_cast<int64_t>(last - first));
  });
}

}  // namespace torchlight::llm
