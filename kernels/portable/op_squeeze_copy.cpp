// aten::squeeze_copy.out (drop every size-1 dimension), .dim_out (drop
// `dim` if its size is 1) and .dims_out (drop those of `dim` that have size
// 1). Any dtype; the data is copied into out's layout, or not at all when
// out shares self's memory (a copy-free view, util/in_place.h).
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/in_place.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"

namespace torchlight::portable {

namespace {

// Self without the dimensions marked in `drop` that have size 1.
Status squeeze_into(const NamedTensor& self, const bool* drop, const NamedTensor& out) {
  StridedView view(self.tensor);
  for (size_t d = self.tensor.dim(); d-- > 0;) {
    if (drop[d] && self.tensor.size(d) == 1) view.select(d, 0);
  }
  return copy_reshape_to_out(self, view, out);
}

}  // namespace

void squeeze_copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[1]->to_tensor(), "out"};
  bool drop[kMaxTensorDim];
  for (bool& d : drop) d = true;
  TL_KERNEL_RETURN_IF_ERROR(ctx, squeeze_into(self, drop, out));
}

void squeeze_copy_dim_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  bool drop[kMaxTensorDim] = {};
  drop[dim] = self.tensor.dim() > 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, squeeze_into(self, drop, out));
}

void squeeze_copy_dims_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> dims = args[1]->to_int_list();
  const NamedTensor out{args[2]->to_tensor(), "out"};
  bool drop[kMaxTensorDim] = {};
  for (int64_t value : dims) {
    size_t dim = 0;
    TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(value, self.tensor.dim(), "dim", &dim));
    TL_KERNEL_CHECK(ctx, !drop[dim] || self.tensor.dim() == 0, Error::kInvalidArgument,
                    "argument 'dim' lists dimension %zu more than once", dim);
    drop[dim] = self.tensor.dim() > 0;
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, squeeze_into(self, drop, out));
}

}  // namespace torchlight::portable
