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

namespace {

// max_pool3d_with_indices.out(Tensor self, int[3] kernel_size, int[3] stride=[],
//     int[3] padding=0, int[3] dilation=1, bool ceil_mode=False, *, Tensor(a!) out,
//     Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
constexpr ArgSpec kMaxPool3dWithIndicesOutArgs[] = {
    {"self", ArgType::kTensor},      {"kernel_size", ArgType::kIntList},
    {"stride", ArgType::kIntList},   {"padding", ArgType::kIntList},
    {"dilation", ArgType::kIntList}, {"ceil_mode", ArgType::kBool},
    {"out", ArgType::kTensor},       {"indices", ArgType::kTensor},
    {"(out, indices)", ArgType::kReturn},
};

}  // namespace

void max_pool3d_with_indices_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_args(args, kMaxPool3dWithIndicesOutArgs));
  run_max_pool_with_indices(ctx, args, 3);
}

}  // namespace torchlight::portable
