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

namespace {

// avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0,
//     bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *,
//     Tensor(a!) out) -> Tensor(a!)
constexpr ArgSpec kAvgPool2dOutArgs[] = {
    {"self", ArgType::kTensor},
    {"kernel_size", ArgType::kIntList},
    {"stride", ArgType::kIntList},
    {"padding", ArgType::kIntList},
    {"ceil_mode", ArgType::kBool},
    {"count_include_pad", ArgType::kBool},
    {"divisor_override", ArgType::kOptionalInt},
    {"out", ArgType::kTensor},
    {"out", ArgType::kReturn},
};

}  // namespace

void avg_pool2d_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_args(args, kAvgPool2dOutArgs));
  run_avg_pool(ctx, args, 2, /*has_divisor=*/true, /*reduced_floats=*/true);
}

}  // namespace torchlight::portable
