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

namespace {

// avg_pool3d.out(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0,
//     bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *,
//     Tensor(a!) out) -> Tensor(a!)
constexpr ArgSpec kAvgPool3dOutArgs[] = {
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

void avg_pool3d_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_args(args, kAvgPool3dOutArgs));
  run_avg_pool(ctx, args, 3, /*has_divisor=*/true, /*reduced_floats=*/false);
}

}  // namespace torchlight::portable
