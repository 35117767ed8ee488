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

namespace {

// adaptive_avg_pool1d.out(Tensor self, int[1] output_size, *, Tensor(a!) out) -> Tensor(a!)
constexpr ArgSpec kAdaptiveAvgPool1dOutArgs[] = {
    {"self", ArgType::kTensor},
    {"output_size", ArgType::kIntList},
    {"out", ArgType::kTensor},
    {"out", ArgType::kReturn},
};

}  // namespace

void adaptive_avg_pool1d_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_args(args, kAdaptiveAvgPool1dOutArgs));
  run_adaptive_pool(ctx, args, 1, /*with_indices=*/false);
}

}  // namespace torchlight::portable
