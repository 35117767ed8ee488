// aten::slice_copy.Tensor_out: elements start, start + step, ... before end
// along `dim` (ATen's clamping of start/end; step > 0). Any dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/view_gather.h"
#include "kernels/portable/util/dense_copy.h"

namespace torchlight::portable {

void slice_copy_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 6, *args[5]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[5]->to_tensor(), "out"};
  TL_KERNEL_CHECK(ctx, self.tensor.dim() > 0, Error::kInvalidArgument,
                  "argument 'self' is 0-d; slice needs at least one dimension");
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  int64_t start = 0;
  int64_t length = 0;
  const int64_t step = args[4]->to_int();
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, normalize_slice(*args[2], *args[3], step, self.tensor.size(dim), &start, &length));
  StridedView view(self.tensor);
  view.narrow(dim, start, length, step);
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_view_to_out(self, view, out));
}

namespace {

// Self narrowed along `dim` (start, end and step read on every run: they
// may be computed by the program).
constexpr auto kSliceGather = [](Span<EValue*> args, const Tensor& self,
                                 view_gather::View* view) {
  size_t dim = 0;
  int64_t start = 0;
  int64_t length = 0;
  if (self.dim() == 0 || !view_gather::wrap(args[1]->to_int(), self.dim(), &dim) ||
      !slice_bounds(*args[2], *args[3], args[4]->to_int(), self.size(dim), &start, &length)) {
    return false;
  }
  view->init(self);
  if (length > 0) view->offset = start * view->strides[dim];
  view->sizes[dim] = static_cast<SizesType>(length);
  // A step only matters between two elements; then step < size, so the
  // product cannot overflow (a huge step with one element would).
  if (length > 1) view->strides[dim] *= args[4]->to_int();
  return true;
};

}  // namespace

// The rank, `dim` and out's dtype are the program's: checked at load.
Status slice_copy_tensor_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const size_t rank = args[0]->to_tensor().dim();
  TL_CHECK_OR_RETURN(rank > 0, Error::kInvalidArgument,
                     "argument 'self' is 0-d; slice needs at least one dimension");
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), rank, "dim", &dim));
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 5));
  view_gather::install<5, kSliceGather, &slice_copy_tensor_out>(args, call);
  return Error::kOk;
}

}  // namespace torchlight::portable
