// aten::adaptive_max_pool2d.out: max pooling to a requested output size
// [OH, OW] of a [N, C, H, W] or [C, H, W] input, with the argmax.
// What nn.AdaptiveMaxPool2d exports to.
//
// ATen semantics (util/pool_loops.h): windows as _adaptive_avg_pool2d;
// float16, bfloat16, float32, float64 only; indices int64, the flat index
// ih * W + iw in the input plane; NaN wins (the last NaN of a window), ties
// keep the first maximum.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/pool_ops.h"

namespace torchlight::portable {

void adaptive_max_pool2d_out(KernelContext& ctx, Span<EValue*> args) {
  run_adaptive_pool<2, /*kWithIndices=*/true>(ctx, args);
}

Status adaptive_max_pool2d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_adaptive_pool<2, true>(args, call);
}

}  // namespace torchlight::portable
