// aten::flip.out: self with the order of elements reversed along each
// dimension in `dims` (each at most once). Any dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"

namespace torchlight::portable {

void flip_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> dims = args[1]->to_int_list();
  const NamedTensor out{args[2]->to_tensor(), "out"};
  StridedView view(self.tensor);
  bool flipped[kMaxTensorDim] = {};
  for (int64_t value : dims) {
    size_t dim = 0;
    TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(value, self.tensor.dim(), "dims", &dim));
    TL_KERNEL_CHECK(ctx, !flipped[dim], Error::kInvalidArgument,
                    "argument 'dims' lists dimension %zu more than once", dim);
    flipped[dim] = true;
    if (self.tensor.dim() > 0) view.flip(dim);
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_view_to_out(self, view, out));
}

}  // namespace torchlight::portable
