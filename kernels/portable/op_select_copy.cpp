// aten::select_copy.int_out: index `index` (negative counts from the end) of
// dimension `dim`, which is dropped. Any dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"

namespace torchlight::portable {

void select_copy_int_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  TL_KERNEL_CHECK(ctx, self.tensor.dim() > 0, Error::kInvalidArgument,
                  "argument 'self' is 0-d; select needs at least one dimension");
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  int64_t index = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_index_value(args[2]->to_int(), self.tensor.size(dim), dim,
                                                   /*allow_negative=*/true, "index", &index));
  StridedView view(self.tensor);
  view.select(dim, index);
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_view_to_out(self, view, out));
}

}  // namespace torchlight::portable
