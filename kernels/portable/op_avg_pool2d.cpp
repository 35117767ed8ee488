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
#include "kernels/portable/util/pool_prepared.h"

namespace torchlight::portable {

void avg_pool2d_out(KernelContext& ctx, Span<EValue*> args) {
  run_avg_pool<2, /*kHasDivisor=*/true, /*kReducedFloats=*/true>(ctx, args);
}

// The reference's checks at load; a loop per layout (see
// util/pool_prepared.h) for float32, float64, float16 and bfloat16.
Status avg_pool2d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  PoolParams params;
  SizesType sizes[2 + kMaxSpatialDims];
  TL_RETURN_IF_ERROR(check_avg_pool2d_call(args, &params, sizes));
  call->eval = pick_avg_pool<2, true>(args);  // Other layouts and dtypes: the shaped eval.
  using pool_prepared::Layout;
  const Tensor self = args[0]->to_tensor();
  const Layout layout = pool_prepared::common_layout(self, args[7]->to_tensor(), nullptr);
  if (layout == Layout::kOther) return Error::kOk;
  auto pick = [&](auto tag) {
    using T = typename decltype(tag)::type;
    call->eval = layout == Layout::kNchw
                     ? &pool_prepared::avg_pool2d_eval<T, Layout::kNchw, avg_pool2d_out>
                     : &pool_prepared::avg_pool2d_eval<T, Layout::kChannelsLast, avg_pool2d_out>;
  };
  pool_prepared::visit_float_loop_type(self.scalar_type(), pick);
  return Error::kOk;
}

}  // namespace torchlight::portable
