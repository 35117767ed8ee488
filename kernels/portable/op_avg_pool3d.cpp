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
  run_avg_pool<3, /*kHasDivisor=*/true, /*kReducedFloats=*/false>(ctx, args);
}

Status avg_pool3d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_avg_pool<3, true, false>(args, call);
}

}  // namespace torchlight::portable
