// aten::as_strided_copy.out: the elements of self's memory at
// storage_offset + sum(i_d * stride[d]) for every index i of `size`. Self's
// memory is its dense storage in its own dim order, so "storage" positions
// are positions in memory. Strides must be non-negative and every position
// inside self's numel elements (checked before anything is read). Any dtype.
// The list lengths and out's dtype are checked at load; the installed eval
// checks the values (an earlier instruction may compute them) and copies.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// What the program fixes: the lengths of size and stride, out's dtype.
Status check_as_strided_fixed(Span<EValue*> args) {
  const size_t rank = args[1]->to_int_list().size();
  const size_t strides = args[2]->to_int_list().size();
  TL_RETURN_IF_ERROR(check_list_fits_rank(rank, "size"));
  TL_CHECK_OR_RETURN(strides == rank, Error::kInvalidArgument,
                     "argument 'stride' has %zu entries but 'size' has %zu", strides, rank);
  return check_same_dtype({args[4]->to_tensor(), "out"}, args[0]->to_tensor().scalar_type(),
                          "self");
}

// The values and the copy, after check_as_strided_fixed.
void as_strided_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> stride = args[2]->to_int_list();
  const int64_t offset = args[3]->is_int() ? args[3]->to_int() : 0;
  const NamedTensor out{args[4]->to_tensor(), "out"};
  ShapeBuffer shape;
  TL_KERNEL_RETURN_IF_ERROR(ctx, sizes_from_list(args[1]->to_int_list(), "size", &shape));
  TL_KERNEL_CHECK(ctx, offset >= 0, Error::kInvalidArgument,
                  "argument 'storage_offset' is %lld; it must not be negative",
                  static_cast<long long>(offset));
  // The last position read, in 128 bits so no stride can overflow it.
  __int128 last = offset;
  for (size_t d = 0; d < shape.dim; ++d) {
    TL_KERNEL_CHECK(ctx, stride[d] >= 0, Error::kInvalidArgument,
                    "argument 'stride' is %lld at dimension %zu; strides must not be negative",
                    static_cast<long long>(stride[d]), d);
    if (shape.sizes[d] > 0) last += static_cast<__int128>(shape.sizes[d] - 1) * stride[d];
  }
  if (shape.numel() > 0) {
    TL_KERNEL_CHECK(ctx, last < self.tensor.numel(), Error::kInvalidArgument,
                    "arguments 'size', 'stride' and 'storage_offset' reach past the %lld "
                    "elements of 'self'",
                    static_cast<long long>(self.tensor.numel()));
  }
  // A view over self's memory: drop self's own dimensions, then lay out
  // the requested ones.
  StridedView view(self.tensor);
  while (view.dim() > 0) view.remove(view.dim() - 1);
  for (size_t d = 0; d < shape.dim; ++d) view.insert(d, shape.sizes[d], stride[d]);
  view.shift(offset);
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_view_to_out(self, view, out));
}

}  // namespace

void as_strided_copy_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::reference_eval<4, &check_as_strided_fixed, &as_strided_shaped>(ctx, args);
}

Status as_strided_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return split_checks::prepare<&check_as_strided_fixed, &as_strided_shaped>(args, call);
}

}  // namespace torchlight::portable
