// aten::transpose_copy.int_out (swap two dimensions) and aten::t_copy.out
// (transpose of a tensor with at most 2 dimensions), copied into out's own
// layout. Any dtype.
#include <utility>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/view_gather.h"

namespace torchlight::portable {

namespace {

// Self with dimensions a and b swapped.
StridedView transposed(const Tensor& self, size_t a, size_t b) {
  StridedView view(self);
  if (self.dim() < 2) return view;  // 0-d and 1-d: a == b == 0.
  size_t order[kMaxTensorDim];
  for (size_t d = 0; d < self.dim(); ++d) order[d] = d;
  order[a] = b;
  order[b] = a;
  view.permute(order);
  return view;
}

}  // namespace

void transpose_copy_int_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  size_t dim0 = 0;
  size_t dim1 = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim0", &dim0));
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[2]->to_int(), self.tensor.dim(), "dim1", &dim1));
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_view_to_out(self, transposed(self.tensor, dim0, dim1), out));
}

namespace {

// Self with dim0 and dim1 swapped (read on every run, checked at load).
constexpr auto kTransposeView = [](Span<EValue*> args, StridedView* view) {
  const Tensor self = args[0]->to_tensor();
  size_t dim0 = 0;
  size_t dim1 = 0;
  if (!wrap_dim(args[1]->to_int(), self.dim(), "dim0", &dim0).ok() ||
      !wrap_dim(args[2]->to_int(), self.dim(), "dim1", &dim1).ok()) {
    return false;
  }
  *view = transposed(self, dim0, dim1);
  return true;
};

// Self with dim0 and dim1 swapped, as a view_gather::View.
constexpr auto kTransposeGather = [](Span<EValue*> args, const Tensor& self,
                                     view_gather::View* view) {
  size_t dim0 = 0;
  size_t dim1 = 0;
  if (!view_gather::wrap(args[1]->to_int(), self.dim(), &dim0) ||
      !view_gather::wrap(args[2]->to_int(), self.dim(), &dim1)) {
    return false;
  }
  view->init(self);
  if (self.dim() >= 2) {
    std::swap(view->sizes[dim0], view->sizes[dim1]);
    std::swap(view->strides[dim0], view->strides[dim1]);
  }
  return true;
};

}  // namespace

Status transpose_copy_int_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const size_t rank = args[0]->to_tensor().dim();
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), rank, "dim0", &dim));
  TL_RETURN_IF_ERROR(wrap_dim(args[2]->to_int(), rank, "dim1", &dim));
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 3));
  if (!view_gather::install<3, kTransposeGather, &transpose_copy_int_out>(args, call)) {
    call->eval = &dense_copy::view_copy_eval<3, kTransposeView, &transpose_copy_int_out>;
  }
  return Error::kOk;
}

void t_copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[1]->to_tensor(), "out"};
  TL_KERNEL_CHECK(ctx, self.tensor.dim() <= 2, Error::kInvalidArgument,
                  "argument 'self' is %zu-D; t() expects a tensor with at most 2 dimensions",
                  self.tensor.dim());
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_view_to_out(self, transposed(self.tensor, 0, 1), out));
}

namespace {

constexpr auto kTView = [](Span<EValue*> args, StridedView* view) {
  *view = transposed(args[0]->to_tensor(), 0, 1);
  return true;
};

}  // namespace

// Self's rank and out's dtype are the program's: checked at load.
Status t_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const size_t rank = args[0]->to_tensor().dim();
  TL_CHECK_OR_RETURN(rank <= 2, Error::kInvalidArgument,
                     "argument 'self' is %zu-D; t() expects a tensor with at most 2 dimensions",
                     rank);
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 1));
  call->eval = &dense_copy::view_copy_eval<1, kTView, &t_copy_out>;
  return Error::kOk;
}

}  // namespace torchlight::portable
