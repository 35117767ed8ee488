// aten::split_copy.Tensor_out: self cut along `dim` into pieces of
// `split_size` (the last may be smaller), one per out tensor. The schema
// returns nothing, so args = [self, split_size, dim, out], and upstream
// appends a copy of the out list as the return. Any dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/split_outs.h"

namespace torchlight::portable {

namespace {

// What the program fixes; checked at load by prepare, and on every call by
// the reference eval.
Status check_split_copy_tensor_out(Span<EValue*> args) {
  return check_split_call(args, 2, 3, "split");
}

// The pieces for this run's size of `dim`, and the copies; after
// check_split_copy_tensor_out.
void split_copy_tensor_out_shaped(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const int64_t split_size = args[1]->to_int();
  const Span<const Tensor> outs = args[3]->to_tensor_list();
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[2]->to_int(), self.tensor.dim(), "dim", &dim));
  const int64_t size = self.tensor.size(dim);
  TL_KERNEL_CHECK(ctx, split_size >= 0 && (split_size > 0 || size == 0), Error::kInvalidArgument,
                  "argument 'split_size' is %lld; it must be positive (0 only when dimension %zu "
                  "has size 0)",
                  static_cast<long long>(split_size), dim);
  const int64_t pieces = split_size == 0 ? 1 : (size == 0 ? 1 : (size - 1) / split_size + 1);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_list(outs, static_cast<size_t>(pieces)));
  for (int64_t i = 0; i < pieces; ++i) {
    const int64_t start = i * split_size;
    const int64_t length = size - start < split_size ? size - start : split_size;
    TL_KERNEL_RETURN_IF_ERROR(ctx, copy_slice_to_out(self, dim, start, length, false, outs[i],
                                                     static_cast<size_t>(i)));
  }
}

}  // namespace

void split_copy_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_split_copy_tensor_out(args));
  split_copy_tensor_out_shaped(ctx, args);
}

Status split_copy_tensor_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_split_copy_tensor_out, &split_copy_tensor_out_shaped>(args, call);
}

}  // namespace torchlight::portable
