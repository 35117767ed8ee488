// aten::permute_copy.out: out = self.permute(dims), copied into out's own
// layout. Any dtype (bytes are moved, not converted).
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/view_gather.h"

namespace torchlight::portable {

void permute_copy_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const Span<const int64_t> dims = args[1]->to_int_list();
  const NamedTensor out{args[2]->to_tensor(), "out"};

  const size_t rank = self.tensor.dim();
  TL_KERNEL_CHECK(ctx, dims.size() == rank, Error::kInvalidArgument,
                  "argument 'dims' has %zu entries, expected %zu (the rank of 'self')",
                  dims.size(), rank);
  size_t order[kMaxTensorDim];
  bool seen[kMaxTensorDim] = {};
  for (size_t i = 0; i < rank; ++i) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(dims[i], rank, "dims", &order[i]));
    TL_KERNEL_CHECK(ctx, !seen[order[i]], Error::kInvalidArgument,
                    "argument 'dims' repeats dimension %zu; it must be a permutation", order[i]);
    seen[order[i]] = true;
  }
  StridedView view(self.tensor);
  view.permute(order);
  TL_KERNEL_RETURN_IF_ERROR(ctx, copy_view_to_out(self, view, out));
}

namespace {

// Self permuted by `dims` (read on every run, checked at load).
constexpr auto kPermuteView = [](Span<EValue*> args, StridedView* view) {
  const Span<const int64_t> dims = args[1]->to_int_list();
  const size_t rank = args[0]->to_tensor().dim();
  if (dims.size() != rank) return false;
  size_t order[kMaxTensorDim];
  bool seen[kMaxTensorDim] = {};
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = dims[i] < 0 ? dims[i] + static_cast<int64_t>(rank) : dims[i];
    if (d < 0 || d >= static_cast<int64_t>(rank) || seen[d]) return false;
    seen[d] = true;
    order[i] = static_cast<size_t>(d);
  }
  view->permute(order);
  return true;
};

// Self permuted by `dims`, as a view_gather::View (read on every run: a
// permutation of self's dims, checked again as it indexes self).
constexpr auto kPermuteGather = [](Span<EValue*> args, const Tensor& self,
                                   view_gather::View* view) {
  const Span<const int64_t> dims = args[1]->to_int_list();
  const size_t rank = self.dim();
  if (dims.size() != rank) return false;
  const Span<const SizesType> sizes = self.sizes();
  const Span<const StridesType> strides = self.strides();
  uint32_t seen = 0;  // kMaxTensorDim <= 32 bits.
  for (size_t i = 0; i < rank; ++i) {
    size_t d = 0;
    if (!view_gather::wrap(dims[i], rank, &d) || (seen >> d & 1u) != 0) return false;
    seen |= 1u << d;
    view->sizes[i] = sizes[d];
    view->strides[i] = strides[d];
  }
  view->rank = rank;
  view->offset = 0;
  return true;
};

}  // namespace

// `dims` and out's dtype are the program's: checked at load, with the
// reference's messages.
Status permute_copy_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const Span<const int64_t> dims = args[1]->to_int_list();
  const size_t rank = args[0]->to_tensor().dim();
  TL_CHECK_OR_RETURN(dims.size() == rank, Error::kInvalidArgument,
                     "argument 'dims' has %zu entries, expected %zu (the rank of 'self')",
                     dims.size(), rank);
  bool seen[kMaxTensorDim] = {};
  for (size_t i = 0; i < rank; ++i) {
    size_t d = 0;
    TL_RETURN_IF_ERROR(wrap_dim(dims[i], rank, "dims", &d));
    TL_CHECK_OR_RETURN(!seen[d], Error::kInvalidArgument,
                       "argument 'dims' repeats dimension %zu; it must be a permutation", d);
    seen[d] = true;
  }
  TL_RETURN_IF_ERROR(dense_copy::check_out_dtype_is_self(args, 2));
  if (!view_gather::install<2, kPermuteGather, &permute_copy_out>(args, call)) {
    call->eval = &dense_copy::view_copy_eval<2, kPermuteView, &permute_copy_out>;
  }
  return Error::kOk;
}

}  // namespace torchlight::portable
