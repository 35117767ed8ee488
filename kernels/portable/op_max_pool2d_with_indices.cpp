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
#include "kernels/portable/util/pool_prepared.h"

namespace torchlight::portable {

void max_pool2d_with_indices_out(KernelContext& ctx, Span<EValue*> args) {
  run_max_pool_with_indices<2>(ctx, args);
}

// The reference's checks at load; a loop per dtype and layout (see
// util/pool_prepared.h) for float32, float64, float16, bfloat16, int32 and
// int64.
Status max_pool2d_with_indices_out_prepare(PrepareContext&, Span<EValue*> args,
                                           PreparedCall* call) {
  PoolParams params;
  SizesType sizes[2 + kMaxSpatialDims];
  TL_RETURN_IF_ERROR(check_max_pool_call(args, 2, &params, sizes));
  const Tensor self = args[0]->to_tensor();
  const ScalarType dtype = self.scalar_type();
  call->eval = pick_max_pool<2>(args);  // Other layouts and dtypes: the shaped eval.
  using pool_prepared::Layout;
  const Tensor indices = args[7]->to_tensor();
  const Layout layout = pool_prepared::common_layout(self, args[6]->to_tensor(), &indices);
  if (layout == Layout::kOther) return Error::kOk;
  auto pick = [&](auto tag) {
    using T = typename decltype(tag)::type;
    call->eval = layout == Layout::kNchw
                     ? &pool_prepared::max_pool2d_eval<T, Layout::kNchw, max_pool2d_with_indices_out>
                     : &pool_prepared::max_pool2d_eval<T, Layout::kChannelsLast,
                                                       max_pool2d_with_indices_out>;
  };
  pool_prepared::visit_float_loop_type(dtype, pick);
  if (dtype == ScalarType::kInt) pick(TypeTag<int32_t>{});
  if (dtype == ScalarType::kLong) pick(TypeTag<int64_t>{});
  return Error::kOk;
}

}  // namespace torchlight::portable
