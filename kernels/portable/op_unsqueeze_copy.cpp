// aten::unsqueeze_copy.out: self with a size-1 dimension inserted at `dim`
// (in [-rank - 1, rank]). Any dtype. Nothing is copied when out shares
// self's memory (a copy-free view, util/in_place.h).
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/in_place.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"

namespace torchlight::portable {

void unsqueeze_copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  const size_t rank = self.tensor.dim();
  TL_KERNEL_CHECK(ctx, rank < kMaxTensorDim, Error::kInvalidArgument,
                  "argument 'self' already has the most dimensions a tensor may have (%zu)",
                  kMaxTensorDim);
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), rank + 1, "dim", &dim));
  StridedView view(self.tensor);
  view.insert(dim, 1, 1);
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_reshape_to_out(self, view, out));
}

namespace {

// self's sizes with a 1 inserted at `dim` (read on every run; wrapped and
// range-checked at load).
constexpr auto kUnsqueezeShape = [](Span<EValue*> args, SizesType* sizes, size_t* rank) {
  const Tensor self = args[0]->to_tensor();
  size_t dim = 0;
  if (self.dim() >= kMaxTensorDim ||
      !wrap_dim(args[1]->to_int(), self.dim() + 1, "dim", &dim).ok()) {
    return false;
  }
  for (size_t d = 0, s = 0; d <= self.dim(); ++d) sizes[d] = d == dim ? 1 : self.size(s++);
  *rank = self.dim() + 1;
  return true;
};

}  // namespace

// The rank, `dim` and out's dtype are the program's: checked at load.
Status unsqueeze_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const size_t rank = args[0]->to_tensor().dim();
  TL_CHECK_OR_RETURN(rank < kMaxTensorDim, Error::kInvalidArgument,
                     "argument 'self' already has the most dimensions a tensor may have (%zu)",
                     kMaxTensorDim);
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), rank + 1, "dim", &dim));
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 2));
  call->eval = &dense_copy::reshape_copy_eval<2, kUnsqueezeShape, &unsqueeze_copy_out>;
  return Error::kOk;
}

}  // namespace torchlight::portable
