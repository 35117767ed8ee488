// aten::nonzero.out: the coordinates of every nonzero element of self, in
// row-major order, as an int64 [count, self.dim()] tensor (NaN counts as
// nonzero). The count depends on the data, so out is resized at run time.
// Every real dtype. out's dtype and rank and self's dtype are checked at
// load; the installed eval (one per dtype) counts, sizes out and fills it.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/coord_walk.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/overlap.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// What the program fixes: out is a 2-D int64 tensor, self has a real dtype.
Status check_nonzero_fixed(Span<EValue*> args) {
  const ScalarType dtype = args[0]->to_tensor().scalar_type();
  const Tensor out = args[1]->to_tensor();
  TL_CHECK_OR_RETURN(out.scalar_type() == ScalarType::kLong, Error::kInvalidType,
                     "argument 'out' has dtype %s, expected int64", to_string(out.scalar_type()));
  TL_CHECK_OR_RETURN(out.dim() == 2, Error::kInvalidArgument,
                     "argument 'out' is %zu-D, expected 2-D", out.dim());
  if (!visit_real_type(dtype, [](auto) {})) return unsupported_dtype("self", dtype, kRealTypeNames);
  return Error::kOk;
}

// The count, out's size and the coordinates, for self's dtype CTYPE.
template <typename CTYPE>
void nonzero_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[1]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  const char* data = self.tensor.const_data_ptr<char>();
  auto is_nonzero = [&](const CoordWalk& w) {
    const CTYPE v = internal::read_element<CTYPE>(
        data + w.offset(self.tensor.strides()) * int64_t{sizeof(CTYPE)});
    return convert<bool>(v);  // != 0, so NaN counts.
  };
  int64_t count = 0;
  for (CoordWalk w(self.tensor.sizes()); !w.done(); w.next()) count += is_nonzero(w) ? 1 : 0;
  TL_KERNEL_CHECK(ctx, count <= INT32_MAX, Error::kInvalidArgument,
                  "argument 'self' has too many nonzero elements (%lld)",
                  static_cast<long long>(count));
  const SizesType sizes[] = {static_cast<SizesType>(count),
                             static_cast<SizesType>(self.tensor.dim())};
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, sizes));
  if (out.tensor.numel() == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  // self is read again while rows are written: an out planned over it
  // could add nonzero elements and make more rows than were counted.
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_no_overlap(out, self));
  char* dst = out.tensor.mutable_data_ptr<char>();
  const int64_t row_stride = out.tensor.strides()[0];
  const int64_t col_stride = out.tensor.strides()[1];
  int64_t row = 0;
  for (CoordWalk w(self.tensor.sizes()); !w.done() && row < count; w.next()) {
    if (!is_nonzero(w)) continue;
    for (size_t d = 0; d < self.tensor.dim(); ++d) {
      internal::write_element<int64_t>(w[d], dst + (row * row_stride + d * col_stride) * 8);
    }
    ++row;
  }
}

KernelFunction pick_nonzero(Span<EValue*> args) {
  KernelFunction eval = nullptr;
  visit_real_type(args[0]->to_tensor().scalar_type(),
                  [&](auto tag) { eval = &nonzero_shaped<typename decltype(tag)::type>; });
  return eval;
}

}  // namespace

void nonzero_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::picked_reference_eval<1, &check_nonzero_fixed, &pick_nonzero>(ctx, args);
}

Status nonzero_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::picked_prepare<&check_nonzero_fixed, &pick_nonzero>(args, call);
}

}  // namespace torchlight::portable
