// aten::select_copy.int_out: index `index` (negative counts from the end) of
// dimension `dim`, which is dropped. Any dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/view_gather.h"
#include "kernels/portable/util/dense_copy.h"

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

namespace {

// Self at `index` of `dim`, the dim dropped (index read on every run).
constexpr auto kSelectGather = [](Span<EValue*> args, const Tensor& self,
                                  view_gather::View* view) {
  size_t dim = 0;
  if (self.dim() == 0 || !view_gather::wrap(args[1]->to_int(), self.dim(), &dim)) return false;
  const int64_t size = self.size(dim);
  int64_t index = args[2]->to_int();
  if (index < -size || index >= size) return false;
  if (index < 0) index += size;
  view->init(self);
  view->offset = index * view->strides[dim];
  for (size_t d = dim + 1; d < view->rank; ++d) {
    view->sizes[d - 1] = view->sizes[d];
    view->strides[d - 1] = view->strides[d];
  }
  --view->rank;
  return true;
};

}  // namespace

// The rank, `dim` and out's dtype are the program's: checked at load.
Status select_copy_int_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const size_t rank = args[0]->to_tensor().dim();
  TL_CHECK_OR_RETURN(rank > 0, Error::kInvalidArgument,
                     "argument 'self' is 0-d; select needs at least one dimension");
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), rank, "dim", &dim));
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 3));
  view_gather::install<3, kSelectGather, &select_copy_int_out>(args, call);
  return Error::kOk;
}

}  // namespace torchlight::portable
