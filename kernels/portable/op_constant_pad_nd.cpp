// aten::constant_pad_nd.out: self padded with `value` around its last
// dimensions. `pad` holds (before, after) pairs starting from the last
// dimension; negative amounts crop. `value` must fit self's dtype (ATen's
// fill_ rule) and is converted to it. Every dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"
#include "kernels/portable/util/type_promotion.h"

namespace torchlight::portable {

namespace {

// What the program fixes, checked at load by prepare (and by the reference
// eval on every call): pad's length against self's rank, the dtypes.
Status check_constant_pad_args(Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const size_t entries = args[1]->to_int_list().size();
  const NamedTensor out{args[3]->to_tensor(), "out"};
  const size_t rank = self.tensor.dim();
  TL_CHECK_OR_RETURN(entries % 2 == 0, Error::kInvalidArgument,
                     "argument 'pad' has %zu entries; it must have an even number", entries);
  TL_CHECK_OR_RETURN(entries / 2 <= rank, Error::kInvalidArgument,
                     "argument 'pad' has %zu entries, more than twice the rank of 'self' (%zu)",
                     entries, rank);
  TL_RETURN_IF_ERROR(check_same_dtype(out, self.tensor.scalar_type(), "self"));
  const ScalarType type = self.tensor.scalar_type();
  TL_CHECK_OR_RETURN(visit_real_type(type, [](auto) {}), Error::kInvalidType,
                     "argument 'self' has dtype %s, which is not supported (supported: %s)",
                     to_string(type), kRealTypeNames);
  return Error::kOk;
}

// The checks a run decides (the amounts against the sizes, the value
// against the dtype), and the fill and copy; after check_constant_pad_args.
void constant_pad_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> pad = args[1]->to_int_list();
  const EValue& value = *args[2];
  const NamedTensor out{args[3]->to_tensor(), "out"};
  const size_t rank = self.tensor.dim();
  // Per padded dimension: amounts before/after, and the resulting size.
  ShapeBuffer shape;
  shape.dim = rank;
  for (size_t d = 0; d < rank; ++d) shape.sizes[d] = self.tensor.size(d);
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const size_t d = rank - 1 - i;
    const int64_t before = pad[2 * i];
    const int64_t after = pad[2 * i + 1];
    const int64_t have = self.tensor.size(d);
    const bool fits = before >= -have - INT32_MAX && before <= INT32_MAX &&
                      after >= -have - INT32_MAX && after <= INT32_MAX;
    const int64_t size = fits ? have + before + after : -1;
    TL_KERNEL_CHECK(ctx, size >= 0 && size <= INT32_MAX, Error::kInvalidArgument,
                    "argument 'pad' gives dimension %zu (size %lld) padding %lld and %lld, which "
                    "is not a valid size",
                    d, static_cast<long long>(have), static_cast<long long>(before),
                    static_cast<long long>(after));
    shape.sizes[d] = static_cast<SizesType>(size);
  }
  const ScalarType type = self.tensor.scalar_type();
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_scalar_fits(value, type, "value"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));

  const StridedView dst_all(out.tensor);
  visit_real_type(type, [&](auto tag) {
    using CTYPE = typename decltype(tag)::type;
    const CTYPE element = scalar_to<CTYPE>(value);
    fill_view(dst_all, &element);
  });
  // The part of self that survives cropping, placed after the front padding.
  StridedView src(self.tensor);
  StridedView dst = dst_all;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const size_t d = rank - 1 - i;
    const int64_t before = pad[2 * i];
    const int64_t after = pad[2 * i + 1];
    const int64_t have = self.tensor.size(d);
    const int64_t skip_front = before < 0 ? -before : 0;
    const int64_t skip_back = after < 0 ? -after : 0;
    const int64_t kept = have - skip_front - skip_back;
    if (kept <= 0) return;  // Everything cropped: out is all padding.
    src.narrow(d, skip_front, kept);
    dst.narrow(d, before > 0 ? before : 0, kept);
  }
  copy_view(dst, src);
}

}  // namespace

void constant_pad_nd_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<3, &check_constant_pad_args, &constant_pad_shaped>(ctx, args);
}

Status constant_pad_nd_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_constant_pad_args, &constant_pad_shaped>(args, call);
}

}  // namespace torchlight::portable
