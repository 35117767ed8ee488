// aten::max_pool3d_with_indices.out: the maximum of each (dilated, strided,
// padded) window of a [N, C, D, H, W] or [C, D, H, W] input, and where it
// was (nn.MaxPool3d).
//
// ATen semantics as max_pool2d_with_indices (util/pool_loops.h), with a
// depth dimension: indices are the flat index (id * H + ih) * W + iw of the
// maximum in its input volume.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/pool_ops.h"

namespace torchlight::portable {

void max_pool3d_with_indices_out(KernelContext& ctx, Span<EValue*> args) {
  run_max_pool_with_indices<3>(ctx, args);
}

Status max_pool3d_with_indices_out_prepare(PrepareContext&, Span<EValue*> args,
                                           PreparedCall* call) {
  return prepare_max_pool_with_indices<3>(args, call);
}

}  // namespace torchlight::portable
