// aten::max_pool2d_with_indices.out: the maximum of each (dilated, strided,
// padded) window of a [N, C, H, W] or [C, H, W] input, and where it was.
// What nn.MaxPool2d exports to (and nn.MaxPool1d, through unsqueeze).
//
// ATen semantics (util/pool_loops.h): out keeps self's dtype (any real type
// but bool); indices is int64, the flat index ih * W + iw of the maximum in
// its input plane; NaN wins (the last NaN of a window), ties keep the first
// maximum. stride defaults to kernel_size; padding is at most half the
// kernel; with ceil_mode a last partial window counts unless it starts in
// the padding.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/pool_ops.h"

namespace torchlight::portable {

void max_pool2d_with_indices_out(KernelContext& ctx, Span<EValue*> args) {
  run_max_pool_with_indices(ctx, args, 2);
}

}  // namespace torchlight::portable
