// aten::as_strided_copy.out: the elements of self's memory at
// storage_offset + sum(i_d * stride[d]) for every index i of `size`. Self's
// memory is its dense storage in its own dim order, so "storage" positions
// are positions in memory. Strides must be non-negative and every position
// inside self's numel elements (checked before anything is read). Any dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"

namespace torchlight::portable {

void as_strided_copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> stride = args[2]->to_int_list();
  const int64_t offset = args[3]->is_int() ? args[3]->to_int() : 0;
  const NamedTensor out{args[4]->to_tensor(), "out"};
  ShapeBuffer shape;
  TL_KERNEL_RETURN_IF_ERROR(ctx, sizes_from_list(args[1]->to_int_list(), "size", &shape));
  TL_KERNEL_CHECK(ctx, stride.size() == shape.dim, Error::kInvalidArgument,
                  "argument 'stride' has %zu entries but 'size' has %zu", stride.size(),
                  shape.dim);
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

}  // namespace torchlight::portable
