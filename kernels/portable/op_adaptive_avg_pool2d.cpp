// aten::_adaptive_avg_pool2d.out: average pooling to a requested output size
// [OH, OW] of a [N, C, H, W] or [C, H, W] input. What nn.AdaptiveAvgPool2d
// exports to (except output size 1, which exports to mean.dim), and
// nn.AdaptiveAvgPool1d through unsqueeze.
//
// ATen semantics (util/pool_loops.h): output cell (oh, ow) averages input
// rows [floor(oh * H / OH), ceil((oh + 1) * H / OH)) and the matching
// columns; windows may overlap. float16, bfloat16, float32, float64 only;
// the sum is in opmath and divided by the window height, then its width.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/pool_ops.h"

namespace torchlight::portable {

void adaptive_avg_pool2d_out(KernelContext& ctx, Span<EValue*> args) {
  run_adaptive_pool(ctx, args, 2, /*with_indices=*/false);
}

}  // namespace torchlight::portable
