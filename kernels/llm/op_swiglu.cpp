// torchlight::swiglu.out(Tensor gate, Tensor? up=None, *, Tensor(a!) out)
// -> Tensor(a!): SwiGLU before its down projection in one call (contract:
// python/torchlight/llm/block_ops.py), float32. With `up`: out = silu(gate)
// * up, bit for bit what torchlight::silu then aten::mul write (silu_mul
// walks the same vector blocks as silu). Without: gate is [..., 2H], a fused
// w13's output, and row r's out is silu of its first half times its second,
// read in place (the program needs no slice_copy of the halves); silu then
// walks each row's H values, the same blocks as silu over the sliced halves
// when H is a multiple of 64 (Llama's hidden sizes), else within silu's
// 3 ulp of them.
#include "extension/threadpool/threadpool.h"
#include "kernels/llm/llm_kernels.h"
#include "kernels/llm/pointwise_args.h"
#include "kernels/llm/pointwise_loops.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::llm {
namespace {

using portable::NamedTensor;

// Elements per thread-pool chunk, at least, as op_silu.cpp: ~10 us of work.
constexpr size_t kMinChunk = 16384;
// Chunks of separate operands start on multiples of this many floats, as
// op_silu.cpp's, so each element takes the same vector block (and libm
// fallback) as there.
constexpr size_t kAlign = 64;

// out's sizes without `up`: gate's, with the last halved.
Status halved_sizes(const NamedTensor& gate, SizesType* sizes) {
  const size_t rank = gate.tensor.dim();
  TL_CHECK_OR_RETURN(rank >= 1 && gate.tensor.size(rank - 1) % 2 == 0, Error::kInvalidArgument,
                     "argument 'gate' has rank %zu and last size %d; without 'up' it must be "
                     "[..., 2H] (the gate then the up halves)",
                     rank, rank >= 1 ? gate.tensor.size(rank - 1) : 0);
  for (size_t d = 0; d < rank; ++d) sizes[d] = gate.tensor.size(d);
  sizes[rank - 1] /= 2;
  return Error::kOk;
}

}  // namespace

Status swiglu_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_float32({args[0]->to_tensor(), "gate"}));
  if (!args[1]->is_none()) TL_RETURN_IF_ERROR(check_float32({args[1]->to_tensor(), "up"}));
  TL_RETURN_IF_ERROR(check_float32({args[2]->to_tensor(), "out"}));
  call->state = &best_pointwise_variant();
  return Error::kOk;
}

void swiglu_out(KernelContext& ctx, Span<EValue*> args) {
  portable::set_return(args, 3, *args[2]);
  const NamedTensor gate{args[0]->to_tensor(), "gate"};
  const bool has_up = !args[1]->is_none();
  const NamedTensor up{args[1]->to_optional_tensor(), "up"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_dense(gate));
  SizesType halved[kMaxTensorDim];
  if (has_up) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_sizes(up, gate));
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_dense(up));
    TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, gate.tensor.sizes()));
  } else {
    TL_KERNEL_RETURN_IF_ERROR(ctx, halved_sizes(gate, halved));
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, portable::resize_tensor(out, Span<const SizesType>(halved, gate.tensor.dim())));
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_dense(out));
  const size_t n = static_cast<size_t>(out.tensor.numel());
  if (n == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(gate));
  if (has_up) TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(up));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(out));
  const SiluMulFn silu_mul = ctx.state<PointwiseVariant>()->silu_mul;
  const float* g = gate.tensor.const_data_ptr<float>();
  float* y = out.tensor.mutable_data_ptr<float>();
  if (has_up) {
    const float* u = up.tensor.const_data_ptr<float>();
    const size_t blocks = (n + kAlign - 1) / kAlign;
    threadpool::parallel_for(blocks, kMinChunk / kAlign, [&](size_t begin, size_t end) {
      const size_t first = begin * kAlign;
      const size_t last = end * kAlign < n ? end * kAlign : n;
      silu_mul(g + first, u + first, y + first, static_cast<int64_t>(last - first));
    });
    return;
  }
  // Row r: gate at g + 2Hr, up at g + 2Hr + H, out at y + Hr.
  const size_t half = static_cast<size_t>(out.tensor.size(out.tensor.dim() - 1));
  const size_t rows = n / half;
  threadpool::parallel_for(rows, kMinChunk / half > 1 ? kMinChunk / half : 1,
                           [&](size_t begin, size_t end) {
                             for (size_t r = begin; r < end; ++r) {
                               const float* row = g + 2 * half * r;
                               silu_mul(row, row + half, y + half * r,
                                        static_cast<int64_t>(half));
                             }
                           });
}

}  // namespace torchlight::llm
