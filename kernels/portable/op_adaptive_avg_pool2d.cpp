// aten::_adaptive_avg_pool2d.out: average pooling to a requested output size
// [OH, OW] of a [N, C, H, W] or [C, H, W] input. What nn.AdaptiveAvgPool2d
// exports to (except output size 1, which exports to mean.dim), and
// nn.AdaptiveAvgPool1d through unsqueeze.
//
// ATen semantics (util/pool_loops.h): output cell (oh, ow) averages input
// rows [floor(oh * H / OH), ceil((oh + 1) * H / OH)) and the matching
// columns; windows may overlap. float16, bfloat16, float32, float64 only;
// the sum is in opmath and divided by the window height, then its width.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/pool_ops.h"
#include "kernels/portable/util/pool_prepared.h"

namespace torchlight::portable {

void adaptive_avg_pool2d_out(KernelContext& ctx, Span<EValue*> args) {
  run_adaptive_pool<2, /*kWithIndices=*/false>(ctx, args);
}

// The reference's checks at load; a loop per layout (see
// util/pool_prepared.h) for float32, float64, float16 and bfloat16. The global pool (1x1, what
// classifiers end with) is one running sum per plane or channel.
Status adaptive_avg_pool2d_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  SizesType sizes[2 + kMaxSpatialDims];
  TL_RETURN_IF_ERROR(check_adaptive_avg_pool2d_call(args, sizes));
  call->eval = pick_adaptive_pool<2, false>(args);  // Other layouts: the shaped eval.
  const Tensor self = args[0]->to_tensor();
  using pool_prepared::Layout;
  const Layout layout = pool_prepared::common_layout(self, args[2]->to_tensor(), nullptr);
  if (layout == Layout::kOther) return Error::kOk;
  auto pick = [&](auto tag) {
    using T = typename decltype(tag)::type;
    call->eval =
        layout == Layout::kNchw
            ? &pool_prepared::adaptive_avg_pool2d_eval<T, Layout::kNchw, adaptive_avg_pool2d_out>
            : &pool_prepared::adaptive_avg_pool2d_eval<T, Layout::kChannelsLast,
                                                       adaptive_avg_pool2d_out>;
  };
  pool_prepared::visit_float_loop_type(self.scalar_type(), pick);
  return Error::kOk;
}

}  // namespace torchlight::portable
