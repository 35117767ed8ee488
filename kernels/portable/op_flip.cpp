// aten::flip.out: self with the order of elements reversed along each
// dimension in `dims` (each at most once). Any dtype. `dims` and out's
// dtype are checked at load; the prepared eval copies the flipped view.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/view_gather.h"

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

namespace {

// Self flipped along `dims` (read on every run, checked at load).
constexpr auto kFlipView = [](Span<EValue*> args, StridedView* view) {
  const size_t rank = args[0]->to_tensor().dim();
  bool flipped[kMaxTensorDim] = {};
  for (int64_t value : args[1]->to_int_list()) {
    size_t dim = 0;
    if (!view_gather::wrap(value, rank, &dim) || flipped[dim]) return false;
    flipped[dim] = true;
    if (rank > 0) view->flip(dim);
  }
  return true;
};

}  // namespace

Status flip_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const size_t rank = args[0]->to_tensor().dim();
  bool flipped[kMaxTensorDim] = {};
  for (int64_t value : args[1]->to_int_list()) {
    size_t dim = 0;
    TL_RETURN_IF_ERROR(wrap_dim(value, rank, "dims", &dim));
    TL_CHECK_OR_RETURN(!flipped[dim], Error::kInvalidArgument,
                       "argument 'dims' lists dimension %zu more than once", dim);
    flipped[dim] = true;
  }
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 2));
  call->eval = &dense_copy::view_copy_eval<2, kFlipView, &flip_out>;
  return Error::kOk;
}

}  // namespace torchlight::portable
