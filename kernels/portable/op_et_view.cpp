// ExecuTorch's memory-sharing prims.
//
// executorch_prim::et_view.default(self, size) -> out: a true view. out
// gets self's data pointer (no copy) and the shape `size` (one -1 may be
// inferred). args = [self, size, out]; out is the return value, a tensor
// the program planned without storage of its own. Valid only where the
// element order does not change, so both tensors must be laid out in the
// default (contiguous) dim order and have the same dtype. out aliases self
// from then on: the program must not write self while out is live.
//
// executorch_prim::et_copy_index.tensor(copy_to, copy_from, index): writes
// copy_from into copy_to[index] along the first dimension, growing
// copy_to's first dimension to index + 1 when it is smaller (used to stack
// loop iterations). args = [copy_to, copy_from, index] (a trailing return
// slot, if the program has one, is ignored).
//
// Both check at load what the program fixes (dtypes, dim orders, ranks, the
// size list's length); their installed evals check what a run decides
// (the size values, et_copy_index's index) and do the work.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// et_view: out's dtype (self's), both dim orders contiguous, as many sizes
// as out has dimensions.
Status check_et_view_fixed(Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(check_same_dtype(out, self.scalar_type(), "self"));
  TL_CHECK_OR_RETURN(is_contiguous_dim_order(self.dim_order()), Error::kInvalidArgument,
                     "argument 'self' is not in the contiguous dim order, so it cannot be viewed "
                     "without a copy");
  TL_CHECK_OR_RETURN(is_contiguous_dim_order(out.tensor.dim_order()), Error::kInvalidArgument,
                     "argument 'out' is not in the contiguous dim order, so it cannot view 'self'");
  const size_t entries = args[1]->to_int_list().size();
  TL_CHECK_OR_RETURN(entries == out.tensor.dim(), Error::kInvalidArgument,
                     "argument 'size' has %zu entries, but 'out' is %zu-D", entries,
                     out.tensor.dim());
  return Error::kOk;
}

// The shape of this run and the view itself.
void et_view_shaped(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  ShapeBuffer shape;
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, infer_view_shape(args[1]->to_int_list(), self.tensor.numel(), &shape));
  // out's storage is self's: bound first, so the resize is checked against it.
  out.tensor.impl()->bind_storage(self.tensor.mutable_data_ptr(), self.tensor.numel());
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
}

// et_copy_index: copy_to has one dimension more than copy_from, and its dtype.
Status check_et_copy_index_fixed(Span<EValue*> args) {
  const NamedTensor copy_to{args[0]->to_tensor(), "copy_to"};
  const NamedTensor copy_from{args[1]->to_tensor(), "copy_from"};
  const size_t rank = copy_from.tensor.dim();
  TL_CHECK_OR_RETURN(copy_to.tensor.dim() == rank + 1, Error::kInvalidArgument,
                     "argument 'copy_to' is %zu-D, expected %zu-D (one more than 'copy_from')",
                     copy_to.tensor.dim(), rank + 1);
  return check_same_dtype(copy_from, copy_to.tensor.scalar_type(), "copy_to");
}

// The index of this run, copy_to's growth and the row copy.
void et_copy_index_shaped(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor copy_to{args[0]->to_tensor(), "copy_to"};
  const NamedTensor copy_from{args[1]->to_tensor(), "copy_from"};
  const int64_t index = args[2]->to_int();
  const size_t rank = copy_from.tensor.dim();
  TL_KERNEL_CHECK(ctx, index >= 0 && index < INT32_MAX, Error::kInvalidArgument,
                  "argument 'index' is %lld; it must be non-negative",
                  static_cast<long long>(index));
  ShapeBuffer shape;
  shape.dim = rank + 1;
  const int64_t rows = copy_to.tensor.size(0);
  shape.sizes[0] = static_cast<SizesType>(rows > index + 1 ? rows : index + 1);
  for (size_t d = 0; d < rank; ++d) shape.sizes[d + 1] = copy_from.tensor.size(d);
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(copy_to, shape.span()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(copy_to));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(copy_from));
  StridedView row(copy_to.tensor);
  row.select(0, index);
  copy_view(row, StridedView(copy_from.tensor));
}

}  // namespace

void et_view_default(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<split_checks::kNoReturn, &check_et_view_fixed, &et_view_shaped>(
      ctx, args);
}

Status et_view_default_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_et_view_fixed, &et_view_shaped>(args, call);
}

void et_copy_index_tensor(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<split_checks::kNoReturn, &check_et_copy_index_fixed,
                               &et_copy_index_shaped>(ctx, args);
}

Status et_copy_index_tensor_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_et_copy_index_fixed, &et_copy_index_shaped>(args, call);
}

}  // namespace torchlight::portable
