// aten::repeat.out: self tiled repeats[i] times along each dimension (self
// is first given leading size-1 dimensions up to len(repeats)). Any dtype.
// aten::tile lowers to repeat in torch.export. The length of `repeats` and
// out's dtype are checked at load; the prepared eval checks only the values.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// What the program fixes: the length of `repeats` against self's rank,
// out's dtype. Checked at load by prepare, and on every call by the
// reference eval.
Status check_repeat_args(Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const size_t rank = args[1]->to_int_list().size();
  TL_CHECK_OR_RETURN(rank >= self.dim() && rank <= kMaxTensorDim, Error::kInvalidArgument,
                     "argument 'repeats' has %zu entries; expected at least %zu (the rank of "
                     "'self') and at most %zu",
                     rank, self.dim(), kMaxTensorDim);
  return check_same_dtype({args[2]->to_tensor(), "out"}, self.scalar_type(), "self");
}

// The sizes for this run (the repeats' values against self's sizes), the
// resize and the tiled copy; after check_repeat_args.
void repeat_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> repeats = args[1]->to_int_list();
  const NamedTensor out{args[2]->to_tensor(), "out"};
  const size_t rank = repeats.size();
  const size_t lead = rank - self.tensor.dim();
  ShapeBuffer shape;
  shape.dim = rank;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t have = i < lead ? 1 : self.tensor.size(i - lead);
    TL_KERNEL_CHECK(ctx, repeats[i] >= 0, Error::kInvalidArgument,
                    "argument 'repeats' is %lld at dimension %zu; repeats must not be negative",
                    static_cast<long long>(repeats[i]), i);
    TL_KERNEL_CHECK(ctx, have == 0 || repeats[i] <= INT32_MAX / have, Error::kInvalidArgument,
                    "argument 'repeats' is %lld at dimension %zu, which makes the size too large",
                    static_cast<long long>(repeats[i]), i);
    shape.sizes[i] = static_cast<SizesType>(repeats[i] * have);
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
  if (out.tensor.numel() == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));

  // out dimension i, of size r * s, seen as (r, s); self as (r, s) with the
  // r part broadcast. Both are walked in the same row-major order.
  StridedView dst(out.tensor);
  StridedView src(self.tensor);
  for (size_t i = 0; i < lead; ++i) src.insert(0, 1, 0);
  for (size_t i = rank; i-- > 0;) {
    const int64_t have = i < lead ? 1 : self.tensor.size(i - lead);
    dst.split(i, repeats[i], have);
    src.insert(i, repeats[i], 0);
  }
  copy_view(dst, src);
}

}  // namespace

void repeat_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<2, &check_repeat_args, &repeat_shaped>(ctx, args);
}

Status repeat_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_repeat_args, &repeat_shaped>(args, call);
}

}  // namespace torchlight::portable
