// aten::diagonal_copy.out: the diagonal of the (dim1, dim2) planes, shifted
// by `offset` (above the main diagonal when positive). dim1 and dim2 are
// removed and the diagonal becomes the last dimension. Any dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"

namespace torchlight::portable {

void diagonal_copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const int64_t offset = args[1]->to_int();
  const NamedTensor out{args[4]->to_tensor(), "out"};
  const size_t rank = self.tensor.dim();
  TL_KERNEL_CHECK(ctx, rank >= 2, Error::kInvalidArgument,
                  "argument 'self' is %zu-D; diagonal needs at least 2 dimensions", rank);
  size_t dim1 = 0;
  size_t dim2 = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[2]->to_int(), rank, "dim1", &dim1));
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[3]->to_int(), rank, "dim2", &dim2));
  TL_KERNEL_CHECK(ctx, dim1 != dim2, Error::kInvalidArgument,
                  "arguments 'dim1' and 'dim2' are both dimension %zu; they must differ", dim1);
  const int64_t size1 = self.tensor.size(dim1);
  const int64_t size2 = self.tensor.size(dim2);
  // Diagonal length; offsets beyond the plane give an empty diagonal.
  int64_t length = 0;
  if (offset >= 0) {
    length = offset >= size2 ? 0 : (size1 < size2 - offset ? size1 : size2 - offset);
  } else {
    length = offset <= -size1 ? 0 : (size1 + offset < size2 ? size1 + offset : size2);
  }
  StridedView view(self.tensor);
  const int64_t stride1 = view.stride(dim1);
  const int64_t stride2 = view.stride(dim2);
  if (length > 0) view.shift(offset >= 0 ? offset * stride2 : -offset * stride1);
  view.remove(dim1 > dim2 ? dim1 : dim2);
  view.remove(dim1 > dim2 ? dim2 : dim1);
  view.insert(rank - 2, length, stride1 + stride2);
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_view_to_out(self, view, out));
}

}  // namespace torchlight::portable
