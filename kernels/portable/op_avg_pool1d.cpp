// aten::avg_pool1d.out: the mean of each (strided, padded) window of a
// [N, C, L] or [C, L] input. A core ATen operator, although torch.export's
// decompositions turn nn.AvgPool1d into unsqueeze + avg_pool2d.
//
// ATen semantics as avg_pool2d.out (util/pool_loops.h) over one dimension;
// every list holds exactly one value (stride may be empty); no
// divisor_override. Dtypes: float16, bfloat16, float32, float64, int64.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/pool_ops.h"

namespace torchlight::portable {

void avg_pool1d_out(KernelContext& ctx, Span<EValue*> args) {
  run_avg_pool<1, /*kHasDivisor=*/false, /*kReducedFloats=*/true>(ctx, args);
}

Status avg_pool1d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_avg_pool<1, false, true>(args, call);
}

}  // namespace torchlight::portable
