// aten::_adaptive_avg_pool3d.out: average pooling to a requested output size
// [OD, OH, OW] of a [N, C, D, H, W] or [C, D, H, W] input
// (nn.AdaptiveAvgPool3d).
//
// ATen semantics as _adaptive_avg_pool2d.out (util/pool_loops.h), with a
// depth dimension; float types only.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/pool_ops.h"

namespace torchlight::portable {

void adaptive_avg_pool3d_out(KernelContext& ctx, Span<EValue*> args) {
  run_adaptive_pool<3, /*kWithIndices=*/false>(ctx, args);
}

Status adaptive_avg_pool3d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_adaptive_pool<3, false>(args, call);
}

}  // namespace torchlight::portable
