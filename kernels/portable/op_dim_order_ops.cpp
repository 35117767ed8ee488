// The dim-order forms of _to_copy and empty that upstream's to_edge emits by
// default: dim_order_ops::_to_dim_order_copy.out (self converted to out's
// dtype and written in out's layout, as aten::_to_copy.out) and
// dim_order_ops::_empty_dim_order.out (only resizes, as aten::empty.out).
// Their out variants drop dtype (out's dtype is the target) and take the
// layout as `int[]? dim_order` instead of a memory format. The exporter has
// already given out that dim order, so the argument is checked against out,
// never acted on; None means "preserve", which out also already encodes.
// Every dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_convert.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// Checks an int[]? dim_order argument: None, or a permutation of 0..n-1
// for out's rank n that equals out's own dim order (the runtime cannot
// re-lay out a planned tensor). Errors: kInvalidArgument naming 'dim_order'.
Status check_dim_order_arg(const EValue& arg, const NamedTensor& out) {
  if (arg.is_none()) return Error::kOk;
  const Span<const int64_t> order = arg.to_int_list();
  const size_t rank = out.tensor.dim();
  TL_CHECK_OR_RETURN(order.size() == rank, Error::kInvalidArgument,
                     "argument 'dim_order' has %zu entries; '%s' is %zu-D", order.size(), out.name,
                     rank);
  bool seen[kMaxTensorDim] = {};
  for (size_t i = 0; i < order.size(); ++i) {
    const int64_t d = order[i];
    TL_CHECK_OR_RETURN(d >= 0 && static_cast<size_t>(d) < rank && !seen[d],
                       Error::kInvalidArgument,
                       "argument 'dim_order' is not a permutation of 0..%zu (entry %zu is %lld)",
                       rank == 0 ? 0 : rank - 1, i, static_cast<long long>(d));
    seen[d] = true;
  }
  const Span<const DimOrderType> actual = out.tensor.dim_order();
  for (size_t i = 0; i < rank; ++i) {
    TL_CHECK_OR_RETURN(actual[i] == order[i], Error::kInvalidArgument,
                       "argument 'dim_order' asks for dimension %lld at position %zu, but '%s' is "
                       "laid out with dimension %u there; the program's tensor and the argument "
                       "disagree",
                       static_cast<long long>(order[i]), i, out.name,
                       static_cast<unsigned>(actual[i]));
  }
  return Error::kOk;
}

}  // namespace

void to_dim_order_copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[3]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_dim_order_arg(*args[2], out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, copy_view_converting(StridedView(out.tensor), out.tensor.scalar_type(), out.name,
                                StridedView(self.tensor), self.tensor.scalar_type(), self.name));
}

// The dim order and the dtypes are the program's: checked (the dim order
// against out) at load. Without a dtype change the copy moves bytes
// (dense_copy.h); with one, a loop for that dtype pair converts
// (dense_convert.h).
Status to_dim_order_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_dim_order_arg(*args[2], {args[3]->to_tensor(), "out"}));
  if (args[3]->to_tensor().scalar_type() == args[0]->to_tensor().scalar_type()) {
    call->eval = &dense_copy::same_shape_copy_eval<3, &to_dim_order_copy_out>;
    return Error::kOk;
  }
  return dense_convert::prepare<3, &to_dim_order_copy_out>(args, call);
}

void empty_dim_order_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  ShapeBuffer shape;
  TL_KERNEL_RETURN_IF_ERROR(ctx, sizes_from_list(args[0]->to_int_list(), "size", &shape));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_dim_order_arg(*args[1], out));
}

namespace {

// _empty_dim_order.out once prepared: out only takes the shape.
void empty_dim_order_eval(KernelContext& ctx, Span<EValue*> args) {
  const Span<const int64_t> list = args[0]->to_int_list();
  const Tensor out = args[2]->to_tensor();
  SizesType sizes[kMaxTensorDim];
  bool ok = list.size() == out.dim();
  for (size_t d = 0; ok && d < list.size(); ++d) {
    ok = list[d] >= 0 && list[d] <= INT32_MAX;
    sizes[d] = static_cast<SizesType>(list[d]);
  }
  if (!ok || !dense_copy::fit_sizes({sizes, list.size()}, out)) {
    return empty_dim_order_out(ctx, args);
  }
  set_return(args, 3, *args[2]);
}

}  // namespace

// The size list's length and the dim_order argument against out: both the
// program's, checked at load.
Status empty_dim_order_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor out{args[2]->to_tensor(), "out"};
  const size_t entries = args[0]->to_int_list().size();
  TL_CHECK_OR_RETURN(entries == out.tensor.dim(), Error::kInvalidArgument,
                     "argument 'size' has %zu entries, but 'out' is %zu-D", entries,
                     out.tensor.dim());
  TL_RETURN_IF_ERROR(check_dim_order_arg(*args[1], out));
  call->eval = &empty_dim_order_eval;
  return Error::kOk;
}

}  // namespace torchlight::portable
