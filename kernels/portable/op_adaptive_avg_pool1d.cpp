// aten::adaptive_avg_pool1d.out: average pooling to a requested output
// length of a [N, C, L] or [C, L] input. A core ATen operator, although
// torch.export's decompositions turn nn.AdaptiveAvgPool1d into unsqueeze +
// _adaptive_avg_pool2d.
//
// ATen semantics as _adaptive_avg_pool2d.out (util/pool_loops.h) over one
// dimension; float types only.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/pool_ops.h"

namespace torchlight::portable {

void adaptive_avg_pool1d_out(KernelContext& ctx, Span<EValue*> args) {
  run_adaptive_pool<1, /*kWithIndices=*/false>(ctx, args);
}

Status adaptive_avg_pool1d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_adaptive_pool<1, false>(args, call);
}

}  // namespace torchlight::portable
