// aten::avg_pool2d.out: the mean of each (strided, padded) window of a
// [N, C, H, W] or [C, H, W] input. What nn.AvgPool2d exports to (and
// nn.AvgPool1d, through unsqueeze).
//
// ATen semantics (util/pool_loops.h): out keeps self's dtype: float16,
// bfloat16, float32, float64 or int64 (ATen's CPU kernel takes no other
// integer type). The window is clipped to the padded input; the divisor is
// divisor_override when given (non-zero), else the clipped window's size
// counting padding (count_include_pad) or not. A window entirely in the
// padding (possible with ceil_mode) gives 0. int64 truncates toward zero.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/pool_ops.h"

namespace torchlight::portable {

void avg_pool2d_out(KernelContext& ctx, Span<EValue*> args) {
  run_avg_pool(ctx, args, 2, /*has_divisor=*/true, /*reduced_floats=*/true);
}

}  // namespace torchlight::portable
