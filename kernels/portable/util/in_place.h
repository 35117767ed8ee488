// Kernels whose out the exporter may plan in self's own memory:
//  - views made copy-free (view_copy, _unsafe_view, squeeze_copy,
//    unsqueeze_copy, alias_copy, expand_copy to the same shape, clone) keep
//    their call only to resize out when shapes are dynamic;
//  - in-place updates of a mutable buffer (index_put, slice_scatter,
//    select_scatter with out = the buffer itself) start from out = self.
// In both cases self's elements are already where out wants them, so the
// kernel must skip its "copy self into out" step: that copy is a no-op at
// best, and memcpy between identical pointers is undefined behaviour.
// Header-only.
#pragma once

#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// Sets *same to whether `out` (already resized) holds exactly `self`'s
/// elements in place: the same data pointer, and either the same sizes and
/// strides, or equal element counts with both in the contiguous dim order
/// (a reshape of the same row-major bytes). Tensors without data never
/// alias. Partial overlaps are not detected; the exporter never plans them.
/// Errors: kInvalidArgument when the two share a data pointer but their
/// elements are laid out differently (the kernel cannot copy in place).
inline Status out_is_self(const NamedTensor& self, const NamedTensor& out, bool* same) {
  *same = false;
  const Tensor& s = self.tensor;
  const Tensor& o = out.tensor;
  if (s.const_data_ptr() == nullptr || s.const_data_ptr() != o.const_data_ptr()) {
    return Error::kOk;
  }
  bool identical = s.dim() == o.dim();
  for (size_t d = 0; identical && d < s.dim(); ++d) {
    identical = s.size(d) == o.size(d) && s.strides()[d] == o.strides()[d];
  }
  const bool reshaped = s.numel() == o.numel() && is_contiguous_dim_order(s.dim_order()) &&
                        is_contiguous_dim_order(o.dim_order());
  TL_CHECK_OR_RETURN(identical || reshaped, Error::kInvalidArgument,
                     "argument '%s' shares the memory of argument '%s' but lays its elements out "
                     "differently, so they cannot be copied in place",
                     out.name, self.name);
  *same = true;
  return Error::kOk;
}

/// copy_view_to_out (strided_view.h) for a `view` of self that keeps self's
/// row-major element order (a reshape: squeeze, unsqueeze, alias, expand to
/// the same shape): when out shares self's memory (out_is_self after the
/// resize) it only checks the dtype and resizes out. Errors: those of
/// copy_view_to_out and out_is_self.
inline Status copy_reshape_to_out(const NamedTensor& self, const StridedView& view,
                                  const NamedTensor& out) {
  if (self.tensor.const_data_ptr() == nullptr ||
      self.tensor.const_data_ptr() != out.tensor.const_data_ptr()) {
    return copy_view_to_out(self, view, out);
  }
  TL_RETURN_IF_ERROR(check_same_dtype(out, self.tensor.scalar_type(), self.name));
  SizesType sizes[kMaxTensorDim];
  view.sizes(sizes);
  TL_RETURN_IF_ERROR(resize_tensor(out, {sizes, view.dim()}));
  bool same = false;
  return out_is_self(self, out, &same);
}

}  // namespace torchlight::portable
