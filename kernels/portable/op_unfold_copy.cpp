// aten::unfold_copy.out: every window of `size` elements, `step` apart,
// along `dimension`: that dimension becomes the window count and a new last
// dimension of `size` holds each window. Any dtype. `dimension` and out's
// dtype are checked at load; the prepared eval checks the window's values.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// What the program fixes: `dimension` against self's rank, room for one more
// dimension, out's dtype. Checked at load by prepare, and on every call by
// the reference eval.
Status check_unfold_args(Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const size_t rank = self.dim();
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), rank, "dimension", &dim));
  TL_CHECK_OR_RETURN(rank < kMaxTensorDim, Error::kInvalidArgument,
                     "argument 'self' already has the most dimensions a tensor may have (%zu)",
                     kMaxTensorDim);
  return check_same_dtype({args[4]->to_tensor(), "out"}, self.scalar_type(), "self");
}

// The window against this run's size of `dimension`, and the copy; after
// check_unfold_args.
void unfold_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const int64_t size = args[2]->to_int();
  const int64_t step = args[3]->to_int();
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const size_t rank = self.tensor.dim();
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), rank, "dimension", &dim));
  const int64_t length = rank == 0 ? 1 : self.tensor.size(dim);
  TL_KERNEL_CHECK(ctx, size >= 0 && size <= length, Error::kInvalidArgument,
                  "argument 'size' is %lld; expected 0..%lld (the size of dimension %zu of 'self')",
                  static_cast<long long>(size), static_cast<long long>(length), dim);
  TL_KERNEL_CHECK(ctx, step > 0, Error::kInvalidArgument,
                  "argument 'step' is %lld; it must be positive", static_cast<long long>(step));
  StridedView view(self.tensor);
  if (rank == 0) {
    view.insert(0, size, 1);  // A 0-d tensor unfolds into [size] (size <= 1).
  } else {
    const int64_t stride = view.stride(dim);
    view.set(dim, (length - size) / step + 1, stride * step);
    view.insert(rank, size, stride);
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_view_to_out(self, view, out));
}

}  // namespace

void unfold_copy_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<4, &check_unfold_args, &unfold_shaped>(ctx, args);
}

Status unfold_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_unfold_args, &unfold_shaped>(args, call);
}

}  // namespace torchlight::portable
