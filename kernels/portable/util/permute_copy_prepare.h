// aten::permute_copy.out's prepare step, shared by the portable kernel
// (op_permute_copy.cpp, serial copies) and the optimized float32 one
// (kernels/optimized/op_permute_copy.cpp, copies spread over the thread
// pool): `dims` and out's dtype are the program's, checked at load with the
// reference's messages; then view_gather's eval (or dense_copy's strided
// one for element sizes it does not specialise) is installed, handing
// anything else to `reference`.
#pragma once

#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/loop_split.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/view_gather.h"

namespace torchlight::portable::permute_copy {

// Self permuted by `dims` (read on every run, checked at load).
inline constexpr auto kPermuteView = [](Span<EValue*> args, StridedView* view) {
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
inline constexpr auto kPermuteGather = [](Span<EValue*> args, const Tensor& self,
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

/// The prepare step; `reference` is the self-checking kernel, Split the
/// gather's policy (loop_split.h).
template <KernelFunction reference, typename Split = SerialSplit>
Status prepare(Span<EValue*> args, PreparedCall* call) {
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
  if (!view_gather::install<2, kPermuteGather, reference, Split>(args, call)) {
    call->eval = &dense_copy::view_copy_eval<2, kPermuteView, reference>;
  }
  return Error::kOk;
}

}  // namespace torchlight::portable::permute_copy
