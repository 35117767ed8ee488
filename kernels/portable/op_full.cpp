// Creation ops that fill out with one value: aten::full.out,
// full_like.out, zeros.out, ones.out, zeros_like.out, ones_like.out,
// scalar_tensor.out and fill.Scalar_out / fill.Tensor_out (self's shape;
// the Tensor form takes a 0-d tensor as the value); and aten::empty.out,
// empty_like.out and empty_strided.out, which only resize (out's dim order
// stands for the strides). The value must fit out's dtype as ATen's fill_ requires (an Int
// in range, a finite Double in range for integers...; see
// check_scalar_fits) and is then converted to it. Every dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/element_scalar.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/memory_format.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"
#include "kernels/portable/util/type_promotion.h"

namespace torchlight::portable {

namespace {

// Resizes out to `sizes` and writes `value` (named `value_name`) into every
// element. The kernel name is added by the caller.
Status fill_out(const NamedTensor& out, Span<const SizesType> sizes, const EValue& value,
                const char* value_name) {
  const ScalarType type = out.tensor.scalar_type();
  if (!visit_real_type(type, [](auto) {})) return unsupported_dtype(out.name, type, kRealTypeNames);
  TL_RETURN_IF_ERROR(resize_tensor(out, sizes));
  TL_RETURN_IF_ERROR(check_scalar_fits(value, type, value_name));
  TL_RETURN_IF_ERROR(check_has_data(out));
  visit_real_type(type, [&](auto tag) {
    using CTYPE = typename decltype(tag)::type;
    const CTYPE element = scalar_to<CTYPE>(value);
    fill_view(StridedView(out.tensor), &element);
  });
  return Error::kOk;
}

Status fill_sized(Span<EValue*> args, size_t out_index, const EValue& value,
                  const char* value_name) {
  ShapeBuffer shape;
  TL_RETURN_IF_ERROR(sizes_from_list(args[0]->to_int_list(), "size", &shape));
  return fill_out({args[out_index]->to_tensor(), "out"}, shape.span(), value, value_name);
}

}  // namespace

void full_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, fill_sized(args, 2, *args[1], "fill_value"));
}

void full_like_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor out{args[3]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_memory_format(*args[2], out));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, fill_out(out, args[0]->to_tensor().sizes(), *args[1], "fill_value"));
}

void zeros_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, fill_sized(args, 1, EValue(int64_t{0}), "value"));
}

void ones_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, fill_sized(args, 1, EValue(int64_t{1}), "value"));
}

void zeros_like_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_memory_format(*args[1], out));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, fill_out(out, args[0]->to_tensor().sizes(), EValue(int64_t{0}), "value"));
}

void ones_like_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_memory_format(*args[1], out));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, fill_out(out, args[0]->to_tensor().sizes(), EValue(int64_t{1}), "value"));
}

void scalar_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, fill_out({args[1]->to_tensor(), "out"}, {}, *args[0], "s"));
}

void fill_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, fill_out(out, args[0]->to_tensor().sizes(), *args[1], "value"));
}

void fill_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor value{args[1]->to_tensor(), "value"};
  TL_KERNEL_CHECK(ctx, value.tensor.dim() == 0, Error::kInvalidArgument,
                  "argument 'value' is %zu-D; fill takes a 0-d value tensor", value.tensor.dim());
  EValue scalar;
  TL_KERNEL_RETURN_IF_ERROR(ctx, element_to_scalar(value, 0, &scalar));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, fill_out({args[2]->to_tensor(), "out"}, args[0]->to_tensor().sizes(), scalar, "value"));
}

void empty_strided_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  const Span<const int64_t> size = args[0]->to_int_list();
  const Span<const int64_t> stride = args[1]->to_int_list();
  TL_KERNEL_CHECK(ctx, stride.size() == size.size(), Error::kInvalidArgument,
                  "argument 'stride' has %zu entries but 'size' has %zu", stride.size(),
                  size.size());
  ShapeBuffer shape;
  TL_KERNEL_RETURN_IF_ERROR(ctx, sizes_from_list(size, "size", &shape));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
}

void empty_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_memory_format(*args[1], out));
  ShapeBuffer shape;
  TL_KERNEL_RETURN_IF_ERROR(ctx, sizes_from_list(args[0]->to_int_list(), "size", &shape));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
}

void empty_like_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_memory_format(*args[1], out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, args[0]->to_tensor().sizes()));
}

}  // namespace torchlight::portable
