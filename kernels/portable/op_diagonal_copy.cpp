// aten::diagonal_copy.out: the diagonal of the (dim1, dim2) planes, shifted
// by `offset` (above the main diagonal when positive). dim1 and dim2 are
// removed and the diagonal becomes the last dimension. Any dtype. The rank,
// the dims and out's dtype are checked at load; the prepared eval builds
// the diagonal view of each run's shape and copies it.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/view_gather.h"

namespace torchlight::portable {

namespace {

// `view` (all of self, rank >= 2, dim1 != dim2) becomes the diagonal.
void diagonal_view(int64_t offset, size_t dim1, size_t dim2, StridedView* view) {
  const size_t rank = view->dim();
  const int64_t size1 = view->size(dim1);
  const int64_t size2 = view->size(dim2);
  // Diagonal length; offsets beyond the plane give an empty diagonal.
  int64_t length = 0;
  if (offset >= 0) {
    length = offset >= size2 ? 0 : (size1 < size2 - offset ? size1 : size2 - offset);
  } else {
    length = offset <= -size1 ? 0 : (size1 + offset < size2 ? size1 + offset : size2);
  }
  const int64_t stride1 = view->stride(dim1);
  const int64_t stride2 = view->stride(dim2);
  if (length > 0) view->shift(offset >= 0 ? offset * stride2 : -offset * stride1);
  view->remove(dim1 > dim2 ? dim1 : dim2);
  view->remove(dim1 > dim2 ? dim2 : dim1);
  view->insert(rank - 2, length, stride1 + stride2);
}

// The diagonal of this run's self (dims read on every run, checked at load).
constexpr auto kDiagonalView = [](Span<EValue*> args, StridedView* view) {
  const size_t rank = args[0]->to_tensor().dim();
  size_t dim1 = 0;
  size_t dim2 = 0;
  if (rank < 2 || !view_gather::wrap(args[2]->to_int(), rank, &dim1) ||
      !view_gather::wrap(args[3]->to_int(), rank, &dim2) || dim1 == dim2) {
    return false;
  }
  diagonal_view(args[1]->to_int(), dim1, dim2, view);
  return true;
};

}  // namespace

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
  StridedView view(self.tensor);
  diagonal_view(offset, dim1, dim2, &view);
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_view_to_out(self, view, out));
}

Status diagonal_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const size_t rank = args[0]->to_tensor().dim();
  TL_CHECK_OR_RETURN(rank >= 2, Error::kInvalidArgument,
                     "argument 'self' is %zu-D; diagonal needs at least 2 dimensions", rank);
  size_t dim1 = 0;
  size_t dim2 = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[2]->to_int(), rank, "dim1", &dim1));
  TL_RETURN_IF_ERROR(wrap_dim(args[3]->to_int(), rank, "dim2", &dim2));
  TL_CHECK_OR_RETURN(dim1 != dim2, Error::kInvalidArgument,
                     "arguments 'dim1' and 'dim2' are both dimension %zu; they must differ", dim1);
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 4));
  call->eval = &dense_copy::view_copy_eval<4, kDiagonalView, &diagonal_copy_out>;
  return Error::kOk;
}

}  // namespace torchlight::portable
