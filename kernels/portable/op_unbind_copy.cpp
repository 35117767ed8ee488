// aten::unbind_copy.int_out: each index of `dim` as its own tensor, that
// dimension removed. The schema returns nothing, so args = [self, dim,
// out], and upstream appends a copy of the out list as the return. Any dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/split_outs.h"

namespace torchlight::portable {

void unbind_copy_int_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_void_out_return_list(args, 2));
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const Tensor> outs = args[2]->to_tensor_list();
  TL_KERNEL_CHECK(ctx, self.tensor.dim() > 0, Error::kInvalidArgument,
                  "argument 'self' is 0-d; unbind needs at least one dimension");
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  const int64_t size = self.tensor.size(dim);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_list(outs, static_cast<size_t>(size)));
  for (int64_t i = 0; i < size; ++i) {
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, copy_slice_to_out(self, dim, i, 1, true, outs[i], static_cast<size_t>(i)));
  }
}

}  // namespace torchlight::portable
