// aten::view_copy.out and aten::_unsafe_view.out: self's elements, in
// row-major order, as a tensor of shape `size` (one entry may be -1, meaning
// whatever the element count requires). Works for any layout of self and
// out (it is a reshape). Any dtype.
//
// out may share self's memory (the exporter plans a reshape of a planned
// intermediate in place and keeps this call only to resize out, for
// dynamic shapes): then nothing is copied.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/in_place.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

void view_copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  ShapeBuffer shape;
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, infer_view_shape(args[1]->to_int_list(), self.tensor.numel(), &shape));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(out, self.tensor.scalar_type(), "self"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  bool in_place = false;
  TL_KERNEL_RETURN_IF_ERROR(ctx, out_is_self(self, out, &in_place));
  if (in_place) return;
  copy_view(StridedView(out.tensor), StridedView(self.tensor));
}

void unsafe_view_out(KernelContext& ctx, Span<EValue*> args) { view_copy_out(ctx, args); }

namespace {

// The shape of view_copy(self, size): `size` may hold dynamic dims, so it is
// read on every run.
constexpr auto kViewShape = [](Span<EValue*> args, SizesType* sizes, size_t* rank) {
  ShapeBuffer shape;
  if (!infer_view_shape(args[1]->to_int_list(), args[0]->to_tensor().numel(), &shape).ok()) {
    return false;
  }
  for (size_t d = 0; d < shape.dim; ++d) sizes[d] = shape.sizes[d];
  *rank = shape.dim;
  return true;
};

}  // namespace

// out's dtype is checked at load; the eval infers the shape, resizes out and
// moves bytes (dense_copy.h).
Status view_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 2));
  call->eval = &dense_copy::reshape_copy_eval<2, kViewShape, &view_copy_out>;
  return Error::kOk;
}

Status unsafe_view_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 2));
  call->eval = &dense_copy::reshape_copy_eval<2, kViewShape, &unsafe_view_out>;
  return Error::kOk;
}

}  // namespace torchlight::portable
