// aten::unbind_copy.int_out: each index of `dim` as its own tensor, that
// dimension removed. The schema returns nothing, so args = [self, dim,
// out], and upstream appends a copy of the out list as the return. Any dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/split_outs.h"

namespace torchlight::portable {

namespace {

// What the program fixes; checked at load by prepare, and on every call by
// the reference eval.
Status check_unbind_copy_int_out(Span<EValue*> args) {
  return check_split_call(args, 1, 2, "unbind");
}

// The pieces for this run's size of `dim`, and the copies; after
// check_unbind_copy_int_out.
void unbind_copy_int_out_shaped(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const Tensor> outs = args[2]->to_tensor_list();
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  const int64_t size = self.tensor.size(dim);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_list(outs, static_cast<size_t>(size)));
  for (int64_t i = 0; i < size; ++i) {
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, copy_slice_to_out(self, dim, i, 1, true, outs[i], static_cast<size_t>(i)));
  }
}

}  // namespace

void unbind_copy_int_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_unbind_copy_int_out(args));
  unbind_copy_int_out_shaped(ctx, args);
}

Status unbind_copy_int_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_unbind_copy_int_out, &unbind_copy_int_out_shaped>(args, call);
}

}  // namespace torchlight::portable
