// aten::max_pool2d_with_indices.out: the maximum of each (dilated, strided,
// padded) window of a [N, C, H, W] or [C, H, W] input, and where it was.
// What nn.MaxPool2d exports to (and nn.MaxPool1d, through unsqueeze).
//
// ATen semantics (util/pool_loops.h): out keeps self's dtype (any real type
// but bool); indices is int64, the flat index ih * W + iw of the maximum in
// its input plane; NaN wins (the last NaN of a window), ties keep the first
// maximum. stride defaults to kernel_size; padding is at most half the
// kernel; with ceil_mode a last partial window counts unless it starts in
// the padding.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/pool_ops.h"

namespace torchlight::portable {

namespace {

// max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[],
//     int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out,
//     Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
constexpr ArgSpec kMaxPool2dWithIndicesOutArgs[] = {
    {"self", ArgType::kTensor},      {"kernel_size", ArgType::kIntList},
    {"stride", ArgType::kIntList},   {"padding", ArgType::kIntList},
    {"dilation", ArgType::kIntList}, {"ceil_mode", ArgType::kBool},
    {"out", ArgType::kTensor},       {"indices", ArgType::kTensor},
    {"(out, indices)", ArgType::kReturn},
};

}  // namespace

void max_pool2d_with_indices_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_args(args, kMaxPool2dWithIndicesOutArgs));
  run_max_pool_with_indices(ctx, args, 2);
}

}  // namespace torchlight::portable
