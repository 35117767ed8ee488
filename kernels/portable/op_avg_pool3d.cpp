// aten::avg_pool3d.out: the mean of each (strided, padded) window of a
// [N, C, D, H, W] or [C, D, H, W] input (nn.AvgPool3d).
//
// ATen semantics as avg_pool2d.out (util/pool_loops.h), with a depth
// dimension. Dtypes: float32, float64 and int64 only: ATen's CPU kernel has
// no float16/bfloat16 variant.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/pool_ops.h"

namespace torchlight::portable {

void avg_pool3d_out(KernelContext& ctx, Span<EValue*> args) {
  run_avg_pool(ctx, args, 3, /*has_divisor=*/true, /*reduced_floats=*/false);
}

}  // namespace torchlight::portable
